import Foundation
import Testing
import RGBDKit

/// `rgbd preview` of scans through the real binary: a small Stray Scanner scan of known
/// geometry is written here (a camera moving 1 m along +x, looking down −z at a wall 2 m
/// away), its sheet decoded and checked by geometry, not by snapshot.
@Suite(.serialized) struct ScenePreviewCLITests {
    typealias RGB = (Int, Int, Int)

    static func rgb(_ c: (UInt8, UInt8, UInt8)) -> RGB { (Int(c.0), Int(c.1), Int(c.2)) }

    /// An 8-bit grayscale PNG (color type 0), its deflate stream in stored blocks.
    static func gray8PNG(width: Int, height: Int, samples: [UInt8]) -> [UInt8] {
        var table = [UInt32](repeating: 0, count: 256)
        for n in 0..<256 {
            var c = UInt32(n)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            table[n] = c
        }
        func crc(_ bytes: [UInt8]) -> UInt32 {
            var c: UInt32 = 0xFFFF_FFFF
            for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
            return c ^ 0xFFFF_FFFF
        }
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be32(UInt32(data.count)) + body + be32(crc(body))
        }
        var raw: [UInt8] = []
        for y in 0..<height { raw.append(0); raw += samples[(y * width)..<((y + 1) * width)] }
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in raw { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        var zlib: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let n = min(65535, raw.count - offset)
            let last: UInt8 = offset + n == raw.count ? 1 : 0
            zlib += [last, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            zlib += raw[offset..<(offset + n)]
            offset += n
        } while offset < raw.count
        zlib += be32(b << 16 | a)
        let header = be32(UInt32(width)) + be32(UInt32(height)) + [8, 0, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    /// A Stray Scanner scan `name` in `directory`: `frames` frames 0.1 s apart, the camera
    /// moving from x = 0 to x = `path` (1 m), upright (OpenCV camera: 180° about x), looking down
    /// world −z at a wall at z = −2 m (depth 2 m everywhere); K at 1920×1440 with
    /// fx = fy = 1500, so the depth map (256×192) sees ±1.28 m of wall across. Confidence
    /// is 0 on the top 20 rows, 1 on the next 20 and 2 below. With `color`, an `rgb.mp4`
    /// of red frames made by the ffmpeg tool.
    static func writeWallScan(in directory: String, name: String = "wall", frames: Int = 8,
                              color: Bool = false, path: Double = 1) throws -> String {
        let folder = directory + "/" + name
        for sub in ["depth", "confidence"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true)
        }
        var odometry = "timestamp, frame, x, y, z, qx, qy, qz, qw\n"
        for i in 0..<frames {
            let x = path * Double(i) / Double(frames - 1)
            odometry += "\(100 + Double(i) * 0.1), \(String(format: "%06d", i)), \(x), 0.0, 0.0, 1.0, 0.0, 0.0, 0.0\n"
        }
        try odometry.write(toFile: folder + "/odometry.csv", atomically: true, encoding: .utf8)
        try "1500.0, 0.0, 960.0\n0.0, 1500.0, 720.0\n0.0, 0.0, 1.0\n"
            .write(toFile: folder + "/camera_matrix.csv", atomically: true, encoding: .utf8)
        let depth = try PNGCodec.encodeGray16(width: 256, height: 192, samples: [UInt16](repeating: 2000, count: 256 * 192))
        let confidence = gray8PNG(width: 256, height: 192, samples: (0..<(256 * 192)).map { i in
            let row = i / 256
            return row < 20 ? 0 : row < 40 ? 1 : 2
        })
        for i in 0..<frames {
            let stem = String(format: "%06d", i)
            try Data(depth).write(to: URL(fileURLWithPath: folder + "/depth/\(stem).png"))
            try Data(confidence).write(to: URL(fileURLWithPath: folder + "/confidence/\(stem).png"))
        }
        if color {
            let run = try CLITests.run(["-v", "error", "-f", "lavfi", "-i", "color=c=red:s=1920x1440:r=10",
                                        "-frames:v", "\(frames)", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                                        folder + "/rgb.mp4"], executable: "/usr/bin/ffmpeg")
            guard run.status == 0 else { throw RGBDError(.invalidArgument, "ffmpeg failed: \(run.stderr)") }
        }
        return folder
    }

    static func pixel(_ image: ColorImage, _ x: Int, _ y: Int) -> RGB {
        (Int(image[x, y, 0]), Int(image[x, y, 1]), Int(image[x, y, 2]))
    }

    /// The centroid and count of a panel's pixels equal to `color`.
    static func centroid(_ image: ColorImage, _ layout: ScenePreviewLayout, _ panel: ScenePanel,
                         _ color: RGB) -> (x: Double, y: Double, count: Int) {
        let (x0, y0) = layout.origin(of: panel)
        var sx = 0.0, sy = 0.0, n = 0
        for y in y0..<(y0 + layout.panelHeight) {
            for x in x0..<(x0 + layout.panelWidth) where pixel(image, x, y) == color {
                sx += Double(x); sy += Double(y); n += 1
            }
        }
        return n == 0 ? (.nan, .nan, 0) : (sx / Double(n), sy / Double(n), n)
    }

    @Test func wallScanSheetShowsItsGeometry() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scan = try Self.writeWallScan(in: directory)
        let output = directory + "/out"
        let run = try CLITests.run(["preview", scan, "-o", output, "--width", "1200", "--frames", "4", "--max-depth", "4"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(CLITests.files(in: output) == ["wall.preview.png"])
        let sheet = try PNGCodec.decodeRGB(FileSystem.readFile(output + "/wall.preview.png"))
        let layout = try ScenePreviewLayout(width: 1200, frames: 4, depthWidth: 256, depthHeight: 192, color: false)
        #expect(sheet.width == 1200 && sheet.height == layout.height)
        #expect(layout.rows == [.depth, .confidence])

        let start = Self.rgb(ScenePreviewSheet.startColor), end = Self.rgb(ScenePreviewSheet.endColor)
        // Trajectory from above and from the side: the camera moved along +x, so the start
        // is left of the end, on one level (from above, +z is down; from the side, +y is up).
        for panel in [ScenePanel.trajectoryAbove, .trajectorySide] {
            let a = Self.centroid(sheet, layout, panel, start), b = Self.centroid(sheet, layout, panel, end)
            #expect(a.count > 20 && b.count > 20, "\(panel): markers \(a.count), \(b.count) pixels")
            #expect(b.x - a.x > 40, "\(panel): start at \(a.x), end at \(b.x)")
            #expect(abs(a.y - b.y) < 2, "\(panel): start at \(a.y), end at \(b.y)")
        }

        // The cloud from above: the wall is a line 2 m beyond the path (up the panel), from
        // x = −1.28 to 2.27 m; the markers give the scale (1 m apart).
        let a = Self.centroid(sheet, layout, .cloudAbove, start), b = Self.centroid(sheet, layout, .cloudAbove, end)
        #expect(a.count > 20 && b.count > 20)
        let perMeter = b.x - a.x
        #expect(perMeter > 20)
        let (x0, y0) = layout.origin(of: .cloudAbove)
        // A depth-only cloud is drawn gray by height (equal channels, 80 and up), which
        // neither the background, the path, the markers nor the text are.
        var lo = Int.max, hi = Int.min, top = Int.max, bottom = Int.min, gray = 0
        for y in y0..<(y0 + layout.panelHeight) {
            for x in x0..<(x0 + layout.panelWidth) {
                let p = Self.pixel(sheet, x, y)
                guard p.0 == p.1 && p.1 == p.2 && p.0 >= 80 else { continue }
                lo = min(lo, x); hi = max(hi, x); top = min(top, y); bottom = max(bottom, y); gray += 1
            }
        }
        #expect(gray > 100, "\(gray) wall pixels")
        let tolerance = 0.04 * perMeter + 3
        #expect(abs(Double(lo) - (a.x - 1.28 * perMeter)) < tolerance, "wall's left end at \(lo), expected \(a.x - 1.28 * perMeter)")
        #expect(abs(Double(hi) - (a.x + 2.27 * perMeter)) < tolerance, "wall's right end at \(hi), expected \(a.x + 2.27 * perMeter)")
        let wallRow = a.y - 2 * perMeter
        #expect(Double(top) > wallRow - tolerance && Double(bottom) < wallRow + tolerance,
                "wall rows \(top)...\(bottom), expected about \(wallRow)")

        // The strip: four depth tiles of 2 m on the 0–4 m scale (the middle of Turbo) along
        // a line through the depth row, counted as runs of that color; the confidence row
        // shows the three levels top to bottom.
        let (r, g, bl) = Colormap.turbo(0.5)
        let mid = (Int(r), Int(g), Int(bl))
        guard case let (_, depthY)? = layout.tile(column: 0, row: .depth),
              case let (_, confidenceY)? = layout.tile(column: 0, row: .confidence) else {
            Issue.record("no depth or confidence row")
            return
        }
        var runs = 0, inside = false
        for x in 0..<sheet.width {
            let here = Self.pixel(sheet, x, depthY + layout.tileHeight / 2) == mid
            if here && !inside { runs += 1 }
            inside = here
        }
        #expect(runs == 4, "\(runs) depth tiles")
        let levels = ScenePreviewSheet.confidenceColors.map(Self.rgb)
        for column in 0..<4 {
            guard case let (x, _)? = layout.tile(column: column, row: .confidence) else { continue }
            let cx = x + layout.tileWidth / 2
            let seen = [2, 30, 150].map { Self.pixel(sheet, cx, confidenceY + $0 * layout.tileHeight / 192) }
            #expect(seen.count == 3 && seen[0] == levels[0] && seen[1] == levels[1] && seen[2] == levels[2],
                    "column \(column): \(seen)")
        }
    }

