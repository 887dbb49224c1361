import Testing
@testable import RGBDCapture
@testable import RGBDKit
import RGBDSynth

/// Reading capture JSON: every variant of docs/format.md gives the same calibration, holes
/// become NaN, and anything malformed is an error naming the file and the key.
@Suite struct CaptureReaderTests {
    static let fx = 2900.5, fy = 2899.25, cx = 2016.3, cy = 1511.6
    static let table = "[0, -0.001, -0.004, -0.02]"
    static let inverse = "[0, 0.001, 0.004, 0.0204]"
    static let depth = "[[1.5, 0.0, 2.25], [null, -1, 3.125]]"

    /// A capture JSON with the calibration members given.
    static func document(matrix: String = "[[2900.5, 0, 0], [0, 2899.25, 0], [2016.3, 1511.6, 1]]",
                         dimensions: String = "[4032, 3024]", center: String = "[2015.53, 1511.21]",
                         pixelSizeKey: String = "pixel_size", inverse: String? = CaptureReaderTests.inverse,
                         topLevel: Bool = false, depth: String = CaptureReaderTests.depth) -> String {
        var members = [
            "\"intrinsic_matrix\" : \(matrix)",
            "\"\(pixelSizeKey)\" : 0.0014",
            "\"intrinsic_matrix_reference_dimensions\" : \(dimensions)",
            "\"lens_distortion_center\" : \(center)",
            "\"lens_distortion_lookup_table\" : \(table)",
        ]
        if let inverse { members.append("\"inverse_lens_distortion_lookup_table\" : \(inverse)") }
        let calibration = members.joined(separator: ",\n")
        if topLevel {
            return "{\n\(calibration),\n\"depth_data\" : \(depth)\n}"
        }
        return "{\n  \"calibration_data\" : {\n\(calibration)\n  },\n  \"depth_data\" : \(depth)\n}"
    }

    static func parse(_ text: String, file: String = "capture.json") throws -> CaptureReader.Contents {
        try CaptureReader.parse(Array(text.utf8), file: file)
    }

    static func expected(inverse: Bool = true) -> Calibration {
        Calibration(intrinsics: Intrinsics(fx: fx, fy: fy, cx: cx, cy: cy, width: 4032, height: 3024),
                    pixelSize: 0.0014, distortionCenter: SIMD2(2015.53, 1511.21),
                    lookupTable: [0, -0.001, -0.004, -0.02],
                    inverseLookupTable: inverse ? [0, 0.001, 0.004, 0.0204] : [])
    }

    @Test(arguments: [
        ("column-major (simd columns)", document()),
        ("row-major", document(matrix: "[[2900.5, 0, 2016.3], [0, 2899.25, 1511.6], [0, 0, 1]]")),
        ("flat column-major", document(matrix: "[2900.5, 0, 0, 0, 2899.25, 0, 2016.3, 1511.6, 1]")),
        ("flat row-major", document(matrix: "[2900.5, 0, 2016.3, 0, 2899.25, 1511.6, 0, 0, 1]")),
        ("width/height object", document(dimensions: "{\"width\": 4032, \"height\": 3024}")),
        ("x/y object", document(center: "{\"x\": 2015.53, \"y\": 1511.21}")),
        ("pixel_size_mm", document(pixelSizeKey: "pixel_size_mm")),
        ("calibration at top level", document(topLevel: true)),
    ])
    func variantsGiveTheSameCalibration(name: String, text: String) throws {
        let contents = try Self.parse(text)
        #expect(contents.calibration == Self.expected(), "\(name)")
    }

    @Test func missingOrEmptyInverseTable() throws {
        #expect(try Self.parse(Self.document(inverse: nil)).calibration == Self.expected(inverse: false))
        #expect(try Self.parse(Self.document(inverse: "[]")).calibration == Self.expected(inverse: false))
    }

