/// Writes point clouds as PLY 1.0 (`binary_little_endian` or `ascii`): vertex properties
/// `float x, y, z`, `uchar red, green, blue`, and `float nx, ny, nz` when normals are
/// requested, the layout MeshLab, CloudCompare, Open3D and Blender read.
public enum PLYWriter {
    /// PLY encodings.
    public enum Encoding: String, Sendable {
        case binaryLittleEndian = "binary_little_endian"
        case ascii
    }

    /// The header for `count` vertices (and `faces` triangles, `vertex_indices` lists of
    /// three `int`s, when given), with comments on units, frame, intrinsics and source.
    package static func header(count: Int, normals: Bool, encoding: Encoding, comments: [String], faces: Int? = nil) -> String {
        var lines = ["ply", "format \(encoding.rawValue) 1.0"]
        lines += comments.map { "comment " + $0.map { $0 == "\n" || $0 == "\r" ? " " : $0 }.reduce(into: "") { $0.append($1) } }
        lines.append("element vertex \(count)")
        lines += ["x", "y", "z"].map { "property float \($0)" }
        lines += ["red", "green", "blue"].map { "property uchar \($0)" }
        if normals { lines += ["nx", "ny", "nz"].map { "property float \($0)" } }
        if let faces { lines += ["element face \(faces)", "property list uchar int vertex_indices"] }
        lines.append("end_header")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Streams `cloud` to an open descriptor (closed afterwards) through a 256 KiB
    /// buffer: the points are never all in memory at once. Returns the number of points.
    @discardableResult
    package static func write(_ cloud: PointCloud, fd: Int32, path: String, encoding: Encoding,
                             comments: [String]) throws -> Int {
        guard encoding == .binaryLittleEndian else {
            return try write(count: cloud.count, normals: cloud.options.normals, fd: fd, path: path, encoding: encoding,
                             comments: comments, points: cloud.forEachPoint)
        }
        // Binary: fill a block of rows at a time with `PointCloud.fill`, then lay the
        // records out (no per-point calls).
        defer { FileSystem.closeFile(fd) }
        let normals = cloud.options.normals
        let head = Array(header(count: cloud.count, normals: normals, encoding: encoding, comments: comments).utf8)
        try head.withUnsafeBytes { try FileSystem.writeAll(fd, $0, path: path) }
        let width = cloud.depth.width, blockRows = max(1, 16_384 / max(1, width))
        let record = normals ? 27 : 15
        let capacity = blockRows * width
        let points = UnsafeMutablePointer<Float>.allocate(capacity: 3 * capacity)
        let colors = UnsafeMutablePointer<UInt8>.allocate(capacity: 3 * capacity)
        let normalValues = normals ? UnsafeMutablePointer<Float>.allocate(capacity: 3 * capacity) : nil
        let out = UnsafeMutableRawPointer.allocate(byteCount: record * capacity, alignment: 16)
        defer { points.deallocate(); colors.deallocate(); normalValues?.deallocate(); out.deallocate() }
        var written = 0
        var v = 0
        while v < cloud.depth.height {
            let rows = v..<min(cloud.depth.height, v + blockRows)
            let n = cloud.fill(rows: rows, points: points, colors: colors, normals: normalValues)
            for i in 0..<n {
                let r = out + i &* record
                r.storeBytes(of: points[3 &* i].bitPattern.littleEndian, toByteOffset: 0, as: UInt32.self)
                r.storeBytes(of: points[3 &* i &+ 1].bitPattern.littleEndian, toByteOffset: 4, as: UInt32.self)
                r.storeBytes(of: points[3 &* i &+ 2].bitPattern.littleEndian, toByteOffset: 8, as: UInt32.self)
                r.storeBytes(of: colors[3 &* i], toByteOffset: 12, as: UInt8.self)
                r.storeBytes(of: colors[3 &* i &+ 1], toByteOffset: 13, as: UInt8.self)
                r.storeBytes(of: colors[3 &* i &+ 2], toByteOffset: 14, as: UInt8.self)
                if let normalValues {
                    r.storeBytes(of: normalValues[3 &* i].bitPattern.littleEndian, toByteOffset: 15, as: UInt32.self)
                    r.storeBytes(of: normalValues[3 &* i &+ 1].bitPattern.littleEndian, toByteOffset: 19, as: UInt32.self)
                    r.storeBytes(of: normalValues[3 &* i &+ 2].bitPattern.littleEndian, toByteOffset: 23, as: UInt32.self)
                }
            }
            try FileSystem.writeAll(fd, UnsafeRawBufferPointer(start: out, count: n * record), path: path)
            written += n
            v = rows.upperBound
        }
        guard written == cloud.count else {
            throw RGBDError(.invalidArgument, file: path, "\(written) points produced, \(cloud.count) declared in the header")
        }
        return written
    }

    /// Streams `count` points, produced by `points` (which calls its argument once per
    /// point), to an open descriptor (closed afterwards), then `faces` (triangles, three
    /// vertex indices each) when given. Returns the number of points written.
    @discardableResult
    package static func write(count: Int, normals: Bool, fd: Int32, path: String, encoding: Encoding, comments: [String],
                             faces: [UInt32]? = nil,
                             points: ((PointCloud.Point) throws -> Void) throws -> Void) throws -> Int {
        defer { FileSystem.closeFile(fd) }
        let capacity = 1 << 18
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        var used = 0
        func flush() throws {
            try FileSystem.writeAll(fd, UnsafeRawBufferPointer(start: buffer, count: used), path: path)
            used = 0
        }
        func append(_ bytes: some Collection<UInt8>) throws {
            for byte in bytes {
                if used == capacity { try flush() }
                buffer.storeBytes(of: byte, toByteOffset: used, as: UInt8.self)
                used += 1
            }
        }
        try append(header(count: count, normals: normals, encoding: encoding, comments: comments,
                          faces: faces.map { $0.count / 3 }).utf8)
        let record = normals ? 27 : 15
        var written = 0
        try points { point in
            switch encoding {
            case .binaryLittleEndian:
                if used + record > capacity { try flush() }
                @inline(__always) func store(_ v: Float, _ offset: Int) {
                    buffer.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: used + offset, as: UInt32.self)
                }
                store(point.position.x, 0); store(point.position.y, 4); store(point.position.z, 8)
                buffer.storeBytes(of: point.color.x, toByteOffset: used + 12, as: UInt8.self)
                buffer.storeBytes(of: point.color.y, toByteOffset: used + 13, as: UInt8.self)
                buffer.storeBytes(of: point.color.z, toByteOffset: used + 14, as: UInt8.self)
                if normals { store(point.normal.x, 15); store(point.normal.y, 19); store(point.normal.z, 23) }
                used += record
            case .ascii:
                var line = "\(point.position.x) \(point.position.y) \(point.position.z) \(point.color.x) \(point.color.y) \(point.color.z)"
                if normals { line += " \(point.normal.x) \(point.normal.y) \(point.normal.z)" }
                line += "\n"
                try append(line.utf8)
            }
            written += 1
        }
        for t in 0..<(faces?.count ?? 0) / 3 {
            guard let faces else { break }
            let o = 3 * t
            switch encoding {
            case .binaryLittleEndian:
                if used + 13 > capacity { try flush() }
                buffer.storeBytes(of: UInt8(3), toByteOffset: used, as: UInt8.self)
                for k in 0..<3 {
                    buffer.storeBytes(of: faces[o + k].littleEndian, toByteOffset: used + 1 + 4 * k, as: UInt32.self)
                }
                used += 13
            case .ascii:
                try append("3 \(faces[o]) \(faces[o + 1]) \(faces[o + 2])\n".utf8)
            }
        }
        try flush()
        guard written == count else {
            throw RGBDError(.invalidArgument, file: path, "\(written) points produced, \(count) declared in the header")
        }
        return written
    }
}

