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
}
