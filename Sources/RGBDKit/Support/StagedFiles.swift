/// A set of output files written under temporary names beside their destinations and
/// renamed into place together by `commit()`.
///
/// A run that fails or is interrupted before `commit()` leaves no file under a final
/// name; the temporaries are removed when the set is released uncommitted.
public final class StagedFiles {
    private var staged: [(temporary: String, destination: String)] = []
    private var committed = false

    /// An empty set.
    public init() {}

    /// The destinations staged so far, in order.
    public var destinations: [String] { staged.map(\.destination) }

    /// Stages `bytes` as the future content of `destination`.
    public func stage(_ destination: String, bytes: [UInt8]) throws {
        try stage(destination) { fd, temporary in
            try bytes.withUnsafeBytes { try FileSystem.writeAll(fd, $0, path: temporary) }
            FileSystem.closeFile(fd)
        }
    }

    /// Stages a file whose content `write` produces on an open descriptor of the
    /// temporary file. `write` owns the descriptor and must close it.
    public func stage(_ destination: String, write: (_ fd: Int32, _ temporaryPath: String) throws -> Void) throws {
        let (temporary, fd) = try FileSystem.makeTemporary(beside: destination)
        staged.append((temporary, destination))
        do {
            try write(fd, temporary)
        } catch let error as RGBDError {
            throw error.file == temporary ? RGBDError(error.kind, file: destination, location: error.location, error.message) : error
        }
    }

    /// Renames every staged file to its destination.
    public func commit() throws {
        for (temporary, destination) in staged {
            try FileSystem.rename(temporary, to: destination)
        }
        committed = true
    }

    deinit {
        if !committed {
            for (temporary, _) in staged { FileSystem.removeQuietly(temporary) }
        }
    }
}
