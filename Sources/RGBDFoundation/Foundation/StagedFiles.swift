/// A set of output files written under temporary names beside their destinations and
/// renamed into place together by `commit()`.
///
/// A run that fails or is interrupted before `commit()` leaves no file under a final
/// name; the temporaries are removed when the set is released uncommitted.
package final class StagedFiles {
    private var staged: [(temporary: String, destination: String)] = []
    private var committed = false
    private var createdDirectories: [String] = []

    /// Temporaries of every set in the process not yet committed or removed, for an
    /// interrupted run's cleanup (`claimInterruption`).
    nonisolated(unsafe) private static var pending: Set<String> = []
    /// How the process is ending: set once, by the first of an interruption and the
    /// command's own end. Nothing more is staged or committed after it is set.
    nonisolated(unsafe) private static var ending: Ending = .running
    private static let pendingLock = Lock()

    /// The process's way out, decided once (see `Interruption`).
    enum Ending { case running, interrupted, finishing }

    /// Claims the end of the process for an interruption and removes the temporaries of
    /// every uncommitted set. Returns false, removing nothing, if the command has already
    /// claimed its own end (its outputs are all committed).
    package static func claimInterruption() -> Bool {
        pendingLock.withLock {
            guard ending == .running else { return false }
            for path in pending { FileSystem.removeTreeQuietly(path) }
            pending.removeAll()
            ending = .interrupted
            return true
        }
    }

    /// Claims the end of the process for the command itself. Returns false if an
    /// interruption claimed it first.
    package static func claimFinish() -> Bool {
        pendingLock.withLock {
            guard ending != .interrupted else { return false }
            ending = .finishing
            return true
        }
    }

    /// Registers a temporary folder (`StagedDirectory`) to be removed, with everything in
    /// it, if the run is interrupted; false when an interruption is already under way.
    static func registerPending(_ path: String) -> Bool {
        pendingLock.withLock {
            guard ending == .running else { return false }
            pending.insert(path)
            return true
        }
    }

    /// Renames a registered temporary folder to `destination` under the lock an
    /// interruption's cleanup takes (so it is either renamed or removed, never half),
    /// running `before` first under the same lock; then forgets it.
    static func commitPending(_ path: String, before: () throws -> Void, rename: () throws -> Void) throws {
        try pendingLock.withLock {
            if ending != .running { throw RGBDError(.io, file: path, "not written: the run is being interrupted") }
            try before()
            try rename()
            pending.remove(path)
        }
    }

    /// Forgets a registered temporary folder (removed by its owner).
    static func forgetPending(_ path: String) { pendingLock.withLock { _ = pending.remove(path) } }

    /// Whether an interruption has claimed the end of the process.
    package static var isInterrupted: Bool { pendingLock.withLock { ending == .interrupted } }

    /// An empty set.
    package init() {}

    /// The destinations staged so far, in order.
    package var destinations: [String] { staged.map(\.destination) }

    /// Stages `bytes` as the future content of `destination`.
    package func stage(_ destination: String, bytes: [UInt8]) throws {
        try stage(destination) { fd, temporary in
            try bytes.withUnsafeBytes { try FileSystem.writeAll(fd, $0, path: temporary) }
            FileSystem.closeFile(fd)
        }
    }

    /// Stages a file whose content `write` produces on an open descriptor of the
    /// temporary file. `write` owns the descriptor and must close it.
    package func stage(_ destination: String, write: (_ fd: Int32, _ temporaryPath: String) throws -> Void) throws {
        // Created and registered under the lock: an interruption's cleanup either comes
        // first (and nothing is created) or finds the file registered.
        let created = try Self.pendingLock.withLock { () throws -> (String, Int32)? in
            if Self.ending != .running { return nil }
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

    /// Creates `directory` and its parents for the files to come (`FileSystem.createDirectory`);
    /// if the set is released uncommitted, the directories it created are removed again
    /// (those still empty), so a failed run leaves no empty output folder behind.
    package func createDirectory(_ directory: String) throws {
        createdDirectories += try FileSystem.createDirectory(directory)
    }

    /// Renames every staged file to its destination, all under the lock an
    /// interruption's cleanup takes: an interrupted run ends with all of them renamed or
    /// none.
    package func commit() throws {
        try Self.pendingLock.withLock {
            if Self.ending != .running {
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
            for directory in createdDirectories.reversed() { FileSystem.removeDirectoryQuietly(directory) }
        }
        Self.pendingLock.withLock {
            for (temporary, _) in staged { Self.pending.remove(temporary) }
        }
    }
}
