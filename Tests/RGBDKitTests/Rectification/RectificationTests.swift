import Testing
@testable import RGBDRectification
@testable import RGBDKit
import RGBDSynth

/// Rectified output against the ground truth of the synthetic scene: the rectified
/// images must be the pinhole images of the scene.
@Suite struct RectificationTests {
    /// Edge positions of the wall's checker lines, measured in an image along rows
    /// (vertical lines) or columns (horizontal lines), with their true projections.
    struct EdgeSample { var line: Int; var across: Int; var measured: Double; var truth: Double }

    /// Least-squares line `measured = a + b·across` through one edge's samples: its slope
    /// `b` and the largest residual, pixels.
    static func lineFit(_ points: [EdgeSample]) -> (slope: Double, worst: Double) {
        let n = Double(points.count)
        let mx = points.map { Double($0.across) }.reduce(0, +) / n
        let my = points.map(\.measured).reduce(0, +) / n
        let sxy = points.map { (Double($0.across) - mx) * ($0.measured - my) }.reduce(0, +)
        let sxx = points.map { (Double($0.across) - mx) * (Double($0.across) - mx) }.reduce(0, +)
        let b = sxy / sxx
        let worst = points.map { abs($0.measured - (my + b * (Double($0.across) - mx))) }.max() ?? 0
        return (b, worst)
    }

    /// Measures where each checker line of the wall crosses each row (`vertical`) or
    /// column, by the area method: over a window across one edge, the normalized
    /// luminance sums to the distance from the window's end to the edge. The method is
    /// exact for an area-sampled step and unbiased under symmetric interpolation.
    /// `usable(x, y)`, if given, must hold for every pixel of a window (and the rows or
    /// columns 2 px either side) for it to be measured: for instance, that the pixel's
    /// source lies inside the distorted image.
    static func edges(in image: ColorImage, intrinsics k: Intrinsics, scene: SyntheticScene,
                      vertical: Bool, usable: ((Int, Int) -> Bool)? = nil) -> [EdgeSample] {
        let dark = SyntheticScene.darkSquare.sum(), light = SyntheticScene.lightSquare.sum()
        let half = 7
        let s = scene.checkerSize, z = scene.wallZ
        let focal = vertical ? k.fx : k.fy, center = vertical ? k.cx : k.cy
        let otherFocal = vertical ? k.fy : k.fx, otherCenter = vertical ? k.cy : k.cx
        let origin = vertical ? scene.checkerOrigin.x : scene.checkerOrigin.y
        let otherOrigin = vertical ? scene.checkerOrigin.y : scene.checkerOrigin.x
        let extent = vertical ? image.width : image.height
        let otherExtent = vertical ? image.height : image.width
        func isWall(_ u: Double, _ v: Double) -> Bool {
            scene.hit((u - k.cx) / k.fx, (v - k.cy) / k.fy).surface == .wall
        }
        var samples: [EdgeSample] = []
        let firstLine = Int(((-center / focal * z - origin) / s).rounded(.up))
        let lastLine = Int((((Double(extent) - center) / focal * z - origin) / s).rounded(.down))
        for line in firstLine...lastLine {
            let truth = focal * (origin + Double(line) * s) / z + center
            let mid = Int(truth.rounded())
            let a = mid - half, b = mid + half
            guard a >= 2, b < extent - 2 else { continue }
            for across in 2..<(otherExtent - 2) {
                // Stay 3 px away from the perpendicular lines, on the wall only.
                let t = (Double(across) - otherCenter) / otherFocal * z
                let phase = (t - otherOrigin) / s
                let distance = abs(phase - phase.rounded()) * s * otherFocal / z
                guard distance > 3 else { continue }
                // Wall only, over the window and 2 px either side of it (interpolation
                // reaches one pixel into a neighboring surface).
                let span = stride(from: Double(a) - 1, through: Double(b) + 1, by: 0.5)
                let band = [-2.0, 0, 2].map { Double(across) + $0 }
                guard span.allSatisfy({ along in
                    band.allSatisfy { vertical ? isWall(along, $0) : isWall($0, along) }
                }) else { continue }
                if let usable {
                    let inside = (a - 1...b + 1).allSatisfy { along in
                        (-2...2).allSatisfy { d in vertical ? usable(along, across + d) : usable(across + d, along) }
                    }
                    guard inside else { continue }
                }
                var sum = 0.0
                var first = 0.0, last = 0.0
                for i in a...b {
                    let (x, y) = vertical ? (i, across) : (across, i)
                    let lum = Double(image[x, y, 0]) + Double(image[x, y, 1]) + Double(image[x, y, 2])
                    let n = (lum - dark) / (light - dark)
                    if i == a { first = n }
                    if i == b { last = n }
                    sum += n
                }
                let measured = first < last ? Double(b) + 0.5 - sum : Double(a) - 0.5 + sum
                samples.append(EdgeSample(line: line, across: across, measured: measured, truth: truth))
            }
        }
        return samples
    }

