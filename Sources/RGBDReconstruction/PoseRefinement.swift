import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `PoseRefinement` does: which depth it tracks with and how closely it follows the
/// recorded motion.
public struct PoseRefinementOptions: Equatable, Sendable {
    /// The model tracked against, as a fusion: its voxel (nil: the fusion's automatic
    /// voxel for the scan, at least `minimumVoxel` or a fiftieth of the median depth),
    /// truncation (nil: `minimumTruncation` or a tenth of the median depth, at least 4
    /// voxels: the reach within which a frame is pulled onto the model), confidence, depth
    /// range, flying-pixel filter and memory budget.
    public var model = SceneFusionOptions()
    /// Depth points tracked per frame, about (spread evenly over the depth map).
    public var pointsPerFrame: Int = 4000
    /// How far the motion between consecutive frames may stray from the recorded motion
    /// for free, meters and radians: the prior's standard deviations. The depth overrides
    /// the recorded motion wherever it constrains the pose; where it does not (one flat
    /// wall), the recorded motion stays.
    public var motionNoise: (translation: Double, rotation: Double) = (0.002, 0.001)
    /// Track on all processors (the result is the same bit for bit).
    package var parallel = true

    /// The defaults.
    public init() {}

    /// The smallest voxel of the tracked model when chosen automatically, meters (for
    /// scenes nearer than 40 cm, a fiftieth of the median depth).
    public static let minimumVoxel = 0.008
    /// The truncation of the tracked model when not given, meters: a frame whose recorded
    /// motion is off by up to about this much is pulled back onto the model (for scenes
    /// nearer than 50 cm, a tenth of the median depth; at least 4 voxels).
    public static let minimumTruncation = 0.05

    /// Whether two sets of options are the same (the tuple compared by its numbers).
    public static func == (a: PoseRefinementOptions, b: PoseRefinementOptions) -> Bool {
        a.model == b.model && a.pointsPerFrame == b.pointsPerFrame && a.motionNoise == b.motionNoise
            && a.parallel == b.parallel
    }

    /// Checks the values.
    /// - Throws: `RGBDError` (`.invalidArgument`) naming the first value out of range.
    public func validate() throws {
        try model.validate()
        guard pointsPerFrame >= 100, pointsPerFrame <= 1_000_000 else {
            throw RGBDError(.invalidArgument, "the points tracked per frame must be 100 to 1000000 (\(pointsPerFrame))")
        }
        guard motionNoise.translation.isFinite, motionNoise.translation > 0,
              motionNoise.rotation.isFinite, motionNoise.rotation > 0 else {
            throw RGBDError(.invalidArgument, "the motion noise must be positive (\(motionNoise))")
        }
    }
}

