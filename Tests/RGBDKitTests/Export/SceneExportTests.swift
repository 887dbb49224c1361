import Foundation
import Testing
@testable import RGBDOutput
@testable import RGBDKit
import RGBDSynth

/// The shared core of `rgbd export` against analytic truth: frame selection, the
/// pixel-centre-aware intrinsics of shrunk and centred images (checked on images whose
/// pixel values are their own coordinates), depth resampled onto the color grid (exact
/// on planes), the blur measure, and the staged output folder. The layouts themselves are
/// checked by their tools' readers in Tests/python/test_export.py.
@Suite struct SceneExportTests {
    @Test func everyAndMaxFramesSpreadEvenly() {
        #expect(FrameSelection().positions(count: 5) == [0, 1, 2, 3, 4])
        #expect(FrameSelection(every: 3).positions(count: 10) == [0, 3, 6, 9])
        #expect(FrameSelection(maxFrames: 3).positions(count: 9) == [0, 4, 8])
        #expect(FrameSelection(maxFrames: 4).positions(count: 100) == [0, 33, 66, 99])
        #expect(FrameSelection(maxFrames: 1).positions(count: 7) == [0])
        #expect(FrameSelection(maxFrames: 50).positions(count: 7) == [0, 1, 2, 3, 4, 5, 6])
        #expect(FrameSelection(every: 2, maxFrames: 3).positions(count: 11) == [0, 6, 10])   // 2.5 rounds up
    }

    @Test func sharpestTakesTheBestOfEachWindow() {
        let scores: [Double] = [1, 5, 2, 9, 3, 3, 0, 4, 1, 7]
        #expect(FrameSelection(every: 3, sharpest: true).windows(count: 10) == [0..<3, 3..<6, 6..<9, 9..<10])
        #expect(FrameSelection(every: 3, sharpest: true).sharpestPositions(scores: scores) == [1, 3, 7, 9])
        // Two equal windows over the whole scan; ties keep the earlier frame.
        #expect(FrameSelection(maxFrames: 2, sharpest: true).sharpestPositions(scores: scores) == [3, 9])
    }

    @Test func selectionRefusesNonsense() {
        #expect(throws: RGBDError.self) { try FrameSelection(every: 0).validate() }
        #expect(throws: RGBDError.self) { try FrameSelection(maxFrames: 0).validate() }
    }

