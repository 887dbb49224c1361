#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension CaptureTags {
    /// Reads and rectifies the capture `json` (its photo `image`, or the one beside it) and
    /// finds its tags (`rgbd info --tags`).
    package static func read(json: String, image: String? = nil, options: TagOptions) throws -> CaptureTags {
        find(in: try Capture.load(json: json, image: image).rectified(), options: options)
    }

    /// `rgbd info --tags`'s rows: one per tag (ID, centre, distance, tilt, residuals, depth
    /// agreement), those left out, the depth scale, warnings; indented two spaces like the
    /// capture's rows.
    package var text: String {
        func f(_ v: Double, _ d: Int) -> String { DecimalText.fixed(v, d) }
        func degrees(_ r: Double) -> String { f(r * 180 / .pi, 2) + "°" }
        var lines: [String] = []
        let size = options.size.map { "\(f($0 * 100, 1)) cm" } ?? "measured in the depth"
        lines.append("tags      \(options.family.rawValue), black square \(size): \(tags.count) found"
                     + (rejected.isEmpty ? "" : ", \(rejected.count) left out"))
        for tag in tags {
            let t = tag.pose.translation
            let distance = (t * t).sum().squareRoot()
            let normal = SIMD3(tag.pose.row0.z, tag.pose.row1.z, tag.pose.row2.z)
            let tilt = acos(min(1, max(-1, (normal * t).sum() / distance)))
            var row = "  id \(tag.detection.id)  at (\(f(tag.detection.center.x, 1)), \(f(tag.detection.center.y, 1))) px"
            row += "  \(f(distance, 3)) m, tilted \(degrees(tilt))"
            row += "  corners ±\(f(tag.cornerRMS, 2)) px, depth plane ±\(f(tag.depthRMS * 1000, 1)) mm"
            row += "  corners alone \(degrees(tag.cornerAngle)) off"
            if options.size != nil { row += "  depth/size ×\(f(tag.depthScale, 3))" } else { row += "  edge \(f(tag.size * 100, 2)) cm" }
            if tag.detection.duplicateID { row += "  (ID seen twice: not used to register)" }
            lines.append("         " + row)
        }
        for r in rejected { lines.append("           id \(r.id) left out: \(r.reason)") }
        if let s = scale {
            lines.append("depth scale  tags say depth × \(f(s.factor, 4)) is metric"
                         + (s.offset != 0 ? " (disparity offset \(f(s.offset, 5)) 1/m)" : "") + ", from \(s.tags) tag\(s.tags == 1 ? "" : "s")")
        }
        for w in warnings { lines.append("warning   \(w)") }
        return lines.map { "  " + $0 }.joined(separator: "\n") + "\n"
    }

    /// `rgbd info --tags --json`'s `tags` object (docs/info.md).
    package var jsonValue: JSONValue {
        typealias M = JSONValue.Member
        func matrix(_ p: Pose) -> JSONValue { .array(p.matrix.map { .number($0) }) }
        return .object([
            M("family", .string(options.family.rawValue)),
            M("size_m", .number(options.size)),
            M("found", .array(tags.map { tag in
                .object([
                    M("id", .int(tag.detection.id)),
                    M("corners", .array(tag.detection.corners.map { .point($0) })),
                    M("center", .point(tag.detection.center)),
                    M("decision_margin", .number(tag.detection.decisionMargin)),
                    M("duplicate_id", .bool(tag.detection.duplicateID)),
                    M("size_m", .number(tag.size)),
                    M("tag_to_camera", matrix(tag.pose)),
                    M("tag_to_camera_corners_only", matrix(tag.cornerPose)),
                    M("tag_to_camera_depth_only", matrix(tag.depthPose)),
                    M("corner_rms_px", .number(tag.cornerRMS)),
                    M("depth_rms_m", .number(tag.depthRMS)),
                    M("depth_samples", .int(tag.depthSamples)),
                    M("depth_scale", .number(tag.depthScale)),
                    M("corners_only_angle_deg", .number(tag.cornerAngle * 180 / .pi)),
                ])
            })),
            M("left_out", .array(rejected.map { .object([M("id", .int($0.id)), M("reason", .string($0.reason))]) })),
            M("depth_factor", .number(scale?.factor)),
            M("disparity_offset", .number(scale?.offset)),
            M("warnings", .array(warnings.map { .string($0) })),
        ])
    }
}
