/// An output folder built under a temporary name beside its destination and moved into
/// place by `commit()`: a run that fails or is interrupted leaves no partial folder under
/// the destination's name (the temporary folder is removed).
///
/// The destination must not be a file; a folder that is not empty is replaced only when
/// `replacing` is true (the old folder is moved aside, the new one renamed in, then the
/// old one removed).
package final class StagedDirectory {
    /// Where the folder goes.
    package let destination: String
    /// Where it is built.
    package let temporary: String
    private let replacing: Bool
    private var committed = false
    private var createdParents: [String] = []

    /// Checks `destination` and creates the temporary folder beside it (and the
    /// destination's missing parents).
    ///
    /// - Throws: `RGBDError(.io)` when `destination` is a file (or a link), or a folder
    ///   that is not empty and `replacing` is false (`argument` `.overwrite`), or when
    ///   the folder cannot be created.
    package init(destination: String, replacing: Bool) throws {
        var path = destination
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        self.destination = path
        self.replacing = replacing
        if FileSystem.existsAsNonDirectory(path) {
            throw RGBDError(.io, file: path, "exists and is not a folder: give a folder to write into")
        }
        if FileSystem.isDirectory(path) {
            let entries = try FileSystem.contentsOfDirectory(path)
            if !entries.isEmpty && !replacing {
                throw RGBDError(.io, file: path, "the folder is not empty (\(entries.count) entries); nothing was written",
                                argument: .overwrite)
            }
        } else {
            let parent = Path.directory(of: path)
            createdParents = try FileSystem.createDirectory(parent)
        }
        temporary = try FileSystem.makeTemporaryDirectory(beside: path)
        guard StagedFiles.registerPending(temporary) else {
            FileSystem.removeTreeQuietly(temporary)
            throw RGBDError(.io, file: path, "not written: the run is being interrupted")
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

    /// Moves the finished folder to the destination.
    package func commit() throws {
        var displaced: String? = nil
        try StagedFiles.commitPending(temporary, before: {
            if FileSystem.isDirectory(destination) {
                if try FileSystem.contentsOfDirectory(destination).isEmpty {
                    FileSystem.removeDirectoryQuietly(destination)
                } else {
                    guard replacing else {
                        throw RGBDError(.io, file: destination, "the folder is not empty; nothing was written", argument: .overwrite)
                    }
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
