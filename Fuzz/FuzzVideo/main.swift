// libFuzzer target: any bytes as a scan's video on disk (`VideoDecoder`, the reader of
// Stray Scanner's `rgb.mp4`: FFmpeg's demuxer and decoder behind rgbd's wrapper, which
// counts packets, converts pictures to RGB or copies their Y′CbCr planes, and seeks by
// frame index). The first frames are read three ways: as RGB (`nextFrame`), as pictures
// made RGB later (`nextPicture`, what `rgbd export` does), and after a seek to frame 1.
// A finding is a crash, a sanitizer report, an error that is not an RGBDError of one
// line naming the file, an image whose samples do not fill its size or over the frame
// limit, or ways that disagree (the seek: in size; damaged frames are concealed with what
// was decoded before). Fuzz/README.md.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFuzzDriver
import RGBDKit

// SwiftPM names this module's entry point FuzzVideo_main and links it as `main`, so
// libFuzzer's own main is not used: its driver is called from here.
exit(rgbd_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzzOne($0, $1) })

/// Stops the fuzzer with a finding (a trap, which libFuzzer reports with the input).
func fail(_ message: String) -> Never {
    fatalError("FuzzVideo finding: \(message)")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// The file each input is written to, in a directory of this process's own
/// (`rgbd_fuzz_scratch_file`; a static, made on first use: top-level code after the
/// driver's call never runs).
enum Scratch {
    static let file: String = {
        guard let path = rgbd_fuzz_scratch_file("rgb.mp4") else { fail("cannot create a temporary directory") }
        return String(cString: path)
    }()
}

/// Checks an error: an RGBDError of one line naming the file.
@discardableResult
func checkError(_ error: any Error, _ path: String) -> RGBDError {
    guard let error = error as? RGBDError else { fail("not an RGBDError: \(error)") }
    check(error.description.hasPrefix(path + ": "), "an error that does not name the file: \(error)")
    check(!error.description.contains("\n") && !error.description.contains("\r"), "a message of more than one line: \(error)")
    return error
}

/// Checks an image and gives its size and samples.
func checked(_ image: ColorImage) -> [UInt8] {
    check(image.width > 0 && image.height > 0 && image.width * image.height <= VideoDecoder.maxPixels,
          "a \(image.width)×\(image.height) frame")
    check(image.channels == 3 && image.samples.count == image.width * image.height * 3,
          "\(image.samples.count) samples for \(image.width)×\(image.height)×\(image.channels)")
    return image.samples
}

/// The frames read: each frame's samples (with its size), then the error that ended the
/// reading, if any.
struct Reading: Equatable {
    var frames: [[UInt8]] = []
    var sizes: [[Int]] = []
    var error: String?
}

/// Up to `count` frames, from frame `start` (by a seek when it is not 0), as RGB or as
/// pictures made RGB.
func read(_ path: String, count: Int, start: Int = 0, pictures: Bool) -> Reading {
    var reading = Reading()
    do {
        // One thread: FFmpeg's frame threads conceal a damaged stream's errors depending
        // on timing, which would make the ways disagree for reasons not rgbd's.
        let decoder = try VideoDecoder(path: path, threads: 1)
        check(decoder.width > 0 && decoder.height > 0, "a \(decoder.width)×\(decoder.height) video")
        if start > 0 { try decoder.seek(toFrame: start) }
        for _ in 0..<count {
            let image: ColorImage
            if pictures {
                guard let next = try decoder.nextPicture() else { break }
                image = try next.frame.rgb()
            } else {
                guard let next = try decoder.nextFrame() else { break }
                image = next.image
            }
            reading.frames.append(checked(image))
            reading.sizes.append([image.width, image.height])
        }
    } catch {
        // A picture made RGB later throws without the file (its caller names the frame).
        if let error = error as? RGBDError, error.file == nil {
            reading.error = error.message
        } else {
            reading.error = checkError(error, path).description
        }
    }
    return reading
}


/// One input: the file's bytes.
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let path = Scratch.file
    check(rgbd_fuzz_write_file(path, data, size) == 0, "cannot write \(path)")
    let rgb = read(path, count: 3, pictures: false)
    let pictures = read(path, count: 3, pictures: true)
    // The same frames both ways (a picture made RGB is the RGB the decoder gives).
    let common = min(rgb.frames.count, pictures.frames.count)
    check(rgb.frames.prefix(common) == pictures.frames.prefix(common) && rgb.sizes.prefix(common) == pictures.sizes.prefix(common),
          "nextFrame and nextPicture give different frames")
    check((rgb.error == nil) == (pictures.error == nil),
          "one way fails and the other does not: \(rgb.error ?? "no error") / \(pictures.error ?? "no error")")
    if rgb.error == nil {
        check(rgb.frames.count == pictures.frames.count,
              "nextFrame gave \(rgb.frames.count) frames and nextPicture \(pictures.frames.count)")
    }
    // A seek to frame 1 gives a frame of frame 1's size. (Not always its bytes: FFmpeg
    // conceals a damaged frame with what it decoded before, which differs after a seek;
    // VideoDecoderTests compares the bytes on sound videos.)
    if rgb.frames.count >= 2 {
        let seeked = read(path, count: 1, start: 1, pictures: false)
        if !seeked.sizes.isEmpty {
            check(seeked.sizes[0] == rgb.sizes[1], "frame 1 after a seek is \(seeked.sizes[0]), not \(rgb.sizes[1])")
        }
    }
    return 0
}
