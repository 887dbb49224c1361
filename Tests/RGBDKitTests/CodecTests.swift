import Testing
@testable import RGBDKit

/// JPEG, TIFF and the depth encodings against the real C libraries, through real files.
@Suite struct CodecTests {
    static func noise(width: Int, height: Int, seed: UInt64) -> ColorImage {
        var rng = SeededGenerator(seed: seed)
        return ColorImage(width: width, height: height, channels: 3,
                          samples: (0..<(width * height * 3)).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    @Test func jpegRoundTripKeepsSizeAndApproximatesPixels() throws {
        // A smooth image survives JPEG at quality 95 within a few levels.
        var image = ColorImage(width: 123, height: 77, channels: 3, repeating: 0)
        for y in 0..<77 { for x in 0..<123 { image[x, y, 0] = UInt8(x * 2); image[x, y, 1] = UInt8(y * 3); image[x, y, 2] = 128 } }
        let jpeg = try JPEGCodec.encode(image, quality: 95)
        #expect(try JPEGCodec.size(of: jpeg) == (123, 77))
        let decoded = try JPEGCodec.decodeRGB(jpeg)
        #expect(decoded.width == 123 && decoded.height == 77 && decoded.channels == 3)
        let worst = zip(decoded.samples, image.samples).map { abs(Int($0) - Int($1)) }.max() ?? 255
        #expect(worst <= 6)
    }

    @Test func truncatedJPEGIsAnError() throws {
        let jpeg = try JPEGCodec.encode(Self.noise(width: 64, height: 64, seed: 1), quality: 90)
        let truncated = Array(jpeg.prefix(jpeg.count / 2))
        #expect(throws: RGBDError.self) { _ = try JPEGCodec.decodeRGB(truncated, file: "t.jpg") }
        #expect(throws: RGBDError.self) { _ = try JPEGCodec.decodeRGB(Array("not a jpeg".utf8), file: "t.jpg") }
        #expect(throws: RGBDError.self) { _ = try JPEGCodec.decodeRGB([], file: "t.jpg") }
        // A header claiming 60000×60000 pixels (SOF0 height/width patched) is refused
        // before anything is allocated.
        var huge = jpeg
        if let sof = (0..<(huge.count - 8)).first(where: { huge[$0] == 0xFF && huge[$0 + 1] == 0xC0 }) {
            huge[sof + 5] = 0xEA; huge[sof + 6] = 0x60; huge[sof + 7] = 0xEA; huge[sof + 8] = 0x60
        }
        #expect(throws: RGBDError.self) { _ = try JPEGCodec.decodeRGB(huge, file: "huge.jpg") }
        #expect((try? JPEGCodec.size(of: huge)).map { $0.width == 60000 } == true)
    }

    @Test func tiffRoundTripIsExact() throws {
        var rng = SeededGenerator(seed: 3)
        let depth = DepthMap(width: 37, height: 23, channels: 1, samples: (0..<(37 * 23)).map { i in
            i % 11 == 0 ? .nan : Float.random(in: 0.1...20, using: &rng)
        })
        let directory = try TemporaryDirectory()
        let path = Path.join(directory.path, "d.tiff")
        let files = StagedFiles()
        try files.stage(path) { fd, temporary in try TIFFCodec.writeFloat(depth, fd: fd, path: temporary) }
        try files.commit()
        let back = try TIFFCodec.readFloat(path: path)
        #expect(back.width == 37 && back.height == 23)
        #expect(identicalBits(back.samples, depth.samples))
    }

    @Test func millimetersFollowTheTUMConvention() {
        let depth = DepthMap(width: 6, height: 1, channels: 1, samples: [1.2344, 1.2346, .nan, 0, 65.535, 70])
        #expect(DepthEncoding.millimeters(depth) == [1234, 1235, 0, 0, 65535, 0])
    }

    @Test func stagedFilesLeaveNothingBehindOnFailure() throws {
        let directory = try TemporaryDirectory()
        let target = Path.join(directory.path, "a.bin")
        do {
            let files = StagedFiles()
            try files.stage(target, bytes: [1, 2, 3])
            // Released without commit: the temporary disappears, the target never appears.
        }
        #expect(try FileSystem.contentsOfDirectory(directory.path).isEmpty)
        let files = StagedFiles()
        try files.stage(target, bytes: [1, 2, 3])
        try files.commit()
        #expect(try FileSystem.readFile(target) == [1, 2, 3])
        #expect(try FileSystem.contentsOfDirectory(directory.path) == ["a.bin"])
    }
}

/// A fresh directory under /tmp, removed with its files when released.
final class TemporaryDirectory {
    let path: String
    init() throws {
        var rng = SystemRandomNumberGenerator()
        path = "/tmp/rgbd-test-\(UInt64.random(in: 0...UInt64.max, using: &rng))"
        try FileSystem.createDirectory(path)
    }
    deinit {
        if let names = try? FileSystem.contentsOfDirectory(path) {
            for name in names { FileSystem.removeQuietly(Path.join(path, name)) }
        }
        FileSystem.removeDirectoryQuietly(path)
    }
}
