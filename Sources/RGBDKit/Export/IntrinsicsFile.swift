/// The `<stem>.intrinsics.json` sidecar: rectified pinhole intrinsics in the layout
/// Open3D's `read_pinhole_camera_intrinsic` loads.
///
/// The top level holds the depth map's intrinsics (`width`, `height`,
/// `intrinsic_matrix` as 9 numbers column-major), so Open3D reads the camera of the
/// depth PNG directly; `color` and `depth` hold both in the same layout. For a
/// pixel-aligned pair (`rgbd rectify --align-to`) the two are equal, and the note says
/// so.
public enum IntrinsicsFile {
    /// The file's text.
    /// `depthAccuracy` (a Portrait photo's `Accuracy`) is written as `depth_accuracy`, with
    /// a note when it is `relative` (the depth's scale is not guaranteed).
    public static func json(color: Intrinsics, depth: Intrinsics, source: String, depthAccuracy: String? = nil) -> String {
        let pairing = color == depth
            ? "color and depth are pixel-aligned: same size, same intrinsics (Open3D create_from_color_and_depth)"
            : "color and depth have different sizes: each file's intrinsics are under its key"
        var accuracy = ""
        if let depthAccuracy {
            accuracy = ",\n  \"depth_accuracy\": \(JSONText.string(depthAccuracy))"
            if depthAccuracy.lowercased() == "relative" {
                accuracy += ",\n  \"depth_accuracy_note\": \(JSONText.string(PortraitDepth.relativeNote))"
            }
        }
        func camera(_ k: Intrinsics, indent: String) -> String {
            let matrix = k.columnMajor.map(JSONText.number).joined(separator: ", ")
            return """
            \(indent)"width": \(k.width),
            \(indent)"height": \(k.height),
            \(indent)"intrinsic_matrix": [\(matrix)]
            """
        }
        return """
        {
        \(camera(depth, indent: "  ")),
          "depth_scale": 1000.0,
          "depth": {
        \(camera(depth, indent: "    "))
          },
          "color": {
        \(camera(color, indent: "    "))
          },
          "note": "rectified pinhole intrinsics; top level = depth map (Open3D read_pinhole_camera_intrinsic); \(pairing); intrinsic_matrix is column-major [fx, 0, 0, 0, fy, 0, cx, cy, 1]; depth PNG is millimeters (depth_scale 1000), depth TIFF is meters",
          "source": \(JSONText.string(source))\(accuracy)
        }

        """
    }
}

/// Minimal JSON text formatting for the files rgbd writes.
enum JSONText {
    /// A finite number in the shortest form that reads back exactly (`2742.0`, `1e-05`).
    static func number(_ v: Double) -> String {
        v.isFinite ? "\(v)" : "null"
    }

    /// A quoted, escaped JSON string.
    static func string(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