/// Camera poses corrected against the depth: ARKit's recorded poses drift (centimetres
/// over seconds) and jump when tracking relocalises; each frame's depth is aligned to the
/// surface fused from the frames before it.
///
/// Frame-to-model tracking on the scene's own TSDF (the signed-distance tracking of Bylow
/// et al. 2013 and Canelhas' SDF tracker, on KinectFusion's model): frame 0 keeps its
/// recorded pose (it anchors the scan's world); each later frame starts from the previous
/// refined pose moved by the recorded relative motion, and Gauss–Newton minimises
///
///     Σ wᵢ·ρ(D(T·pᵢ))² + ‖ξ(T)‖²_Λ
///
/// over its pose T: pᵢ a spread of the frame's usable depth points (weights as fusion's:
/// confidence, distance, view angle), D the model's trilinear signed distance, ρ Huber's
/// weights, and ξ the pose's departure from the recorded relative motion, weighted by
/// `motionNoise`. Where the depth constrains the pose it decides (a relocalisation jump is
/// undone); in directions it leaves free (one flat wall lets the camera slide along it)
/// the recorded motion stays. The frame is then integrated into the model with its refined
/// pose. Then a pose graph over keyframes with loop closures (`PoseGraph`) corrects what
/// the tracking carried along. Sums over points are made in fixed chunks and added in
/// order: the result is the same on any number of threads.
public struct PoseRefinement: Sendable {
    /// The refined camera-to-world poses (OpenCV camera axes, the scan's world), one per
    /// frame of `Scene.frames`, in its order.
    public var poses: [Pose]
    /// The poses the scan recorded, in the same order.
    public var recorded: [Pose]
    /// Frames tracked (all but the first, which anchors the world).
    public var tracked: Int
    /// Frames where the depth left a direction of the pose free (the recorded relative
    /// motion kept there): a flat wall, too few points.
    public var undecided: Int
    /// Frames whose depth contradicted the recorded relative motion by more than 1 cm or
    /// 0.5° (relocalisation jumps, undone).
    public var corrected: Int
    /// The median over frames of each frame's median |signed distance| to the model:
    /// started from the recorded relative motion, meters.
    public var residualBefore: Double
    /// The same after refinement, meters.
    public var residualAfter: Double
    /// The tracked model's voxel and truncation, meters.
    public var voxel: Double
    /// See `voxel`.
    public var truncation: Double
    /// Keyframes of the pose graph.
    public var keyframes = 0
    /// Loop closures found (a keyframe aligned to the model around an earlier one) and
    /// used in the pose graph.
    public var loopClosures = 0
    /// Per frame (as `poses`): the median |signed distance| before and after, meters (NaN
    /// for the first frame and frames with no point on the model).
    package var frameResiduals: [(before: Double, after: Double)] = []
    /// The voxel `rgbd fuse` would choose for this scan with the model's filters
    /// (`SceneFusion.automaticVoxel`), when the refinement chose one; a fusion of every
    /// frame with the same filters takes it (`SceneFusionOptions.chosenVoxel`) rather than
    /// reading the frames again.
    package var fusionVoxel: SceneFusionVoxel? = nil

    /// The steps after the frames, for progress.
    public enum Stage: String, Sendable {
        /// Choosing the voxel from a sample of the frames.
        case choosingVoxel = "choosing the voxel"
        /// Loop closures and the pose graph.
        case closingLoops = "closing loops"
    }

