/// The `<stem>.intrinsics.json` sidecar: rectified pinhole intrinsics in the layout
/// Open3D's `read_pinhole_camera_intrinsic` loads.
///
/// The top level holds the depth map's intrinsics (`width`, `height`,
/// `intrinsic_matrix` as 9 numbers column-major), so Open3D reads the camera of the
/// depth PNG directly; `color` and `depth` hold both in the same layout (and `matte`,
/// a Portrait photo's matte file's, when one is written). For a
/// pixel-aligned pair (`rgbd rectify --align-to`) the two are equal, and the note says
/// so.
package enum IntrinsicsFile {
    /// The file's text.
    /// `depthQuality` (a Portrait photo's `Quality`, `high` or `low`: the whole map's, Apple
    /// gives no per-pixel confidence) is written as `depth_quality`.
    /// `depthAccuracy` (a Portrait photo's `Accuracy`) is written as `depth_accuracy`, with
    /// a note when it is `relative` (the depth's scale is not guaranteed).
    /// `matte` (the intrinsics of `NAME.matte.png`, when one is written) is written under
    /// `matte` in the same layout.
    /// `frames` (the level and ENU frames the photo's EXIF allows, docs/geo.md) are written
    /// under `frames`, keyed by kind: each the transform from the camera frame with its
    /// geodetic origin and basis.
    package static func json(color: Intrinsics, depth: Intrinsics, matte: Intrinsics? = nil, source: String,
                             depthAccuracy: String? = nil, depthQuality: String? = nil,
                             frames: [WorldFrame] = []) -> String {
        let pairing = color == depth
            ? "color and depth are pixel-aligned: same size, same intrinsics (Open3D create_from_color_and_depth)"
            : "color and depth have different sizes: each file's intrinsics are under its key"
        typealias M = JSONValue.Member
        func camera(_ k: Intrinsics) -> [M] {
            [M("width", .int(k.width)), M("height", .int(k.height)),
             M("intrinsic_matrix", .array(k.columnMajor.map { .number($0) }))]
        }
        var members = camera(depth) + [
            M("depth_scale", .number(1000)),
            M("depth", .object(camera(depth))),
            M("color", .object(camera(color))),
        ] + (matte.map { [M("matte", .object(camera($0)))] } ?? []) + [
            M("note", .string("rectified pinhole intrinsics; top level = depth map (Open3D read_pinhole_camera_intrinsic); \(pairing); intrinsic_matrix is column-major [fx, 0, 0, 0, fy, 0, cx, cy, 1]; depth PNG is millimeters (depth_scale 1000), depth TIFF is meters")),
            M("source", .string(source)),
        ]
        if let depthAccuracy {
            members.append(M("depth_accuracy", .string(depthAccuracy)))
            if depthAccuracy.lowercased() == "relative" {
                members.append(M("depth_accuracy_note", .string(PortraitDepth.relativeNote)))
            }
        }
        if let depthQuality { members.append(M("depth_quality", .string(depthQuality))) }
        if !frames.isEmpty {
            members.append(M("frames", .object(frames.map { M($0.kind.rawValue, $0.json) })))
        }
        return JSONValue.object(members).text() + "\n"
    }
}
