/// The records of a ZIP file that `ZIPArchive` reads (PKWARE's APPNOTE): the end of
/// central directory record, its ZIP64 locator and record, the central directory's
/// file headers and their ZIP64 extra field. Pure byte parsing; every read is
/// bounds-checked.
enum ZIPRecords {
    static let endSignature: UInt32 = 0x0605_4b50
    static let zip64LocatorSignature: UInt32 = 0x0706_4b50
    static let zip64EndSignature: UInt32 = 0x0606_4b50
    static let centralSignature: UInt32 = 0x0201_4b50
    static let localSignature: UInt32 = 0x0403_4b50

    static let endSize = 22, zip64LocatorSize = 20, zip64EndSize = 56
    static let centralSize = 46, localSize = 30
    /// The largest comment, so the farthest the end record can be from the file's end.
    static let maxCommentSize = 0xFFFF

    /// Where the central directory is, from the end record (and the ZIP64 record).
    struct Directory: Equatable {
        var entryCount: Int
        package var offset: Int
        var size: Int
        /// Where the records after the central directory start (the ZIP64 record, or
        /// the end record): the directory must end there.
        var end: Int
    }

    /// A little-endian view of bytes; reads outside them give nil.
    struct Bytes {
        let bytes: [UInt8]

        func u16(_ at: Int) -> Int? {
            guard at >= 0, at <= bytes.count - 2 else { return nil }
            return Int(bytes[at]) | Int(bytes[at + 1]) << 8
        }

        func u32(_ at: Int) -> Int? {
            guard let low = u16(at), let high = u16(at + 2) else { return nil }
            return low | high << 16
        }

        func u64(_ at: Int) -> UInt64? {
            guard let low = u32(at), let high = u32(at + 4) else { return nil }
            return UInt64(low) | UInt64(high) << 32
        }
    }

    /// Finds the end record in `tail` (the file's last bytes, starting at byte
    /// `tailOffset`): the last signature whose comment ends exactly at the end of the
    /// file. Returns its offset in the file and its fields.
    static func findEnd(_ tail: [UInt8], tailOffset: Int) -> (offset: Int, entries: Int, size: Int, directoryOffset: Int,
                                                              multiDisk: Bool)? {
        let view = Bytes(bytes: tail)
        var at = tail.count - endSize
        while at >= 0 {
            if view.u32(at) == Int(endSignature), let comment = view.u16(at + 20), at + endSize + comment == tail.count,
               let disk = view.u16(at + 4), let directoryDisk = view.u16(at + 6), let onDisk = view.u16(at + 8),
               let entries = view.u16(at + 10), let size = view.u32(at + 12), let offset = view.u32(at + 16) {
                let multiDisk = (disk != 0 && disk != 0xFFFF) || (directoryDisk != 0 && directoryDisk != 0xFFFF)
                    || onDisk != entries
                return (tailOffset + at, entries, size, offset, multiDisk)
            }
            at -= 1
        }
        return nil
    }

    /// A central directory file header, as read.
    struct CentralHeader {
        var flags: Int
        var method: Int
        var crc32: UInt32
        var compressedSize: Int
        var uncompressedSize: Int
        var localOffset: Int
        var name: [UInt8]
        /// The whole header's size (fixed part, name, extra field, comment).
        var size: Int
    }

    /// Why a header could not be read.
    enum Problem: Error {
        case truncated, signature, zip64
    }

    /// Reads the central directory file header at `at` of `directory`, taking the
    /// 64-bit sizes and offset from its ZIP64 extra field where the 32-bit ones say so.
    static func centralHeader(_ directory: Bytes, at: Int) throws(Problem) -> CentralHeader {
        guard let signature = directory.u32(at), let flags = directory.u16(at + 8), let method = directory.u16(at + 10),
              let crc = directory.u32(at + 16), let compressed = directory.u32(at + 20),
              let uncompressed = directory.u32(at + 24), let nameLength = directory.u16(at + 28),
              let extraLength = directory.u16(at + 30), let commentLength = directory.u16(at + 32),
              let disk = directory.u16(at + 34), let offset = directory.u32(at + 42) else { throw .truncated }
        guard signature == Int(centralSignature) else { throw .signature }
        let nameStart = at + centralSize, extraStart = nameStart + nameLength
        let size = centralSize + nameLength + extraLength + commentLength
        guard size <= directory.bytes.count - at else { throw .truncated }
        var header = CentralHeader(flags: flags, method: method, crc32: UInt32(crc), compressedSize: compressed,
                                   uncompressedSize: uncompressed, localOffset: offset,
                                   name: Array(directory.bytes[nameStart..<extraStart]), size: size)
        let wanted = (uncompressed == 0xFFFF_FFFF, compressed == 0xFFFF_FFFF, offset == 0xFFFF_FFFF, disk == 0xFFFF)
        if wanted.0 || wanted.1 || wanted.2 || wanted.3 {
            guard let fields = zip64Fields(directory, from: extraStart, to: extraStart + extraLength,
                                           count: [wanted.0, wanted.1, wanted.2].filter { $0 }.count) else { throw .zip64 }
            var next = 0
            if wanted.0 { header.uncompressedSize = fields[next]; next += 1 }
            if wanted.1 { header.compressedSize = fields[next]; next += 1 }
            if wanted.2 { header.localOffset = fields[next] }
        }
        return header
    }

    /// The first `count` 64-bit values of the ZIP64 extra field (id 1) in
    /// `bytes[from..<to]`, each below 2^62; nil if there is none or it is too short.
    static func zip64Fields(_ bytes: Bytes, from: Int, to: Int, count: Int) -> [Int]? {
        var at = from
        while at + 4 <= to {
            guard let id = bytes.u16(at), let length = bytes.u16(at + 2), at + 4 + length <= to else { return nil }
            if id == 1 {
                guard length >= 8 * count else { return nil }
                var values: [Int] = []
                for i in 0..<count {
                    guard let value = bytes.u64(at + 4 + 8 * i), value < 1 << 62 else { return nil }
                    values.append(Int(value))
                }
                return values
            }
            at += 4 + length
        }
        return nil
    }
}
