import Foundation
import Testing
@testable import RGBDKit

/// `VideoDecoder` against videos made at test time by FFmpeg's command-line tool (an
/// independent writer: libx265 and libx264, yuv420p, in MP4) from RGB frames whose
/// content is known: 16-pixel blocks of saturated colours, white and black, and a row of
/// blocks spelling the frame's number in binary. The encodes are lossless (so only the
/// RGB → Y′CbCr → RGB rounding remains, a few levels) and the colours are checked within
/// 5 levels: decoding with the wrong matrix (BT.601 instead of 709 or back) or the wrong
/// range moves the saturated colours, white or black by 15 levels or more.
@Suite struct VideoDecoderTests {
    static let cell = 16
    static let palette: [[UInt8]] = [
        [230, 20, 40], [20, 200, 60], [30, 40, 220], [240, 240, 240], [250, 200, 30], [20, 20, 20], [128, 128, 128],
    ]

    /// The colour of block (column, row) of frame `index`; row 0 spells the index in binary
    /// (white: 1, black: 0, least significant bit first).
    static func blockColor(column: Int, row: Int, frame index: Int) -> [UInt8] {
        if row == 0 { return (index >> column) & 1 == 1 ? [240, 240, 240] : [20, 20, 20] }
        return palette[(column + 2 * row + index) % palette.count]
    }

    /// Frame `index` of a `width` × `height` video.
    static func frame(_ index: Int, width: Int, height: Int) -> ColorImage {
        var image = ColorImage(width: width, height: height, channels: 3, repeating: 0)
        for y in 0..<height {
            for x in 0..<width {
                let color = blockColor(column: x / cell, row: y / cell, frame: index)
                for c in 0..<3 { image[x, y, c] = color[c] }
            }
        }
        return image
    }

    /// The frame number the decoded image spells, and the largest difference of its
    /// blocks' inner 8×8 pixels (away from chroma blur at the edges) from the colours of
    /// frame `expected`.
    static func read(_ image: ColorImage, expected: Int) -> (number: Int, largestDifference: Int) {
        var number = 0
        for column in 0..<min(16, image.width / cell) where image[column * cell + 8, 8, 1] > 128 {
            number |= 1 << column
        }
        var largest = 0
        for row in 0..<(image.height / cell) {
            for column in 0..<(image.width / cell) {
                let color = blockColor(column: column, row: row, frame: expected)
                for y in (row * cell + 4)..<(row * cell + 12) {
                    for x in (column * cell + 4)..<(column * cell + 12) {
                        for c in 0..<3 { largest = max(largest, abs(Int(image[x, y, c]) - Int(color[c]))) }
                    }
                }
            }
        }
        return (number, largest)
    }

