/// Renders a depth map's point cloud from a virtual camera: every depth pixel with depth
/// is back-projected (as `PointCloud` does, edges kept), turned about a pivot on the
/// optical axis, projected with a perspective camera fitted to the panel, and splatted as
/// a small square through a depth buffer (the nearest point wins). Flying-pixel
/// candidates, the points `rgbd cloud` drops as on a depth discontinuity, are drawn in
/// `PreviewSheet.flyingPixelColor`.
struct CloudRenderer {
    /// Camera-frame points (OpenCV frame), meters.
    let points: [SIMD3<Float>]
    /// Packed RGB of each point (`0x00RRGGBB`), or the flying-pixel color.
    let colors: [UInt32]
    /// How many of the points are flying-pixel candidates.
    let flying: Int
    /// Depth of the pivot the views turn about (on the optical axis).
    let pivotDepth: Float
    /// Side of a point's square in a panel as wide as the depth map (scaled with the panel).
    let depthWidth: Int

    /// One rendered view.
    struct View {
        var image: ColorImage
        /// Points drawn (all points with depth).
        var points: Int
        /// Flying-pixel candidates among them.
        var flying: Int
    }

    /// The cloud of `depth` (intrinsics `intrinsics`), colored by `colors` (the rectified
    /// color at any size: each point takes the pixel under its depth pixel's center).
    init(depth: DepthMap, intrinsics: Intrinsics, colors: ColorImage, flyingPixelStep: Float, pivotDepth: Float) {
        var options = PointCloudOptions()
        options.edgeThreshold = flyingPixelStep
        let kept = PointCloud.selection(depth, options: options)
        let fx = Float(intrinsics.fx), fy = Float(intrinsics.fy), cx = Float(intrinsics.cx), cy = Float(intrinsics.cy)
        var points: [SIMD3<Float>] = []
        var packed: [UInt32] = []
        points.reserveCapacity(depth.width * depth.height)
        packed.reserveCapacity(depth.width * depth.height)
        var flying = 0
        let magenta = UInt32(PreviewSheet.flyingPixelColor.0) << 16 | UInt32(PreviewSheet.flyingPixelColor.1) << 8
            | UInt32(PreviewSheet.flyingPixelColor.2)
        for v in 0..<depth.height {
            let cy0 = min(colors.height - 1, (2 * v + 1) * colors.height / (2 * depth.height))
            for u in 0..<depth.width {
                let z = depth.samples[v * depth.width + u]
                guard z.isFinite, z > 0 else { continue }
                points.append(SIMD3((Float(u) - cx) * z / fx, (Float(v) - cy) * z / fy, z))
                if kept[v * depth.width + u] {
                    let cx0 = min(colors.width - 1, (2 * u + 1) * colors.width / (2 * depth.width))
                    packed.append(UInt32(colors[cx0, cy0, 0]) << 16 | UInt32(colors[cx0, cy0, 1]) << 8
                                  | UInt32(colors[cx0, cy0, 2]))
                } else {
                    packed.append(magenta)
                    flying += 1
                }
            }
        }
        self.points = points
        self.colors = packed
        self.flying = flying
        self.pivotDepth = pivotDepth
        self.depthWidth = depth.width
    }

    /// Points already in the frame to render (a scene's merged cloud in its world), with
    /// their packed colors (`0x00RRGGBB`), for `render(width:height:plan:side:)`; none is
    /// a flying-pixel candidate.
    init(points: [SIMD3<Float>], colors: [UInt32]) {
        precondition(points.count == colors.count, "a color per point")
        self.points = points
        self.colors = colors
        flying = 0
        pivotDepth = 1
        depthWidth = 1
    }

    /// An orthographic view: the panel pixel of a point `p` is
    /// `plan.pixel(p)` (`plan.right`/`plan.down` at `plan.scale` pixels per meter), and
    /// where points overlap the one farthest along `plan.toward` (nearest the viewer)
    /// wins. Each point is a square of `side` pixels.
    func render(width: Int, height: Int, plan: OrthographicView, side: Int) -> View {
        let right = SIMD3<Float>(plan.right), down = SIMD3<Float>(plan.down), toward = SIMD3<Float>(plan.toward)
        let scale = Float(plan.scale), offset = SIMD2<Float>(plan.offset)
        let image = splat(width: width, height: height, side: max(1, side)) { p in
            // Depth buffer keeps the smallest value: the negated height toward the viewer.
            (scale * (right * p).sum() + offset.x, scale * (down * p).sum() + offset.y, -(toward * p).sum())
        }
        return View(image: image, points: points.count, flying: flying)
    }

