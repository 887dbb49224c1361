import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RGBDKit

/// Hostile files (issue 28's reproducers), each a file of a few hundred bytes (or a sparse
/// or special file) made here, through the real `rgbd` binary: with at most 200 MB of private memory
/// and a time limit, each is refused with status 1 (no signal, no hang) and one error
/// line naming the file (and the key, for calibration values), and the other capture of
/// the batch is still processed.
@Suite struct HostileFilesCLITests {
    /// A crafted capture `bad` beside a sound capture `good`, in `directory`.
    struct Reproducer: CustomStringConvertible, Sendable {
        var name: String
        /// Makes `bad.json` (and its photo or depth image) in the directory, given the
        /// sound capture's JSON text.
        var make: @Sendable (_ directory: String, _ soundJSON: String) throws -> Void
        /// What the one error line must contain (the file, and the key).
        var expected: [String]

        var description: String { name }
    }

    /// The JSON of a sound capture without its depth map (the depth comes from an image beside it).
    static func withoutDepth(_ json: String) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        object["depth_data"] = nil
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    /// The JSON of a sound capture with `fx` (and `cx`) replaced in its column-major
    /// intrinsic matrix.
    static func withIntrinsics(_ json: String, fx: Double, cx: Double?) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        var calibration = try #require(object["calibration_data"] as? [String: Any])
        var columns = try #require(calibration["intrinsic_matrix"] as? [[Double]])
        columns[0][0] = fx
        if let cx { columns[2][0] = cx }
        calibration["intrinsic_matrix"] = columns
        object["calibration_data"] = calibration
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    static let reproducers: [Reproducer] = [
        Reproducer(name: "depth PNG claiming 1000000×1000000", make: { directory, json in
            try withoutDepth(json).write(toFile: directory + "/bad.json", atomically: true, encoding: .utf8)
            try Data(Crafted.png(width: 1_000_000, height: 1_000_000)).write(to: URL(fileURLWithPath: directory + "/bad.depth.png"))
        }, expected: ["bad.depth.png:", "1000000×1000000"]),
        Reproducer(name: "depth TIFF claiming 200000×200000", make: { directory, json in
            try withoutDepth(json).write(toFile: directory + "/bad.json", atomically: true, encoding: .utf8)
            try Data(Crafted.tiff(width: 200_000, height: 200_000)).write(to: URL(fileURLWithPath: directory + "/bad.depth.tiff"))
        }, expected: ["bad.depth.tiff:", "200000×200000"]),
        Reproducer(name: "depth TIFF claiming 32768×16384", make: { directory, json in
            try withoutDepth(json).write(toFile: directory + "/bad.json", atomically: true, encoding: .utf8)
            try Data(Crafted.tiff(width: 32768, height: 16384)).write(to: URL(fileURLWithPath: directory + "/bad.depth.tiff"))
        }, expected: ["bad.depth.tiff:", "32768×16384"]),
        Reproducer(name: "depth TIFF claiming 4000×4000 in 150 bytes", make: { directory, json in
            try withoutDepth(json).write(toFile: directory + "/bad.json", atomically: true, encoding: .utf8)
            try Data(Crafted.tiff(width: 4000, height: 4000)).write(to: URL(fileURLWithPath: directory + "/bad.depth.tiff"))
        }, expected: ["bad.depth.tiff:", "4000×4000", "in a file of 150 bytes"]),
        Reproducer(name: "1 TiB sparse photo", make: { directory, json in
            try json.write(toFile: directory + "/bad.json", atomically: true, encoding: .utf8)
            try Crafted.sparse(directory + "/bad.jpg", bytes: 1 << 40)
        }, expected: ["bad.jpg:", "1099511627776 bytes", "512 MiB"]),
        Reproducer(name: "2 GiB sparse photo", make: { directory, json in
            try json.write(toFile: directory + "/bad.json", atomically: true, encoding: .utf8)
            try Crafted.sparse(directory + "/bad.jpg", bytes: 2 << 30)
        }, expected: ["bad.jpg:", "2147483648 bytes"]),
        Reproducer(name: "focal length 5e-324", make: { directory, json in
            try withIntrinsics(json, fx: Double.leastNonzeroMagnitude, cx: nil).write(toFile: directory + "/bad.json", atomically: true, encoding: .utf8)
        }, expected: ["bad.json: calibration_data.intrinsic_matrix:", "focal lengths", "5e-324"]),
        Reproducer(name: "fx = cx = 1e308", make: { directory, json in
            try withIntrinsics(json, fx: 1e308, cx: 1e308).write(toFile: directory + "/bad.json", atomically: true, encoding: .utf8)
        }, expected: ["bad.json: calibration_data.intrinsic_matrix:", "1e+308"]),
        Reproducer(name: "pixel size 1e309", make: { directory, json in
            try Crafted.pixelSize(json, "1e309").write(toFile: directory + "/bad.json", atomically: true, encoding: .utf8)
        }, expected: ["bad.json: calibration_data.pixel_size:", "1e309, beyond the range of a double"]),
        Reproducer(name: "pixel size of 100000 digits", make: { directory, json in
            try Crafted.pixelSize(json, "1" + String(repeating: "0", count: 100_000))
                .write(toFile: directory + "/bad.json", atomically: true, encoding: .utf8)
        }, expected: ["bad.json: calibration_data.pixel_size:", "an integer beyond 64 bits"]),
        Reproducer(name: "FIFO as the photo", make: { directory, json in
            try json.write(toFile: directory + "/bad.json", atomically: true, encoding: .utf8)
            try Crafted.fifo(directory + "/bad.jpg")
        }, expected: ["bad.jpg: is a FIFO"]),
        Reproducer(name: "FIFO as the JSON", make: { directory, _ in
            try Crafted.fifo(directory + "/bad.json")
            try FileManager.default.copyItem(atPath: directory + "/good.jpg", toPath: directory + "/bad.jpg")
        }, expected: ["bad.json: is a FIFO"]),
        Reproducer(name: "FIFO as a Portrait photo", make: { directory, _ in
            try Crafted.fifo(directory + "/bad.heic")
        }, expected: ["bad.heic: is a FIFO"]),
    ]

