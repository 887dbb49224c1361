import Testing
@testable import RGBDFoundation
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

    /// `jpeg` with the size in its SOF0 header replaced (a forged or corrupt header).
    static func claiming(_ width: Int, _ height: Int, _ jpeg: [UInt8]) -> [UInt8] {
        var forged = jpeg
        if let sof = (0..<(forged.count - 8)).first(where: { forged[$0] == 0xFF && forged[$0 + 1] == 0xC0 }) {
            forged[sof + 5] = UInt8(height >> 8); forged[sof + 6] = UInt8(height & 255)
            forged[sof + 7] = UInt8(width >> 8); forged[sof + 8] = UInt8(width & 255)
        }
        return forged
    }

    /// A header claiming far more pixels than the file could encode is refused before
    /// decoding (once: a 1.8 kB file claiming 16000×12000 cost 580 MB and a full decode);
    /// one whose size is plausible but whose data is not is refused by the 1/8-scale
    /// trial decoding, and a sound JPEG decodes the same with or without that trial.
    @Test func implausibleJPEGsAreRefusedBeforeDecoding() throws {
        let small = try JPEGCodec.encode(Self.noise(width: 16, height: 12, seed: 2), quality: 90)
        let forged = Self.claiming(16000, 12000, small)
        #expect(try JPEGCodec.size(of: forged) == (16000, 12000))
        #expect(forged.count < 16000 * 12000 / JPEGCodec.maxPixelsPerByte)
        do {
            _ = try JPEGCodec.decodeRGB(forged, file: "forged.jpg")
            Issue.record("a 16000×12000 claim in \(forged.count) bytes was decoded")
        } catch let error as RGBDError {
            #expect(error.kind == .invalidImage && error.file == "forged.jpg")
            #expect(error.message.contains("16000×12000") && error.message.contains("\(forged.count) bytes"), "\(error)")
        }
        // The flattest real photos pass: a black frame (one byte per 64 pixels here).
        let black = try JPEGCodec.encode(ColorImage(width: 2016, height: 1512, channels: 3, repeating: 0), quality: 90)
        #expect(black.count < 2016 * 1512 / 32)
        #expect(try JPEGCodec.decodeRGB(black).samples.allSatisfy { $0 <= 1 })

        // Plausible in size, corrupt in content: the trial decoding (forced here by a
        // threshold of 0) refuses it, as the full decoding does.
        let noisy = try JPEGCodec.encode(Self.noise(width: 320, height: 240, seed: 3), quality: 95)
        let stretched = Self.claiming(640, 480, noisy)
        #expect(stretched.count >= 640 * 480 / JPEGCodec.maxPixelsPerByte)
        #expect(throws: RGBDError.self) { _ = try JPEGCodec.decodeRGB(stretched, file: "s.jpg", trialDecodeAbove: 0) }
        #expect(throws: RGBDError.self) { _ = try JPEGCodec.decodeRGB(stretched, file: "s.jpg") }
        let sound = try JPEGCodec.decodeRGB(noisy)
        #expect(try JPEGCodec.decodeRGB(noisy, file: nil, trialDecodeAbove: 0).samples == sound.samples)
        #expect(sound.width == 320 && sound.height == 240)
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
