#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension MeshTexturing {
    /// The most frames a scan's texture is taken from (spread evenly over the scan).
    package static let maxViews = 120

    /// Textures `mesh` (in `frame`'s axes, as `SceneFusion` placed it) from `scene`'s
    /// frames (at most `maxViews`, spread evenly; as the scene gives them: rectified where
    /// the scan has lens tables): their depth and cameras first (to choose and lay out), then
    /// the color of each frame used, one at a time. `progress` is called with the frames
    /// read and the frames to read (both passes).
    /// - Throws: `RGBDError` for a scan without color, options out of range, atlases beyond
    ///   the memory budget (before any color is read), or a frame that cannot be read.
    package static func texture(_ mesh: TriangleMesh, scene: Scene, frame: WorldFrame, options: TexturingOptions,
                                progress: ((Int, Int) -> Void)? = nil) throws -> TexturedMesh {
        try options.validate()
        guard scene.colorSize != nil else {
            throw RGBDError(.invalidArgument, file: scene.path, "the scan has no color to texture from")
        }
        let count = scene.frames.count
        let every = max(1, (count + maxViews - 1) / maxViews)
        let positions = FrameSelection(every: every).positions(count: count)
        var views: [TextureView] = []
        var done = 0
        try scene.forEachFrame(positions, color: false) { f in
            let median = medianDepth(f.depth)
            views.append(TextureView(color: ColorImage(width: 0, height: 0, channels: 3, samples: []),
                                     colorIntrinsics: f.info.colorIntrinsics, depth: f.depth,
                                     depthIntrinsics: f.info.depthIntrinsics,
                                     pose: frame.transform.composed(with: f.info.pose),
                                     sharpness: sharpness(scene, position: positions[views.count], depth: median)))
            done += 1
            progress?(done, 2 * positions.count)
        }
        var layout = try Layout(mesh, views: views, options: options)
        let used = layout.usedViews.sorted()
        let total = positions.count + used.count
        var n = 0
        try scene.forEachFrame(used.map { positions[$0] }, color: true) { f in
            if let color = f.color { layout.fill(view: used[n], color: color) }
            n += 1
            progress?(positions.count + n, total)
        }
        layout.finish()
        return layout.result
    }

    /// The median of a depth map's valid depths (every 4th pixel's: the sharpness estimate
    /// needs no more), meters; 1 when it has none.
    static func medianDepth(_ depth: DepthMap) -> Double {
        var values: [Float] = []
        values.reserveCapacity(depth.samples.count / 4 + 1)
        for i in stride(from: 0, to: depth.samples.count, by: 4) {
            let z = depth.samples[i]
            if z.isFinite && z > 0 { values.append(z) }
        }
        guard !values.isEmpty else { return 1 }
        values.sort()
        return Double(values[values.count / 2])
    }

    /// A frame's expected sharpness from the camera's motion around it: the image motion
    /// (pixels per 1/60 s, of a point at the frame's median depth `depth`, from its
    /// neighbours' poses and times) mapped to 1 / (1 + motion / 4 pixels); 1 when the
    /// scan has no times (still captures).
    static func sharpness(_ scene: Scene, position: Int, depth: Double) -> Double {
        let frames = scene.frames
        guard frames.indices.contains(position), let time = frames[position].time else { return 1 }
        var motion = 0.0
        for other in [position - 1, position + 1] where frames.indices.contains(other) {
            guard let otherTime = frames[other].time, abs(otherTime - time) > 1e-4 else { continue }
            let a = frames[position].pose, b = frames[other].pose
            let relative = a.inverse.composed(with: b)
            // The rotation angle, and the translation seen at the depth.
            let w = relative.rotationVector
            let angle = (w * w).sum().squareRoot()
            let t = relative.translation
            let pixels = frames[position].colorIntrinsics.fx * (angle + (t * t).sum().squareRoot() / max(depth, 0.1))
            motion = max(motion, pixels / abs(otherTime - time) / 60)
        }
        return 1 / (1 + motion / 4)
    }
}
