import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// `rgbd preview` through the real binary, its sheet decoded with PNGCodec and checked
/// against the sample's ground truth (Examples/sample/shot.truth.json).
@Suite(.serialized) struct PreviewCLITests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    static let sample = repository + "/Examples/sample/shot.json"

    /// Entries of Google's Turbo colormap as published (matplotlib's `turbo`, ×255 rounded):
    /// index → RGB. The reference the depth panel is checked against.
    static let turboReference: [Int: (Int, Int, Int)] = [
        101: (67, 247, 135), 102: (70, 248, 132), 103: (74, 248, 128),
        190: (252, 132, 35), 191: (251, 129, 34), 192: (251, 126, 33),
    ]

    static func pixel(_ image: ColorImage, _ x: Int, _ y: Int) -> (Int, Int, Int) {
        (Int(image[x, y, 0]), Int(image[x, y, 1]), Int(image[x, y, 2]))
    }

    static func isTurbo(_ p: (Int, Int, Int), near index: Int) -> Bool {
        (index - 1...index + 1).contains { i in
            guard let r = turboReference[i] else { return false }
            return r == p
        }
    }

    /// Pixels of a panel for which `test` holds.
    static func count(_ image: ColorImage, _ layout: PreviewLayout, _ panel: PreviewPanel,
                      _ test: ((Int, Int, Int)) -> Bool) -> Int {
        let (x0, y0) = layout.origin(of: panel)
        var n = 0
        for y in y0..<(y0 + layout.panelHeight) {
            for x in x0..<(x0 + layout.panelWidth) where test(pixel(image, x, y)) { n += 1 }
        }
        return n
    }

    @Test func sheetOfTheSampleHasEveryPanelInPlace() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try CLITests.run(["preview", Self.sample, "-o", directory, "--width", "1200", "--max-depth", "4"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(CLITests.files(in: directory) == ["shot.preview.png"])
        let sheet = try PNGCodec.decodeRGB(FileSystem.readFile(directory + "/shot.preview.png"))
        // The sample's color image is 1344×1008 (shot.truth.json).
        let layout = try PreviewLayout(width: 1200, colorWidth: 1344, colorHeight: 1008)
        #expect(sheet.width == 1200 && sheet.height == layout.height)

        // Depth panel: the depth map is 256×192 with fx = fy = 184.127, cx = 128.02,
        // cy = 95.97 (truth). The wall (z = 3 m) fills the top middle; the box's front
        // face is at z = 1.6 m, x from −0.95 to −0.35 m, y from 0.55 m down.
        let (dx, dy) = layout.origin(of: .depth)
        func panelPixel(depthU u: Double, v: Double) -> (Int, Int) {
            (dx + Int((u + 0.5) * Double(layout.panelWidth) / 256), dy + Int((v + 0.5) * Double(layout.panelHeight) / 192))
        }
        let f = 184.12698412698413, cx = 128.0190476190476, cy = 95.97460317460316
        for (u, v) in [(128.0, 20.0), (200.0, 60.0), (60.0, 40.0)] {
            let (x, y) = panelPixel(depthU: u, v: v)
            // 3 m on a 0–4 m scale: position 0.75, entry 191.
            #expect(Self.isTurbo(Self.pixel(sheet, x, y), near: 191), "wall at depth pixel (\(u), \(v)): \(Self.pixel(sheet, x, y))")
        }
        for (X, Y) in [(-0.65, 0.75), (-0.5, 0.62), (-0.8, 0.7)] {
            let (x, y) = panelPixel(depthU: (f * X / 1.6 + cx).rounded(), v: (f * Y / 1.6 + cy).rounded())
            // 1.6 m: position 0.4, entry 102.
            #expect(Self.isTurbo(Self.pixel(sheet, x, y), near: 102), "box at (\(X), \(Y)): \(Self.pixel(sheet, x, y))")
        }
        // The colorbar runs through the colormap from left to right.
        let bar = layout.colorbar
        #expect(Self.pixel(sheet, bar.x, bar.y + bar.height / 2) == (48, 18, 59))
        #expect(Self.pixel(sheet, bar.x + bar.width - 1, bar.y + bar.height / 2) == (122, 4, 3))

        // Captured color: the yellow lens grid is drawn over it, and only there.
        let yellow = { (p: (Int, Int, Int)) in p.0 > 200 && p.1 > 170 && p.1 < 235 && p.2 < 90 }
        let panelArea = layout.panelWidth * layout.panelHeight
        #expect(Self.count(sheet, layout, .captured, yellow) > panelArea / 100)
        #expect(Self.count(sheet, layout, .rectified, yellow) == 0)
        // Depth over color: white depth edges around the box.
        #expect(Self.count(sheet, layout, .overlay) { $0 == (255, 255, 255) } > 100)

        // Cloud panels: mostly covered by points, flying-pixel candidates (magenta) at the
        // box's edges.
        let background = PreviewSheet.background
        let magenta = PreviewSheet.flyingPixelColor
        for panel in [PreviewPanel.cloudFront, .cloudThreeQuarter] {
            let covered = Self.count(sheet, layout, panel) { $0 != (Int(background.0), Int(background.1), Int(background.2)) }
            #expect(covered > panelArea * 3 / 10, "\(panel): \(covered) of \(panelArea) pixels covered")
            let flying = Self.count(sheet, layout, panel) { $0 == (Int(magenta.0), Int(magenta.1), Int(magenta.2)) }
            #expect(flying > 50, "\(panel): \(flying) flying-pixel pixels")
        }
        // The three-quarter view is not the front view.
        let (fx0, fy0) = layout.origin(of: .cloudFront), (tx0, ty0) = layout.origin(of: .cloudThreeQuarter)
        var differing = 0
        for y in 0..<layout.panelHeight {
            for x in 0..<layout.panelWidth where Self.pixel(sheet, fx0 + x, fy0 + y) != Self.pixel(sheet, tx0 + x, ty0 + y) {
                differing += 1
            }
        }
        #expect(differing > panelArea / 3)

        // Header: text (light pixels) in the band above the panels, on the background.
        var light = 0
        for y in layout.margin..<(layout.margin + layout.headerHeight) {
            for x in 0..<sheet.width where Self.pixel(sheet, x, y).0 > 150 { light += 1 }
        }
        #expect(light > 2000, "header: \(light) light pixels")
        #expect(Self.pixel(sheet, 2, 2) == (Int(background.0), Int(background.1), Int(background.2)))
    }

    @Test func badInputsAreReportedAndTheBatchGoesOn() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let good = try CLITests.writeCapture(in: directory, stem: "a-good")
        try FileManager.default.copyItem(atPath: good.image, toPath: directory + "/b-bad.jpg")
        let text = try String(contentsOfFile: good.json, encoding: .utf8)
        let broken = text.replacingOccurrences(of: "  \"depth_data\" : [\n    [\n", with: "  \"depth_data\" : [\n    [\n      1.0,\n")
        try broken.write(toFile: directory + "/b-bad.json", atomically: true, encoding: .utf8)
        let output = directory + "/out"
        let run = try CLITests.run(["preview", directory, "-o", output, "--width", "600"])
        #expect(run.status == 1)
        let errors = run.stderr.split(separator: "\n").filter { $0.contains("error") }
        #expect(errors.count == 1 && errors.first?.contains("b-bad.json") == true, "\(run.stderr)")
        #expect(CLITests.files(in: output) == ["a-good.preview.png"])
        let sheet = try PNGCodec.decodeRGB(FileSystem.readFile(output + "/a-good.preview.png"))
        #expect(sheet.width == 600)

        // A cut JPEG is named; nothing is written.
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: good.image))
        try jpeg.prefix(jpeg.count / 3).write(to: URL(fileURLWithPath: directory + "/cut.jpg"))
        let cut = try CLITests.run(["preview", good.json, "--image", directory + "/cut.jpg", "-o", directory + "/out2"])
        #expect(cut.status == 1 && cut.stderr.contains("cut.jpg"), "\(cut.stderr)")
        #expect(CLITests.files(in: directory + "/out2").isEmpty)

        // Two captures that would write one file refuse the batch before anything is written.
        for sub in ["x", "y"] {
            try FileManager.default.createDirectory(atPath: directory + "/" + sub, withIntermediateDirectories: true)
            _ = try CLITests.writeCapture(in: directory + "/" + sub, stem: "shot")
        }
        let clash = try CLITests.run(["preview", directory + "/x/shot.json", directory + "/y/shot.json", "-o", directory + "/out3"])
        #expect(clash.status == 1 && clash.stderr.contains("shot.preview.png"), "\(clash.stderr)")
        #expect(CLITests.files(in: directory + "/out3").isEmpty)

        // Usage errors: exit status 64.
        for arguments in [["--width", "100"], ["--max-depth", "-1"], ["--min-depth", "2", "--max-depth", "1"]] {
            let bad = try CLITests.run(["preview", good.json, "-o", directory + "/out4"] + arguments)
            #expect(bad.status == 64, "\(arguments): \(bad.status) \(bad.stderr)")
        }
        let missing = try CLITests.run(["preview", "/nonexistent/shot.json", "-o", directory + "/out5"])
        #expect(missing.status == 1 && missing.stderr.contains("/nonexistent/shot.json"))
    }
}
