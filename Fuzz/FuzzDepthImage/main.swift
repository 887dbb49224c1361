// libFuzzer target: any bytes as the depth image beside a capture JSON (`NAME.depth.png`,
// read as a 16-bit PNG or a float32 TIFF by its content), through the files as `rgbd`
// reads them: the bounded reader (`FileSystem.readFile`), the PNG and TIFF readers with
// their header checks, `Capture.load(json:)` and `CaptureInfo.read(json:)`, which must
// agree. A finding is a crash, a sanitizer report, an error that is not an RGBDError of
// one line naming a file of the capture, a depth that is neither a hole nor positive,
// or a disagreement. Fuzz/README.md; Scripts/fuzz.sh runs it with -malloc_limit_mb=200
// (no input may make rgbd allocate more than that).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFuzzDriver
import RGBDKit

// SwiftPM names this module's entry point FuzzDepthImage_main and links it as `main`, so
// libFuzzer's own main is not used: its driver is called from here.
exit(rgbd_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzzOne($0, $1) })

/// Stops the fuzzer with a finding (a trap, which libFuzzer reports with the input).
func fail(_ message: String) -> Never {
    fatalError("FuzzDepthImage finding: \(message)")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// A directory of this process's own with `shot.json` (an iPhone-like calibration and
/// no depth map) and `shot.jpg` (64×48): each input becomes its `shot.depth.png`.
/// (A static, made on first use: top-level code after the driver's call never runs.)
enum Scratch {
    static let directory: String = {
        var template = Array("/tmp/rgbd-fuzz-depth-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> UnsafeMutablePointer<CChar>? in
            guard let base = buffer.baseAddress else { return nil }
            return mkdtemp(base)
        }
        guard let made else {
            fail("cannot create a temporary directory")
        }
        let path = String(cString: made)
        // Removed when the process exits (libFuzzer ends a run by calling exit).
        atexit { removeDirectory() }
        let table = (0..<42).map { i -> String in
            let s = Double(i) / 41
            return "\(-0.028 * s * s - 0.012 * s * s * s * s)"
        }.joined(separator: ",")
        let json = """
            {"calibration_data": {"intrinsic_matrix": [[2900, 0, 0], [0, 2900, 0], [2016.3, 1511.6, 1]],
             "intrinsic_matrix_reference_dimensions": [4032, 3024], "lens_distortion_center": [2015.53, 1511.21],
             "lens_distortion_lookup_table": [\(table)]}}
            """
        let pixels = (0..<64 * 48 * 3).map { UInt8(truncatingIfNeeded: $0 * 7) }
        do {
            let jpeg = try JPEGCodec.encode(ColorImage(width: 64, height: 48, channels: 3, samples: pixels))
            try write(Array(json.utf8), to: path + "/shot.json")
            try write(jpeg, to: path + "/shot.jpg")
        } catch {
            fail("cannot write the capture: \(error)")
        }
        return path
    }()
}

/// Removes the capture's directory (at exit: replays and fuzzing runs).
func removeDirectory() {
    for name in ["shot.json", "shot.jpg", "shot.depth.png"] { unlink(Scratch.directory + "/" + name) }
    rmdir(Scratch.directory)
}

func write(_ bytes: [UInt8], to path: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { throw RGBDError(.io, file: path, "cannot create") }
    defer { close(fd) }
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeBytes { raw in raw.baseAddress.map { write(fd, $0 + done, bytes.count - done) } ?? -1 }
        guard n > 0 else { throw RGBDError(.io, file: path, "cannot write") }
        done += n
    }
}

/// One input: the depth image's bytes.
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let json = Scratch.directory + "/shot.json", depthPath = Scratch.directory + "/shot.depth.png"
    do { try write(bytes, to: depthPath) } catch { fail("\(error)") }

    // The bounded reader: the bytes as written, up to its limit and not beyond.
    do {
        check(try FileSystem.readFile(depthPath) == bytes, "readFile: not the bytes written")
        check(try FileSystem.readFile(depthPath, limit: bytes.count) == bytes, "readFile at its limit")
        check(try FileSystem.readPrefix(depthPath, count: 64) == Array(bytes.prefix(64)), "readPrefix")
    } catch {
        fail("reading \(bytes.count) bytes: \(error)")
    }
    if !bytes.isEmpty {
        do {
            _ = try FileSystem.readFile(depthPath, limit: bytes.count - 1)
            fail("readFile read a file beyond its limit")
        } catch let error as RGBDError {
            check(error.description.hasPrefix(depthPath + ": "), "an error that does not name the file: \(error)")
        } catch {
            fail("not an RGBDError: \(error)")
        }
    }

    // The capture as `rgbd rectify` and `rgbd info` read it: the same verdict.
    let loaded: Result<Capture, RGBDError>
    do {
        loaded = .success(try Capture.load(json: json))
    } catch let error as RGBDError {
        loaded = .failure(error)
    } catch {
        fail("not an RGBDError: \(error)")
    }
    let described: Result<CaptureInfo, RGBDError>
    do {
        described = .success(try CaptureInfo.read(json: json))
    } catch let error as RGBDError {
        described = .failure(error)
    } catch {
        fail("not an RGBDError: \(error)")
    }
    switch (loaded, described) {
    case (.failure(let error), .failure(let other)):
        check(error.description == other.description, "load and info disagree: \(error) / \(other)")
        check(!error.description.contains("\n"), "a message of more than one line: \(error)")
        check(error.description.hasPrefix(depthPath + ": ") || error.description.hasPrefix(json + ": "),
              "an error that names no file of the capture: \(error)")
        return 0
    case (.success(let capture), .success(let info)):
        let depth = capture.depth
        check(depth.width == info.depth.width && depth.height == info.depth.height, "load and info: depth sizes differ")
        check(depth.width >= 1 && depth.height >= 1 && depth.samples.count == depth.width * depth.height,
              "depth map \(depth.width)×\(depth.height) with \(depth.samples.count) samples")
        check(depth.width * depth.height <= InputLimits.maxDepthPixels, "a depth map beyond the limit")
        check(depth.samples.allSatisfy { $0.isNaN || ($0 > 0 && $0 <= 1000) }, "a depth that is neither a hole nor positive")
        guard depth.width * depth.height <= 1 << 14 else { return 0 }
        let serial = capture.rectified(with: Rectifier(scheduler: .serial))
        let parallel = capture.rectified(with: Rectifier(scheduler: .parallel))
        check(serial.depth.samples.map(\.bitPattern) == parallel.depth.samples.map(\.bitPattern), "depth: serial != parallel")
        check(serial.depth.samples.allSatisfy { $0.isNaN || ($0 > 0 && $0.isFinite) }, "a rectified depth that is not a depth")
        return 0
    case (.failure(let error), .success(let info)):
        // A depth map of the wrong shape: load refuses it, info describes the capture and
        // lists the same error (docs/info.md). Anything else is a disagreement.
        check(info.errors.contains { $0.description == error.description },
              "load refused what info accepted: \(error)")
        check(!error.description.contains("\n"), "a message of more than one line: \(error)")
        return 0
    case (.success, .failure(let error)):
        fail("info refused what load accepted: \(error)")
    }
}
