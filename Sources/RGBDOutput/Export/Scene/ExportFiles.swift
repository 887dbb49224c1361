/// Small pieces the scene layouts' writers share: names, numbers, the seed cloud file.
enum ExportFiles {
    /// `value` in decimal, zero-padded to `digits`.
    static func padded(_ value: Int, _ digits: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// A number in the shortest text that reads back exactly.
    static func number(_ v: Double) -> String { JSONText.number(v) }

    /// A pose's 4×4 matrix as JSON rows.
    static func rows(_ pose: Pose) -> JSONValue {
        .array((0..<4).map { r in .array((0..<4).map { c in .number(pose.matrix[4 * r + c]) }) })
    }

    /// A pose's 4×4 matrix as four text lines of four numbers.
    static func matrixLines(_ pose: Pose) -> String {
        (0..<4).map { r in (0..<4).map { c in number(pose.matrix[4 * r + c]) }.joined(separator: " ") }
            .joined(separator: "\n") + "\n"
    }

    /// Writes the seed cloud as binary PLY at `path`, its points moved by `transformed`
    /// (the layout's world), white when the scan has no color, with zero normals when
    /// `normals` (the properties Gaussian splatting trainers read).
    static func writeCloud(_ cloud: SceneCloud, transformed: Pose, colored: Bool, normals: Bool, to path: String,
                           scene: Scene) throws {
        var points = cloud.positions
        if transformed != .identity {
            for i in 0..<cloud.count {
                let p = transformed.apply(SIMD3(Double(points[3 * i]), Double(points[3 * i + 1]), Double(points[3 * i + 2])))
                points[3 * i] = Float(p.x)
                points[3 * i + 1] = Float(p.y)
                points[3 * i + 2] = Float(p.z)
            }
        }
        let zeros = normals ? [Float](repeating: 0, count: points.count) : []
        let comments = ["rgbd \(RGBDVersion.string): seed cloud of \(scene.path), meters, in the exported poses' world",
                        "one point per occupied cell of the scan's merged depth (high confidence)"]
            + (normals ? ["normals not estimated (zero), as Gaussian splatting trainers write them"] : [])
        try points.withUnsafeBufferPointer { p in
            try cloud.colors.withUnsafeBufferPointer { c in
                try zeros.withUnsafeBufferPointer { n in
                    try PLYWriter.write(path: path, points: p, colors: colored ? c : nil, normals: normals ? n : nil,
                                        encoding: .binaryLittleEndian, comments: comments)
                }
            }
        }
    }
}