    @Test func checkerEdgesLandOnTheirTrueProjection() {
        let scene = Scenes.small
        let rectified = Rectifier().rectify(scene.color, distortion: scene.colorCalibration.distortion)
        let k = scene.colorCalibration.intrinsics
        for vertical in [true, false] {
            let samples = Self.edges(in: rectified, intrinsics: k, scene: scene.synthetic.scene, vertical: vertical)
            #expect(samples.count > 2000)
            let worst = samples.map { abs($0.measured - $0.truth) }.max() ?? .infinity
            let bad = samples.filter { abs($0.measured - $0.truth) > 0.1 }
            let lines = Dictionary(grouping: bad, by: \.line).map { ($0.key, $0.value.count, $0.value.map(\.across).min() ?? 0, $0.value.map(\.across).max() ?? 0, $0.value[0].truth, $0.value.map { $0.measured - $0.truth }.max() ?? 0) }
            #expect(worst <= 0.1, "worst \(vertical ? "vertical" : "horizontal") edge error \(worst) px; \(lines)")
        }
        // The same measurement on the distorted input is off by pixels: the test can fail.
        let distorted = Self.edges(in: scene.color, intrinsics: k, scene: scene.synthetic.scene, vertical: true)
        let worstDistorted = distorted.map { abs($0.measured - $0.truth) }.max() ?? 0
        #expect(worstDistorted > 2)
    }

    @Test func straightLinesComeOutStraight() {
        let scene = Scenes.small
        let rectified = Rectifier().rectify(scene.color, distortion: scene.colorCalibration.distortion)
        let samples = Self.edges(in: rectified, intrinsics: scene.colorCalibration.intrinsics,
                                 scene: scene.synthetic.scene, vertical: true)
        let byLine = Dictionary(grouping: samples, by: \.line).filter { $0.value.count > 100 }
        #expect(byLine.count > 10)
        for (line, points) in byLine {
            let (b, worst) = Self.lineFit(points)
            #expect(worst <= 0.1, "line \(line) bends by \(worst) px")
            #expect(abs(b) < 1e-3, "line \(line) is tilted (slope \(b)); the wall's lines are vertical")
        }
    }

    @Test func wallDepthIsRightToTheMillimeter() {
        let scene = Scenes.small
        let rectified = Rectifier().rectify(scene.depth, distortion: scene.depthCalibration.distortion)
        let k = scene.depthCalibration.intrinsics
        var checked = 0
        var worst = 0.0
        for y in 1..<(rectified.height - 1) {
            for x in 1..<(rectified.width - 1) {
                // Pixels whose whole neighborhood is wall.
                var allWall = true
                for dy in [-1.0, 0, 1] {
                    for dx in [-1.0, 0, 1] {
                        let a = (Double(x) + dx - k.cx) / k.fx, b = (Double(y) + dy - k.cy) / k.fy
                        if scene.synthetic.scene.hit(a, b).surface != .wall { allWall = false }
                    }
                }
                guard allWall else { continue }
                let d = Double(rectified[x, y])
                guard d.isFinite else { continue }
                worst = max(worst, abs(d - scene.synthetic.scene.wallZ))
                checked += 1
            }
        }
        #expect(checked > 20000)
        #expect(worst <= 0.001, "wall depth off by \(worst) m")
    }

