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
