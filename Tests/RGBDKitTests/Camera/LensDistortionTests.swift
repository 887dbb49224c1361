import Testing
@testable import RGBDRectification
@testable import RGBDKit

/// The lookup-table model against values computed by hand, and its properties.
@Suite struct LensDistortionTests {
    /// A 100×100 image, center (50, 50), table [0, −0.01, −0.04]: r_max = √5000.
    let model = LensDistortion(center: SIMD2(50, 50), table: [0, -0.01, -0.04], width: 100, height: 100)

    @Test func maxRadiusIsFarthestCorner() {
        #expect(abs(model.maxRadius - 5000.0.squareRoot()) < 1e-12)
        let offCenter = LensDistortion(center: SIMD2(30, 20), table: [0, 0], width: 100, height: 50)
        // max(30, 70)² + max(20, 30)² = 4900 + 900.
        #expect(abs(offCenter.maxRadius - 5800.0.squareRoot()) < 1e-12)
    }

    @Test func handComputedPoints() {
        // p = (80, 50): r = 30, i + f = 30·2/√5000 = 0.848528, mag = −0.01·0.848528.
        let a = model.apply(to: SIMD2(80, 50))
        // (The table holds Float values, so agreement is to about 1e-6 px.)
        #expect(abs(a.x - (50 + 30 * (1 - 0.01 * 30 * 2 / 5000.0.squareRoot()))) < 1e-6)
        #expect(abs(a.x - 79.745442) < 1e-6)
        #expect(a.y == 50)
        // p = (10, 90): r = 40√2, i + f = 1.6, mag = −0.01 + 0.6·(−0.03) = −0.028.
        let b = model.apply(to: SIMD2(10, 90))
        #expect(abs(b.x - 11.12) < 1e-6)
        #expect(abs(b.y - 88.88) < 1e-6)
        // At and beyond r_max the last entry applies: (100, 100) → 50 + 50·0.96.
        let c = model.apply(to: SIMD2(100, 100))
        #expect(abs(c.x - 98) < 1e-5 && abs(c.y - 98) < 1e-5)
        let d = model.apply(to: SIMD2(150, 50))
        #expect(abs(d.x - (50 + 100 * 0.96)) < 1e-5)
        // The center does not move.
        #expect(model.apply(to: SIMD2(50, 50)) == SIMD2(50, 50))
    }

    @Test func singlePrecisionEvaluatorMatchesModel() {
        let calibration = SyntheticCalibration.iPhone
        let scaled = calibration.scaled(toWidth: 4032, height: 3024).distortion
        let evaluator = SourcePositions(scaled)
        var worst = 0.0
        for y in stride(from: 0, to: 3024, by: 37) {
            for x in stride(from: 0, to: 4032, by: 41) {
                let exact = scaled.apply(to: SIMD2(Double(x), Double(y)))
                let fast = evaluator.position(x: x, y: y)
                worst = max(worst, abs(Double(fast.x) - exact.x), abs(Double(fast.y) - exact.y))
            }
        }
        // Float at 4000 px has a resolution of 0.0005 px.
        #expect(worst < 0.002)
    }

    /// Row `y`'s fixed-point positions from the vectorized kernel, in chunks of 256 as
    /// the rectification uses them (the last one partial).
    static func fixedPointRow(_ evaluator: SourcePositions, y: Int, width: Int) -> (xs: [Int32], ys: [Int32]) {
        // The kernel writes whole groups of four.
        var xs = [Int32](repeating: 0, count: (width + 3) / 4 * 4), ys = xs
        xs.withUnsafeMutableBufferPointer { xp in
            ys.withUnsafeMutableBufferPointer { yp in
                for x0 in stride(from: 0, to: width, by: 256) {
                    evaluator.fixedPointSpan(y: y, from: x0, count: min(256, width - x0), xs: xp.baseAddress! + x0,
                                             ys: yp.baseAddress! + x0)
                }
            }
        }
        return (Array(xs.prefix(width)), Array(ys.prefix(width)))
    }

    /// The kernels' positions (four at a time, fixed point 1/256 px) against the model,
    /// and bit for bit against the one-pixel reference, also where the segment changes
    /// between neighbors and for a lens that needs clamping.
    @Test func vectorizedFixedPointPositionsMatchModel() {
        let scaled = SyntheticCalibration.iPhone.scaled(toWidth: 4032, height: 3024).distortion
        let evaluator = SourcePositions(scaled)
        #expect(evaluator.bounded)
        let width = 4032
        var worst = 0.0, mismatches = 0
        for y in [0, 1, 777, 1511, 1512, 2900, 3023] {
            let (xs, ys) = Self.fixedPointRow(evaluator, y: y, width: width)
            for x in 0..<width {
                let exact = scaled.apply(to: SIMD2(Double(x), Double(y)))
                worst = max(worst, abs(Double(xs[x]) / 256 - exact.x), abs(Double(ys[x]) / 256 - exact.y))
                if evaluator.fixedPoint(x: x, y: y) != SIMD2(xs[x], ys[x]) { mismatches += 1 }
            }
        }
        // Half a 1/256 step of rounding plus Float resolution at 4000 px.
        #expect(worst < 0.5 / 256 + 0.002, "worst \(worst) px")
        #expect(mismatches == 0)

        // A table with steep segments (a new segment every few pixels) and a center far
        // out, so that displacements pass ±8192 px: those pixels are marked outside.
        let wild = LensDistortion(center: SIMD2(-2500, 300), table: (0..<300).map { Float($0 % 7) * 0.9 },
                                  width: 640, height: 480)
        let wildEvaluator = SourcePositions(wild)
        #expect(!wildEvaluator.bounded)
        var wildMismatches = 0
        var lastRow: [Int32] = []
        for y in stride(from: 0, to: 480, by: 17) {
            let (wx, wy) = Self.fixedPointRow(wildEvaluator, y: y, width: 640)
            for x in 0..<640 where wildEvaluator.fixedPoint(x: x, y: y) != SIMD2(wx[x], wy[x]) { wildMismatches += 1 }
            lastRow = wx
        }
        #expect(wildMismatches == 0)
        #expect(lastRow.contains(SourcePositions.outside))
    }

