import Foundation
import Testing
@testable import RGBDOutput
@testable import RGBDKit
import RGBDSynth

/// `rgbd preview --upright` through the real binary: a portrait shot's sheet (EXIF 6) has
/// tall panels holding the stored sheet's panels turned a quarter turn clockwise, and its
/// marks where the synthetic scene's truth puts them; a photo without an orientation gets
/// the same sheet either way.
@Suite(.serialized) struct PreviewUprightCLITests {
    static let sheetWidth = 1200

    /// The panel `panel` of a decoded sheet.
    static func panel(_ sheet: ColorImage, _ layout: PreviewLayout, _ panel: PreviewPanel) -> ColorImage {
        let (x, y) = layout.origin(of: panel)
        return sheet.cropped(to: PixelRectangle(x: x, y: y, width: layout.panelWidth, height: layout.panelHeight))
    }

    /// The mean absolute difference of two images of one size, over every sample.
    static func meanDifference(_ a: ColorImage, _ b: ColorImage) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        return zip(a.samples, b.samples).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(a.samples.count)
    }

    /// A capture (640×480 photo, 160×120 depth map of the synthetic scene) whose JPEG says
    /// EXIF orientation `exif` (nil: no EXIF at all).
    static func capture(in directory: String, exif: Int?) throws -> String {
        let capture = try CLITests.writeCapture(in: directory, stem: "shot")
        if let exif {
            try Data(SyntheticOrientation.tagged(try FileSystem.readFile(capture.image), exif: exif))
                .write(to: URL(fileURLWithPath: capture.image))
        }
        return capture.json
    }

    static func sheet(_ json: String, _ directory: String, _ flags: [String]) throws -> ColorImage {
        let run = try CLITests.run(["preview", json, "-o", directory, "--width", "\(sheetWidth)", "--max-depth", "4",
                                    "--no-tags", "-q"] + flags)
        #expect(run.status == 0, "\(run.stderr)")
        return try PNGCodec.decodeRGB(FileSystem.readFile(directory + "/shot.preview.png"))
    }

    @Test func portraitShotShowsItsPanelsTurned() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let json = try Self.capture(in: directory, exif: 6)
        let stored = try Self.sheet(json, directory + "/stored", [])
        let upright = try Self.sheet(json, directory + "/upright", ["--upright"])
        let storedLayout = try PreviewLayout(width: Self.sheetWidth, colorWidth: 640, colorHeight: 480)
        let uprightLayout = try PreviewLayout(width: Self.sheetWidth, colorWidth: 480, colorHeight: 640)
        #expect(stored.width == Self.sheetWidth && stored.height == storedLayout.height)
        #expect(upright.width == Self.sheetWidth && upright.height == uprightLayout.height)
        // Tall panels: 4:3 the other way round.
        #expect(uprightLayout.panelHeight == Int((Double(uprightLayout.panelWidth) * 4 / 3).rounded()))

        // Each raster panel is the stored sheet's turned a quarter turn clockwise: compared
        // at 30×40, both resampled (the panels have different sizes), and the comparison
        // tells a turned panel from an unturned one.
        let grid = (width: 30, height: 40)
        for (panel, tolerance) in [(PreviewPanel.captured, 6.0), (.rectified, 4.0), (.depth, 6.0), (.overlay, 6.0)] {
            let before = Self.panel(stored, storedLayout, panel)
            let after = Self.panel(upright, uprightLayout, panel).areaAverage(toWidth: grid.width, height: grid.height)
            let turned = before.rotated(clockwiseQuarterTurns: 1).areaAverage(toWidth: grid.width, height: grid.height)
            let unturned = before.areaAverage(toWidth: grid.width, height: grid.height)
            let counter = before.rotated(clockwiseQuarterTurns: 3).areaAverage(toWidth: grid.width, height: grid.height)
            let difference = Self.meanDifference(after, turned)
            #expect(difference < tolerance, "\(panel): \(difference) levels from the stored panel turned")
            #expect(Self.meanDifference(after, unturned) > 3 * difference + 5, "\(panel): as close to the unturned panel")
            #expect(Self.meanDifference(after, counter) > 3 * difference + 5, "\(panel): as close to the panel turned the other way")
        }

        // The front view of the cloud is the turned camera's: the box's red front face
        // where the stored view's is, turned (relative to the panel; the view is fitted to
        // each panel with its own margins, so not pixel for pixel).
        func red(_ image: ColorImage) -> (x: Double, y: Double, count: Int) {
            var sx = 0.0, sy = 0.0, n = 0
            for y in 0..<image.height {
                for x in 0..<image.width where image[x, y, 0] > 150 && image[x, y, 1] < 100 && image[x, y, 2] < 100 {
                    sx += Double(x) + 0.5; sy += Double(y) + 0.5; n += 1
                }
            }
            return (sx / Double(max(n, 1)) / Double(image.width), sy / Double(max(n, 1)) / Double(image.height), n)
        }
        let before = red(Self.panel(stored, storedLayout, .cloudFront))
        let after = red(Self.panel(upright, uprightLayout, .cloudFront))
        #expect(before.count > 1000 && after.count > 1000)
        // (x, y) of a w × h panel, turned clockwise: (h − y, x), relative (1 − y/h, x/w).
        #expect(abs(after.x - (1 - before.y)) < 0.04 && abs(after.y - before.x) < 0.04,
                "box at (\(after.x), \(after.y)) of the upright cloud panel; turned from the stored one: (\(1 - before.y), \(before.x))")

        // A marker from the truth: the box's front face (x −0.95…−0.35 m, y 0.55…1.2 m at
        // z = 1.6 m; below y = 0.83 m inside the image) projects through the stored rectified color's intrinsics to (u, v);
        // turned clockwise, pixel (u, v) of the 640×480 image is (479 − v, u) of the 480×640
        // one. There the upright rectified panel shows the box's red (200, 60, 50).
        let synthetic = SyntheticCapture(colorWidth: 640, colorHeight: 480, depthWidth: 160, depthHeight: 120)
        let k = synthetic.colorIntrinsics
        let (ox, oy) = uprightLayout.origin(of: .rectified)
        let scale = Double(uprightLayout.panelWidth) / 480
        for (X, Y) in [(-0.65, 0.7), (-0.85, 0.62), (-0.45, 0.78)] {
            let u = k.fx * X / 1.6 + k.cx, v = k.fy * Y / 1.6 + k.cy
            let (x, y) = (479 - v, u)
            let p = PreviewCLITests.pixel(upright, ox + Int((x + 0.5) * scale), oy + Int((y + 0.5) * scale))
            #expect(abs(p.0 - 200) < 25 && abs(p.1 - 60) < 25 && abs(p.2 - 50) < 25, "box at (\(X), \(Y)): \(p)")
        }
    }

    /// Tags are found in the stored rectified color and drawn over the turned panel: the
    /// outline's centre where the truth's tag centre lands once turned.
    @Test func tagOutlinesFollowTheTurnedPanel() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var scene = SyntheticScene()
        scene.tags = [try #require(SyntheticTag(id: 1, size: 0.3, pose: SyntheticTag.pose(center: SIMD3(0.2, 0, 1.5))))]
        let synthetic = SyntheticCapture(colorWidth: 1344, colorHeight: 1008, depthWidth: 512, depthHeight: 384, scene: scene)
        let capture = try synthetic.write(to: directory, stem: "shot")
        try Data(SyntheticOrientation.tagged(try FileSystem.readFile(capture.image), exif: 6))
            .write(to: URL(fileURLWithPath: capture.image))
        let run = try CLITests.run(["preview", capture.json, "-o", directory + "/out", "--width", "\(Self.sheetWidth)",
                                    "--upright", "-q"])
        #expect(run.status == 0, "\(run.stderr)")
        let sheet = try PNGCodec.decodeRGB(FileSystem.readFile(directory + "/out/shot.preview.png"))
        let layout = try PreviewLayout(width: Self.sheetWidth, colorWidth: 1008, colorHeight: 1344)
        let panel = Self.panel(sheet, layout, .rectified)
        // The outline's bounding box (the axes drawn over it hide parts of its sides).
        var (x0, x1, y0, y1, n) = (Int.max, Int.min, Int.max, Int.min, 0)
        for y in 0..<panel.height {
            for x in 0..<panel.width where panel[x, y, 0] < 60 && panel[x, y, 1] > 200 && panel[x, y, 2] > 220 {
                (x0, x1, y0, y1, n) = (min(x0, x), max(x1, x), min(y0, y), max(y1, y), n + 1)
            }
        }
        #expect(n > 100, "no tag outline drawn (\(n) pixels)")
        let centre = (Double(x0 + x1) / 2 + 0.5, Double(y0 + y1) / 2 + 0.5)
        // The tag's centre (0.2, 0, 1.5) at (u, v) of the stored 1344×1008 image is
        // (1007 − v, u) of the turned one, scaled to the panel (pixel centres at + ½).
        let k = synthetic.colorIntrinsics
        let u = k.fx * 0.2 / 1.5 + k.cx, v = k.cy
        let scale = Double(layout.panelWidth) / 1008
        let expected = ((1007 - v + 0.5) * scale, (u + 0.5) * scale)
        #expect(abs(centre.0 - expected.0) < 1.5 && abs(centre.1 - expected.1) < 1.5,
                "outline centre \(centre), the tag's \(expected)")
        // Its side: the black square's 0.3 m at 1.5 m, fx·0.3/1.5 photo pixels.
        #expect(abs(Double(x1 - x0) - k.fx * 0.2 * scale) < 3 && abs(Double(y1 - y0) - k.fy * 0.2 * scale) < 3,
                "outline \(x1 - x0)×\(y1 - y0)")
    }

    /// Placemarks are located in the turned camera: gravity turns with the camera axes (a
    /// level stored image's down, +y, is the turned image's −x after a quarter turn clockwise).
    @Test func gravityTurnsWithTheCamera() throws {
        var geo = GeoTag()
        geo.gravity = GeoTag.Gravity(acceleration: SIMD3(-1, 0, 0))   // down = +y: level as stored
        let down = try #require(geo.gravity).down
        #expect(down == SIMD3(0, 1, 0))
        for (turns, expected) in [(1, SIMD3(-1.0, 0, 0)), (2, SIMD3(0.0, -1, 0)), (3, SIMD3(1.0, 0, 0)), (0, down)] {
            let turned = try #require(PreviewSheet.turned(geo, clockwiseQuarterTurns: turns)?.gravity)
            #expect(abs(turned.down.x - expected.x) < 1e-12 && abs(turned.down.y - expected.y) < 1e-12
                    && abs(turned.down.z - expected.z) < 1e-12, "\(turns): \(turned.down)")
            #expect(abs(turned.magnitude - 1) < 1e-12)
        }
        #expect(PreviewSheet.turned(nil, clockwiseQuarterTurns: 1) == nil)
    }

    @Test func withoutAnOrientationUprightChangesNothing() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for exif in [nil, 1] as [Int?] {
            let json = try Self.capture(in: directory + "/\(exif ?? 0)", exif: exif)
            let stored = try Self.sheet(json, directory + "/\(exif ?? 0)/stored", [])
            let upright = try Self.sheet(json, directory + "/\(exif ?? 0)/upright", ["--upright"])
            #expect(stored.samples == upright.samples, "EXIF \(String(describing: exif)): the sheets differ")
        }
    }

    /// A mirroring orientation is left as stored, with a warning naming the photo.
    @Test func mirroringOrientationIsLeftAsStoredWithAWarning() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let json = try Self.capture(in: directory, exif: 5)
        let run = try CLITests.run(["preview", json, "-o", directory + "/out", "--width", "600", "--no-tags", "--upright"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("shot.jpg") && run.stderr.contains("mirrors the image"), "\(run.stderr)")
        let sheet = try PNGCodec.decodeRGB(FileSystem.readFile(directory + "/out/shot.preview.png"))
        #expect(sheet.height == (try PreviewLayout(width: 600, colorWidth: 640, colorHeight: 480)).height)
    }

    /// The header says the turned images' sizes and intrinsics: a quarter turn clockwise of
    /// a w × h image gives fx' = fy, fy' = fx, cx' = h − 1 − cy, cy' = cx.
    @Test func headerGivesTheTurnedIntrinsics() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try Capture.load(json: try Self.capture(in: directory, exif: 6))
        #expect(capture.metadata.orientation == PhotoOrientation(clockwiseQuarterTurns: 1))
        let lens = capture.calibration.scaled(toWidth: 640, height: 480).distortion
        let lines = PreviewSheet.headerLines(capture: capture, lens: lens, turns: 1)
        let values = Dictionary(lines.flatMap { $0 }, uniquingKeysWith: { a, _ in a })
        #expect(values["color"] == "480×640" && values["depth"] == "120×160", "\(values)")
        #expect(values["upright"] == "turned 90° clockwise (EXIF 6)", "\(values)")
        let c = capture.calibration.scaled(toWidth: 640, height: 480).intrinsics
        func f(_ v: Double) -> String { PreviewSheet.format(v, decimals: 2) }
        #expect(values["color intrinsics"] == "fx \(f(c.fy))  fy \(f(c.fx))  cx \(f(479 - c.cy))  cy \(f(c.cx))",
                "\(values["color intrinsics"] ?? "")")
        let stored = Dictionary(PreviewSheet.headerLines(capture: capture, lens: lens).flatMap { $0 },
                                uniquingKeysWith: { a, _ in a })
        #expect(stored["color"] == "640×480" && stored["upright"] == nil)
        #expect(stored["color intrinsics"] == "fx \(f(c.fx))  fy \(f(c.fy))  cx \(f(c.cx))  cy \(f(c.cy))")
    }
}
