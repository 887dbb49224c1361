import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// `rgbd info` (the real binary) against the ground truth of synthetic captures.
@Suite(.serialized) struct InfoCLITests {
    typealias CLI = CLITests

    /// A capture as real files come: a pincushion, non-monotonic table, reference
    /// 3088×2316 for a 3088×2320 photo (a flat gray JPEG: `info` reads only its header),
    /// a 320×240 depth map of the scene with a 10×6 patch of holes.
    struct RealLike {
        let synthetic: SyntheticCapture
        let depth: DepthMap
        let json: String
        let image: String
        static let hole = (x: 200..<210, y: 30..<36)

        init(in directory: String, stem: String = "real", photoWidth: Int = 3088, photoHeight: Int = 2320,
             calibration: Calibration? = nil) throws {
            let calibration = calibration ?? SyntheticCapture.calibration(
                lookupTable: SyntheticCapture.realisticPincushionTable, referenceWidth: 3088, referenceHeight: 2316)
            synthetic = SyntheticCapture(colorWidth: photoWidth, colorHeight: photoHeight, depthWidth: 320,
                                         depthHeight: 240, calibration: calibration)
            var depth = synthetic.renderDepth()
            for y in Self.hole.y { for x in Self.hole.x { depth[x, y] = .nan } }
            self.depth = depth
            json = directory + "/\(stem).json"
            image = directory + "/\(stem).jpg"
            try synthetic.captureJSON(depth: depth).write(toFile: json, atomically: true, encoding: .utf8)
            let gray = ColorImage(width: photoWidth, height: photoHeight, channels: 3,
                                  samples: [UInt8](repeating: 128, count: photoWidth * photoHeight * 3))
            try Data(JPEGCodec.encode(gray, quality: 50)).write(to: URL(fileURLWithPath: image))
        }
    }

