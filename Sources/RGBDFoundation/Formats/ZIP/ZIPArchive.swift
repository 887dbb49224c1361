/// Random access to the entries of a ZIP file on disk (Record3D's `.r3d`), without
/// reading the whole file: the central directory is read once, each entry when asked.
///
/// Stored (method 0) and deflate (8) entries, ZIP64 (the end record's locator and the
/// extra fields of 64-bit sizes and offsets) and an archive comment are supported;
/// encrypted entries, other methods and multi-disk archives are refused. Everything
/// the file says is checked before it is used: the directory's size (≤ 64 MiB, ≤ 1
/// million entries), every offset and size against the file, each local header
/// against its central one, each entry's CRC-32, and a caller's limit before any
/// entry's memory is allocated. Errors are one line naming the file, and the entry
/// when they are about one (`scan.r3d: rgbd/12.depth: CRC mismatch`).
package final class ZIPArchive: Sendable {
    /// One entry of the central directory.
    package struct Entry: Sendable {
        /// Its name as stored (UTF-8; other bytes replaced).
        package let name: String
        /// Its compression method: 0 stored, 8 deflate (others are listed, not read).
        package let method: UInt16
        /// Its sizes in the file and once decoded, and its CRC-32.
        package let compressedSize: Int
        package let uncompressedSize: Int
        package let crc32: UInt32
        /// Where its local header starts in the file.
        package let offset: Int
        /// Its general-purpose flags (bit 0: encrypted).
        let flags: UInt16
        /// The name's bytes, which the local header must repeat.
        let nameBytes: [UInt8]
    }

    /// The largest central directory read, and the most entries.
    package static let maxDirectoryBytes = 64 << 20
    package static let maxEntries = 1_000_000

    /// The file, as given (errors name it).
    package let path: String
    /// The entries, in central-directory order.
    package let entries: [Entry]
    private let descriptor: Int32
    private let fileSize: Int
    /// Where the central directory starts: every entry's data ends before it.
    private let directoryOffset: Int
    /// The first entry of each name.
    private let index: [String: Int]

    /// Opens `path` (a regular file) and reads its end record and central directory.
    ///
    /// - Throws: `RGBDError(.io)` if it cannot be opened or read, or is not a regular
    ///   file; `RGBDError(.invalidImage)` if it is not a ZIP file this reader accepts.
    package init(path: String) throws {
        let (descriptor, size) = try FileSystem.openRegularFile(path)
        do {
            let reader = ZIPDirectoryReader(path: path, descriptor: descriptor, fileSize: size)
            let directory = try reader.findDirectory()
            entries = try reader.readEntries(directory)
            directoryOffset = directory.offset
        } catch {
            FileSystem.closeFile(descriptor)
            throw error
        }
        self.path = path
        self.descriptor = descriptor
        fileSize = size
        var index: [String: Int] = [:]
        for (i, entry) in entries.enumerated() where index[entry.name] == nil { index[entry.name] = i }
        self.index = index
    }

    deinit { FileSystem.closeFile(descriptor) }

    /// The first entry called `name`, if any.
    package func entry(named name: String) -> Entry? {
        index[name].map { entries[$0] }
    }

    /// The decoded bytes of `entry` (one of `entries`), CRC checked. Thread-safe: any
    /// number of threads may read entries at once (`pread`, no shared position).
    ///
    /// - Throws: `RGBDError(.invalidImage)` naming the file and the entry if it is
    ///   larger than `limit` (before anything is allocated), encrypted, of another
    ///   method, its local header disagrees with the directory, its data lies outside
    ///   the file, or it does not decode to its size and CRC; `RGBDError(.io)` if the
    ///   file cannot be read.
    package func read(_ entry: Entry, limit: Int) throws -> [UInt8] {
        guard entry.uncompressedSize <= limit else {
            throw invalid(entry, "is \(entry.uncompressedSize) bytes, more than the limit of \(limit)")
        }
        guard entry.flags & 1 == 0 else { throw invalid(entry, "is encrypted (not supported)") }
        guard entry.method == 0 || entry.method == 8 else {
            throw invalid(entry, "compression method \(entry.method) is not supported (only stored and deflate)")
        }
        let dataOffset = try checkLocalHeader(entry)
        guard entry.compressedSize <= directoryOffset - dataOffset else {
            throw invalid(entry, "data runs past the central directory (file truncated?)")
        }
        let bytes: [UInt8]
        if entry.method == 0 {
            guard entry.compressedSize == entry.uncompressedSize else {
                throw invalid(entry, "stored with \(entry.compressedSize) bytes for \(entry.uncompressedSize)")
            }
            bytes = try readBytes(at: dataOffset, count: entry.uncompressedSize, entry)
        } else {
            // Deflate expands data by at most 5 bytes per 16 KiB stored block: a
            // compressed size far beyond that is a lie, refused before it is read.
            guard entry.compressedSize <= entry.uncompressedSize + entry.uncompressedSize / 1024 + 1024 else {
                throw invalid(entry, "\(entry.compressedSize) compressed bytes for \(entry.uncompressedSize)")
            }
            let compressed = try readBytes(at: dataOffset, count: entry.compressedSize, entry)
            bytes = try inflate(compressed, entry)
        }
        let crc = bytes.withUnsafeBytes { ZIPInflate.crc32($0) }
        guard crc == entry.crc32 else { throw invalid(entry, "CRC mismatch") }
        return bytes
    }

    /// Reads and checks the local header of `entry`; returns where its data starts.
    private func checkLocalHeader(_ entry: Entry) throws -> Int {
        guard entry.offset <= directoryOffset - ZIPRecords.localSize else {
            throw invalid(entry, "local header at \(entry.offset) is beyond the entries' area")
        }
        let fixed = ZIPRecords.Bytes(bytes: try readBytes(at: entry.offset, count: ZIPRecords.localSize, entry))
        guard fixed.u32(0) == Int(ZIPRecords.localSignature), let flags = fixed.u16(6), let method = fixed.u16(8),
              let crc = fixed.u32(14), let compressed = fixed.u32(18), let uncompressed = fixed.u32(22),
              let nameLength = fixed.u16(26), let extraLength = fixed.u16(28) else {
            throw invalid(entry, "no local header at \(entry.offset)")
        }
        let variable = nameLength + extraLength
        guard variable <= directoryOffset - entry.offset - ZIPRecords.localSize else {
            throw invalid(entry, "local header runs past the entries' area")
        }
        let rest = try readBytes(at: entry.offset + ZIPRecords.localSize, count: variable, entry)
        guard method == Int(entry.method), Array(rest[0..<nameLength]) == entry.nameBytes else {
            throw invalid(entry, "local header disagrees with the central directory (name or method)")
        }
        if flags & 8 == 0 {  // no data descriptor: the local header has the sizes and CRC
            var sizes = (compressed, uncompressed)
            if compressed == 0xFFFF_FFFF || uncompressed == 0xFFFF_FFFF {
                guard let fields = ZIPRecords.zip64Fields(ZIPRecords.Bytes(bytes: rest), from: nameLength, to: variable,
                                                          count: 2) else {
                    throw invalid(entry, "local header lacks its ZIP64 sizes")
                }
                sizes = (fields[1], fields[0])
            }
            guard UInt32(crc) == entry.crc32, sizes == (entry.compressedSize, entry.uncompressedSize) else {
                throw invalid(entry, "local header disagrees with the central directory (sizes or CRC)")
            }
        }
        return entry.offset + ZIPRecords.localSize + variable
    }

    /// Deflate-decodes `compressed` into exactly the entry's size.
    private func inflate(_ compressed: [UInt8], _ entry: Entry) throws -> [UInt8] {
        var failure: ZIPInflate.Failure?
        let output = [UInt8](unsafeUninitializedCapacity: entry.uncompressedSize) { buffer, initialized in
            failure = compressed.withUnsafeBytes { ZIPInflate.decompress($0, into: UnsafeMutableRawBufferPointer(buffer)) }
            initialized = failure == nil ? entry.uncompressedSize : 0
        }
        switch failure {
        case nil: return output
        case .wrongSize: throw invalid(entry, "deflate data does not decode to \(entry.uncompressedSize) bytes")
        case .badData: throw invalid(entry, "invalid deflate data")
        case .noMemory: throw RGBDError(.io, file: path, location: ZIPArchive.printable(entry.name), "out of memory")
        }
    }

    /// `count` bytes at `offset`, all of them (a shorter file is an error).
    private func readBytes(at offset: Int, count: Int, _ entry: Entry) throws -> [UInt8] {
        var got = 0
        let bytes = try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            got = try FileSystem.readAt(descriptor, offset: offset, into: UnsafeMutableRawBufferPointer(buffer), path: path)
            initialized = got
        }
        guard got == count else { throw invalid(entry, "file truncated (ends at \(fileSize) bytes)") }
        return bytes
    }

    /// An error about `entry`: `file: name: what`.
    private func invalid(_ entry: Entry, _ what: String) -> RGBDError {
        RGBDError(.invalidImage, file: path, location: ZIPArchive.printable(entry.name), what)
    }

    /// A name fit for a one-line message: control characters replaced, at most 200
    /// characters.
    static func printable(_ name: String) -> String {
        let cleaned = String(String.UnicodeScalarView(name.unicodeScalars.map {
            $0.properties.generalCategory == .control || $0 == "\u{2028}" || $0 == "\u{2029}" ? "?" : $0
        }))
        return cleaned.count > 200 ? String(cleaned.prefix(200)) + "…" : cleaned
    }
}
