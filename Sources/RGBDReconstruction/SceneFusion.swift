/// What `SceneFusion` does: the volume's resolution and truncation, which depths count
/// and how much, and what is kept of the mesh.
public struct SceneFusionOptions: Equatable, Sendable {
    /// The voxel edge, meters (1 mm … 1 m); nil: chosen from the scan's depth
    /// (`SceneFusion.automaticVoxel`: a depth pixel's footprint at the median depth,
    /// 2 mm … 2 cm).
    public var voxel: Double? = nil
    /// The truncation distance, meters; nil: 4 voxels. At least one voxel, at most 1 m.
    public var trunc: Double? = nil
    /// The lowest ARKit confidence used (0 low, 1 medium, 2 high); frames without
    /// confidence maps use every depth. High only by default: on a real Stray Scanner
    /// scan medium-confidence depth put surfaces 15 cm off (docs/fuse.md).
    public var minConfidence: ConfidenceLevel = .high
    /// Per-frame filters: depth range and the flying-pixel filter (`dropEdges`,
    /// `edgeThreshold`); the stride, normals and axes are not used. Its `frame` (from
    /// `WorldFrame.forScene`) places the scene's world before integration, so the volume's
    /// axes are that frame's (a `level` floor lies in a plane of voxels).
    public var points = PointCloudOptions()
    /// Use every N-th frame.
    public var every: Int = 1
    /// Mesh only voxels observed with at least this total weight, in full-weight
    /// observations (a high-confidence depth at up to 1 m, seen head-on, weighs 1); 0
    /// meshes every observed voxel; nil: `automaticMinWeight(voxel:)`, (3 mm / voxel)².
    public var minWeight: Double? = nil
    /// Drop connected pieces of the mesh with fewer triangles than this (0 keeps all).
    public var minFragmentTriangles: Int = 0
    /// The most bytes the volume may take; nil: half the machine's memory. A frame that
    /// would need more is refused, naming it, before anything is allocated for it.
    public var memoryBudget: Int? = nil
    /// Integrate and mesh on all processors (the result is the same bit for bit).
    package var parallel: Bool = true
    /// Simplify the mesh after meshing (and dropping fragments): `MeshSimplification`;
    /// nil keeps every triangle.
    public var simplification: MeshSimplification? = nil
    /// The automatic voxel already chosen for this scan with these filters and every frame
    /// (`PoseRefinement.fusionVoxel`), used when `voxel` is nil instead of choosing again.
    package var chosenVoxel: SceneFusionVoxel? = nil
    /// Without a `simplification`, simplify within one voxel (the fused surface's own
    /// precision): what a textured output gets by default, the texture carrying the detail.
    package var simplifyWithinVoxel = false

    /// The defaults: the voxel chosen from the scan's depth, 4-voxel truncation, high
    /// confidence only, edges dropped, every frame, every fragment kept.
    public init() {}

    /// The truncation in effect with voxels of `voxel` meters, meters.
    package func truncation(voxel: Double) -> Double { trunc ?? 4 * voxel }

    /// The noise of one full-weight depth (high confidence, 1 m, head-on), meters: the
    /// scale of `automaticMinWeight(voxel:)`.
    package static let fullWeightNoise = 0.003

    /// The least weight meshed when `minWeight` is nil: (`fullWeightNoise` / voxel)², the
    /// weight at which the fused distance's expected error, σ / √weight with σ the noise
    /// of one full-weight depth, is one voxel (0.09 at 1 cm, 0.36 at 5 mm, 2.25 at 2 mm).
    /// Finer voxels need more views to be a surface rather than the noise of a few: on the
    /// real scans and the synthetic truth this kept rgbd's surfaces where Open3D's are
    /// (docs/fuse.md).
    package static func automaticMinWeight(voxel: Double) -> Double {
        let ratio = fullWeightNoise / voxel
        return ratio * ratio
    }

