import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RGBDFoundation
@testable import RGBDCapture
@testable import RGBDRectification
@testable import RGBDMarkers
@testable import RGBDScan
@testable import RGBDReconstruction
@testable import RGBDOutput
@testable import RGBDKit

/// Issue 28: sizes claimed by headers checked before anything is allocated, the bounded
/// reader, calibration plausibility, and the numbers of the JSON and the XMP.
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

@Suite struct ClaimedSizeTests {
    /// A PNG claiming `width × height` pixels of `bitDepth`-bit gray, with a zlib stream
    /// of `rows` (filtered rows) as its image data.
    static func png(width: Int, height: Int, bitDepth: UInt8 = 16, rows: [UInt8]) throws -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
        }
        let header = bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [bitDepth, 0, 0, 0, 0]
        let zlib = try PNGCodec.zlibStreamISAL(rows, level: 1)
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlib)
            + chunk("IEND", [])
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    @Test func aPNGClaimingMorePixelsThanTheLimitIsRefusedFromItsHeader() throws {
        let png = try Self.png(width: 1_000_000, height: 1_000_000, rows: [UInt8](repeating: 0, count: 64))
        #expect(throws: RGBDError(.invalidImage, file: "d.png",
                                  "the PNG claims 1000000×1000000 pixels, more than rgbd's limit for a depth image (16 megapixels)")) {
            try PNGCodec.decodeGray16(png, file: "d.png")
        }
    }

    @Test func aPNGClaimingMoreThanDeflateCanMakeOfItsBytesIsRefused() throws {
        // 4000×4000 is within the limit, but 32 MB cannot come out of a few dozen bytes.
        let png = try Self.png(width: 4000, height: 4000, rows: [UInt8](repeating: 0, count: 64))
        #expect(throws: RGBDError.self) { try PNGCodec.decodeGray16(png, file: "d.png") }
        do {
            _ = try PNGCodec.decodeGray16(png, file: "d.png")
        } catch let error as RGBDError {
            #expect(error.description.hasPrefix("d.png: the PNG claims 4000×4000 pixels in \(png.count) bytes"), "\(error)")
        }
        // The bound is deflate's: a real, highly compressible image just within it decodes.
        let (width, height) = (1000, 1000)
        let rows = [UInt8](repeating: 0, count: height * (1 + width * 2))
        let flat = try Self.png(width: width, height: height, rows: rows)
        #expect(Double(rows.count) / Double(flat.count) > 100)   // far beyond any photo's ratio, within deflate's
        let decoded = try PNGCodec.decodeGray16(flat, file: "flat.png")
        #expect(decoded.width == width && decoded.height == height && decoded.samples.allSatisfy { $0 == 0 })
        #expect(throws: Never.self) {
            try PNGCodec.checkPlausible(width: width, height: height, bitsPerPixel: 16, byteCount: 2000,
                                        maxPixels: InputLimits.maxDepthPixels, file: nil)
        }
        #expect(throws: RGBDError.self) {
            try PNGCodec.checkPlausible(width: width, height: height, bitsPerPixel: 16, byteCount: 1900,
                                        maxPixels: InputLimits.maxDepthPixels, file: nil)
        }
    }

    /// A little-endian float32 TIFF: one strip of `data` (compressed with `compression`),
    /// claiming `width × height`.
    static func tiff(width: Int, height: Int, compression: Int = 1, data: [UInt8]) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16((v >> 16) & 0xFFFF) }
        let entries: [(Int, Int, Int)] = [(256, 4, width), (257, 4, height), (258, 3, 32), (259, 3, compression),
                                          (262, 3, 1), (273, 4, 8), (277, 3, 1), (278, 4, height),
                                          (279, 4, data.count), (339, 3, 3)]
        var ifd = le16(entries.count)
        for (tag, type, value) in entries { ifd += le16(tag) + le16(type) + le32(1) + le32(value) }
        ifd += le32(0)
        return [0x49, 0x49, 0x2A, 0x00] + le32(8 + data.count) + data + ifd
    }

    @Test(arguments: [(200_000, 200_000), (32768, 16384)])
    func aTIFFClaimingMorePixelsThanTheLimitIsRefusedFromItsHeader(width: Int, height: Int) throws {
        let tiff = Self.tiff(width: width, height: height, data: [UInt8](repeating: 0, count: 16))
        #expect(tiff.count == 150)
        #expect(throws: RGBDError(.invalidImage, file: "d.tiff",
                                  "the depth TIFF claims \(width)×\(height) pixels, more than rgbd's limit for a depth image (16 megapixels)")) {
            try TIFFCodec.readFloat(tiff, file: "d.tiff")
        }
    }

    @Test func aTIFFClaimingMoreThanItsBytesHoldIsRefused() throws {
        let tiff = Self.tiff(width: 4000, height: 4000, data: [UInt8](repeating: 0, count: 16))
        #expect(throws: RGBDError(.invalidImage, file: "d.tiff",
                                  "the depth TIFF claims 4000×4000 float pixels (64000000 bytes) in a file of 150 bytes, more than its compression (scheme 1) can hold: its header is corrupt")) {
            try TIFFCodec.readFloat(tiff, file: "d.tiff")
        }
        // A sound one reads, from memory, values as stored.
        let values: [Float] = [1.5, 2, .nan, 0, 3.25, 1000]
        let sound = Self.tiff(width: 3, height: 2, data: values.flatMap { v in withUnsafeBytes(of: v.bitPattern.littleEndian, Array.init) })
        let map = try TIFFCodec.readFloat(sound, file: "d.tiff")
        #expect(map.width == 3 && map.height == 2 && identicalBits(map.samples, values))
    }
}

