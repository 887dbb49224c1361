extension SceneFusion {
    /// Writes the fused surface as glTF binary (or OBJ with its .mtl and .png, by `path`'s
    /// extension) with a base-color texture from `scene`'s
    /// frames (`MeshTexturing`, an atlas of `side` pixels; `frame`: where the fusion placed
    /// the scene). WORK IN PROGRESS (issue 38): no per-frame gains, one atlas.
    package func writeTextured(to path: String, scene: Scene, frame: WorldFrame, side: Int) throws {
        let textured = try MeshTexturing.texture(mesh, scene: scene, frame: frame, side: side)
        let seen = textured.faceViews.filter { $0 >= 0 }.count
        let note = "textured from \(Set(textured.faceViews.filter { $0 >= 0 }).count) frames: \(seen) of \(textured.faceViews.count) triangles (the rest their vertices' color), atlas \(side) px at \(textured.scale) of the frames' pixels"
        let axes = YUpAxes(world: placement.world, frame: placement.frame)
        if Path.pathExtension(path) == "obj" {
            try OBJWriter.write(path: path, textured: textured, axes: axes, comments: comments + [note])
        } else {
            try GLTFWriter.write(path: path, textured: textured, axes: axes, comments: comments + [note])
        }
    }
}
