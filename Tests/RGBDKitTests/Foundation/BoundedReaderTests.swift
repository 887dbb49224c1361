import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RGBDKit

/// The bounded reader (`FileSystem`): files read up to their limit and refused beyond it,
/// sparse and special files refused by their size and type without blocking, and the
/// directories of a failed run removed.
@Suite struct BoundedReaderTests {
    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rgbd-harden-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func readsAFileUpToItsLimitAndRefusesItBeyond() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/file.bin"
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 31) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try FileSystem.readFile(path) == bytes)
        #expect(try FileSystem.readFile(path, limit: 1000) == bytes)
        #expect(try FileSystem.readPrefix(path, count: 10) == Array(bytes.prefix(10)))
        #expect(try FileSystem.readPrefix(path, count: 5000) == bytes)
        #expect(throws: RGBDError(.io, file: path, "is 1000 bytes, more than rgbd reads (999 bytes)")) {
            try FileSystem.readFile(path, limit: 999)
        }
    }

    @Test func aSparseFileIsRefusedFromItsSize() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/huge.jpg"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(truncate(path, 1 << 40) == 0)
        let start = Date()
        #expect(throws: RGBDError(.io, file: path, "is 1099511627776 bytes, more than rgbd reads (512 MiB)")) {
            try FileSystem.readFile(path)
        }
        #expect(Date().timeIntervalSince(start) < 1)
        // Its first bytes are still readable (a sniffer's look), without reading the rest.
        #expect(try FileSystem.readPrefix(path, count: 4) == [0, 0, 0, 0])
    }

    @Test func specialFilesAreRefusedByTypeWithoutBlocking() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/pipe.json"
        #expect(mkfifo(fifo, 0o644) == 0)
        let start = Date()
        #expect(throws: RGBDError(.io, file: fifo, "is a FIFO (named pipe), not a regular file")) {
            try FileSystem.readFile(fifo)
        }
        #expect(throws: RGBDError(.io, file: fifo, "is a FIFO (named pipe), not a regular file")) {
            try FileSystem.readPrefix(fifo, count: 64)
        }
        #expect(FileFormat(path: fifo) == nil)
        #expect(Date().timeIntervalSince(start) < 1)
        #expect(throws: RGBDError(.io, file: "/dev/zero", "is a character device, not a regular file")) {
            try FileSystem.readFile("/dev/zero")
        }
        #expect(throws: RGBDError(.io, file: directory, "is a directory, not a file")) {
            try FileSystem.readFile(directory)
        }
        #expect(throws: RGBDError.self) { try FileSystem.readFile(directory + "/absent") }
    }

    @Test func aFailedRunRemovesTheDirectoriesItMade() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let files = StagedFiles()
            try files.createDirectory(directory + "/a/b/c")
            try files.stage(directory + "/a/b/c/x.txt", bytes: [1, 2, 3])
            #expect(FileManager.default.fileExists(atPath: directory + "/a/b/c"))
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/a"))
        // Committed, everything stays; a directory that existed is never removed.
        try FileManager.default.createDirectory(atPath: directory + "/kept", withIntermediateDirectories: true)
        do {
            let files = StagedFiles()
            try files.createDirectory(directory + "/kept")
            try files.createDirectory(directory + "/made")
            try files.stage(directory + "/made/x.txt", bytes: [1])
            try files.commit()
        }
        #expect(FileManager.default.fileExists(atPath: directory + "/kept"))
        #expect(try FileSystem.readFile(directory + "/made/x.txt") == [1])
    }
}