extension PLYWriter {
    /// Writes points given as arrays (`count·3` floats, `count·3` color bytes or nil for
    /// white, `count·3` normal floats or nil for none) to `path`, atomically.
    package static func write(path: String, points: UnsafeBufferPointer<Float>, colors: UnsafeBufferPointer<UInt8>?,
                             normals: UnsafeBufferPointer<Float>?, encoding: Encoding, comments: [String] = []) throws {
        let count = points.count / 3
        guard points.count == count * 3, colors.map({ $0.count == count * 3 }) ?? true,
              normals.map({ $0.count == count * 3 }) ?? true else {
            throw RGBDError(.invalidArgument, file: path, "points, colors and normals must hold 3 values per point")
        }
        try FileSystem.createDirectory(Path.directory(of: path))
        let files = StagedFiles()
        try files.stage(path) { fd, temporary in
            try write(count: count, normals: normals != nil, fd: fd, path: temporary, encoding: encoding,
                      comments: comments) { body in
                for i in 0..<count {
                    let p = SIMD3(points[3 * i], points[3 * i + 1], points[3 * i + 2])
                    let c = colors.map { SIMD3($0[3 * i], $0[3 * i + 1], $0[3 * i + 2]) } ?? SIMD3(255, 255, 255)
                    let n = normals.map { SIMD3($0[3 * i], $0[3 * i + 1], $0[3 * i + 2]) } ?? .zero
                    try body(PointCloud.Point(position: p, color: c, normal: n))
                }
            }
        }
        try files.commit()
    }
}

