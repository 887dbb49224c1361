/// Which way the axes of exported points point.
public enum CameraAxes: String, Sendable, CaseIterable {
    /// OpenCV camera frame: x right, y down, z forward (docs/outputs.md).
    case opencv
    /// OpenGL-style viewers' frame: `(X, −Y, −Z)`.
    case opengl
}

/// What `PointCloud` keeps and computes.
public struct PointCloudOptions: Equatable, Sendable {
    /// Points nearer than this (meters) are dropped.
    public var minDepth: Float = 0
    /// Points farther than this (meters) are dropped.
    public var maxDepth: Float = .infinity
    /// Keep every `stride`-th depth pixel along both axes (values below 1 count as 1).
    public var stride: Int = 1
    /// Drop points on depth discontinuities (see `edgeThreshold`).
    public var dropEdges: Bool = true
    /// A point is on a discontinuity when one of its 4 neighbors' depth differs from its
    /// own by more than this fraction of its depth (0.05 = 5 %); holes do not count.
    public var edgeThreshold: Float = 0.05
    /// Compute normals from the depth grid's neighbors, oriented toward the camera.
    public var normals: Bool = false
    /// Output frame.
    public var axes: CameraAxes = .opencv
    /// Where the points are placed: the camera frame (the default), or a level or ENU
    /// frame (`WorldFrame`), applied after `axes` (which must then be `opencv`).
    public var frame: WorldFrame = .camera

    /// The defaults: every pixel, edges dropped, no normals, OpenCV frame.
    public init() {}

    /// Checks the values: `0 <= minDepth < maxDepth`, `stride` at least 1, a positive
    /// finite `edgeThreshold`. The error's `argument` says which value is out of range,
    /// for each front to name in its own words.
    ///
    /// - Throws: `RGBDError` (`.invalidArgument`) naming the first value out of range.
    public func validate() throws {
        guard minDepth >= 0, maxDepth > minDepth else {
            throw RGBDError(.invalidArgument, "the depth range needs 0 <= minimum < maximum (\(minDepth), \(maxDepth))",
                            argument: .depthRange)
        }
        guard stride >= 1 else {
            throw RGBDError(.invalidArgument, "the stride must be at least 1 (\(stride))", argument: .stride)
        }
        guard edgeThreshold > 0, edgeThreshold.isFinite else {
            throw RGBDError(.invalidArgument, "the flying-pixel threshold must be positive and finite (\(edgeThreshold))",
                            argument: .edgeThreshold)
        }
        guard frame.kind == .camera || axes == .opencv else {
            throw RGBDError(.invalidArgument, "the OpenGL axes apply to the camera frame only, not to the \(frame.kind.rawValue) frame")
        }
    }
}

/// Back-projection of a rectified depth map into camera-frame points (docs/outputs.md):
/// `X = (u − cx)·Z/fx`, `Y = (v − cy)·Z/fy`, `Z`, meters, with the color of the matching
/// footprint of the rectified color image.
///
/// Points are produced row by row on demand (`forEachPoint`), so writers can stream
/// them without a second copy of the cloud in memory; `count` says how many there will be.
public struct PointCloud: Sendable {
    /// Rectified depth, meters, NaN = no depth.
    public let depth: DepthMap
    /// Pinhole intrinsics of `depth`.
    public let intrinsics: Intrinsics
    /// Per-depth-pixel color: the rectified color averaged over each depth pixel's
    /// footprint (`ImageBuffer.areaAverage`), or nil for points without color.
    public let colors: ColorImage?
    /// Filters and extras.
    public let options: PointCloudOptions
    /// Which depth pixels become points (after stride, range and edge filters).
    let kept: [Bool]
    /// The number of points `forEachPoint` produces.
    public let count: Int

    /// One exported point, in the chosen frame.
    public struct Point: Sendable {
        /// Meters, in the chosen frame.
        public var position: SIMD3<Float>
        /// RGB.
        public var color: SIMD3<UInt8>
        /// Unit normal toward the camera (zero if not computed or not computable).
        public var normal: SIMD3<Float>

        /// A point from its parts.
        public init(position: SIMD3<Float>, color: SIMD3<UInt8>, normal: SIMD3<Float>) {
            self.position = position
            self.color = color
            self.normal = normal
        }
    }

    /// A cloud of the rectified capture's depth, colored by its rectified color.
    public init(_ capture: RectifiedCapture, options: PointCloudOptions = PointCloudOptions()) {
        self.init(depth: capture.depth, intrinsics: capture.depthIntrinsics,
                  colors: capture.color.areaAverage(toWidth: capture.depth.width, height: capture.depth.height),
                  options: options)
    }

    /// A cloud of any depth map with its intrinsics and optional per-pixel colors (of
    /// the depth map's size).
    public init(depth: DepthMap, intrinsics: Intrinsics, colors: ColorImage?, options: PointCloudOptions) {
        precondition(colors.map { $0.width == depth.width && $0.height == depth.height && $0.channels == 3 } ?? true,
                     "colors must be RGB at the depth map's size")
        self.depth = depth
        self.intrinsics = intrinsics
        self.colors = colors
        self.options = options
        kept = Self.selection(depth, options: options)
        count = kept.reduce(0) { $0 + ($1 ? 1 : 0) }
    }

