import ArgumentParser
import RGBDKit

/// `rgbd info`: what rgbd finds in each capture, without rectifying it.
struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Describe captures without rectifying them: files, sizes, calibration, lens tables, depth.",
        discussion: """
        INPUTS are capture JSON files, Portrait photos or directories of captures, as \
        for rectify (a Portrait photo's depth image is decoded, its lens tables computed \
        from the coefficients in its XMP; its depth kind and accuracy are shown). For \
        each capture: the key set (schema) and files, the photo's format and size (from \
        its header; it is not decoded), the depth map's size, the reference size, the \
        intrinsics as captured and scaled to each image, the lens table (length, range, \
        and how far it moves the photo's corner pixels), how well the inverse table \
        undoes it (round trip on a 41×31 grid of the photo, pixels; points the forward \
        table pushes beyond the inverse table's radius are counted, not measured), depth \
        range and percentiles 5/50/95 over valid pixels, the fraction of holes, a \
        Portrait photo's ExtrinsicMatrix, and the warnings rectify would give, plus \
        warnings about a calibration that looks inconsistent (fx/fy more than 5 % from \
        1, or a distortion center more than 5 % of the diagonal from the principal point).

        A capture rectify would reject fails here with the same one-line error on \
        stderr; the others are still described, and the exit status is 1.

        --json prints one JSON document on stdout instead: an array with one object per \
        capture in input order, failed inputs included with "status": "failed" and \
        their "error". Its fields are documented in docs/info.md; info_version says \
        which version of them an entry follows.
        """)

    @OptionGroup var captures: CaptureInputs

    @Flag(help: "Print one JSON document (an array, one object per capture) instead of text.")
    var json = false

    func run() throws {
        // What each input expands to, for skipped files (Batch runs quiet: the text on
        // stdout is this command's progress) and for failed inputs in the JSON document.
        var expansions: [String: Result<CaptureDiscovery.Expansion, any Error>] = [:]
        for input in captures.inputs where expansions[input] == nil {
            let expansion = Result { try CaptureDiscovery.expand(input) }
            expansions[input] = expansion
            if case .success(let found) = expansion {
                for note in found.skipped { Report.warning(note) }
            }
        }
        var entries: [String: JSONValue] = [:]
        var printed = 0
        let batch = Batch(inputs: captures.inputs, image: captures.image, quiet: true, showTimings: false)
        let failures = try batch.run(outputs: { _ in [] }) { item, _ in
            do {
                let info = try CaptureInfo.read(json: item.json, image: item.image)
                if json {
                    entries[item.json] = info.jsonValue
                } else {
                    print((printed > 0 ? "\n" : "") + Self.text(info), terminator: "")
                    printed += 1
                }
            } catch {
                entries[item.json] = CaptureInfo.failureJSON(input: item.json, error: error)
                throw error
            }
        }
        if json {
            // Input order; a capture reached twice is listed once, as Batch does it once.
            var document: [JSONValue] = []
            var listed: Set<String> = []
            for input in captures.inputs where listed.insert("input:" + input).inserted {
                switch expansions[input] {
                case .failure(let error)?:
                    document.append(CaptureInfo.failureJSON(input: input, error: error))
                case .success(let found)?:
                    for item in found.items where listed.insert(item.json).inserted {
                        if let entry = entries[item.json] { document.append(entry) }
                    }
                case nil:
                    break
                }
            }
            print(JSONValue.array(document).text())
        }
        if failures > 0 { throw ExitCode(1) }
    }

    /// The human-readable block for one capture.
    static func text(_ info: CaptureInfo) -> String {
        var rows: [(String, String)] = []
        func row(_ label: String, _ value: String) { rows.append((label, value)) }
        let k = info.calibration.intrinsics
        func camera(_ k: Intrinsics) -> String {
            "fx \(DecimalText.fixed(k.fx, 3))  fy \(DecimalText.fixed(k.fy, 3))  cx \(DecimalText.fixed(k.cx, 3))  cy \(DecimalText.fixed(k.cy, 3))"
        }
        func size(_ w: Int, _ h: Int) -> String { "\(w)×\(h)" }
        func scale(_ g: CaptureInfo.ImageGeometry) -> String {
            g.scale.x == g.scale.y ? "×\(DecimalText.fixed(g.scale.x, 6))" : "×\(DecimalText.fixed(g.scale.x, 6)) × \(DecimalText.fixed(g.scale.y, 6)) (per axis)"
        }
        func table(_ t: CaptureInfo.TableSummary) -> String {
            "\(t.count) entries, first \(DecimalText.fixed(t.first, 6)), last \(DecimalText.fixed(t.last, 6)), min \(DecimalText.fixed(t.min, 6)), max \(DecimalText.fixed(t.max, 6))"
                + (t.monotonic ? "" : ", not monotonic")
        }

        row("schema", info.schema)
        row("photo", "\(info.photo.path): \(info.photo.format.rawValue), \(size(info.color.width, info.color.height)), \(bytes(info.photo.fileBytes))")
        var depth = "\(size(info.depth.width, info.depth.height)), meters"
        if let source = info.depthSource { depth += ", from \(source)" }
        row("depth map", depth)
        if let portrait = info.portrait {
            var values = "\(portrait.kind.rawValue) (\(portrait.kind == .disparity ? "1/m, depth = 1/disparity" : "meters")), \(portrait.bits)-bit"
            values += " \(DecimalText.fixed(portrait.intRange.x, 6))…\(DecimalText.fixed(portrait.intRange.y, 6)) → \(DecimalText.fixed(portrait.floatRange.x, 6))…\(DecimalText.fixed(portrait.floatRange.y, 6))"
            if let stored = portrait.storedFormat { values += ", stored \(stored)" }
            if let native = portrait.nativeFormat { values += ", native \(native)" }
            row("portrait", values)
            row("accuracy", (portrait.accuracy ?? "not given") + (portrait.isRelative ? ": the depth is right relative to itself, but its scale (meters) is not guaranteed" : ""))
            if let matte = info.matteSize { row("matte", "Portrait Effects Matte \(size(matte.width, matte.height))") }
            if let m = portrait.extrinsicMatrix { row("extrinsic", extrinsic(m)) }
        } else {
            row("json", info.json + (info.jsonBytes.map { ": " + bytes($0) } ?? ""))
        }
        row("reference", "\(size(k.width, k.height)); photo \(scale(info.color)), depth \(scale(info.depth))")
        row("intrinsics", "captured  " + camera(k) + (info.calibration.pixelSize.map { "  (pixel \(DecimalText.fixed($0, 6)) mm)" } ?? ""))
        row("", "photo     " + camera(info.color.intrinsics))
        row("", "depth     " + camera(info.depth.intrinsics))
        let c = info.calibration.distortionCenter
        row("distortion", "center (\(DecimalText.fixed(c.x, 3)), \(DecimalText.fixed(c.y, 3))) at the reference; r_max \(DecimalText.fixed(info.color.maxRadius, 1)) px on the photo")
        row("lookup table", table(info.table) + (info.table.radiusRises ? "" : "; the mapped radius folds")
            + (info.portrait != nil ? " (from LensDistortionCoefficients)" : ""))
        let corners = info.corners.map { "\($0.name) \(DecimalText.fixed($0.pixels, 2))" }.joined(separator: ", ")
        row("corners", "moved up to \(DecimalText.fixed(info.maxCornerDisplacement, 2)) px on the photo (\(corners))")
        if let inverse = info.inverseTable, let round = info.inverseConsistency {
            row("inverse table", table(inverse))
            let grid = "round trip on a \(round.columns)×\(round.rows) grid of the photo"
            if round.measured > 0 {
                row("", grid + ": max \(DecimalText.fixed(round.maxError, 3)) px, mean \(DecimalText.fixed(round.meanError, 3)) px"
                    + (round.beyondTable > 0 ? " (\(round.measured) points; \(round.beyondTable) beyond the inverse table's radius, not measured)" : ""))
            } else {
                row("", grid + ": every point lands beyond the inverse table's radius, none measured")
            }
        } else {
            row("inverse table", "none")
        }
        let stats = info.depthStatistics
        if let low = stats.min, let high = stats.max, let mean = stats.mean {
            let percentiles = stats.percentiles.map { "\($0.percent) % \(DecimalText.fixed($0.meters, 3))" }.joined(separator: ", ")
            row("depth", "\(DecimalText.fixed(low, 3)) to \(DecimalText.fixed(high, 3)) m, mean \(DecimalText.fixed(mean, 3)); percentiles \(percentiles) m")
        } else {
            row("depth", "no valid pixel")
        }
        row("holes", "\(DecimalText.fixed(stats.holeFraction * 100, 2)) % (\(stats.holeCount) of \(stats.holeCount + stats.validCount) pixels)")
        if let sentinels = info.discardedSentinels { row("sentinels", "\(sentinels) discarded") }
        if info.warnings.isEmpty {
            row("warnings", "none")
        } else {
            for (i, warning) in info.warnings.enumerated() { row(i == 0 ? "warnings" : "", warning) }
        }

        let width = (rows.map(\.0.count).max() ?? 0) + 2
        var out = info.json + "\n"
        for (label, value) in rows {
            out += "  " + label + String(repeating: " ", count: width - label.count) + value + "\n"
        }
        return out
    }

    /// A Portrait photo's `ExtrinsicMatrix` (12 numbers, column by column: rotation, then
    /// translation) as rotation rows and translation, naming the identity and a quarter
    /// turn about the optical axis.
    static func extrinsic(_ m: [Double]) -> String {
        let rows = (0..<3).map { i in (0..<3).map { j in DecimalText.fixed(m[3 * j + i], 6) }.joined(separator: " ") }
        let rotation = "rotation [" + rows.joined(separator: "; ") + "]"
        let translation = "translation " + m[9...11].map { DecimalText.fixed($0, 6) }.joined(separator: " ")
        let trace = m[0] + m[4] + m[8], tolerance = 1e-6
        var kind = ""
        if abs(trace - 3) < tolerance {
            kind = " (identity)"
        } else if abs(trace - 1) < tolerance, abs(m[8] - 1) < tolerance {
            kind = " (90° about the optical axis)"
        }
        return rotation + kind + ", " + translation
    }

    /// A file size: `812 bytes`, `45.3 kB`, `2.35 MB`.
    static func bytes(_ count: Int) -> String {
        if count < 1000 { return "\(count) bytes" }
        if count < 1_000_000 { return "\(DecimalText.fixed(Double(count) / 1000, 1)) kB" }
        return "\(DecimalText.fixed(Double(count) / 1_000_000, 2)) MB"
    }
}
