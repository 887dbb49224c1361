import Foundation
import Testing
@testable import RGBDReconstruction
@testable import RGBDKit
@testable import RGBDSynth

/// Texturing (work in progress) against the synthetic room's truth: the atlas sampled at
/// points of well-seen walls gives the true color of what the chosen view saw there (and
/// the room's color(of:) but for the generator's head lamp), and no triangle takes its
/// color from a view in which something (a box) stands in front of it.
@Suite struct MeshTexturingTests {
    static func intrinsics(_ k: SynthPinhole) -> Intrinsics {
        Intrinsics(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: k.width, height: k.height)
    }

    static func views(_ scan: SyntheticScan, frames: some Sequence<Int>) -> [TextureView] {
        frames.map { index in
            let frame = scan.render(frame: index, color: true)
            let p = frame.pose
            return TextureView(color: frame.color, colorIntrinsics: intrinsics(frame.colorCamera), depth: frame.depth,
                               depthIntrinsics: intrinsics(frame.depthCamera),
                               pose: Pose(row0: p.rotation.r0, row1: p.rotation.r1, row2: p.rotation.r2, translation: p.translation))
        }
    }

    @Test func atlasHoldsTheTrueColorsAndNoOccludedView() throws {
        let scan = SyntheticScan(frameCount: 1440, colorWidth: 320, colorHeight: 240)
        var options = SceneFusionOptions()
        options.voxel = 0.02
        let fused = try FusionTests.fuse(scan, frames: stride(from: 0, to: 1440, by: 24), options: options)
        let mesh = try fused.simplified(MeshSimplification(targetTriangles: fused.faceCount / 10)).mesh
        let views = Self.views(scan, frames: stride(from: 0, to: 1440, by: 48))
        let start = Host.monotonicSeconds()
        let textured = try MeshTexturing.texture(mesh, views: views, options: TexturingOptions(side: 2048))
        let seconds = Host.monotonicSeconds() - start
        let room = scan.room
        let surface = textured.surface
        #expect(textured.faces.count == surface.faces.count && textured.faceViews.count == surface.faceCount)
        let seen = textured.faceViews.filter { $0 >= 0 }.count
        // Every textured triangle: its chosen camera sees it (nothing nearer along the ray
        // to its centre); and on the wall x = 2.5 its texture is the true color there.
        var occluded = 0, differences: [Double] = [], albedoDifferences: [Double] = []
        for t in 0..<textured.surface.faceCount where textured.faceViews[t] >= 0 {
            let (a, b, c) = MeshTexturing.corners(textured.surface, t)
            let centre = (a + b + c) / 3
            let eye = views[Int(textured.faceViews[t])].pose.translation
            let toward = centre - eye
            let distance = (toward * toward).sum().squareRoot()
            guard let hit = room.cast(origin: eye, direction: toward / distance) else { continue }
            if hit.t < distance - 0.05 { occluded += 1 }
            let onWall = [a, b, c].allSatisfy { abs($0.x - 2.5) < 0.01 && $0.y > 0.3 && $0.y < 2.7 && abs($0.z) < 1.5 }
            guard onWall, abs(hit.t - distance) < 0.01 else { continue }
            // The centre's texture coordinate: the mean of the corners'.
            var uv = SIMD2<Double>.zero
            for k in 0..<3 {
                let v = Int(textured.faces[3 * t + k])
                uv += SIMD2(Double(textured.uvs[2 * v]), Double(textured.uvs[2 * v + 1])) / 3
            }
            let atlas = textured.atlases[Int(textured.facePages[t])]
            let sampled = MeshTexturing.bilinear(atlas, uv * Double(atlas.width) - 0.5)
            // The truth as the chosen view saw it: the room's color lit by the generator's
            // head lamp along that ray (0.7 to 1 of color(of:) by the angle; not removed yet:
            // issue 38's per-frame gains), and the color itself.
            let truth = SyntheticScan.shade(room, hit, direction: toward)
            let albedo = room.color(of: hit)
            for ch in 0..<3 { albedoDifferences.append(abs(Double(sampled[ch]) - albedo[ch])) }
            for ch in 0..<3 { differences.append(abs(Double(sampled[ch]) - truth[ch])) }
        }
        let sorted = differences.sorted()
        let median = sorted.isEmpty ? .nan : sorted[sorted.count / 2]
        let p90 = sorted.isEmpty ? .nan : sorted[sorted.count * 9 / 10]
        let albedo = albedoDifferences.sorted()
        print("texturing: \(mesh.faceCount) triangles (\(textured.surface.faceCount) after splitting), coverage \(textured.coverage), seams \(textured.seams), atlases \(textured.atlases.count), \(seen) textured from \(views.count) views in \(seconds) s, scale \(textured.scale); wall samples \(differences.count / 3): |texture − seen truth| median \(median), 90 % \(p90) levels; against color(of:) median \(albedo.isEmpty ? .nan : albedo[albedo.count / 2]); occluded \(occluded)")
        #expect(textured.coverage > 0.9, "coverage \(textured.coverage)")
        #expect(occluded == 0)
        #expect(differences.count > 300)
        // Measured: median 1.80, 90 % 3.03 levels against what the view saw (0.31 and 0.77
        // without the color gains: the generator's head lamp shades each view by its angle,
        // 0.7–1, and the gains level the views' disagreement it makes); 5.59 against
        // color(of:) (3.75 without the gains).
        #expect(median <= 2.5 && p90 <= 5, "median \(median), 90 % \(p90)")
        #expect(!albedo.isEmpty && albedo[albedo.count / 2] <= 7, "against color(of:): median \(albedo.isEmpty ? .nan : albedo[albedo.count / 2])")
    }

