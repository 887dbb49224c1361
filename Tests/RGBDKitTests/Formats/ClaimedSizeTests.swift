import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RGBDFoundation
@testable import RGBDKit

/// Sizes claimed by image headers (PNG, TIFF) checked before anything is allocated.
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