    /// Refines the poses of `scene`; `progress` is called after each frame with the number
    /// done and the number to do.
    /// - Throws: `RGBDError` for bad options, a scan of fewer than two frames, a frame that
    ///   cannot be read, or a model that would exceed the memory budget.
    public static func run(_ scene: Scene, options: PoseRefinementOptions,
                           progress: ((Int, Int) -> Void)? = nil,
                           stage: ((Stage) -> Void)? = nil) throws -> PoseRefinement {
        try options.validate()
        guard scene.frames.count >= 2 else {
            throw RGBDError(.invalidScene, file: scene.path,
                            "\(scene.frames.count) frame\(scene.frames.count == 1 ? "" : "s") with depth: refining poses needs two or more")
        }
        var fusion = options.model
        fusion.every = 1
        // The model's scale follows the scene's: at a room's 2 m an 8 mm voxel and a 5 cm
        // reach (ARKit's jumps); at an object's 25 cm, a fiftieth and a tenth of the depth
        // (a 5 cm band would merge a handle with its door).
        var medianDepth: Double? = nil
        var fusionVoxel: SceneFusionVoxel? = nil
        if fusion.voxel == nil || fusion.trunc == nil {
            stage?(.choosingVoxel)
            let automatic = try SceneFusion.automaticVoxel(scene, options: fusion)
            fusionVoxel = automatic
            medianDepth = automatic.medianDepth
            if fusion.voxel == nil {
                let floor = min(PoseRefinementOptions.minimumVoxel, (medianDepth ?? 1) / 50)
                fusion.voxel = max(floor, automatic.voxel)
            }
        }
        let voxel = fusion.voxel ?? PoseRefinementOptions.minimumVoxel
        let reach = min(PoseRefinementOptions.minimumTruncation, (medianDepth ?? 1) / 10)
        let truncation = fusion.trunc ?? max(4 * voxel, reach)
        fusion.trunc = truncation
        var volume = TSDFVolume(voxel: Float(voxel), trunc: Float(truncation), memoryBudget: fusion.budget)
        volume.parallel = options.parallel

        let recorded = scene.frames.map(\.pose)
        var poses = recorded
        var residuals = [(before: Double, after: Double)](repeating: (.nan, .nan), count: recorded.count)
        var undecided = 0, corrected = 0
        var pivots = [SIMD3<Double>](repeating: .zero, count: recorded.count)
        var covariances = [[Double]](repeating: [Double](repeating: 0, count: 36), count: recorded.count)
        let tracker = FrameTracker(options: options, voxel: voxel)
        var n = -1
        try scene.forEachFrame(Array(scene.frames.indices), color: false) { frame in
            n += 1
            var prepared = SceneFusion.prepare(depth: frame.depth, confidence: frame.confidence, color: nil,
                                               intrinsics: frame.info.depthIntrinsics, pose: recorded[n], options: fusion)
            if n > 0 {
                // The recorded motion from the previous frame, applied to its refined pose.
                let motion = recorded[n - 1].inverse.composed(with: recorded[n])
                let predicted = poses[n - 1].composed(with: motion)
                let result = tracker.track(prepared, from: predicted, in: volume)
                poses[n] = result.pose
                residuals[n] = (result.before, result.after)
                if result.undecided { undecided += 1 }
                if result.corrected { corrected += 1 }
                pivots[n] = result.pivot
                covariances[n] = result.covariance
                prepared.pose = result.pose
            } else {
                let points = tracker.points(prepared).points
                var centroid = SIMD3<Double>.zero
                for p in points { centroid += SIMD3<Double>(p) }
                pivots[0] = recorded[0].apply(points.isEmpty ? .zero : centroid / Double(points.count))
            }
            try volume.integrate(prepared) { "\(scene.path): frame \(frame.info.index)" }
            progress?(n + 1, recorded.count)
        }
        let closed = try closeLoops(scene, poses: &poses, pivots: pivots, covariances: covariances, tracker: tracker,
                                    fusion: fusion, voxel: voxel, truncation: truncation, stage: stage)
        func medianOf(_ values: [Double]) -> Double { SmallMatrix.median(values.filter(\.isFinite)) ?? .nan }
        var refinement = PoseRefinement(poses: poses, recorded: recorded, tracked: recorded.count - 1, undecided: undecided,
                                        corrected: corrected, residualBefore: medianOf(residuals.map(\.before)),
                                        residualAfter: medianOf(residuals.map(\.after)), voxel: voxel, truncation: truncation,
                                        frameResiduals: residuals)
        refinement.keyframes = closed.keyframes
        refinement.loopClosures = closed.loops
        refinement.fusionVoxel = fusionVoxel
        return refinement
    }

    /// Frames apart between keyframes.
    static let keyframeStep = 10
    /// The fewest frames between the two ends of a loop closure.
    static let loopGap = 120
    /// The farthest apart two keyframes' cameras may be to be tried as a loop, meters.
    static let loopDistance = 0.75
    /// The largest angle between two keyframes' views to be tried as a loop, radians (45°).
    static let loopAngle = 45 * Double.pi / 180
    /// The frames on each side of the earlier keyframe fused into the model a loop is
    /// tracked against.
    static let loopModelFrames = 10