    /// Fixed-point positions stay right on images far wider than the fixed-point range
    /// of absolute positions would allow (they are built from displacements).
    @Test func fixedPointPositionsHoldOnVeryWideImages() {
        let scaled = SyntheticCalibration.iPhone.scaled(toWidth: 24_000, height: 18_000).distortion
        let evaluator = SourcePositions(scaled)
        #expect(evaluator.bounded)
        let width = 24_000
        var worst = 0.0
        for y in [0, 9_000, 17_999] {
            let (xs, ys) = Self.fixedPointRow(evaluator, y: y, width: width)
            for x in stride(from: 0, to: width, by: 7) {
                let exact = scaled.apply(to: SIMD2(Double(x), Double(y)))
                worst = max(worst, abs(Double(xs[x]) / 256 - exact.x), abs(Double(ys[x]) / 256 - exact.y))
            }
        }
        // Half a 1/256 step of rounding plus Float resolution of the offsets.
        #expect(worst < 0.5 / 256 + 0.002, "worst \(worst) px")
    }

    @Test func zeroTableIsIdentity() {
        let identity = LensDistortion(center: SIMD2(311.7, 240.2), table: [Float](repeating: 0, count: 42), width: 640, height: 480)
        for p in [SIMD2(0.0, 0.0), SIMD2(639.0, 479.0), SIMD2(100.25, 300.5)] {
            #expect(identity.apply(to: p) == p)
            #expect(abs(identity.invert(p).x - p.x) < 1e-9 && abs(identity.invert(p).y - p.y) < 1e-9)
        }
    }

    @Test func numericalInverseUndoesForward() {
        let d = SyntheticCalibration.iPhone.scaled(toWidth: 4032, height: 3024).distortion
        var worst = 0.0
        for y in stride(from: 0.0, through: 3024, by: 97.3) {
            for x in stride(from: 0.0, through: 4032, by: 101.7) {
                let p = SIMD2(x, y)
                let back = d.invert(d.apply(to: p))
                worst = max(worst, abs(back.x - p.x), abs(back.y - p.y))
            }
        }
        #expect(worst < 1e-6)
    }

    /// The inverse table is a 42-sample approximation: forward then inverse comes back
    /// within a tenth of a pixel up to 95 % of r_max. Beyond, the forward model's clamp
    /// at r_max puts a kink between two inverse samples (docs/lens-model.md), and the error
    /// grows to pixels at the very corner: that is why `invert` exists.
    @Test func inverseTableUndoesForward() throws {
        let scaled = SyntheticCalibration.iPhone.scaled(toWidth: 4032, height: 3024)
        let inverse = try #require(scaled.inverseDistortion)
        let c = scaled.distortion.center
        var worst = 0.0
        for y in stride(from: 0.0, through: 3024, by: 47.3) {
            for x in stride(from: 0.0, through: 4032, by: 51.7) {
                let p = SIMD2(x, y)
                guard ((p - c) * (p - c)).sum().squareRoot() <= 0.95 * scaled.distortion.maxRadius else { continue }
                let back = inverse.apply(to: scaled.distortion.apply(to: p))
                worst = max(worst, abs(back.x - p.x), abs(back.y - p.y))
            }
        }
        #expect(worst < 0.1, "worst round trip error \(worst) px")
        // And the test can fail: without the inverse the error is tens of pixels.
        let corner = scaled.distortion.apply(to: SIMD2(0, 0))
        #expect(abs(corner.x) > 20)
    }

    @Test func scalingFollowsImageSize() {
        let c = SyntheticCalibration.iPhone
        let depth = c.scaled(toWidth: 768, height: 576)
        #expect(abs(depth.intrinsics.fx - 2900 * 768 / 4032) < 1e-9)
        #expect(abs(depth.intrinsics.cy - 1511.6 * 576 / 3024) < 1e-9)
        #expect(abs(depth.distortion.center.x - 2015.53 * 768 / 4032) < 1e-9)
        #expect(abs(depth.distortion.center.y - 1511.21 * 576 / 3024) < 1e-9)
        #expect(c.aspectMismatch(width: 640, height: 480) < 1e-12)
        #expect(c.aspectMismatch(width: 640, height: 360) > 0.3)
    }
}
