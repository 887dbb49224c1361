#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RGBDKit

// Small writers of the scan layouts' file formats, written here (not taken from RGBDKit)
// so that they are independent of the readers they test: a file stream, a child process fed
// through a socket, ZIP (stored), LZFSE raw blocks, OpenEXR (uncompressed scanlines), NumPy
// .npy, and number formatting.

/// A file open for writing, written sequentially.
final class ScanOutputFile {
    let path: String
    private var fd: Int32
    /// Bytes written so far.
    private(set) var offset = 0

    init(_ path: String) throws {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw RGBDError(.io, file: path, "cannot create (errno \(errno))") }
    }

    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var done = 0
            while done < raw.count {
                #if canImport(Glibc)
                let n = Glibc.write(fd, base + done, raw.count - done)
                #else
                let n = Darwin.write(fd, base + done, raw.count - done)
                #endif
                if n < 0 {
                    if errno == EINTR { continue }
                    throw RGBDError(.io, file: path, "cannot write (errno \(errno))")
                }
                done += n
            }
        }
        offset += bytes.count
    }

    func close() throws {
        guard fd >= 0 else { return }
        #if canImport(Glibc)
        let result = Glibc.close(fd)
        #else
        let result = Darwin.close(fd)
        #endif
        fd = -1
        if result != 0 { throw RGBDError(.io, file: path, "cannot close (errno \(errno))") }
    }

    deinit {
        if fd >= 0 { _ = try? close() }
    }

    /// Writes a whole file.
    static func write(_ path: String, _ bytes: [UInt8]) throws {
        let file = try ScanOutputFile(path)
        try file.write(bytes)
        try file.close()
    }
}

/// A child process whose standard input (and, when `readsOutput`, standard output) is one
/// end of a socket pair: writes never raise SIGPIPE when the child has died (they fail).
final class ScanChildProcess {
    let name: String
    private var pid: pid_t = 0
    private var socket: Int32 = -1

    init(_ arguments: [String], readsOutput: Bool = false) throws {
        guard let executable = arguments.first else { throw RGBDError(.invalidArgument, "no command") }
        name = executable
        var pair: [Int32] = [-1, -1]
        // Both ends close on exec: a child started meanwhile on another thread must not
        // inherit them, or this child never sees the end of its input (two scans written
        // at once, as parallel tests do, then wait for each other for ever). The child's
        // own standard input is a dup2 of pair[1], which does not close on exec.
        #if canImport(Glibc)
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
        let kind = SOCK_STREAM
        #endif
        guard socketpair(AF_UNIX, kind, 0, &pair) == 0 else {
            throw RGBDError(.io, file: executable, "cannot make a socket pair (errno \(errno))")
        }
        #if canImport(Darwin)
        // No SOCK_CLOEXEC on macOS: set at once (a spawn in between could still inherit them).
        for descriptor in pair { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        #endif
        #if canImport(Darwin)
        var on: Int32 = 1
        setsockopt(pair[0], SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        #if canImport(Glibc)
        var actions = posix_spawn_file_actions_t()
        #else
        var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pair[1], 0)
        if readsOutput {
            posix_spawn_file_actions_adddup2(&actions, pair[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addclose(&actions, pair[0])
        posix_spawn_file_actions_addclose(&actions, pair[1])
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var child: pid_t = 0
        let status = posix_spawnp(&child, executable, &actions, nil, &argv, environ)
        closeDescriptor(pair[1])
        guard status == 0 else {
            closeDescriptor(pair[0])
            throw RGBDError(.io, file: executable, "cannot run \(executable) (\(status == ENOENT ? "not found" : "error \(status)"))")
        }
        pid = child
        socket = pair[0]
    }

    /// Sends all of `bytes` to the child's standard input.
    func send(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            #if canImport(Glibc)
            let n = Glibc.send(socket, base + done, bytes.count - done, Int32(MSG_NOSIGNAL))
            #else
            let n = Darwin.send(socket, base + done, bytes.count - done, 0)
            #endif
            if n < 0 {
                if errno == EINTR { continue }
                throw RGBDError(.io, file: name, "\(name) stopped reading its input (errno \(errno))")
            }
            done += n
        }
    }

    /// Reads exactly `count` bytes of the child's standard output.
    func receive(_ count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        try out.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            while done < count {
                let n = recv(socket, base + done, count - done, 0)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw RGBDError(.io, file: name, "\(name) ended its output early") }
                done += n
            }
        }
        return out
    }

    /// Closes the child's input and waits for it; throws unless it exits with status 0.
    func finish() throws {
        if socket >= 0 {
            closeDescriptor(socket)
            socket = -1
        }
        guard pid > 0 else { return }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        pid = 0
        // WIFEXITED && WEXITSTATUS == 0, spelled out (the macros are not imported).
        guard status & 0x7F == 0 && (status >> 8) & 0xFF == 0 else {
            throw RGBDError(.io, file: name, "\(name) failed (wait status \(status))")
        }
    }

    deinit {
        if socket >= 0 { closeDescriptor(socket) }
        if pid > 0 {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
    }
}

private func closeDescriptor(_ fd: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(fd)
    #else
    _ = Darwin.close(fd)
    #endif
}

// MARK: - ZIP

/// CRC-32 (ISO-HDLC, the ZIP and PNG one: reflected polynomial 0xEDB88320), table-driven.
enum ScanCRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}

/// A ZIP archive written entry by entry (stored, no compression; no ZIP64, so under 4 GiB
/// and 65535 entries), with a fixed timestamp so the bytes are the same on every run.
final class ScanZipWriter {
    private let file: ScanOutputFile
    private var central: [UInt8] = []
    private var entries = 0
    /// 1980-01-01 00:00:00 in MS-DOS format (the earliest date ZIP can hold).
    private static let dosTime: UInt16 = 0, dosDate: UInt16 = (0 << 9) | (1 << 5) | 1

