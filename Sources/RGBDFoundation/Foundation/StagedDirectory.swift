/// An output folder built under a temporary name beside its destination and moved into
/// place by `commit()`: a run that fails or is interrupted leaves no partial folder under
/// the destination's name (the temporary folder is removed).
///
/// What it never does: write into, replace or remove an input. The destination is taken
/// as the folder it names (`scan/..` is the folder holding `scan`, links resolved), and
/// one that is an input or holds one is refused before anything is created. A folder
/// that is not empty is replaced only when `replacing` is true **and** it holds nothing
/// but what an earlier `StagedDirectory` wrote there: each committed folder carries a
/// list of its entries (`manifestName`), and a folder with any other entry, or without
/// the list, is refused naming the entry. Replacing moves the old folder aside, renames
/// the new one in, then removes the old one.
package final class StagedDirectory {
    /// The file in each committed folder that lists everything written into it.
    package static let manifestName = ".rgbd-written"
    private static let manifestHeader = "# rgbd: everything rgbd wrote into this folder; it may replace the folder only while it holds nothing else"

    /// Where the folder goes: the absolute path the destination given names.
    package let destination: String
    /// The destination as given (without trailing slashes), for messages.
    package let given: String
    /// Where it is built.
    package let temporary: String
    private let replacing: Bool
    private var committed = false
    private var createdParents: [String] = []

    /// Checks `destination` and creates the temporary folder beside it (and the
    /// destination's missing parents).
    ///
    /// - Parameter inputs: the files and folders the run reads; the destination may not
    ///   be one of them or hold one.
    /// - Throws: `RGBDError(.io)` when `destination` is a file (or a link), is or holds
    ///   one of `inputs`, is a folder that is not empty and `replacing` is false
    ///   (`argument` `.overwrite`), or holds something no earlier run wrote, or when the
    ///   folder cannot be created.
    package init(destination: String, replacing: Bool, inputs: [String] = []) throws {
        var given = destination
        while given.count > 1 && given.hasSuffix("/") { given.removeLast() }
        if FileSystem.existsAsNonDirectory(given) {
            throw RGBDError(.io, file: given, "exists and is not a folder: give a folder to write into")
        }
        let path = FileSystem.resolvedPath(given)
        self.destination = path
        self.given = given
        self.replacing = replacing
        for input in inputs {
            let resolved = FileSystem.resolvedPath(input)
            if Path.isSameOrInside(resolved, path) {
                throw RGBDError(.io, file: given, resolved == path
                                ? "is the input \(input): outputs never replace an input; give another folder, nothing was written"
                                : "holds the input \(input): outputs never replace a folder that holds an input; give another folder, nothing was written")
            }
        }
        if FileSystem.isDirectory(path) {
            try Self.checkReplaceable(path, shownAs: given, replacing: replacing)
        } else {
            let parent = Path.directory(of: path)
            createdParents = try FileSystem.createDirectory(parent)
        }
        temporary = try FileSystem.makeTemporaryDirectory(beside: path)
        guard StagedFiles.registerPending(temporary) else {
            FileSystem.removeTreeQuietly(temporary)
            throw RGBDError(.io, file: given, "not written: the run is being interrupted")
        }
    }

    /// Refuses an existing folder `path` that is not empty, unless `replacing` and it
    /// holds only what its manifest lists.
    private static func checkReplaceable(_ path: String, shownAs shown: String, replacing: Bool) throws {
        let entries = try FileSystem.contentsOfDirectory(path)
        guard !entries.isEmpty else { return }
        guard replacing else {
            throw RGBDError(.io, file: shown, "the folder is not empty (\(entries.count) entries); nothing was written",
                            argument: .overwrite)
        }
        let manifest = Path.join(path, manifestName)
        guard FileSystem.existsAsNonDirectory(manifest), let bytes = try? FileSystem.readFile(manifest, limit: 64 << 20) else {
            throw RGBDError(.io, file: shown, "holds \(RGBDError.shown(entries[0])) and was not written by rgbd (it has no \(manifestName) list), so it is not replaced; give another folder or empty it, nothing was written")
        }
        let listed = Set(String(decoding: bytes, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init))
        for entry in try FileSystem.treeEntries(path) where entry != manifestName && !listed.contains(entry) {
            throw RGBDError(.io, file: shown, "holds \(RGBDError.shown(entry)), which rgbd did not write there, so the folder is not replaced; move it out or give another folder, nothing was written")
        }
    }

    /// The path of `relative` inside the temporary folder.
    package func path(_ relative: String) -> String { Path.join(temporary, relative) }

    /// Creates the folder `relative` (and its parents) inside the temporary folder.
    package func createDirectory(_ relative: String) throws { try FileSystem.createDirectory(path(relative)) }

    /// Writes the file `relative` inside the temporary folder.
    package func write(_ relative: String, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try FileSystem.writeNewFile(path(relative), $0) }
    }

    /// Writes the text file `relative` (UTF-8).
    package func write(_ relative: String, text: String) throws { try write(relative, Array(text.utf8)) }

    /// Lists what the folder holds (`manifestName`) and moves it to the destination.
    package func commit() throws {
        let entries = try FileSystem.treeEntries(temporary).filter { $0 != Self.manifestName }
        try write(Self.manifestName, text: ([Self.manifestHeader] + entries).joined(separator: "\n") + "\n")
        var displaced: String? = nil
        try StagedFiles.commitPending(temporary, before: {
            if FileSystem.isDirectory(destination) {
                if try FileSystem.contentsOfDirectory(destination).isEmpty {
                    FileSystem.removeDirectoryQuietly(destination)
                } else {
                    // Checked again: the folder may have changed since the run began.
                    try Self.checkReplaceable(destination, shownAs: given, replacing: replacing)
                    // An empty folder to move the old one onto (rename replaces an empty folder).
                    let aside = try FileSystem.makeTemporaryDirectory(beside: destination)
                    try FileSystem.renameDirectory(destination, to: aside)
                    displaced = aside
                }
            }
        }, rename: { try FileSystem.renameDirectory(temporary, to: destination) })
        committed = true
        if let displaced { FileSystem.removeTreeQuietly(displaced) }
    }

    deinit {
        if !committed {
            FileSystem.removeTreeQuietly(temporary)
            StagedFiles.forgetPending(temporary)
            for directory in createdParents.reversed() { FileSystem.removeDirectoryQuietly(directory) }
        }
    }
}