    /// The least weight meshed with voxels of `voxel` meters, in full-weight observations.
    package func minWeight(voxel: Double) -> Double { minWeight ?? Self.automaticMinWeight(voxel: voxel) }

    /// The memory budget in effect, bytes.
    package var budget: Int { memoryBudget ?? (Host.physicalMemoryBytes.map { $0 / 2 } ?? 4 << 30) }

    /// Checks the values.
    /// - Throws: `RGBDError` (`.invalidArgument`) naming the first value out of range.
    public func validate() throws {
        try points.validate()
        if let voxel {
            guard voxel.isFinite, voxel >= 0.001, voxel <= 1 else {
                throw RGBDError(.invalidArgument, "the voxel must be between 0.001 and 1 m (\(voxel))")
            }
            let truncation = truncation(voxel: voxel)
            guard truncation.isFinite, truncation >= voxel, truncation <= 1 else {
                throw RGBDError(.invalidArgument, "the truncation must be at least one voxel (\(voxel) m) and at most 1 m (\(truncation))")
            }
        } else if let trunc {
            guard trunc.isFinite, trunc >= 0.001, trunc <= 1 else {
                throw RGBDError(.invalidArgument, "the truncation must be between 0.001 and 1 m (\(trunc))")
            }
        }
        try FrameSelection(every: every).validate()
        if let minWeight, !(minWeight >= 0 && minWeight <= 255) {
            throw RGBDError(.invalidArgument, "the least weight meshed must be 0 to 255 observations (\(minWeight))")
        }
        guard minFragmentTriangles >= 0 else {
            throw RGBDError(.invalidArgument, "the smallest fragment kept must be 0 or more triangles (\(minFragmentTriangles))")
        }
        guard budget > 0 else { throw RGBDError(.invalidArgument, "the memory budget must be positive (\(budget))") }
        try simplification?.validate()
    }
}

/// A scene fused into one surface: each frame's depth integrated into a truncated signed
/// distance volume on a sparse block hash (`TSDFVolume`), then meshed by marching cubes.
///
/// Per frame, a depth pixel counts when its confidence is at least `minConfidence`, its
/// depth is within the range and it passes the flying-pixel filter (as `rgbd cloud`
/// keeps points). Its weight is
///
///     w = c(confidence) · min(1, (1 m / z)²) · max(0.1, cos θ)
///
/// with `c` = 1 for high, 0.5 for medium, 0.25 for low confidence (1 without a confidence
/// map), `z` the depth in meters (LiDAR's noise grows with distance), and θ the angle
/// between the pixel's ray and the surface normal from the depth map's neighbors
/// (grazing views count less; 0.5 when the pixel has no neighbor to give a normal). A
/// voxel's color is the weighted average of the colors it saw: each frame's color image
/// averaged over the depth pixel's footprint (as `rgbd cloud` colors points).
public struct SceneFusion: Sendable {
    /// The surface.
    public var mesh: TriangleMesh
    /// Frames integrated.
    public var frames: Int
    /// Blocks of 8³ voxels in the volume.
    public var blocks: Int
    /// Bytes the volume took.
    public var volumeBytes: Int
    /// The voxel used, and why: given, or chosen from the scan's depth.
    public var voxel = SceneFusionVoxel(given: 0.01)
    /// Triangles dropped as small fragments.
    public var droppedTriangles: Int
    /// Where the surface comes from and how it was made, one line each: the comments of
    /// the PLY header every front writes (`PLYWriter.write(path:mesh:encoding:comments:)`).
    public var comments: [String] = []
    /// The simplification made (`SceneFusionOptions.simplification`): the triangles
    /// before and the error; nil when the mesh was not simplified.
    public var simplification: (trianglesBefore: Int, error: Double)? = nil
    /// The scan's world and the frame the surface was placed in: what its axes mean
    /// (the glTF and OBJ writers turn them to +Y up).
    public var placement: (world: SceneWorld, frame: WorldFrame.Kind) = (.gravityAligned, .camera)
    /// Where the camera was at each frame integrated, in order: the poses' positions in
    /// the surface's world (placed in its frame, as the mesh), meters. The web viewer
    /// draws them as the scan's path.
    public var cameraPath: [SIMD3<Float>] = []