    init(_ path: String) throws { file = try ScanOutputFile(path) }

    func add(_ name: String, _ data: [UInt8]) throws {
        let nameBytes = Array(name.utf8)
        let offset = file.offset
        guard offset + data.count + 30 + nameBytes.count < Int(UInt32.max), entries < 0xFFFF else {
            throw RGBDError(.invalidArgument, file: file.path, "too large for a ZIP without ZIP64")
        }
        let crc = ScanCRC32.checksum(data)
        var local: [UInt8] = []
        local.le32(0x0403_4B50)
        local.le16(20)              // version needed: 2.0
        local.le16(0x0800)          // flags: UTF-8 names
        local.le16(0)               // method: stored
        local.le16(Self.dosTime)
        local.le16(Self.dosDate)
        local.le32(crc)
        local.le32(UInt32(data.count))
        local.le32(UInt32(data.count))
        local.le16(UInt16(nameBytes.count))
        local.le16(0)               // extra length
        local += nameBytes
        try file.write(local)
        try file.write(data)

        central.le32(0x0201_4B50)
        central.le16(0x031E)        // made by: Unix, 3.0
        central.le16(20)
        central.le16(0x0800)
        central.le16(0)
        central.le16(Self.dosTime)
        central.le16(Self.dosDate)
        central.le32(crc)
        central.le32(UInt32(data.count))
        central.le32(UInt32(data.count))
        central.le16(UInt16(nameBytes.count))
        central.le16(0)             // extra
        central.le16(0)             // comment
        central.le16(0)             // disk
        central.le16(0)             // internal attributes
        central.le32(0o100644 << 16) // external: a regular file, rw-r--r--
        central.le32(UInt32(offset))
        central += nameBytes
        entries += 1
    }

    func finish() throws {
        let start = file.offset
        var end: [UInt8] = []
        end.le32(0x0605_4B50)
        end.le16(0)
        end.le16(0)
        end.le16(UInt16(entries))
        end.le16(UInt16(entries))
        end.le32(UInt32(central.count))
        end.le32(UInt32(start))
        end.le16(0)
        try file.write(central)
        try file.write(end)
        try file.close()
    }
}

// MARK: - LZFSE

/// How to produce the LZFSE streams of Record3D's `.depth` and `.conf` entries.
package enum LZFSEWriter: Equatable, Sendable {
    /// Uncompressed blocks (`bvx-`, byte count, the bytes, then `bvx$`): valid LZFSE that
    /// every decoder accepts.
    case raw
    /// Compressed by the PyPI `lzfse` package of this Python interpreter (real LZFSE
    /// blocks, as the app writes), one process for the whole scan.
    case python(String)
}

enum ScanLZFSE {
    /// `bytes` as one raw LZFSE block and the end-of-stream block.
    static func raw(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = Array("bvx-".utf8)
        out.reserveCapacity(bytes.count + 12)
        out.le32(UInt32(bytes.count))
        out += bytes
        out += Array("bvx$".utf8)
        return out
    }
}

/// A Python process compressing blobs with `lzfse.compress`, fed length-prefixed blobs.
final class ScanLZFSECompressor {
    private let process: ScanChildProcess
    private static let script = """
    import sys, struct, lzfse
    i, o = sys.stdin.buffer, sys.stdout.buffer
    while True:
        h = i.read(4)
        if len(h) < 4:
            break
        n = struct.unpack('<I', h)[0]
        c = lzfse.compress(i.read(n))
        o.write(struct.pack('<I', len(c)) + c)
        o.flush()
    """

