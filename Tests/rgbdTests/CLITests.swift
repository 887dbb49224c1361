import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// The real `rgbd` binary on real files.
@Suite(.serialized) struct CLITests {
    /// The `rgbd` executable built beside this test bundle (or `$RGBD_BIN`).
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["RGBD_BIN"] { return path }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var url = bundle
        // swift-testing may run from inside an .xctest bundle directory.
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("rgbd").path) && url.path != "/" {
            url = url.deletingLastPathComponent()
        }
        return url.appendingPathComponent("rgbd").path
    }()

    struct Run { var status: Int32; var stdout: String; var stderr: String }

    static func run(_ arguments: [String]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                   stderr: String(decoding: errData, as: UTF8.self))
    }

    static func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rgbd-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    /// A small synthetic capture written as an exporter would.
    static func writeCapture(in directory: String, stem: String) throws -> (json: String, image: String) {
        let capture = SyntheticCapture(colorWidth: 640, colorHeight: 480, depthWidth: 160, depthHeight: 120)
        return try capture.write(to: directory, stem: stem, jpegQuality: 95)
    }

    static func files(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    @Test func rectifyWritesFourCorrectFiles() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.binary), "no rgbd binary at \(Self.binary)")
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try Self.writeCapture(in: directory, stem: "shot")
        let output = directory + "/out"
        let run = try Self.run(["rectify", capture.json, "-o", output])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Self.files(in: output) == ["shot.color.png", "shot.depth.png", "shot.depth.tiff", "shot.intrinsics.json"])

        let color = try PNGCodec.decodeRGB(FileSystem.readFile(output + "/shot.color.png"))
        #expect(color.width == 640 && color.height == 480)
        let millimeters = try PNGCodec.decodeGray16(FileSystem.readFile(output + "/shot.depth.png"))
        let meters = try TIFFCodec.readFloat(path: output + "/shot.depth.tiff")
        #expect(millimeters.width == 160 && meters.width == 160 && meters.height == 120)
        // The wall is at 3 m: the center-top of the depth map sees it.
        #expect(millimeters[80, 20] == 3000)
        #expect(abs(meters[80, 20] - 3) < 0.001)
        for (mm, m) in zip(millimeters.samples, meters.samples) {
            #expect(m.isNaN ? mm == 0 : Int(mm) == Int((m * 1000).rounded()))
        }

        // The sidecar loads as Open3D expects: width, height, 9 numbers column-major.
        let data = try Data(contentsOf: URL(fileURLWithPath: output + "/shot.intrinsics.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["width"] as? Int == 160 && json["height"] as? Int == 120)
        let k = try #require(json["intrinsic_matrix"] as? [Double])
        #expect(k.count == 9 && k[2] == 0 && k[5] == 0 && k[8] == 1)
        #expect(abs(k[0] - 2900.0 * 160 / 4032) < 1e-9 && abs(k[7] - 1511.6 * 120 / 3024) < 1e-9)
        let colorK = try #require((json["color"] as? [String: Any])?["intrinsic_matrix"] as? [Double])
        #expect(abs(colorK[6] - 2016.3 * 640 / 4032) < 1e-9)
    }

    /// `--align-to depth|color`: color and depth files of one size, the sidecar's three
    /// cameras all that grid's, the wall still at 3 m.
    @Test(arguments: ["depth", "color"])
    func rectifyWritesAPixelAlignedPair(alignment: String) throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try Self.writeCapture(in: directory, stem: "shot")
        let output = directory + "/out"
        let run = try Self.run(["rectify", capture.json, "-o", output, "--align-to", alignment])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Self.files(in: output) == ["shot.color.png", "shot.depth.png", "shot.depth.tiff", "shot.intrinsics.json"])
        let (width, height) = alignment == "depth" ? (160, 120) : (640, 480)
        let color = try PNGCodec.decodeRGB(FileSystem.readFile(output + "/shot.color.png"))
        let millimeters = try PNGCodec.decodeGray16(FileSystem.readFile(output + "/shot.depth.png"))
        let meters = try TIFFCodec.readFloat(path: output + "/shot.depth.tiff")
        for (w, h) in [(color.width, color.height), (millimeters.width, millimeters.height), (meters.width, meters.height)] {
            #expect(w == width && h == height)
        }
        // The center-top sees the wall at 3 m.
        #expect(millimeters[width / 2, height / 6] == 3000)
        #expect(abs(meters[width / 2, height / 6] - 3) < 0.001)
        for (mm, m) in zip(millimeters.samples, meters.samples) where m.isNaN != (mm == 0) || (!m.isNaN && Int(mm) != Int((m * 1000).rounded())) {
            Issue.record("depth PNG \(mm) mm vs TIFF \(m) m")
            break
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: output + "/shot.intrinsics.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let scale = Double(width) / 4032
        for camera in [json, json["depth"] as? [String: Any], json["color"] as? [String: Any]] {
            let camera = try #require(camera)
            #expect(camera["width"] as? Int == width && camera["height"] as? Int == height)
            let k = try #require(camera["intrinsic_matrix"] as? [Double])
            #expect(k.count == 9 && abs(k[0] - 2900 * scale) < 1e-9 && abs(k[6] - 2016.3 * scale) < 1e-9)
        }
        #expect((json["note"] as? String)?.contains("pixel-aligned") == true)
    }

    @Test func aligningToALargerDepthMapIsAnError() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try SyntheticCapture(colorWidth: 160, colorHeight: 120, depthWidth: 320, depthHeight: 240)
            .write(to: directory, stem: "odd", jpegQuality: 90, supersampling: 1)
        let run = try Self.run(["rectify", capture.json, "-o", directory + "/out", "--align-to", "depth"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("odd.json") && run.stderr.contains("larger than the image"), "\(run.stderr)")
        #expect(Self.files(in: directory + "/out").isEmpty)
        let bad = try Self.run(["rectify", capture.json, "-o", directory + "/out", "--align-to", "both"])
        #expect(bad.status != 0 && bad.stderr.contains("align-to"), "\(bad.stderr)")
    }

    @Test func batchGoesOnPastABadCapture() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let good = try Self.writeCapture(in: directory, stem: "a-good")
        _ = try Self.writeCapture(in: directory, stem: "c-good")
        // b-bad: a valid JPEG beside a JSON with ragged depth rows.
        try FileManager.default.copyItem(atPath: good.image, toPath: directory + "/b-bad.jpg")
        let text = try String(contentsOfFile: good.json, encoding: .utf8)
        let broken = text.replacingOccurrences(of: "  \"depth_data\" : [\n    [\n", with: "  \"depth_data\" : [\n    [\n      1.0,\n")
        try broken.write(toFile: directory + "/b-bad.json", atomically: true, encoding: .utf8)

        let inputsBefore = try Self.files(in: directory).map { try Data(contentsOf: URL(fileURLWithPath: directory + "/" + $0)) }
        let output = directory + "/out"
        let run = try Self.run(["rectify", directory, "-o", output])
        #expect(run.status == 1)
        let errorLines = run.stderr.split(separator: "\n").filter { $0.contains("error") }
        #expect(errorLines.count == 1, "\(run.stderr)")
        #expect(errorLines.first?.contains("b-bad.json") == true)
        #expect(errorLines.first?.contains("row 1 has") == true, "\(run.stderr)")
        let written = Self.files(in: output)
        #expect(written.filter { $0.hasPrefix("a-good.") }.count == 4)
        #expect(written.filter { $0.hasPrefix("c-good.") }.count == 4)
        #expect(!written.contains { $0.hasPrefix("b-bad") || $0.contains("tmp") }, "\(written)")
        // Inputs are never modified.
        let inputsAfter = try Self.files(in: directory).filter { $0 != "out" }
            .map { try Data(contentsOf: URL(fileURLWithPath: directory + "/" + $0)) }
        #expect(inputsBefore == inputsAfter)
    }

    @Test func badImagesAreNamed() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try Self.writeCapture(in: directory, stem: "shot")
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: capture.image))
        try jpeg.prefix(jpeg.count / 3).write(to: URL(fileURLWithPath: directory + "/cut.jpg"))
        let run = try Self.run(["rectify", capture.json, "--image", directory + "/cut.jpg", "-o", directory + "/out"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("cut.jpg"), "\(run.stderr)")
        #expect(Self.files(in: directory + "/out").isEmpty)

        // A portrait (transposed) JPEG is reported as such.
        let portrait = SyntheticCapture(colorWidth: 480, colorHeight: 640, depthWidth: 160, depthHeight: 120)
        let rotated = try JPEGCodec.encode(portrait.renderColor(supersampling: 1))
        try Data(rotated).write(to: URL(fileURLWithPath: directory + "/portrait.jpg"))
        let turned = try Self.run(["rectify", capture.json, "--image", directory + "/portrait.jpg", "-o", directory + "/out"])
        #expect(turned.status == 1)
        #expect(turned.stderr.contains("portrait.jpg") && turned.stderr.contains("transposed"), "\(turned.stderr)")
    }

    @Test func missingInputsAndBadArguments() throws {
        let missing = try Self.run(["rectify", "/nonexistent/shot.json", "-o", "/tmp/rgbd-never"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("/nonexistent/shot.json"))
        #expect(!FileManager.default.fileExists(atPath: "/tmp/rgbd-never/shot.color.png"))
        let twoWithImage = try Self.run(["rectify", "a.json", "b.json", "--image", "x.jpg", "-o", "/tmp/x"])
        #expect(twoWithImage.status != 0)
        #expect(twoWithImage.stderr.contains("--image"))
    }

    /// Ctrl-C or SIGTERM at any moment of a batch leaves each capture's outputs complete
    /// or absent, no temporary, and the status says which signal (130, 143) or success
    /// (when the batch had finished): never a failure status.
    @Test func interruptionLeavesNoPartialOutputAndATrueStatus() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let inputs = directory + "/in"
        try FileManager.default.createDirectory(atPath: inputs, withIntermediateDirectories: true)
        let capture = try SyntheticCapture(colorWidth: 2016, colorHeight: 1512, depthWidth: 384, depthHeight: 288)
            .write(to: inputs, stem: "shot0", jpegQuality: 90, supersampling: 1)
        for i in 1..<3 {
            try FileManager.default.copyItem(atPath: capture.json, toPath: inputs + "/shot\(i).json")
            try FileManager.default.copyItem(atPath: capture.image, toPath: inputs + "/shot\(i).jpg")
        }
        var interrupted = 0
        let delays = [0.005, 0.02, 0.04, 0.06, 0.08, 0.12, 0.2, 0.3]
        for (i, delay) in delays.enumerated() {
            let signal = i % 2 == 0 ? SIGINT : SIGTERM
            let output = directory + "/out\(i)"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.binary)
            process.arguments = ["rectify", inputs, "-o", output, "-q"]
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            let status = process.terminationStatus
            #expect(process.terminationReason == .exit, "ended by a signal, not by rgbd")
            #expect([0, 128 + signal].contains(status), "signal \(signal): status \(status)")
            if status == 128 + signal { interrupted += 1 }
            let files = Self.files(in: output)
            for stem in ["shot0", "shot1", "shot2"] {
                let count = files.filter { $0.hasPrefix(stem + ".") }.count
                #expect(count == 0 || count == 4, "\(files)")
            }
            #expect(!files.contains { $0.contains("rgbd-tmp") }, "\(files)")
        }
        #expect(interrupted > 0)
    }

    /// Two captures of one batch with the same name would write the same files: the
    /// batch is refused before anything is written, naming both.
    @Test func collidingOutputsRefuseTheBatch() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let a = try Self.writeCapture(in: directory + "/a", stem: "shot")
        let b = try Self.writeCapture(in: directory + "/b", stem: "shot")
        for command in ["rectify", "cloud"] {
            let output = directory + "/out-" + command
            let run = try Self.run([command, directory + "/a", directory + "/b", "-o", output])
            #expect(run.status == 1, "\(command): \(run.stderr)")
            #expect(run.stderr.contains(a.json) && run.stderr.contains(b.json), "\(run.stderr)")
            #expect(run.stderr.contains("nothing was written"), "\(run.stderr)")
            #expect(Self.files(in: output).isEmpty)
        }
        // An output that would replace an input (here the image) refuses the batch too.
        try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
        let image = directory + "/out/shot.color.png"
        try FileManager.default.copyItem(atPath: a.image, toPath: image)
        let before = try Data(contentsOf: URL(fileURLWithPath: image))
        let run = try Self.run(["rectify", a.json, "--image", image, "-o", directory + "/out"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("would overwrite the input"), "\(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: image)) == before)
        #expect(Self.files(in: directory + "/out") == ["shot.color.png"])
        // The same capture named twice is done once.
        let twice = try Self.run(["rectify", a.json, directory + "/a/../a/shot.json", "-o", directory + "/once"])
        #expect(twice.status == 0, "\(twice.stderr)")
        #expect(twice.stderr.contains("more than once"), "\(twice.stderr)")
        #expect(Self.files(in: directory + "/once").count == 4)
    }

    /// The summary counts every input that failed to expand as a failed item, and
    /// reports JSON files of a directory that have no image.
    @Test func summaryAddsUp() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let missing = try Self.run(["rectify", directory + "/missing.json", "-o", directory + "/out"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("0 of 1 captures done, 1 failed"), "\(missing.stderr)")

        _ = try Self.writeCapture(in: directory + "/d", stem: "good")
        try Data("{}".utf8).write(to: URL(fileURLWithPath: directory + "/d/lonely.json"))
        try FileManager.default.createDirectory(atPath: directory + "/empty", withIntermediateDirectories: true)
        let run = try Self.run(["rectify", directory + "/d", directory + "/empty", directory + "/nope.json",
                                "-o", directory + "/out"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("1 of 3 captures done, 2 failed"), "\(run.stderr)")
        #expect(run.stderr.contains("lonely.json") && run.stderr.contains("no image beside it"), "\(run.stderr)")
        // lonely.json and the synthetic capture's good.truth.json have no image.
        #expect(run.stderr.contains("2 JSON files without an image skipped"), "\(run.stderr)")
        #expect(run.stderr.contains(directory + "/empty") && run.stderr.contains(directory + "/nope.json"))
        #expect(Self.files(in: directory + "/out").count == 4)
    }

    /// Exit statuses: 0 success, 1 a failed capture, 64 a usage error.
    @Test func exitStatuses() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let a = try Self.writeCapture(in: directory, stem: "a")
        let b = try Self.writeCapture(in: directory, stem: "b")
        #expect(try Self.run(["rectify", a.json, "-o", directory + "/out", "-q"]).status == 0)
        #expect(try Self.run(["rectify", directory + "/none.json", "-o", directory + "/out"]).status == 1)
        for usage in [["rectify", a.json, b.json, "--image", a.image, "-o", directory + "/o"],
                      ["rectify", directory, "--image", a.image, "-o", directory + "/o"],
                      ["cloud", directory, "-o", directory + "/one.ply"],
                      ["rectify", a.json, "-o", directory + "/o", "--no-such-option"],
                      ["rectify", a.json],
                      ["frobnicate"]] {
            let run = try Self.run(usage)
            #expect(run.status == 64, "\(usage): \(run.status) \(run.stderr)")
            #expect(!run.stderr.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/o"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/one.ply"))
    }

    /// Reference dimensions written portrait while the principal point and the image are
    /// landscape: the JSON key is blamed, not the image.
    @Test func transposedReferenceDimensionsBlameTheKey() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try Self.writeCapture(in: directory, stem: "shot")
        let text = try String(contentsOfFile: capture.json, encoding: .utf8)
        let key = "\"intrinsic_matrix_reference_dimensions\""
        let range = try #require(text.range(of: key))
        let tail = text[range.upperBound...]
        let open = try #require(tail.firstIndex(of: "[")), close = try #require(tail.firstIndex(of: "]"))
        let numbers = tail[tail.index(after: open)..<close].split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(numbers == ["4032", "3024"])
        let portrait = text.replacingCharacters(in: open...close, with: "[3024, 4032]")
        try portrait.write(toFile: directory + "/shot.json", atomically: true, encoding: .utf8)
        let run = try Self.run(["rectify", capture.json, "-o", directory + "/out"])
        #expect(run.status == 1)
        let line = try #require(run.stderr.split(separator: "\n").first { $0.contains("error") })
        #expect(line.contains("shot.json") && line.contains("intrinsic_matrix_reference_dimensions"), "\(line)")
        #expect(line.contains("transposed") && !line.contains("rotated"), "\(line)")

        // The image rotated instead: the image is blamed.
        let rotated = try JPEGCodec.encode(SyntheticCapture(colorWidth: 480, colorHeight: 640, depthWidth: 160,
                                                            depthHeight: 120).renderColor(supersampling: 1))
        try Data(rotated).write(to: URL(fileURLWithPath: directory + "/portrait.jpg"))
        try text.write(toFile: directory + "/shot.json", atomically: true, encoding: .utf8)
        let turned = try Self.run(["rectify", capture.json, "--image", directory + "/portrait.jpg", "-o", directory + "/out"])
        #expect(turned.status == 1)
        #expect(turned.stderr.contains("portrait.jpg") && turned.stderr.contains("principal point"), "\(turned.stderr)")
    }

    /// The output table of `rectify --help` keeps its columns at any width: every line is
    /// shorter than the screen and each file name starts its own line.
    @Test func helpTableWrapsCleanly() throws {
        for columns in [36, 50, 80, 132] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.binary)
            process.arguments = ["rectify", "--help"]
            process.environment = ["COLUMNS": "\(columns)"]
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let first = try #require(lines.firstIndex { $0.contains("NAME.color.png") })
            let last = try #require(lines.firstIndex { $0.contains("column-major") })
            for line in lines[first...last] {
                #expect(line.count < columns, "COLUMNS=\(columns): \(line)")
                #expect(line.hasPrefix("  "), "COLUMNS=\(columns): unindented table line \(line)")
            }
            for name in ["NAME.color.png", "NAME.depth.png", "NAME.depth.tiff", "NAME.intrinsics.json"] {
                #expect(lines[first...last].contains { $0.hasPrefix("  " + name) }, "COLUMNS=\(columns): \(name)")
            }
        }
    }

    @Test func helpExplainsInputsOutputsAndUnits() throws {
        let help = try Self.run(["rectify", "--help"])
        #expect(help.status == 0)
        for phrase in ["millimeters", "meters", "intrinsics", "EXIF", "NAME.depth.tiff"] {
            #expect(help.stdout.contains(phrase), "--help does not mention \(phrase)")
        }
    }
}