    @Test func camelCaseExporter() throws {
        let text = """
        {"calibrationData": {"intrinsicMatrix": [2900.5, 0, 0, 0, 2899.25, 0, 2016.3, 1511.6, 1],
          "intrinsicMatrixReferenceDimensions": {"width": 4032, "height": 3024},
          "lensDistortionCenter": {"x": 2015.53, "y": 1511.21}, "pixelSize": 0.0014,
          "lensDistortionLookupTable": \(Self.table), "inverseLensDistortionLookupTable": \(Self.inverse)},
         "depthData": \(Self.depth)}
        """
        let contents = try Self.parse(text)
        #expect(contents.calibration == Self.expected())
        #expect(contents.schemaName == "camelCase")
        #expect(contents.depth.width == 3 && contents.depth.height == 2)
    }

    @Test func holesBecomeNaN() throws {
        let text = Self.document(depth: "[[1.5, 0, -0.5, null], [NaN, Infinity, -Infinity, 2.0e0], [0.0, -0.0, 1e-3, 1e40]]")
        let depth = try Self.parse(text).depth
        #expect(depth.width == 4 && depth.height == 3)
        let expected: [Float] = [1.5, .nan, .nan, .nan, .nan, .nan, .nan, 2, .nan, .nan, 0.001, .nan]
        #expect(identicalBits(depth.samples, expected))
    }

    @Test func fastDepthReaderMatchesJSONCTree() throws {
        // The same values through json-c (a key the fast reader does not handle is read
        // by the tree path when the quick walk cannot run: a leading BOM-free comment is
        // not JSON, so use an array top level inside an object instead).
        let rendered = Scenes.small.synthetic
        var depth = rendered.renderDepth()
        depth[3, 4] = .nan
        let text = rendered.captureJSON(depth: depth)
        let fast = try Self.parse(text).depth
        let tree = try CalibrationReaderTreeProbe.depth(text)
        #expect(identicalBits(fast.samples, tree.samples))
        #expect(fast.samples[4 * depth.width + 3].isNaN)
    }

    // MARK: Errors

    static func error(_ text: String) -> RGBDError? {
        do {
            _ = try parse(text, file: "shot.json")
            return nil
        } catch let error as RGBDError {
            return error
        } catch {
            return RGBDError(.io, "unexpected error type \(error)")
        }
    }