    static func document(_ run: CLI.Run) throws -> [[String: Any]] {
        let parsed = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8))
        return try #require(parsed as? [[String: Any]], "not an array of objects: \(run.stdout.prefix(200))")
    }

    static func number(_ object: Any?, _ path: String...) throws -> Double {
        var value = object
        for key in path { value = (value as? [String: Any])?[key] }
        return try #require(value as? Double ?? (value as? Int).map(Double.init), "no number at \(path)")
    }

    /// `numpy.percentile` (linear) of the finite values, by sorting.
    static func percentile(_ values: [Float], _ p: Double) -> Double {
        let sorted = values.filter { $0.isFinite }.sorted()
        let position = Double(sorted.count - 1) * p / 100
        let k = Int(position.rounded(.down))
        let next = min(k + 1, sorted.count - 1)
        return Double(sorted[k]) + (position - Double(k)) * (Double(sorted[next]) - Double(sorted[k]))
    }

    /// The forward table's magnification at radius `r`, from the table alone.
    static func magnification(_ table: [Float], r: Double, maxRadius: Double) -> Double {
        let n = table.count
        if r >= maxRadius { return Double(table[n - 1]) }
        let s = r * Double(n - 1) / maxRadius
        let i = Int(s)
        return Double(table[i]) + (s - Double(i)) * (Double(table[i + 1]) - Double(table[i]))
    }

    @Test func jsonFormMatchesTheGroundTruth() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try RealLike(in: directory)
        let run = try CLI.run(["info", "--json", capture.json])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty, "\(run.stderr)")
        let entries = try Self.document(run)
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        #expect(entry["info_version"] as? Int == 1)
        #expect(entry["status"] as? String == "ok" && entry["input"] as? String == capture.json)
        #expect(entry["schema"] as? String == "canonical")
        #expect(entry["warnings"] as? [String] == [])

        // Sizes and formats.
        let photo = try #require(entry["photo"] as? [String: Any])
        #expect(photo["path"] as? String == capture.image && photo["format"] as? String == "JPEG")
        #expect(photo["width"] as? Int == 3088 && photo["height"] as? Int == 2320)
        let photoBytes = try FileManager.default.attributesOfItem(atPath: capture.image)[.size] as? Int
        #expect(photo["bytes"] as? Int == photoBytes)
        let jsonBytes = try FileManager.default.attributesOfItem(atPath: capture.json)[.size] as? Int
        let jsonFile = try #require(entry["json"] as? [String: Any])
        #expect(jsonFile["path"] as? String == capture.json && jsonFile["bytes"] as? Int == jsonBytes)
        let depth = try #require(entry["depth"] as? [String: Any])
        #expect(depth["width"] as? Int == 320 && depth["height"] as? Int == 240)
        // Where the depth came from, and no marker discarded (the synthetic holes are 0,
        // ordinary holes).
        #expect(depth["source"] as? String == "depth_data (rows of meters in the JSON)", "\(depth)")
        #expect(depth["discarded_sentinels"] as? Int == 0, "\(depth)")
        #expect(try Self.number(entry, "reference", "width") == 3088 && Self.number(entry, "reference", "height") == 2316)

        // Intrinsics as captured, and scaled per axis to each image exactly.
        let k = capture.synthetic.calibration.intrinsics
        for (key, value) in [("fx", k.fx), ("fy", k.fy), ("cx", k.cx), ("cy", k.cy)] {
            // (Foundation's parser can be one unit in the last place off on 17 digits.)
            #expect(try abs(Self.number(entry, "calibration", "intrinsics", key) - value) <= 1e-13 * value, "\(key)")
        }
        for (image, w, h) in [("photo", 3088.0, 2320.0), ("depth", 320.0, 240.0)] {
            let sx = w / 3088, sy = h / 2316
            #expect(try abs(Self.number(entry, image, "intrinsics", "fx") - k.fx * sx) <= 1e-9 * k.fx)
            #expect(try abs(Self.number(entry, image, "intrinsics", "fy") - k.fy * sy) <= 1e-9 * k.fy)
            #expect(try abs(Self.number(entry, image, "intrinsics", "cx") - k.cx * sx) <= 1e-9 * k.cx)
            #expect(try abs(Self.number(entry, image, "intrinsics", "cy") - k.cy * sy) <= 1e-9 * k.cy)
            let scale = try #require((entry[image] as? [String: Any])?["scale"] as? [Double])
            #expect(scale == [sx, sy])
        }
        #expect(try Self.number(entry, "photo", "intrinsics", "fy") != Self.number(entry, "photo", "intrinsics", "fx"))

        // The table.
        let table = SyntheticCapture.realisticPincushionTable
        #expect(try Self.number(entry, "lookup_table", "count") == 42)
        #expect(try Self.number(entry, "lookup_table", "first") == 0.004)
        #expect(try Self.number(entry, "lookup_table", "min") == 0.004)
        #expect(try Self.number(entry, "lookup_table", "max") == 0.03)
        #expect(try Self.number(entry, "lookup_table", "last") == 0.03)
        let lookup = try #require(entry["lookup_table"] as? [String: Any])
        #expect(lookup["monotonic"] as? Bool == false && lookup["radius_rises"] as? Bool == true)

        // Corner displacement, computed here from the table alone: |q − p| = r·|mag(r)|.
        let center = SIMD2(capture.synthetic.calibration.distortionCenter.x * 3088 / 3088,
                           capture.synthetic.calibration.distortionCenter.y * 2320 / 2316)
        let maxRadius = (pow(max(center.x, 3088 - center.x), 2) + pow(max(center.y, 2320 - center.y), 2)).squareRoot()
        let cornerPixels = [SIMD2(0.0, 0), SIMD2(3087.0, 0), SIMD2(3087.0, 2319), SIMD2(0.0, 2319)]
        let expected = cornerPixels.map { p -> Double in
            let r = ((p - center) * (p - center)).sum().squareRoot()
            return r * abs(Self.magnification(table, r: r, maxRadius: maxRadius))
        }
        let displacement = try #require(entry["corner_displacement"] as? [String: Any])
        let corners = try #require(displacement["corners"] as? [[String: Any]])
        #expect(corners.map { $0["corner"] as? String } == ["top-left", "top-right", "bottom-right", "bottom-left"])
        for (corner, truth) in zip(corners, expected) {
            #expect(try abs(Self.number(corner, "pixels") - truth) < 1e-6, "\(corner) vs \(truth)")
        }
        #expect(try abs(Self.number(displacement, "max") - (expected.max() ?? 0)) < 1e-6)
        // About 3 % of the corner radius (~1930 px): some 55 px.
        #expect(expected.allSatisfy { $0 > 50 && $0 < 60 })

        // Forward then inverse, computed here on the same 41×31 grid from the two tables,
        // over the points whose forward image stays within the inverse table's radius;
        // the +3 % lens pushes the corner regions beyond it, and those are only counted.
        let inverse = capture.synthetic.calibration.inverseLookupTable
        var worst = 0.0, total = 0.0, beyond = 0
        for j in 0..<31 {
            for i in 0..<41 {
                let p = SIMD2(Double(i) * 3087 / 40, Double(j) * 2319 / 30)
                let v = p - center
                let r = (v * v).sum().squareRoot()
                let q = center + v * (1 + Self.magnification(table, r: r, maxRadius: maxRadius))
                let w = q - center
                let rq = (w * w).sum().squareRoot()
                if rq > maxRadius {
                    beyond += 1
                    continue
                }
                let back = center + w * (1 + Self.magnification(inverse, r: rq, maxRadius: maxRadius))
                let error = ((back - p) * (back - p)).sum().squareRoot()
                worst = max(worst, error)
                total += error
            }
        }
        #expect(beyond > 0 && beyond < 41 * 31 / 10, "\(beyond)")
        let roundTrip = try #require(entry["inverse_round_trip"] as? [String: Any])
        #expect(roundTrip["grid"] as? [Int] == [41, 31])
        #expect(roundTrip["beyond_table"] as? Int == beyond)
        #expect(try abs(Self.number(roundTrip, "max") - worst) < 1e-6)
        #expect(try abs(Self.number(roundTrip, "mean") - total / Double(41 * 31 - beyond)) < 1e-6)

        // Depth: the scene's (wall at 3 m, box front at 1.6 m), holes where they were cut.
        let values = capture.depth.samples
        #expect(try Self.number(depth, "valid_pixels") == Double(320 * 240 - 60))
        #expect(try Self.number(depth, "holes") == 60)
        #expect(try Self.number(depth, "hole_fraction") == 60.0 / (320 * 240))
        #expect(try Self.number(depth, "meters", "max") == 3.0)
        #expect(try abs(Self.number(depth, "meters", "min") - 1.6) < 1e-6)
        for p in [5.0, 50, 95] {
            let truth = Self.percentile(values, p)
            #expect(try abs(Self.number(depth, "meters", "p\(Int(p))") - truth) < 1e-9, "p\(p)")
        }
        #expect(try Self.number(depth, "meters", "p50") == 3.0 && Self.number(depth, "meters", "p95") == 3.0)
        #expect(try Self.number(depth, "meters", "p5") < 2.5)
        let valid = values.filter { $0.isFinite }.map(Double.init)
        #expect(try abs(Self.number(depth, "meters", "mean") - valid.reduce(0, +) / Double(valid.count)) < 1e-9)
    }

    @Test func textFormNamesTheFacts() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try RealLike(in: directory)
        let run = try CLI.run(["info", capture.json])
        #expect(run.status == 0, "\(run.stderr)")
        let text = run.stdout
        for fact in [capture.json, "canonical", "JPEG, 3088×2320", "320×240", "3088×2316",
                     "42 entries, first 0.004, last 0.03, min 0.004, max 0.03, not monotonic",
                     "round trip on a 41×31 grid", "holes", "60 of 76800 pixels", "warnings       none"] {
            #expect(text.contains(fact), "missing \(fact) in\n\(text)")
        }
        // fy scaled by 2320/2316, printed to 3 decimals.
        let fy = capture.synthetic.calibration.intrinsics.fy * 2320 / 2316
        #expect(text.contains("fy \(((fy * 1000).rounded() / 1000))"), "\(text)")
    }

    @Test func withoutAnInverseTableAndWithAWideningAspect() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A 16:9 photo for a 4:3 reference: rectify's aspect warning, in the entry.
        let capture = try RealLike(in: directory, stem: "wide", photoWidth: 1600, photoHeight: 900)
        // No inverse table in the file.
        let text = try String(contentsOfFile: capture.json, encoding: .utf8)
        let start = try #require(text.range(of: ",\n    \"inverse_lens_distortion_lookup_table\""))
        let end = try #require(text.range(of: "]", range: start.upperBound..<text.endIndex))
        try (String(text[..<start.lowerBound]) + String(text[end.upperBound...]))
            .write(toFile: capture.json, atomically: true, encoding: .utf8)
        let run = try CLI.run(["info", "--json", capture.json])
        #expect(run.status == 0, "\(run.stderr)")
        let entry = try #require(Self.document(run).first)
        #expect(entry["inverse_lookup_table"] is NSNull && entry["inverse_round_trip"] is NSNull)
        let warnings = try #require(entry["warnings"] as? [String])
        #expect(warnings.count == 1 && warnings[0].contains("wide.jpg") && warnings[0].contains("aspect ratio"), "\(warnings)")
        let human = try CLI.run(["info", capture.json])
        #expect(human.stdout.contains("inverse table  none") && human.stdout.contains("aspect ratio"), "\(human.stdout)")
    }

    /// A zero table and its zero inverse: nothing moves, the round trip is exact.
    @Test func identityLensMovesNothing() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let identity = SyntheticCapture.calibration(lookupTable: [Float](repeating: 0, count: 42))
        let capture = try RealLike(in: directory, stem: "flat", photoWidth: 1008, photoHeight: 756, calibration: identity)
        let entry = try #require(Self.document(try CLI.run(["info", "--json", capture.json])).first)
        #expect(try Self.number(entry, "corner_displacement", "max") == 0)
        #expect(try Self.number(entry, "inverse_round_trip", "max") < 1e-9)
        #expect(try Self.number(entry, "inverse_round_trip", "beyond_table") == 0)
        let lookup = try #require(entry["lookup_table"] as? [String: Any])
        #expect(lookup["monotonic"] as? Bool == true)
    }

    @Test func badInputsAreOneLineAndTheBatchGoesOn() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let good = try CLI.writeCapture(in: directory, stem: "a-good")
        try FileManager.default.copyItem(atPath: good.image, toPath: directory + "/b-bad.jpg")
        try "{\"depth_data\": [[1.0]]}".write(toFile: directory + "/b-bad.json", atomically: true, encoding: .utf8)
        try "{\"calibration_data\": {}}".write(toFile: directory + "/lonely.json", atomically: true, encoding: .utf8)

        // One bad capture alone: one error line naming it, status 1, nothing on stdout.
        let alone = try CLI.run(["info", directory + "/b-bad.json"])
        #expect(alone.status == 1)
        #expect(alone.stdout.isEmpty)
        let errors = alone.stderr.split(separator: "\n").filter { $0.contains("error") }
        #expect(errors.count == 1 && errors[0].contains("b-bad.json") && errors[0].contains("no calibration"), "\(alone.stderr)")

        // A batch: the directory (a good and a bad capture, a JSON without photo) and a
        // missing file. Every capture is described or marked failed, in input order.
        let run = try CLI.run(["info", "--json", directory, "/nonexistent/x.json"])
        #expect(run.status == 1)
        let entries = try Self.document(run)
        #expect(entries.map { $0["input"] as? String } == [good.json, directory + "/b-bad.json", "/nonexistent/x.json"])
        #expect(entries.map { $0["status"] as? String } == ["ok", "failed", "failed"])
        #expect((entries[1]["error"] as? String)?.contains("b-bad.json") == true)
        #expect((entries[2]["error"] as? String)?.contains("no such file") == true)
        #expect(entries[0]["info_version"] as? Int == 1 && entries[2]["info_version"] as? Int == 1)
        #expect(run.stderr.contains("lonely.json") && run.stderr.contains("skipped"), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").filter { $0.contains("error:") }.count == 2, "\(run.stderr)")

        // The text form describes the good one and goes on.
        let text = try CLI.run(["info", directory])
        #expect(text.status == 1 && text.stdout.contains(good.json) && !text.stdout.contains("b-bad"))

        // A photo that is not one: named.
        try Data("not a photo".utf8).write(to: URL(fileURLWithPath: directory + "/junk.jpg"))
        let junk = try CLI.run(["info", good.json, "--image", directory + "/junk.jpg"])
        #expect(junk.status == 1 && junk.stderr.contains("junk.jpg") && junk.stderr.contains("not a JPEG"), "\(junk.stderr)")

        // Usage errors: status 64.
        let usage = try CLI.run(["info", good.json, directory + "/b-bad.json", "--image", good.image])
        #expect(usage.status == 64 && usage.stderr.contains("--image"))
        // A capture given twice is described once.
        let twice = try Self.document(try CLI.run(["info", "--json", good.json, good.json]))
        #expect(twice.count == 1)
    }

    @Test func infoWritesNothing() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try CLI.writeCapture(in: directory, stem: "shot")
        let before = CLI.files(in: directory)
        let run = try CLI.run(["info", directory])
        #expect(run.status == 0 && run.stdout.contains("shot.json"))
        #expect(CLI.files(in: directory) == before)
    }
}
