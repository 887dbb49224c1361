import Testing
@testable import RGBDOutput
@testable import RGBDKit

/// The rectified depth panel's caption says whose holes it counts and never shows 0 %
/// while a hole is drawn.
@Suite struct PreviewCaptionTests {
    @Test func holesAreCountedAsShown() {
        var samples = [Float](repeating: 1.5, count: 200 * 100)
        samples[0] = .nan
        let one = PreviewSheet.depthCaption(PreviewDepthRange(DepthMap(width: 200, height: 100, channels: 1, samples: samples)))
        #expect(one.contains("rectified holes (gray) 1 px, < 0.1 %"), "\(one)")
        #expect(!one.contains("0.0 %"), "\(one)")
        let none = PreviewSheet.depthCaption(PreviewDepthRange(DepthMap(width: 10, height: 10, channels: 1, repeating: 2)))
        #expect(none.hasSuffix("rectified holes (gray) 0 px, 0.0 %"), "\(none)")
        var mostly = [Float](repeating: .nan, count: 200 * 100)
        mostly[5] = 1
        let nearlyAll = PreviewSheet.depthCaption(PreviewDepthRange(DepthMap(width: 200, height: 100, channels: 1, samples: mostly)))
        #expect(nearlyAll.hasSuffix("19999 px, > 99.9 %"), "\(nearlyAll)")
        let empty = PreviewSheet.depthCaption(PreviewDepthRange(DepthMap(width: 4, height: 4, channels: 1, repeating: .nan)))
        #expect(empty == "no depth at all")
    }
}

/// The depth colorbar's tick labels show their values exactly: a 0.25 m step is labelled
/// 0.25, 0.50, 0.75 (with one decimal 0.25 and 0.75 were shown as "0.3" and "0.8", as on
/// the real Record3D close-up's 0–1.2 m scale).
struct ColorbarTickTests {
    @Test(arguments: [(0.25, 2), (2.5, 1), (0.5, 1), (1, 0), (0.02, 2), (0.025, 3), (5, 0), (10, 0), (0.1, 1), (0.2, 1)])
    func decimalsShowTheStepExactly(step: Double, decimals: Int) {
        #expect(PreviewSheet.decimals(ofStep: step) == decimals)
        // Every multiple up to 20 steps reads back as itself.
        let d = PreviewSheet.decimals(ofStep: step)
        for k in 0...20 {
            let value = Double(k) * step
            let shown = Double(PreviewSheet.format(value, decimals: d)) ?? .nan
            #expect(abs(shown - value) < 1e-9 * max(1, value), "\(value) shown as \(PreviewSheet.format(value, decimals: d))")
        }
    }

    /// A 0–1.2 m scale (the close-up's): ticks every 0.25 m.
    @Test func aCloseUpScaleIsLabelledInQuarters() {
        let step = PreviewSheet.niceStep(1.2 / 5)
        #expect(step == 0.25)
        #expect(PreviewSheet.format(0.75, decimals: PreviewSheet.decimals(ofStep: step)) == "0.75")
    }
}
