/// What a batch of captures will be, decided before anything is written: every input
/// expanded (`CaptureDiscovery.expand`; an input that cannot be is a failed input), a
/// capture given twice kept once, and the outputs checked for collisions (`conflicts`).
package struct BatchPlan {
    /// One input as given, and what it expanded to or why it could not be.
    package struct Input {
        /// The input (a capture JSON, a photo or a directory).
        package var input: String
        /// The captures it holds, or the error that kept it from being expanded.
        package var expansion: Result<CaptureDiscovery.Expansion, any Error>
    }

    /// Every input in the order given, a repeated one as often as given (each is
    /// expanded once).
    package let inputs: [Input]
    /// The captures to process: every input's, in input order, any capture named twice
    /// (the same JSON file, however spelled) once, where it was first seen. The image of
    /// a single capture may be set here before `conflicts` is asked.
    package var items: [CaptureDiscovery.Item]
    /// The captures left out of `items` because they had been named before.
    package let repeats: [CaptureDiscovery.Item]

    /// The plan of `inputs`; with `recursive`, directories are expanded with their
    /// subdirectories (`CaptureDiscovery.expand`).
    package init(inputs: [String], recursive: Bool = false) {
        var expansions: [String: Result<CaptureDiscovery.Expansion, any Error>] = [:]
        self.inputs = inputs.map { input in
            if let known = expansions[input] { return Input(input: input, expansion: known) }
            let expansion = Result { try CaptureDiscovery.expand(input, recursive: recursive) }
            expansions[input] = expansion
            return Input(input: input, expansion: expansion)
        }
        var seen: Set<String> = []
        var kept: [CaptureDiscovery.Item] = []
        var repeats: [CaptureDiscovery.Item] = []
        for case .success(let expansion) in self.inputs.map(\.expansion) {
            for item in expansion.items {
                if seen.insert(FileSystem.canonicalPath(item.json) ?? item.json).inserted {
                    kept.append(item)
                } else {
                    repeats.append(item)
                }
            }
        }
        self.items = kept
        self.repeats = repeats
    }

    /// How many capture-like JSON files the inputs' directories hold without an image
    /// (skipped), per input as given.
    package var skippedCount: Int {
        inputs.reduce(0) { count, input in
            guard case .success(let expansion) = input.expansion else { return count }
            return count + expansion.skipped.count
        }
    }

    /// The warning for each of `repeats`.
    package var repeatWarnings: [String] {
        repeats.map { "\($0.json): given more than once; processed once" }
    }

    /// Every pair of captures whose outputs would land on the same file, and every
    /// output that would replace an input, as messages naming both; `outputs` gives the
    /// files a capture's operation writes. A batch with any is refused as a whole
    /// (`refusal`).
    package func conflicts(outputs: (CaptureDiscovery.Item) -> [String]) -> [String] {
        var inputs: [String: String] = [:]
        for item in items {
            // The depth image the JSON reads (one it names, or the one beside it when it
            // holds no depth map) is an input, named like rectify's depth output: never
            // written over. One beside a JSON that holds its depth map is not read (it
            // may be this capture's own output of an earlier run): re-running writes it.
            let depthImage = Capture.depthImageRead(byJSON: item.json).map { [$0] } ?? []
            for path in [item.json] + (item.image.map { [$0] } ?? []) + depthImage {
                if let key = FileSystem.canonicalPath(path) { inputs[Self.fileKey(key)] = path }
            }
        }
        var writers: [String: String] = [:]
        var messages: [String] = []
        var reported: Set<[String]> = []
        for item in items {
            for output in outputs(item) {
                let key = Self.fileKey(FileSystem.canonicalPath(output) ?? output)
                if let input = inputs[key] {
                    messages.append("\(item.json): its output \(output) would overwrite the input \(input)")
                } else if let other = writers[key] {
                    if reported.insert([other, item.json]).inserted {
                        messages.append("\(other) and \(item.json) would both write \(output)")
                    }
                } else {
                    writers[key] = item.json
                }
            }
        }
        return messages
    }

    /// Checks, once for the whole batch and before anything is written, that the
    /// outputs can go into `directory`: it is a directory the process may write in, or
    /// it does not exist and can be created (the missing directories are created to
    /// find out and removed again, so nothing is left behind).
    ///
    /// - Throws: `RGBDError(.io)` naming `directory`: an existing file that is not a
    ///   directory, a directory that cannot be created (with the system's reason), or
    ///   one that cannot be written in.
    package static func checkOutputDirectory(_ directory: String) throws {
        if FileSystem.exists(directory) && !FileSystem.isDirectory(directory) {
            throw RGBDError(.io, file: directory, "not a directory: the outputs go into a directory, nothing was written")
        }
        let created = try FileSystem.createDirectory(directory)
        defer { for made in created.reversed() { FileSystem.removeDirectoryQuietly(made) } }
        if !FileSystem.isWritableDirectory(directory) {
            throw RGBDError(.io, file: directory, "cannot write in this directory: permission denied, nothing was written")
        }
    }

    /// Why a batch with `conflicts` is refused.
    package static let refusal = "batch refused, nothing was written: outputs of one run never overwrite each other or an input; process those captures in separate runs or into separate output directories"

    /// A path as the file system compares names: case-insensitively on macOS (APFS and
    /// HFS+ as formatted by default), exactly elsewhere.
    static func fileKey(_ path: String) -> String {
        #if os(macOS) || os(iOS)
        return path.lowercased()
        #else
        return path
        #endif
    }
}
