/// What `SceneCloud` keeps.
public struct SceneCloudOptions: Equatable, Sendable {
    /// The lowest ARKit confidence kept (0 low, 1 medium, 2 high); frames without
    /// confidence maps keep every depth.
    public var minConfidence: ConfidenceLevel = .high
    /// Per-frame filters: depth range, flying pixels, stride (as for captures). Its
    /// `frame` (from `WorldFrame.forScene`) is applied to the scene's world, after each
    /// frame's pose. With `normals`, each point's normal from its frame's depth grid
    /// (toward that frame's camera) is turned into the world and averaged per cell. Its
    /// `axes` must stay OpenCV's: a scene's points are in its world, not a camera frame.
    public var points = PointCloudOptions()
    /// Edge of the thinning grid, meters: one averaged point per occupied cell. 0 keeps
    /// every point.
    public var voxel: Double = 0.01
    /// Use every N-th frame.
    public var every: Int = 1

    /// The defaults: high confidence, 1 cm cells, every frame.
    public init() {}

    /// Checks the values (the point options', a finite non-negative voxel, `every >= 1`).
    public func validate() throws {
        try points.validate()
        guard points.axes == .opencv else {
            throw RGBDError(.invalidArgument, "a scene's points are in its world, not in a camera frame: camera axes do not apply")
        }
        guard voxel >= 0, voxel.isFinite else {
            throw RGBDError(.invalidArgument, "the voxel size must be a finite number of meters, 0 or more (\(voxel))")
        }
        try FrameSelection(every: every).validate()
    }
}

/// A scene's frames back-projected into its world and merged: each frame's depth pixels
/// (confidence, range and flying-pixel filters as for captures) become points
/// `pose·(X, Y, Z)`, colored by their own color frame averaged over the depth pixel's
/// footprint, then thinned on a voxel grid (one point per occupied cell: the mean of its
/// points' positions and colors). Streaming: memory follows the occupied cells, not the
/// number of frames.
public struct SceneCloud: Sendable {
    /// World positions, meters (3 floats per point).
    public var positions: [Float]
    /// RGB per point (3 bytes per point); white for a depth-only scene.
    public var colors: [UInt8]
    /// Unit normals (3 floats per point, toward the cameras that saw the point) when the
    /// options asked for them, else empty.
    public var normals: [Float] = []
    /// Frames used.
    public var frames: Int
    /// Points before thinning.
    public var inputPoints: Int
    /// Frames used that had a confidence map (the others kept every depth).
    public var framesWithConfidence: Int = 0

    /// Each stored property given.
    package init(positions: [Float], colors: [UInt8], normals: [Float] = [], frames: Int, inputPoints: Int, framesWithConfidence: Int = 0) {
        self.positions = positions
        self.colors = colors
        self.normals = normals
        self.frames = frames
        self.inputPoints = inputPoints
        self.framesWithConfidence = framesWithConfidence
    }

    /// Number of points.
    public var count: Int { positions.count / 3 }

    /// Builds the cloud of `scene`; `progress` is called after each frame with the
    /// number done and the number to do.
    public static func build(_ scene: Scene, options: SceneCloudOptions,
                             progress: ((Int, Int) -> Void)? = nil) throws -> SceneCloud {
        try options.validate()
        let positions = FrameSelection(every: options.every).positions(count: scene.frames.count)
        var merger = Merger(options: options)
        try scene.forEachFrame(positions, color: scene.colorSize != nil) { frame in
            merger.add(frame)
            progress?(merger.frames, positions.count)
        }
        return merger.cloud()
    }

