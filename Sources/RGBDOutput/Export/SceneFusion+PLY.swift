extension SceneFusion {
    /// The extensions of the files a fused surface is written as: PLY, glTF binary, OBJ.
    public static let fileExtensions = ["ply", "glb", "obj"]

    /// Writes the fused surface to `path` in the format its extension names: `.glb` glTF
    /// 2.0 binary (`GLTFWriter`), `.obj` OBJ with vertex colors (`OBJWriter`), both in
    /// glTF's axes (`YUpAxes` of `placement`), else PLY in rgbd's world with its header
    /// comments (`comments`): the triangle mesh, or with `asPoints` its vertices alone as a
    /// point cloud (with colors and normals; PLY only). Atomic: temporary names, then renames.
    /// - Throws: `RGBDError` when a file cannot be written, or for `asPoints` with glTF or OBJ.
    public func write(to path: String, encoding: PLYWriter.Encoding = .binaryLittleEndian, asPoints: Bool = false) throws {
        let format = Path.pathExtension(path)
        if format == "glb" || format == "obj" {
            guard !asPoints else {
                throw RGBDError(.invalidArgument, file: path, "a surface's vertices alone are written as PLY only (nothing was written)")
            }
            let axes = YUpAxes(world: placement.world, frame: placement.frame)
            return format == "glb" ? try GLTFWriter.write(path: path, mesh: mesh, axes: axes, comments: comments)
                : try OBJWriter.write(path: path, mesh: mesh, axes: axes, comments: comments)
        }
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
