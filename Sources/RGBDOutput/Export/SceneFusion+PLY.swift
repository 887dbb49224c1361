extension SceneFusion {
    /// The extensions of the files a fused surface is written as: PLY, glTF binary, OBJ,
    /// and the web page that shows it.
    public static let fileExtensions = ["ply", "glb", "obj", "html"]

    /// Checks, before any fusion, what writing to `path` needs besides the file system:
    /// three.js for a `.html` page (`ThreeJSLibrary`); for a `textured` `.obj`, that the
    /// `.mtl` and images it writes beside itself replace no file rgbd did not write there
    /// (`OBJWriter.checkSideFiles(of:atlases:)`). Nothing for the other formats.
    /// - Throws: `RGBDError` saying what to install when it is missing, or naming the file
    ///   that would be replaced.
    public static func checkRequirements(forWriting path: String, textured: Bool = false) throws {
        switch Path.pathExtension(path) {
        case "html": _ = try ThreeJSLibrary.locate()
        case "obj" where textured: try OBJWriter.checkSideFiles(of: path)
        default: break
        }
    }

    /// Writes the fused surface to `path` in the format its extension names: `.glb` glTF
    /// 2.0 binary (`GLTFWriter`), `.obj` OBJ with vertex colors (`OBJWriter`), `.html` a
    /// self-contained web page showing that glTF and the camera path (`HTMLViewerWriter`,
    /// three.js found at run time), all in glTF's axes (`YUpAxes` of `placement`), else
    /// PLY in rgbd's world with its header comments (`comments`): the triangle mesh, or
    /// with `asPoints` its vertices alone as a point cloud (with colors and normals; PLY
    /// only). Atomic: temporary names, then renames.
    /// - Throws: `RGBDError` when a file cannot be written, for `asPoints` with another
    ///   format than PLY, or for a page when three.js cannot be found (nothing written).
    public func write(to path: String, encoding: PLYWriter.Encoding = .binaryLittleEndian, asPoints: Bool = false) throws {
        let format = Path.pathExtension(path)
        if format == "glb" || format == "obj" || format == "html" {
            guard !asPoints else {
                throw RGBDError(.invalidArgument, file: path, "a surface's vertices alone are written as PLY only (nothing was written)")
            }
            let axes = YUpAxes(world: placement.world, frame: placement.frame)
            switch format {
            case "glb": return try GLTFWriter.write(path: path, mesh: mesh, axes: axes, comments: comments)
            case "obj": return try OBJWriter.write(path: path, mesh: mesh, axes: axes, comments: comments)
            default:
                return try HTMLViewerWriter.write(path: path, mesh: mesh, axes: axes, comments: comments,
                                                  cameraPath: cameraPath, title: Path.stem(path))
            }
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