    @Test(arguments: [
        // (document, text the one-line message must contain)
        (document(matrix: "[[1, 2, 3], [4, 5, 6], [7, 8, 9]]"), "intrinsic_matrix: not an intrinsic matrix"),
        (document(matrix: "[[2900, 0], [0, 2900]]"), "intrinsic_matrix"),
        (document(matrix: "\"K\""), "intrinsic_matrix: expected a 3×3 matrix, found a string"),
        (document(dimensions: "[4032]"), "intrinsic_matrix_reference_dimensions"),
        (document(dimensions: "{\"Width\": 4032}"), "intrinsic_matrix_reference_dimensions: expected {\"width\": number, \"height\": number}"),
        (document(dimensions: "[4032.5, 3024]"), "positive whole numbers"),
        (document(center: "{\"x\": 1}"), "lens_distortion_center"),
        (document(center: "[1e100, 1e100]"), "lens_distortion_center: (1e+100, 1e+100) is far outside"),
        (document(depth: "[[1, 2, 3], [4, 5]]"), "row 1 has 2 values, but row 0 has 3"),
        (document(depth: "[[1, 2, 3], [4, \"x\", 6]]"), "row 1, column 1: expected a number"),
        (document(depth: "[]"), "depth map is empty"),
        (document(depth: "[1, 2, 3]"), "depth_data: a flat array of 3 depths needs its width and height in the JSON (depth_width and depth_height"),
        (document(depth: "{\"rows\": 1}"), "expected an array of rows"),
        (document(depth: "[[1, 2, 3], [4, 5, 6]"), "expected ',' or ']' after row 1"),
        (document(depth: "[[01, 2]]"), "expected ',' or ']'"),
        (document(depth: "[[1., 2]]"), "expected a number"),
        (document(depth: "[[nul, 2]]"), "expected a number"),
        ("{\"calibration_data\": {}, \"depth_data\": [[1]]}", "no calibration found"),
        ("{\"calibration_data\": {\"intrinsic_matrix\": [1, 0, 0, 0, 1, 0, 0, 0, 1]}, \"depth_data\": [[1]]}",
         "calibration_data.intrinsic_matrix_reference_dimensions: missing (canonical schema, whose calibration_data.intrinsic_matrix is there: looked for intrinsic_matrix_reference_dimensions)"),
        ("{\"CalibrationData\": {\"IntrinsicMatrix\": [1, 0, 0, 0, 1, 0, 0, 0, 1], \"IntrinsicMatrixReferenceDimensions\": [4, 3]}, \"DepthData\": [[1]]}",
         "CalibrationData.LensDistortionCenter: missing (PascalCase schema"),
        ("", "the file is empty"),
        ("[1, 2]", "top level is an array"),
        ("{\"calibration_data\": {\"a\": 1,}, \"depth_data\": [[1]]}", "invalid JSON"),
        ("{\"depth_data\": [[1]], \"calibration_data\": {", "invalid JSON"),
        ("{\"depth_data\": [[1]], \"depth_data\": [[2]]}", "line 1: the key \"depth_data\" appears twice in the same object"),
        // One notion of a key: escapes decoded as json-c decodes them, duplicates refused
        // however they are spelled, at the top level and inside (json-c keeps one silently).
        (document(depth: "[[1]], \"depth\\u005fdata\": [[2]]"),
         "the key \"depth_data\" appears twice in the same object (spelled \"depth\\u005fdata\" here)"),
        (document(depth: "[[1]], \"depthData\": [[2]]"), "more than one depth map"),
        (document(center: "[2015.53, 1511.21], \"lens\\u005Fdistortion\\u005fcenter\": [1, 2]"),
         "the key \"lens_distortion_center\" appears twice in the same object"),
        (document(center: "[2015.53, 1511.21], \"extra\": [{\"a\": 1, \"b\": {\"c\": 1, \"\\u0063\": 2}}]"),
         "the key \"c\" appears twice in the same object (spelled \"\\u0063\" here)"),
        (document(center: "[2015.53, 1511.21], \"pixel_size\\u0000\": 1"), "contains a NUL character"),
        // Found by FuzzJSON: keys in messages are escaped, so messages stay one line.
        (document(center: "[2015.53, 1511.21], \"x\ny\\\"\": 1, \"x\\u000ay\\\"\": 2"),
         "the key \"x\\ny\\\"\" appears twice in the same object (spelled \"x\\u000ay\\\"\" here)"),
        // A null element is named with its index (once "expected an array of numbers,
        // found an array").
        (document().replacingFirst(table, with: "[0, -0.001, null, -0.02]"),
         "calibration_data.lens_distortion_lookup_table[2]: expected a number, found null"),
        (document(inverse: "[0, null]"), "calibration_data.inverse_lens_distortion_lookup_table[1]: expected a number, found null"),
        (document(matrix: "[[2900.5, 0, 0], [0, null, 0], [2016.3, 1511.6, 1]]"),
         "calibration_data.intrinsic_matrix[1][1]: expected a number, found null"),
        (document(matrix: "[2900.5, 0, 0, 0, 2899.25, 0, 2016.3, \"y\", 1]"),
         "calibration_data.intrinsic_matrix[7]: expected a number, found a string"),
        (document(center: "[null, 1511.21]"), "calibration_data.lens_distortion_center[0]: expected a number, found null"),
        (document(dimensions: "[4032, [3024]]"),
         "calibration_data.intrinsic_matrix_reference_dimensions[1]: expected a number, found an array"),
        (document(center: "[2015.53]"), "lens_distortion_center: expected [x, y] as 2 numbers, found 1 element"),
    ] as [(String, String)])
    func malformedInputIsOneClearError(text: String, expected: String) {
        let error = Self.error(text)
        #expect(error != nil, "accepted: \(text.prefix(80))")
        guard let error else { return }
        #expect(error.file == "shot.json")
        #expect(error.description.contains(expected), "message was: \(error.description)")
        #expect(!error.description.contains("\n"))
    }