    /// The steps of a fusion after the frames, for progress.
    public enum Stage: String, Sendable {
        /// Marching cubes over the volume.
        case meshing
        /// Small connected pieces dropped.
        case droppingFragments = "dropping small pieces"
        /// The mesh simplified (`SceneFusionOptions.simplification`).
        case simplifying
    }

    /// Fuses `scene`; `progress` is called after each frame with the number done and the
    /// number to do, `stage` as each later step begins.
    /// - Throws: `RGBDError` for bad options, a frame that cannot be read, a frame whose
    ///   points lie beyond the volume's reach, or one that would exceed the memory budget.
    public static func build(_ scene: Scene, options: SceneFusionOptions,
                             progress: ((Int, Int) -> Void)? = nil,
                             stage: ((Stage) -> Void)? = nil) throws -> SceneFusion {
        try options.validate()
        let choice = try options.voxel.map { SceneFusionVoxel(given: $0) } ?? options.chosenVoxel ?? automaticVoxel(scene, options: options)
        var options = options
        options.voxel = choice.voxel
        // A truncation given with the voxel left to the scan: at least that voxel.
        try options.validate()
        var volume = volume(voxel: choice.voxel, options: options)
        let positions = FrameSelection(every: options.every).positions(count: scene.frames.count)
        var done = 0
        var path = [SIMD3<Float>]()
        path.reserveCapacity(positions.count)
        try scene.forEachFrame(positions, color: scene.colorSize != nil) { frame in
            let pose = options.points.frame.transform.composed(with: frame.pose)
            let prepared = prepare(depth: frame.depth, confidence: frame.confidence, color: frame.color,
                                   intrinsics: frame.info.depthIntrinsics, pose: pose, options: options,
                                   bandsOver: volume.trunc)
            path.append(SIMD3<Float>(pose.translation))
            try volume.integrate(prepared) { "\(scene.path): frame \(frame.info.index)" }
            done += 1
            progress?(done, positions.count)
        }
        stage?(.meshing)
        let minWeight = UInt16(min(Double(TSDFVolume.maxWeight),
                                   (options.minWeight(voxel: choice.voxel) * Double(TSDFVolume.weightScale)).rounded()))
        var mesh = volume.extractMesh(parallel: options.parallel, minWeight: max(1, minWeight))
        let before = mesh.faceCount
        if options.minFragmentTriangles > 0 {
            stage?(.droppingFragments)
            mesh = mesh.removingFragments(smallerThan: options.minFragmentTriangles)
        }
        var fusion = SceneFusion(mesh: mesh, frames: done, blocks: volume.blockCount, volumeBytes: volume.bytes,
                                 droppedTriangles: before - mesh.faceCount)
        fusion.voxel = choice
        fusion.placement = (scene.world, options.points.frame.kind)
        fusion.cameraPath = path
        try fusion.simplify(options.simplification ?? (options.simplifyWithinVoxel ? MeshSimplification(maxError: choice.voxel) : nil), stage: stage)
        fusion.comments = provenance(scene, fusion, options: options)
        return fusion
    }

    /// This fusion simplified within one voxel (what a textured output gets by default:
    /// `SceneFusionOptions.simplifyWithinVoxel`), its comments saying so; itself when it
    /// is simplified already.
    package func simplifiedWithinVoxel(stage: ((Stage) -> Void)? = nil) throws -> SceneFusion {
        guard simplification == nil else { return self }
        var fused = self
        try fused.simplify(MeshSimplification(maxError: voxel.voxel), stage: stage)
        fused.comments += Self.simplificationComments(fused)
        return fused
    }

