import Foundation
import Testing
@testable import RGBDCapture
@testable import RGBDKit
import RGBDSynth

/// Other exporters' key sets and depth encodings (docs/format.md): each gives the same
/// calibration and the same depth map as the canonical layout; depth images beside the
/// JSON or named by it are read with the JSON's calibration; markers of missing depth are
/// NaN, counted by kind.
@Suite struct CaptureLayoutTests {
    static let synthetic = SyntheticCapture(colorWidth: 640, colorHeight: 480, depthWidth: 160, depthHeight: 120)

    /// The synthetic depth map rounded to whole millimeters (what a 16-bit PNG holds), with
    /// a hole: `Float(mm) / 1000` is then exactly the float the decimal text parses to.
    static let depth: DepthMap = {
        var depth = synthetic.renderDepth()
        for i in depth.samples.indices {
            depth.samples[i] = Float(Int((depth.samples[i] * 1000).rounded())) / 1000
        }
        for y in 10..<14 { for x in 20..<30 { depth[x, y] = .nan } }
        return depth
    }()

    static func parse(_ text: String, options: CaptureReadingOptions = CaptureReadingOptions()) throws -> CaptureReader.Contents {
        try CaptureReader.parse(Array(text.utf8), file: "capture.json", options: options)
    }

    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rgbd-layouts-\(UUID().uuidString)").path
        try FileSystem.createDirectory(path)
        return path
    }

    static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    static func writePNG(_ depth: DepthMap, to path: String) throws {
        let millimeters = depth.samples.map { $0.isFinite ? UInt16(($0 * 1000).rounded()) : 0 }
        let png = try PNGCodec.encodeGray16(width: depth.width, height: depth.height, samples: millimeters)
        try Data(png).write(to: URL(fileURLWithPath: path))
    }

    static func writeTIFF(_ depth: DepthMap, to path: String) throws {
        let files = StagedFiles()
        try files.stage(path) { fd, temporary in try TIFFCodec.writeFloat(depth, fd: fd, path: temporary) }
        try files.commit()
    }

    @Test(arguments: [
        (ExporterLayout.snakeCaseFlat, "snake_case (camera_intrinsics)", DepthSource.Kind.flatArray),
        (.pascalCaseBase64, "PascalCase", .base64Float32),
        (.camelCaseBase64Depth, "camelCase", .base64Float32),
    ])
    func everyLayoutReadsAsTheCanonical(layout: ExporterLayout, schema: String, kind: DepthSource.Kind) throws {
        let canonical = try Self.parse(Self.synthetic.captureJSON(depth: Self.depth))
        #expect(canonical.schemaName == "canonical" && canonical.depthSource.kind == .rows)
        let text = Self.synthetic.captureJSON(depth: Self.depth, layout: layout)
        if layout == .pascalCaseBase64 { #expect(text.contains("\\/"), "no escaped slash to decode") }
        let contents = try Self.parse(text)
        #expect(contents.calibration == Self.synthetic.calibration)
        #expect(contents.calibration == canonical.calibration)
        #expect(contents.schemaName == schema)
        #expect(contents.depthSource.kind == kind)
        #expect(contents.depth.width == 160 && contents.depth.height == 120)
        #expect(identicalBits(contents.depth.samples, canonical.depth.samples))
        #expect(contents.discarded.total == 40 && canonical.discarded.total == 40)
    }

    /// The very bytes Foundation's `JSONEncoder` writes for `Data` members (PascalCase keys,
    /// as face-capture apps declare them).
    @Test func foundationJSONEncoderOutput() throws {
        struct Size: Codable { var Width: Int; var Height: Int }
        struct Point: Codable { var X: Double; var Y: Double }
        struct Calibration: Codable {
            var IntrinsicMatrix: [Double]
            var IntrinsicMatrixReferenceDimensions: Size
            var LensDistortionCenter: Point
            var LensDistortionLookupTable: Data
            var InverseLensDistortionLookupTable: Data
            var PixelSize: Double
        }
        struct Document: Codable {
            var CalibrationData: Calibration
            var DepthWidth: Int
            var DepthHeight: Int
            var DepthData: Data
        }
        func data(_ values: [Float]) -> Data {
            Data(values.flatMap { v -> [UInt8] in withUnsafeBytes(of: v.bitPattern.littleEndian) { Array($0) } })
        }
        let c = Self.synthetic.calibration, k = c.intrinsics
        let document = Document(
            CalibrationData: Calibration(
                IntrinsicMatrix: [k.fx, 0, 0, 0, k.fy, 0, k.cx, k.cy, 1],
                IntrinsicMatrixReferenceDimensions: Size(Width: k.width, Height: k.height),
                LensDistortionCenter: Point(X: c.distortionCenter.x, Y: c.distortionCenter.y),
                LensDistortionLookupTable: data(c.lookupTable), InverseLensDistortionLookupTable: data(c.inverseLookupTable),
                PixelSize: c.pixelSize ?? 0),
            DepthWidth: Self.depth.width, DepthHeight: Self.depth.height, DepthData: data(Self.depth.samples))
        let text = String(decoding: try JSONEncoder().encode(document), as: UTF8.self)
        #expect(text.contains("\\/"))
        let contents = try Self.parse(text)
        #expect(contents.calibration == c)
        #expect(contents.schemaName == "PascalCase")
        #expect(contents.depthSource.description == "DepthData (base64 float32 meters in the JSON, size from DepthWidth, DepthHeight)")
        let canonical = try Self.parse(Self.synthetic.captureJSON(depth: Self.depth))
        #expect(identicalBits(contents.depth.samples, canonical.depth.samples))
    }

    /// The fast reader and json-c's tree (used when the quick walk cannot run) agree on
    /// flat and base64 depth members.
    @Test(arguments: ["[1.5, 0, -1, null, 9999]", "\"AADAPwAAAAAAAIC/AADAfwA8HEY=\""])
    func treeReaderAgrees(member: String) throws {
        let text = "{\"depth_data\": \(member)}"
        let bytes = Array(text.utf8)
        let fast = try bytes.withUnsafeBufferPointer { buffer in
            try DepthArrayParser(base: buffer.baseAddress!, end: buffer.count, key: "depth_data").parseAny(at: 15)
        }
        let tree = try bytes.withUnsafeBufferPointer { buffer in
            guard case .success(let document) = JSONDocument.parse(buffer), let node = document.rootNode.member("depth_data") else {
                throw RGBDError(.invalidJSON, "json-c could not parse the test document")
            }
            return try CaptureDepth.fromTree(node, file: "tree")
        }
        #expect(fast.layout == tree.1)
        #expect(identicalBits(fast.map.samples, tree.0.samples))
        #expect(fast.map.samples.count == 5)
        #expect(fast.map.samples[0] == 1.5 && fast.map.samples[4] == 9999)
    }

    // MARK: Depth images

    @Test func depthImageBesideTheJSON() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let json = Path.join(directory, "shot.json")
        try Self.write(Self.synthetic.captureJSON(depth: Self.depth, layout: .canonicalWithoutDepth), to: json)
        let canonical = try Self.parse(Self.synthetic.captureJSON(depth: Self.depth))

        #expect(throws: RGBDError.self) { _ = try CaptureReader.read(path: json) }
        do {
            _ = try CaptureReader.read(path: json)
        } catch let error as RGBDError {
            #expect(error.description.contains("missing depth map (canonical schema: expected depth_data in the JSON, a depth_file key naming a depth image, or shot.depth.png / shot.depth.tiff beside the JSON)"), "\(error)")
        }

        try Self.writePNG(Self.depth, to: Path.join(directory, "shot.depth.png"))
        let fromPNG = try CaptureReader.read(path: json)
        #expect(fromPNG.calibration == canonical.calibration)
        #expect(identicalBits(fromPNG.depth.samples, canonical.depth.samples))
        #expect(fromPNG.depthSource == DepthSource(kind: .png16Millimeters, path: Path.join(directory, "shot.depth.png")))
        #expect(fromPNG.depthSource.description.hasSuffix("shot.depth.png beside the JSON (16-bit PNG, millimeters)"))
        #expect(fromPNG.discarded.zero == 40 && fromPNG.discarded.total == 40)

        // A float TIFF beside wins over the PNG (it is not quantized).
        var precise = Self.synthetic.renderDepth()
        precise[5, 5] = -1
        try Self.writeTIFF(precise, to: Path.join(directory, "shot.depth.tiff"))
        let fromTIFF = try CaptureReader.read(path: json)
        #expect(fromTIFF.depthSource.kind == .tiffFloat32Meters)
        #expect(fromTIFF.depth[5, 5].isNaN && fromTIFF.discarded.negative == 1)
        #expect(fromTIFF.discardWarning(json: json) == "\(Path.join(directory, "shot.depth.tiff")): 1 negative depth pixel (down to -1 m) discarded as no depth")
        precise[5, 5] = .nan
        #expect(identicalBits(fromTIFF.depth.samples, precise.samples))

        // Depth in the JSON wins over any image beside it.
        try Self.write(Self.synthetic.captureJSON(depth: Self.depth), to: json)
        let inline = try CaptureReader.read(path: json)
        #expect(inline.depthSource.kind == .rows)
        #expect(identicalBits(inline.depth.samples, canonical.depth.samples))
    }

    @Test func depthImageNamedByAKey() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileSystem.createDirectory(Path.join(directory, "depth"))
        let json = Path.join(directory, "shot.json")
        let text = Self.synthetic.captureJSON(depth: Self.depth, layout: .canonicalWithoutDepth)
        try Self.write(text.replacingFirst("{", with: "{\"depth_file\": \"depth/000001.png\","), to: json)
        // Not there yet: the message names the key and the path.
        do {
            _ = try CaptureReader.read(path: json)
            Issue.record("a missing depth image was accepted")
        } catch let error as RGBDError {
            #expect(error.description == "\(json): depth_file: names the depth image \(directory)/depth/000001.png, which does not exist")
        }
        try Self.writePNG(Self.depth, to: Path.join(directory, "depth/000001.png"))
        // An image beside the JSON is not looked at when a key names one.
        try Self.writeTIFF(Self.synthetic.renderDepth(), to: Path.join(directory, "shot.depth.tiff"))
        let contents = try CaptureReader.read(path: json)
        #expect(contents.depthSource == DepthSource(kind: .png16Millimeters, key: "depth_file", path: Path.join(directory, "depth/000001.png")))
        let canonical = try Self.parse(Self.synthetic.captureJSON(depth: Self.depth))
        #expect(identicalBits(contents.depth.samples, canonical.depth.samples))
        // From bytes there is no directory to look in.
        #expect(throws: RGBDError.self) { _ = try CaptureReader.parse(Array(text.utf8), file: "x.json") }
    }

    /// `Capture.load` (the C ABI and Python path) and `RectifyPipeline` (the CLI path)
    /// read the image beside the JSON and rectify exactly as from the inline depth.
    @Test func loadAndPipelineUseTheImageBeside() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let a = Path.join(directory, "a"), b = Path.join(directory, "b")
        let inline = try Self.synthetic.write(to: a, stem: "shot")
        try Self.write(Self.synthetic.captureJSON(depth: Self.depth), to: inline.json)
        try FileSystem.createDirectory(b)
        try Data(contentsOf: URL(fileURLWithPath: inline.image)).write(to: URL(fileURLWithPath: Path.join(b, "shot.jpg")))
        let json = Path.join(b, "shot.json")
        try Self.write(Self.synthetic.captureJSON(depth: Self.depth, layout: .canonicalWithoutDepth), to: json)
        try Self.writePNG(Self.depth, to: Path.join(b, "shot.depth.png"))

        let expected = try Capture.load(json: inline.json).rectified()
        let loaded = try Capture.load(json: json)
        #expect(loaded.calibration == Self.synthetic.calibration)
        let rectified = loaded.rectified()
        #expect(identicalBits(rectified.depth.samples, expected.depth.samples))
        #expect(rectified.color.samples == expected.color.samples)
        let result = try RectifyPipeline.rectified(json: json, image: nil)
        let (piped, warnings) = (result.output, result.warnings)
        #expect(identicalBits(piped.depth.samples, expected.depth.samples))
        #expect(piped.color.samples == expected.color.samples)
        #expect(warnings.isEmpty)
    }

    // MARK: Sentinels

    @Test func sentinelsAreNoDepthAndCounted() throws {
        let values = "[[1.5, -1, 9999, null], [NaN, Infinity, -Infinity, 0], [1e40, 2, 999.5, 1000.5]]"
        let text = CaptureReaderTests.document(depth: values)
        let contents = try Self.parse(text)
        let expected: [Float] = [1.5, .nan, .nan, .nan, .nan, .nan, .nan, .nan, .nan, 2, 999.5, .nan]
        #expect(identicalBits(contents.depth.samples, expected))
        let d = contents.discarded
        #expect(d.zero == 1 && d.negative == 2 && d.notANumber == 2 && d.beyondMaximum == 4 && d.total == 9)
        #expect(d.largest == .infinity && d.mostNegative == -.infinity)
        #expect(contents.discardWarning(json: "shot.json") == "shot.json: 2 negative depth pixels (down to -Infinity m) and 4 depth pixels beyond 1000 m (up to Infinity m) discarded as no depth")

        // The same values flat, and through a higher maximum.
        let flat = CaptureReaderTests.document(depth: "[1.5, -1, 9999, null, NaN, Infinity, -Infinity, 0, 1e40, 2, 999.5, 1000.5]")
            .replacingFirst("{", with: "{\"depth_width\": 4, \"depth_height\": 3,")
        #expect(identicalBits(try Self.parse(flat).depth.samples, expected))
        let wide = try Self.parse(text, options: CaptureReadingOptions(maxValidDepth: 10_000))
        #expect(wide.depth[2, 0] == 9999 && wide.depth[3, 2] == 1000.5)
        #expect(wide.discarded.beyondMaximum == 2)
        // Only zeros and NaN: the usual holes, no warning.
        let plain = try Self.parse(CaptureReaderTests.document(depth: "[[1, 0], [null, 2]]"))
        #expect(plain.discarded.total == 2 && plain.discardWarning(json: "shot.json") == nil)
    }

    @Test func noPointBeyondTheMaximum() throws {
        var depth = Self.depth
        for x in 0..<160 { depth[x, 60] = 9999 }
        let contents = try Self.parse(Self.synthetic.captureJSON(depth: depth))
        #expect(contents.discarded.beyondMaximum == 160)
        let capture = Capture(jsonPath: "shot.json", imagePath: "shot.jpg", calibration: contents.calibration,
                              depth: contents.depth, color: Self.synthetic.renderColor(supersampling: 1))
        let cloud = PointCloud(capture.rectified())
        #expect(cloud.count > 10_000)
        var farthest: Float = 0
        cloud.forEachPoint { farthest = max(farthest, $0.position.z) }
        #expect(farthest > 2 && farthest < 10)
    }

    // MARK: Errors

    @Test(arguments: [
        (CaptureReaderTests.document(depth: "[1, 2, 3]").replacingFirst("{", with: "{\"depth_width\": 2, \"depth_height\": 2,"),
         "capture.json: depth_data: holds 3 depths, but depth_width × depth_height is 2 × 2 = 4"),
        (CaptureReaderTests.document(depth: "\"AAAA\"").replacingFirst("{", with: "{\"depth_width\": 2, \"depth_height\": 2,"),
         "not a whole number of float32 values"),
        (CaptureReaderTests.document(depth: "\"AA*A\""), "depth_data: not base64: '*' at character 2"),
        (CaptureReaderTests.document(depth: "[1, \"x\"]"), "depth_data: element 1: expected a number"),
        (CaptureReaderTests.document().replacingFirst(CaptureReaderTests.table, with: "\"AACAvw==\""),
         "lens_distortion_lookup_table: magnification -1.0 (float 0 of the base64 data) is out of range"),
        (CaptureReaderTests.document().replacingFirst(CaptureReaderTests.table, with: "\"@@\""),
         "lens_distortion_lookup_table: expected an array of numbers or base64 float32: not base64"),
        ("{\"camera_intrinsics\": {\"intrinsic_matrix\": [1, 0, 0, 0, 1, 0, 0, 0, 1], \"intrinsic_matrix_reference_dimensions_width\": 4}, \"depth_map\": [[1]]}",
         "camera_intrinsics.intrinsic_matrix_reference_dimensions: missing (snake_case (camera_intrinsics) schema, whose camera_intrinsics.intrinsic_matrix is there: looked for intrinsic_matrix_reference_dimensions or intrinsic_matrix_reference_dimensions_width and intrinsic_matrix_reference_dimensions_height)"),
    ] as [(String, String)])
    func malformedLayoutsAreOneClearError(text: String, expected: String) {
        do {
            _ = try Self.parse(text)
            Issue.record("accepted: \(text.prefix(80))")
        } catch let error as RGBDError {
            #expect(error.description.contains(expected), "message was: \(error.description)")
            #expect(!error.description.contains("\n"))
        } catch {
            Issue.record("unexpected error type \(error)")
        }
    }

    @Test func depthImagesMustBeDepth() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let json = Path.join(directory, "shot.json")
        try Self.write(Self.synthetic.captureJSON(depth: Self.depth, layout: .canonicalWithoutDepth), to: json)
        let png = try PNGCodec.encodeRGB(ColorImage(width: 4, height: 3, channels: 3, repeating: 7))
        try Data(png).write(to: URL(fileURLWithPath: Path.join(directory, "shot.depth.png")))
        #expect(throws: RGBDError(.invalidImage, file: Path.join(directory, "shot.depth.png"),
                                  "a depth PNG must be 16-bit grayscale (millimeters, 0 = no depth); this one is 8-bit RGB")) {
            _ = try CaptureReader.read(path: json)
        }
        try Self.write("not an image", to: Path.join(directory, "shot.depth.png"))
        #expect(throws: RGBDError.self) { _ = try CaptureReader.read(path: json) }
    }
}