    /// The input naming the crafted capture (`bad.json`, or the Portrait photo).
    static func badInput(in directory: String) -> String {
        FileManager.default.fileExists(atPath: directory + "/bad.heic") ? directory + "/bad.heic" : directory + "/bad.json"
    }

    /// `rgbd` limited to 200 MB of private memory (CLITests.run(_:memoryLimit:)) and
    /// killed after 60 s, with the time it took.
    static func run(_ arguments: [String]) throws -> (CLITests.Run, seconds: Double) {
        let start = Date()
        let limit = CLITests.sanitized ? "" : "ulimit -d 200000 && "
        let run = try CLITests.run(["-c", limit + "exec timeout -k 5 60 \"$0\" \"$@\"", CLITests.binary] + arguments,
                                   executable: "/bin/sh")
        return (run, Date().timeIntervalSince(start))
    }

    @Test(arguments: reproducers)
    func refusedInOneLineAndTheBatchGoesOn(reproducer: Reproducer) throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let good = try CLITests.writeCapture(in: directory, stem: "good")
        try reproducer.make(directory, try String(contentsOfFile: good.json, encoding: .utf8))
        let bad = Self.badInput(in: directory)
        if bad.hasSuffix(".json"), !FileManager.default.fileExists(atPath: directory + "/bad.jpg") {
            try FileManager.default.copyItem(atPath: good.image, toPath: directory + "/bad.jpg")
        }

