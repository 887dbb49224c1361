import Testing
@testable import RGBDKit

/// The scan sheet of a scene whose world is the first frame's camera (not
/// gravity-aligned, as Record3D's): "above" looks down the first camera's −y.
struct ScenePreviewSheetTests {
    /// Frames of constant depth, no color, no confidence.
    struct FlatStorage: SceneStorage {
        var depth: Float
        var width: Int
        var height: Int

        struct Reader: SceneFrameReader {
            var storage: FlatStorage
            mutating func read(_ info: SceneFrameInfo) throws -> SceneFrame {
                SceneFrame(info: info,
                           depth: DepthMap(width: storage.width, height: storage.height, channels: 1,
                                           repeating: storage.depth),
                           confidence: nil, color: nil)
            }
        }

        func makeReader(color: Bool) throws -> any SceneFrameReader { Reader(storage: self) }
    }

    /// A scene of `count` frames: the camera rolled 90° about its optical axis (its x
    /// along world +y, its y along world −x, looking down world +z), moving 1 m along its
    /// own x, in front of a wall 2 m away.
    static func rolledScene(count: Int = 6) throws -> Scene {
        let s = 0.5.squareRoot()
        var frames: [SceneFrameInfo] = []
        for i in 0..<count {
            let t = Double(i) / Double(count - 1)
            guard let pose = Pose(quaternionX: 0, y: 0, z: s, w: s, translation: SIMD3(0, t, 0)) else {
                throw RGBDError(.invalidArgument, "not a rotation")
            }
            let k = Intrinsics(fx: 200, fy: 200, cx: 128, cy: 96, width: 256, height: 192)
            frames.append(SceneFrameInfo(index: i, time: 0.1 * Double(i), pose: pose, colorIntrinsics: k, depthIntrinsics: k))
        }
        return Scene(path: "/scans/rolled.r3d", format: SceneFormat(app: .record3D, variant: "test"), world: .firstFrame,
                     frames: frames, colorSize: nil, depthSize: (256, 192), framesPerSecond: 10, skipped: [],
                     warnings: [], details: [], storage: FlatStorage(depth: 2, width: 256, height: 192))
    }

    static func centroid(_ image: ColorImage, _ layout: ScenePreviewLayout, _ panel: ScenePanel,
                         _ color: (UInt8, UInt8, UInt8)) -> (x: Double, y: Double, count: Int) {
        let (x0, y0) = layout.origin(of: panel)
        var sx = 0.0, sy = 0.0, n = 0
        for y in y0..<(y0 + layout.panelHeight) {
            for x in x0..<(x0 + layout.panelWidth)
            where image[x, y, 0] == color.0 && image[x, y, 1] == color.1 && image[x, y, 2] == color.2 {
                sx += Double(x); sy += Double(y); n += 1
            }
        }
        return (sx / Double(max(n, 1)), sy / Double(max(n, 1)), n)
    }

    @Test func firstFrameWorldIsSeenDownTheFirstCamerasMinusY() throws {
        let scene = try Self.rolledScene()
        let axes = SceneAxes(scene)
        #expect(axes.rightName == "+y" && axes.upName == "+x" && axes.forwardDownName == "−z")

        var options = ScenePreviewOptions()
        options.width = 900
        options.frames = 3
        let sheet = try ScenePreviewSheet.render(scene, options: options)
        let layout = try ScenePreviewLayout(width: 900, frames: 3, depthWidth: 256, depthHeight: 192, color: false)
        #expect(sheet.width == 900 && sheet.height == layout.height)
        // The camera moved along world +y, its own right: from above (down the first
        // camera's −y) and from the side, the start is left of the end on one level. In
        // a gravity-aligned reading (+y up) the two would coincide from above.
        for panel in [ScenePanel.trajectoryAbove, .trajectorySide, .cloudAbove] {
            let a = Self.centroid(sheet, layout, panel, ScenePreviewSheet.startColor)
            let b = Self.centroid(sheet, layout, panel, ScenePreviewSheet.endColor)
            #expect(a.count > 10 && b.count > 10, "\(panel): \(a.count), \(b.count) marker pixels")
            #expect(b.x - a.x > 30 && abs(b.y - a.y) < 2, "\(panel): start \(a), end \(b)")
        }
        // Without confidence maps the confidence row is the "no confidence" gray.
        guard case let (x, y)? = layout.tile(column: 1, row: .confidence) else {
            Issue.record("no confidence row")
            return
        }
        let gray = ScenePreviewSheet.noConfidenceColor
        #expect(sheet[x + 3, y + 3, 0] == gray.0 && sheet[x + 3, y + 3, 1] == gray.1 && sheet[x + 3, y + 3, 2] == gray.2)
    }

    @Test func optionsAndLayoutRefuseWhatTheyCannotDraw() {
        var options = ScenePreviewOptions()
        options.frames = 0
        #expect(throws: RGBDError.self) { try options.validate() }
        options.frames = 5
        options.maxDepth = 0
        #expect(throws: RGBDError.self) { try options.validate() }
        #expect(throws: RGBDError.self) {
            _ = try ScenePreviewLayout(width: 100, frames: 3, depthWidth: 256, depthHeight: 192, color: true)
        }
        // 1000 frames merged as at most 300: every 4th.
        #expect(ScenePreviewOptions().cloudStep(frames: 1000) == 4)
        #expect(ScenePreviewOptions().cloudStep(frames: 300) == 1)
    }
}