    @Test func noDepthIsInventedAcrossEdges() {
        let scene = Scenes.small
        let rectified = Rectifier().rectify(scene.depth, distortion: scene.depthCalibration.distortion)
        let k = scene.depthCalibration.intrinsics
        var flying: [(Int, Int, Float)] = []
        var silhouettePixels = 0
        for y in 0..<rectified.height {
            for x in 0..<rectified.width {
                let d = rectified[x, y]
                guard d.isFinite else { continue }
                // True depths within ±1 pixel: the value must be one of them (within 1 %
                // for the steep floor), not something in between.
                var truths: [Double] = []
                for dy in stride(from: -1.0, through: 1.0, by: 0.25) {
                    for dx in stride(from: -1.0, through: 1.0, by: 0.25) {
                        truths.append(scene.synthetic.trueDepth(u: Double(x) + dx, v: Double(y) + dy, intrinsics: k))
                    }
                }
                let lo = truths.min() ?? 0, hi = truths.max() ?? 0
                if hi - lo > 0.5 { silhouettePixels += 1 }
                let near = truths.contains { abs(Double(d) - $0) <= max(0.002, 0.01 * $0) }
                if !near { flying.append((x, y, d)) }
            }
        }
        #expect(silhouettePixels > 100, "the scene must have depth edges for this test to mean anything")
        #expect(flying.isEmpty, "\(flying.count) flying depths, first: \(flying.prefix(5))")
    }

    /// The same check must fail for plain bilinear interpolation, which blends across edges.
    @Test func plainBilinearDepthWouldFail() {
        let scene = Scenes.small
        let blended = Rectifier(maxRelativeDepthStep: 10).rectify(scene.depth, distortion: scene.depthCalibration.distortion)
        let k = scene.depthCalibration.intrinsics
        var flying = 0
        for y in 0..<blended.height {
            for x in 0..<blended.width {
                let d = Double(blended[x, y])
                guard d.isFinite else { continue }
                let t0 = scene.synthetic.trueDepth(u: Double(x) - 1, v: Double(y), intrinsics: k)
                let t1 = scene.synthetic.trueDepth(u: Double(x) + 1, v: Double(y), intrinsics: k)
                if abs(t0 - t1) > 0.5 && d > min(t0, t1) * 1.05 && d < max(t0, t1) * 0.95 { flying += 1 }
            }
        }
        #expect(flying > 10)
    }

    @Test func holesStayHoles() {
        let scene = Scenes.small
        let calibration = scene.depthCalibration
        let rectified = Rectifier().rectify(scene.depth, distortion: calibration.distortion)
        var insideHole = 0, holesElsewhere = 0
        for y in 0..<rectified.height {
            for x in 0..<rectified.width {
                let q = calibration.distortion.apply(to: SIMD2(Double(x), Double(y)))
                let nx = Int((q.x + 0.5).rounded(.down)), ny = Int((q.y + 0.5).rounded(.down))
                let sourceIsHole = Scenes.holeX.contains(nx) && Scenes.holeY.contains(ny)
                let interior = q.x > 1 && q.y > 1 && q.x < Double(scene.depth.width - 2) && q.y < Double(scene.depth.height - 2)
                if sourceIsHole {
                    #expect(rectified[x, y].isNaN)
                    insideHole += 1
                } else if interior && rectified[x, y].isNaN {
                    holesElsewhere += 1
                }
            }
        }
        #expect(insideHole > 20)
        #expect(holesElsewhere == 0)
    }

