/// Where the results of a command over several scans go, decided before anything is
/// written (as `BatchPlan` decides it for captures): one file per scan, named after the
/// scan, in an output folder; or one named file for a single scan.
///
/// Refused as a whole, before any scan is read: an output path ending in an extension the
/// command does not write (it is neither its file nor a folder), a single output file for
/// several scans, two scans whose results would land on the same file (`day1/room` and
/// `day2/room` both give `room.ply`), and a result that would replace one of the scans.
package struct SceneOutputPlan: Sendable {
    /// One scan and the file its result goes to.
    package struct Target: Sendable {
        /// The scan, as given.
        package var scene: String
        /// The output file.
        package var path: String
    }

    /// The scans in the order given, each with its output file.
    package let targets: [Target]

    /// The plan for `scenes` written to `output`: a path ending in `.EXT` for one of
    /// `fileExtensions` (a single scan; case ignored), else a folder receiving
    /// `NAME.suffix` per scan, NAME the scan's name without its extension.
    ///
    /// - Throws: `RGBDError(.invalidArgument)` naming the output, or both scans, for the
    ///   refusals above.
    package init(scenes: [String], output: String, suffix: String, fileExtensions: [String]) throws {
        let single = try Self.isSingleFile(output, fileExtensions: fileExtensions)
        if single && scenes.count > 1 {
            throw RGBDError(.invalidArgument, file: output,
                            "a single output file takes one scan, \(scenes.count) were given: give a folder (nothing was written)")
        }
        var targets: [Target] = []
        var writers: [String: String] = [:]
        let inputs = scenes.map { FileSystem.resolvedPath($0) }
        for scene in scenes {
            let path = single ? output : Path.join(output, Self.name(of: scene) + "." + suffix)
            let key = BatchPlan.fileKey(FileSystem.resolvedPath(path))
            if let other = writers[key] {
                throw RGBDError(.invalidArgument,
                                "\(other) and \(scene) would both write \(path): give scans different names or write them in separate runs (nothing was written)")
            }
            if let input = inputs.firstIndex(where: { BatchPlan.fileKey($0) == key }) {
                throw RGBDError(.invalidArgument, file: scene,
                                "its output \(path) would replace the input \(scenes[input]) (nothing was written)")
            }
            writers[key] = scene
            targets.append(Target(scene: scene, path: path))
        }
        self.targets = targets
    }

    /// A scan's name: its last path component without a trailing slash or an extension
    /// (`a/room/` → `room`, `b/room.r3d` → `room`).
    package static func name(of scene: String) -> String {
        var path = scene
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        let stem = Path.stem(Path.lastComponent(path))
        return stem.isEmpty || stem == "." || stem == ".." ? Path.lastComponent(FileSystem.resolvedPath(path)) : stem
    }

    /// Whether `output` names one output file (it ends in `.EXT` for one of
    /// `fileExtensions`, case ignored) rather than a folder.
    ///
    /// - Throws: `RGBDError(.invalidArgument)` naming `output` when it ends in the
    ///   extension of a file format this output is not (`m.obj` where only `.ply` is
    ///   written) and is no existing folder: such a path is never made a folder.
    package static func isSingleFile(_ output: String, fileExtensions: [String]) throws -> Bool {
        let ext = Path.pathExtension(output)
        if !ext.isEmpty && fileExtensions.contains(ext) && !output.hasSuffix("/") { return true }
        if fileFormatExtensions.contains(ext) && !output.hasSuffix("/") && !FileSystem.isDirectory(output) {
            let written = fileExtensions.map { "." + $0 }.joined(separator: " or ")
            throw RGBDError(.invalidArgument, file: output, written.isEmpty
                            ? "a .\(ext) file is not an output this writes: give a folder (nothing was written)"
                            : "a .\(ext) file is not an output this writes: give a \(written) path or a folder (nothing was written)")
        }
        return false
    }

    /// Extensions of file formats (3-D, image, data): an output path ending in one names a
    /// file, never a folder to create.
    static let fileFormatExtensions: Set<String> = [
        "ply", "las", "laz", "obj", "mtl", "glb", "gltf", "stl", "off", "fbx", "usd", "usdz", "usda", "dae", "3mf", "xyz",
        "pcd", "pts", "e57", "png", "jpg", "jpeg", "heic", "heif", "tif", "tiff", "exr", "webp", "bmp", "gif", "json",
        "csv", "txt", "npy", "npz", "mp4", "mov", "zip", "r3d", "html", "pdf",
    ]
}
