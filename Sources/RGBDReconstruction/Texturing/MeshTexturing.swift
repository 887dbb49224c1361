#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A frame as texturing sees it: its color, its depth (what it saw: visibility) and both
/// cameras, placed in the mesh's world.
package struct TextureView: Sendable {
    /// The color image (RGB).
    package var color: ColorImage
    /// The color camera, at the color image's size (rgbd's convention: integer pixel
    /// coordinates are pixel centres).
    package var colorIntrinsics: Intrinsics
    /// The depth map (meters along the optical axis, NaN where none).
    package var depth: DepthMap
    /// The depth camera, at the depth map's size (the same optical centre and axes).
    package var depthIntrinsics: Intrinsics
    /// Camera-to-world (OpenCV camera axes), in the mesh's world.
    package var pose: Pose

    /// A view from its parts.
    package init(color: ColorImage, colorIntrinsics: Intrinsics, depth: DepthMap, depthIntrinsics: Intrinsics, pose: Pose) {
        self.color = color
        self.colorIntrinsics = colorIntrinsics
        self.depth = depth
        self.depthIntrinsics = depthIntrinsics
        self.pose = pose
    }
}

/// A mesh with a base-color texture atlas: vertices split where charts meet (each keeps
/// its position and normal, with the texture coordinate of its chart).
package struct TexturedMesh: Sendable {
    /// Positions, meters (3 per vertex).
    package var positions: [Float] = []
    /// Unit normals (3 per vertex).
    package var normals: [Float] = []
    /// Texture coordinates (2 per vertex), glTF's: (0, 0) the atlas's top-left corner,
    /// (1, 1) its bottom-right one.
    package var uvs: [Float] = []
    /// Triangles (3 vertex numbers each), as the mesh's.
    package var faces: [UInt32] = []
    /// The atlas (RGB, square).
    package var atlas = ColorImage(width: 1, height: 1, channels: 3, repeating: 0)
    /// Per triangle of the input mesh, the view its color comes from (−1: none saw it;
    /// then its vertices' colors).
    package var faceViews: [Int32] = []
    /// The scale of the atlas against the views' pixels (1: a view's pixels copied as they are).
    package var scale: Double = 1
    /// The color gain applied to each view's pixels (per channel), from the overlaps.
    package var gains: [Int: SIMD3<Double>] = [:]
}

