/// Turns command-line inputs (capture JSON files and directories) into the list of
/// captures to process.
package enum CaptureDiscovery {
    /// One capture to process: its JSON and, if given explicitly, its image.
    package struct Item: Equatable, Sendable {
        /// The capture JSON, or a Portrait photo (a capture by itself).
        package var json: String
        /// The image, or nil to use the JPEG beside the JSON.
        package var image: String?
        /// The folder of the capture relative to the directory input it was found in by
        /// a recursive expansion (`"b/c"` for `IN/b/c/shot.json`), `""` otherwise: its
        /// outputs go into that subfolder of the output directory.
        package var subdirectory: String

        /// An item from its JSON path and, optionally, its image and subfolder.
        package init(json: String, image: String? = nil, subdirectory: String = "") {
            self.json = json
            self.image = image
            self.subdirectory = subdirectory
        }

        /// The directory this capture's outputs go into, for outputs under `output`:
        /// `output`, or its `subdirectory` there.
        package func outputDirectory(under output: String) -> String {
            subdirectory.isEmpty ? output : Path.join(output, subdirectory)
        }
    }

    /// What one input expands to.
    package struct Expansion: Sendable {
        /// The captures found.
        package var items: [Item] = []
        /// JSON files of a directory that look like capture JSON (`looksLikeCaptureJSON`)
        /// but were not taken as captures, each with the reason (no image beside it).
        /// Other JSON files (ground truth, notes, rgbd's own `*.intrinsics.json`) are
        /// not listed: they are not captures.
        package var skipped: [RGBDError] = []
    }

    /// Expands one input: a file is taken as a capture JSON as given; a directory
    /// contributes every `*.json` in it that has a photo (JPEG or HEIC) of the same stem
    /// beside it, in name order, and every photo (`.jpg`, `.jpeg`, `.heic`, `.heif`) that
    /// has no JSON of its stem beside it, as a Portrait photo (one without a depth image
    /// then fails with its own error). A JSON without a photo is listed in `skipped` if
    /// it looks like a capture JSON (`looksLikeCaptureJSON`), and ignored silently
    /// otherwise. With `recursive`, the subdirectories (not hidden ones, each directory
    /// once however it is reached) contribute theirs too, after the directory's own
    /// captures, in name order, each item with its `subdirectory`.
    ///
    /// - Throws: `RGBDError(.io)` for an input that does not exist, or a directory with
    ///   no capture in it (or, with `recursive`, below it).
    package static func expand(_ input: String, recursive: Bool = false) throws -> Expansion {
        guard FileSystem.isDirectory(input) else {
            guard FileSystem.exists(input) else { throw RGBDError(.io, file: input, "no such file or directory") }
            return Expansion(items: [Item(json: input)])
        }
        var expansion = Expansion()
        var visited: Set<String> = []
        let unmatched = try collect(input, relative: "", recursive: recursive, into: &expansion, visited: &visited)
        if expansion.items.isEmpty {
            let also = unmatched == 0 ? "" : " (\(unmatched) JSON file(s) without an image)"
            let place = recursive ? "in this directory or below it" : "in this directory"
            throw RGBDError(.io, file: input, "no capture \(place): a capture is a NAME.json beside a NAME.jpg or NAME.heic, or a Portrait photo\(also)")
        }
        return expansion
    }

    /// Whether `directory`'s subdirectories (at any depth) hold a capture: what a
    /// recursive expansion would find when the directory itself holds none.
    package static func subdirectoriesHoldCaptures(_ directory: String) -> Bool {
        guard FileSystem.isDirectory(directory) else { return false }
        return (try? expand(directory, recursive: true)).map { !$0.items.isEmpty } ?? false
    }

    /// Adds the captures of `directory` (and, with `recursive`, of its subdirectories)
    /// to `expansion`; returns how many JSON files of `directory` itself have no photo.
    private static func collect(_ directory: String, relative: String, recursive: Bool,
                                into expansion: inout Expansion, visited: inout Set<String>) throws -> Int {
        guard visited.insert(FileSystem.canonicalPath(directory) ?? directory).inserted else { return 0 }
        let names = try FileSystem.contentsOfDirectory(directory)
        let photos = names.filter(FileFormat.isNamedLikePhoto)
        let stemsWithImage = Set(photos.map(Path.stem))
        let stemsWithJSON = Set(names.filter { Path.pathExtension($0) == "json" }.map(Path.stem))
        let portraits = Set(photos.filter { !stemsWithJSON.contains(Path.stem($0)) })
        var unmatched = 0
        for name in names where portraits.contains(name)
            || (Path.pathExtension(name) == "json" && !name.hasSuffix(".intrinsics.json")) {
            let stem = Path.stem(name)
            let path = Path.join(directory, name)
            if portraits.contains(name) || stemsWithImage.contains(stem) {
                expansion.items.append(Item(json: path, subdirectory: relative))
            } else {
                unmatched += 1
                if looksLikeCaptureJSON(path) {
                    expansion.skipped.append(RGBDError(.io, file: path,
                                                       "skipped: no image beside it (\(stem).jpg, .jpeg, .heic or .heif)"))
                }
            }
        }
        if recursive {
            for name in names where !name.hasPrefix(".") {
                let path = Path.join(directory, name)
                guard FileSystem.isDirectory(path) else { continue }
                // A subdirectory that cannot be listed is skipped, not the whole input.
                _ = try? collect(path, relative: relative.isEmpty ? name : Path.join(relative, name),
                                 recursive: true, into: &expansion, visited: &visited)
            }
        }
        return unmatched
    }

    /// Whether the JSON file at `path` looks like a capture JSON: its top level is an
    /// object holding a key a known exporter layout (`CaptureSchema.all`) puts the
    /// calibration or the depth under (`calibration_data`, `intrinsic_matrix`,
    /// `depth_data`, `depth_file`, their camelCase and PascalCase forms, ...). A file
    /// that cannot be read or is not a JSON object does not.
    package static func looksLikeCaptureJSON(_ path: String) -> Bool {
        guard let bytes = try? FileSystem.readFile(path) else { return false }
        var found = false
        _ = bytes.withUnsafeBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            let scanner = JSONTopLevelScanner(base: base, end: buffer.count)
            return (try? scanner.walk { member in
                if CaptureSchema.captureKeys.contains(member.key) { found = true }
                return nil
            }) ?? false
        }
        return found
    }
}
