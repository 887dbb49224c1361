import Testing
@testable import RGBDKit
import RGBDSynth

/// Pixel-aligned pairs (`rgbd rectify --align-to`) against the synthetic scene's ground
/// truth: the depth rectified onto the color grid, the color averaged onto the depth grid.
@Suite struct AlignedCaptureTests {
    /// The small scene (1008×756 color, 256×192 depth with a hole patch) as a capture.
    static let capture: Capture = {
        let scene = Scenes.small
        return Capture(jsonPath: "memory/small.json", imagePath: "memory/small.jpg",
                       calibration: scene.synthetic.calibration, depth: scene.depth, color: scene.color)
    }()

    /// The depth map rectified onto the color grid.
    static let upsampled: RectifiedCapture = {
        do { return try capture.rectified(alignedTo: .color) } catch { fatalError("\(error)") }
    }()

    /// True depths along rays through the color grid within one depth pixel of `(x, y)`
    /// (a 5×5 pattern, half a depth pixel apart).
    static func truthsAround(_ x: Int, _ y: Int, intrinsics k: Intrinsics, scale: Double) -> [Double] {
        var truths: [Double] = []
        for j in -2...2 {
            for i in -2...2 {
                truths.append(Scenes.small.synthetic.trueDepth(u: Double(x) + Double(i) * scale / 2,
                                                               v: Double(y) + Double(j) * scale / 2, intrinsics: k))
            }
        }
        return truths
    }