    @Test func atlasSizeOutOfRangeIsRefused() {
        #expect(throws: RGBDError.self) { try MeshTexturing.texture(TriangleMesh(), views: [], options: TexturingOptions(side: 7)) }
    }
}

extension MeshTexturingTests {
    /// Every fifth view darkened to 0.75 (a frame exposed differently): the gains found
    /// from the overlaps bring those views back (gain 1/0.75), and the atlas at wall points
    /// still gives what the views saw before darkening.
    @Test func exposureDifferencesAreLeveled() throws {
        let scan = SyntheticScan(frameCount: 1440, colorWidth: 320, colorHeight: 240)
        var options = SceneFusionOptions()
        options.voxel = 0.02
        let fused = try FusionTests.fuse(scan, frames: stride(from: 0, to: 1440, by: 24), options: options)
        let mesh = try fused.simplified(MeshSimplification(targetTriangles: fused.faceCount / 10)).mesh
        var views = Self.views(scan, frames: stride(from: 0, to: 1440, by: 48))
        let darkened = Set(stride(from: 2, to: views.count, by: 5))
        for v in darkened {
            views[v].color.samples = views[v].color.samples.map { UInt8((Double($0) * 0.75).rounded()) }
        }
        let textured = try MeshTexturing.texture(mesh, views: views, options: TexturingOptions(side: 2048))
        let room = scan.room
        var fromDarkened: [Double] = [], others: [Double] = []
        for t in 0..<textured.surface.faceCount where textured.faceViews[t] >= 0 {
            let (a, b, c) = MeshTexturing.corners(textured.surface, t)
            guard [a, b, c].allSatisfy({ abs($0.x - 2.5) < 0.01 && $0.y > 0.3 && $0.y < 2.7 && abs($0.z) < 1.5 }) else { continue }
            let v = Int(textured.faceViews[t])
            let centre = (a + b + c) / 3, eye = views[v].pose.translation
            let toward = centre - eye
            let distance = (toward * toward).sum().squareRoot()
            guard let hit = room.cast(origin: eye, direction: toward / distance), abs(hit.t - distance) < 0.01 else { continue }
            var uv = SIMD2<Double>.zero
            for k in 0..<3 {
                let i = Int(textured.faces[3 * t + k])
                uv += SIMD2(Double(textured.uvs[2 * i]), Double(textured.uvs[2 * i + 1])) / 3
            }
            let atlas = textured.atlases[Int(textured.facePages[t])]
            let sampled = MeshTexturing.bilinear(atlas, uv * Double(atlas.width) - 0.5)
            let truth = SyntheticScan.shade(room, hit, direction: toward)
            for ch in 0..<3 {
                let d = abs(Double(sampled[ch]) - truth[ch])
                if darkened.contains(v) { fromDarkened.append(d) } else { others.append(d) }
            }
        }
        func median(_ x: [Double]) -> Double { x.isEmpty ? .nan : x.sorted()[x.count / 2] }
        let darkGains = darkened.compactMap { textured.gains[$0] }
        let otherGains = Set(views.indices).subtracting(darkened).compactMap { textured.gains[$0] }
        let darkValues = darkGains.flatMap { [$0.x, $0.y, $0.z] }, otherValues = otherGains.flatMap { [$0.x, $0.y, $0.z] }
        print("gains: darkened views \(darkValues.min() ?? .nan) to \(darkValues.max() ?? .nan), others \(otherValues.min() ?? .nan) to \(otherValues.max() ?? .nan); wall |texture − seen truth| median from darkened views \(median(fromDarkened)) (\(fromDarkened.count / 3) points), others \(median(others))")
        // Measured: darkened views' gains 1.259 to 1.348 (1/0.75 = 1.333), the others' 0.96 to
        // 1.02 (the head lamp's differences between views); the atlas against what the views
        // saw before darkening: median 1.23 levels from the darkened views (about 40 without
        // the gains), 3.05 from the others.
        #expect(!darkValues.isEmpty && darkValues.allSatisfy { abs($0 - 1 / 0.75) < 0.1 })
        #expect(otherValues.allSatisfy { abs($0 - 1) < 0.06 })
        #expect(fromDarkened.count > 60 && median(fromDarkened) <= 2 && median(others) <= 4)
    }
}

