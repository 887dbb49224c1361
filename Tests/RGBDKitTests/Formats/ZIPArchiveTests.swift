import Dispatch
import Foundation
import Testing
@testable import RGBDKit

/// The ZIP reader against archives Python's `zipfile` writes at test time
/// (`EncoderCases`): stored, deflated, ZIP64 extra fields, a comment, data descriptors
/// (written to a file it cannot seek in), 70,000 entries
/// (the ZIP64 end record), and hostile edits of them, each with its one-line error.
@Suite struct ZIPArchiveTests {
    /// An archive of the cases, and its manifest's entries.
    static func archive(_ name: String) throws -> (path: String, entries: [[String: Any]], directory: URL) {
        let directory = try EncoderCases.zip.get()
        let entries = try EncoderCases.manifest(directory)[name] as? [[String: Any]] ?? []
        return (directory.appendingPathComponent(name).path, entries, directory)
    }

    /// Each archive's entries, in order, with the sizes, CRC and method Python reports,
    /// and contents equal to what was written.
    @Test(arguments: ["stored.zip", "deflated.zip", "zip64.zip", "comment.zip", "streamed.zip"])
    func readsEveryEntry(name: String) throws {
        let (path, expected, directory) = try Self.archive(name)
        let archive = try ZIPArchive(path: path)
        #expect(archive.entries.count == 7 && expected.count == 7)
        for (entry, info) in zip(archive.entries, expected) {
            #expect(entry.name == info["name"] as? String)
            #expect(entry.uncompressedSize == info["size"] as? Int)
            #expect(entry.compressedSize == info["compressed"] as? Int)
            #expect(Int(entry.crc32) == info["crc"] as? Int)
            #expect(Int(entry.method) == info["method"] as? Int)
            let content = try EncoderCases.bytes(directory.appendingPathComponent(try #require(info["content"] as? String)))
            #expect(try archive.read(entry, limit: content.count) == content, "\(name): \(entry.name)")
            #expect(archive.entry(named: entry.name)?.offset == entry.offset)
        }
        #expect(archive.entry(named: "no such entry") == nil)
        #expect(archive.entries.contains { $0.method == (name == "stored.zip" ? 0 : 8) && $0.uncompressedSize > 1_000_000 })
    }

    /// A Record3D-like archive: its depth frame is an LZFSE stream of the float32 map.
    @Test func readsADepthFrameThroughLZFSE() throws {
        let (path, _, directory) = try Self.archive("deflated.zip")
        let archive = try ZIPArchive(path: path)
        let entry = try #require(archive.entry(named: "rgbd/0.depth"))
        let stream = try archive.read(entry, limit: 1 << 20)
        #expect(Array(stream.prefix(4)) == Array("bvx2".utf8))
        let depth = try LZFSE.decompress(stream, outputLimit: 256 * 192 * 4)
        let lzfseCases = try EncoderCases.lzfse.get()
        #expect(depth == (try EncoderCases.bytes(lzfseCases.appendingPathComponent("depth-256x192.raw"))))
        _ = directory
    }

    /// More than 65,535 entries: the counts come from the ZIP64 end record.
    @Test func readsTheZIP64EndRecord() throws {
        let (path, _, _) = try Self.archive("many.zip")
        let archive = try ZIPArchive(path: path)
        #expect(archive.entries.count == 70000)
        for i in [0, 1, 6, 65535, 65536, 69999] {
            let entry = try #require(archive.entry(named: "rgbd/\(i).conf"))
            let expected = Array(String(repeating: "entry \(i)\n", count: i % 7).utf8)
            #expect(try archive.read(entry, limit: 100) == expected)
        }
        #expect(archive.entries[65536].name == "rgbd/65536.conf")
    }

    /// Many threads reading entries of one archive at once get the same bytes.
    @Test func readsFromManyThreadsAtOnce() throws {
        let (path, _, _) = try Self.archive("deflated.zip")
        let archive = try ZIPArchive(path: path)
        let serial = try archive.entries.map { try archive.read($0, limit: 1 << 24) }
        let rounds = 8 * archive.entries.count
        let same = UnsafeMutableBufferPointer<Bool>.allocate(capacity: rounds)
        same.initialize(repeating: false)
        defer { same.deallocate() }
        nonisolated(unsafe) let results = same
        DispatchQueue.concurrentPerform(iterations: rounds) { i in
            let k = i % archive.entries.count
            results[i] = (try? archive.read(archive.entries[k], limit: 1 << 24)) == serial[k]
        }
        #expect(same.allSatisfy { $0 })
    }

    /// What is refused, with its one-line message naming the file (and the entry).
    @Test func refusesWhatItCannotRead() throws {
        let (stored, _, _) = try Self.archive("stored.zip")
        let (bzip2, _, _) = try Self.archive("bzip2.zip")
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rgbd-zip-hostile-\(getpid())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let original = try EncoderCases.bytes(URL(fileURLWithPath: stored))
        /// Writes `bytes` as `name` in the scratch directory; returns its path.
        func file(_ name: String, _ bytes: [UInt8]) throws -> String {
            let url = scratch.appendingPathComponent(name)
            try Data(bytes).write(to: url)
            return url.path
        }
        func openError(_ path: String) -> String? { rgbdErrorDescription { try ZIPArchive(path: path) } }
        func readError(_ path: String, _ name: String, limit: Int = 1 << 24) -> String? {
            rgbdErrorDescription {
                let archive = try ZIPArchive(path: path)
                guard let entry = archive.entry(named: name) else { return "no \(name)" }
                return try archive.read(entry, limit: limit)
            }
        }
        let archive = try ZIPArchive(path: stored)
        let text = try #require(archive.entry(named: "text/long.txt"))
        let le32 = { (bytes: [UInt8], at: Int) in Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        let directoryOffset = le32(original, original.count - 6)
        /// The central header of `entry`: the n-th header from the directory's start.
        func centralHeader(of entry: ZIPArchive.Entry) -> Int {
            var at = directoryOffset
            for e in archive.entries {
                if e.offset == entry.offset { return at }
                at += 46 + Int(original[at + 28]) + Int(original[at + 29]) << 8 + Int(original[at + 30]) + Int(original[at + 31]) << 8
                    + Int(original[at + 32]) + Int(original[at + 33]) << 8
            }
            return -1
        }
        let textData = text.offset + 30 + Int(original[text.offset + 26]) + Int(original[text.offset + 28])
        let textCentral = centralHeader(of: text)
        #expect(textCentral > 0)

        let empty = try file("empty.r3d", [])
        #expect(openError(empty) == "\(empty): empty file, not a ZIP archive")
        #expect(openError(scratch.path) == "\(scratch.path): is a directory, not a file")
        let missing = scratch.appendingPathComponent("missing.r3d").path
        #expect(openError(missing) == "\(missing): cannot open: No such file or directory")
        let truncated = try file("truncated.r3d", Array(original.dropLast(10)))
        #expect(openError(truncated) == "\(truncated): no end of central directory record (not a ZIP archive, or truncated)")
        let half = try file("half.r3d", Array(original.prefix(original.count / 2)))
        #expect(openError(half) == "\(half): no end of central directory record (not a ZIP archive, or truncated)")

        // A flipped byte in stored data: the CRC.
        var flipped = original
        flipped[textData + 1000] ^= 0x20
        let flippedPath = try file("flipped.r3d", flipped)
        #expect(readError(flippedPath, "text/long.txt") == "\(flippedPath): text/long.txt: CRC mismatch")
        // The central CRC changed alone: the local header disagrees.
        var crc = original
        crc[textCentral + 16] ^= 1
        let crcPath = try file("crc.r3d", crc)
        #expect(readError(crcPath, "text/long.txt")
                == "\(crcPath): text/long.txt: local header disagrees with the central directory (sizes or CRC)")
        // Both CRCs changed: the data's CRC differs.
        crc[text.offset + 14] ^= 1
        let bothPath = try file("crc2.r3d", crc)
        #expect(readError(bothPath, "text/long.txt") == "\(bothPath): text/long.txt: CRC mismatch")
        // An entry offset beyond the file.
        var far = original
        far.replaceSubrange((textCentral + 42)..<(textCentral + 46), with: [0x00, 0x00, 0x00, 0x7F])
        let farPath = try file("far.r3d", far)
        #expect(openError(farPath) == "\(farPath): text/long.txt: entry offset 2130706432 is beyond the entries' area (\(directoryOffset) bytes)")
        // Sizes that lie, in both headers.
        var lying = original
        for at in [textCentral + 20, textCentral + 24, text.offset + 18, text.offset + 22] { lying[at + 3] = 0x40 }
        let lyingPath = try file("lying.r3d", lying)
        let size = text.uncompressedSize | 0x4000_0000
        #expect(readError(lyingPath, "text/long.txt", limit: 1 << 31)
                == "\(lyingPath): text/long.txt: data runs past the central directory (file truncated?)")
        #expect(readError(lyingPath, "text/long.txt")
                == "\(lyingPath): text/long.txt: is \(size) bytes, more than the limit of \(1 << 24)")
        // The caller's limit, before anything is allocated.
        #expect(readError(stored, "text/long.txt", limit: text.uncompressedSize - 1)
                == "\(stored): text/long.txt: is \(text.uncompressedSize) bytes, more than the limit of \(text.uncompressedSize - 1)")
        // Encrypted (the flag in the directory), another method.
        var encrypted = original
        encrypted[textCentral + 8] |= 1
        let encryptedPath = try file("encrypted.r3d", encrypted)
        #expect(readError(encryptedPath, "text/long.txt") == "\(encryptedPath): text/long.txt: is encrypted (not supported)")
        #expect(readError(bzip2, "metadata")
                == "\(bzip2): metadata: compression method 12 is not supported (only stored and deflate)")
        // Every prefix of an archive fails cleanly.
        for length in stride(from: 0, to: 4000, by: 37) {
            let path = try file("prefix.r3d", Array(original.prefix(length)))
            let message = openError(path)
            #expect(message?.hasPrefix(path + ": ") == true && message?.contains("\n") == false, "\(message ?? "")")
        }
    }

    /// A flipped byte in a deflate stream: refused as invalid data, a wrong size or a
    /// CRC mismatch, depending on where it lands; never accepted.
    @Test func refusesACorruptDeflateStream() throws {
        let (path, _, _) = try Self.archive("deflated.zip")
        let original = try EncoderCases.bytes(URL(fileURLWithPath: path))
        let entry = try #require(try ZIPArchive(path: path).entry(named: "text/long.txt"))
        let data = entry.offset + 30 + Int(original[entry.offset + 26]) + Int(original[entry.offset + 28])
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rgbd-zip-deflate-\(getpid()).r3d")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var refused = 0
        for at in stride(from: data + 10, to: data + entry.compressedSize, by: entry.compressedSize / 20) {
            var bytes = original
            bytes[at] ^= 0x55
            try Data(bytes).write(to: scratch)
            let message = rgbdErrorDescription { try ZIPArchive(path: scratch.path).read(entry, limit: 1 << 24) }
            let prefix = "\(scratch.path): text/long.txt: "
            #expect([prefix + "invalid deflate data", prefix + "CRC mismatch",
                     prefix + "deflate data does not decode to \(entry.uncompressedSize) bytes"].contains(message), "\(message ?? "")")
            refused += 1
        }
        #expect(refused >= 19)
    }
}