    /// Merges frames one at a time (for a caller that reads the frames itself, such as
    /// `SceneExport`'s seed cloud): `add` each frame, then `cloud()`.
    package struct Merger {
        let options: SceneCloudOptions
        private var grid: VoxelAccumulator
        private(set) var frames = 0
        private var framesWithConfidence = 0
        private var input = 0
        private var buffer = [Float](), colorBuffer = [UInt8](), normalBuffer = [Float]()
        /// How a frame's colours are averaged down to its depth grid: over threads, or
        /// on the calling thread for a caller whose frames are its parallel work.
        private let rows: RowScheduler

        /// A merger with `options` (already validated); `every` is the caller's business.
        package init(options: SceneCloudOptions, rows: RowScheduler = .parallel) {
            self.options = options
            self.rows = rows
            grid = VoxelAccumulator(voxel: options.voxel, normals: options.points.normals)
        }

        /// Adds a frame's points.
        package mutating func add(_ frame: SceneFrame) {
            var depth = frame.depth
            if frame.confidence != nil { framesWithConfidence += 1 }
            if let confidence = frame.confidence, options.minConfidence > .low {
                for i in depth.samples.indices where confidence.samples[i] < options.minConfidence.rawValue {
                    depth.samples[i] = .nan
                }
            }
            let colors = frame.color?.areaAverage(toWidth: depth.width, height: depth.height, scheduler: rows)
            var pointOptions = options.points
            pointOptions.axes = .opencv
            let normals = options.points.normals
            // A scene's frame (`WorldFrame.forScene`) places its world, after each pose.
            pointOptions.frame = .camera
            let cloud = PointCloud(depth: depth, intrinsics: frame.info.depthIntrinsics, colors: colors, options: pointOptions)
            let n = cloud.count
            if buffer.count < 3 * n {
                buffer = [Float](repeating: 0, count: 3 * n)
                colorBuffer = [UInt8](repeating: 0, count: 3 * n)
                if normals { normalBuffer = [Float](repeating: 0, count: 3 * n) }
            }
            let written = buffer.withUnsafeMutableBufferPointer { points in
                colorBuffer.withUnsafeMutableBufferPointer { rgb in
                    normalBuffer.withUnsafeMutableBufferPointer { nb in
                        guard let p = points.baseAddress, let c = rgb.baseAddress else { return 0 }
                        return cloud.fill(rows: 0..<depth.height, points: p, colors: c, normals: normals ? nb.baseAddress : nil)
                    }
                }
            }
            let world = options.points.frame
            let pose = world.kind == .camera ? frame.pose : world.transform.composed(with: frame.pose)
            let r0 = SIMD3<Float>(pose.row0), r1 = SIMD3<Float>(pose.row1), r2 = SIMD3<Float>(pose.row2)
            let t = SIMD3<Float>(pose.translation)
            for i in 0..<written {
                let p = SIMD3(buffer[3 * i], buffer[3 * i + 1], buffer[3 * i + 2])
                let world = SIMD3((r0 * p).sum(), (r1 * p).sum(), (r2 * p).sum()) + t
                var normal = SIMD3<Float>.zero
                if normals {
                    let m = SIMD3(normalBuffer[3 * i], normalBuffer[3 * i + 1], normalBuffer[3 * i + 2])
                    normal = SIMD3((r0 * m).sum(), (r1 * m).sum(), (r2 * m).sum())
                }
                grid.add(world, SIMD3(colorBuffer[3 * i], colorBuffer[3 * i + 1], colorBuffer[3 * i + 2]), normal)
            }
            input += written
            frames += 1
        }

        /// The merged, thinned cloud.
        package func cloud() -> SceneCloud {
            let (p, c, n) = grid.points()
            return SceneCloud(positions: p, colors: c, normals: n, frames: frames, inputPoints: input,
                              framesWithConfidence: framesWithConfidence)
        }
    }
}

/// Points summed per cell of a voxel grid (cells indexed by `SparseKeyIndex`), so memory
/// follows the occupied cells. With a voxel of 0 every point is kept as it is. With
/// `normals`, each cell's normals are summed and the sum made unit length.
struct VoxelAccumulator {
    let voxel: Double
    let normals: Bool
    private var cells = SparseKeyIndex(capacity: 1 << 16)
    private var sums: [SIMD4<Float>] = []     // x, y, z, count
    private var colorSums: [SIMD3<UInt32>] = []
    private var raw: [Float] = []
    private var rawColors: [UInt8] = []
    private var normalSums: [SIMD3<Float>] = []
    private var rawNormals: [Float] = []

    package init(voxel: Double, normals: Bool = false) {
        self.voxel = voxel
        self.normals = normals
    }

    /// The cell key (`SparseKeyIndex.cellKey`: ±10 km at 1 cm); nil beyond.
    @inline(__always) private func key(_ p: SIMD3<Float>) -> UInt64? {
        let inv = Float(1 / voxel)
        let q = (p * inv).rounded(.down)
        let limit: Float = 1_048_575
        guard q.x.isFinite, q.y.isFinite, q.z.isFinite, abs(q.x) < limit, abs(q.y) < limit, abs(q.z) < limit else { return nil }
        return SparseKeyIndex.cellKey(Int(q.x), Int(q.y), Int(q.z))
    }

    package mutating func add(_ p: SIMD3<Float>, _ c: SIMD3<UInt8>, _ n: SIMD3<Float> = .zero) {
        guard voxel > 0 else {
            raw += [p.x, p.y, p.z]
            rawColors += [c.x, c.y, c.z]
            if normals { rawNormals += [n.x, n.y, n.z] }
            return
        }
        guard let k = key(p) else { return }
        let (index, inserted) = cells.insert(k)
        if inserted {
            sums.append(SIMD4(p.x, p.y, p.z, 1))
            colorSums.append(SIMD3(UInt32(c.x), UInt32(c.y), UInt32(c.z)))
            if normals { normalSums.append(n) }
        } else {
            sums[index] += SIMD4(p.x, p.y, p.z, 1)
            colorSums[index] &+= SIMD3(UInt32(c.x), UInt32(c.y), UInt32(c.z))
            if normals { normalSums[index] += n }
        }
    }

    /// One point per cell: the mean position and color, and the unit mean normal (empty
    /// without `normals`).
    func points() -> ([Float], [UInt8], [Float]) {
        guard voxel > 0 else { return (raw, rawColors, rawNormals) }
        var positions = [Float](), colors = [UInt8](), unitNormals = [Float]()
        if normals {
            unitNormals.reserveCapacity(3 * normalSums.count)
            for n in normalSums {
                let length = (n * n).sum().squareRoot()
                let u = length > 0 ? n / length : .zero
                unitNormals += [u.x, u.y, u.z]
            }
        }
        positions.reserveCapacity(3 * sums.count)
        colors.reserveCapacity(3 * sums.count)
        for (s, c) in zip(sums, colorSums) {
            let n = s.w
            positions += [s.x / n, s.y / n, s.z / n]
            let mean = (SIMD3(Float(c.x), Float(c.y), Float(c.z)) / n).rounded(.toNearestOrEven)
            colors += [UInt8(min(255, mean.x)), UInt8(min(255, mean.y)), UInt8(min(255, mean.z))]
        }
        return (positions, colors, unitNormals)
    }
}