    /// Which depth pixels become points: a valid depth within the range, on the stride
    /// grid, and (with `dropEdges`) no 4-neighbor whose depth differs by more than
    /// `edgeThreshold` times its own.
    package static func selection(_ depth: DepthMap, options: PointCloudOptions) -> [Bool] {
        let width = depth.width, height = depth.height
        // A stride beyond both sides keeps pixel (0, 0) alone, as that side would (and
        // `height + step` cannot overflow); below 1 counts as 1.
        let step = min(max(1, options.stride), max(1, width, height))
        var kept = [Bool](repeating: false, count: width * height)
        depth.samples.withUnsafeBufferPointer { buffer in
            kept.withUnsafeMutableBufferPointer { keptBuffer in
                guard let d = buffer.baseAddress, let keep = keptBuffer.baseAddress else { return }
                func jumps(_ x: Int, _ y: Int, from z: Float, limit: Float) -> Bool {
                    guard x >= 0, y >= 0, x < width, y < height else { return false }
                    let n = d[y * width + x]
                    return n.isFinite && abs(n - z) > limit
                }
                // The rows of the stride grid, in parallel bands (each writes its own rows).
                RowScheduler.parallel.forEachBand(rows: (height + step - 1) / step) { band in
                    for v in band.map({ $0 * step }) {
                        for u in Swift.stride(from: 0, to: width, by: step) {
                            let z = d[v * width + u]
                            guard z.isFinite, z > 0, z >= options.minDepth, z <= options.maxDepth else { continue }
                            if options.dropEdges {
                                let limit = options.edgeThreshold * z
                                if jumps(u - 1, v, from: z, limit: limit) || jumps(u + 1, v, from: z, limit: limit)
                                    || jumps(u, v - 1, from: z, limit: limit) || jumps(u, v + 1, from: z, limit: limit) {
                                    continue
                                }
                            }
                            keep[v * width + u] = true
                        }
                    }
                }
            }
        }
        return kept
    }

    /// Writes the points of depth rows `rows`, in order, into caller arrays: `points`
    /// (3 floats each), `colors` (3 bytes each, if given) and `normals` (3 floats each,
    /// if given; zero unless `options.normals`). Returns how many were written; the
    /// arrays must hold `pointCount(rows:)` points.
    package func fill(rows: Range<Int>, points: UnsafeMutablePointer<Float>, colors out: UnsafeMutablePointer<UInt8>?,
                     normals: UnsafeMutablePointer<Float>?) -> Int {
        let k = intrinsics, width = depth.width, height = depth.height
        let fxInv = Float(1 / k.fx), fyInv = Float(1 / k.fy), cx = Float(k.cx), cy = Float(k.cy)
        let sign: Float = options.axes == .opengl ? -1 : 1
        let computeNormals = options.normals && normals != nil
        // The frame's rotation and translation (nil for the camera frame: nothing to do).
        let placement = options.frame.kind == .camera ? nil : options.frame.transform
        let r0 = SIMD3<Float>(placement?.row0 ?? .zero), r1 = SIMD3<Float>(placement?.row1 ?? .zero)
        let r2 = SIMD3<Float>(placement?.row2 ?? .zero), t = SIMD3<Float>(placement?.translation ?? .zero)
        var n = 0
        depth.samples.withUnsafeBufferPointer { buffer in
            guard let d = buffer.baseAddress else { return }
            @inline(__always) func point(_ u: Int, _ v: Int) -> SIMD3<Float>? {
                guard u >= 0, v >= 0, u < width, v < height else { return nil }
                let z = d[v &* width &+ u]
                guard z.isFinite, z > 0 else { return nil }
                return SIMD3((Float(u) - cx) * z * fxInv, (Float(v) - cy) * z * fyInv, z)
            }
            kept.withUnsafeBufferPointer { keep in
                for v in rows.clamped(to: 0..<height) {
                    let yScale = (Float(v) - cy) * fyInv
                    for u in 0..<width where keep[v &* width &+ u] {
                        let z = d[v &* width &+ u]
                        let o = 3 &* n
                        points[o] = (Float(u) - cx) * z * fxInv
                        points[o &+ 1] = sign * yScale * z
                        points[o &+ 2] = sign * z
                        if let out {
                            let c = (v &* width &+ u) &* 3
                            if let colors {
                                out[o] = colors.samples[c]; out[o &+ 1] = colors.samples[c &+ 1]; out[o &+ 2] = colors.samples[c &+ 2]
                            } else {
                                out[o] = 255; out[o &+ 1] = 255; out[o &+ 2] = 255
                            }
                        }
                        if let normals {
                            var normal = SIMD3<Float>.zero
                            if computeNormals, let p = point(u, v) {
                                normal = Self.normal(at: p, left: point(u - 1, v), right: point(u + 1, v),
                                                     up: point(u, v - 1), down: point(u, v + 1),
                                                     limit: options.edgeThreshold * p.z)
                            }
                            normals[o] = normal.x; normals[o &+ 1] = sign * normal.y; normals[o &+ 2] = sign * normal.z
                            if placement != nil {
                                let q = SIMD3(normals[o], normals[o &+ 1], normals[o &+ 2])
                                normals[o] = (r0 * q).sum(); normals[o &+ 1] = (r1 * q).sum(); normals[o &+ 2] = (r2 * q).sum()
                            }
                        }
                        if placement != nil {
                            let q = SIMD3(points[o], points[o &+ 1], points[o &+ 2])
                            points[o] = (r0 * q).sum() + t.x; points[o &+ 1] = (r1 * q).sum() + t.y
                            points[o &+ 2] = (r2 * q).sum() + t.z
                        }
                        n &+= 1
                    }
                }
            }
        }
        return n
    }

