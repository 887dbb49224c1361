// libFuzzer target: any bytes as an OpenEXR depth image on disk (`EXRDepth`, the reader
// of Record3D's "EXR + JPG" export: OpenEXRCore behind rgbd's wrapper, which picks the
// channel, converts half, places the data window in the display window and bounds what
// it allocates). A finding is a crash, a sanitizer report, an error that is not an
// RGBDError of one line naming the file, a map larger than `InputLimits.maxDepthPixels`
// or whose samples do not fill it, or two reads of the same file that disagree.
// Fuzz/README.md.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFuzzDriver
import RGBDKit

// SwiftPM names this module's entry point FuzzEXR_main and links it as `main`, so
// libFuzzer's own main is not used: its driver is called from here.
exit(rgbd_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzzOne($0, $1) })

/// Stops the fuzzer with a finding (a trap, which libFuzzer reports with the input).
func fail(_ message: String) -> Never {
    fatalError("FuzzEXR finding: \(message)")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// The file each input is written to, in a directory of this process's own
/// (`rgbd_fuzz_scratch_file`; a static, made on first use: top-level code after the
/// driver's call never runs).
enum Scratch {
    static let file: String = {
        guard let path = rgbd_fuzz_scratch_file("0.exr") else { fail("cannot create a temporary directory") }
        return String(cString: path)
    }()
}

/// One read: the map's size and sample bits, or the error's description (checked: an
/// RGBDError of one line naming the file).
func read(_ path: String) -> Result<(width: Int, height: Int, bits: [UInt32]), RGBDError> {
    do {
        let map = try EXRDepth.read(path: path)
        check(map.width > 0 && map.height > 0, "an empty map (\(map.width)×\(map.height))")
        check(map.width * map.height <= InputLimits.maxDepthPixels, "a map of \(map.width)×\(map.height) over the limit")
        check(map.channels == 1 && map.samples.count == map.width * map.height,
              "\(map.samples.count) samples for \(map.width)×\(map.height)×\(map.channels)")
        return .success((map.width, map.height, map.samples.map(\.bitPattern)))
    } catch {
        guard let error = error as? RGBDError else { fail("not an RGBDError: \(error)") }
        check(error.description.hasPrefix(path + ": "), "an error that does not name the file: \(error)")
        check(!error.description.contains("\n") && !error.description.contains("\r"),
              "a message of more than one line: \(error)")
        return .failure(error)
    }
}

/// One input: the file's bytes, read twice.
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let path = Scratch.file
    check(rgbd_fuzz_write_file(path, data, size) == 0, "cannot write \(path)")
    switch (read(path), read(path)) {
    case (.success(let a), .success(let b)):
        check(a.width == b.width && a.height == b.height && a.bits == b.bits, "two reads give different maps")
    case (.failure(let a), .failure(let b)):
        check(a.description == b.description, "two reads fail differently: \(a) / \(b)")
    default:
        fail("one read succeeds and the other fails")
    }
    return 0
}
