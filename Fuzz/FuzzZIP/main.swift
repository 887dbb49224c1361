// libFuzzer target: any bytes as a ZIP file on disk (`ZIPArchive`, the reader of
// Record3D's `.r3d`), every entry read with a limit of 16 MiB, serially and from several
// threads at once. A finding is a crash, a sanitizer report, an error that is not an
// RGBDError of one line naming the file, an entry not found by its name, a read over the
// limit, or reads that disagree. Fuzz/README.md.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFuzzDriver
import Dispatch
import RGBDKit

// SwiftPM names this module's entry point FuzzZIP_main and links it as `main`, so
// libFuzzer's own main is not used: its driver is called from here.
exit(rgbd_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzzOne($0, $1) })

/// Stops the fuzzer with a finding (a trap, which libFuzzer reports with the input).
func fail(_ message: String) -> Never {
    fatalError("FuzzZIP finding: \(message)")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// The file each input is written to, in a directory of this process's own
/// (`rgbd_fuzz_scratch_file`; a static, made on first use: top-level code after the
/// driver's call never runs).
enum Scratch {
    static let file: String = {
        guard let path = rgbd_fuzz_scratch_file("scan.r3d") else { fail("cannot create a temporary directory") }
        return String(cString: path)
    }()
}

/// Checks an error: an RGBDError of one line naming the file.
func checkError(_ error: any Error, _ path: String) -> RGBDError {
    guard let error = error as? RGBDError else { fail("not an RGBDError: \(error)") }
    check(error.description.hasPrefix(path + ": "), "an error that does not name the file: \(error)")
    check(!error.description.contains("\n") && !error.description.contains("\r"), "a message of more than one line: \(error)")
    return error
}

/// One entry read: its bytes or its error's description.
func read(_ archive: ZIPArchive, _ entry: ZIPArchive.Entry, limit: Int) -> Result<[UInt8], RGBDError> {
    do {
        let bytes = try archive.read(entry, limit: limit)
        check(bytes.count == entry.uncompressedSize && bytes.count <= limit, "\(bytes.count) bytes read for \(entry.uncompressedSize)")
        return .success(bytes)
    } catch {
        return .failure(checkError(error, archive.path))
    }
}

/// One input: the file's bytes.
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let path = Scratch.file
    check(rgbd_fuzz_write_file(path, data, size) == 0, "cannot write \(path)")
    let archive: ZIPArchive
    do {
        archive = try ZIPArchive(path: path)
    } catch {
        _ = checkError(error, path)
        return 0
    }
    let limit = 16 << 20
    var serial: [Result<[UInt8], RGBDError>] = []
    for entry in archive.entries {
        let found = archive.entry(named: entry.name)
        check(found != nil, "entry \(entry.name) not found by its name")
        serial.append(read(archive, entry, limit: limit))
        if case .success(let bytes) = serial.last, !bytes.isEmpty {
            if case .success = read(archive, entry, limit: bytes.count - 1) { fail("read beyond the limit") }
        }
    }
    // The same reads from several threads at once (archives of two entries or more:
    // waking the threads costs more than the reads of most inputs).
    let count = archive.entries.count
    guard count >= 2 else { return 0 }
    let results = UnsafeMutableBufferPointer<Result<[UInt8], RGBDError>?>.allocate(capacity: count)
    results.initialize(repeating: nil)
    defer { results.deinitialize(); results.deallocate() }
    nonisolated(unsafe) let shared = results
    DispatchQueue.concurrentPerform(iterations: count) { i in
        shared[i] = read(archive, archive.entries[i], limit: limit)
    }
    for i in 0..<count {
        switch (serial[i], results[i]) {
        case (.success(let a), .success(let b)?): check(a == b, "parallel read differs")
        case (.failure(let a), .failure(let b)?): check(a == b, "parallel read fails differently: \(a) / \(b)")
        default: fail("serial and parallel reads disagree")
        }
    }
    return 0
}
