/// Turns command-line inputs (capture JSON files and directories) into the list of
/// captures to process.
public enum CaptureDiscovery {
    /// One capture to process: its JSON and, if given explicitly, its image.
    public struct Item: Equatable, Sendable {
        /// The capture JSON.
        public var json: String
        /// The image, or nil to use the JPEG beside the JSON.
        public var image: String?
    }

    /// Expands the inputs: a file is taken as a capture JSON as given; a directory
    /// contributes every `*.json` in it (not recursively) that has a JPEG of the same
    /// stem beside it, in name order, so rgbd's own outputs (`*.intrinsics.json`) and
    /// other JSON files there are skipped.
    ///
    /// - Throws: `RGBDError(.io)` for an input that does not exist, or a directory with
    ///   no capture in it.
    public static func expand(_ inputs: [String]) throws -> [Item] {
        var items: [Item] = []
        for input in inputs {
            if FileSystem.isDirectory(input) {
                let names = try FileSystem.contentsOfDirectory(input)
                let stemsWithImage = Set(names.filter { ["jpg", "jpeg"].contains(Path.pathExtension($0)) }.map(Path.stem))
                let found = names.filter { Path.pathExtension($0) == "json" && stemsWithImage.contains(Path.stem($0)) }
                if found.isEmpty {
                    throw RGBDError(.io, file: input, "no capture in this directory (a NAME.json beside a NAME.jpg)")
                }
                items += found.map { Item(json: Path.join(input, $0), image: nil) }
            } else if FileSystem.exists(input) {
                items.append(Item(json: input, image: nil))
            } else {
                throw RGBDError(.io, file: input, "no such file or directory")
            }
        }
        return items
    }
}
