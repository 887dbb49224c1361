// The one place that talks to the operating system directly (POSIX calls exist on both
// Linux and macOS; only the module name differs).
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Dispatch

/// File-system operations rgbd needs, on top of POSIX.
package enum FileSystem {
    /// The largest file rgbd reads: 512 MiB (docs/format.md, "Limits"). A 48-megapixel
    /// photo is about 30 MB, an iPhone capture JSON with its depth map as text about 11 MB;
    /// a larger file is refused from its size before any of it is read.
    package static let maxFileBytes = 512 << 20

    /// Reads a whole regular file into memory: the bounded reader every input goes
    /// through.
    ///
    /// The file is opened without blocking (`O_NONBLOCK`, so a FIFO cannot stall the
    /// call), its type checked (anything but a regular file is refused by type: a
    /// directory, a FIFO, a device, a socket), and its size checked against `limit`
    /// before any memory is allocated; at most that many bytes are read.
    ///
    /// - Throws: `RGBDError(.io)` naming the file and the system's reason, its type, or
    ///   its size and the limit.
    package static func readFile(_ path: String, limit: Int = maxFileBytes) throws -> [UInt8] {
        let fd = try openRegularFile(path)
        defer { close(fd.descriptor) }
        guard fd.size <= limit else {
            throw RGBDError(.io, file: path, "is \(fd.size) bytes, more than rgbd reads (\(describeBytes(limit)))")
        }
        let size = fd.size
        var done = 0
        var ok = true
        // Read straight into uninitialized (huge-page advised) storage: no zeroing pass.
        var bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            LargeBuffer.adviseHugePages(UnsafeMutableRawBufferPointer(buffer))
            if let base = buffer.baseAddress {
                while done < size {
                    let n = read(fd.descriptor, base + done, size - done)
                    if n < 0 {
                        if errno == EINTR { continue }
                        ok = false
                        break
                    }
                    if n == 0 { break }
                    done += n
                }
            }
            initialized = done
        }
        guard ok else { throw systemError(path, "cannot read") }
        if done < size { bytes.removeLast(size - done) }  // the file shrank meanwhile
        return bytes
    }

    /// The first `count` bytes of a regular file (fewer if it is shorter); refused like
    /// `readFile` if it is not a regular file.
    package static func readPrefix(_ path: String, count: Int) throws -> [UInt8] {
        let fd = try openRegularFile(path)
        defer { close(fd.descriptor) }
        let count = max(0, min(count, fd.size))
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { read(fd.descriptor, $0.baseAddress.map { $0 + done }, count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw systemError(path, "cannot read")
            }
            if n == 0 { break }
            done += n
        }
        return Array(bytes.prefix(done))
    }

    /// Opens a regular file for reading: its type is checked with `stat` before it is
    /// opened (a FIFO or a device is never opened), and again with `fstat` once it is
    /// (opened with `O_NONBLOCK`, in case it was replaced in between). Returns the
    /// descriptor, which the caller closes, and the size.
    static func openRegularFile(_ path: String) throws -> (descriptor: Int32, size: Int) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw systemError(path, "cannot open") }
        try requireRegular(info, path)
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw systemError(path, "cannot open") }
        guard fstat(fd, &info) == 0 else {
            let error = systemError(path, "cannot stat")
            close(fd)
            throw error
        }
        do {
            try requireRegular(info, path)
        } catch {
            close(fd)
            throw error
        }
        return (fd, max(0, Int(info.st_size)))
    }

    /// Refuses anything but a regular file, naming what it is.
    private static func requireRegular(_ info: stat, _ path: String) throws {
        let type = info.st_mode & S_IFMT
        guard type != S_IFREG else { return }
        let what: String
        switch type {
        case S_IFDIR: what = "is a directory, not a file"
        case S_IFIFO: what = "is a FIFO (named pipe), not a regular file"
        case S_IFCHR: what = "is a character device, not a regular file"
        case S_IFBLK: what = "is a block device, not a regular file"
        case S_IFSOCK: what = "is a socket, not a regular file"
        default: what = "is not a regular file"
        }
        throw RGBDError(.io, file: path, what)
    }

    /// A byte count for messages: `512 MiB`, `2 GiB`, else bytes.
    static func describeBytes(_ count: Int) -> String {
        if count >= 1 << 30, count % (1 << 30) == 0 { return "\(count >> 30) GiB" }
        if count >= 1 << 20, count % (1 << 20) == 0 { return "\(count >> 20) MiB" }
        return "\(count) bytes"
    }

    /// Whether `path` names an existing directory.
    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Whether the process may create files in the directory `path` (`access` with
    /// write and search permission).
    package static func isWritableDirectory(_ path: String) -> Bool {
        isDirectory(path) && access(path, W_OK | X_OK) == 0
    }

    /// Whether `path` names an existing file or directory.
    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The size in bytes of the file at `path`, or nil if it cannot be read.
    package static func fileSize(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    /// The absolute path of `path` with symbolic links, `.` and `..` resolved, or nil
    /// if it does not exist. For a file that does not exist yet, its directory is
    /// resolved (nil if that does not exist either).
    package static func canonicalPath(_ path: String) -> String? {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        let directory = Path.directory(of: path)
        guard directory != path, let resolved = realpath(directory, nil) else { return nil }
        defer { free(resolved) }
        return Path.join(String(cString: resolved), Path.lastComponent(path))
    }

    /// The absolute path `path` names, with symbolic links resolved as far as the path
    /// exists and `.` and `..` resolved in the rest: `scan/..` is the folder holding
    /// `scan`, and a path whose last folders do not exist yet is still made absolute.
    package static func resolvedPath(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        var absolute = path
        if !absolute.hasPrefix("/") {
            guard let cwd = getcwd(nil, 0) else { return Path.normalized(path) }
            absolute = Path.join(String(cString: cwd), absolute)
            free(cwd)
        }
        // The longest existing prefix resolved by the system, the rest lexically.
        var components = absolute.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var rest: [String] = []
        while !components.isEmpty {
            let prefix = "/" + components.joined(separator: "/")
            if let resolved = realpath(prefix, nil) {
                let base = String(cString: resolved)
                free(resolved)
                return Path.normalized(Path.join(base, rest.joined(separator: "/")))
            }
            rest.insert(components.removeLast(), at: 0)
        }
        return Path.normalized("/" + rest.joined(separator: "/"))
    }

    /// Everything under the directory `path`, as paths relative to it (directories end
    /// in `/`), found without following symbolic links; sorted.
    package static func treeEntries(_ path: String) throws -> [String] {
        var entries: [String] = []
        func walk(_ relative: String) throws {
            for name in try contentsOfDirectory(relative.isEmpty ? path : Path.join(path, relative)) {
                let child = relative.isEmpty ? name : relative + "/" + name
                var info = stat()
                if lstat(Path.join(path, child), &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
                    entries.append(child + "/")
                    try walk(child)
                } else {
                    entries.append(child)
                }
            }
        }
        try walk("")
        return entries.sorted()
    }

    /// The names in a directory (not `.` and `..`), sorted.
    package static func contentsOfDirectory(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else { throw systemError(path, "cannot list directory") }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            // d_name is a fixed-size C array (256 bytes on Linux, 1024 on macOS).
            let capacity = MemoryLayout.size(ofValue: entry.pointee.d_name)
            let name = withUnsafePointer(to: entry.pointee.d_name) { ptr in
                ptr.withMemoryRebound(to: CChar.self, capacity: capacity) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Creates a directory and its parents, like `mkdir -p`; returns the directories it
    /// created, outermost first (empty if `path` existed).
    @discardableResult
    package static func createDirectory(_ path: String) throws -> [String] {
        if isDirectory(path) { return [] }
        var created: [String] = []
        let parent = Path.directory(of: path)
        if parent != path && !parent.isEmpty && parent != "." { created = try createDirectory(parent) }
        if mkdir(path, 0o755) != 0 {
            if errno != EEXIST { throw systemError(path, "cannot create directory") }
        } else {
            created.append(path)
        }
        return created
    }

    /// Creates an empty temporary file beside `path` and returns its name and an open
    /// descriptor; the name starts with `.` and ends with `.rgbd-tmp-XXXXXX`.
    static func makeTemporary(beside path: String) throws -> (path: String, fd: Int32) {
        let dir = Path.directory(of: path)
        let base = Path.lastComponent(path)
        var template = Array("\(dir)/.\(base).rgbd-tmp-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        guard fd >= 0 else { throw systemError(path, "cannot create a temporary file in \(dir)") }
        fchmod(fd, 0o644)
        let name = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (name, fd)
    }

    /// Writes all of `bytes` to `fd`.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let n = write(fd, base + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw systemError(path, "cannot write")
            }
            done += n
        }
    }

    package static func closeFile(_ fd: Int32) { close(fd) }

    /// Renames `from` to `to` atomically (same directory).
    static func rename(_ from: String, to: String) throws {
        if renameFile(from, to) != 0 { throw systemError(to, "cannot rename temporary file into place") }
    }

    private static func renameFile(_ from: String, _ to: String) -> Int32 {
        #if canImport(Glibc)
        return Glibc.rename(from, to)
        #elseif canImport(Musl)
        return Musl.rename(from, to)
        #else
        return Darwin.rename(from, to)
        #endif
    }

    /// Removes a file, ignoring errors (used to clean up temporaries).
    package static func removeQuietly(_ path: String) { unlink(path) }

    private static func systemError(_ path: String, _ what: String) -> RGBDError {
        let reason = String(cString: strerror(errno))
        return RGBDError(.io, file: path, "\(what): \(reason)")
    }

    /// Parses a decimal string with the C library's correctly rounded `strtof`.
    ///
    /// Returns nil if the whole buffer is not consumed.
    static func strtofExact(_ text: UnsafeBufferPointer<UInt8>) -> Float? {
        // Copy into a NUL-terminated buffer (numbers are short).
        var tmp = [CChar](repeating: 0, count: text.count + 1)
        for i in 0..<text.count { tmp[i] = CChar(bitPattern: text[i]) }
        return tmp.withUnsafeBufferPointer { buffer -> Float? in
            guard let base = buffer.baseAddress else { return nil }
            var end: UnsafeMutablePointer<CChar>? = nil
            let value = strtof(base, &end)
            guard let end, end - UnsafeMutablePointer(mutating: base) == text.count else { return nil }
            return value
        }
    }
}

extension FileSystem {
    /// Removes an empty directory, ignoring errors.
    package static func removeDirectoryQuietly(_ path: String) { rmdir(path) }
}