    /// A depth key spelled with escapes is the depth key, read by the fast reader (once
    /// json-c's tree: 9× the memory for a large map). The readers can be told apart: the
    /// fast one rounds a decimal straight to the nearest Float, as `strtof`; the tree
    /// goes through a Double, and `1.00000005960464477550` (just above the midpoint
    /// between 1 and the next Float) first rounds to the midpoint, then to even: 1.
    @Test func escapedDepthKeyTakesTheFastReader() throws {
        let value = "1.00000005960464477550"
        let depth = "[[\(value), 1.5], [NaN, 2.25]]"
        let tree = try CalibrationReaderTreeProbe.depth("{\"depth_data\": \(depth)}")
        #expect(tree.samples[0] == 1)
        for key in ["depth_data", "depth\\u005fdata", "\\u0064epth_data", "depth\\u005Fdata"] {
            let text = Self.document().replacingFirst("\"depth_data\" : \(Self.depth)", with: "\"\(key)\" : \(depth)")
            #expect(text.contains(key))
            let contents = try Self.parse(text)
            #expect(identicalBits(contents.depth.samples, [Float(1).nextUp, 1.5, .nan, 2.25]), "\(key)")
            #expect(contents.depth.width == 2 && contents.depth.height == 2)
        }
        // Keys with escapes elsewhere read as json-c reads them.
        let escaped = Self.document(pixelSizeKey: "pixel\\u005fsize")
        #expect(try Self.parse(escaped).calibration.pixelSize == 0.0014)
    }

    @Test func tableOutOfRangeIsRejected() {
        let text = Self.document().replacingFirst(Self.table, with: "[0, -1.5]")
        #expect(Self.error(text)?.description.contains("lens_distortion_lookup_table[1]") == true)
    }

    @Test func syntaxErrorsNameTheLine() throws {
        let text = Self.document().replacingFirst("\"pixel_size\" : 0.0014", with: "\"pixel_size\" : 0.0014 0.1")
        let error = try #require(Self.error(text))
        #expect(error.kind == .invalidJSON)
        #expect(error.location == "line 4", "\(error)")
    }

    /// Files in Fixtures/malformed once broke a reader somewhere; each must give an
    /// RGBDError, never a crash.
    @Test func malformedFixturesAreRejected() throws {
        let directory = Path.join(Path.directory(of: Path.directory(of: #filePath)), "Fixtures/malformed")
        let names = try FileSystem.contentsOfDirectory(directory).filter { $0.hasSuffix(".json") }
        #expect(names.count >= 5)
        for name in names {
            let path = Path.join(directory, name)
            #expect(throws: RGBDError.self, "\(name)") { _ = try CaptureReader.read(path: path) }
        }
    }
}

/// Reads a depth map through json-c's tree (the path used when the quick walk fails).
enum CalibrationReaderTreeProbe {
    static func depth(_ text: String) throws -> DepthMap {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { buffer in
            guard case .success(let document) = JSONDocument.parse(buffer),
                  let node = document.rootNode.member("depth_data") else {
                throw RGBDError(.invalidJSON, "json-c could not parse the test document")
            }
            var map = try CalibrationReader.depthFromTree(node, file: "tree")
            _ = DepthDiscards.sanitize(&map.samples, maxValidDepth: CaptureReadingOptions.defaultMaxValidDepth)
            return map
        }
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        let chars = Array(self), t = Array(target)
        guard t.count <= chars.count else { return self }
        for i in 0...(chars.count - t.count) where Array(chars[i..<(i + t.count)]) == t {
            return String(chars[..<i]) + replacement + String(chars[(i + t.count)...])
        }
        return self
    }
}
