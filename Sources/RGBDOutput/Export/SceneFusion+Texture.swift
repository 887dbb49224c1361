extension SceneFusion {
    /// The line a textured output's comments carry: how much was textured, from what.
    package static func textureNote(_ textured: TexturedMesh) -> String {
        let seen = textured.faceViews.filter { $0 >= 0 }
        let side = textured.atlases.first?.width ?? 0
        return "textured from \(Set(seen).count) frames: \(seen.count) of \(textured.faceViews.count) triangles, \(textured.coverage) of the area"
            + " (\(textured.splitTriangles) split so that a frame sees them whole; the rest their vertices' color),"
            + " \(textured.atlases.count) atlas\(textured.atlases.count == 1 ? "" : "es") of \(side) px at \(textured.scale) of the frames' pixels,"
            + " seams \(textured.seams.vertices) vertices, median difference \(textured.seams.before) -> \(textured.seams.after) levels"
    }

    /// Writes the fused surface textured (`MeshTexturing.texture(_:scene:frame:options:progress:)`)
    /// as glTF binary, OBJ with its .mtl and atlases, or the web page of that glTF, by
    /// `path`'s extension.
    /// - Throws: `RGBDError` when a file cannot be written.
    package func write(to path: String, textured: TexturedMesh) throws {
        let axes = YUpAxes(world: placement.world, frame: placement.frame)
        let lines = comments + [Self.textureNote(textured)]
        switch Path.pathExtension(path) {
        case "obj":
            try OBJWriter.write(path: path, textured: textured, axes: axes, comments: lines)
        case "html":
            let glb = try GLTFWriter.glb(textured: textured, axes: axes, comments: lines, path: path)
            try HTMLViewerWriter.write(path: path, glb: glb, axes: axes, cameraPath: cameraPath, title: Path.stem(path))
        default:
            try GLTFWriter.write(path: path, textured: textured, axes: axes, comments: lines)
        }
    }

    /// The texturing of a `path` output of a fusion of `scene`: `options` for a `.glb`,
    /// `.obj` or `.html` output of a scan with color; nil (vertex colors) for a `.ply`, for
    /// a depth-only scan, or without `options`.
    package static func texturing(forWriting path: String, scene: Scene, options: TexturingOptions?) -> TexturingOptions? {
        guard let options, scene.colorSize != nil, ["glb", "obj", "html"].contains(Path.pathExtension(path)) else { return nil }
        return options
    }

    /// Writes this fusion of `scene` (placed by `frame`) to `path`, as `rgbd fuse` does:
    /// textured (`MeshTexturing`) when `texturing(forWriting:scene:options:)` says so, the
    /// mesh first simplified within one voxel when the fusion was not simplified (the
    /// texture carries the detail), else vertex colors (`write(to:encoding:asPoints:)`).
    ///
    /// - Parameter progress: texturing's frames read so far and in all.
    /// - Returns: the textured mesh written, or nil for vertex colors.
    /// - Throws: `RGBDError` for options a format does not take, when a file cannot be
    ///   written or would replace one rgbd did not write (nothing is written then).
    @discardableResult
    package func write(to path: String, scene: Scene, frame: WorldFrame, texturing: TexturingOptions?,
                       encoding: PLYWriter.Encoding = .binaryLittleEndian, asPoints: Bool = false,
                       stage: ((String) -> Void)? = nil, progress: ((Int, Int) -> Void)? = nil) throws -> TexturedMesh? {
        guard let options = Self.texturing(forWriting: path, scene: scene, options: texturing), !asPoints, mesh.faceCount > 0 else {
            stage?("writing \(path)")
            try write(to: path, encoding: encoding, asPoints: asPoints)
            return nil
        }
        try Self.checkRequirements(forWriting: path, textured: true)
        let (fused, textured) = try self.textured(scene: scene, frame: frame, options: options, stage: stage, progress: progress)
        stage?("writing \(path)")
        try fused.write(to: path, textured: textured)
        return textured
    }

    /// This fusion of `scene` (placed by `frame`) textured from the scene's frames as a
    /// textured output has it: simplified within one voxel first when the fusion was not
    /// simplified, then `MeshTexturing.texture(_:scene:frame:options:progress:)`.
    /// - Returns: the fusion textured (its comments with the simplification) and the texture.
    /// - Throws: `RGBDError` for a scene without color or bad options.
    package func textured(scene: Scene, frame: WorldFrame, options: TexturingOptions,
                          stage: ((String) -> Void)? = nil,
                          progress: ((Int, Int) -> Void)? = nil) throws -> (fusion: SceneFusion, texture: TexturedMesh) {
        try options.validate()
        guard scene.colorSize != nil else {
            throw RGBDError(.invalidArgument, file: scene.path, "the scan has no color to texture from")
        }
        let fused = try simplifiedWithinVoxel { stage?($0.rawValue) }
        stage?("texturing")
        return (fused, try MeshTexturing.texture(fused.mesh, scene: scene, frame: frame, options: options, progress: progress))
    }
}
