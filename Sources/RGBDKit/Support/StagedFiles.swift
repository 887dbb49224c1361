/// A set of output files written under temporary names beside their destinations and
/// renamed into place together by `commit()`.
///
/// A run that fails or is interrupted before `commit()` leaves no file under a final
/// name; the temporaries are removed when the set is released uncommitted.
public final class StagedFiles {
    private var staged: [(temporary: String, destination: String)] = []
    private var committed = false

    /// Temporaries of every set in the process not yet committed or removed, for
    /// `removeAllPending` (an interrupted run's cleanup).
    nonisolated(unsafe) private static var pending: Set<String> = []
    /// Set by `removeAllPending`: the process is exiting, nothing more is staged.
    nonisolated(unsafe) private static var closed = false
    private static let pendingLock = Lock()

    /// Removes the temporaries of every uncommitted set (for a signal handler's cleanup
    /// before exiting; see `Interruption`).
    public static func removeAllPending() {
        pendingLock.withLock {
            for path in pending { FileSystem.removeQuietly(path) }
            pending.removeAll()
            closed = true
        }
    }

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
        // Created and registered under the lock: an interruption's cleanup either comes
        // first (and nothing is created) or finds the file registered.
        let created = try Self.pendingLock.withLock { () throws -> (String, Int32)? in
            if Self.closed { return nil }
            let (temporary, fd) = try FileSystem.makeTemporary(beside: destination)
            Self.pending.insert(temporary)
            return (temporary, fd)
        }
        guard let (temporary, fd) = created else {
            throw RGBDError(.io, file: destination, "not written: the run is being interrupted")
        }
        staged.append((temporary, destination))
        do {
            try write(fd, temporary)
        } catch let error as RGBDError {
            throw error.file == temporary ? RGBDError(error.kind, file: destination, location: error.location, error.message) : error
        }
    }

    /// Renames every staged file to its destination, all under the lock an
    /// interruption's cleanup takes: an interrupted run ends with all of them renamed or
    /// none.
    public func commit() throws {
        try Self.pendingLock.withLock {
            if Self.closed {
                throw RGBDError(.io, file: staged.first?.destination ?? "", "not written: the run is being interrupted")
            }
            for (temporary, destination) in staged {
                try FileSystem.rename(temporary, to: destination)
                Self.pending.remove(temporary)
            }
        }
        committed = true
    }

    deinit {
        if !committed {
            for (temporary, _) in staged { FileSystem.removeQuietly(temporary) }
        }
        Self.pendingLock.withLock {
            for (temporary, _) in staged { Self.pending.remove(temporary) }
        }
    }
}
