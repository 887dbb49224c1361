import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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

    /// Runs `executable` (the `rgbd` binary unless said) with `arguments`; `environment`
    /// adds to (or replaces in) this process's environment.
    static func run(_ arguments: [String], executable: String = binary, environment: [String: String] = [:]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Both pipes drained at once: a child that fills one (64 KB) while the other is
        // being read would otherwise block forever.
        final class Drained: @unchecked Sendable { var data = Data() }
        let errors = Drained(), group = DispatchGroup()
        DispatchQueue.global().async(group: group) { errors.data = err.fileHandleForReading.readDataToEndOfFile() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                   stderr: String(decoding: errors.data, as: UTF8.self))
    }

    /// The private memory `forgedJPEGHeadersCostNoMemory` gives the binary: room for a
    /// plausible 8000×6000 photo (144 MB) and the process itself (the Swift runtime and the
    /// shared libraries; FFmpeg's, loaded only for scan videos, are not among them), never
    /// for a forged 16000×12000 header (576 MB).
    static let forgedHeaderMemoryLimit = 200_000_000

    /// Whether this test process (and so the `rgbd` built beside it) runs under a
    /// sanitizer, whose shadow memory no memory limit can accommodate.
    static let sanitized: Bool = {
        #if canImport(Darwin)
        let everywhere = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
        #else
        let everywhere: UnsafeMutableRawPointer? = nil  // RTLD_DEFAULT
        #endif
        let names: [String] = ["__asan_init", "__tsan_init"]
        return names.contains { name in dlsym(everywhere, name) != nil }
    }()

    /// Runs the binary with its private writable memory (heap, anonymous mappings,
    /// thread stacks: `RLIMIT_DATA`) limited to `bytes`, set by `sh` just before it
    /// execs the binary: an allocation beyond fails (the program dies) instead of
    /// succeeding. (The children's `ru_maxrss` would not do: a spawned child's peak
    /// starts from its parent's, this test process's.) Without a limit under sanitizers.
    static func run(_ arguments: [String], memoryLimit bytes: Int) throws -> Run {
        let limit = sanitized ? "" : "ulimit -d \(bytes / 1024) && "
        return try run(["-c", limit + "exec \"$0\" \"$@\"", binary] + arguments, executable: "/bin/sh")
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

    /// The harness itself: a child writing more than a pipe holds (64 KB) to stderr before
    /// it ends its stdout is drained, not waited on forever.
    @Test func runDrainsALargeStandardError() throws {
        let run = try Self.run(["-c", "head -c 200000 /dev/zero | tr '\\0' x >&2; echo done"], executable: "/bin/sh")
        #expect(run.status == 0 && run.stdout == "done\n" && run.stderr.count == 200_000)
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

    /// The vertices of an ASCII PLY (`x y z red green blue` per line).
    static func asciiVertices(_ path: String) throws -> [(position: SIMD3<Double>, color: SIMD3<Int>)] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let parts = text.components(separatedBy: "end_header\n")
        #expect(parts.count == 2 && parts[0].contains("property uchar red"))
        return parts.last.map { body in
            body.split(separator: "\n").map { line in
                let v = line.split(separator: " ").map { Double($0) ?? .nan }
                return (SIMD3(v[0], v[1], v[2]), SIMD3(Int(v[3]), Int(v[4]), Int(v[5])))
            }
        } ?? []
    }

    /// A depth map larger than the color image (same 4:3 aspect): once a SIGILL on a
    /// precondition; now every depth pixel takes the color pixel nearest to it, so a
    /// one-color photo colors every point exactly with its color, and the points are
    /// the scene's.
    @Test func cloudOfADepthMapLargerThanTheColorImage() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let synthetic = SyntheticCapture(colorWidth: 8, colorHeight: 6, depthWidth: 32, depthHeight: 24)
        let capture = try synthetic.write(to: directory, stem: "shot")
        // An 8×6 photo of one color; its decoded pixels are the ground truth of the colors.
        let photo = ColorImage(width: 8, height: 6, channels: 3, samples: Array((0..<48).map { _ in [200, 40, 90] }.joined()))
        let jpeg = try JPEGCodec.encode(photo, quality: 100)
        try Data(jpeg).write(to: URL(fileURLWithPath: capture.image))
        let decoded = try JPEGCodec.decodeRGB(jpeg)
        let solid = SIMD3(Int(decoded[0, 0, 0]), Int(decoded[0, 0, 1]), Int(decoded[0, 0, 2]))
        #expect((0..<48).allSatisfy { SIMD3(Int(decoded.samples[3 * $0]), Int(decoded.samples[3 * $0 + 1]), Int(decoded.samples[3 * $0 + 2])) == solid })

        let ply = directory + "/cloud.ply"
        let run = try Self.run(["cloud", capture.json, "-o", ply, "--ascii", "-q"])
        #expect(run.status == 0, "\(run.stderr)")
        let vertices = try Self.asciiVertices(ply)
        #expect(vertices.count > 32 * 24 / 2, "\(vertices.count) points")
        #expect(vertices.allSatisfy { $0.color == solid })
        // Each point at the depth the scene has along its pixel's ray (within 2 %, but
        // for a few pixels at the box's silhouette).
        let k = synthetic.depthIntrinsics
        let wrong = vertices.filter { p in
            let u = p.position.x * k.fx / p.position.z + k.cx, v = p.position.y * k.fy / p.position.z + k.cy
            return abs(p.position.z - synthetic.trueDepth(u: u, v: v, intrinsics: k)) > 0.02 * p.position.z
        }
        #expect(wrong.count <= vertices.count / 20, "\(wrong.count) of \(vertices.count) points off the scene")

        // `rgbd rectify` of the same capture works too, at each input's own size.
        let rectified = try Self.run(["rectify", capture.json, "-o", directory + "/out", "-q"])
        #expect(rectified.status == 0, "\(rectified.stderr)")
        let color = try PNGCodec.decodeRGB(FileSystem.readFile(directory + "/out/shot.color.png"))
        #expect(color.width == 8 && color.height == 6)
    }

    /// A stride beyond the depth map's sides keeps depth pixel (0, 0) alone (once an
    /// overflow trap in the row count, `height + stride − 1`).
    @Test func hugeStrideKeepsTheFirstPixel() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let synthetic = SyntheticCapture(colorWidth: 640, colorHeight: 480, depthWidth: 160, depthHeight: 120)
        let capture = try synthetic.write(to: directory, stem: "shot")
        for stride in ["9223372036854775807", "160"] {
            let ply = directory + "/s\(stride.count).ply"
            let run = try Self.run(["cloud", capture.json, "-o", ply, "--ascii", "--keep-edges", "--stride", stride, "-q"])
            #expect(run.status == 0, "\(run.stderr)")
            let vertices = try Self.asciiVertices(ply)
            #expect(vertices.count == 1, "stride \(stride): \(vertices.count) points")
            // The point projects to depth pixel (0, 0).
            let k = synthetic.depthIntrinsics
            for p in vertices {
                #expect(abs(p.position.x * k.fx / p.position.z + k.cx) < 1e-3)
                #expect(abs(p.position.y * k.fy / p.position.z + k.cy) < 1e-3)
            }
        }
    }

    /// JPEGs whose header claims far more pixels than they hold are refused before the
    /// pixels are allocated (once: a 1.8 kB file claiming 16000×12000 cost ~580 MB and a
    /// full decode): from the header's size against the file's, from the calibration
    /// (a transposed size), or by the 1/8-scale trial decoding of images beyond any
    /// camera's size. No rejected input costs 200 MB: each runs with a 200 MB limit on
    /// its private memory, and a sound capture still works within it.
    @Test func forgedJPEGHeadersCostNoMemory() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try Self.writeCapture(in: directory, stem: "shot")
        #expect(Self.forgedHeaderMemoryLimit < 16000 * 12000 * 3, "the limit would let a forged 16000×12000 header be allocated")
        func claiming(_ width: Int, _ height: Int, _ jpeg: [UInt8]) -> [UInt8] {
            var forged = jpeg
            if let sof = (0..<(forged.count - 8)).first(where: { forged[$0] == 0xFF && forged[$0 + 1] == 0xC0 }) {
                forged[sof + 5] = UInt8(height >> 8); forged[sof + 6] = UInt8(height & 255)
                forged[sof + 7] = UInt8(width >> 8); forged[sof + 8] = UInt8(width & 255)
            }
            return forged
        }
        var rng = SystemRandomNumberGenerator()
        func noise(_ width: Int, _ height: Int) throws -> [UInt8] {
            try JPEGCodec.encode(ColorImage(width: width, height: height, channels: 3,
                                            samples: (0..<(width * height * 3)).map { _ in UInt8.random(in: 0...255, using: &rng) }),
                                 quality: 95)
        }
        let tiny = try noise(24, 18), plausible = try noise(640, 480)
        let cases: [(name: String, jpeg: [UInt8], expect: String)] = [
            ("tiny", claiming(16000, 12000, tiny), "16000×12000 pixels in \(claiming(16000, 12000, tiny).count) bytes"),
            ("plausible", claiming(16000, 12000, plausible), "cannot decode JPEG"),
            ("portrait", claiming(12000, 16000, plausible), "transposed"),
            ("camera-size", claiming(8000, 6000, plausible), "cannot decode JPEG"),
        ]
        #expect(plausible.count >= 16000 * 12000 / JPEGCodec.maxPixelsPerByte, "\(plausible.count) bytes")
        // The limit leaves room for real work: the capture itself, rectified and as a cloud.
        let sound = try Self.run(["rectify", capture.json, "-o", directory + "/sound", "-q"], memoryLimit: Self.forgedHeaderMemoryLimit)
        #expect(sound.status == 0, "\(sound.stderr)")
        let cloud = try Self.run(["cloud", capture.json, "-o", directory + "/sound.ply", "-q"], memoryLimit: Self.forgedHeaderMemoryLimit)
        #expect(cloud.status == 0, "\(cloud.stderr)")

        for command in ["rectify", "cloud"] {
            for c in cases {
                let image = directory + "/\(c.name).jpg"
                try Data(c.jpeg).write(to: URL(fileURLWithPath: image))
                let output = directory + "/out-\(command)-\(c.name)"
                let run = try Self.run([command, capture.json, "--image", image, "-o",
                                        command == "cloud" ? output + ".ply" : output, "-q"],
                                       memoryLimit: Self.forgedHeaderMemoryLimit)
                #expect(run.status == 1, "\(command) \(c.name): status \(run.status): \(run.stderr)")
                #expect(run.stderr.contains("\(c.name).jpg") && run.stderr.contains(c.expect), "\(command) \(c.name): \(run.stderr)")
                #expect(!FileManager.default.fileExists(atPath: output) || Self.files(in: output).isEmpty)
                #expect(!FileManager.default.fileExists(atPath: output + ".ply"))
            }
        }
    }

    /// A `null` in the lookup table is named with its index (once "expected an array of
    /// numbers, found an array").
    @Test func nullInTheLookupTableIsNamed() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try Self.writeCapture(in: directory, stem: "shot")
        let text = try String(contentsOfFile: capture.json, encoding: .utf8)
        let marker = "\"lens_distortion_lookup_table\" : [\n      "
        let start = try #require(text.range(of: marker))
        // Replace the fourth entry (index 3) by null.
        var lines = text[start.upperBound...].split(separator: "\n", maxSplits: 4, omittingEmptySubsequences: false)
        lines[3] = "      null,"
        let edited = String(text[..<start.upperBound]) + lines.joined(separator: "\n")
        try edited.write(toFile: capture.json, atomically: true, encoding: .utf8)
        let run = try Self.run(["rectify", capture.json, "-o", directory + "/out"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("shot.json: calibration_data.lens_distortion_lookup_table[3]: expected a number, found null"),
                "\(run.stderr)")
    }

    /// `"depth\u005fdata"` is `depth_data`: read by the fast depth reader (whose errors
    /// give the line; json-c's tree gives the key path), and refused beside a
    /// `depth_data` as a duplicate, as a literal duplicate is.
    @Test func escapedKeysAreTheSameKeys() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try Self.writeCapture(in: directory, stem: "shot")
        let text = try String(contentsOfFile: capture.json, encoding: .utf8)
        let reference = try Self.run(["rectify", capture.json, "-o", directory + "/reference", "-q"])
        #expect(reference.status == 0, "\(reference.stderr)")
        // Depth pixel (80, 60) becomes NaN (a hole; one value per line, rows opened by
        // "    ["), and the key is spelled with an escape.
        var lines = text.components(separatedBy: "\n")
        let rowStarts = lines.indices.filter { lines[$0] == "    [" }
        #expect(rowStarts.count == 120)
        lines[rowStarts[60] + 1 + 80] = "      NaN,"
        let escaped = lines.joined(separator: "\n").replacingOccurrences(of: "\"depth_data\"", with: "\"depth\\u005fdata\"")
        #expect(escaped.contains("\"depth\\u005fdata\" : [") && !escaped.contains("depth_data"))
        try escaped.write(toFile: directory + "/escaped.json", atomically: true, encoding: .utf8)
        let run = try Self.run(["rectify", directory + "/escaped.json", "--image", capture.image, "-o", directory + "/out", "-q"])
        #expect(run.status == 0, "\(run.stderr)")
        // The same depth but near pixel (80, 60) (the lens barely moves the center),
        // where the hole now is.
        let meters = try TIFFCodec.readFloat(path: directory + "/out/escaped.depth.tiff")
        let expected = try TIFFCodec.readFloat(path: directory + "/reference/shot.depth.tiff")
        #expect(meters.width == 160 && meters.height == 120)
        #expect(meters.samples.count == expected.samples.count)
        let differing: [Int] = meters.samples.indices.filter { i in
            meters.samples[i].bitPattern != expected.samples[i].bitPattern
        }
        #expect(meters[80, 60].isNaN && expected[80, 60].isFinite)
        let nearby = differing.allSatisfy { (i: Int) -> Bool in abs(i % 160 - 80) <= 2 && abs(i / 160 - 60) <= 2 }
        #expect(nearby, "\(differing)")

        // A ragged row under the escaped key: the fast reader's message, with the line.
        var ragged = escaped.components(separatedBy: "\n")
        ragged.remove(at: rowStarts[1] + 1)
        try ragged.joined(separator: "\n").write(toFile: directory + "/ragged.json", atomically: true, encoding: .utf8)
        let fast = try Self.run(["rectify", directory + "/ragged.json", "--image", capture.image, "-o", directory + "/out3"])
        #expect(fast.status == 1)
        let line = rowStarts[1] + 1 + 160  // the row's closing bracket, one line up (1-based)
        #expect(fast.stderr.contains("ragged.json: line \(line): depth_data: row 1 has 159 values, but row 0 has 160"),
                "\(fast.stderr)")

        // Both spellings in one file: the key appears twice.
        let both = text.replacingOccurrences(of: "\n}", with: ",\n  \"depth\\u005fdata\" : [[1]]\n}")
        try both.write(toFile: directory + "/both.json", atomically: true, encoding: .utf8)
        let twice = try Self.run(["rectify", directory + "/both.json", "--image", capture.image, "-o", directory + "/out2"])
        #expect(twice.status == 1)
        #expect(twice.stderr.contains("both.json: line ") && twice.stderr.contains("the key \"depth_data\" appears twice"),
                "\(twice.stderr)")
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
        try Data("{\"calibration_data\": {}}".utf8).write(to: URL(fileURLWithPath: directory + "/d/lonely.json"))
        try FileManager.default.createDirectory(atPath: directory + "/empty", withIntermediateDirectories: true)
        let run = try Self.run(["rectify", directory + "/d", directory + "/empty", directory + "/nope.json",
                                "-o", directory + "/out"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("1 of 3 captures done, 2 failed"), "\(run.stderr)")
        #expect(run.stderr.contains("lonely.json") && run.stderr.contains("no image beside it"), "\(run.stderr)")
        // lonely.json (a capture JSON) has no image; the synthetic capture's
        // good.truth.json is not a capture and is not counted.
        #expect(run.stderr.contains("1 JSON file without an image skipped"), "\(run.stderr)")
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