extension MeshTexturingTests {
    /// The synthetic room fused at 2 cm from 60 frames, simplified to a tenth, and 30 views.
    static func room() throws -> (scan: SyntheticScan, mesh: TriangleMesh, views: [TextureView]) {
        let scan = SyntheticScan(frameCount: 1440, colorWidth: 320, colorHeight: 240)
        var options = SceneFusionOptions()
        options.voxel = 0.02
        let fused = try FusionTests.fuse(scan, frames: stride(from: 0, to: 1440, by: 24), options: options)
        let mesh = try fused.simplified(MeshSimplification(targetTriangles: fused.faceCount / 10)).mesh
        return (scan, mesh, views(scan, frames: stride(from: 0, to: 1440, by: 48)))
    }

    /// Per seam vertex (a surface vertex with texels in charts of different views), the
    /// largest channel's range of its texels (bilinear at each chart's texture coordinate),
    /// with whether one of its charts is from a view in `marked`.
    static func seamJumps(_ textured: TexturedMesh, marked: Set<Int>) -> [(jump: Double, marked: Bool)] {
        var texels: [UInt32: [Int: (SIMD3<Double>, Int32)]] = [:]
        for t in 0..<textured.surface.faceCount where textured.faceViews[t] >= 0 {
            let atlas = textured.atlases[Int(textured.facePages[t])]
            for k in 0..<3 {
                let o = Int(textured.faces[3 * t + k])
                let uv = SIMD2(Double(textured.uvs[2 * o]), Double(textured.uvs[2 * o + 1]))
                texels[textured.surface.faces[3 * t + k], default: [:]][o] = (MeshTexturing.bilinearFloat(atlas, uv * Double(atlas.width) - 0.5), textured.faceViews[t])
            }
        }
        return texels.values.compactMap { charts in
            guard Set(charts.values.map(\.1)).count > 1 else { return nil }
            return (MeshTexturing.spread(charts.values.map(\.0)), charts.values.contains { marked.contains(Int($0.1)) })
        }
    }

    /// Every fifth view exposed differently, and unevenly (0.6 of the light at its left
    /// edge to 0.9 at its right: what one gain per view cannot level): across the atlas's
    /// seams next to those views' charts (a surface vertex's texels in each of its charts),
    /// the colors agree within a few levels with the seams leveled, and by less than half
    /// as well without.
    @Test func seamsAreLeveledAcrossFramesExposedDifferently() throws {
        var (_, mesh, views) = try Self.room()
        let darkened = Set(stride(from: 2, to: views.count, by: 5))
        for v in darkened {
            let image = views[v].color
            for y in 0..<image.height {
                for x in 0..<image.width {
                    let factor = 0.6 + 0.3 * Double(x) / Double(image.width - 1)
                    for ch in 0..<3 { views[v].color[x, y, ch] = UInt8((Double(image[x, y, ch]) * factor).rounded()) }
                }
            }
        }
        var options = TexturingOptions(side: 2048)
        let leveled = try MeshTexturing.texture(mesh, views: views, options: options)
        options.levelSeams = false
        let unleveled = try MeshTexturing.texture(mesh, views: views, options: options)
        func median(_ x: [Double]) -> Double { x.isEmpty ? .nan : x.sorted()[x.count / 2] }
        func p90(_ x: [Double]) -> Double { x.isEmpty ? .nan : x.sorted()[x.count * 9 / 10] }
        let with = Self.seamJumps(leveled, marked: darkened).filter(\.marked).map(\.jump)
        let without = Self.seamJumps(unleveled, marked: darkened).filter(\.marked).map(\.jump)
        print("seams next to the unevenly exposed views: \(with.count) vertices, jump median \(median(with)) (90 % \(p90(with))) levels leveled, \(median(without)) (90 % \(p90(without))) not; the library's own count \(leveled.seams)")
        // Measured: see docs/fuse.md.
        #expect(with.count > 200)
        #expect(median(with) <= 3 && p90(with) <= 10, "leveled: median \(median(with)), 90 % \(p90(with))")
        #expect(median(with) * 2 < median(without), "leveled \(median(with)), not \(median(without))")
    }