    /// The cloud turned by `yawDegrees` about the vertical axis through the pivot (positive:
    /// the camera moves to the right) and `pitchDegrees` about the horizontal one
    /// (positive: the camera moves up), seen by a camera that frames all points in a
    /// `width × height` panel; pulled back from the pivot when turned.
    func render(width: Int, height: Int, yawDegrees: Float, pitchDegrees: Float) -> View {
        let yaw = Double(yawDegrees) * .pi / 180, pitch = Double(pitchDegrees) * .pi / 180
        let cy = Float(Trigonometry.cosine(yaw)), sy = Float(Trigonometry.sine(yaw))
        let cp = Float(Trigonometry.cosine(pitch)), sp = Float(Trigonometry.sine(pitch))
        let turned = yawDegrees != 0 || pitchDegrees != 0
        let pivot = SIMD3<Float>(0, 0, pivotDepth)
        // Camera pulled back along its axis when turned, so that the near side stays in front.
        let back: Float = turned ? 0.6 * pivotDepth : 0
        @inline(__always) func view(_ p: SIMD3<Float>) -> SIMD3<Float> {
            let q = p - pivot
            // Yaw about y, then pitch about x (a camera above looks down: y up is −y).
            let x1 = cy * q.x - sy * q.z, z1 = sy * q.x + cy * q.z
            let y2 = cp * q.y + sp * z1, z2 = -sp * q.y + cp * z1
            return SIMD3(x1, y2, z2 + pivotDepth + back)
        }
        var background = ColorImage(width: width, height: height, channels: 3, repeating: 0)
        let (br, bg, bb) = PreviewSheet.background
        for i in 0..<(width * height) {
            background.samples[3 * i] = br; background.samples[3 * i + 1] = bg; background.samples[3 * i + 2] = bb
        }
        let near: Float = 0.05
        // Fit: the extent of x/z and y/z over the points in front of the camera.
        var lo = SIMD2<Float>(.infinity, .infinity), hi = SIMD2<Float>(-.infinity, -.infinity)
        // (Every 5th point is enough to frame the cloud.)
        for p in Swift.stride(from: 0, to: points.count, by: 5).lazy.map({ points[$0] }) {
            let q = view(p)
            guard q.z > near else { continue }
            let r = SIMD2(q.x / q.z, q.y / q.z)
            lo = pointwiseMin(lo, r)
            hi = pointwiseMax(hi, r)
        }
        guard lo.x < hi.x, lo.y < hi.y else { return View(image: background, points: points.count, flying: flying) }
        let fill: Float = 0.94
        let f = min(fill * Float(width) / (hi.x - lo.x), fill * Float(height) / (hi.y - lo.y))
        let ox = Float(width) / 2 - f * (lo.x + hi.x) / 2, oy = Float(height) / 2 - f * (lo.y + hi.y) / 2
        // A point covers about a depth pixel at the pivot's distance, at least 2 panel pixels.
        let side = max(2, Int((1.25 * Float(width) / Float(max(1, depthWidth))).rounded(.up)))
        let image = splat(width: width, height: height, side: side) { p in
            let q = view(p)
            guard q.z > near else { return nil }
            return (f * q.x / q.z + ox, f * q.y / q.z + oy, q.z)
        }
        return View(image: image, points: points.count, flying: flying)
    }

    /// Every point at the panel position `project` gives it (x, y, and a depth: the
    /// smallest wins), as a `side × side` square centred there, over the sheet's background.
    private func splat(width: Int, height: Int, side: Int,
                       project: (SIMD3<Float>) -> (x: Float, y: Float, depth: Float)?) -> ColorImage {
        let (br, bg, bb) = PreviewSheet.background
        var zbuffer = [Float](repeating: .infinity, count: width * height)
        var pixels = [UInt32](repeating: UInt32(br) << 16 | UInt32(bg) << 8 | UInt32(bb), count: width * height)
        zbuffer.withUnsafeMutableBufferPointer { zb in
            pixels.withUnsafeMutableBufferPointer { px in
                for (i, p) in points.enumerated() {
                    guard let q = project(p), q.x.isFinite, q.y.isFinite,
                          abs(q.x) < 1e7, abs(q.y) < 1e7 else { continue }
                    let x = Int(q.x.rounded(.down)) - side / 2
                    let y = Int(q.y.rounded(.down)) - side / 2
                    guard x + side > 0, y + side > 0, x < width, y < height else { continue }
                    let color = colors[i]
                    for yy in max(0, y)..<min(height, y + side) {
                        let row = yy * width
                        for xx in max(0, x)..<min(width, x + side) where q.depth < zb[row + xx] {
                            zb[row + xx] = q.depth
                            px[row + xx] = color
                        }
                    }
                }
            }
        }
        var image = ColorImage(width: width, height: height, channels: 3, repeating: 0)
        for i in 0..<(width * height) {
            let c = pixels[i]
            image.samples[3 * i] = UInt8(truncatingIfNeeded: c >> 16)
            image.samples[3 * i + 1] = UInt8(truncatingIfNeeded: c >> 8)
            image.samples[3 * i + 2] = UInt8(truncatingIfNeeded: c)
        }
        return image
    }
}

/// An orthographic view of world points onto a panel: a point `p` is drawn at
/// `(scale·(right·p) + offset.x, scale·(down·p) + offset.y)` panel pixels; `toward` points
/// from the scene to the viewer (`right × down` would be away from it).
struct OrthographicView {
    /// The world direction drawn to the right, unit length.
    var right: SIMD3<Double>
    /// The world direction drawn downward, unit length.
    var down: SIMD3<Double>
    /// Pixels per meter.
    var scale: Double
    /// Panel position of the world origin, pixels.
    var offset: SIMD2<Double>

    /// The world direction toward the viewer: `down × right`.
    var toward: SIMD3<Double> {
        SIMD3(down.y * right.z - down.z * right.y, down.z * right.x - down.x * right.z, down.x * right.y - down.y * right.x)
    }

    /// The panel position of world point `p`, pixels.
    func pixel(_ p: SIMD3<Double>) -> SIMD2<Double> {
        SIMD2(scale * (right * p).sum() + offset.x, scale * (down * p).sum() + offset.y)
    }
}
