#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

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
    /// How sharp the frame is expected to be, 0…1 (1: no motion blur expected); a
    /// triangle's score in this view is multiplied by it.
    package var sharpness: Double = 1

    /// A view from its parts.
    package init(color: ColorImage, colorIntrinsics: Intrinsics, depth: DepthMap, depthIntrinsics: Intrinsics, pose: Pose,
                 sharpness: Double = 1) {
        self.color = color
        self.colorIntrinsics = colorIntrinsics
        self.depth = depth
        self.depthIntrinsics = depthIntrinsics
        self.pose = pose
        self.sharpness = sharpness
    }
}

/// How a mesh is textured.
package struct TexturingOptions: Sendable {
    /// The side of each atlas image, pixels (64 to 16 384).
    package var side = 4096
    /// The most bytes the atlases may take while they are made; nil: half the machine's memory.
    package var memoryBudget: Int? = nil
    /// Whether the seams are leveled (per-vertex offsets diffused from the chart borders);
    /// the per-view gains are found either way.
    package var levelSeams = true

    /// Options with an atlas side and a memory budget.
    package init(side: Int = 4096, memoryBudget: Int? = nil) {
        self.side = side
        self.memoryBudget = memoryBudget
    }

    /// The memory budget in effect.
    package var budget: Int { memoryBudget ?? (Host.physicalMemoryBytes.map { $0 / 2 } ?? 4 << 30) }

    /// Bytes per atlas texel while texturing: RGB and a coverage byte.
    static let bytesPerTexel = 4
    /// Bytes per texel of the one atlas being bled at a time (its pyramid of averages).
    static let bleedBytesPerTexel = 6

    /// Checks the values.
    /// - Throws: `RGBDError` (`.invalidArgument`, pointing at `.textureSize` or
    ///   `.memoryBudget`) for a side outside 64…16 384 or a budget below one byte.
    package func validate() throws {
        guard (64...16_384).contains(side) else {
            throw RGBDError(.invalidArgument, "a texture atlas is 64 to 16384 pixels wide (\(side))", argument: .textureSize)
        }
        if let memoryBudget, memoryBudget < 1 {
            throw RGBDError(.invalidArgument, "the memory budget must be positive (\(memoryBudget) bytes)", argument: .memoryBudget)
        }
    }
}

/// A mesh with base-color texture atlases: vertices split where charts meet (each keeps
/// its position and normal, with the texture coordinate of its chart).
package struct TexturedMesh: Sendable {
    /// Positions, meters (3 per vertex).
    package var positions: [Float] = []
    /// Unit normals (3 per vertex).
    package var normals: [Float] = []
    /// Texture coordinates (2 per vertex) in the atlas of the vertex's triangles, glTF's:
    /// (0, 0) the atlas's top-left corner, (1, 1) its bottom-right one.
    package var uvs: [Float] = []
    /// Triangles (3 vertex numbers each), in `surface`'s order.
    package var faces: [UInt32] = []
    /// Per triangle, the atlas its texture is in.
    package var facePages: [Int32] = []
    /// The atlases (RGB, square, all of one side).
    package var atlases: [ColorImage] = []
    /// The surface textured: the input mesh, its triangles that no frame saw whole split
    /// at their edges' midpoints (with their neighbours, so that no crack opens) until one
    /// did; its triangles are `faces`' in order.
    package var surface = TriangleMesh()
    /// Triangles of the input split for that.
    package var splitTriangles = 0
    /// Per triangle, the view its color comes from (−1: none saw it; then its vertices' colors).
    package var faceViews: [Int32] = []
    /// The scale of the atlas against the views' pixels (1: a view's pixels copied as they are).
    package var scale: Double = 1
    /// The color gain applied to each view's pixels (per channel), from the overlaps.
    package var gains: [Int: SIMD3<Double>] = [:]
    /// The seams (vertices where charts of different views meet) and the median color
    /// difference across them (largest of the channels, levels) before and after leveling.
    package var seams: (vertices: Int, before: Double, after: Double) = (0, 0, 0)

    /// The share of the surface's area colored from a view (the rest: its vertices' colors).
    package var coverage: Double {
        var seen = 0.0, all = 0.0
        for t in faceViews.indices {
            let (a, b, c) = MeshTexturing.corners(surface, t)
            let n = MeshTexturing.cross(b - a, c - a)
            let area = (n * n).sum().squareRoot() / 2
            all += area
            if faceViews[t] >= 0 { seen += area }
        }
        return all > 0 ? seen / all : 0
    }
}