    init(python: String) throws {
        process = try ScanChildProcess([python, "-c", Self.script], readsOutput: true)
    }

    func compress(_ bytes: [UInt8]) throws -> [UInt8] {
        var header: [UInt8] = []
        header.le32(UInt32(bytes.count))
        try header.withUnsafeBytes { try process.send($0) }
        try bytes.withUnsafeBytes { try process.send($0) }
        let size = try process.receive(4)
        let n = Int(size[0]) | Int(size[1]) << 8 | Int(size[2]) << 16 | Int(size[3]) << 24
        return try process.receive(n)
    }

    func finish() throws { try process.finish() }
}

// MARK: - OpenEXR, NumPy

enum ScanEXR {
    /// A single-part scanline OpenEXR file, uncompressed, with one 32-bit float channel
    /// `channel` (row-major `width × height` values; NaN kept).
    static func encode(width: Int, height: Int, values: [Float], channel: String = "Z") -> [UInt8] {
        var out: [UInt8] = [0x76, 0x2F, 0x31, 0x01]   // magic 20000630
        out.le32(2)                                    // version 2, single-part scanline
        func attribute(_ name: String, _ type: String, _ value: [UInt8]) {
            out += Array(name.utf8) + [0] + Array(type.utf8) + [0]
            out.le32(UInt32(value.count))
            out += value
        }
        var channels: [UInt8] = Array(channel.utf8) + [0]
        channels.le32(2)                               // FLOAT
        channels += [0, 0, 0, 0]                       // pLinear, reserved
        channels.le32(1)                               // x sampling
        channels.le32(1)                               // y sampling
        channels.append(0)                             // end of list
        var box: [UInt8] = []
        for v in [0, 0, width - 1, height - 1] { box.le32(UInt32(truncatingIfNeeded: Int32(v))) }
        var one: [UInt8] = []
        one.le32(Float(1).bitPattern)
        var center: [UInt8] = []
        center.le32(0)
        center.le32(0)
        attribute("channels", "chlist", channels)
        attribute("compression", "compression", [0])   // NO_COMPRESSION
        attribute("dataWindow", "box2i", box)
        attribute("displayWindow", "box2i", box)
        attribute("lineOrder", "lineOrder", [0])       // INCREASING_Y
        attribute("pixelAspectRatio", "float", one)
        attribute("screenWindowCenter", "v2f", center)
        attribute("screenWindowWidth", "float", one)
        out.append(0)                                  // end of header
        // Offset table: one chunk per scanline, each `y`, byte count, the line's floats.
        let lineBytes = width * 4
        let first = out.count + height * 8
        for y in 0..<height { out.le64(UInt64(first + y * (lineBytes + 8))) }
        out.reserveCapacity(out.count + height * (lineBytes + 8))
        for y in 0..<height {
            out.le32(UInt32(y))
            out.le32(UInt32(lineBytes))
            for x in 0..<width { out.le32(values[y * width + x].bitPattern) }
        }
        return out
    }
}

enum ScanNPY {
    /// A NumPy `.npy` file (format 1.0) of little-endian uint16 with shape (height, width).
    static func encodeUInt16(width: Int, height: Int, values: [UInt16]) -> [UInt8] {
        var header = "{'descr': '<u2', 'fortran_order': False, 'shape': (\(height), \(width)), }"
        // Magic (6) + version (2) + length (2) + header, padded with spaces to a multiple
        // of 64 bytes, ending in a newline.
        let unpadded = 10 + header.utf8.count + 1
        header += String(repeating: " ", count: (64 - unpadded % 64) % 64) + "\n"
        var out: [UInt8] = [0x93] + Array("NUMPY".utf8) + [1, 0]
        out.le16(UInt16(header.utf8.count))
        out += Array(header.utf8)
        out.reserveCapacity(out.count + values.count * 2)
        for v in values { out.le16(v) }
        return out
    }
}

extension [UInt8] {
    mutating func le16(_ v: UInt16) { append(UInt8(v & 0xFF)); append(UInt8(v >> 8)) }
    mutating func le32(_ v: UInt32) { for s in stride(from: 0, to: 32, by: 8) { append(UInt8((v >> UInt32(s)) & 0xFF)) } }
    mutating func le64(_ v: UInt64) { for s in stride(from: 0, to: 64, by: 8) { append(UInt8((v >> UInt64(s)) & 0xFF)) } }
}

/// Numbers as text: integers without a fraction, others in Swift's shortest round-trip
/// form (valid in JSON and CSV); non-finite values are the caller's business.
func scanNumber(_ v: Double) -> String {
    if v == v.rounded() && abs(v) < 1e15 { return String(Int(v)) }
    return "\(v)"
}
