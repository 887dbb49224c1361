extension CaptureInfo {
    /// The human-readable block of `rgbd info` for this capture: its JSON's path, then
    /// one labelled row per line, indented by two spaces.
    package var text: String {
        let info = self
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
        row("photo", "\(info.photo.path): \(info.photo.format.rawValue), \(size(info.color.width, info.color.height)), \(Self.bytes(info.photo.fileBytes))")
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
            if let m = portrait.extrinsicMatrix { row("extrinsic", Self.extrinsic(m)) }
        } else {
            row("json", info.json + (info.jsonBytes.map { ": " + Self.bytes($0) } ?? ""))
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
        for (label, value) in info.geoRows { row(label, value) }
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
        // Only when there are some: what rectify, cloud and preview refuse the capture for.
        for (i, error) in info.errors.enumerated() {
            row(i == 0 ? "errors" : "", "\(error) (rectify, cloud and preview refuse it)")
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