    /// A fresh temporary folder.
    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rgbd-video-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// The `ffmpeg` command-line tool on PATH (Scripts/bootstrap.sh installs it).
    static func ffmpegTool() throws -> String {
        let tool = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
            .map { "\($0)/ffmpeg" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        return try #require(tool, "ffmpeg not found (Scripts/bootstrap.sh installs it)")
    }

    /// Runs a tool, failing the test when it fails; its standard output.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        let complaint = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0,
                     "\(tool) \(arguments.joined(separator: " ")) failed: \(String(decoding: complaint, as: UTF8.self))")
        return String(decoding: text, as: UTF8.self)
    }

    /// A video of `count` frames made by the ffmpeg tool; `encoding` holds its options
    /// after the input (filter, codec, tags).
    static func makeVideo(width: Int, height: Int, count: Int, fps: Int = 30, encoding: [String],
                          in folder: URL, name: String) throws -> String {
        let raw = folder.appendingPathComponent("\(name).rgb")
        var bytes = Data()
        for index in 0..<count { bytes.append(contentsOf: frame(index, width: width, height: height).samples) }
        try bytes.write(to: raw)
        let output = folder.appendingPathComponent("\(name).mp4").path
        try run(try ffmpegTool(), ["-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                                   "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "\(width)x\(height)", "-r", "\(fps)",
                                   "-i", raw.path] + encoding + [output])
        try FileManager.default.removeItem(at: raw)
        return output
    }

    /// The scale filter converting to 4:2:0 with a matrix and a range.
    static func convert(_ matrix: String, range: String = "tv") -> [String] {
        ["-vf", "scale=out_color_matrix=\(matrix):out_range=\(range),format=yuv420p"]
    }
    static let tags709 = ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709"]
    static let x264Lossless = ["-c:v", "libx264", "-qp", "0", "-g", "4"]
    static let x265Lossless = ["-c:v", "libx265", "-preset", "ultrafast", "-g", "4",
                               "-x265-params", "lossless=1:log-level=error"]

    /// Every frame of the video at `path`, checked against the frames that made it.
    static func decodeAll(_ path: String, expectedCount: Int, fps: Double = 30) throws -> VideoDecoder {
        let video = try VideoDecoder(path: path)
        var index = 0
        while let (image, time) = try video.nextFrame() {
            #expect(image.width == video.width && image.height == video.height && image.channels == 3)
            let (number, largest) = read(image, expected: index)
            #expect(number == index % (1 << min(16, video.width / cell)), "\(path): frame \(index) reads as \(number)")
            #expect(largest <= 5, "\(path): frame \(index): colours off by \(largest)")
            let seconds = try #require(time)
            #expect(abs(seconds - Double(index) / fps) < 1e-4, "\(path): frame \(index) at \(seconds) s")
            index += 1
        }
        #expect(index == expectedCount)
        #expect(try video.nextFrame() == nil, "the end stays the end")
        return video
    }

    // MARK: Decoding

    @Test(arguments: [
        ("h264", x264Lossless), ("hevc", x265Lossless),
    ])
    func framesSizeCodecAndTimes(codec: String, encoder: [String]) throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.makeVideo(width: 128, height: 96, count: 12, encoding: Self.convert("bt709") + Self.tags709 + encoder,
                                      in: folder, name: codec)
        let video = try Self.decodeAll(path, expectedCount: 12)
        #expect(video.width == 128 && video.height == 96)
        #expect(video.codecName == codec)
        #expect(video.frameCount == 12)
        #expect(abs((video.framesPerSecond ?? 0) - 30) < 1e-9)
        #expect(video.rotationDegrees == 0)
    }

    /// Widths that are not a multiple of 16: libswscale's fast conversion wrote past the
    /// rows of a packed RGB image (heap corruption at 24 and 28 pixels across) or left their
    /// last pixels unwritten (18, 20, 36), found by Fuzz/FuzzVideo. Every pixel, the last
    /// columns included, is now the exact conversion of the decoded Y′CbCr within the fast
    /// conversion's rounding, the same from `nextFrame` and from a picture made RGB later,
    /// and a second decoding in the same process gives the same bytes.
    @Test(arguments: [18, 20, 24, 28, 36, 40, 48])
    func widthsThatAreNotBlocksOf16(width: Int) throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.makeVideo(width: width, height: 14, count: 2, encoding: Self.convert("bt601") + Self.x264Lossless,
                                      in: folder, name: "w\(width)")
        var first: [[UInt8]] = []
        for round in 0..<2 {
            let rgb = try VideoDecoder(path: path), pictures = try VideoDecoder(path: path)
            var index = 0
            while let (image, _) = try rgb.nextFrame() {
                let (frame, _) = try #require(try pictures.nextPicture())
                guard case .ycbcr(let picture) = frame else {
                    Issue.record("frame \(index) of a yuv420p video is not given as planes")
                    break
                }
                #expect(try frame.rgb().samples == image.samples, "width \(width), frame \(index): the picture made RGB differs")
                let exact = try ExportVideoPicturesTests.exactRGB(picture)
                let worst = zip(image.samples, exact.samples).map { abs(Int($0) - Int($1)) }.max() ?? 0
                #expect(worst <= 4, "width \(width), frame \(index): \(worst) levels from the exact conversion")
                let lastColumn = (0..<image.height).flatMap { y in (0..<3).map { image[width - 1, y, $0] } }
                let exactLast = (0..<image.height).flatMap { y in (0..<3).map { exact[width - 1, y, $0] } }
                #expect(zip(lastColumn, exactLast).allSatisfy { abs(Int($0) - Int($1)) <= 4 }, "width \(width): the last column")
                if round == 0 { first.append(image.samples) } else { #expect(image.samples == first[index]) }
                index += 1
            }
            #expect(index == 2)
        }
    }

    /// The stream's own matrix and range are honoured, and without tags a small picture is
    /// taken as BT.601 (as FFmpeg's players do).
    @Test(arguments: [
        ("bt601-tagged", convert("bt601") + ["-colorspace", "smpte170m", "-color_primaries", "smpte170m", "-color_trc", "smpte170m"]),
        ("bt709-full-range", convert("bt709", range: "pc") + tags709 + ["-color_range", "pc"]),
        ("untagged-small-is-bt601", convert("bt601")),
    ])
    func colourMatrixAndRange(name: String, conversion: [String]) throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.makeVideo(width: 128, height: 96, count: 3, encoding: conversion + Self.x264Lossless,
                                      in: folder, name: name)
        _ = try Self.decodeAll(path, expectedCount: 3)
    }

    /// The check above would see a wrong matrix or range: the same frames decoded as if
    /// they were BT.601 (an untagged small video encoded with BT.709) or full range
    /// (limited-range pixels tagged full) are off by far more than its 5 levels.
    @Test(arguments: [
        ("bt709-read-as-bt601", convert("bt709")),
        ("limited-read-as-full", convert("bt709") + tags709 + ["-color_range", "pc"]),
    ])
    func wrongMatrixOrRangeWouldBeSeen(name: String, conversion: [String]) throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.makeVideo(width: 128, height: 96, count: 1, encoding: conversion + Self.x264Lossless,
                                      in: folder, name: name)
        let image = try #require(try VideoDecoder(path: path).nextFrame()).image
        let largest = Self.read(image, expected: 0).largestDifference
        #expect(largest >= 15, "\(name): off by only \(largest)")
    }

    /// A 1920×1440 HEVC clip (Stray Scanner's size), untagged: HD is taken as BT.709.
    @Test func fullSizeHEVC() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.makeVideo(width: 1920, height: 1440, count: 4, fps: 60,
                                      encoding: Self.convert("bt709") + Self.x265Lossless, in: folder, name: "stray")
        let video = try Self.decodeAll(path, expectedCount: 4, fps: 60)
        #expect(video.width == 1920 && video.height == 1440 && video.codecName == "hevc")
        #expect(abs((video.framesPerSecond ?? 0) - 60) < 1e-9)
    }

    /// The display matrix's rotation is reported (iPhone portrait videos: 90) and not
    /// applied. The matrix is the one iPhones write for a video shot upright, put into the
    /// track header (`tkhd`) of a video the ffmpeg tool made (its ways of setting one differ
    /// between versions 5 and 6).
    @Test func rotationIsReported() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.makeVideo(width: 64, height: 48, count: 2,
                                      encoding: Self.convert("bt709") + Self.tags709 + Self.x264Lossless,
                                      in: folder, name: "upright")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let tkhd = try #require((4..<(bytes.count - 4)).first { bytes[$0..<$0 + 4].elementsEqual("tkhd".utf8) })
        // After the type: version and flags (4), times, track, reserved and duration (20,
        // or 32 in version 1), reserved (8), layer, group, volume, reserved (8): the matrix.
        let matrix = tkhd + 4 + 4 + (bytes[tkhd + 4] == 1 ? 32 : 20) + 8 + 8
        let upright: [Int32] = [0, 0x10000, 0, -0x10000, 0, 0, 0, 0, 0x4000_0000]
        for (i, value) in upright.enumerated() {
            for b in 0..<4 { bytes[matrix + 4 * i + b] = UInt8(truncatingIfNeeded: UInt32(bitPattern: value) >> (24 - 8 * b)) }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let video = try VideoDecoder(path: path)
        #expect(video.rotationDegrees == 90)
        let image = try #require(try video.nextFrame()).image
        #expect(image.width == 64 && image.height == 48)
        #expect(Self.read(image, expected: 0).largestDifference <= 5)
    }

    // MARK: Seeking

    @Test(arguments: [("h264", x264Lossless), ("hevc", x265Lossless)])
    func seekFindsEveryFrame(codec: String, encoder: [String]) throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.makeVideo(width: 96, height: 48, count: 14, encoding: Self.convert("bt709") + encoder,
                                      in: folder, name: codec)
        let video = try VideoDecoder(path: path)
        // Forward, backward, onto keyframes (every 4th) and between them, and the last.
        for index in [7, 2, 0, 13, 4, 5, 11, 3, 8, 1] {
            try video.seek(toFrame: index)
            let (image, time) = try #require(try video.nextFrame())
            #expect(Self.read(image, expected: index).number == index, "\(codec): seek to \(index)")
            #expect(abs((time ?? -1) - Double(index) / 30) < 1e-4)
            // Decoding goes on from there.
            if index + 1 < 14 {
                let next = try #require(try video.nextFrame()).image
                #expect(Self.read(next, expected: index + 1).number == index + 1, "\(codec): after \(index)")
            }
        }
        try video.seek(toFrame: 12)
        var rest = 0
        while try video.nextFrame() != nil { rest += 1 }
        #expect(rest == 2)
        #expect(throws: RGBDError.self) { try video.seek(toFrame: 14) }
        #expect(throws: RGBDError.self) { try video.seek(toFrame: -1) }
    }

    // MARK: Bad input

    /// The error of `body`, which must be one `RGBDError` line naming `path`.
    static func oneLineError(_ path: String, _ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as RGBDError {
            let text = error.description
            #expect(text.hasPrefix(path + ": "), "\(text)")
            #expect(!text.contains("\n"), "\(text)")
            return text
        } catch {
            Issue.record("not an RGBDError: \(error)")
            return nil
        }
    }

    @Test(.timeLimit(.minutes(2))) func truncatedVideosEndInAnError() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, layout) in [("index-last", [String]()), ("index-first", ["-movflags", "+faststart"])] {
            let path = try Self.makeVideo(width: 128, height: 96, count: 20,
                                          encoding: Self.convert("bt709") + Self.x265Lossless + layout, in: folder, name: name)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            for fraction in [0.1, 0.5, 0.9, 0.99] {
                let cut = folder.appendingPathComponent("\(name)-\(fraction).mp4").path
                try bytes.prefix(Int(Double(bytes.count) * fraction)).write(to: URL(fileURLWithPath: cut))
                var frames = 0
                let message = Self.oneLineError(cut) {
                    let video = try VideoDecoder(path: cut)
                    while try video.nextFrame() != nil { frames += 1 }
                }
                #expect(message != nil, "\(name) cut at \(fraction): \(frames) frames and no error")
                if name == "index-last" {
                    // The index is written last: without it, nothing can be read.
                    #expect(message == "\(cut): truncated: media data without its index (no moov box; the recording was not finished)"
                                || message == "\(cut): truncated: its index (moov box) is cut short", "\(message ?? "")")
                } else {
                    #expect(message?.contains("truncated") == true, "\(message ?? "")")
                }
                #expect(frames < 20)
                // Seeking reads the whole file too: the same kind of error.
                _ = Self.oneLineError(cut) {
                    let video = try VideoDecoder(path: cut)
                    try video.seek(toFrame: 19)
                    _ = try video.nextFrame()
                    Issue.record("\(name) cut at \(fraction): frame 19 found")
                }
            }
        }
    }

    /// Bytes flipped in the coded frames of a complete file: each decode ends, with the
    /// frames or with a one-line error, never a crash or a hang.
    @Test(.timeLimit(.minutes(2))) func damagedVideosNeverTrap() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var random = SeededGenerator(seed: 5)
        for (name, encoder) in [("h264", Self.x264Lossless), ("hevc", Self.x265Lossless)] {
            let path = try Self.makeVideo(width: 96, height: 64, count: 8,
                                          encoding: Self.convert("bt709") + Self.tags709 + encoder + ["-movflags", "+faststart"],
                                          in: folder, name: name)
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let mdat = try #require((4..<(bytes.count - 4)).first { bytes[$0..<$0 + 4].elementsEqual("mdat".utf8) })
            for round in 0..<12 {
                var damaged = bytes
                for _ in 0..<(1 + round % 4) {
                    let at = mdat + 4 + Int(random.next() % UInt64(bytes.count - mdat - 4))
                    damaged[at] ^= UInt8(truncatingIfNeeded: random.next() | 1)
                }
                let copy = folder.appendingPathComponent("\(name)-damaged-\(round).mp4").path
                try Data(damaged).write(to: URL(fileURLWithPath: copy))
                var frames = 0
                _ = Self.oneLineError(copy) {
                    let video = try VideoDecoder(path: copy)
                    while try video.nextFrame() != nil { frames += 1 }
                }
                #expect(frames <= 8)
            }
        }
    }

    @Test func notVideosAreOneLineErrors() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = folder.appendingPathComponent("notes.mp4").path
        try Data("hello, this is not a video\n".utf8).write(to: URL(fileURLWithPath: text))
        let empty = folder.appendingPathComponent("empty.mp4").path
        try Data().write(to: URL(fileURLWithPath: empty))
        let png = folder.appendingPathComponent("image.mp4").path
        try Data(try PNGCodec.encodeRGB(Self.frame(0, width: 32, height: 32))).write(to: URL(fileURLWithPath: png))
        for path in [text, empty, png] {
            let message = Self.oneLineError(path) { _ = try VideoDecoder(path: path) }
            #expect(message?.hasPrefix("\(path): not a video FFmpeg can read (") == true, "\(message ?? "no error")")
        }
        // FFmpeg reads PNGs, but only MP4, QuickTime and Matroska are let through.
        #expect(Self.oneLineError(png) { _ = try VideoDecoder(path: png) }
                    == "\(png): not a video FFmpeg can read (not MP4, QuickTime or Matroska)")
        let missing = folder.appendingPathComponent("missing.mp4").path
        #expect(Self.oneLineError(missing) { _ = try VideoDecoder(path: missing) } == "\(missing): no such file")
    }
}
