/// Turns command-line inputs (capture JSON files and directories) into the list of
/// captures to process.
public enum CaptureDiscovery {
    /// One capture to process: its JSON and, if given explicitly, its image.
    public struct Item: Equatable, Sendable {
        /// The capture JSON, or a Portrait photo (a capture by itself).
        public var json: String
        /// The image, or nil to use the JPEG beside the JSON.
        public var image: String?

        /// An item from its JSON path and, optionally, its image.
        public init(json: String, image: String? = nil) {
            self.json = json
            self.image = image
        }
    }

    /// What one input expands to.
    public struct Expansion: Sendable {
        /// The captures found.
        public var items: [Item] = []
        /// JSON files of a directory that were not taken as captures, each with the
        /// reason (no image beside it). rgbd's own outputs (`*.intrinsics.json`) are
        /// not listed.
        public var skipped: [RGBDError] = []
    }

    /// Expands one input: a file is taken as a capture JSON as given; a directory
    /// contributes every `*.json` in it (not recursively) that has a photo (JPEG or
    /// HEIC) of the same stem beside it, in name order, and every photo (`.jpg`, `.jpeg`,
    /// `.heic`, `.heif`) that has no JSON of its stem beside it, as a Portrait photo (one
    /// without a depth image then fails with its own error). Its other JSON files are
    /// listed in `skipped`, except rgbd's own intrinsics sidecars.
    ///
    /// - Throws: `RGBDError(.io)` for an input that does not exist, or a directory with
    ///   no capture in it.
    public static func expand(_ input: String) throws -> Expansion {
        guard FileSystem.isDirectory(input) else {
            guard FileSystem.exists(input) else { throw RGBDError(.io, file: input, "no such file or directory") }
            return Expansion(items: [Item(json: input)])
        }
        let names = try FileSystem.contentsOfDirectory(input)
        let photos = names.filter(FileFormat.isNamedLikePhoto)
        let stemsWithImage = Set(photos.map(Path.stem))
        let stemsWithJSON = Set(names.filter { Path.pathExtension($0) == "json" }.map(Path.stem))
        var expansion = Expansion()
        let portraits = Set(photos.filter { !stemsWithJSON.contains(Path.stem($0)) })
        for name in names where portraits.contains(name)
            || (Path.pathExtension(name) == "json" && !name.hasSuffix(".intrinsics.json")) {
            let stem = Path.stem(name)
            if portraits.contains(name) || stemsWithImage.contains(stem) {
                expansion.items.append(Item(json: Path.join(input, name)))
            } else {
                expansion.skipped.append(RGBDError(.io, file: Path.join(input, name),
                                                   "skipped: no image beside it (\(stem).jpg, .jpeg, .heic or .heif)"))
            }
        }
        if expansion.items.isEmpty {
            let also = expansion.skipped.isEmpty ? "" : " (\(expansion.skipped.count) JSON file(s) without an image)"
            throw RGBDError(.io, file: input, "no capture in this directory: a capture is a NAME.json beside a NAME.jpg or NAME.heic, or a Portrait photo\(also)")
        }
        return expansion
    }
}
