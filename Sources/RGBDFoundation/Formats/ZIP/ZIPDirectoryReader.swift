/// Reads a ZIP file's end record (and ZIP64 locator and record) and its central
/// directory, for `ZIPArchive.init`: bounded reads from the end of the file, each
/// offset and size checked against the file before it is followed.
struct ZIPDirectoryReader {
    package let path: String
    let descriptor: Int32
    let fileSize: Int

    /// Where the central directory is and how many entries it holds.
    func findDirectory() throws -> ZIPRecords.Directory {
        guard fileSize >= ZIPRecords.endSize else {
            throw invalid(fileSize == 0 ? "empty file, not a ZIP archive" : "too short for a ZIP archive (\(fileSize) bytes)")
        }
        let tailSize = min(fileSize, ZIPRecords.endSize + ZIPRecords.maxCommentSize)
        let tail = try read(at: fileSize - tailSize, count: tailSize)
        guard let end = ZIPRecords.findEnd(tail, tailOffset: fileSize - tailSize) else {
            throw invalid("no end of central directory record (not a ZIP archive, or truncated)")
        }
        var directory = ZIPRecords.Directory(entryCount: end.entries, offset: end.directoryOffset, size: end.size,
                                             end: end.offset)
        var multiDisk = end.multiDisk
        // ZIP64: a locator right before the end record points at the 64-bit record.
        if end.offset >= ZIPRecords.zip64LocatorSize {
            let locatorOffset = end.offset - ZIPRecords.zip64LocatorSize
            let locator = ZIPRecords.Bytes(bytes: try read(at: locatorOffset, count: ZIPRecords.zip64LocatorSize))
            if locator.u32(0) == Int(ZIPRecords.zip64LocatorSignature) {
                guard let recordOffset = locator.u64(8), let disks = locator.u32(16), let disk = locator.u32(4),
                      locatorOffset >= ZIPRecords.zip64EndSize,
                      recordOffset <= UInt64(locatorOffset - ZIPRecords.zip64EndSize) else {
                    throw invalid("ZIP64 locator points outside the file")
                }
                multiDisk = multiDisk || disks > 1 || disk != 0
                directory = try zip64Directory(at: Int(recordOffset), multiDisk: &multiDisk)
            }
        }
        guard !multiDisk else { throw invalid("multi-disk (split) archives are not supported") }
        guard directory.size <= ZIPArchive.maxDirectoryBytes, directory.entryCount <= ZIPArchive.maxEntries else {
            throw invalid("central directory of \(directory.entryCount) entries in \(directory.size) bytes, more than rgbd reads")
        }
        guard directory.offset <= directory.end, directory.size == directory.end - directory.offset else {
            throw invalid("central directory (\(directory.size) bytes at \(directory.offset)) does not end where the end record starts")
        }
        guard directory.entryCount <= directory.size / ZIPRecords.centralSize else {
            throw invalid("\(directory.entryCount) entries cannot fit a central directory of \(directory.size) bytes")
        }
        return directory
    }

    /// The ZIP64 end record at `offset` (the locator checked that it lies before it).
    private func zip64Directory(at offset: Int, multiDisk: inout Bool) throws -> ZIPRecords.Directory {
        let record = ZIPRecords.Bytes(bytes: try read(at: offset, count: ZIPRecords.zip64EndSize))
        guard record.u32(0) == Int(ZIPRecords.zip64EndSignature), let disk = record.u32(16),
              let directoryDisk = record.u32(20), let onDisk = record.u64(24), let entries = record.u64(32),
              let size = record.u64(40), let start = record.u64(48) else {
            throw invalid("no ZIP64 end of central directory record where its locator points")
        }
        multiDisk = multiDisk || disk != 0 || directoryDisk != 0 || onDisk != entries
        guard entries <= UInt64(ZIPArchive.maxEntries), size <= UInt64(ZIPArchive.maxDirectoryBytes),
              start <= UInt64(offset) else {
            throw invalid("ZIP64 central directory of \(entries) entries in \(size) bytes at \(start): beyond what rgbd reads or the file")
        }
        return ZIPRecords.Directory(entryCount: Int(entries), offset: Int(start), size: Int(size), end: offset)
    }

    /// The central directory's entries, each with its data's place checked against the
    /// directory (entries lie before it).
    func readEntries(_ directory: ZIPRecords.Directory) throws -> [ZIPArchive.Entry] {
        let bytes = ZIPRecords.Bytes(bytes: try read(at: directory.offset, count: directory.size))
        var entries: [ZIPArchive.Entry] = []
        entries.reserveCapacity(directory.entryCount)
        var at = 0
        for number in 0..<directory.entryCount {
            let header: ZIPRecords.CentralHeader
            do {
                header = try ZIPRecords.centralHeader(bytes, at: at)
            } catch {
                switch error {
                case .truncated: throw invalid("central directory entry \(number) is truncated")
                case .signature: throw invalid("central directory entry \(number) has no signature")
                case .zip64: throw invalid("central directory entry \(number) lacks its ZIP64 extra field")
                }
            }
            let name = String(decoding: header.name, as: UTF8.self)
            guard header.localOffset < directory.offset else {
                throw RGBDError(.invalidImage, file: path, location: ZIPArchive.printable(name),
                                "entry offset \(header.localOffset) is beyond the entries' area (\(directory.offset) bytes)")
            }
            entries.append(ZIPArchive.Entry(name: name, method: UInt16(header.method), compressedSize: header.compressedSize,
                                            uncompressedSize: header.uncompressedSize, crc32: header.crc32,
                                            offset: header.localOffset, flags: UInt16(header.flags), nameBytes: header.name))
            at += header.size
        }
        guard at == directory.size else {
            throw invalid("central directory has \(directory.size - at) bytes after its \(directory.entryCount) entries")
        }
        return entries
    }

    /// `count` bytes at `offset`, all of them.
    private func read(at offset: Int, count: Int) throws -> [UInt8] {
        var got = 0
        let bytes = try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            got = try FileSystem.readAt(descriptor, offset: offset, into: UnsafeMutableRawBufferPointer(buffer), path: path)
            initialized = got
        }
        guard got == count else { throw invalid("file truncated while reading (\(fileSize) bytes)") }
        return bytes
    }

    private func invalid(_ what: String) -> RGBDError {
        RGBDError(.invalidImage, file: path, what)
    }
}