extension RectifiedCapture {
    /// Writes the capture's point cloud to `path` (atomically: temporary name, then
    /// rename) and returns the number of points.
    @discardableResult
    public func writeCloud(to path: String, options: PointCloudOptions = PointCloudOptions(),
                           encoding: PLYWriter.Encoding = .binaryLittleEndian, timings: StageTimings? = nil) throws -> Int {
        let cloud = timings.measure("average colors") { PointCloud(self, options: options) }
        return try cloud.write(to: path, source: source, encoding: encoding, timings: timings)
    }
}

extension PointCloud {
    /// Writes the cloud to `path` as PLY (atomically: temporary name, then rename), with
    /// header comments giving units, frame, intrinsics and `source`; returns the number
    /// of points. `note` (such as `PortraitDepth.relativeNote`) is one more comment.
    @discardableResult
    public func write(to path: String, source: String, encoding: PLYWriter.Encoding = .binaryLittleEndian,
                      note: String? = nil, timings: StageTimings? = nil) throws -> Int {
        try FileSystem.createDirectory(Path.directory(of: path))
        let k = intrinsics
        let frame = options.frame.kind != .camera
            ? options.frame.axesDescription + ", from the OpenCV camera frame by the transform below"
            : options.axes == .opencv
            ? "OpenCV camera frame (x right, y down, z forward)"
            : "OpenGL camera frame (x right, y up, z backward) = OpenCV (X, -Y, -Z)"
        var comments = [
            "generated by rgbd \(RGBDVersion.string)",
            "source \(source)",
            "units meters",
            "frame \(frame)",
            "intrinsics depth \(k.width)x\(k.height) fx \(k.fx) fy \(k.fy) cx \(k.cx) cy \(k.cy) (rectified pinhole)",
            "color averaged over each depth pixel's footprint in the rectified color image",
        ]
        comments += options.frame.comments
        if let note { comments.append(note) }
        var count = 0
        try timings.measure("write ply") {
            let files = StagedFiles()
            try files.stage(path) { fd, temporary in
                count = try PLYWriter.write(self, fd: fd, path: temporary, encoding: encoding, comments: comments)
            }
            try files.commit()
        }
        return count
    }
}

extension PLYWriter {
    /// Writes a triangle mesh to `path`, atomically: vertices with `x, y, z`, `red, green,
    /// blue`, `nx, ny, nz`, then the faces as lists of three vertex indices.
    public static func write(path: String, mesh: TriangleMesh, encoding: Encoding, comments: [String] = []) throws {
        guard mesh.positions.count == 3 * mesh.vertexCount, mesh.colors.count == mesh.positions.count,
              mesh.normals.count == mesh.positions.count, mesh.faces.count == 3 * mesh.faceCount,
              mesh.faces.allSatisfy({ Int($0) < mesh.vertexCount }) else {
            throw RGBDError(.invalidArgument, file: path, "a mesh needs 3 values per vertex for positions, colors and normals, and faces of existing vertices")
        }
        try FileSystem.createDirectory(Path.directory(of: path))
        let files = StagedFiles()
        try files.stage(path) { fd, temporary in
            try write(count: mesh.vertexCount, normals: true, fd: fd, path: temporary, encoding: encoding,
                      comments: comments, faces: mesh.faces) { body in
                for i in 0..<mesh.vertexCount {
                    let o = 3 * i
                    try body(PointCloud.Point(
                        position: SIMD3(mesh.positions[o], mesh.positions[o + 1], mesh.positions[o + 2]),
                        color: SIMD3(mesh.colors[o], mesh.colors[o + 1], mesh.colors[o + 2]),
                        normal: SIMD3(mesh.normals[o], mesh.normals[o + 1], mesh.normals[o + 2])))
                }
            }
        }
        try files.commit()
    }
}
