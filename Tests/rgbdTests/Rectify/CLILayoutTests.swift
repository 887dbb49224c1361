import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// The real `rgbd` binary on captures in other exporters' layouts, with depth images
/// beside the JSON, and with sentinel depths.
@Suite(.serialized) struct CLILayoutTests {
    static let synthetic = SyntheticCapture(colorWidth: 640, colorHeight: 480, depthWidth: 160, depthHeight: 120)

    /// The synthetic depth in whole millimeters with a hole (a 16-bit PNG holds it exactly).
    static let depth: DepthMap = {
        var depth = synthetic.renderDepth()
        for i in depth.samples.indices {
            depth.samples[i] = Float(Int((depth.samples[i] * 1000).rounded())) / 1000
        }
        for y in 30..<36 { for x in 40..<52 { depth[x, y] = .nan } }
        return depth
    }()

    static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// `stem.json` (in `layout`, or canonical) and `stem.jpg` in `directory`.
    static func writeCapture(in directory: String, stem: String, layout: ExporterLayout?, jpeg: Data,
                             depth: DepthMap = CLILayoutTests.depth) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let json = "\(directory)/\(stem).json"
        let text = layout.map { synthetic.captureJSON(depth: depth, layout: $0) } ?? synthetic.captureJSON(depth: depth)
        try write(text, to: json)
        try jpeg.write(to: URL(fileURLWithPath: "\(directory)/\(stem).jpg"))
        return json
    }

    static func jpeg() throws -> Data {
        Data(try JPEGCodec.encode(synthetic.renderColor(supersampling: 2), quality: 95))
    }

    /// The sidecar without its `source` line (which names the input).
    static func intrinsics(_ path: String) throws -> String {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.split(separator: "\n").filter { !$0.contains("\"source\"") }.joined(separator: "\n")
    }

    @Test func rectifyReadsEveryLayoutAsTheCanonical() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let jpeg = try Self.jpeg()
        var inputs = [try Self.writeCapture(in: directory + "/canonical", stem: "canonical", layout: nil, jpeg: jpeg)]
        for layout in [ExporterLayout.snakeCaseFlat, .pascalCaseBase64, .camelCaseBase64Depth] {
            inputs.append(try Self.writeCapture(in: directory + "/" + layout.rawValue, stem: layout.rawValue,
                                                layout: layout, jpeg: jpeg))
        }
        // No depth in the JSON: a 16-bit PNG of millimeters, or a float32 TIFF of meters
        // (as rgbd writes it), beside it.
        inputs.append(try Self.writeCapture(in: directory + "/png", stem: "png", layout: .canonicalWithoutDepth, jpeg: jpeg))
        let millimeters = Self.depth.samples.map { $0.isFinite ? UInt16(($0 * 1000).rounded()) : 0 }
        try Data(try PNGCodec.encodeGray16(width: 160, height: 120, samples: millimeters))
            .write(to: URL(fileURLWithPath: directory + "/png/png.depth.png"))
        inputs.append(try Self.writeCapture(in: directory + "/tiff", stem: "tiff", layout: .canonicalWithoutDepth, jpeg: jpeg))
        let files = StagedFiles()
        try files.stage(directory + "/tiff/tiff.depth.tiff") { fd, temporary in
            try TIFFCodec.writeFloat(Self.depth, fd: fd, path: temporary)
        }
        try files.commit()

        let output = directory + "/out"
        let run = try CLITests.run(["rectify"] + inputs + ["-o", output])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("6 of 6 captures done"), "\(run.stderr)")
        #expect(!run.stderr.contains("warning"), "\(run.stderr)")
        func bytes(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: "\(output)/\(name)")) }
        let expectedDepth = try PNGCodec.decodeGray16(Array(try bytes("canonical.depth.png")))
        #expect(expectedDepth[80, 20] == 3000, "the wall is at 3 m")
        for stem in ["snakeCaseFlat", "pascalCaseBase64", "camelCaseBase64Depth", "png", "tiff"] {
            for suffix in ["color.png", "depth.png", "depth.tiff"] {
                #expect(try bytes("\(stem).\(suffix)") == bytes("canonical.\(suffix)"), "\(stem).\(suffix)")
            }
            #expect(try Self.intrinsics("\(output)/\(stem).intrinsics.json") == Self.intrinsics("\(output)/canonical.intrinsics.json"))
        }
        // Point clouds too.
        let clouds = directory + "/clouds"
        let cloud = try CLITests.run(["cloud", inputs[0], inputs[2], inputs[4], "-o", clouds])
        #expect(cloud.status == 0, "\(cloud.stderr)")
        /// The binary vertices after the header (which names the source).
        func vertices(_ stem: String) throws -> Data {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(clouds)/\(stem).ply"))
            let end = try #require(data.range(of: Data("end_header\n".utf8)))
            return data[end.upperBound...]
        }
        let expected = try vertices("canonical")
        #expect(expected.count > 100_000)
        for stem in ["pascalCaseBase64", "png"] {
            #expect(try vertices(stem) == expected, "\(stem)")
        }
    }

    /// A depth image beside a JSON without depth is an input: rectify never writes over
    /// it. (One beside a JSON that holds its depth is not read: UsageCLITests.)
    @Test func depthImageBesideIsNeverOverwritten() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let json = try Self.writeCapture(in: directory, stem: "shot", layout: .canonicalWithoutDepth, jpeg: try Self.jpeg())
        let millimeters = Self.depth.samples.map { $0.isFinite ? UInt16(($0 * 1000).rounded()) : 0 }
        let png = try PNGCodec.encodeGray16(width: 160, height: 120, samples: millimeters)
        try Data(png).write(to: URL(fileURLWithPath: directory + "/shot.depth.png"))
        let refused = try CLITests.run(["rectify", directory, "-o", directory])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("would overwrite the input \(directory)/shot.depth.png"), "\(refused.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/shot.depth.png")) == Data(png))
        let run = try CLITests.run(["rectify", directory, "-o", directory + "/out"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(CLITests.files(in: directory + "/out").count == 4)

        // A JSON without depth and no image beside it: one line naming what was looked for.
        try FileManager.default.removeItem(atPath: directory + "/shot.depth.png")
        let missing = try CLITests.run(["rectify", json, "-o", directory + "/out2"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("\(json): depth_data: missing depth map (canonical schema: expected depth_data in the JSON, a depth_file key naming a depth image, or shot.depth.png / shot.depth.tiff beside the JSON)"), "\(missing.stderr)")
    }

    /// Sentinels (9999 markers, negatives) are holes, counted in a warning; no point of a
    /// cloud sits at 9999 m. `--max-valid-depth` moves the limit.
    @Test func sentinelsAreHolesWithAWarning() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var depth = Self.depth
        for x in 0..<160 { depth[x, 60] = 9999 }
        for x in 0..<10 { depth[x, 61] = -1 }
        let json = try Self.writeCapture(in: directory, stem: "shot", layout: nil, jpeg: try Self.jpeg(), depth: depth)
        let ply = directory + "/shot.ply"
        let run = try CLITests.run(["cloud", json, "-o", ply, "--ascii"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("rgbd: warning: \(json): 10 negative depth pixels (down to -1 m) and 160 depth pixels beyond 1000 m (up to 9999 m) discarded as no depth"), "\(run.stderr)")
        let text = try String(contentsOfFile: ply, encoding: .utf8)
        let body = try #require(text.components(separatedBy: "end_header\n").last)
        var farthest: Float = 0, count = 0
        for line in body.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3, let z = Float(fields[2]) else { continue }
            farthest = max(farthest, z)
            count += 1
        }
        #expect(count > 10_000)
        #expect(farthest > 2 && farthest < 10, "farthest point at \(farthest) m")

        let rectify = try CLITests.run(["rectify", json, "-o", directory + "/out", "--max-valid-depth", "20000"])
        #expect(rectify.status == 0)
        #expect(rectify.stderr.contains("10 negative depth pixels") && !rectify.stderr.contains("beyond"), "\(rectify.stderr)")
        for bad in ["0", "-5", "nan"] {
            for command in ["rectify", "cloud"] {
                let usage = try CLITests.run([command, json, "-o", directory + "/o", "--max-valid-depth", bad])
                #expect(usage.status == 64, "\(command) --max-valid-depth \(bad): \(usage.stderr)")
            }
        }
    }

    @Test func helpExplainsTheDepthSources() throws {
        for command in ["rectify", "cloud"] {
            let help = try CLITests.run([command, "--help"])
            #expect(help.status == 0)
            let text = help.stdout.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
            #expect(text.contains("NAME.depth.png"), "\(command)")
            #expect(text.contains("--max-valid-depth"), "\(command)")
        }
    }
}