/// Texturing: each triangle takes its color from one view, the views' exposures leveled.
///
/// A view sees a triangle when its centre and corners project inside the color image, the
/// surface there (the mean of its vertices' normals: the distance field's gradient, which a
/// small triangle's own normal follows only roughly) faces the camera at less than 78°,
/// and the view's own depth agrees with the distance (within 2 %, at least 2 cm) at its
/// centre and near its corners and edges' midpoints, each over 3×3 depth pixels: a triangle
/// behind something in that view, or beside an occluding edge, is never colored from it; nor
/// is a large triangle from a view that sees it too slantwise (under a fifth of the pixels
/// it would cover head-on). A triangle no view faces (a fold, a surface seen edge-on) may
/// take a view seeing it at up to 107° whose depth agrees with it. Among the views that
/// see it, a triangle prefers the one where it covers the most pixels (near and head-on),
/// times the view's sharpness, and then the view most of its neighbours took (fewer charts,
/// fewer seams). A triangle that no view sees whole but one sees in part is split until
/// its parts are seen. Neighbouring triangles of one view form a chart; charts are
/// shelf-packed into atlases (several when one does not hold them at the views'
/// resolution), per-view gains level the exposures, per-vertex offsets diffused from the
/// seams level what is left across chart borders, and the texels no triangle uses are
/// filled from their neighbourhood (pull-push) so that no dark seam shows at any zoom.
package enum MeshTexturing {
    /// Rounds of splitting triangles that no view sees whole.
    static let splitRounds = 3
    /// The margin around a chart's rectangle, pixels of its view.
    static let margin = 2.0
    /// Where the corners of a triangle no view saw are in its 5×5 cell (texel centres).
    static let cellCorners: [SIMD2<Double>] = [SIMD2(1, 1), SIMD2(3, 1), SIMD2(1, 3)]

    /// The views that see each triangle of `faces` whole with their scores (best first),
    /// and whether some view sees its centre but not all of it.
    static func candidates(_ mesh: TriangleMesh, views: [TextureView], faces: [Int]) -> (scores: [[(view: Int32, score: Float)]], partial: [Bool]) {
        let toCamera = views.map { $0.pose.inverse }
        var scores = [[(view: Int32, score: Float)]](repeating: [], count: faces.count)
        var partial = [Bool](repeating: false, count: faces.count)
        let chunk = 512
        let chunks = (faces.count + chunk - 1) / chunk
        scores.withUnsafeMutableBufferPointer { scoresBuffer in
            partial.withUnsafeMutableBufferPointer { partialBuffer in
                nonisolated(unsafe) let outScores = scoresBuffer
                nonisolated(unsafe) let outPartial = partialBuffer
                // Each chunk writes its own slots; concurrentPerform returns when all are done.
                DispatchQueue.concurrentPerform(iterations: chunks) { c in
                    for i in (c * chunk)..<min(faces.count, c * chunk + chunk) {
                        let t = faces[i]
                        let (a, b, cc) = corners(mesh, t)
                        let m = (a + b + cc) / 3
                        var n = SIMD3<Double>.zero
                        for k in 0..<3 {
                            let o = 3 * Int(mesh.faces[3 * t + k])
                            n += SIMD3(Double(mesh.normals[o]), Double(mesh.normals[o + 1]), Double(mesh.normals[o + 2]))
                        }
                        var length = (n * n).sum().squareRoot()
                        if !(length > 1e-6) {
                            n = cross(b - a, cc - a)
                            length = (n * n).sum().squareRoot()
                        }
                        guard length > 0 else { continue }
                        let faceNormal = cross(b - a, cc - a)
                        let faceArea = (faceNormal * faceNormal).sum().squareRoot() / 2
                        var found: [(view: Int32, score: Float)] = [], fallback: [(view: Int32, score: Float)] = []
                        var seenInPart = false
                        for (v, view) in views.enumerated() {
                            let toEye = view.pose.translation - m
                            let distance = (toEye * toEye).sum().squareRoot()
                            let facing = (n * toEye).sum() / (length * distance)
                            // Facing it at less than 78°; or, for a triangle no view faces (a
                            // fold of the fusion, a surface seen edge-on), up to 107° when
                            // the view's depth agrees with it (below).
                            guard facing > 0.2 || (found.isEmpty && facing > -0.3) else { continue }
                            let qm = toCamera[v].apply(m)
                            guard project(qm, view.colorIntrinsics) != nil, isVisible(qm, in: view) else { continue }
                            // A triangle reaching out of the image is seen in part (its
                            // parts may be seen whole); one beside an occluding edge is not.
                            guard let pa = project(toCamera[v].apply(a), view.colorIntrinsics),
                                  let pb = project(toCamera[v].apply(b), view.colorIntrinsics),
                                  let pc = project(toCamera[v].apply(cc), view.colorIntrinsics) else {
                                if facing > 0.2 { seenInPart = true }
                                continue
                            }
                            // Seen so slantwise that its texture would smear (under a fifth of
                            // the pixels it would cover head-on): not from this view, unless it
                            // is small (a noisy triangle's own normal says little).
                            let area = abs((pb.x - pa.x) * (pc.y - pa.y) - (pc.x - pa.x) * (pb.y - pa.y)) / 2
                            let headOn = faceArea * pow(view.colorIntrinsics.fx / distance, 2)
                            guard area >= 0.2 * headOn || headOn < 64 else { continue }
                            guard [a, b, cc, (a + b) / 2, (b + cc) / 2, (cc + a) / 2].allSatisfy({
                                isVisible(toCamera[v].apply(m + ($0 - m) * 0.9), in: view)
                            }) else { continue }
                            if facing > 0.2 {
                                found.append((Int32(v), Float(area * view.sharpness)))
                            } else {
                                fallback.append((Int32(v), Float(area * view.sharpness)))
                            }
                        }
                        if found.isEmpty && !seenInPart { found = fallback }
                        found.sort { $0.score > $1.score || ($0.score == $1.score && $0.view < $1.view) }
                        outScores[i] = found
                        outPartial[i] = found.isEmpty && seenInPart
                    }
                }
            }
        }
        return (scores, partial)
    }

    /// Chooses a view per triangle (−1: none sees it whole): the best-scored, then the one
    /// most of its neighbours took among those scoring at least 60 % of the best.
    package static func chooseViews(_ mesh: TriangleMesh, views: [TextureView]) -> [Int32] {
        let scores = candidates(mesh, views: views, faces: Array(0..<mesh.faceCount)).scores
        return choose(mesh, scores: scores)
    }

    static func choose(_ mesh: TriangleMesh, scores: [[(view: Int32, score: Float)]]) -> [Int32] {
        var choice = scores.map { $0.first?.view ?? -1 }
        let neighbours = edgeNeighbours(mesh)
        for _ in 0..<3 {
            for t in 0..<mesh.faceCount where scores[t].count > 1 {
                let best = scores[t][0].score
                var bestValue = -Float.infinity, bestView = choice[t]
                for (view, score) in scores[t] where score >= 0.6 * best {
                    var agree = 0
                    for k in 0..<3 {
                        let u = neighbours[3 * t + k]
                        if u >= 0 && choice[Int(u)] == view { agree += 1 }
                    }
                    let value = score / best + 0.4 * Float(agree)
                    if value > bestValue { bestValue = value; bestView = view }
                }
                choice[t] = bestView
            }
        }
        return choice
    }

    /// Per triangle and edge (a→b, b→c, c→a), the other triangle on that edge (−1: none,
    /// or more than one).
    static func edgeNeighbours(_ mesh: TriangleMesh) -> [Int32] {
        var result = [Int32](repeating: -1, count: mesh.faces.count)
        // The first slot (3 t + k) that used each edge; −1 once a second one did.
        var firstSlot: [UInt64: Int32] = [:]
        firstSlot.reserveCapacity(mesh.faces.count)
        for t in 0..<mesh.faceCount {
            for k in 0..<3 {
                let a = UInt64(mesh.faces[3 * t + k]), b = UInt64(mesh.faces[3 * t + (k + 1) % 3])
                let key = min(a, b) << 32 | max(a, b)
                if let slot = firstSlot[key] {
                    guard slot >= 0 else { continue }
                    result[Int(slot)] = Int32(t)
                    result[3 * t + k] = slot / 3
                    firstSlot[key] = -1
                } else {
                    firstSlot[key] = Int32(3 * t + k)
                }
            }
        }
        return result
    }

    /// Splits the edges of the `marked` triangles at their midpoints; every triangle with a
    /// split edge is cut into 2, 3 or 4 (so that no crack opens), orientation kept. Returns
    /// the new mesh and, per new triangle, the old one it comes from when that was not cut.
    static func split(_ mesh: TriangleMesh, marked: [Bool]) -> (mesh: TriangleMesh, unchanged: [Int]) {
        var out = mesh
        var mid: [UInt64: UInt32] = [:]
        func key(_ a: UInt32, _ b: UInt32) -> UInt64 { UInt64(min(a, b)) << 32 | UInt64(max(a, b)) }
        for t in 0..<mesh.faceCount where marked[t] {
            for k in 0..<3 {
                let a = mesh.faces[3 * t + k], b = mesh.faces[3 * t + (k + 1) % 3]
                guard mid[key(a, b)] == nil else { continue }
                mid[key(a, b)] = UInt32(out.positions.count / 3)
                let i = 3 * Int(a), j = 3 * Int(b)
                var n = SIMD3<Float>.zero
                for c in 0..<3 {
                    out.positions.append((mesh.positions[i + c] + mesh.positions[j + c]) / 2)
                    out.colors.append(UInt8((Int(mesh.colors[i + c]) + Int(mesh.colors[j + c]) + 1) / 2))
                    n[c] = mesh.normals[i + c] + mesh.normals[j + c]
                }
                let length = (n * n).sum().squareRoot()
                if length > 0 { n /= length }
                out.normals += [n.x, n.y, n.z]
            }
        }
        out.faces = []
        out.faces.reserveCapacity(mesh.faces.count + 9 * mid.count)
        var unchanged: [Int] = []
        for t in 0..<mesh.faceCount {
            let v = [mesh.faces[3 * t], mesh.faces[3 * t + 1], mesh.faces[3 * t + 2]]
            let m = (0..<3).map { mid[key(v[$0], v[($0 + 1) % 3])] }
            let count = m.compactMap { $0 }.count
            var made: [UInt32] = []
            switch count {
            case 0:
                made = v
            case 1:
                guard let k = m.firstIndex(where: { $0 != nil }), let mk = m[k] else { continue }
                let p = v[k], q = v[(k + 1) % 3], r = v[(k + 2) % 3]
                made = [p, mk, r, mk, q, r]
            case 2:
                guard let k = m.firstIndex(where: { $0 == nil }), let m1 = m[(k + 1) % 3], let m2 = m[(k + 2) % 3] else { continue }
                let p = v[k], q = v[(k + 1) % 3], r = v[(k + 2) % 3]
                made = [m1, r, m2, p, q, m1, p, m1, m2]
            default:
                guard let m0 = m[0], let m1 = m[1], let m2 = m[2] else { continue }
                made = [v[0], m0, m2, m0, v[1], m1, m2, m1, v[2], m0, m1, m2]
            }
            out.faces += made
            for _ in 0..<(made.count / 3) { unchanged.append(count == 0 ? t : -1) }
        }
        return (out, unchanged)
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

    /// A chart's place: its rectangle in its view (pixels, margin included) and in its atlas.
    struct Placement {
        var view: Int
        var sourceOrigin: SIMD2<Double>
        var sourceSize: SIMD2<Double>
        var page = 0
        var atlasOrigin = SIMD2<Int>(0, 0)
        var atlasSize = SIMD2<Int>(0, 0)
    }

    /// Shelf packing of rectangles (sizes in atlas pixels, each at most `side`) into
    /// squares of `side`, as many as needed: each one's square and origin.
    static func pack(_ sizes: [SIMD2<Int>], side: Int) -> [(page: Int, origin: SIMD2<Int>)] {
        let order = sizes.indices.sorted { sizes[$0].y > sizes[$1].y || (sizes[$0].y == sizes[$1].y && $0 < $1) }
        var result = [(page: Int, origin: SIMD2<Int>)](repeating: (0, .zero), count: sizes.count)
        var page = 0, x = 0, y = 0, shelf = 0
        for i in order {
            let s = sizes[i]
            if x + s.x > side { y += shelf; x = 0; shelf = 0 }
            if y + s.y > side { page += 1; x = 0; y = 0; shelf = 0 }
            result[i] = (page, SIMD2(x, y))
            x += s.x
            shelf = max(shelf, s.y)
        }
        return result
    }

    /// Textures `mesh` from `views` (in memory).
    /// - Throws: `RGBDError` for options out of range (`TexturingOptions.validate`) or
    ///   atlases that would exceed the memory budget.
    package static func texture(_ mesh: TriangleMesh, views: [TextureView], options: TexturingOptions = TexturingOptions()) throws -> TexturedMesh {
        var layout = try Layout(mesh, views: views, options: options)
        for v in views.indices { layout.fill(view: v, color: views[v].color) }
        layout.finish()
        return layout.result
    }

    /// A texture laid out (views chosen, charts packed, texture coordinates made) before
    /// its pixels: the views' colors are filled in one at a time (`fill`), so that a scan's
    /// frames can be read one after the other; `finish` levels and bleeds.
    package struct Layout {
        /// The textured mesh; its atlases are filled by `fill` and `finish`.
        package var result = TexturedMesh()
        var placements: [Placement] = []
        /// The views used (those some chart takes its color from).
        package var usedViews: Set<Int> { Set(placements.map(\.view).filter { $0 >= 0 }) }
        /// Per view, the sample triangles it sees and where their centres are in its image.
        var samplesOfView: [[(sample: Int32, pixel: SIMD2<Double>)]] = []
        /// The colors the filled views gave the sample triangles.
        var observations: [(sample: Int32, view: Int32, color: SIMD3<Float>)] = []
        /// Per output vertex: its chart, the surface's vertex and its pixel in its chart's view.
        var vertexChart: [Int32] = []
        var vertexSource: [UInt32] = []
        var vertexPixel: [SIMD2<Float>] = []
        /// Output vertices on seams (their surface vertex in charts of two views or more), by view.
        var seamVerticesOfView: [[Int32]] = []
        /// The colors their views gave the seam vertices (before the gains).
        var seamColors: [Int32: SIMD3<Float>] = [:]
        /// Whether `finish` levels the seams.
        var levelSeams = true
        /// The views' cameras (world to camera, color intrinsics).
        var cameras: [(toCamera: Pose, intrinsics: Intrinsics)] = []
        /// Per view, its charts; per chart, its triangles (none for a chart of no view).
        /// Charts own disjoint rectangles of their atlas, so they are filled in parallel.
        var chartsOfView: [[Int32]] = []
        var chartFaces: [[Int32]] = []
        /// Per atlas and texel: 0 unused, 1 filled from its view, 2 leveled (or a cell of vertex colors).
        var masks: [[UInt8]] = []
        /// How far around each triangle its view's pixels are copied, texels: the chart's
        /// margin (so that a texture lookup at a triangle's edge, which mixes the texels
        /// around it, never mixes in the bled fill of the unused space, nor a thin
        /// triangle's neighbours in the atlas); at least one texel.
        var reach: Float = 1

        /// Lays out the texture of `mesh` from `views` (their colors are not read).
        /// - Throws: `RGBDError` for options out of range, or when the atlases would take
        ///   more memory than `options.budget` allows.
        package init(_ mesh: TriangleMesh, views: [TextureView], options: TexturingOptions) throws {
            try options.validate()
            levelSeams = options.levelSeams
            // Views per triangle; triangles no view sees whole but some view sees in part split.
            var surface = mesh
            var (scores, partial) = candidates(surface, views: views, faces: Array(0..<surface.faceCount))
            var split = 0
            for _ in 0..<splitRounds {
                let marked = partial
                let count = marked.filter { $0 }.count
                guard count > 0 else { break }
                split += count
                let (finer, unchanged) = MeshTexturing.split(surface, marked: marked)
                let redo = unchanged.indices.filter { unchanged[$0] < 0 }
                let fresh = candidates(finer, views: views, faces: redo)
                var newScores = unchanged.map { $0 >= 0 ? scores[$0] : [] }
                var newPartial = [Bool](repeating: false, count: unchanged.count)
                for (i, t) in redo.enumerated() { newScores[t] = fresh.scores[i]; newPartial[t] = fresh.partial[i] }
                surface = finer; scores = newScores; partial = newPartial
            }
            let faceViews = choose(surface, scores: scores)
            let charts = MeshTexturing.charts(surface, faceViews: faceViews)
            result.surface = surface
            result.splitTriangles = split
            // Sample triangles (up to 20 000) for the views' color gains: where each view sees them.
            samplesOfView = [[(sample: Int32, pixel: SIMD2<Double>)]](repeating: [], count: views.count)
            let step = max(1, surface.faceCount / 20_000)
            for (v, view) in views.enumerated() {
                let toCamera = view.pose.inverse
                for (s, t) in stride(from: 0, to: surface.faceCount, by: step).enumerated() {
                    let (a, b, c) = corners(surface, t)
                    let n = cross(b - a, c - a), m = (a + b + c) / 3
                    let toEye = view.pose.translation - m
                    let length = (n * n).sum().squareRoot(), distance = (toEye * toEye).sum().squareRoot()
                    guard length > 0, (n * toEye).sum() > 0.2 * length * distance,
                          let pixel = project(toCamera.apply(m), view.colorIntrinsics),
                          isVisible(toCamera.apply(m), in: view) else { continue }
                    samplesOfView[v].append((Int32(s), pixel))
                }
            }
            // Each chart's rectangle in its view (a face of no view: a 5×5 cell of its vertices' colors).
            for chart in charts {
                let v = Int(faceViews[chart[0]])
                guard v >= 0 else {
                    placements.append(Placement(view: -1, sourceOrigin: .zero, sourceSize: SIMD2(5, 5)))
                    continue
                }
                let toCamera = views[v].pose.inverse
                let k = views[v].colorIntrinsics
                var lo = SIMD2<Double>(repeating: .infinity), hi = SIMD2<Double>(repeating: -.infinity)
                for t in chart {
                    let (a, b, c) = corners(surface, t)
                    for p in [a, b, c] {
                        let q = toCamera.apply(p)
                        let pixel = SIMD2(k.fx * q.x / q.z + k.cx, k.fy * q.y / q.z + k.cy)
                        lo = pointwiseMin(lo, pixel); hi = pointwiseMax(hi, pixel)
                    }
                }
                placements.append(Placement(view: v, sourceOrigin: lo - margin, sourceSize: hi - lo + 2 * margin))
            }
            // The views' resolution, or less when a chart would not fit one atlas; one atlas
            // of the smallest power of two (64 up to the side) that holds them all, else as
            // many atlases of the side as it takes.
            let largest = placements.map { max($0.sourceSize.x, $0.sourceSize.y) }.max() ?? 1
            let scale = min(1, Double(options.side - 2) / max(largest, 1))
            let sizes = placements.map { p in
                p.view < 0 ? SIMD2(5, 5)
                    : SIMD2(Int((p.sourceSize.x * scale).rounded(.up)) + 1, Int((p.sourceSize.y * scale).rounded(.up)) + 1)
            }
            var side = options.side
            var packed = pack(sizes, side: side)
            var trial = 64
            while trial < options.side {
                if sizes.allSatisfy({ $0.x <= trial && $0.y <= trial }) {
                    let attempt = pack(sizes, side: trial)
                    if attempt.allSatisfy({ $0.page == 0 }) { side = trial; packed = attempt; break }
                }
                trial *= 2
            }
            let pages = (packed.map(\.page).max() ?? 0) + 1
            let bytes = pages * side * side * TexturingOptions.bytesPerTexel + side * side * TexturingOptions.bleedBytesPerTexel
            guard bytes <= options.budget else {
                throw RGBDError(.invalidArgument, "the texture needs \(pages) atlas\(pages == 1 ? "" : "es") of \(side)x\(side) pixels (\(bytes >> 20) MB while made), more than the memory allowed (\(options.budget >> 20) MB)",
                                argument: .memoryBudget)
            }
            for i in placements.indices {
                placements[i].page = packed[i].page
                placements[i].atlasOrigin = packed[i].origin
                placements[i].atlasSize = sizes[i]
            }
            result.faceViews = faceViews
            result.scale = scale
            reach = Float(max(1, margin * scale))
            result.atlases = (0..<pages).map { _ in ColorImage(width: side, height: side, channels: 3, repeating: 0) }
            result.facePages = [Int32](repeating: 0, count: surface.faceCount)
            // Vertices per chart, with their atlas coordinates.
            var vertexOfChart: [UInt64: UInt32] = [:]
            var chartsOfVertex = [UInt8](repeating: 0, count: surface.vertexCount)
            result.faces = [UInt32](repeating: 0, count: surface.faces.count)
            for (c, chart) in charts.enumerated() {
                let p = placements[c]
                for t in chart {
                    result.facePages[t] = Int32(p.page)
                    for k in 0..<3 {
                        let i = surface.faces[3 * t + k]
                        let key = UInt64(c) << 32 | UInt64(i)
                        if let existing = vertexOfChart[key] { result.faces[3 * t + k] = existing; continue }
                        let n = UInt32(result.positions.count / 3)
                        vertexOfChart[key] = n
                        result.faces[3 * t + k] = n
                        if p.view >= 0 && chartsOfVertex[Int(i)] < 255 { chartsOfVertex[Int(i)] += 1 }
                        let o = 3 * Int(i)
                        result.positions += surface.positions[o..<o + 3]
                        result.normals += surface.normals[o..<o + 3]
                        var atlasPixel: SIMD2<Double>
                        var source = SIMD2<Double>.zero
                        if p.view < 0 {
                            atlasPixel = SIMD2(Double(p.atlasOrigin.x), Double(p.atlasOrigin.y)) + MeshTexturing.cellCorners[k]
                        } else {
                            let q = views[p.view].pose.inverse.apply(SIMD3(Double(surface.positions[o]), Double(surface.positions[o + 1]),
                                                                           Double(surface.positions[o + 2])))
                            let k = views[p.view].colorIntrinsics
                            source = SIMD2(k.fx * q.x / q.z + k.cx, k.fy * q.y / q.z + k.cy)
                            atlasPixel = SIMD2(Double(p.atlasOrigin.x), Double(p.atlasOrigin.y)) + (source - p.sourceOrigin) * scale
                        }
                        vertexChart.append(Int32(c))
                        vertexSource.append(i)
                        vertexPixel.append(SIMD2<Float>(source))
                        // glTF: 0 is the atlas's left (top) edge; pixel centres at (i + 0.5) / side.
                        result.uvs += [Float((atlasPixel.x + 0.5) / Double(side)), Float((atlasPixel.y + 0.5) / Double(side))]
                    }
                }
                // A triangle no view saw: a 5×5 cell whose texels interpolate its
                // vertices' colors (extrapolated around), so that the texture gives them
                // across the triangle as vertex colors would.
                if p.view < 0, let t = chart.first {
                    let colors = (0..<3).map { k in
                        let o = 3 * Int(surface.faces[3 * t + k])
                        return SIMD3(Double(surface.colors[o]), Double(surface.colors[o + 1]), Double(surface.colors[o + 2]))
                    }
                    for y in 0..<5 {
                        for x in 0..<5 {
                            let w1 = (Double(x) - 1) / 2, w2 = (Double(y) - 1) / 2
                            let rgb = colors[0] * (1 - w1 - w2) + colors[1] * w1 + colors[2] * w2
                            for ch in 0..<3 {
                                result.atlases[p.page][p.atlasOrigin.x + x, p.atlasOrigin.y + y, ch] = UInt8(min(255, max(0, rgb[ch].rounded())))
                            }
                        }
                    }
                }
            }
            cameras = views.map { ($0.pose.inverse, $0.colorIntrinsics) }
            chartsOfView = [[Int32]](repeating: [], count: views.count)
            chartFaces = [[Int32]](repeating: [], count: charts.count)
            for (c, chart) in charts.enumerated() where placements[c].view >= 0 {
                chartsOfView[placements[c].view].append(Int32(c))
                chartFaces[c] = chart.map(Int32.init)
            }
            masks = [[UInt8]](repeating: [UInt8](repeating: 0, count: side * side), count: pages)
            for p in placements where p.view < 0 {
                for y in 0..<5 { for x in 0..<5 { masks[p.page][(p.atlasOrigin.y + y) * side + p.atlasOrigin.x + x] = 2 } }
            }
            seamVerticesOfView = [[Int32]](repeating: [], count: views.count)
            for o in vertexChart.indices {
                let view = placements[Int(vertexChart[o])].view
                if view >= 0 && chartsOfVertex[Int(vertexSource[o])] > 1 { seamVerticesOfView[view].append(Int32(o)) }
            }
        }

        /// Copies view `v`'s pixels into its charts' places (`color`: its color image), and
        /// notes its colors of the sample triangles and of its seam vertices.
        package mutating func fill(view v: Int, color: ColorImage) {
            for (sample, pixel) in samplesOfView[v] {
                let rgb = bilinear(color, pixel)
                observations.append((sample, Int32(v), SIMD3(Float(rgb.x), Float(rgb.y), Float(rgb.z))))
            }
            for o in seamVerticesOfView[v] {
                let rgb = bilinear(color, SIMD2<Double>(vertexPixel[Int(o)]))
                seamColors[o] = SIMD3(Float(rgb.x), Float(rgb.y), Float(rgb.z))
            }
            // Each triangle's texels: the point of the triangle there (barycentric in the
            // atlas, the texture coordinates being interpolated linearly on the surface)
            // projected into the view, so that a large triangle seen at a slant is not
            // distorted by the projection. Chart by chart (in parallel: each writes its
            // own rectangle of its atlas), the texels inside its triangles first, then
            // those around them (the plane of the nearest triangle extended), so that a
            // texel of one triangle is never taken by its neighbour's border.
            let (toCamera, k) = cameras[v]
            let faces = result.faces, uvs = result.uvs, surface = result.surface, reach = reach
            let chartFaces = chartFaces
            forEachChart(chartsOfView[v]) { chart, atlas, mask, side in
                for part in [RasterPart.inside, .outside] {
                    for t32 in chartFaces[chart] {
                        let t = Int(t32)
                        let o = (0..<3).map { Int(faces[3 * t + $0]) }
                        let corners = o.map { SIMD2<Float>(uvs[2 * $0], uvs[2 * $0 + 1]) * Float(side) - 0.5 }
                        let (a, b, c) = MeshTexturing.corners(surface, t)
                        let qa = toCamera.apply(a), qb = toCamera.apply(b), qc = toCamera.apply(c)
                        rasterize(corners, side: side, reach: reach, part: part) { x, y, _, w in
                            let index = y * side + x
                            guard mask[index] == 0 else { return }
                            mask[index] = 1
                            let q = qa * Double(w.x) + qb * Double(w.y) + qc * Double(w.z)
                            guard q.z > 1e-6 else { return }
                            let rgb = catmullRom(color, SIMD2(k.fx * q.x / q.z + k.cx, k.fy * q.y / q.z + k.cy))
                            atlas[3 * index] = rgb.x; atlas[3 * index + 1] = rgb.y; atlas[3 * index + 2] = rgb.z
                        }
                    }
                }
            }
        }

        /// Calls `body` for the charts `list` (chart numbers), in parallel, each with its
        /// atlas's samples (RGB), its atlas's mask and the atlas side: charts own disjoint
        /// rectangles of their atlas, so each call writes only texels no other one does.
        mutating func forEachChart(_ list: [Int32],
                                   _ body: @Sendable (Int, UnsafeMutableBufferPointer<UInt8>, UnsafeMutableBufferPointer<UInt8>, Int) -> Void) {
            var byPage: [Int: [Int32]] = [:]
            for c in list { byPage[placements[Int(c)].page, default: []].append(c) }
            let side = result.atlases.first?.width ?? 1
            for (page, charts) in byPage.sorted(by: { $0.key < $1.key }) {
                result.atlases[page].samples.withUnsafeMutableBufferPointer { atlasBuffer in
                    masks[page].withUnsafeMutableBufferPointer { maskBuffer in
                        nonisolated(unsafe) let atlas = atlasBuffer, mask = maskBuffer
                        let chunk = max(1, charts.count / 64)
                        DispatchQueue.concurrentPerform(iterations: (charts.count + chunk - 1) / chunk) { n in
                            for c in charts[(n * chunk)..<min(charts.count, n * chunk + chunk)] { body(Int(c), atlas, mask, side) }
                        }
                    }
                }
            }
        }

        /// Levels and bleeds the filled atlases: the views' gains (`levelExposures`), the
        /// seams' offsets (`seamOffsets`) applied to the triangles' texels, and every
        /// texel no triangle uses filled from its neighbourhood (`bleed`).
        package mutating func finish() {
            levelExposures()
            let seamOffsets = seamOffsets()
            let offsets = levelSeams ? seamOffsets : seamOffsets.map { _ in .zero }
            let side = result.atlases.first?.width ?? 1
            let faces = result.faces, uvs = result.uvs, gains = result.gains, reach = reach
            let chartFaces = chartFaces, views = placements.map(\.view)
            forEachChart(Array(chartsOfView.joined())) { chart, atlas, mask, side in
                let gain = SIMD3<Float>(gains[views[chart]] ?? SIMD3(1, 1, 1))
                for t32 in chartFaces[chart] {
                    let t = Int(t32)
                    let o = (0..<3).map { Int(faces[3 * t + $0]) }
                    let corners = o.map { SIMD2<Float>(uvs[2 * $0], uvs[2 * $0 + 1]) * Float(side) - 0.5 }
                    rasterize(corners, side: side, reach: reach) { x, y, w, _ in
                        let index = y * side + x
                        guard mask[index] == 1 else { return }
                        mask[index] = 2
                        let offset = offsets[o[0]] * w.x + offsets[o[1]] * w.y + offsets[o[2]] * w.z
                        for ch in 0..<3 {
                            let value = Float(atlas[3 * index + ch]) * gain[ch] + offset[ch]
                            atlas[3 * index + ch] = UInt8(min(255, max(0, value.rounded())))
                        }
                    }
                }
            }
            for page in result.atlases.indices { MeshTexturing.bleed(&result.atlases[page], covered: masks[page]) }
            // The seams after: each seam vertex's texel in each of its charts.
            var after: [Double] = []
            var bySource: [UInt32: [Int]] = [:]
            for list in seamVerticesOfView { for o in list { bySource[vertexSource[Int(o)], default: []].append(Int(o)) } }
            for (_, list) in bySource where list.count > 1 {
                let colors = list.map { o in
                    let page = pageOfVertex(o)
                    return bilinearFloat(result.atlases[page], SIMD2(Double(result.uvs[2 * o]), Double(result.uvs[2 * o + 1])) * Double(side) - 0.5)
                }
                after.append(spread(colors))
            }
            result.seams.after = SmallMatrix.median(after) ?? 0
        }

        /// The atlas of an output vertex (its chart's).
        func pageOfVertex(_ o: Int) -> Int { placements[Int(vertexChart[o])].page }

        /// Per view and channel, the log gains `a_v` minimizing
        /// Σ (log c_sv + a_v − log c_sw − a_w)² over the sample triangles both views saw
        /// (colors of at least 8 levels), with a small pull toward 0, then shifted so that the
        /// median view keeps its colors (`result.gains`).
        mutating func levelExposures() {
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
                // Symmetric positive definite (the pull toward 0 on the diagonal).
                let x = SmallMatrix.solvePositiveDefinite(a, b) ?? [Double](repeating: 0, count: n)
                let median = SmallMatrix.median(x) ?? 0
                for i in 0..<n { logGains[i][ch] = x[i] - median }
            }
            for (i, v) in viewList.enumerated() {
                result.gains[Int(v)] = SIMD3(exp(logGains[i].x), exp(logGains[i].y), exp(logGains[i].z))
            }
        }

        /// Per output vertex, the color offset that levels the seams: at a seam vertex the
        /// mean of its charts' colors (gains applied) minus its own chart's; inside a chart
        /// the offsets diffused from its seams (Gauss–Seidel on the chart's vertex graph,
        /// seam vertices held), fading away from them.
        mutating func seamOffsets() -> [SIMD3<Float>] {
            let count = vertexChart.count
            var offsets = [SIMD3<Float>](repeating: .zero, count: count)
            var fixed = [Bool](repeating: false, count: count)
            var bySource: [UInt32: [Int]] = [:]
            for list in seamVerticesOfView { for o in list { bySource[vertexSource[Int(o)], default: []].append(Int(o)) } }
            var before: [Double] = []
            for (_, list) in bySource where list.count > 1 {
                var colors: [SIMD3<Float>] = []
                for o in list {
                    let view = placements[Int(vertexChart[o])].view
                    guard let raw = seamColors[Int32(o)] else { continue }
                    colors.append(raw * SIMD3<Float>(result.gains[view] ?? SIMD3(1, 1, 1)))
                }
                guard colors.count == list.count else { continue }
                let mean = colors.reduce(.zero, +) / Float(colors.count)
                for (o, color) in zip(list, colors) { offsets[o] = mean - color; fixed[o] = true }
                before.append(spread(colors.map { SIMD3<Double>($0) }))
            }
            result.seams.vertices = before.count
            result.seams.before = SmallMatrix.median(before) ?? 0
            // The vertex graph (edges of the output triangles: within charts only).
            var degree = [Int32](repeating: 0, count: count + 1)
            for t in 0..<(result.faces.count / 3) {
                for k in 0..<3 { degree[Int(result.faces[3 * t + k])] += 2 }
            }
            var start = [Int](repeating: 0, count: count + 1)
            for i in 0..<count { start[i + 1] = start[i] + Int(degree[i]) }
            var fill = start
            var adjacent = [Int32](repeating: 0, count: start[count])
            for t in 0..<(result.faces.count / 3) {
                for k in 0..<3 {
                    let a = Int(result.faces[3 * t + k]), b = Int(result.faces[3 * t + (k + 1) % 3]), c = Int(result.faces[3 * t + (k + 2) % 3])
                    adjacent[fill[a]] = Int32(b); adjacent[fill[a] + 1] = Int32(c); fill[a] += 2
                }
            }
            for _ in 0..<60 {
                for i in 0..<count where !fixed[i] && start[i + 1] > start[i] {
                    var sum = SIMD3<Float>.zero
                    for j in start[i]..<start[i + 1] { sum += offsets[Int(adjacent[j])] }
                    offsets[i] = sum / Float(start[i + 1] - start[i])
                }
            }
            return offsets
        }
    }

    /// The largest channel's range among colors.
    static func spread(_ colors: [SIMD3<Double>]) -> Double {
        guard let first = colors.first else { return 0 }
        var lo = first, hi = first
        for c in colors { lo = pointwiseMin(lo, c); hi = pointwiseMax(hi, c) }
        return (hi - lo).max()
    }

    /// Which texels `rasterize` visits.
    enum RasterPart {
        /// Every texel within reach of the triangle.
        case all
        /// Those inside it.
        case inside
        /// Those within reach outside it.
        case outside
    }

    /// Calls `body` for each texel (centres at integers) within `reach` texels of the
    /// triangle `p` (atlas pixels; `part`: all of them, or those inside or outside it),
    /// with its barycentric weights clamped to the triangle (outside it: the nearest
    /// point's) and unclamped (outside: the triangle's plane extended; the clamped ones
    /// for a degenerate triangle).
    static func rasterize(_ p: [SIMD2<Float>], side: Int, reach: Float = 1, part: RasterPart = .all,
                          _ body: (Int, Int, SIMD3<Float>, SIMD3<Float>) -> Void) {
        let lo = pointwiseMin(pointwiseMin(p[0], p[1]), p[2]) - (reach + 0.5), hi = pointwiseMax(pointwiseMax(p[0], p[1]), p[2]) + (reach + 0.5)
        let x0 = max(0, Int(lo.x.rounded(.up))), x1 = min(side - 1, Int(hi.x.rounded(.down)))
        let y0 = max(0, Int(lo.y.rounded(.up))), y1 = min(side - 1, Int(hi.y.rounded(.down)))
        guard x0 <= x1, y0 <= y1 else { return }
        let e1 = p[1] - p[0], e2 = p[2] - p[0]
        let det = e1.x * e2.y - e1.y * e2.x
        for y in y0...y1 {
            for x in x0...x1 {
                let q = SIMD2(Float(x), Float(y))
                var w: SIMD3<Float>
                if abs(det) > 1e-9 {
                    let d = q - p[0]
                    let b = (d.x * e2.y - d.y * e2.x) / det, c = (e1.x * d.y - e1.y * d.x) / det
                    w = SIMD3(1 - b - c, b, c)
                } else {
                    w = SIMD3(repeating: 1.0 / 3)
                }
                let exact = w
                if w.min() < 0 {
                    guard part != .inside else { continue }
                    // Outside: within reach of an edge, the nearest point of the triangle's.
                    var best = Float.infinity, weights = w
                    for k in 0..<3 {
                        let a = p[k], b = p[(k + 1) % 3], ab = b - a
                        let length2 = (ab * ab).sum()
                        let s = length2 > 0 ? min(1, max(0, ((q - a) * ab).sum() / length2)) : 0
                        let foot = a + ab * s, d = q - foot
                        let distance = (d * d).sum()
                        if distance < best {
                            best = distance
                            weights = .zero
                            weights[k] = 1 - s
                            weights[(k + 1) % 3] = s
                        }
                    }
                    guard best <= reach * reach else { continue }
                    w = weights
                    body(x, y, w, abs(det) > 1e-9 ? exact : w)
                } else if part != .outside {
                    body(x, y, w, w)
                }
            }
        }
    }

    /// Fills the texels not `covered` from the covered ones near them (pull-push: a pyramid
    /// of averages of the covered texels, each empty texel taking its parent's), so that
    /// chart borders bleed into the unused space and mipmaps mix no black into them.
    static func bleed(_ atlas: inout ColorImage, covered: [UInt8]) {
        let side = atlas.width
        guard side > 1, covered.contains(0) else { return }
        // Levels 1 and up (each half its parent's size, rounded up): sums of color and counts.
        var sizes = [side]
        while let last = sizes.last, last > 1 { sizes.append((last + 1) / 2) }
        var levels = [[SIMD4<Float>]](repeating: [], count: sizes.count)
        levels[1] = [SIMD4<Float>](repeating: .zero, count: sizes[1] * sizes[1])
        for y in 0..<side {
            for x in 0..<side where covered[y * side + x] != 0 {
                levels[1][(y / 2) * sizes[1] + x / 2] += SIMD4(Float(atlas[x, y, 0]), Float(atlas[x, y, 1]), Float(atlas[x, y, 2]), 1)
            }
        }
        for l in 2..<max(2, sizes.count) {
            let n = sizes[l], below = sizes[l - 1]
            var level = [SIMD4<Float>](repeating: .zero, count: n * n)
            for y in 0..<below { for x in 0..<below { level[(y / 2) * n + x / 2] += levels[l - 1][y * below + x] } }
            levels[l] = level
        }
        // Pull down: an empty cell takes its parent's mean.
        for l in stride(from: sizes.count - 2, through: 1, by: -1) {
            let n = sizes[l], parentSize = sizes[l + 1]
            for y in 0..<n {
                for x in 0..<n where levels[l][y * n + x].w == 0 {
                    let parent = levels[l + 1][(y / 2) * parentSize + x / 2]
                    if parent.w > 0 { levels[l][y * n + x] = parent / parent.w }
                }
            }
        }
        let n = sizes[1]
        for y in 0..<side {
            for x in 0..<side where covered[y * side + x] == 0 {
                let cell = levels[1][(y / 2) * n + x / 2]
                guard cell.w > 0 else { continue }
                for ch in 0..<3 { atlas[x, y, ch] = UInt8(min(255, max(0, (cell[ch] / cell.w).rounded()))) }
            }
        }
    }

    /// The color at a pixel position (integer coordinates are pixel centres), clamped to the image.
    static func bilinear(_ image: ColorImage, _ p: SIMD2<Double>) -> SIMD3<UInt8> {
        let c = bilinearFloat(image, p)
        return SIMD3(UInt8(min(255, max(0, c.x.rounded()))), UInt8(min(255, max(0, c.y.rounded()))), UInt8(min(255, max(0, c.z.rounded()))))
    }

    /// The color at a pixel position by Catmull-Rom interpolation (the cubic through the
    /// 4×4 pixels around it: no blur where a pixel centre is hit, less than bilinear's
    /// between them; integer coordinates are pixel centres), clamped to the image.
    static func catmullRom(_ image: ColorImage, _ p: SIMD2<Double>) -> SIMD3<UInt8> {
        let x = min(max(p.x, 0), Double(image.width - 1)), y = min(max(p.y, 0), Double(image.height - 1))
        let x0 = Int(x), y0 = Int(y)
        let wx = catmullRomWeights(x - Double(x0)), wy = catmullRomWeights(y - Double(y0))
        let channels = image.channels, width = image.width
        var sum = SIMD3<Double>()
        image.samples.withUnsafeBufferPointer { samples in
            for j in 0..<4 {
                let row = min(max(y0 + j - 1, 0), image.height - 1) * width
                var line = SIMD3<Double>()
                for i in 0..<4 {
                    let o = (row + min(max(x0 + i - 1, 0), width - 1)) * channels
                    line += SIMD3(Double(samples[o]), Double(samples[o + 1]), Double(samples[o + 2])) * wx[i]
                }
                sum += line * wy[j]
            }
        }
        let c = sum.rounded(.toNearestOrEven)
        return SIMD3(UInt8(min(255, max(0, c.x))), UInt8(min(255, max(0, c.y))), UInt8(min(255, max(0, c.z))))
    }

    /// Catmull-Rom's weights of the pixels at −1, 0, 1 and 2 for a position `t` (0…1) past pixel 0.
    static func catmullRomWeights(_ t: Double) -> SIMD4<Double> {
        let t2 = t * t, t3 = t2 * t
        return SIMD4((-t3 + 2 * t2 - t) / 2, (3 * t3 - 5 * t2 + 2) / 2, (-3 * t3 + 4 * t2 + t) / 2, (t3 - t2) / 2)
    }

    /// The same, unrounded.
    static func bilinearFloat(_ image: ColorImage, _ p: SIMD2<Double>) -> SIMD3<Double> {
        let x = min(max(p.x, 0), Double(image.width - 1)), y = min(max(p.y, 0), Double(image.height - 1))
        let x0 = Int(x), y0 = Int(y), x1 = min(x0 + 1, image.width - 1), y1 = min(y0 + 1, image.height - 1)
        let fx = x - Double(x0), fy = y - Double(y0)
        var out = SIMD3<Double>()
        for ch in 0..<3 {
            let top = Double(image[x0, y0, ch]) * (1 - fx) + Double(image[x1, y0, ch]) * fx
            let bottom = Double(image[x0, y1, ch]) * (1 - fx) + Double(image[x1, y1, ch]) * fx
            out[ch] = top * (1 - fy) + bottom * fy
        }
        return out
    }
}