        let (rectify, rectifySeconds) = try Self.run(["rectify", bad, good.json, "-o", directory + "/out", "-q"])
        let (info, _) = try Self.run(["info", bad, good.json])
        for (command, run) in [("rectify", rectify), ("info", info)] {
            // Status 1: refused; a signal would be 128 + n (through timeout), a time-out 124 or 137.
            #expect(run.status == 1, "\(command): status \(run.status): \(run.stderr.suffix(1500))")
            let errors = run.stderr.split(separator: "\n").filter { $0.contains("error:") }
            #expect(errors.count == 1, "\(command): \(run.stderr.suffix(1500))")
            for part in reproducer.expected {
                #expect(errors.first?.contains(part) == true, "\(command): no “\(part)” in \(run.stderr.suffix(1500))")
            }
            #expect(run.stderr.contains("1 of 2 captures done, 1 failed"), "\(command): \(run.stderr.suffix(1500))")
        }
        #expect(rectifySeconds < 10, "rectify took \(rectifySeconds) s")
        // The sound capture was rectified, the crafted one left nothing.
        #expect(CLITests.files(in: directory + "/out") == ["good.color.png", "good.depth.png", "good.depth.tiff",
                                                          "good.intrinsics.json"])
        #expect(info.stdout.contains("good.json"))
    }

    /// A FIFO is refused by its type without being opened for blocking reads, as photo,
    /// JSON and Portrait photo, by `rectify` and `info`. Opening one would block forever
    /// (no writer), which `run`'s 60 s limit turns into status 124; the answer must also
    /// come well before that limit. The bound is 10 s, not a performance figure: a run
    /// takes about 0.1 s, and over 1 s when the other test processes load the machine.
    @Test func aFIFOIsAnsweredWithoutWaiting() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let good = try CLITests.writeCapture(in: directory, stem: "good")
        try Crafted.fifo(directory + "/pipe.heic")
        try Crafted.fifo(directory + "/pipe.json")
        try Crafted.fifo(directory + "/photo.jpg")
        let cases: [([String], String)] = [
            (["info", directory + "/pipe.heic"], "pipe.heic: is a FIFO"),
            (["rectify", directory + "/pipe.heic", "-o", directory + "/out"], "pipe.heic: is a FIFO"),
            (["info", directory + "/pipe.json", "--image", good.image], "pipe.json: is a FIFO"),
            (["rectify", good.json, "--image", directory + "/photo.jpg", "-o", directory + "/out"], "photo.jpg: is a FIFO"),
            (["cloud", good.json, "--image", directory + "/photo.jpg", "-o", directory + "/out.ply"], "photo.jpg: is a FIFO"),
        ]
        for (arguments, expected) in cases {
            let (run, seconds) = try Self.run(arguments)
            #expect(run.status == 1 && run.stderr.contains(expected), "\(arguments): \(run.status) \(run.stderr)")
            #expect(seconds < 10, "\(arguments): \(seconds) s")
        }
    }

    /// A photo that fails only when decoded (a truncated JPEG, whose header is sound)
    /// leaves no output directory behind, not even the parents `rectify` created.
    @Test func aPhotoFailingAtDecodeLeavesNoDirectory() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let good = try CLITests.writeCapture(in: directory, stem: "shot")
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: good.image))
        try jpeg.prefix(jpeg.count / 3).write(to: URL(fileURLWithPath: good.image))
        let output = directory + "/made/for/it"
        let run = try CLITests.run(["rectify", good.json, "-o", output])
        #expect(run.status == 1 && run.stderr.contains("shot.jpg: cannot decode JPEG"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/made"), "\(CLITests.files(in: directory))")
        // An output directory that existed stays.
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        #expect(try CLITests.run(["rectify", good.json, "-o", output]).status == 1)
        #expect(FileManager.default.fileExists(atPath: output) && CLITests.files(in: output).isEmpty)
    }
}

/// Crafted inputs, made at test time.
enum Crafted {
    /// A PNG claiming `width × height` 16-bit gray pixels, with 64 zero bytes of image data.
    static func png(width: Int, height: Int) -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
        }
        let header = bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [16, 0, 0, 0, 0]
        let idat: [UInt8] = [120, 156, 99, 96, 160, 61, 0, 0, 0, 64, 0, 1]  // zlib of 64 zero bytes
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", idat)
            + chunk("IEND", [])
    }

    /// A 150-byte little-endian float32 TIFF claiming `width × height`, one uncompressed
    /// strip of 16 bytes.
    static func tiff(width: Int, height: Int) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16((v >> 16) & 0xFFFF) }
        let entries: [(Int, Int, Int)] = [(256, 4, width), (257, 4, height), (258, 3, 32), (259, 3, 1), (262, 3, 1),
                                          (273, 4, 8), (277, 3, 1), (278, 4, height), (279, 4, 16), (339, 3, 3)]
        var ifd = le16(entries.count)
        for (tag, type, value) in entries { ifd += le16(tag) + le16(type) + le32(1) + le32(value) }
        ifd += le32(0)
        return [0x49, 0x49, 0x2A, 0x00] + le32(8 + 16) + [UInt8](repeating: 0, count: 16) + ifd
    }

    /// A sparse file of `bytes` bytes (no disk space used).
    static func sparse(_ path: String, bytes: Int) throws {
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(truncate(path, off_t(bytes)) == 0, "cannot make \(path) \(bytes) bytes")
    }

    /// A FIFO (named pipe) nobody writes to.
    static func fifo(_ path: String) throws {
        #expect(mkfifo(path, 0o644) == 0, "cannot make the FIFO \(path)")
    }

    /// A capture JSON (as `SyntheticCapture` writes it) with its pixel size written as `text`.
    static func pixelSize(_ json: String, _ text: String) throws -> String {
        let pattern = try NSRegularExpression(pattern: "\"pixel_size\" : [0-9.eE+-]+")
        let range = NSRange(json.startIndex..., in: json)
        #expect(pattern.firstMatch(in: json, range: range) != nil, "no pixel_size in the JSON")
        return pattern.stringByReplacingMatches(in: json, range: range, withTemplate: "\"pixel_size\" : \(text)")
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    /// CRC-32 (PNG's, ISO 3309).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
