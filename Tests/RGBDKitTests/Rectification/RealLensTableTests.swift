import Testing
@testable import RGBDKit
import RGBDSynth

/// Ground truth with a lens table shaped like real ones: positive (pincushion: near the
/// corners the rectified image's source lies outside the photo), not monotonic, a first
/// entry that is not 0, and a reference size a few pixels off the photo's (3088×2316
/// for a 3088×2320 photo, here at a quarter of the size: 772×580 against 772×579).
@Suite struct RealLensTableTests {
    static let table = SyntheticCapture.realisticPincushionTable

    /// The capture: reference 3088×2316, color 772×580 (one row more than the scaled
    /// reference, as 2320 is four more than 2316), depth 256×192.
    static let rendered: (synthetic: SyntheticCapture, color: ColorImage, depth: DepthMap) = {
        let calibration = SyntheticCapture.calibration(lookupTable: table, referenceWidth: 3088, referenceHeight: 2316)
        let synthetic = SyntheticCapture(colorWidth: 772, colorHeight: 580, depthWidth: 256, depthHeight: 192,
                                         calibration: calibration)
        return (synthetic, synthetic.renderColor(supersampling: 2), synthetic.renderDepth())
    }()

    static var colorCalibration: ImageCalibration { rendered.synthetic.calibration.scaled(toWidth: 772, height: 580) }
    static var depthCalibration: ImageCalibration { rendered.synthetic.calibration.scaled(toWidth: 256, height: 192) }

    @Test func theTableHasTheShapeOfARealOne() {
        #expect(Self.table.count == 42)
        #expect(Self.table[0] != 0 && Self.table.allSatisfy { $0 > 0 })
        #expect(zip(Self.table, Self.table.dropFirst()).contains { $1 < $0 }, "not monotonic")
        #expect(abs(Self.table[41] - 0.03) < 1e-7)
        // The reference differs from the photo by a fraction of a percent in aspect only:
        // scaled per axis, no warning.
        let calibration = Self.rendered.synthetic.calibration
        #expect(calibration.referenceSize == (3088, 2316))
        #expect(calibration.aspectMismatch(width: 3088, height: 2320) < 0.01)
        let k = Self.colorCalibration.intrinsics
        #expect(k.fx == calibration.intrinsics.fx * 772 / 3088 && k.fy == calibration.intrinsics.fy * 580 / 2316)
        #expect(k.fx != k.fy)
    }

    /// The radius after distortion, `r·(1 + mag(r))`, rises strictly even where the table
    /// dips, so every distorted point has exactly one rectified source: the numerical
    /// inverse the synthetic images are made with is well defined.
    @Test func theDistortedRadiusRisesStrictly() {
        for distortion in [Self.colorCalibration.distortion, Self.depthCalibration.distortion] {
            var previous = -1.0
            for k in 0...20000 {
                let r = Double(k) / 20000 * 1.2 * distortion.maxRadius
                let distorted = r * (1 + distortion.magnification(atRadius: r))
                #expect(distorted > previous, "falls at r = \(r)")
                previous = distorted
            }
        }
    }

    /// `LensDistortion.invert`, which renders the ground truth, against bisection on the
    /// radius (an independent solver) and by applying the table again.
    @Test func numericalInverseRoundTripsWithANonMonotonicTable() {
        for distortion in [Self.colorCalibration.distortion, Self.depthCalibration.distortion] {
            let c = distortion.center
            func distortedRadius(_ r: Double) -> Double { r * (1 + distortion.magnification(atRadius: r)) }
            var worstApply = 0.0, worstBisection = 0.0, checked = 0
            let step = distortion.maxRadius / 97
            for iy in -10...Int(1.3 * distortion.maxRadius / step) {
                for ix in -10...Int(1.3 * distortion.maxRadius / step) {
                    let q = c + SIMD2(Double(ix) * step * 0.83 + 0.37, Double(iy) * step * 0.61 - 0.21)
                    let p = distortion.invert(q)
                    let back = distortion.apply(to: p)
                    worstApply = max(worstApply, abs(back.x - q.x), abs(back.y - q.y))
                    // Bisection for ρ with ρ·(1 + mag(ρ)) = R, then p = c + (q − c)·ρ/R.
                    let v = q - c
                    let R = (v * v).sum().squareRoot()
                    var lo = 0.0, hi = 2 * R + 1
                    for _ in 0..<200 {
                        let mid = (lo + hi) / 2
                        if distortedRadius(mid) < R { lo = mid } else { hi = mid }
                    }
                    let expected = c + v * ((lo + hi) / 2 / R)
                    worstBisection = max(worstBisection, abs(expected.x - p.x), abs(expected.y - p.y))
                    checked += 1
                }
            }
            #expect(checked > 10000)
            #expect(worstApply < 1e-9, "apply(invert(q)) is off by \(worstApply) px")
            #expect(worstBisection < 1e-9, "invert differs from bisection by \(worstBisection) px")
        }
    }

