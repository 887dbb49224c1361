/// What `SceneCloud` keeps.
public struct SceneCloudOptions: Equatable, Sendable {
    /// The lowest ARKit confidence kept (0 low, 1 medium, 2 high); frames without
    /// confidence maps keep every depth.
    public var minConfidence: UInt8 = 2
    /// Per-frame filters: depth range, flying pixels, stride (as for captures). Its
    /// `frame` (from `WorldFrame.forScene`) is applied to the scene's world, after each
    /// frame's pose.
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
        guard voxel >= 0, voxel.isFinite else {
            throw RGBDError(.invalidArgument, "the voxel size must be a finite number of meters, 0 or more (\(voxel))")
        }
        guard every >= 1 else { throw RGBDError(.invalidArgument, "the frame step must be at least 1 (\(every))") }
        guard minConfidence <= 2 else {
            throw RGBDError(.invalidArgument, "the confidence levels are 0, 1 and 2 (\(minConfidence))")
        }
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
    /// Frames used.
    public var frames: Int
    /// Points before thinning.
    public var inputPoints: Int
    /// Frames used that had a confidence map (the others kept every depth).
    public var framesWithConfidence: Int = 0

    /// Number of points.
    public var count: Int { positions.count / 3 }

    /// Builds the cloud of `scene`; `progress` is called after each frame with the
    /// number done and the number to do.
    public static func build(_ scene: Scene, options: SceneCloudOptions,
                             progress: ((Int, Int) -> Void)? = nil) throws -> SceneCloud {
        try options.validate()
        let positions = Array(Swift.stride(from: 0, to: scene.frames.count, by: options.every))
        var merger = Merger(options: options)
        try scene.forEachFrame(positions, color: scene.colorSize != nil) { frame in
            merger.add(frame)
            progress?(merger.frames, positions.count)
        }
        return merger.cloud()
    }

    /// Merges frames one at a time (for a caller that reads the frames itself, such as
    /// `SceneExport`'s seed cloud): `add` each frame, then `cloud()`.
    struct Merger {
        let options: SceneCloudOptions
        private var grid: VoxelAccumulator
        private(set) var frames = 0
        private var framesWithConfidence = 0
        private var input = 0
        private var buffer = [Float](), colorBuffer = [UInt8]()
        /// How a frame's colours are averaged down to its depth grid: over threads, or
        /// on the calling thread for a caller whose frames are its parallel work.
        private let rows: RowScheduler

        /// A merger with `options` (already validated); `every` is the caller's business.
        init(options: SceneCloudOptions, rows: RowScheduler = .parallel) {
            self.options = options
            self.rows = rows
            grid = VoxelAccumulator(voxel: options.voxel)
        }

        /// Adds a frame's points.
        mutating func add(_ frame: SceneFrame) {
            var depth = frame.depth
            if frame.confidence != nil { framesWithConfidence += 1 }
            if let confidence = frame.confidence, options.minConfidence > 0 {
                for i in depth.samples.indices where confidence.samples[i] < options.minConfidence {
                    depth.samples[i] = .nan
                }
            }
            let colors = frame.color?.areaAverage(toWidth: depth.width, height: depth.height, scheduler: rows)
            var pointOptions = options.points
            pointOptions.axes = .opencv
            pointOptions.normals = false
            // A scene's frame (`WorldFrame.forScene`) places its world, after each pose.
            pointOptions.frame = .camera
            let cloud = PointCloud(depth: depth, intrinsics: frame.info.depthIntrinsics, colors: colors, options: pointOptions)
            let n = cloud.count
            if buffer.count < 3 * n {
                buffer = [Float](repeating: 0, count: 3 * n)
                colorBuffer = [UInt8](repeating: 0, count: 3 * n)
            }
            let written = buffer.withUnsafeMutableBufferPointer { points in
                colorBuffer.withUnsafeMutableBufferPointer { rgb in
                    guard let p = points.baseAddress, let c = rgb.baseAddress else { return 0 }
                    return cloud.fill(rows: 0..<depth.height, points: p, colors: c, normals: nil)
                }
            }
            let world = options.points.frame
            let pose = world.kind == .camera ? frame.pose : world.transform.composed(with: frame.pose)
            let r0 = SIMD3<Float>(pose.row0), r1 = SIMD3<Float>(pose.row1), r2 = SIMD3<Float>(pose.row2)
            let t = SIMD3<Float>(pose.translation)
            for i in 0..<written {
                let p = SIMD3(buffer[3 * i], buffer[3 * i + 1], buffer[3 * i + 2])
                let world = SIMD3((r0 * p).sum(), (r1 * p).sum(), (r2 * p).sum()) + t
                grid.add(world, SIMD3(colorBuffer[3 * i], colorBuffer[3 * i + 1], colorBuffer[3 * i + 2]))
            }
            input += written
            frames += 1
        }

