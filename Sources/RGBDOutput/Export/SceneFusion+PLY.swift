extension SceneFusion {
    /// Writes the fused surface to `path` as PLY with its header comments (`comments`):
    /// the triangle mesh, or with `asPoints` its vertices alone as a point cloud (with
    /// colors and normals). Atomic: a temporary name, then a rename.
    public func write(to path: String, encoding: PLYWriter.Encoding = .binaryLittleEndian, asPoints: Bool = false) throws {
        guard asPoints else {
            return try PLYWriter.write(path: path, mesh: mesh, encoding: encoding, comments: comments)
        }
        try mesh.positions.withUnsafeBufferPointer { points in
            try mesh.colors.withUnsafeBufferPointer { colors in
                try mesh.normals.withUnsafeBufferPointer { normals in
                    try PLYWriter.write(path: path, points: points, colors: colors, normals: normals,
                                        encoding: encoding, comments: comments)
                }
            }
        }
    }
}
