import Foundation
import Testing
@testable import RGBDKit
@testable import RGBDSynth

/// The EXIF reader against real iPhone photos' published values (ExifTool's), EXIF
/// written by RGBDSynth's own writer in both byte orders, and hostile blocks.
struct EXIFTests {
    static let fixtures = Path.join(Path.directory(of: Path.directory(of: #filePath)), "Fixtures/exif")

    static func fixture(_ name: String) throws -> EXIFMetadata {
        EXIFMetadata(tiff: try FileSystem.readFile(Path.join(fixtures, name)))
    }

    /// What ExifTool 12.57 prints with `-n` for each fixture (Fixtures/exif/README.md).
    struct Published {
        var file: String
        var latitude: Double?, longitude: Double?, altitude: Double?, direction: Double?, error: Double?
        var time: String?
        var orientation: Int
        var model: String
        var lens: String?
        var acceleration: SIMD3<Double>?
    }

    static let published: [Published] = [
        Published(file: "IMG_1034.exif", latitude: 23.1779166666667, longitude: 113.394316666667, altitude: 42.81033687,
                  direction: 25.2718509, error: 65, time: "2018-02-05T07:11:43.07Z", orientation: 1, model: "iPhone 8",
                  lens: "iPhone 8 back camera 3.99mm f/1.8", acceleration: SIMD3(-0.9329320722, 0.01083472903, -0.3500785531)),
        Published(file: "Issue_263.exif", latitude: 38.6995388888889, longitude: -9.20774722222222, altitude: 14.00004578,
                  direction: 79.49293513, error: 2000, time: nil, orientation: 6, model: "iPhone XR",
                  lens: "iPhone XR back camera 4.25mm f/1.8", acceleration: SIMD3(-0.01794050261, -1.010896206, -0.06715970487)),
        // GPSDateStamp is the malformed "2014:09:259": the time is given without a date.
        Published(file: "Apple_iPhone_6.exif", latitude: 51.7624083333333, longitude: -0.317891666666667, altitude: 111.2610442,
                  direction: 23.25405093, error: nil, time: "13:05:12.05Z", orientation: 1, model: "iPhone 6",
                  lens: "iPhone 6 back camera 4.15mm f/2.2", acceleration: SIMD3(-0.9918039505, -0.05075210233, 0.126052234)),
        Published(file: "IMG_2927.exif", latitude: nil, longitude: nil, altitude: nil, direction: nil, error: nil, time: nil,
                  orientation: 1, model: "iPhone 11 Pro", lens: "iPhone 11 Pro back triple camera 4.25mm f/1.8",
                  acceleration: SIMD3(-0.09963975105, -0.9882155061, -0.06513976303)),
        Published(file: "Apple_iPhone_4.exif", latitude: 41.853, longitude: 12.4888333333333, altitude: nil,
                  direction: 177.5577889, error: nil, time: "14:33:35.62Z", orientation: 1, model: "iPhone 4", lens: nil,
                  acceleration: nil),
    ]

    /// ExifTool prints 10 to 15 significant digits.
    static func agree(_ a: Double?, _ b: Double?, _ tolerance: Double = 1e-8) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): abs(a - b) <= tolerance * max(1, abs(b))
        default: false
        }
    }

    @Test(arguments: published) func realPhotosGiveExifToolsValues(_ expected: Published) throws {
        let exif = try Self.fixture(expected.file)
        #expect(exif.warnings.isEmpty, "\(exif.warnings)")
        #expect(exif.make == "Apple")
        #expect(exif.model == expected.model)
        #expect(exif.lensModel == expected.lens)
        #expect(exif.orientation == expected.orientation)
        #expect(Self.agree(exif.gps?.latitude, expected.latitude))
        #expect(Self.agree(exif.gps?.longitude, expected.longitude))
        #expect(Self.agree(exif.gps?.altitude, expected.altitude))
        #expect(Self.agree(exif.gps?.imageDirection, expected.direction))
        #expect(exif.gps?.imageDirectionReference == (expected.direction == nil ? nil : "T"))
        #expect(Self.agree(exif.gps?.horizontalError, expected.error))
        #expect(exif.gps?.time == expected.time)
        for axis in 0..<3 {
            #expect(Self.agree(exif.accelerationVector?[axis], expected.acceleration?[axis], 1e-9))
        }
    }