@Suite struct CalibrationPlausibilityTests {
    /// The sample's calibration (4032×3024) with the given changes, as capture JSON.
    static func json(fx: String = "2900", cx: String = "2016.3", center: String = "2015.53",
                     pixelSize: String = "0.0014") -> [UInt8] {
        Array("""
            {"calibration_data": {"intrinsic_matrix": [[\(fx), 0, 0], [0, 2900, 0], [\(cx), 1511.6, 1]],
             "pixel_size": \(pixelSize), "intrinsic_matrix_reference_dimensions": [4032, 3024],
             "lens_distortion_center": [\(center), 1511.21], "lens_distortion_lookup_table": [0, -0.01, -0.02]},
             "depth_data": [[1, 2], [3, 4]]}
            """.utf8)
    }

    static func message(_ bytes: [UInt8]) -> String? {
        do {
            _ = try CaptureReader.parse(bytes, file: "c.json")
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func theSampleIsPlausible() throws {
        #expect(Self.message(Self.json()) == nil)
        let contents = try CaptureReader.parse(Self.json(), file: "c.json")
        #expect(CalibrationPlausibility.problem(of: contents.calibration) == nil)
    }

    @Test func implausibleValuesAreRefusedNamingTheKey() {
        let cases: [([UInt8], String)] = [
            (Self.json(fx: "5e-324"), "c.json: calibration_data.intrinsic_matrix: the focal lengths (fx 5e-324, fy 2900) must lie between 40.32 and 403200 pixels"),
            (Self.json(fx: "1e308", cx: "1e308"), "c.json: calibration_data.intrinsic_matrix: the focal lengths (fx 1e+308, fy 2900)"),
            (Self.json(fx: "40"), "c.json: calibration_data.intrinsic_matrix: the focal lengths (fx 40, fy 2900)"),
            (Self.json(cx: "1e308"), "c.json: calibration_data.intrinsic_matrix: the principal point (1e+308, 1511.6) is far outside the 4032×3024 reference image"),
            (Self.json(cx: "-4033"), "c.json: calibration_data.intrinsic_matrix: the principal point (-4033, 1511.6)"),
            (Self.json(center: "9000"), "c.json: calibration_data.lens_distortion_center: (9000.0, 1511.21) is far outside"),
            (Self.json(pixelSize: "2"), "c.json: calibration_data.pixel_size: the pixel size 2 mm is not plausible"),
            (Self.json(pixelSize: "1e309"), "c.json: calibration_data.pixel_size: expected a positive number of millimeters, found 1e309, beyond the range of a double"),
            (Self.json(pixelSize: "1" + String(repeating: "0", count: 100_000)), "c.json: calibration_data.pixel_size: expected a positive number of millimeters, found an integer beyond 64 bits"),
            (Self.json(cx: "1e400"), "c.json: calibration_data.intrinsic_matrix[2][0]: expected a finite number, found 1e400, beyond the range of a double"),
            (Self.json(cx: "-" + String(repeating: "9", count: 30)), "c.json: calibration_data.intrinsic_matrix[2][0]: expected a finite number, found an integer beyond 64 bits"),
        ]
        for (bytes, expected) in cases {
            let message = Self.message(bytes)
            #expect(message?.hasPrefix(expected) == true, "\(message ?? "accepted"), expected \(expected)")
            #expect(message?.contains("\n") != true)
        }
        // The edges are accepted: 1/100 and 100 times the larger side, a point one image away.
        #expect(Self.message(Self.json(fx: "40.32")) == nil)
        #expect(Self.message(Self.json(fx: "403200")) == nil)
        #expect(Self.message(Self.json(cx: "-4032")) == nil)
        #expect(Self.message(Self.json(pixelSize: "1")) == nil)
    }

    /// An XMP packet of a Portrait photo's depth image, the sample's values with changes.
    static func xmp(_ changes: [String: String?]) -> PortraitXMP {
        var fields = [
            "IntrinsicMatrix": "104.0 0 0 0 104.0 0 64.5 47.65 1", "IntrinsicMatrixReferenceWidth": "128",
            "IntrinsicMatrixReferenceHeight": "96", "LensDistortionCenterOffsetX": "63.75",
            "LensDistortionCenterOffsetY": "48.7", "PixelSize": "0.0595",
            "LensDistortionCoefficients": "0.0 -0.1475217 0.004215382 -2.116006e-05 0.0 0.0 0.0 0.0",
        ]
        for (key, value) in changes { fields[key] = value }
        return PortraitXMP(fields: fields)
    }

    static func xmpMessage(_ changes: [String: String?]) -> String? {
        do {
            _ = try PortraitReader.calibration(xmp(changes), imageWidth: 128, imageHeight: 96, file: "p.heic")
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func portraitValuesAreCheckedAndNamedByTheirOwnField() {
        #expect(Self.xmpMessage([:]) == nil)
        let cases: [([String: String?], String)] = [
            (["IntrinsicMatrix": "5e-324 0 0 0 104 0 64.5 47.65 1"], "p.heic: IntrinsicMatrix: the focal lengths (fx 5e-324, fy 104)"),
            (["IntrinsicMatrix": "1e308 0 0 0 104 0 1e308 47.65 1"], "p.heic: IntrinsicMatrix: the focal lengths (fx 1e+308"),
            (["IntrinsicMatrix": "104 0 0 0 104 0 NaN 47.65 1"], "p.heic: IntrinsicMatrix: expected a finite number, found NaN"),
            (["IntrinsicMatrixReferenceWidth": "NaN"], "p.heic: IntrinsicMatrixReferenceWidth: expected a finite number, found NaN"),
            (["IntrinsicMatrixReferenceWidth": nil], "p.heic: IntrinsicMatrixReferenceWidth: missing, but IntrinsicMatrixReferenceHeight is there"),
            (["IntrinsicMatrixReferenceHeight": "abc"], "p.heic: IntrinsicMatrixReferenceHeight: expected a number, found \"abc\""),
            (["LensDistortionCenterOffsetX": "1e300"], "p.heic: LensDistortionCenterOffsetX: the distortion center (1e+300, 48.7) is far outside"),
            (["LensDistortionCenterOffsetY": "inf"], "p.heic: LensDistortionCenterOffsetY: expected a finite number, found inf"),
            (["LensDistortionCenterOffsetY": nil], "p.heic: LensDistortionCenterOffsetY: missing"),
            (["PixelSize": "inf"], "p.heic: PixelSize: expected a finite number, found inf"),
            (["PixelSize": "-0.01"], "p.heic: PixelSize: the pixel size -0.01 mm is not plausible"),
            (["LensDistortionCoefficients": "0 NaN"], "p.heic: LensDistortionCoefficients: expected a finite number, found NaN"),
            (["LensDistortionCoefficients": nil], "p.heic: LensDistortionCoefficients: missing"),
        ]
        for (changes, expected) in cases {
            let message = Self.xmpMessage(changes)
            #expect(message?.hasPrefix(expected) == true, "\(changes): \(message ?? "accepted"), expected \(expected)")
        }
    }

    @Test func portraitRangeFieldsAreNamedByTheirOwnField() {
        func message(_ fields: [String: String]) -> String? {
            do {
                _ = try PortraitReader.depthInfo(PortraitXMP(fields: fields), bits: 8, container: "test", file: "p.heic")
                return nil
            } catch {
                return "\(error)"
            }
        }
        let base = ["AuxiliaryImageType": "disparity", "FloatMinValue": "0.5", "FloatMaxValue": "1.0"]
        #expect(message(base) == nil)
        #expect(message(base.merging(["FloatMaxValue": "NaN"]) { $1 }) == "p.heic: FloatMaxValue: expected a finite number, found NaN")
        #expect(message(base.merging(["FloatMinValue": "x"]) { $1 }) == "p.heic: FloatMinValue: expected a number, found \"x\"")
        #expect(message(base.merging(["IntMaxValue": "-inf"]) { $1 }) == "p.heic: IntMaxValue: expected a finite number, found -inf")
        #expect(message(base.filter { $0.key != "FloatMaxValue" })?.hasPrefix("p.heic: FloatMaxValue: missing") == true)
    }
}