        /// The merged, thinned cloud.
        func cloud() -> SceneCloud {
            let (p, c) = grid.points()
            return SceneCloud(positions: p, colors: c, frames: frames, inputPoints: input,
                              framesWithConfidence: framesWithConfidence)
        }
    }
}

/// Points summed per cell of a voxel grid (cells indexed by `SparseKeyIndex`), so memory
/// follows the occupied cells. With a voxel of 0 every point is kept as it is.
struct VoxelAccumulator {
    let voxel: Double
    private var cells = SparseKeyIndex(capacity: 1 << 16)
    private var sums: [SIMD4<Float>] = []     // x, y, z, count
    private var colorSums: [SIMD3<UInt32>] = []
    private var raw: [Float] = []
    private var rawColors: [UInt8] = []

    init(voxel: Double) {
        self.voxel = voxel
    }

    /// The cell key (`SparseKeyIndex.cellKey`: ±10 km at 1 cm); nil beyond.
    @inline(__always) private func key(_ p: SIMD3<Float>) -> UInt64? {
        let inv = Float(1 / voxel)
        let q = (p * inv).rounded(.down)
        let limit: Float = 1_048_575
        guard q.x.isFinite, q.y.isFinite, q.z.isFinite, abs(q.x) < limit, abs(q.y) < limit, abs(q.z) < limit else { return nil }
        return SparseKeyIndex.cellKey(Int(q.x), Int(q.y), Int(q.z))
    }

    mutating func add(_ p: SIMD3<Float>, _ c: SIMD3<UInt8>) {
        guard voxel > 0 else {
            raw += [p.x, p.y, p.z]
            rawColors += [c.x, c.y, c.z]
            return
        }
        guard let k = key(p) else { return }
        let (index, inserted) = cells.insert(k)
        if inserted {
            sums.append(SIMD4(p.x, p.y, p.z, 1))
            colorSums.append(SIMD3(UInt32(c.x), UInt32(c.y), UInt32(c.z)))
        } else {
            sums[index] += SIMD4(p.x, p.y, p.z, 1)
            colorSums[index] &+= SIMD3(UInt32(c.x), UInt32(c.y), UInt32(c.z))
        }
    }

    /// One point per cell: the mean position and color.
    func points() -> ([Float], [UInt8]) {
        guard voxel > 0 else { return (raw, rawColors) }
        var positions = [Float](), colors = [UInt8]()
        positions.reserveCapacity(3 * sums.count)
        colors.reserveCapacity(3 * sums.count)
        for (s, c) in zip(sums, colorSums) {
            let n = s.w
            positions += [s.x / n, s.y / n, s.z / n]
            let mean = (SIMD3(Float(c.x), Float(c.y), Float(c.z)) / n).rounded(.toNearestOrEven)
            colors += [UInt8(min(255, mean.x)), UInt8(min(255, mean.y)), UInt8(min(255, mean.z))]
        }
        return (positions, colors)
    }
}