    /// ExifTool itself, run on the fixtures when it is installed (bootstrap.sh installs it).
    @Test(.enabled(if: Self.exifTool != nil)) func exifToolAgreesOnEveryFixture() throws {
        let tool = try #require(Self.exifTool)
        for expected in Self.published {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = ["-n", "-j", "-GPSLatitude", "-GPSLongitude", "-GPSAltitude", "-GPSImgDirection",
                                 "-GPSHPositioningError", "-AccelerationVector", "-Orientation",
                                 Path.join(Self.fixtures, expected.file)]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let list = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
            let tags = try #require(list.first)
            let exif = try Self.fixture(expected.file)
            #expect(Self.agree(exif.gps?.latitude, tags["GPSLatitude"] as? Double), "\(expected.file)")
            #expect(Self.agree(exif.gps?.longitude, tags["GPSLongitude"] as? Double), "\(expected.file)")
            #expect(Self.agree(exif.gps?.altitude, tags["GPSAltitude"] as? Double), "\(expected.file)")
            #expect(Self.agree(exif.gps?.imageDirection, tags["GPSImgDirection"] as? Double), "\(expected.file)")
            #expect(Self.agree(exif.gps?.horizontalError, (tags["GPSHPositioningError"] as? NSNumber)?.doubleValue), "\(expected.file)")
            #expect(exif.orientation == tags["Orientation"] as? Int)
            let vector = (tags["AccelerationVector"] as? String)?.split(separator: " ").compactMap { Double($0) }
            #expect(vector?.count ?? 3 == 3)
            for axis in 0..<3 {
                #expect(Self.agree(exif.accelerationVector?[axis], vector?[axis], 1e-9), "\(expected.file)")
            }
        }
    }

    static var exifTool: String? {
        ["/usr/bin/exiftool", "/usr/local/bin/exiftool", "/opt/homebrew/bin/exiftool"].first { FileSystem.exists($0) }
    }

    /// Pitch and roll of real photos, against what they show: IMG_1034 looks down at a desk
    /// (about 20° below the horizon) with the phone level; Issue 263 was held in portrait,
    /// with the floor toward the stored pixels' right edge (+x), looking nearly level.
    @Test func realPhotosPitchAndRollMatchWhatTheyShow() throws {
        let desk = try #require(GeoTag(exif: try Self.fixture("IMG_1034.exif"), width: 4032, height: 3024).gravity)
        #expect(desk.pitch < -15 && desk.pitch > -25, "\(desk.pitch)")
        #expect(abs(desk.roll) < 3, "\(desk.roll)")
        #expect(abs(desk.magnitude - 1) < 0.01)
        let church = try #require(GeoTag(exif: try Self.fixture("Issue_263.exif"), width: 4032, height: 3024).gravity)
        #expect(abs(church.roll - 90) < 5, "\(church.roll)")
        #expect(abs(church.pitch) < 10, "\(church.pitch)")
        // The same vector with the pixels in portrait (rotated after capture): not used, said.
        let rotated = GeoTag(exif: try Self.fixture("Issue_263.exif"), width: 3024, height: 4032)
        #expect(rotated.gravity == nil)
        #expect(rotated.warnings.contains { $0.contains("portrait") })
        #expect(rotated.location != nil)
    }

    /// What RGBDSynth's writer stores, read back in both byte orders, with the signs of
    /// the south, west and below-sea-level references.
    @Test(arguments: [false, true]) func syntheticEXIFReadsBackInBothByteOrders(_ little: Bool) throws {
        var written = SyntheticEXIF()
        written.littleEndian = little
        written.latitude = -33.8567844
        written.longitude = -151.2152967
        written.altitude = -12.5
        written.horizontalError = 4.25
        written.direction = (312.75, "M")
        written.acceleration = SIMD3(0.25, -0.9, -0.35)
        written.orientation = 3
        let exif = EXIFMetadata(tiff: written.tiff())
        #expect(exif.warnings.isEmpty, "\(exif.warnings)")
        // Seconds are stored to 1e-6″ (3e-10°).
        #expect(abs((exif.gps?.latitude ?? 0) - -33.8567844) < 1e-9)
        #expect(abs((exif.gps?.longitude ?? 0) - -151.2152967) < 1e-9)
        #expect(exif.gps?.altitude == -12.5)
        #expect(exif.gps?.horizontalError == 4.25)
        #expect(exif.gps?.imageDirection == 312.75)
        #expect(exif.gps?.imageDirectionReference == "M")
        #expect(exif.gps?.time == "2018-02-05T07:11:43.07Z")
        #expect(exif.accelerationVector == SIMD3(0.25, -0.9, -0.35))
        #expect(exif.orientation == 3)
        #expect(exif.model == "iPhone (synthetic)")
    }