    /// The header comments of a fusion of `scene` with `options`.
    static func provenance(_ scene: Scene, _ fused: SceneFusion, options: SceneFusionOptions) -> [String] {
        let placed = options.points.frame
        let points = options.points
        var lines = [
            "rgbd \(RGBDVersion.string): fused surface of a scan (TSDF on 8x8x8 voxel blocks, marching cubes), meters",
            "source \(scene.path) (\(scene.format.app.rawValue), \(scene.format.variant))",
            "world \(scene.world.rawValue)",
            "poses \(scene.poseSource)",
            placed.kind == .camera
                ? "axes: the scan's world axes; each frame's OpenCV camera frame placed by its pose"
                : "axes: \(placed.axesDescription); each frame's OpenCV camera frame placed by its pose, then the frame's transform",
            "voxel \(fused.voxel.voxel) m (\(fused.voxel.reason)), truncation \(options.truncation(voxel: fused.voxel.voxel)) m",
            "frames \(fused.frames) (every \(options.every)), min confidence \(options.minConfidence.rawValue), depth \(points.minDepth) to \(points.maxDepth) m"
                + (points.dropEdges ? ", flying-pixel step \(points.edgeThreshold)" : ", flying pixels kept"),
            "normals: the distance field's gradient, toward the observed side",
        ]
        lines += placed.comments
        let minWeight = options.minWeight(voxel: fused.voxel.voxel)
        if minWeight > 0 {
            lines.append("voxels meshed when observed with a weight of at least \((minWeight * 1000).rounded() / 1000) full-weight views"
                         + (options.minWeight == nil ? " (automatic: (3 mm / voxel)^2, the fused distance's expected error within a voxel)" : ""))
        }
        if options.minFragmentTriangles > 0 {
            lines.append("pieces under \(options.minFragmentTriangles) triangles dropped (\(fused.droppedTriangles) triangles)")
        }
        if scene.colorSize == nil { lines.append("no color in the scan: vertices are white") }
        lines += simplificationComments(fused)
        return lines
    }

    /// The pixels of a frame's depth that fusion uses: those the point filters keep
    /// (depth range, flying pixels; every pixel, no stride) whose confidence, where the
    /// frame has one, is at least `options.minConfidence`.
    static func usablePixels(_ depth: DepthMap, confidence: ImageBuffer<UInt8>?, options: SceneFusionOptions) -> [Bool] {
        var filter = options.points
        filter.stride = 1
        var kept = PointCloud.selection(depth, options: filter)
        if let confidence {
            for i in kept.indices where confidence.samples[i] < options.minConfidence.rawValue { kept[i] = false }
        }
        return kept
    }

    /// The empty volume fusion integrates into: `voxel`, the options' truncation and
    /// memory budget, room for noise bands up to `widestBand`.
    static func volume(voxel: Double, options: SceneFusionOptions) -> TSDFVolume {
        var volume = TSDFVolume(voxel: Float(voxel), trunc: Float(options.truncation(voxel: voxel)), range: widestBand,
                                memoryBudget: options.budget)
        volume.parallel = options.parallel
        return volume
    }

    /// The widest noise band (`noiseBand`), meters: the volume's range.
    package static let widestBand: Float = 0.25

    /// How far from a depth `z` (meters) of confidence weight `trust` (1 high, 0.5
    /// medium, 0.25 low) its distance is kept: one σ of its noise, σ =
    /// `fullWeightNoise` · max(1, z)² / √trust (the noise grows about as z² beyond a
    /// meter; a lower confidence is noisier), at least `trunc`, at most `widestBand`.
    /// A fixed band narrower than the noise clips the far depth's errors at ±trunc, and
    /// their average is no distance: at fine voxels the far surfaces broke into blobs
    /// (synthetic room at 2 mm: median 6.4 mm off, 14 % complete; with the band 2.0 mm,
    /// 56 %). Two σ gained more on the synthetic room but moved the real Stray scan's far
    /// surfaces off Open3D's (docs/fuse.md).
    @inline(__always)
    static func noiseBand(depth z: Float, trust: Float, trunc: Float) -> Float {
        let far = max(1, z)
        let sigma = Float(SceneFusionOptions.fullWeightNoise) * far * far / trust.squareRoot()
        return min(widestBand, max(trunc, sigma))
    }