/// Texturing (issue 38, WORK IN PROGRESS: no per-frame color gains, no seam leveling, no
/// smoothing of the choice between neighbours, one atlas; not yet used by `rgbd fuse`).
///
/// Each triangle takes its color from one view: among those that see it, the one where it
/// covers the most pixels (which favours near and head-on views). A view sees a triangle
/// when its three corners project inside the color image, its front faces the camera at
/// less than 78°, and the view's own depth agrees with its distance (within 2 %, at least
/// 2 cm) at its centre and near its corners, each over 3×3 depth pixels: a triangle behind
/// something in that view, or beside an occluding edge, is never colored from it.
/// Neighbouring triangles of one view form a chart; its rectangle of the view's image
/// (with a 2-pixel margin, so that the borders are bled with the view's own pixels) is
/// packed into the atlas by shelves, all at one scale, the largest that fits.
package enum MeshTexturing {
    /// Chooses a view per triangle (−1: none sees it).
    package static func chooseViews(_ mesh: TriangleMesh, views: [TextureView]) -> [Int32] {
        var best = [Int32](repeating: -1, count: mesh.faceCount)
        var bestArea = [Double](repeating: 0, count: mesh.faceCount)
        for (v, view) in views.enumerated() {
            let toCamera = view.pose.inverse
            let centre = view.pose.translation
            for t in 0..<mesh.faceCount {
                let (a, b, c) = corners(mesh, t)
                let n = cross(b - a, c - a)
                let length = (n * n).sum().squareRoot()
                guard length > 0 else { continue }
                let m = (a + b + c) / 3
                let toEye = centre - m
                let distance = (toEye * toEye).sum().squareRoot()
                guard (n * toEye).sum() > 0.2 * length * distance else { continue }
                guard let pa = project(toCamera.apply(a), view.colorIntrinsics),
                      let pb = project(toCamera.apply(b), view.colorIntrinsics),
                      let pc = project(toCamera.apply(c), view.colorIntrinsics) else { continue }
                let area = abs((pb.x - pa.x) * (pc.y - pa.y) - (pc.x - pa.x) * (pb.y - pa.y)) / 2
                guard area > bestArea[t], isVisible(toCamera.apply(m), in: view),
                      [a, b, c].allSatisfy({ isVisible(toCamera.apply(m + ($0 - m) * 0.9), in: view) }) else { continue }
                best[t] = Int32(v)
                bestArea[t] = area
            }
        }
        return best
    }

    /// Whether a camera-frame point is what the view's depth saw there: the depth pixel
    /// it falls in and its 8 neighbours all within 2 % (at least 2 cm) of its distance,
    /// so that a point beside an occluding edge (a pixel of the edge mixing both) is not.
    static func isVisible(_ p: SIMD3<Double>, in view: TextureView) -> Bool {
        let k = view.depthIntrinsics
        guard p.z > 0 else { return false }
        let u = Int((k.fx * p.x / p.z + k.cx).rounded()), v = Int((k.fy * p.y / p.z + k.cy).rounded())
        guard u >= 1, v >= 1, u < view.depth.width - 1, v < view.depth.height - 1 else { return false }
        let tolerance = max(0.02, 0.02 * p.z)
        for dv in -1...1 {
            for du in -1...1 {
                let z = Double(view.depth[u + du, v + dv])
                guard z.isFinite, abs(z - p.z) < tolerance else { return false }
            }
        }
        return true
    }

    /// A camera-frame point's pixel in `k`, when it is in front and inside the image.
    static func project(_ p: SIMD3<Double>, _ k: Intrinsics) -> SIMD2<Double>? {
        guard p.z > 1e-6 else { return nil }
        let x = k.fx * p.x / p.z + k.cx, y = k.fy * p.y / p.z + k.cy
        guard x >= 0, y >= 0, x <= Double(k.width - 1), y <= Double(k.height - 1) else { return nil }
        return SIMD2(x, y)
    }

    static func corners(_ mesh: TriangleMesh, _ t: Int) -> (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>) {
        func p(_ k: Int) -> SIMD3<Double> {
            let i = Int(mesh.faces[3 * t + k])
            return SIMD3(Double(mesh.positions[3 * i]), Double(mesh.positions[3 * i + 1]), Double(mesh.positions[3 * i + 2]))
        }
        return (p(0), p(1), p(2))
    }

    static func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
    }

    /// The charts: groups of triangles of one view joined by shared edges (a triangle of
    /// no view is a chart of its own).
    static func charts(_ mesh: TriangleMesh, faceViews: [Int32]) -> [[Int]] {
        var parent = Array(0..<mesh.faceCount)
        func root(_ i: Int) -> Int {
            var i = i
            while parent[i] != i { parent[i] = parent[parent[i]]; i = parent[i] }
            return i
        }
        var firstFace: [UInt64: Int] = [:]
        for t in 0..<mesh.faceCount where faceViews[t] >= 0 {
            for k in 0..<3 {
                let a = UInt64(mesh.faces[3 * t + k]), b = UInt64(mesh.faces[3 * t + (k + 1) % 3])
                let key = min(a, b) << 32 | max(a, b)
                if let other = firstFace[key] {
                    if faceViews[other] == faceViews[t] { parent[root(other)] = root(t) }
                } else {
                    firstFace[key] = t
                }
            }
        }
        var index: [Int: Int] = [:], result: [[Int]] = []
        for t in 0..<mesh.faceCount {
            let r = root(t)
            if let i = index[r] { result[i].append(t) } else { index[r] = result.count; result.append([t]) }
        }
        return result
    }

    /// A chart's place: its rectangle in its view (pixels, margin included) and in the atlas.
    struct Placement {
        var view: Int
        var sourceOrigin: SIMD2<Double>
        var sourceSize: SIMD2<Double>
        var atlasOrigin = SIMD2<Int>(0, 0)
        var atlasSize = SIMD2<Int>(0, 0)
    }

    /// Shelf packing of rectangles (sizes in atlas pixels) into a square of `side`: their
    /// origins, or nil when they do not fit.
    static func pack(_ sizes: [SIMD2<Int>], side: Int) -> [SIMD2<Int>]? {
        let order = sizes.indices.sorted { sizes[$0].y > sizes[$1].y || (sizes[$0].y == sizes[$1].y && $0 < $1) }
        var origins = [SIMD2<Int>](repeating: .zero, count: sizes.count)
        var x = 0, y = 0, shelf = 0
        for i in order {
            let s = sizes[i]
            guard s.x <= side else { return nil }
            if x + s.x > side { y += shelf; x = 0; shelf = 0 }
            guard y + s.y <= side else { return nil }
            origins[i] = SIMD2(x, y)
            x += s.x
            shelf = max(shelf, s.y)
        }
        return origins
    }

    /// Textures `mesh` from `views` (in memory) into one atlas of `side` × `side` pixels.
    /// - Throws: `RGBDError` when the atlas side is outside 64…16 384 or the charts cannot
    ///   be packed at any scale.
    package static func texture(_ mesh: TriangleMesh, views: [TextureView], side: Int = 4096) throws -> TexturedMesh {
        var layout = try Layout(mesh, views: views, side: side)
        for v in views.indices { layout.fill(view: v, color: views[v].color) }
        layout.finish()
        return layout.result
    }

    /// A texture laid out (views chosen, charts packed, texture coordinates made) before
    /// its pixels: the views' colors are filled in one at a time (`fill`), so that a scan's
    /// frames can be read one after the other.
    package struct Layout {
        /// The textured mesh; its atlas is filled by `fill`.
        package var result = TexturedMesh()
        /// The charts (triangle numbers) and their places.
        var charts: [[Int]]
        var placements: [Placement]
        /// The views used (those some chart takes its color from).
        package var usedViews: Set<Int> { Set(placements.map(\.view).filter { $0 >= 0 }) }
        /// Per view, the sample triangles it sees and where their centres are in its image.
        var samplesOfView: [[(sample: Int32, pixel: SIMD2<Double>)]] = []
        /// The colors the filled views gave the sample triangles.
        var observations: [(sample: Int32, view: Int32, color: SIMD3<Float>)] = []

        /// Lays out the texture of `mesh` from `views` (their colors are not read).
        package init(_ mesh: TriangleMesh, views: [TextureView], side: Int) throws {
            guard side >= 64, side <= 16_384 else {
                throw RGBDError(.invalidArgument, "the texture atlas must be 64 to 16384 pixels wide (\(side))")
            }
            let faceViews = chooseViews(mesh, views: views)
            charts = MeshTexturing.charts(mesh, faceViews: faceViews)
            // Sample triangles (up to 20 000) for the views' color gains: where each view sees them.
            samplesOfView = [[(sample: Int32, pixel: SIMD2<Double>)]](repeating: [], count: views.count)
            let step = max(1, mesh.faceCount / 20_000)
            for (v, view) in views.enumerated() {
                let toCamera = view.pose.inverse
                for (s, t) in stride(from: 0, to: mesh.faceCount, by: step).enumerated() {
                    let (a, b, c) = corners(mesh, t)
                    let n = cross(b - a, c - a), m = (a + b + c) / 3
                    let toEye = view.pose.translation - m
                    let length = (n * n).sum().squareRoot(), distance = (toEye * toEye).sum().squareRoot()
                    guard length > 0, (n * toEye).sum() > 0.2 * length * distance,
                          let pixel = project(toCamera.apply(m), view.colorIntrinsics),
                          isVisible(toCamera.apply(m), in: view) else { continue }
                    samplesOfView[v].append((Int32(s), pixel))
                }
            }
            let margin = 2.0
            // Each chart's rectangle in its view (a face of no view: a 4-pixel cell of its color).
            placements = []
            for chart in charts {
                let v = Int(faceViews[chart[0]])
                guard v >= 0 else {
                    placements.append(Placement(view: -1, sourceOrigin: .zero, sourceSize: SIMD2(4, 4)))
                    continue
                }
                let toCamera = views[v].pose.inverse
                let k = views[v].colorIntrinsics
                var lo = SIMD2<Double>(repeating: .infinity), hi = SIMD2<Double>(repeating: -.infinity)
                for t in chart {
                    let (a, b, c) = corners(mesh, t)
                    for p in [a, b, c] {
                        let q = toCamera.apply(p)
                        let pixel = SIMD2(k.fx * q.x / q.z + k.cx, k.fy * q.y / q.z + k.cy)
                        lo = pointwiseMin(lo, pixel); hi = pointwiseMax(hi, pixel)
                    }
                }
                placements.append(Placement(view: v, sourceOrigin: lo - margin, sourceSize: hi - lo + 2 * margin))
            }
            // The smallest square (a power of two, 64 up to `side`) that holds every rectangle
            // at the frames' resolution; else `side` at the largest scale at which they fit.
            var scale = 1.0, packed = false, side = side
            var candidates: [Int] = []
            var trial = 64
            while trial < side { candidates.append(trial); trial *= 2 }
            candidates.append(side)
            for (n, candidate) in candidates.enumerated() {
                let last = n == candidates.count - 1
                for _ in 0..<(last ? 40 : 1) {
                    let sizes = placements.map { p in
                        p.view < 0 ? SIMD2(4, 4)
                            : SIMD2(Int((p.sourceSize.x * scale).rounded(.up)) + 1, Int((p.sourceSize.y * scale).rounded(.up)) + 1)
                    }
                    if let origins = pack(sizes, side: candidate) {
                        for i in placements.indices { placements[i].atlasOrigin = origins[i]; placements[i].atlasSize = sizes[i] }
                        packed = true
                        side = candidate
                        break
                    }
                    if last { scale *= 0.85 }
                }
                if packed { break }
            }
            guard packed else {
                throw RGBDError(.invalidArgument, "the texture's \(charts.count) charts do not fit an atlas of \(side) pixels")
            }
            result.faceViews = faceViews
            result.scale = scale
            result.atlas = ColorImage(width: side, height: side, channels: 3, repeating: 0)
            // Vertices per chart, with their atlas coordinates.
            var vertexOfChart: [UInt64: UInt32] = [:]
            result.faces = [UInt32](repeating: 0, count: mesh.faces.count)
            for (c, chart) in charts.enumerated() {
                let p = placements[c]
                for t in chart {
                    for k in 0..<3 {
                        let i = mesh.faces[3 * t + k]
                        let key = UInt64(c) << 32 | UInt64(i)
                        if let existing = vertexOfChart[key] { result.faces[3 * t + k] = existing; continue }
                        let n = UInt32(result.positions.count / 3)
                        vertexOfChart[key] = n
                        result.faces[3 * t + k] = n
                        let o = 3 * Int(i)
                        result.positions += mesh.positions[o..<o + 3]
                        result.normals += mesh.normals[o..<o + 3]
                        var atlasPixel: SIMD2<Double>
                        if p.view < 0 {
                            atlasPixel = SIMD2(Double(p.atlasOrigin.x) + 1.5, Double(p.atlasOrigin.y) + 1.5)
                        } else {
                            let q = views[p.view].pose.inverse.apply(SIMD3(Double(mesh.positions[o]), Double(mesh.positions[o + 1]),
                                                                           Double(mesh.positions[o + 2])))
                            let k = views[p.view].colorIntrinsics
                            let source = SIMD2(k.fx * q.x / q.z + k.cx, k.fy * q.y / q.z + k.cy)
                            atlasPixel = SIMD2(Double(p.atlasOrigin.x), Double(p.atlasOrigin.y)) + (source - p.sourceOrigin) * scale
                        }
                        // glTF: 0 is the atlas's left (top) edge; pixel centres at (i + 0.5) / side.
                        result.uvs += [Float((atlasPixel.x + 0.5) / Double(side)), Float((atlasPixel.y + 0.5) / Double(side))]
                    }
                }
                // A triangle no view saw: its vertices' mean color.
                if p.view < 0 {
                    var rgb = SIMD3<Double>.zero
                    for t in chart {
                        for k in 0..<3 {
                            let o = 3 * Int(mesh.faces[3 * t + k])
                            rgb += SIMD3(Double(mesh.colors[o]), Double(mesh.colors[o + 1]), Double(mesh.colors[o + 2])) / Double(3 * chart.count)
                        }
                    }
                    for y in 0..<4 {
                        for x in 0..<4 {
                            for ch in 0..<3 { result.atlas[p.atlasOrigin.x + x, p.atlasOrigin.y + y, ch] = UInt8(rgb[ch].rounded()) }
                        }
                    }
                }
            }
        }

        /// Copies view `v`'s pixels into its charts' places (`color`: its color image), and
        /// notes its colors of the sample triangles.
        package mutating func fill(view v: Int, color: ColorImage) {
            for (sample, pixel) in samplesOfView[v] {
                let rgb = bilinear(color, pixel)
                observations.append((sample, Int32(v), SIMD3(Float(rgb.x), Float(rgb.y), Float(rgb.z))))
            }
            for p in placements where p.view == v {
                for y in 0..<p.atlasSize.y {
                    for x in 0..<p.atlasSize.x {
                        let source = p.sourceOrigin + SIMD2(Double(x), Double(y)) / result.scale
                        let rgb = bilinear(color, source)
                        for ch in 0..<3 { result.atlas[p.atlasOrigin.x + x, p.atlasOrigin.y + y, ch] = rgb[ch] }
                    }
                }
            }
        }

        /// Levels the filled views' colors: per channel, the log gains `a_v` minimizing
        /// Σ (log c_sv + a_v − log c_sw − a_w)² over the sample triangles both views saw
        /// (colors of at least 8 levels), with a small pull toward 0, then shifted so that the
        /// median view keeps its colors; each chart's pixels are multiplied by its view's gain.
        package mutating func finish() {
            var bySample: [Int32: [(view: Int32, color: SIMD3<Float>)]] = [:]
            for o in observations { bySample[o.sample, default: []].append((o.view, o.color)) }
            let viewList = Array(Set(observations.map(\.view))).sorted()
            guard viewList.count > 1 else { return }
            var index: [Int32: Int] = [:]
            for (i, v) in viewList.enumerated() { index[v] = i }
            let n = viewList.count
            var logGains = [SIMD3<Double>](repeating: .zero, count: n)
            for ch in 0..<3 {
                var a = [Double](repeating: 0, count: n * n), b = [Double](repeating: 0, count: n)
                for (_, seen) in bySample where seen.count > 1 {
                    for i in 0..<seen.count {
                        for j in (i + 1)..<seen.count {
                            let ci = Double(seen[i].color[ch]), cj = Double(seen[j].color[ch])
                            guard ci >= 8, cj >= 8, let p = index[seen[i].view], let q = index[seen[j].view], p != q else { continue }
                            let d = log(cj) - log(ci)
                            a[p * n + p] += 1; a[q * n + q] += 1; a[p * n + q] -= 1; a[q * n + p] -= 1
                            b[p] += d; b[q] -= d
                        }
                    }
                }
                for i in 0..<n { a[i * n + i] += 1e-3 }
                // Gaussian elimination (the matrix is symmetric positive definite).
                for k in 0..<n {
                    let pivot = a[k * n + k]
                    guard pivot > 0 else { continue }
                    for r in (k + 1)..<n {
                        let f = a[r * n + k] / pivot
                        guard f != 0 else { continue }
                        for c in k..<n { a[r * n + c] -= f * a[k * n + c] }
                        b[r] -= f * b[k]
                    }
                }
                var x = [Double](repeating: 0, count: n)
                for k in stride(from: n - 1, through: 0, by: -1) {
                    var sum = b[k]
                    for c in (k + 1)..<n { sum -= a[k * n + c] * x[c] }
                    x[k] = a[k * n + k] > 0 ? sum / a[k * n + k] : 0
                }
                let median = x.sorted()[n / 2]
                for i in 0..<n { logGains[i][ch] = x[i] - median }
            }
            for (i, v) in viewList.enumerated() {
                result.gains[Int(v)] = SIMD3(exp(logGains[i].x), exp(logGains[i].y), exp(logGains[i].z))
            }
            for p in placements where p.view >= 0 {
                guard let gain = result.gains[p.view] else { continue }
                for y in 0..<p.atlasSize.y {
                    for x in 0..<p.atlasSize.x {
                        for ch in 0..<3 {
                            let value = Double(result.atlas[p.atlasOrigin.x + x, p.atlasOrigin.y + y, ch]) * gain[ch]
                            result.atlas[p.atlasOrigin.x + x, p.atlasOrigin.y + y, ch] = UInt8(min(255, max(0, value.rounded())))
                        }
                    }
                }
            }
        }
    }

    /// The color at a pixel position (integer coordinates are pixel centres), clamped to the image.
    static func bilinear(_ image: ColorImage, _ p: SIMD2<Double>) -> SIMD3<UInt8> {
        let x = min(max(p.x, 0), Double(image.width - 1)), y = min(max(p.y, 0), Double(image.height - 1))
        let x0 = Int(x), y0 = Int(y), x1 = min(x0 + 1, image.width - 1), y1 = min(y0 + 1, image.height - 1)
        let fx = x - Double(x0), fy = y - Double(y0)
        var out = SIMD3<UInt8>()
        for ch in 0..<3 {
            let top = Double(image[x0, y0, ch]) * (1 - fx) + Double(image[x1, y0, ch]) * fx
            let bottom = Double(image[x0, y1, ch]) * (1 - fx) + Double(image[x1, y1, ch]) * fx
            out[ch] = UInt8(min(255, max(0, (top * (1 - fy) + bottom * fy).rounded())))
        }
        return out
    }
}