    /// The JPEG container: the APP1 segment found among the others; a JPEG without EXIF
    /// has none.
    @Test func jpegAPP1IsFound() throws {
        let image = ColorImage(width: 16, height: 12, channels: 3, samples: [UInt8](repeating: 90, count: 16 * 12 * 3))
        let jpeg = try JPEGCodec.encode(image)
        #expect(EXIFMetadata(photo: jpeg) == nil)
        var written = SyntheticEXIF()
        written.latitude = 48.8583701
        written.longitude = 2.2944813
        let exif = try #require(EXIFMetadata(photo: written.inserted(into: jpeg)))
        #expect(abs((exif.gps?.latitude ?? 0) - 48.8583701) < 1e-9)
        #expect(try JPEGCodec.decodeRGB(written.inserted(into: jpeg)).width == 16)
    }

    /// The HEIF container: heif-enc copies a JPEG's EXIF into the HEIC's `Exif` item,
    /// which libheif hands back with its 4-byte offset.
    @Test(.enabled(if: FileSystem.exists("/usr/bin/heif-enc") || FileSystem.exists("/opt/homebrew/bin/heif-enc")))
    func heifExifItemIsFound() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rgbd-exif-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let image = ColorImage(width: 64, height: 48, channels: 3, samples: [UInt8](repeating: 120, count: 64 * 48 * 3))
        var written = SyntheticEXIF()
        written.latitude = 23.1779166666667
        written.longitude = 113.394316666667
        written.direction = (25.27, "T")
        written.acceleration = SIMD3(-0.93, 0.01, -0.35)
        let jpegPath = Path.join(directory, "in.jpg"), heicPath = Path.join(directory, "out.heic")
        try Data(written.inserted(into: try JPEGCodec.encode(image))).write(to: URL(fileURLWithPath: jpegPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: FileSystem.exists("/usr/bin/heif-enc") ? "/usr/bin/heif-enc" : "/opt/homebrew/bin/heif-enc")
        process.arguments = [jpegPath, "-o", heicPath]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let exif = try #require(EXIFMetadata(photo: try FileSystem.readFile(heicPath)))
        #expect(abs((exif.gps?.latitude ?? 0) - 23.1779166666667) < 1e-9)
        #expect(exif.gps?.imageDirection == 25.27)
        #expect(exif.accelerationVector == SIMD3(-0.93, 0.01, -0.35))
    }

    // MARK: hostile blocks

    /// A big-endian TIFF built by hand: IFD0 at 8 with `entries` (tag, type, count, the
    /// 4-byte field), then `tail` from offset `8 + 2 + 12n + 4`.
    static func tiff(_ entries: [(Int, Int, UInt32, UInt32)], tail: [UInt8] = []) -> [UInt8] {
        func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        var out: [UInt8] = Array("MM".utf8) + be16(42) + be32(8) + be16(entries.count)
        for (tag, type, count, field) in entries { out += be16(tag) + be16(type) + be32(count) + be32(field) }
        return out + be32(0) + tail
    }

    /// Where `tail` starts for `n` IFD0 entries.
    static func tailOffset(_ n: Int) -> UInt32 { UInt32(8 + 2 + 12 * n + 4) }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    /// A GPS IFD (at the tail) with the given latitude rationals.
    static func gps(latitude: [(UInt32, UInt32)], ref: String = "N") -> [UInt8] {
        let gpsAt = tailOffset(1)
        // GPS IFD: 4 entries, then the two rational triples.
        let values = gpsAt + 2 + 12 * 4 + 4
        var ifd: [UInt8] = [0, 4]
        func entry(_ tag: Int, _ type: Int, _ count: UInt32, _ field: [UInt8]) -> [UInt8] {
            [0, UInt8(tag), 0, UInt8(type)] + be32(count) + field
        }
        ifd += entry(1, 2, 2, Array(ref.utf8) + [0, 0, 0].prefix(4 - ref.utf8.count))
        ifd += entry(2, 5, 3, be32(values))
        ifd += entry(3, 2, 2, Array("E".utf8) + [0, 0, 0])
        ifd += entry(4, 5, 3, be32(values + 24))
        ifd += be32(0)
        ifd += latitude.flatMap { be32($0.0) + be32($0.1) }
        ifd += [(10, 1), (30, 1), (0, 1)].flatMap { be32($0.0) + be32($0.1) }
        return tiff([(0x8825, 4, 1, gpsAt)], tail: ifd)
    }

    @Test func aLoopBetweenIFDsIsReadOnce() {
        // IFD0's EXIF pointer points back at IFD0 itself.
        let exif = EXIFMetadata(tiff: Self.tiff([(0x0112, 3, 1, 0x0006_0000), (0x8769, 4, 1, 8)]))
        #expect(exif.orientation == 6)
        #expect(exif.warnings.contains { $0.contains("loop") }, "\(exif.warnings)")
    }