    /// The number of points in depth rows `rows`.
    package func pointCount(rows: Range<Int>) -> Int {
        kept.withUnsafeBufferPointer { keep in
            var n = 0
            for i in (rows.clamped(to: 0..<depth.height).lowerBound * depth.width)..<(rows.clamped(to: 0..<depth.height).upperBound * depth.width)
                where keep[i] { n += 1 }
            return n
        }
    }

    /// Calls `body` for every point, row by row (built on `fill`).
    public func forEachPoint(_ body: (Point) throws -> Void) rethrows {
        let width = depth.width
        let points = UnsafeMutablePointer<Float>.allocate(capacity: 3 * width)
        let colors = UnsafeMutablePointer<UInt8>.allocate(capacity: 3 * width)
        let normals = UnsafeMutablePointer<Float>.allocate(capacity: 3 * width)
        defer { points.deallocate(); colors.deallocate(); normals.deallocate() }
        for v in 0..<depth.height {
            let n = fill(rows: v..<(v + 1), points: points, colors: colors, normals: normals)
            for i in 0..<n {
                try body(Point(position: SIMD3(points[3 * i], points[3 * i + 1], points[3 * i + 2]),
                               color: SIMD3(colors[3 * i], colors[3 * i + 1], colors[3 * i + 2]),
                               normal: SIMD3(normals[3 * i], normals[3 * i + 1], normals[3 * i + 2])))
            }
        }
    }

    /// The surface normal at `p` from its grid neighbors (central differences where
    /// both exist on the same surface, one-sided otherwise), pointing toward the camera;
    /// zero if there are not enough neighbors.
    static func normal(at p: SIMD3<Float>, left: SIMD3<Float>?, right: SIMD3<Float>?, up: SIMD3<Float>?,
                       down: SIMD3<Float>?, limit: Float) -> SIMD3<Float> {
        @inline(__always) func near(_ q: SIMD3<Float>?) -> SIMD3<Float>? {
            guard let q, abs(q.z - p.z) <= limit else { return nil }
            return q
        }
        let l = near(left), r = near(right), u = near(up), d = near(down)
        let horizontal: SIMD3<Float>
        if let l, let r { horizontal = r - l } else if let r { horizontal = r - p } else if let l { horizontal = p - l } else { return .zero }
        let vertical: SIMD3<Float>
        if let u, let d { vertical = d - u } else if let d { vertical = d - p } else if let u { vertical = p - u } else { return .zero }
        var n = SIMD3(horizontal.y * vertical.z - horizontal.z * vertical.y,
                      horizontal.z * vertical.x - horizontal.x * vertical.z,
                      horizontal.x * vertical.y - horizontal.y * vertical.x)
        let length = (n * n).sum().squareRoot()
        guard length > 0 else { return .zero }
        n /= length
        // Toward the camera at the origin: n · (0 − p) > 0.
        if (n * p).sum() > 0 { n = -n }
        return n
    }
}

extension PointCloud {
    /// Why a cloud holds no point: the first selection step that left nothing.
    package enum EmptyCause: Equatable, Sendable {
        /// The rectified depth map has no valid depth at all.
        case noDepth
        /// Every valid depth lies outside `minDepth ... maxDepth`; the valid depths
        /// span `nearest ... farthest` meters.
        case depthRange(nearest: Float, farthest: Float)
        /// Depths lie within the range, but none on the stride grid.
        case stride
        /// The edge filter (`dropEdges`) dropped every point left.
        case edges
    }

    /// Why this cloud is empty, or nil if it holds points.
    package var emptyCause: EmptyCause? {
        guard count == 0 else { return nil }
        var nearest = Float.infinity, farthest = -Float.infinity
        for z in depth.samples where DepthMap.isDepth(z) {
            nearest = min(nearest, z)
            farthest = max(farthest, z)
        }
        guard nearest <= farthest else { return .noDepth }
        let inRange = { (z: Float) in DepthMap.isDepth(z) && z >= options.minDepth && z <= options.maxDepth }
        guard depth.samples.contains(where: inRange) else { return .depthRange(nearest: nearest, farthest: farthest) }
        var unfiltered = options
        unfiltered.dropEdges = false
        return Self.selection(depth, options: unfiltered).contains(true) ? .edges : .stride
    }
}