    /// The pose graph stage (`PoseGraph`): keyframes, loop closures found by tracking a
    /// keyframe against the model of the frames around an earlier one, Levenberg–Marquardt,
    /// then every frame corrected as its keyframes were. Returns the keyframes and loops.
    private static func closeLoops(_ scene: Scene, poses: inout [Pose], pivots: [SIMD3<Double>], covariances: [[Double]],
                                   tracker: FrameTracker, fusion: SceneFusionOptions, voxel: Double, truncation: Double,
                                   stage: ((Stage) -> Void)?) throws -> (keyframes: Int, loops: Int) {
        var keys = Array(Swift.stride(from: 0, to: poses.count, by: keyframeStep))
        if keys.last != poses.count - 1 { keys.append(poses.count - 1) }
        guard keys.count >= 3 else { return (keys.count, 0) }
        var graph = PoseGraph(nodes: keys.map { PoseGraph.Node(pose: poses[$0], pivot: pivots[$0]) }, edges: [])
        for k in 0..<(keys.count - 1) {
            var sum = [Double](repeating: 0, count: 36)
            for f in (keys[k] + 1)...keys[k + 1] { for i in 0..<36 { sum[i] += covariances[f][i] } }
            graph.edges.append(PoseGraph.Edge(from: k, to: k + 1, measurement: poses[keys[k]].inverse.composed(with: poses[keys[k + 1]]),
                                              information: PoseGraph.inverse(sum, floor: 1e-12)))
        }
        // Loop candidates: each keyframe with the nearest earlier one it sees again.
        var candidates: [(earlier: Int, later: Int)] = []
        for b in keys.indices {
            var best: (Int, Double)? = nil
            for a in keys.indices where keys[b] - keys[a] >= loopGap {
                let pa = poses[keys[a]], pb = poses[keys[b]]
                let d = pa.translation - pb.translation
                let distance = (d * d).sum().squareRoot()
                let cosAngle = (pa.forward * pb.forward).sum()
                guard distance <= loopDistance, cosAngle >= cos(loopAngle) else { continue }
                let pivotGap = pivots[keys[a]] - pivots[keys[b]]
                let score = (pivotGap * pivotGap).sum().squareRoot()
                if score < best?.1 ?? .infinity { best = (a, score) }
            }
            if let best { candidates.append((best.0, b)) }
        }
        guard !candidates.isEmpty else { return (keys.count, 0) }
        stage?(.closingLoops)
        var loops = 0
        for (a, b) in candidates {
            // A small model of the frames around the earlier keyframe, with their poses.
            var local = TSDFVolume(voxel: Float(voxel), trunc: Float(truncation), memoryBudget: fusion.budget)
            local.parallel = tracker.options.parallel
            let around = Array(max(0, keys[a] - loopModelFrames)...min(poses.count - 1, keys[a] + loopModelFrames))
            var next = 0
            try scene.forEachFrame(around, color: false) { frame in
                let position = around[next]
                next += 1
                let prepared = SceneFusion.prepare(depth: frame.depth, confidence: frame.confidence, color: nil,
                                                   intrinsics: frame.info.depthIntrinsics, pose: poses[position], options: fusion)
                try local.integrate(prepared) { "\(scene.path): frame \(frame.info.index)" }
            }
            let frame = try scene.frame(at: keys[b], color: false)
            let prepared = SceneFusion.prepare(depth: frame.depth, confidence: frame.confidence, color: nil,
                                               intrinsics: frame.info.depthIntrinsics, pose: poses[keys[b]], options: fusion)
            let result = tracker.track(prepared, from: poses[keys[b]], in: local)
            // Accepted when most of the frame lies on the earlier model and the alignment
            // brought it closer.
            guard result.overlap >= 0.3, result.after.isFinite, result.after <= result.before,
                  result.information.contains(where: { $0 != 0 }) else { continue }
            graph.edges.append(PoseGraph.Edge(from: a, to: b, measurement: poses[keys[a]].inverse.composed(with: result.pose),
                                              information: result.information))
            loops += 1
        }
        guard loops > 0 else { return (keys.count, 0) }
        let before = graph.nodes.map(\.pose)
        graph.optimize()
        // Every frame corrected as its keyframes were, interpolated between them.
        let corrections = graph.nodes.indices.map { graph.nodes[$0].pose.composed(with: before[$0].inverse) }
        var k = 0
        for f in poses.indices {
            while k + 1 < keys.count && keys[k + 1] <= f { k += 1 }
            var correction = corrections[k]
            if k + 1 < keys.count {
                let fraction = Double(f - keys[k]) / Double(keys[k + 1] - keys[k])
                correction = correction.composed(with: PoseGraph.partial(corrections[k].inverse.composed(with: corrections[k + 1]), fraction))
            }
            poses[f] = correction.composed(with: poses[f])
        }
        return (keys.count, loops)
    }
}