    /// Whether the rectified pixel `(x, y)` of the color image takes its value from
    /// inside the photo, with all four interpolation neighbors inside.
    static func colorSourceInside(_ x: Int, _ y: Int) -> Bool {
        let q = colorCalibration.distortion.apply(to: SIMD2(Double(x), Double(y)))
        return q.x >= 0.01 && q.y >= 0.01 && q.x <= 772 - 1.01 && q.y <= 580 - 1.01
    }

    @Test func checkerEdgesLandOnTheirTrueProjection() {
        let rectified = Rectifier().rectify(Self.rendered.color, distortion: Self.colorCalibration.distortion)
        let k = Self.colorCalibration.intrinsics
        let scene = Self.rendered.synthetic.scene
        for vertical in [true, false] {
            let samples = RectificationTests.edges(in: rectified, intrinsics: k, scene: scene, vertical: vertical,
                                                   usable: Self.colorSourceInside)
            #expect(samples.count > 2000)
            // Edges near the black border (10 px wide at mid-height) are measured too;
            // the lowest horizontal line is on the floor, so only the top one for those.
            let extent = Double(vertical ? rectified.width : rectified.height)
            #expect(samples.contains { $0.truth < 40 })
            #expect(samples.contains { $0.truth > extent - 40 } || !vertical)
            let worst = samples.map { abs($0.measured - $0.truth) }.max() ?? .infinity
            #expect(worst <= 0.1, "worst \(vertical ? "vertical" : "horizontal") edge error \(worst) px")
        }
        // The distorted photo itself is off by pixels: the measurement can fail.
        let distorted = RectificationTests.edges(in: Self.rendered.color, intrinsics: k, scene: scene, vertical: true)
        #expect((distorted.map { abs($0.measured - $0.truth) }.max() ?? 0) > 2)
    }

    @Test func straightLinesComeOutStraight() {
        let rectified = Rectifier().rectify(Self.rendered.color, distortion: Self.colorCalibration.distortion)
        for vertical in [true, false] {
            let samples = RectificationTests.edges(in: rectified, intrinsics: Self.colorCalibration.intrinsics,
                                                   scene: Self.rendered.synthetic.scene, vertical: vertical,
                                                   usable: Self.colorSourceInside)
            let byLine = Dictionary(grouping: samples, by: \.line).filter { $0.value.count > 60 }
            #expect(byLine.count > 8)
            for (line, points) in byLine {
                // Least-squares line through the edge: residuals tiny, slope zero.
                let (b, worst) = RectificationTests.lineFit(points)
                #expect(worst <= 0.1, "line \(line) bends by \(worst) px")
                #expect(abs(b) < 1e-3, "line \(line) is tilted (slope \(b))")
            }
        }
    }

    @Test func wallDepthIsRightToTheMillimeter() {
        let rectified = Rectifier().rectify(Self.rendered.depth, distortion: Self.depthCalibration.distortion)
        let k = Self.depthCalibration.intrinsics
        let scene = Self.rendered.synthetic.scene
        var checked = 0, worst = 0.0
        for y in 1..<(rectified.height - 1) {
            for x in 1..<(rectified.width - 1) {
                let allWall = [-1.0, 0, 1].allSatisfy { dy in
                    [-1.0, 0, 1].allSatisfy { dx in
                        scene.hit((Double(x) + dx - k.cx) / k.fx, (Double(y) + dy - k.cy) / k.fy).surface == .wall
                    }
                }
                guard allWall, rectified[x, y].isFinite else { continue }
                worst = max(worst, abs(Double(rectified[x, y]) - scene.wallZ))
                checked += 1
            }
        }
        #expect(checked > 20000)
        #expect(worst <= 0.001, "wall depth off by \(worst) m")
    }