    /// An image whose red channel is its column and green its row (in steps of 1/4
    /// px so block means stay whole), to read where each output pixel came from.
    static func coordinates(width: Int, height: Int) -> ColorImage {
        var samples = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                samples[(y * width + x) * 3] = UInt8(x * 4)
                samples[(y * width + x) * 3 + 1] = UInt8(y * 4)
            }
        }
        return ColorImage(width: width, height: height, channels: 3, samples: samples)
    }

    @Test(arguments: [2, 3, 4]) func shrunkIntrinsicsFollowThePixelCentres(factor: Int) {
        let image = Self.coordinates(width: 60, height: 45)
        let k = Intrinsics(fx: 50, fy: 52, cx: 29.3, cy: 21.7, width: 60, height: 45)
        let shrunk = ExportFrameImages.shrink(image, by: factor)
        let k2 = ExportCamera.shrunk(k, by: factor)
        #expect(shrunk.width == 60 / factor && shrunk.height == 45 / factor)
        #expect(k2.width == shrunk.width && k2.height == shrunk.height)
        // Output pixel n holds the mean source column, which must be where the camera
        // puts the ray of n: source u = fx·X/Z + cx and output n = fx'·X/Z + cx'.
        for n in [0, 3, shrunk.width - 1] {
            let meanColumn = Double(shrunk[n, 0, 0]) / 4
            let ray = (Double(n) - k2.cx) / k2.fx
            #expect(abs(ray * k.fx + k.cx - meanColumn) < 0.13)
        }
        for n in [0, shrunk.height - 1] {
            let meanRow = Double(shrunk[0, n, 1]) / 4
            #expect(abs((Double(n) - k2.cy) / k2.fy * k.fy + k.cy - meanRow) < 0.13)
        }
        // The naive scaling (c·s) is half a pixel off for factor 2, a whole one for 3.
        let naive = k.cx / Double(factor)
        #expect(abs(naive - k2.cx) >= 0.24)
    }

    @Test func centredCropPutsThePrincipalPointInTheMiddle() {
        let image = Self.coordinates(width: 50, height: 40)
        let k = Intrinsics(fx: 40, fy: 40, cx: 27.3, cy: 18.6, width: 50, height: 40)
        let halfWidth = ExportCamera.centredHalfSize(principal: k.cx, size: k.width)
        let halfHeight = ExportCamera.centredHalfSize(principal: k.cy, size: k.height)
        #expect(halfWidth == 22 && halfHeight == 19)   // 50 − 27.8 = 22.2; 18.6 + 0.5 = 19.1
        let camera = ExportCamera.centred(k, downscale: 1, width: 2 * halfWidth, height: 2 * halfHeight)
        let out = ExportFrameImages.color(image, camera: camera)
        #expect(out.width == 44 && out.height == 38)
        #expect(camera.intrinsics.cx == 21.5 && camera.intrinsics.cy == 18.5)
        // Output pixel x shows source column x + shift: the ray through the centre of the
        // output is the ray through the principal point of the source.
        for x in [0, 21, 43] {
            let sourceColumn = Double(out[x, 5, 0]) / 4
            let expected = (Double(x) - camera.intrinsics.cx) / camera.intrinsics.fx * k.fx + k.cx
            #expect(abs(sourceColumn - expected) < 0.13)
        }
        for y in [0, 37] {
            let sourceRow = Double(out[5, y, 1]) / 4
            #expect(abs(sourceRow - ((Double(y) - camera.intrinsics.cy) + k.cy)) < 0.13)
        }
    }

    /// A tilted plane seen by a 32×24 depth camera; resampled onto a 160×120 color grid
    /// (a different principal point), the depth is the plane's own at every color pixel.
    @Test func depthOnTheColorGridIsExactOnPlanes() {
        let depthK = Intrinsics(fx: 28, fy: 28, cx: 15.7, cy: 11.2, width: 32, height: 24)
        let colorK = Intrinsics(fx: 140, fy: 140, cx: 80.9, cy: 58.3, width: 160, height: 120)
        // The plane n·p = d: depth along the ray (u, v) is d / (n·ray).
        let n = SIMD3<Double>(0.3, -0.2, 1), d = 2.0
        func depth(_ k: Intrinsics, _ u: Double, _ v: Double) -> Double {
            let ray = SIMD3((u - k.cx) / k.fx, (v - k.cy) / k.fy, 1)
            return d / (n * ray).sum()
        }
        var samples = [Float](repeating: 0, count: 32 * 24)
        for v in 0..<24 { for u in 0..<32 { samples[v * 32 + u] = Float(depth(depthK, Double(u), Double(v))) } }
        samples[5 * 32 + 7] = .nan   // a hole
        let map = DepthMap(width: 32, height: 24, channels: 1, samples: samples)
        let units = ExportFrameImages.depth(map, confidence: nil, minConfidence: 0, from: depthK, to: colorK, scale: 5000)
        var checked = 0
        for y in 0..<120 {
            for x in 0..<160 {
                let value = units[y * 160 + x]
                let u = (Double(x) - colorK.cx) * depthK.fx / colorK.fx + depthK.cx
                let v = (Double(y) - colorK.cy) * depthK.fy / colorK.fy + depthK.cy
                let nearHole = abs(u - 7) < 1 && abs(v - 5) < 1
                let outside = u < -0.5 || u >= 31.5 || v < -0.5 || v >= 23.5
                if outside { #expect(value == 0); continue }
                // The border half-pixel takes the edge pixel's depth (no extrapolation).
                let border = u < 0 || u > 31 || v < 0 || v > 23
                if border { #expect(value > 0); continue }
                if nearHole { continue }
                #expect(abs(Double(value) / 5000 - depth(colorK, Double(x), Double(y))) <= 0.5 / 5000 + 1e-6)
                checked += 1
            }
        }
        #expect(checked > 14000)
    }

    /// Confidence below the threshold is unknown, and two surfaces are never blended:
    /// every pixel is one of the two depths.
    @Test func depthEdgesAreNotBlended() {
        let k = Intrinsics(fx: 10, fy: 10, cx: 3.5, cy: 3.5, width: 8, height: 8)
        var samples = [Float](repeating: 1, count: 64), confidence = [UInt8](repeating: 2, count: 64)
        for y in 0..<8 { for x in 4..<8 { samples[y * 8 + x] = 3 } }
        confidence[0] = 1
        let map = DepthMap(width: 8, height: 8, channels: 1, samples: samples)
        let big = Intrinsics(fx: 40, fy: 40, cx: 15.5, cy: 15.5, width: 32, height: 32)
        let units = ExportFrameImages.depth(map, confidence: ImageBuffer(width: 8, height: 8, channels: 1, samples: confidence),
                                            minConfidence: 2, from: k, to: big, scale: 1000)
        #expect(Set(units).isSubset(of: [0, 1000, 3000]))
        #expect(units[0] == 0 && units[32 * 31 + 31] == 3000 && units[32 * 20 + 2] == 1000)
    }

    /// The depth resampling before it was arranged per row, column and depth pixel:
    /// every output pixel worked out on its own. The arranged one must give the same
    /// values, bit for bit.
    static func directDepth(_ depth: DepthMap, confidence: ImageBuffer<UInt8>?, minConfidence: UInt8,
                            from source: Intrinsics, to camera: Intrinsics, scale: Double, maxStep: Float = 0.05) -> [UInt16] {
        let dw = depth.width, dh = depth.height
        let width = camera.width, height = camera.height
        var inverse = [Float](repeating: 0, count: dw * dh)
        for i in 0..<(dw * dh) {
            let z = depth.samples[i]
            guard z.isFinite, z > 0 else { continue }
            if let confidence, confidence.samples[i] < minConfidence { continue }
            inverse[i] = 1 / z
        }
        let sx = source.fx / camera.fx, sy = source.fy / camera.fy
        let columns = (0..<width).map { x in (Double(x) - camera.cx) * sx + source.cx }
        var out = [UInt16](repeating: 0, count: width * height)
        let ratio = 1 + maxStep
        for y in 0..<height {
            let v = (Double(y) - camera.cy) * sy + source.cy
            guard v >= -0.5, v < Double(dh) - 0.5 else { continue }
            let v0 = min(max(Int(v.rounded(.down)), 0), dh - 1), v1 = min(v0 + 1, dh - 1)
            let b = Float(min(max(v - Double(v0), 0), 1))
            let vn = min(max(Int(v.rounded()), 0), dh - 1)
            for x in 0..<width {
                let u = columns[x]
                guard u >= -0.5, u < Double(dw) - 0.5 else { continue }
                let u0 = min(max(Int(u.rounded(.down)), 0), dw - 1), u1 = min(u0 + 1, dw - 1)
                let a = Float(min(max(u - Double(u0), 0), 1))
                let q00 = inverse[v0 * dw + u0], q01 = inverse[v0 * dw + u1]
                let q10 = inverse[v1 * dw + u0], q11 = inverse[v1 * dw + u1]
                let lo = min(min(q00, q01), min(q10, q11)), hi = max(max(q00, q01), max(q10, q11))
                var q: Float
                if lo > 0 && hi <= lo * ratio {
                    q = (q00 * (1 - a) + q01 * a) * (1 - b) + (q10 * (1 - a) + q11 * a) * b
                } else {
                    q = inverse[vn * dw + min(max(Int(u.rounded()), 0), dw - 1)]
                }
                guard q > 0 else { continue }
                let units = (Double(1 / q) * scale).rounded()
                if units >= 1 && units <= 65535 { out[y * width + x] = UInt16(units) }
            }
        }
        return out
    }

    /// The color grids an export resamples onto: the recorded one, shrunk ones, a
    /// centred crop, and grids reaching past the depth map's edges (off-centre, wider).
    static func exportGrids(_ color: Intrinsics) -> [Intrinsics] {
        let centred = ExportCamera.centred(color, downscale: 1,
                                           width: 2 * ExportCamera.centredHalfSize(principal: color.cx, size: color.width),
                                           height: 2 * ExportCamera.centredHalfSize(principal: color.cy, size: color.height))
        return [color, ExportCamera.shrunk(color, by: 2), ExportCamera.shrunk(color, by: 3), centred.intrinsics,
                Intrinsics(fx: color.fx * 0.9, fy: color.fy * 1.1, cx: color.cx + 37.3, cy: color.cy - 21.6,
                           width: color.width + 40, height: color.height - 10)]
    }

    /// On the synthetic scan's depth (planes, box edges, holes, low confidence) and on
    /// random depth (noise, steps, NaN, zeros, depths whose inverse overflows, every
    /// confidence level), the depth on the color grid is the direct evaluation's, value
    /// for value, with the AVX2 kernel and without.
    @Test func arrangedDepthResamplingEqualsTheDirectOne() {
        let scan = SyntheticScan(frameCount: 40, colorWidth: 480, colorHeight: 360, depthWidth: 256, depthHeight: 192)
        let k = scan.colorCamera(), d = scan.depthCamera()
        let color = Intrinsics(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: k.width, height: k.height)
        let depthK = Intrinsics(fx: d.fx, fy: d.fy, cx: d.cx, cy: d.cy, width: d.width, height: d.height)
        var maps: [(DepthMap, ImageBuffer<UInt8>)] = [0, 13, 31].map {
            let frame = scan.render(frame: $0, color: false)
            return (frame.depth, frame.confidence)
        }
        var generator = SeededGenerator(seed: 24)
        let count = 256 * 192
        var noisy = [Float](repeating: 0, count: count), levels = [UInt8](repeating: 0, count: count)
        for i in 0..<count {
            // Mostly one of two surfaces with a little noise (both branches taken),
            // sometimes nothing or nonsense.
            let surface: Float = (i / 256 + i % 256) % 23 < 11 ? 1.2 : 3.7
            let r = Int.random(in: 0..<100, using: &generator)
            noisy[i] = r < 4 ? .nan : r < 7 ? 0 : r < 8 ? -1 : r < 9 ? (i % 2 == 0 ? 1e-30 : .leastNonzeroMagnitude)
                : surface * Float.random(in: 0.97...1.03, using: &generator)
            levels[i] = UInt8.random(in: 0...2, using: &generator)
        }
        maps.append((DepthMap(width: 256, height: 192, channels: 1, samples: noisy),
                     ImageBuffer(width: 256, height: 192, channels: 1, samples: levels)))
        var compared = 0, nonzero = 0
        for (map, confidence) in maps {
            for grid in Self.exportGrids(color) {
                for (scale, minimum) in [(1000.0, UInt8(2)), (5000.0, UInt8(0))] {
                    let direct = Self.directDepth(map, confidence: confidence, minConfidence: minimum,
                                                  from: depthK, to: grid, scale: scale)
                    for avx2 in Set([false, VectorKernels.avx2]) {
                        let arranged = ExportFrameImages.depth(map, confidence: confidence, minConfidence: minimum,
                                                               from: depthK, to: grid, scale: scale, avx2: avx2)
                        let differing = zip(arranged, direct).count { $0 != $1 }
                        #expect(arranged.count == direct.count && differing == 0, "AVX2 \(avx2): \(differing) values differ")
                    }
                    compared += direct.count
                    nonzero += direct.count { $0 != 0 }
                }
            }
        }
        #expect(nonzero > compared / 3)
        // Depths beyond 65.535 m (1000 units per meter) or below half a unit are unknown
        // alike; exactly half a unit rounds up.
        let far = DepthMap(width: 2, height: 2, channels: 1, samples: [70, 65.5355, 0.0005, 0.000499])
        let one = Intrinsics(fx: 1, fy: 1, cx: 0.5, cy: 0.5, width: 2, height: 2)
        #expect(ExportFrameImages.depth(far, confidence: nil, minConfidence: 0, from: one, to: one, scale: 1000)
                == Self.directDepth(far, confidence: nil, minConfidence: 0, from: one, to: one, scale: 1000))
    }

    @Test func blurLowersSharpness() throws {
        let scan = SyntheticScan(frameCount: 1, colorWidth: 320, colorHeight: 240)
        let sharp = scan.render(frame: 0).color
        var blurred = sharp
        // A 3×3 box blur.
        for y in 1..<(sharp.height - 1) {
            for x in 1..<(sharp.width - 1) {
                for c in 0..<3 {
                    var sum = 0
                    for dy in -1...1 { for dx in -1...1 { sum += Int(sharp[x + dx, y + dy, c]) } }
                    blurred[x, y, c] = UInt8(sum / 9)
                }
            }
        }
        #expect(ExportFrameImages.sharpness(sharp) > 2 * ExportFrameImages.sharpness(blurred))
    }

    @Test func stagedDirectoryAppearsWholeOrNotAtAll() throws {
        let parent = try SceneTests.directory()
        let target = parent + "/out"
        do {
            let folder = try StagedDirectory(destination: target, replacing: false)
            try folder.createDirectory("a")
            try folder.write("a/file.txt", text: "x")
            #expect(!FileManager.default.fileExists(atPath: target))
            // Released without commit: nothing left.
        }
        #expect(try FileSystem.contentsOfDirectory(parent).isEmpty)
        let folder = try StagedDirectory(destination: target, replacing: false)
        try folder.write("b.txt", text: "y")
        try folder.commit()
        #expect(try FileSystem.contentsOfDirectory(target) == [StagedDirectory.manifestName, "b.txt"])
        // Not empty now: refused, unless replacing, which swaps it whole.
        #expect(throws: RGBDError.self) { _ = try StagedDirectory(destination: target, replacing: false) }
        let again = try StagedDirectory(destination: target, replacing: true)
        try again.write("c.txt", text: "z")
        try again.commit()
        #expect(try FileSystem.contentsOfDirectory(target) == [StagedDirectory.manifestName, "c.txt"])
        #expect(try FileSystem.contentsOfDirectory(parent) == ["out"])
        // Something it did not write: never replaced, even when replacing.
        try "mine".write(toFile: target + "/mine.txt", atomically: false, encoding: .utf8)
        #expect(throws: RGBDError.self) { _ = try StagedDirectory(destination: target, replacing: true) }
        // Nor an input, or a folder holding one, however the path is spelled.
        #expect(throws: RGBDError.self) {
            _ = try StagedDirectory(destination: target + "/..", replacing: true, inputs: [target + "/mine.txt"])
        }
        #expect(try FileSystem.contentsOfDirectory(parent) == ["out"])
        // A file is never a destination.
        try "keep".write(toFile: parent + "/file", atomically: false, encoding: .utf8)
        #expect(throws: RGBDError.self) { _ = try StagedDirectory(destination: parent + "/file", replacing: true) }
        #expect(try String(contentsOfFile: parent + "/file", encoding: .utf8) == "keep")
    }
}
