extension MeshTexturing {
    /// The most frames a scan's texture is taken from (spread evenly over the scan).
    package static let maxViews = 120

    /// Textures `mesh` (in `frame`'s axes, as `SceneFusion` placed it) from `scene`'s
    /// frames: their depth and cameras first (to choose and lay out), then the color of
    /// each frame used, one at a time (WORK IN PROGRESS, issue 38).
    package static func texture(_ mesh: TriangleMesh, scene: Scene, frame: WorldFrame, side: Int) throws -> TexturedMesh {
        guard scene.colorSize != nil else {
            throw RGBDError(.invalidArgument, file: scene.path, "the scan has no color to texture from")
        }
        let count = scene.frames.count
        let every = max(1, (count + maxViews - 1) / maxViews)
        let positions = FrameSelection(every: every).positions(count: count)
        var views: [TextureView] = []
        try scene.forEachFrame(positions, color: false) { f in
            views.append(TextureView(color: ColorImage(width: 0, height: 0, channels: 3, samples: []),
                                     colorIntrinsics: f.info.colorIntrinsics, depth: f.depth,
                                     depthIntrinsics: f.info.depthIntrinsics,
                                     pose: frame.transform.composed(with: f.info.pose)))
        }
        var layout = try Layout(mesh, views: views, side: side)
        let used = layout.usedViews.sorted()
        var n = 0
        try scene.forEachFrame(used.map { positions[$0] }, color: true) { f in
            if let color = f.color { layout.fill(view: used[n], color: color) }
            n += 1
        }
        layout.finish()
        return layout.result
    }
}
