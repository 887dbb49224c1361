import Testing
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