    @Test func colorScanHasAColorRow() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") else { return }
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scan = try Self.writeWallScan(in: directory, name: "red", frames: 6, color: true)
        let run = try CLITests.run(["preview", scan, "-o", directory + "/out", "--width", "900", "--frames", "3"])
        #expect(run.status == 0, "\(run.stderr)")
        let sheet = try PNGCodec.decodeRGB(FileSystem.readFile(directory + "/out/red.preview.png"))
        let layout = try ScenePreviewLayout(width: 900, frames: 3, depthWidth: 256, depthHeight: 192, color: true)
        #expect(sheet.height == layout.height)
        for column in 0..<3 {
            guard case let (x, y)? = layout.tile(column: column, row: .color) else {
                Issue.record("no color row")
                return
            }
            let p = Self.pixel(sheet, x + layout.tileWidth / 2, y + layout.tileHeight / 2)
            #expect(p.0 > 200 && p.1 < 60 && p.2 < 60, "column \(column): \(p)")
        }
        // The merged cloud takes the frames' colors: red points, not white.
        let (x0, y0) = layout.origin(of: .cloudAbove)
        var red = 0
        for y in y0..<(y0 + layout.panelHeight) {
            for x in x0..<(x0 + layout.panelWidth) {
                let p = Self.pixel(sheet, x, y)
                if p.0 > 200 && p.1 < 60 && p.2 < 60 { red += 1 }
            }
        }
        #expect(red > 100, "\(red) red cloud pixels")
    }

    @Test func capturesAndScansMixAndABadScanWritesNothing() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scan = try Self.writeWallScan(in: directory, frames: 3)
        let capture = try CLITests.writeCapture(in: directory, stem: "shot")
        let bad = try Self.writeWallScan(in: directory, name: "bad", frames: 3)
        try "timestamp, frame, x, y, z, qx, qy, qz, qw\n0.0, 000000, 0, 0, 0, 1, 0, 0\n"
            .write(toFile: bad + "/odometry.csv", atomically: true, encoding: .utf8)
        let output = directory + "/out"
        let run = try CLITests.run(["preview", capture.json, scan, bad, "-o", output, "--width", "800"])
        #expect(run.status == 1)
        let errors = run.stderr.split(separator: "\n").filter { $0.contains("error") }
        #expect(errors.count == 1 && errors.first?.contains(bad + "/odometry.csv") == true, "\(run.stderr)")
        #expect(CLITests.files(in: output) == ["shot.preview.png", "wall.preview.png"])
        // The capture still gets the capture sheet (its layout's size), the scan the scan sheet.
        let shot = try PNGCodec.decodeRGB(FileSystem.readFile(output + "/shot.preview.png"))
        #expect(shot.height == (try PreviewLayout(width: 800, colorWidth: 640, colorHeight: 480)).height)
        let wall = try PNGCodec.decodeRGB(FileSystem.readFile(output + "/wall.preview.png"))
        #expect(wall.height == (try ScenePreviewLayout(width: 800, frames: 3, depthWidth: 256, depthHeight: 192, color: false)).height)

        // A bad scan alone: exit 1, one line, nothing written.
        let alone = try CLITests.run(["preview", bad, "-o", directory + "/out2"])
        #expect(alone.status == 1 && alone.stderr.split(separator: "\n").filter { $0.contains("error") }.count == 1,
                "\(alone.stderr)")
        #expect(CLITests.files(in: directory + "/out2").isEmpty)
        let frames = try CLITests.run(["preview", scan, "-o", directory + "/out3", "--frames", "0"])
        #expect(frames.status == 64)
    }

    @Test func helpExplainsTheScanSheet() throws {
        let help = try CLITests.run(["preview", "--help"])
        #expect(help.status == 0)
        for phrase in ["SCAN", "trajectory", "frustum", "--frames", "confidence", "gravity-aligned"] {
            #expect(help.stdout.contains(phrase), "help lacks \(phrase)")
        }
    }

    /// The bounding box of a panel's pixels equal to `color` (nil when none).
    static func bounds(_ image: ColorImage, _ layout: ScenePreviewLayout, _ panel: ScenePanel,
                       _ color: RGB) -> (x0: Int, y0: Int, x1: Int, y1: Int, count: Int)? {
        let (px, py) = layout.origin(of: panel)
        var box: (x0: Int, y0: Int, x1: Int, y1: Int, count: Int)?
        for y in py..<(py + layout.panelHeight) {
            for x in px..<(px + layout.panelWidth) where pixel(image, x, y) == color {
                let b = box ?? (x, y, x, y, 0)
                box = (min(b.x0, x), min(b.y0, y), max(b.x1, x), max(b.y1, y), b.count + 1)
            }
        }
        return box
    }

    /// `--width 480 --frames 12` with a long scan name: the header, titles, captions and
    /// frame labels are fitted, wrapped or shortened: nothing is drawn in the side margins.
    @Test func narrowSheetKeepsItsTextOnTheSheet() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let name = "kitchen-2024-05-17-second-try-with-the-lidar-phone-held-upright"
        let scan = try Self.writeWallScan(in: directory, name: name, frames: 12)
        let run = try CLITests.run(["preview", scan, "-o", directory + "/out", "--width", "480", "--frames", "12"])
        #expect(run.status == 0, "\(run.stderr)")
        let sheet = try PNGCodec.decodeRGB(FileSystem.readFile(directory + "/out/\(name).preview.png"))
        let layout = try ScenePreviewLayout(width: 480, frames: 12, depthWidth: 256, depthHeight: 192, color: false)
        #expect(sheet.width == 480)
        // The header took more lines than at 1600 pixels: the sheet is taller than a 3-line one.
        #expect(sheet.height > layout.height, "\(sheet.height) vs \(layout.height)")
        let background = Self.rgb(PreviewSheet.background)
        var inMargin: [(Int, Int)] = []
        for y in 0..<sheet.height {
            for x in Array(0..<(layout.margin - 1)) + Array((480 - layout.margin + 1)..<480) where Self.pixel(sheet, x, y) != background {
                inMargin.append((x, y))
            }
        }
        #expect(inMargin.isEmpty, "\(inMargin.count) pixels drawn in the margins, first \(inMargin.prefix(5))")
    }

    /// A 3 cm path to the left (end left of start, a few pixels apart): the "start" and
    /// "end" labels, found by their colors, do not overlap.
    @Test func shortPathLabelsDoNotOverlap() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scan = try Self.writeWallScan(in: directory, frames: 4, path: -0.03)
        let run = try CLITests.run(["preview", scan, "-o", directory + "/out", "--width", "1200", "--frames", "2"])
        #expect(run.status == 0, "\(run.stderr)")
        let sheet = try PNGCodec.decodeRGB(FileSystem.readFile(directory + "/out/wall.preview.png"))
        let layout = try ScenePreviewLayout(width: 1200, frames: 2, depthWidth: 256, depthHeight: 192, color: false)
        #expect(sheet.height == layout.height)
        for panel in ScenePanel.allCases {
            let start = try #require(Self.bounds(sheet, layout, panel, Self.rgb(ScenePreviewSheet.startLabelColor)), "\(panel)")
            let end = try #require(Self.bounds(sheet, layout, panel, Self.rgb(ScenePreviewSheet.endLabelColor)), "\(panel)")
            #expect(start.count > 5 && end.count > 5)
            let apart = start.x1 < end.x0 || end.x1 < start.x0 || start.y1 < end.y0 || end.y1 < start.y0
            #expect(apart, "\(panel): start label \(start), end label \(end)")
        }
    }

    /// A registered scene (`rgbd register`'s folder) has no confidence maps: no confidence
    /// row (no "no confidence map" tiles) and no confidence legend.
    @Test func registeredSceneHasNoConfidenceRow() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (paths, _, _) = try MarkerCLITests.writeRoom(in: directory, seed: 9)
        let registered = directory + "/registered"
        let register = try CLITests.run(["register"] + paths + ["--tag-size", "0.16", "-o", registered])
        #expect(register.status == 0, "\(register.stderr)")
        let info = try CLITests.run(["info", "--json", registered])
        let entry = try #require((try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [[String: Any]])?.first)
        let depth = try #require(entry["depth_size"] as? [Int])
        let run = try CLITests.run(["preview", registered, "-o", directory + "/out", "--width", "900", "--frames", "3"])
        #expect(run.status == 0, "\(run.stderr)")
        let sheet = try PNGCodec.decodeRGB(FileSystem.readFile(directory + "/out/registered.preview.png"))
        let layout = try ScenePreviewLayout(width: 900, frames: 3, depthWidth: depth[0], depthHeight: depth[1], color: true,
                                            confidence: false)
        #expect(layout.rows == [.color, .depth])
        #expect(sheet.height == layout.height, "\(sheet.height) vs \(layout.height)")
        let gray = Self.rgb(ScenePreviewSheet.noConfidenceColor)
        let levels = ScenePreviewSheet.confidenceColors.map(Self.rgb)
        var drawn = 0
        for y in 0..<sheet.height {
            for x in 0..<sheet.width {
                let p = Self.pixel(sheet, x, y)
                if p == gray || levels.contains(where: { $0 == p }) { drawn += 1 }
            }
        }
        #expect(drawn == 0, "\(drawn) pixels of confidence colors")
    }

    /// The real Record3D close-up of a door (../shared, when present): 0.25 m of path, a
    /// cloud reaching 1.5 m. The path fills its panel (it was a dot framed with the cloud),
    /// and the export has no confidence maps: no confidence row.
    @Test func realDoorCloseUp() throws {
        guard let scans = StrayDepthOnlyCLITests.sharedScans else { return }
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try CLITests.run(["preview", scans + "/record3d-door", "-o", directory, "-q"])
        #expect(run.status == 0, "\(run.stderr)")
        let sheet = try PNGCodec.decodeRGB(FileSystem.readFile(directory + "/record3d-door.preview.png"))
        let layout = try ScenePreviewLayout(width: 1600, frames: 5, depthWidth: 192, depthHeight: 256, color: true,
                                            confidence: false)
        #expect(sheet.height == layout.height, "\(sheet.height) vs \(layout.height)")
        let path = try #require(Self.bounds(sheet, layout, .trajectoryAbove, Self.rgb(ScenePreviewSheet.pathColor)))
        let across = max(path.x1 - path.x0, path.y1 - path.y0)
        #expect(Double(across) > 0.3 * Double(layout.panelWidth), "the path spans \(across) of \(layout.panelWidth) pixels")
    }
}
