// POSIX calls for whole output folders (FileSystem is the one place with OS calls).
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

extension FileSystem {
    /// Creates an empty temporary directory beside `path` (same parent, so it can be
    /// renamed onto `path`); its name starts with `.` and ends with `.rgbd-tmp-XXXXXX`.
    static func makeTemporaryDirectory(beside path: String) throws -> String {
        let dir = Path.directory(of: path)
        let base = Path.lastComponent(path)
        var template = Array("\(dir)/.\(base).rgbd-tmp-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return mkdtemp(base) != nil
        }
        guard made else { throw directoryError(path, "cannot create a temporary folder in \(dir)") }
        let name = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        chmod(name, 0o755)
        return name
    }

    /// Writes `bytes` to a new file at `path` (refused if it exists) and closes it,
    /// reporting a failed write or close (a full disk) as an error naming the file.
    static func writeNewFile(_ path: String, _ bytes: UnsafeRawBufferPointer) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw directoryError(path, "cannot create") }
        do {
            try writeAll(fd, bytes, path: path)
        } catch {
            close(fd)
            throw error
        }
        if close(fd) != 0 { throw directoryError(path, "cannot write") }
    }

    /// Renames a directory onto `to`, which must not exist or be an empty directory.
    static func renameDirectory(_ from: String, to: String) throws {
        if systemRename(from, to) != 0 { throw directoryError(to, "cannot move the finished folder into place") }
    }

    /// Removes `path` and everything under it, ignoring errors; symbolic links are
    /// removed, never followed.
    package static func removeTreeQuietly(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            for name in (try? contentsOfDirectory(path)) ?? [] { removeTreeQuietly(Path.join(path, name)) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    /// Whether `path` is a symbolic link or anything but a directory that exists.
    package static func existsAsNonDirectory(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) != S_IFDIR
    }

    private static func directoryError(_ path: String, _ what: String) -> RGBDError {
        RGBDError(.io, file: path, "\(what): \(String(cString: strerror(errno)))")
    }

    private static func systemRename(_ from: String, _ to: String) -> Int32 {
        #if canImport(Glibc)
        Glibc.rename(from, to)
        #else
        Darwin.rename(from, to)
        #endif
    }
}