    /// Every depth there is lies on a surface within a pixel (no flying depth), the
    /// border included.
    @Test func noDepthIsInvented() {
        let rectified = Rectifier().rectify(Self.rendered.depth, distortion: Self.depthCalibration.distortion)
        let k = Self.depthCalibration.intrinsics
        var flying: [(Int, Int, Float)] = []
        var checked = 0
        for y in 0..<rectified.height {
            for x in 0..<rectified.width {
                let d = rectified[x, y]
                guard d.isFinite else { continue }
                var truths: [Double] = []
                for dy in stride(from: -1.0, through: 1.0, by: 0.25) {
                    for dx in stride(from: -1.0, through: 1.0, by: 0.25) {
                        truths.append(Self.rendered.synthetic.trueDepth(u: Double(x) + dx, v: Double(y) + dy, intrinsics: k))
                    }
                }
                if !truths.contains(where: { abs(Double(d) - $0) <= max(0.002, 0.01 * $0) }) { flying.append((x, y, d)) }
                checked += 1
            }
        }
        #expect(checked > 40000)
        #expect(flying.isEmpty, "\(flying.count) flying depths, first: \(flying.prefix(5))")
    }

    /// Where the source of a rectified pixel lies outside the photo (the pincushion's
    /// corners and edges), color is black and depth is a hole; just inside, both are
    /// the scene's. Nothing is invented at the border.
    @Test func theBorderWithoutSourceIsBlackAndHoles() {
        let colorDistortion = Self.colorCalibration.distortion
        let color = Rectifier().rectify(Self.rendered.color, distortion: colorDistortion)
        var black = 0, lit = 0
        for y in 0..<color.height {
            for x in 0..<color.width {
                let q = colorDistortion.apply(to: SIMD2(Double(x), Double(y)))
                let sum = (0..<3).map { Int(color[x, y, $0]) }.reduce(0, +)
                // Both interpolation neighbors outside along one axis: no source at all.
                if q.x < -1.01 || q.y < -1.01 || q.x >= 772.01 || q.y >= 580.01 {
                    #expect(sum == 0, "(\(x), \(y)) from (\(q.x), \(q.y)) is not black")
                    black += 1
                } else if Self.colorSourceInside(x, y) {
                    // The scene's darkest color sums to 145.
                    #expect(sum >= 140, "(\(x), \(y)) from (\(q.x), \(q.y)) is dark: \(sum)")
                    lit += 1
                }
            }
        }
        // The four corners, and a band along every side.
        #expect(black > 1000)
        #expect(color[0, 0, 0] == 0 && color[771, 0, 0] == 0 && color[0, 579, 0] == 0 && color[771, 579, 0] == 0)
        #expect(color[386, 0, 0] == 0 && color[0, 290, 0] == 0)
        #expect(lit > 400_000)

        let depthDistortion = Self.depthCalibration.distortion
        let depth = Rectifier().rectify(Self.rendered.depth, distortion: depthDistortion)
        #expect(Self.rendered.depth.samples.allSatisfy { $0.isFinite }, "the synthetic depth map has no holes")
        var holes = 0, filled = 0
        for y in 0..<depth.height {
            for x in 0..<depth.width {
                let q = depthDistortion.apply(to: SIMD2(Double(x), Double(y)))
                if q.x < -0.51 || q.y < -0.51 || q.x >= 255.51 || q.y >= 191.51 {
                    #expect(depth[x, y].isNaN, "(\(x), \(y)) from (\(q.x), \(q.y)) has depth \(depth[x, y])")
                    holes += 1
                } else if q.x > -0.49 && q.y > -0.49 && q.x < 255.49 && q.y < 191.49 {
                    #expect(depth[x, y].isFinite, "(\(x), \(y)) from (\(q.x), \(q.y)) is a hole")
                    filled += 1
                }
            }
        }
        #expect(holes > 200 && depth[0, 0].isNaN && depth[255, 191].isNaN)
        #expect(filled > 40000)
    }
}