    /// An atlas side smaller than the charts need: they go into several atlases (scaled to
    /// fit one when a chart is larger than the side), every triangle's texture coordinates
    /// inside its atlas, and the wall points still within a few levels of what the views saw.
    @Test func chartsSpillIntoSeveralAtlases() throws {
        let (scan, mesh, views) = try Self.room()
        let textured = try MeshTexturing.texture(mesh, views: views, options: TexturingOptions(side: 256))
        #expect(textured.atlases.count > 1)
        #expect(textured.atlases.allSatisfy { $0.width == 256 && $0.height == 256 })
        #expect(textured.facePages.allSatisfy { $0 >= 0 && Int($0) < textured.atlases.count })
        #expect(Set(textured.facePages).count == textured.atlases.count)
        #expect(textured.uvs.allSatisfy { $0 > 0 && $0 < 1 })
        var differences: [Double] = []
        for t in 0..<textured.surface.faceCount where textured.faceViews[t] >= 0 {
            let (a, b, c) = MeshTexturing.corners(textured.surface, t)
            guard [a, b, c].allSatisfy({ abs($0.x - 2.5) < 0.01 && $0.y > 0.3 && $0.y < 2.7 && abs($0.z) < 1.5 }) else { continue }
            let v = Int(textured.faceViews[t])
            let centre = (a + b + c) / 3, eye = views[v].pose.translation
            let toward = centre - eye
            let distance = (toward * toward).sum().squareRoot()
            guard let hit = scan.room.cast(origin: eye, direction: toward / distance), abs(hit.t - distance) < 0.01 else { continue }
            var uv = SIMD2<Double>.zero
            for k in 0..<3 {
                let i = Int(textured.faces[3 * t + k])
                uv += SIMD2(Double(textured.uvs[2 * i]), Double(textured.uvs[2 * i + 1])) / 3
            }
            let atlas = textured.atlases[Int(textured.facePages[t])]
            let sampled = MeshTexturing.bilinear(atlas, uv * Double(atlas.width) - 0.5)
            let truth = SyntheticScan.shade(scan.room, hit, direction: toward)
            for ch in 0..<3 { differences.append(abs(Double(sampled[ch]) - truth[ch])) }
        }
        let sorted = differences.sorted()
        let median = sorted.isEmpty ? .nan : sorted[sorted.count / 2]
        print("several atlases: \(textured.atlases.count) of 256 px at scale \(textured.scale); wall samples \(differences.count / 3), median \(median) levels")
        #expect(differences.count > 300 && median <= 3, "median \(median)")
    }

    /// Atlases that would take more memory than allowed are refused before any color is
    /// read, pointing at the memory budget.
    @Test func atlasesBeyondTheMemoryBudgetAreRefused() throws {
        let (_, mesh, views) = try Self.room()
        do {
            _ = try MeshTexturing.Layout(mesh, views: views, options: TexturingOptions(side: 2048, memoryBudget: 1 << 20))
            Issue.record("not refused")
        } catch let error as RGBDError {
            #expect(error.argument == .memoryBudget && error.message.contains("memory"), "\(error)")
        }
    }

    /// Triangles split so that a frame sees them whole keep the surface: the same area,
    /// the same Euler characteristic, no edge of more than two triangles.
    @Test func splittingKeepsTheSurface() throws {
        let (_, mesh, views) = try Self.room()
        let textured = try MeshTexturing.texture(mesh, views: views, options: TexturingOptions(side: 2048))
        let surface = textured.surface
        #expect(textured.splitTriangles > 0 && surface.faceCount > mesh.faceCount)
        func area(_ m: TriangleMesh) -> Double {
            (0..<m.faceCount).reduce(0) { sum, t in
                let (a, b, c) = MeshTexturing.corners(m, t)
                let n = MeshTexturing.cross(b - a, c - a)
                return sum + (n * n).sum().squareRoot() / 2
            }
        }
        func edges(_ m: TriangleMesh) -> [UInt64: Int] {
            var count: [UInt64: Int] = [:]
            for t in 0..<m.faceCount {
                for k in 0..<3 {
                    let a = UInt64(m.faces[3 * t + k]), b = UInt64(m.faces[3 * t + (k + 1) % 3])
                    count[min(a, b) << 32 | max(a, b), default: 0] += 1
                }
            }
            return count
        }
        let before = edges(mesh), after = edges(surface)
        #expect(abs(area(surface) - area(mesh)) < 1e-6 * area(mesh))
        #expect(mesh.vertexCount - before.count + mesh.faceCount == surface.vertexCount - after.count + surface.faceCount)
        #expect(after.values.filter { $0 > 2 }.count == before.values.filter { $0 > 2 }.count)
    }
}