/// One frame's alignment to the model: the Gauss–Newton of `PoseRefinement`.
struct FrameTracker: Sendable {
    let options: PoseRefinementOptions
    let voxel: Double
    /// Huber's threshold, meters.
    let huber: Float
    /// The most iterations per frame.
    let maxIterations = 12
    /// Points per chunk of the sums (fixed: the sums do not depend on the thread count).
    let chunk = 256
    /// The least information of a direction, in units of the recorded motion's (one
    /// frame's `motionNoise`), for the depth to decide it.
    let decided = 1.0
    /// The least information of a direction, as a share of the strongest direction's, for
    /// the depth to decide it.
    let relativelyDecided = 0.02
    /// The least weight of the model's voxels a point is aligned to, in full-weight views:
    /// a surface seen by one or two frames (the edge of what is known) is not yet where it
    /// will be, and would hold frames back.
    let minWeight = 1.0
    /// The prior's information on a decided direction, in the same units (1: the recorded
    /// motion's noise as `motionNoise` says).
    let leaning = 1.0

    init(options: PoseRefinementOptions, voxel: Double) {
        self.options = options
        self.voxel = voxel
        huber = Float(max(voxel, 0.01))
    }

    struct Result {
        var pose: Pose
        var before: Double
        var after: Double
        var undecided: Bool
        var corrected: Bool
        /// The rotations' pivot: the points' centroid, world.
        var pivot = SIMD3<Double>.zero
        /// The information the depth gave on the pose (6×6 row-major, translation in
        /// meters at `pivot` then rotation in radians, world axes): its decided directions
        /// only.
        var information = [Double](repeating: 0, count: 36)
        /// The pose's covariance with the prior (6×6, the same coordinates).
        var covariance = [Double](repeating: 0, count: 36)
        /// The share of the frame's points that lay on the model.
        var overlap = 0.0
    }

    /// The normal equations of the data term at one pose: `H` (6×6, row-major), `g`, the
    /// points on the model and their |distances|.
    struct Sums {
        var h = [Double](repeating: 0, count: 36)
        var g = [Double](repeating: 0, count: 6)
        var count = 0
        var distances: [Float] = []

        mutating func add(_ other: Sums) {
            for i in 0..<36 { h[i] += other.h[i] }
            for i in 0..<6 { g[i] += other.g[i] }
            count += other.count
            distances += other.distances
        }
    }

    /// The frame's tracked points (camera frame) and weights: an even spread of its
    /// usable pixels.
    func points(_ frame: TSDFFrame) -> (points: [SIMD3<Float>], weights: [Float]) {
        let usable = frame.weights.reduce(0) { $0 + ($1 > 0 ? 1 : 0) }
        let step = max(1, Int((Double(usable) / Double(options.pointsPerFrame)).squareRoot().rounded(.up)))
        let k = frame.intrinsics
        let fxInv = Float(1 / k.fx), fyInv = Float(1 / k.fy), cx = Float(k.cx), cy = Float(k.cy)
        var points: [SIMD3<Float>] = [], weights: [Float] = []
        for v in Swift.stride(from: step / 2, to: frame.height, by: step) {
            for u in Swift.stride(from: step / 2, to: frame.width, by: step) {
                let i = v * frame.width + u
                let w = frame.weights[i], z = frame.depth[i]
                guard w > 0, z.isFinite, z > 0 else { continue }
                points.append(SIMD3((Float(u) - cx) * z * fxInv, (Float(v) - cy) * z * fyInv, z))
                // Fusion's weight falls as 1/z² beyond 1 m; LiDAR's noise grows about as z²,
                // so its inverse variance as 1/z⁴: the other 1/z² here.
                weights.append(w / max(1, z * z))
            }
        }
        return (points, weights)
    }

