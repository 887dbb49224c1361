import Foundation
import Testing
@testable import RGBDScan
@testable import RGBDOutput
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
        // No frame has a confidence map: no confidence row.
        let layout = try ScenePreviewLayout(width: 900, frames: 3, depthWidth: 256, depthHeight: 192, color: false,
                                            confidence: false)
        #expect(layout.rows == [.depth])
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
        // Without confidence maps nothing is drawn as if there were: no "no confidence map"
        // tiles, and the cloud's caption says every depth was kept.
        let gray = ScenePreviewSheet.noConfidenceColor
        var grayPixels = 0
        for y in 0..<sheet.height {
            for x in 0..<sheet.width where sheet[x, y, 0] == gray.0 && sheet[x, y, 1] == gray.1 && sheet[x, y, 2] == gray.2 {
                grayPixels += 1
            }
        }
        #expect(grayPixels == 0)
        let cloud = try SceneCloud.build(scene, options: SceneCloudOptions())
        #expect(cloud.framesWithConfidence == 0 && cloud.frames == 6)
        #expect(ScenePreviewSheet.confidenceNote(cloud, minimum: 2) == "no confidence maps: every depth kept")
        var some = cloud
        some.framesWithConfidence = 2
        #expect(ScenePreviewSheet.confidenceNote(some, minimum: 2) == "confidence ≥ 2 (2 of 6 frames have maps)")
        some.framesWithConfidence = 6
        #expect(ScenePreviewSheet.confidenceNote(some, minimum: 1) == "confidence ≥ 1")
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

    /// A close-up: the camera moves 0.3 m along +x looking down −z at a wall 1.5 m away
    /// (gravity-aligned world), so the cloud spans about 2 m and the path 0.3 m.
    static func closeUp() throws -> Scene {
        var frames: [SceneFrameInfo] = []
        for i in 0..<10 {
            guard let pose = Pose(quaternionX: 1, y: 0, z: 0, w: 0, translation: SIMD3(0.3 * Double(i) / 9, 0, 0)) else {
                throw RGBDError(.invalidArgument, "not a rotation")
            }
            let k = Intrinsics(fx: 200, fy: 200, cx: 128, cy: 96, width: 256, height: 192)
            frames.append(SceneFrameInfo(index: i, time: 0.1 * Double(i), pose: pose, colorIntrinsics: k, depthIntrinsics: k))
        }
        return Scene(path: "/scans/door", format: SceneFormat(app: .strayScanner, variant: "test"), world: .gravityAligned,
                     frames: frames, colorSize: nil, depthSize: (256, 192), framesPerSecond: 10, skipped: [],
                     warnings: [], details: [], storage: FlatStorage(depth: 1.5, width: 256, height: 192))
    }

    /// The trajectory panels frame the path (not the wall the cloud reaches), and the scale
    /// bar is a 1-2-5 length from the extent shown: 10 cm for this 0.3 m path, a third of
    /// the path's length on the panel.
    @Test func closeUpPathFillsItsPanelWithATenCentimeterBar() throws {
        let scene = try Self.closeUp()
        let cloud = try SceneCloud.build(scene, options: SceneCloudOptions())
        let axes = SceneAxes(scene)
        let geometry = SceneGeometry(scene: scene, cloud: cloud, axes: axes)
        let layout = try ScenePreviewLayout(width: 1600, frames: 5, depthWidth: 256, depthHeight: 192, color: false)
        let above = geometry.fit(geometry.trajectoryFramed, right: axes.right, down: axes.forwardDown,
                                 width: layout.panelWidth, height: layout.panelHeight)
        let xs = geometry.centres.map { above.view.pixel($0).x }
        let path = (xs.max() ?? 0) - (xs.min() ?? 0)
        #expect(path > 0.4 * Double(layout.panelWidth), "the path is \(path) of \(layout.panelWidth) pixels")
        let bar = ScenePreviewPlacement.scaleBar(extent: above.extent, pixelsPerMeter: above.view.scale,
                                                 room: 0.4 * Double(layout.panelWidth))
        #expect(abs(bar.meters - 0.1) < 1e-12 && bar.label == "10 cm", "\(bar)")
        #expect(abs(bar.pixels - path / 3) < 1e-6, "the bar is \(bar.pixels) pixels, the 0.3 m path \(path)")
        // The cloud's panel frames the wall too: the same path is shorter there.
        let plan = geometry.fit(geometry.framed, right: axes.right, down: axes.forwardDown,
                                width: layout.panelWidth, height: layout.panelHeight)
        #expect(plan.extent > 1.5 && plan.view.scale < above.view.scale)
    }

    @Test(arguments: [
        (0.4, 1000.0, 0.1, "10 cm"), (5, 100, 1, "1 m"), (12, 100, 2, "2 m"), (0.1, 3000, 0.02, "2 cm"),
        (0.03, 10000, 0.01, "1 cm"), (0.02, 20000, 0.005, "5 mm"), (1.4, 500, 0.2, "20 cm"), (40, 10, 10, "10 m"),
    ])
    func scaleBarsAreOneTwoFiveSteps(extent: Double, pixelsPerMeter: Double, meters: Double, label: String) {
        let bar = ScenePreviewPlacement.scaleBar(extent: extent, pixelsPerMeter: pixelsPerMeter, room: 1e9)
        #expect(abs(bar.meters - meters) < 1e-12 && bar.label == label, "\(extent) m: \(bar)")
        #expect(abs(bar.pixels - bar.meters * pixelsPerMeter) < 1e-9)
        // At most a third of the extent; the next step up would be more.
        #expect(bar.meters <= extent / 3 + 1e-12)
        let next = bar.meters * (label.hasPrefix("2") ? 2.5 : 2)
        #expect(next > extent / 3)
        // A short room: the bar keeps to it.
        let short = ScenePreviewPlacement.scaleBar(extent: extent, pixelsPerMeter: pixelsPerMeter, room: 0.3 * meters * pixelsPerMeter)
        #expect(short.pixels <= 0.3 * meters * pixelsPerMeter && short.meters < meters)
    }

    /// Start and end labels on paths of every direction and length, down to none: never
    /// over each other or the other marker, inside the panel; a long path keeps start on
    /// the left and end on the right.
    @Test func markerLabelsDoNotOverlap() throws {
        let canvas = try Canvas(width: 1, height: 1, background: Canvas.Color(0, 0, 0))
        let t = 1.0, r = 6 * t
        let panel = (origin: SIMD2(100.0, 50), size: SIMD2(500.0, 375))
        let bounds = ScenePreviewPlacement.Box(x: 100, y: 50, width: 500, height: 375)
        let start = SIMD2(350.0, 230)
        var cases: [SIMD2<Double>] = [.zero]
        // Ends anywhere around the start, the end marker inside the panel.
        for length in [2.0, 5, 10, 20, 40, 150] {
            for k in 0..<16 {
                let a = Double(k) * .pi / 8
                cases.append(SIMD2(cos(a), sin(a)) * length)
            }
        }
        for offset in cases {
            let end = start + offset
            let labels = ScenePreviewSheet.markerLabels(start: start, end: end, textScale: t, panel: panel) {
                canvas.textWidth($0, size: 11.5 * t, bold: true)
            }
            func disc(_ p: SIMD2<Double>) -> ScenePreviewPlacement.Box {
                ScenePreviewPlacement.Box(x: p.x - r, y: p.y - r, width: 2 * r, height: 2 * r)
            }
            #expect(!labels.start.overlaps(labels.end), "end at \(offset): \(labels)")
            #expect(!labels.start.overlaps(disc(end)) && !labels.end.overlaps(disc(start)), "end at \(offset): \(labels)")
            #expect(!labels.start.overlaps(disc(start)) && !labels.end.overlaps(disc(end)), "end at \(offset): \(labels)")
            #expect(bounds.contains(labels.start) && bounds.contains(labels.end), "end at \(offset): \(labels)")
        }
        let far = ScenePreviewSheet.markerLabels(start: start, end: start + SIMD2(200, 0), textScale: t, panel: panel) {
            canvas.textWidth($0, size: 11.5 * t, bold: true)
        }
        #expect(far.start.x + far.start.width < start.x && far.end.x > start.x + 200)
    }

    /// A 480-pixel sheet of a scan with a long path: the header wraps and shortens its
    /// texts so that every one lies between the margins, none over another, all within the
    /// header band the layout makes for them.
    @Test func narrowHeaderStaysOnTheSheet() throws {
        var scene = try Self.closeUp()
        scene = Scene(path: "/home/someone/Documents/phone exports/scans of the flat/2024-05-17 kitchen, second try (LiDAR, Stray Scanner)/scan-0042",
                      format: SceneFormat(app: .strayScanner, variant: "folder, odometry.csv with 9 columns with timestamps and frame numbers"),
                      world: .gravityAligned, frames: scene.frames, colorSize: (1920, 1440), depthSize: (256, 192),
                      framesPerSecond: 60, skipped: [], warnings: [], details: [], storage: FlatStorage(depth: 1.5, width: 256, height: 192))
        let canvas = try Canvas(width: 1, height: 1, background: Canvas.Color(0, 0, 0))
        let bands = try ScenePreviewLayout(width: 480, frames: 12, depthWidth: 256, depthHeight: 192, color: true)
        let cloud = try SceneCloud.build(scene, options: SceneCloudOptions())
        let header = ScenePreviewSheet.headerTexts(scene: scene, cloud: cloud, trajectoryLength: 0.3, width: 480,
                                                   margin: bands.margin, textScale: bands.textScale) {
            canvas.textWidth($0, size: $1, bold: $2)
        }
        #expect(header.lines > 3, "a 480-pixel sheet wraps the header: \(header.lines) lines")
        let layout = try ScenePreviewLayout(width: 480, frames: 12, depthWidth: 256, depthHeight: 192, color: true,
                                            headerLines: header.lines)
        let left = Double(layout.margin), right = Double(480 - layout.margin)
        for text in header.texts where !text.text.isEmpty {
            #expect(text.x >= left - 1e-9 && text.x + text.width <= right + 1e-9, "\(text)")
            #expect(abs(canvas.textWidth(text.text, size: text.size, bold: text.bold) - text.width) < 1e-9)
            #expect(text.y <= Double(layout.margin + layout.headerHeight), "\(text) below the header band")
        }
        let lines = Dictionary(grouping: header.texts, by: \.y)
        for (_, line) in lines {
            let sorted = line.sorted { $0.x < $1.x }
            for (a, b) in zip(sorted, sorted.dropFirst()) { #expect(a.x + a.width <= b.x + 1e-9, "\(a) runs into \(b)") }
        }
        // The path is shortened in its middle: its start and its name are kept.
        let path = try #require(header.texts.first { $0.text.hasPrefix("/home/") })
        #expect(path.text.contains("…") && path.text.hasSuffix("scan-0042"), "\(path.text)")
        // At 1600 pixels nothing needs wrapping.
        let wide = ScenePreviewSheet.headerTexts(scene: scene, cloud: cloud, trajectoryLength: 0.3, width: 1600, margin: 20,
                                                 textScale: 1) { canvas.textWidth($0, size: $1, bold: $2) }
        #expect(wide.lines == 3)
    }
}