    @Test func parallelEqualsSerialBitForBit() {
        let scene = Scenes.small
        let color = scene.colorCalibration.distortion, depth = scene.depthCalibration.distortion
        let serial = Rectifier(scheduler: .serial), parallel = Rectifier(scheduler: .parallel)
        #expect(serial.rectify(scene.color, distortion: color).samples == parallel.rectify(scene.color, distortion: color).samples)
        #expect(identicalBits(serial.rectify(scene.depth, distortion: depth).samples,
                              parallel.rectify(scene.depth, distortion: depth).samples))
    }

    /// The vectorized kernel (positions four at a time, pixels four at a time) equals
    /// the one-pixel reference (`SourcePositions.fixedPoint`, `ColorRemap.sample` with
    /// every neighbor checked) bit for bit, borders and odd widths included.
    @Test(arguments: [(1008, 756, 3), (97, 61, 3), (101, 33, 1), (6, 5, 3)])
    func kernelEqualsOnePixelReference(width: Int, height: Int, channels: Int) {
        var rng = SeededGenerator(seed: 11)
        let image = Scenes.small.color.width == width && channels == 3
            ? Scenes.small.color
            : ImageBuffer<UInt8>(width: width, height: height, channels: channels,
                                 samples: (0..<(width * height * channels)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        // A strong lens (pincushion in this direction) centered off the middle: the
        // corners sample outside the source.
        let distortion = LensDistortion(center: SIMD2(Double(width) * 0.46, Double(height) * 0.53),
                                        table: (0..<42).map { 0.08 * Float($0 * $0) / 1681 }, width: width, height: height)
        let evaluator = SourcePositions(distortion)
        var reference = [UInt8](repeating: 0, count: width * height * channels)
        image.samples.withUnsafeBufferPointer { src in
            reference.withUnsafeMutableBufferPointer { out in
                for y in 0..<height {
                    for x in 0..<width {
                        let p = evaluator.fixedPoint(x: x, y: y)
                        ColorRemap.sample(Int(p.x), Int(p.y), channels: channels, src: src.baseAddress!, width: width,
                                          height: height, out: out.baseAddress! + (y * width + x) * channels)
                    }
                }
            }
        }
        let rectified = Rectifier().rectify(image, distortion: distortion)
        #expect(rectified.samples == reference)
        // Black corners: the lens pulls some pixels from outside the source.
        #expect(rectified.samples.prefix(channels).allSatisfy { $0 == 0 } || width < 10)
        if let map = RectificationMap(distortion) {
            #expect(Rectifier().rectify(image, map: map).samples == reference)
        }
    }

    @Test func precomputedMapEqualsOnTheFly() throws {
        let scene = Scenes.small
        let distortion = scene.colorCalibration.distortion
        let map = try #require(RectificationMap(distortion))
        #expect(Rectifier().rectify(scene.color, map: map).samples == Rectifier().rectify(scene.color, distortion: distortion).samples)
        // A lens moving points by more than 127 px has no compact map.
        let extreme = LensDistortion(center: distortion.center, table: [0, -0.5], width: distortion.width, height: distortion.height)
        #expect(RectificationMap(extreme) == nil)
    }

    @Test(arguments: [1, 3, 4])
    func zeroTableLeavesImagesUnchanged(channels: Int) {
        var rng = SeededGenerator(seed: 7)
        let width = 97, height = 61
        let image = ImageBuffer<UInt8>(width: width, height: height, channels: channels,
                                       samples: (0..<(width * height * channels)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        let identity = LensDistortion(center: SIMD2(47.3, 30.9), table: [Float](repeating: 0, count: 42), width: width, height: height)
        #expect(Rectifier().rectify(image, distortion: identity).samples == image.samples)
        let depth = DepthMap(width: width, height: height, channels: 1,
                             samples: (0..<(width * height)).map { _ in Float.random(in: 0.5...5, using: &rng) })
        #expect(identicalBits(Rectifier().rectify(depth, distortion: identity).samples, depth.samples))
    }

    /// Re-distorting the rectified image with the inverse table gives the captured image
    /// back (up to two interpolations), away from the border.
    @Test func redistortingWithTheInverseTableComesBack() throws {
        let scene = Scenes.small
        let calibration = scene.colorCalibration
        let rectified = Rectifier().rectify(scene.color, distortion: calibration.distortion)
        let inverse = try #require(calibration.inverseDistortion)
        let back = Rectifier().rectify(rectified, distortion: inverse)
        var total = 0.0, count = 0
        for y in 40..<(scene.color.height - 40) {
            for x in 40..<(scene.color.width - 40) {
                for c in 0..<3 { total += abs(Double(back[x, y, c]) - Double(scene.color[x, y, c])); count += 1 }
            }
        }
        let mean = total / Double(count)
        #expect(mean < 3, "mean difference \(mean) levels")
        // Compared with the image rectified twice (the wrong direction), it is far off.
        let wrong = Rectifier().rectify(rectified, distortion: calibration.distortion)
        var wrongTotal = 0.0
        for y in 40..<(scene.color.height - 40) {
            for x in 40..<(scene.color.width - 40) { wrongTotal += abs(Double(wrong[x, y, 0]) - Double(scene.color[x, y, 0])) }
        }
        #expect(wrongTotal / Double(count / 3) > 3 * mean)
    }
}