    @Test func colorAlignmentSharesTheColorGrid() {
        let pair = Self.upsampled
        let k = Scenes.small.colorCalibration.intrinsics
        #expect(pair.depth.width == 1008 && pair.depth.height == 756)
        #expect(pair.color.width == 1008 && pair.color.height == 756)
        #expect(pair.colorIntrinsics == k && pair.depthIntrinsics == k)
        // The color is the ordinary rectified color.
        #expect(pair.color.samples == Rectifier().rectify(Scenes.small.color,
                                                          distortion: Scenes.small.colorCalibration.distortion).samples)
    }

    @Test func upsampledWallDepthIsRightToTheMillimeter() {
        let depth = Self.upsampled.depth
        let k = Self.upsampled.depthIntrinsics
        let scale = Double(depth.width) / Double(Scenes.small.depth.width)
        var checked = 0, worst = 0.0
        for y in Swift.stride(from: 0, to: depth.height, by: 3) {
            for x in Swift.stride(from: 0, to: depth.width, by: 3) {
                // Pixels whose whole neighborhood (a depth pixel either way) is wall.
                let truths = Self.truthsAround(x, y, intrinsics: k, scale: scale)
                guard truths.allSatisfy({ $0 == Scenes.small.synthetic.scene.wallZ }) else { continue }
                let d = Double(depth[x, y])
                guard d.isFinite else { continue }
                worst = max(worst, abs(d - Scenes.small.synthetic.scene.wallZ))
                checked += 1
            }
        }
        #expect(checked > 30000)
        #expect(worst <= 0.001, "upsampled wall depth off by \(worst) m")
    }

    /// Every upsampled depth is the true depth of a surface within a depth pixel, never a
    /// blend of a foreground and a background; the same check fails for plain bilinear
    /// upsampling.
    @Test func upsamplingInventsNoDepthAcrossEdges() {
        let scene = Scenes.small
        let k = scene.colorCalibration.intrinsics
        let scale = Double(scene.color.width) / Double(scene.depth.width)
        func flying(_ depth: DepthMap) -> (count: Int, silhouette: Int, examples: [(Int, Int, Float)]) {
            var count = 0, silhouette = 0
            var examples: [(Int, Int, Float)] = []
            for y in 0..<depth.height {
                for x in 0..<depth.width {
                    let d = depth[x, y]
                    guard d.isFinite else { continue }
                    let truths = Self.truthsAround(x, y, intrinsics: k, scale: scale)
                    guard let lo = truths.min(), let hi = truths.max(), hi - lo > 0.5 else { continue }
                    silhouette += 1
                    // Near a silhouette: the value must be one of the depths around it
                    // (within 1 % for the steep floor), not something in between.
                    if !truths.contains(where: { abs(Double(d) - $0) <= max(0.002, 0.01 * $0) }) {
                        count += 1
                        if examples.count < 5 { examples.append((x, y, d)) }
                    }
                }
            }
            return (count, silhouette, examples)
        }
        let edgeAware = flying(Self.upsampled.depth)
        #expect(edgeAware.silhouette > 1000, "the scene must have depth edges for this test to mean anything")
        #expect(edgeAware.count == 0, "\(edgeAware.count) flying depths, first: \(edgeAware.examples)")
        let blended = Rectifier(maxRelativeDepthStep: 10).rectify(
            scene.depth, distortion: scene.depthCalibration.distortion, toWidth: scene.color.width,
            height: scene.color.height)
        #expect(flying(blended).count > 100, "plain bilinear upsampling must fail this check")
    }

    @Test func holesStayHolesAtTheColorSize() {
        let scene = Scenes.small
        let depth = Self.upsampled.depth
        let distortion = scene.depthCalibration.distortion
        let rx = Double(scene.depth.width) / Double(depth.width), ry = Double(scene.depth.height) / Double(depth.height)
        var insideHole = 0, filledHoles = 0, holesElsewhere = 0
        for y in 0..<depth.height {
            for x in 0..<depth.width {
                // Where color pixel (x, y) lies in the captured depth map.
                let q = distortion.apply(to: SIMD2(Double(x) * rx, Double(y) * ry))
                let nx = Int((q.x + 0.5).rounded(.down)), ny = Int((q.y + 0.5).rounded(.down))
                let sourceIsHole = Scenes.holeX.contains(nx) && Scenes.holeY.contains(ny)
                let interior = q.x > 1 && q.y > 1 && q.x < Double(scene.depth.width - 2)
                    && q.y < Double(scene.depth.height - 2)
                if sourceIsHole {
                    if !depth[x, y].isNaN { filledHoles += 1 }
                    insideHole += 1
                } else if interior && depth[x, y].isNaN {
                    holesElsewhere += 1
                }
            }
        }
        // The hole (10×6 depth pixels) covers about 40×24 color pixels.
        #expect(insideHole > 600)
        #expect(filledHoles == 0)
        #expect(holesElsewhere == 0)
    }

    @Test func atTheDepthMapsOwnSizeItIsTheOrdinaryRectification() {
        let scene = Scenes.small
        let distortion = scene.depthCalibration.distortion
        let native = Rectifier().rectify(scene.depth, distortion: distortion)
        #expect(identicalBits(Rectifier().rectify(scene.depth, distortion: distortion, toWidth: 256, height: 192).samples,
                              native.samples))
        // Parallel equals serial at another size.
        #expect(identicalBits(Rectifier(scheduler: .serial).rectify(scene.depth, distortion: distortion, toWidth: 331,
                                                                    height: 250).samples,
                              Rectifier().rectify(scene.depth, distortion: distortion, toWidth: 331, height: 250).samples))
    }

    /// Aligned to the depth map: the color of depth pixel (u, v) is the scene's color
    /// averaged over the pixel's footprint in the color image (`rgbd cloud`'s colors).
    @Test func depthAlignmentAveragesTheTrueColorOverFootprints() throws {
        let scene = Scenes.small
        let pair = try Self.capture.rectified(alignedTo: .depth)
        let k = scene.depthCalibration.intrinsics
        #expect(pair.color.width == 256 && pair.color.height == 192)
        #expect(pair.colorIntrinsics == k && pair.depthIntrinsics == k)
        #expect(identicalBits(pair.depth.samples,
                              Rectifier().rectify(scene.depth, distortion: scene.depthCalibration.distortion).samples))
        // The same values as the footprint average of the full-size rectified color.
        let full = Rectifier().rectify(scene.color, distortion: scene.colorCalibration.distortion)
        #expect(pair.color.samples == full.areaAverage(toWidth: 256, height: 192).samples)

        // Ground truth: the mean of the scene's colors seen by the color pixels whose
        // centers lie in the footprint [u·s − s/2, u·s + s/2) × [v·s − s/2, v·s + s/2).
        let kc = scene.colorCalibration.intrinsics
        let sx = Double(scene.color.width) / 256, sy = Double(scene.color.height) / 192
        var total = 0.0, count = 0, worst = 0.0
        for v in Swift.stride(from: 4, to: 188, by: 3) {
            for u in Swift.stride(from: 4, to: 252, by: 3) {
                let x0 = Int((Double(u) * sx - sx / 2).rounded(.up)), x1 = Int((Double(u) * sx + sx / 2).rounded(.up))
                let y0 = Int((Double(v) * sy - sy / 2).rounded(.up)), y1 = Int((Double(v) * sy + sy / 2).rounded(.up))
                var sum = SIMD3<Double>.zero
                for y in y0..<y1 {
                    for x in x0..<x1 {
                        sum += scene.synthetic.scene.color((Double(x) - kc.cx) / kc.fx, (Double(y) - kc.cy) / kc.fy,
                                                           pixelAngle: 1 / kc.fx)
                    }
                }
                let truth = sum / Double((x1 - x0) * (y1 - y0))
                for c in 0..<3 {
                    let e = abs(Double(pair.color[u, v, c]) - truth[c])
                    total += e
                    worst = max(worst, e)
                    count += 1
                }
            }
        }
        let mean = total / Double(count)
        #expect(count > 15000)
        // Rounding to 8 bits, the render's own rounding and the bilinear interpolation
        // of one-pixel-wide edges.
        #expect(mean < 1.0, "mean color error \(mean) levels")
        #expect(worst < 24, "worst color error \(worst) levels")
    }

    @Test func depthAlignmentNeedsADepthMapNoLargerThanTheColor() {
        let scene = Scenes.small
        let tiny = ColorImage(width: 200, height: 150, channels: 3, repeating: 90)
        let capture = Capture(jsonPath: "memory/tiny.json", imagePath: "memory/tiny.jpg",
                              calibration: scene.synthetic.calibration, depth: scene.depth, color: tiny)
        #expect {
            _ = try capture.rectified(alignedTo: .depth)
        } throws: { error in
            guard let error = error as? RGBDError else { return false }
            return error.file == "memory/tiny.json" && error.message.contains("larger than the image")
        }
        // Aligning to the (smaller) color grid still works.
        #expect((try? capture.rectified(alignedTo: .color))?.depth.width == 200)
    }
}