    /// The median of |distances| (NaN for none).
    static func median(_ values: [Float]) -> Double { SmallMatrix.median(values).map(Double.init) ?? .nan }

    /// Aligns `frame` to `volume`, starting from (and regularised toward) `predicted`.
    func track(_ frame: TSDFFrame, from predicted: Pose, in volume: TSDFVolume) -> Result {
        let (points, weights) = points(frame)
        guard points.count >= 50, volume.blockCount > 0 else {
            return Result(pose: predicted, before: .nan, after: .nan, undecided: true, corrected: false)
        }
        // The pivot of the rotations: the points' centroid at the predicted pose.
        var centroid = SIMD3<Double>.zero
        for p in points { centroid += SIMD3<Double>(p) }
        let pivot = predicted.apply(centroid / Double(points.count))
        let sigmaT = options.motionNoise.translation, sigmaR = options.motionNoise.rotation
        let s = [sigmaT, sigmaT, sigmaT, sigmaR, sigmaR, sigmaR]
        // Full weight: the noise of one full-weight depth.
        let noise = SceneFusionOptions.fullWeightNoise
        let scale = 1 / (noise * noise)

        var pose = predicted
        var before = Double.nan
        var last = Sums()
        var weakest = 0.0
        for iteration in 0...maxIterations {
            // The distances are wanted of the first pass and of the last (the last known
            // in advance here, or made again below).
            var sums = accumulate(points, weights, pose: pose, pivot: pivot, volume: volume,
                                  distances: iteration == 0 || iteration == maxIterations)
            if iteration == 0 { before = Self.median(sums.distances) }
            if sums.count < 50 && iteration > 0 {
                sums = accumulate(points, weights, pose: pose, pivot: pivot, volume: volume, distances: true)
            }
            last = sums
            if iteration == maxIterations || sums.count < 50 { break }
            // The departure from the prediction: the pivot's shift and the rotation.
            let xi = Self.departure(pose, from: predicted, pivot: pivot)
            // In units of the recorded motion's noise: the data's information per direction
            // against the prior's (1).
            var a = sums.h, b = sums.g
            for i in 0..<6 {
                b[i] *= scale * s[i]
                for j in 0..<6 { a[i * 6 + j] *= scale * s[i] * s[j] }
            }
            let (values, vectors) = SmallMatrix.symmetricEigen(a, n: 6)
            // Noise in the model's normals gives every direction a little information
            // (about 0.2 % of the strongest's on a plain wall, where three directions are
            // truly free): a direction counts when it has more than `relativelyDecided` of
            // the strongest's.
            let strongest = values.max() ?? 0
            let threshold = max(decided, relativelyDecided * strongest)
            weakest = (values.min() ?? 0) / threshold
            var step = [Double](repeating: 0, count: 6)
            for k in 0..<6 {
                var gk = 0.0, xk = 0.0
                for i in 0..<6 {
                    gk += vectors[k][i] * b[i]
                    xk += vectors[k][i] * xi[i] / s[i]
                }
                // Decided by the depth: the Gauss–Newton step of depth and prior together
                // (the prior's information is 1 in these units); left free by it (noise in
                // the normals alone): back to the prediction along it.
                let amount = values[k] >= threshold ? -(gk + leaning * xk) / (values[k] + leaning) : -xk
                for i in 0..<6 { step[i] += vectors[k][i] * amount * s[i] }
            }
            pose = Self.applying(step, to: pose, pivot: pivot)
            let moved = (step[0] * step[0] + step[1] * step[1] + step[2] * step[2]).squareRoot()
            let turned = (step[3] * step[3] + step[4] * step[4] + step[5] * step[5]).squareRoot()
            if moved < 1e-5 && turned < 1e-5 {
                last = accumulate(points, weights, pose: pose, pivot: pivot, volume: volume, distances: true)
                break
            }
        }
        let xi = Self.departure(pose, from: predicted, pivot: pivot)
        let correction = (xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2]).squareRoot()
        let rotation = (xi[3] * xi[3] + xi[4] * xi[4] + xi[5] * xi[5]).squareRoot()
        var result = Result(pose: pose, before: before, after: Self.median(last.distances),
                            undecided: last.count < 50 || weakest < 1,
                            corrected: correction > 0.01 || rotation > 0.5 * Double.pi / 180)
        result.pivot = pivot
        result.overlap = Double(last.count) / Double(points.count)
        // The decided directions' information, and the covariance with the prior (1 in
        // units of `motionNoise`), back in meters and radians.
        var a = last.h
        for i in 0..<6 { for j in 0..<6 { a[i * 6 + j] *= scale * s[i] * s[j] } }
        let (values, vectors) = SmallMatrix.symmetricEigen(a, n: 6)
        let threshold = max(decided, relativelyDecided * (values.max() ?? 0))
        for i in 0..<6 {
            for j in 0..<6 {
                var info = 0.0, covariance = 0.0
                for k in 0..<6 {
                    let kept = last.count >= 50 && values[k] >= threshold ? values[k] : 0
                    let vv = vectors[k][i] * vectors[k][j]
                    info += vv * kept
                    covariance += vv / (kept + leaning)
                }
                result.information[i * 6 + j] = info / (s[i] * s[j])
                result.covariance[i * 6 + j] = covariance * s[i] * s[j]
            }
        }
        return result
    }

    /// How far `pose` departs from `predicted`: the shift of the pivot and the rotation
    /// vector of `pose ∘ predicted⁻¹`.
    static func departure(_ pose: Pose, from predicted: Pose, pivot: SIMD3<Double>) -> [Double] {
        let shift = pose.apply(predicted.inverse.apply(pivot)) - pivot
        let turn = pose.composed(with: predicted.inverse).rotationVector
        return [shift.x, shift.y, shift.z, turn.x, turn.y, turn.z]
    }

    /// The data term's normal equations at `pose`: for each point q = T·p on the model,
    /// the residual D(q) and its Jacobian [∇D, (q − pivot) × ∇D] for a step (translation,
    /// rotation about the pivot), Huber-weighted; with `distances`, the points' |D| too.
    func accumulate(_ points: [SIMD3<Float>], _ weights: [Float], pose: Pose, pivot: SIMD3<Double>,
                    volume: TSDFVolume, distances: Bool) -> Sums {
        let chunks = (points.count + chunk - 1) / chunk
        var parts = [Sums](repeating: Sums(), count: chunks)
        let r0 = SIMD3<Float>(pose.row0), r1 = SIMD3<Float>(pose.row1), r2 = SIMD3<Float>(pose.row2)
        // Points relative to the pivot, in Float without losing the world's offset.
        let t = SIMD3<Float>(pose.translation - pivot)
        let huber = self.huber
        let chunk = self.chunk
        let minWeight = UInt16(self.minWeight * Double(TSDFVolume.weightScale))
        parts.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let out = buffer
            // Each chunk writes its own slot; concurrentPerform returns when all are done.
            nonisolated(unsafe) let work = { (c: Int) in
                var sums = Sums()
                var cache = TSDFVolume.BlockCache()
                var h = SIMD8<Double>(), h2 = SIMD8<Double>(), h3 = SIMD8<Double>()
                var g0 = SIMD3<Double>.zero, g1 = SIMD3<Double>.zero
                let pivotF = SIMD3<Float>(pivot)
                for i in (c * chunk)..<min(points.count, c * chunk + chunk) {
                    let p = points[i]
                    let local = SIMD3((r0 * p).sum(), (r1 * p).sum(), (r2 * p).sum()) + t
                    guard let sample = volume.distance(at: local + pivotF, minWeight: minWeight, cache: &cache) else { continue }
                    // Point to plane: the gradient's direction is the surface normal; the
                    // distance divided by its length is the Euclidean distance (a projective
                    // TSDF stores the distance along the rays, longer at slant views; its
                    // raw values would pull frames sideways toward head-on views).
                    let length = (sample.gradient * sample.gradient).sum().squareRoot()
                    guard length > 0.2 else { continue }
                    let r = sample.value / length
                    // The normal where the surface is (the zero level's gradient): off the
                    // surface a projective TSDF's levels tilt with the view.
                    guard let foot = volume.distance(at: local + pivotF - sample.gradient * (r / length), minWeight: minWeight, cache: &cache)
                    else { continue }
                    let footLength = (foot.gradient * foot.gradient).sum().squareRoot()
                    guard footLength > 0.2 else { continue }
                    let n = foot.gradient / footLength
                    let m = SIMD3(local.y * n.z - local.z * n.y, local.z * n.x - local.x * n.z, local.x * n.y - local.y * n.x)
                    let robust: Float = abs(r) <= huber ? 1 : huber / abs(r)
                    let w = Double(weights[i] * robust)
                    let j0 = SIMD3<Double>(n), j1 = SIMD3<Double>(m)
                    // The upper triangle of J·Jᵀ (21 entries) in row order.
                    h += w * SIMD8(j0.x * j0.x, j0.x * j0.y, j0.x * j0.z, j0.x * j1.x, j0.x * j1.y, j0.x * j1.z,
                                   j0.y * j0.y, j0.y * j0.z)
                    h2 += w * SIMD8(j0.y * j1.x, j0.y * j1.y, j0.y * j1.z, j0.z * j0.z, j0.z * j1.x, j0.z * j1.y,
                                    j0.z * j1.z, j1.x * j1.x)
                    h3 += w * SIMD8(j1.x * j1.y, j1.x * j1.z, j1.y * j1.y, j1.y * j1.z, j1.z * j1.z, 0, 0, 0)
                    let wr = w * Double(r)
                    g0 += wr * j0
                    g1 += wr * j1
                    sums.count += 1
                    if distances { sums.distances.append(abs(r)) }
                }
                let upper = [h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7],
                             h2[0], h2[1], h2[2], h2[3], h2[4], h2[5], h2[6], h2[7],
                             h3[0], h3[1], h3[2], h3[3], h3[4]]
                var n = 0
                for row in 0..<6 {
                    for col in row..<6 {
                        sums.h[row * 6 + col] = upper[n]
                        sums.h[col * 6 + row] = upper[n]
                        n += 1
                    }
                }
                sums.g = [g0.x, g0.y, g0.z, g1.x, g1.y, g1.z]
                out[c] = sums
            }
            if options.parallel && chunks > 1 {
                DispatchQueue.concurrentPerform(iterations: chunks) { c in work(c) }
            } else {
                for c in 0..<chunks { work(c) }
            }
        }
        var total = Sums()
        for part in parts { total.add(part) }
        return total
    }

    /// The pose after a step (translation, rotation vector about `pivot`), applied on the
    /// world side: q ↦ pivot + R(step)·(q − pivot) + translation.
    static func applying(_ step: [Double], to pose: Pose, pivot: SIMD3<Double>) -> Pose {
        let rotation = Pose(rotationVector: SIMD3(step[3], step[4], step[5]))
        let move = Pose(row0: rotation.row0, row1: rotation.row1, row2: rotation.row2,
                        translation: pivot + SIMD3(step[0], step[1], step[2]) - rotation.rotate(pivot))
        return move.composed(with: pose)
    }

}