    /// One frame's depth, per-pixel weights and colors, ready for the volume; with
    /// `bandsOver` (the volume's truncation) each pixel's noise band too (`noiseBand`).
    static func prepare(depth: DepthMap, confidence: ImageBuffer<UInt8>?, color: ColorImage?, intrinsics: Intrinsics,
                        pose: Pose, options: SceneFusionOptions, bandsOver trunc: Float? = nil) -> TSDFFrame {
        let kept = usablePixels(depth, confidence: confidence, options: options)
        let width = depth.width, height = depth.height
        var values = [Float](repeating: .nan, count: width * height)
        var weights = [Float](repeating: 0, count: width * height)
        var bands = trunc.map { [Float](repeating: $0, count: width * height) }
        let fxInv = Float(1 / intrinsics.fx), fyInv = Float(1 / intrinsics.fy)
        let cx = Float(intrinsics.cx), cy = Float(intrinsics.cy)
        @inline(__always) func point(_ u: Int, _ v: Int) -> SIMD3<Float>? {
            guard u >= 0, v >= 0, u < width, v < height else { return nil }
            let z = depth.samples[v * width + u]
            guard z.isFinite, z > 0 else { return nil }
            return SIMD3((Float(u) - cx) * z * fxInv, (Float(v) - cy) * z * fyInv, z)
        }
        for v in 0..<height {
            for u in 0..<width {
                let i = v * width + u
                guard kept[i] else { continue }
                let level = confidence?.samples[i] ?? 2
                guard let p = point(u, v) else { continue }
                let trust: Float = level >= 2 ? 1 : level == 1 ? 0.5 : 0.25
                let distance = min(1, 1 / (p.z * p.z))
                let normal = PointCloud.normal(at: p, left: point(u - 1, v), right: point(u + 1, v), up: point(u, v - 1),
                                               down: point(u, v + 1), limit: options.points.edgeThreshold * p.z)
                let facing: Float
                if normal == .zero {
                    facing = 0.5
                } else {
                    facing = max(0.1, abs((normal * p).sum()) / (p * p).sum().squareRoot())
                }
                values[i] = p.z
                weights[i] = trust * distance * facing
                if let trunc { bands?[i] = noiseBand(depth: p.z, trust: trust, trunc: trunc) }
            }
        }
        let colors = color?.areaAverage(toWidth: width, height: height).samples
        return TSDFFrame(depth: values, weights: weights, colors: colors, width: width, height: height,
                         intrinsics: intrinsics, pose: pose, bands: bands)
    }
}

extension TriangleMesh {
    /// The mesh without its connected pieces (triangles joined through shared vertices)
    /// of fewer than `minimum` triangles; the vertices kept keep their order.
    package func removingFragments(smallerThan minimum: Int) -> TriangleMesh {
        var parent = Array(0..<vertexCount)
        func root(_ i: Int) -> Int {
            var i = i
            while parent[i] != i { parent[i] = parent[parent[i]]; i = parent[i] }
            return i
        }
        for t in 0..<faceCount {
            let a = root(Int(faces[3 * t])), b = root(Int(faces[3 * t + 1])), c = root(Int(faces[3 * t + 2]))
            let m = min(a, b, c)
            parent[a] = m; parent[b] = m; parent[c] = m
        }
        var size = [Int](repeating: 0, count: vertexCount)
        for t in 0..<faceCount { size[root(Int(faces[3 * t]))] += 1 }
        var result = self
        result.keepFaces { size[root(Int(faces[3 * $0]))] >= minimum }
        return result
    }
}