    @Test func offsetsPastTheEndAreRefused() {
        let gps = EXIFMetadata(tiff: Self.tiff([(0x8825, 4, 1, 0xFFFF_FFF0)]))
        #expect(gps.gps == nil)
        #expect(gps.warnings.contains { $0.contains("past the end") }, "\(gps.warnings)")
        // A Make whose 40 bytes lie past the end: that entry alone is lost, the
        // orientation beside it is read.
        let make = EXIFMetadata(tiff: Self.tiff([(0x010F, 2, 40, 200), (0x0112, 3, 1, 0x0003_0000)],
                                                tail: [UInt8](repeating: 0, count: 64)))
        #expect(make.make == nil)
        #expect(make.orientation == 3)
        #expect(make.warnings.contains { $0.contains("tag 0x10F") && $0.contains("past the end") }, "\(make.warnings)")
        // The first IFD itself.
        let first = EXIFMetadata(tiff: Array("MM".utf8) + [0, 42, 0x7F, 0xFF, 0xFF, 0xFF])
        #expect(first.warnings.count == 1)
    }

    @Test func countsThatOverflowAreRefused() {
        // 0xFFFFFFFF rationals: 8 times that is more than the block (and on 32 bits, more than Int).
        let exif = EXIFMetadata(tiff: Self.tiff([(0x0110, 5, 0xFFFF_FFFF, 8)]))
        #expect(exif.model == nil)
        #expect(exif.warnings.contains { $0.contains("more than") }, "\(exif.warnings)")
    }

    @Test func aMakerNotePointingOutsideIsRefused() {
        // EXIF IFD at the tail holds a MakerNote of 100 bytes at offset 5000.
        let exifAt = Self.tailOffset(1)
        var tail: [UInt8] = [0, 1, 0x92, 0x7C, 0, 7] + Self.be32(100) + Self.be32(5000) + Self.be32(0)
        tail += [UInt8](repeating: 0, count: 160)
        let exif = EXIFMetadata(tiff: Self.tiff([(0x8769, 4, 1, exifAt)], tail: tail))
        #expect(exif.accelerationVector == nil)
        #expect(exif.warnings.contains { $0.contains("past the end") }, "\(exif.warnings)")
        // A MakerNote whose inner IFD claims entries beyond the note.
        var note = Array("Apple iOS\u{0}".utf8) + [0, 1] + Array("MM".utf8) + [0, 200]
        note += [UInt8](repeating: 0, count: 12)
        let noteAt = exifAt + 2 + 12 + 4
        let inner: [UInt8] = [0, 1, 0x92, 0x7C, 0, 7] + Self.be32(UInt32(note.count)) + Self.be32(noteAt) + Self.be32(0) + note
        let second = EXIFMetadata(tiff: Self.tiff([(0x8769, 4, 1, exifAt)], tail: inner))
        #expect(second.accelerationVector == nil)
        #expect(second.warnings.contains { $0.contains("MakerNote") }, "\(second.warnings)")
    }

    @Test func zeroDenominatorsAndLatitudesBeyond90AreRefused() {
        let zero = EXIFMetadata(tiff: Self.gps(latitude: [(40, 1), (10, 0), (0, 1)]))
        #expect(zero.gps?.latitude == nil)
        #expect(zero.warnings.contains { $0.contains("zero denominator") }, "\(zero.warnings)")
        let beyond = EXIFMetadata(tiff: Self.gps(latitude: [(91, 1), (0, 1), (0, 1)]))
        #expect(beyond.gps?.latitude == nil)
        #expect(beyond.warnings.contains { $0.contains("beyond 90°") }, "\(beyond.warnings)")
        let fine = EXIFMetadata(tiff: Self.gps(latitude: [(40, 1), (30, 1), (36, 1)]))
        #expect(fine.gps?.latitude == 40.51)
        #expect(fine.gps?.longitude == 10.5)
        #expect(fine.warnings.isEmpty)
        let badRef = EXIFMetadata(tiff: Self.gps(latitude: [(40, 1), (30, 1), (36, 1)], ref: "X"))
        #expect(badRef.gps?.latitude == nil)
        #expect(badRef.warnings.contains { $0.contains("reference") })
    }

    /// Every prefix of a real block, and every single-byte change of its first 600 bytes,
    /// reads without trapping (a small in-test fuzz; Fuzz/FuzzEXIF goes further).
    @Test func truncatedAndFlippedBlocksNeverTrap() throws {
        let bytes = try FileSystem.readFile(Path.join(Self.fixtures, "IMG_1034.exif"))
        for n in 0..<bytes.count { _ = EXIFMetadata(tiff: Array(bytes.prefix(n))) }
        for i in 0..<min(600, bytes.count) {
            var changed = bytes
            changed[i] ^= 0xA5
            _ = EXIFMetadata(tiff: changed)
        }
    }
}
