// libFuzzer target: any bytes as an LZFSE stream (`LZFSE.decompress`, the decoder of
// Record3D's `.depth` and `.conf` frames), with an output limit of 1 MiB. A finding is a
// crash, a sanitizer report, an error that is not an RGBDError of one line starting
// `LZFSE: ` with no file, an output over the limit, two decodings that differ, or a limit
// that does not hold exactly (the output's own size must decode, one byte less must not).
// Fuzz/README.md.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFuzzDriver
import RGBDKit

// SwiftPM names this module's entry point FuzzLZFSE_main and links it as `main`, so
// libFuzzer's own main is not used: its driver is called from here.
exit(rgbd_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzzOne($0, $1) })

/// Stops the fuzzer with a finding (a trap, which libFuzzer reports with the input).
func fail(_ message: String) -> Never {
    fatalError("FuzzLZFSE finding: \(message)")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// The output, or the error's description after checking that it is a proper one.
func decode(_ input: UnsafeRawBufferPointer, limit: Int) -> Result<[UInt8], RGBDError> {
    do {
        return .success(try LZFSE.decompress(input, outputLimit: limit))
    } catch let error as RGBDError {
        check(error.kind == .invalidImage && error.file == nil, "an error of kind \(error.kind) or with a file: \(error)")
        check(error.description.hasPrefix("LZFSE: "), "an error without its prefix: \(error)")
        check(!error.description.contains("\n"), "a message of more than one line: \(error)")
        return .failure(error)
    } catch {
        fail("not an RGBDError: \(error)")
    }
}

/// One input: the stream's bytes.
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    let limit = 1 << 20
    let first = decode(input, limit: limit)
    let second = decode(input, limit: limit)
    switch (first, second) {
    case (.success(let output), .success(let again)):
        check(output.count <= limit, "\(output.count) bytes, over the limit")
        check(output == again, "two decodings differ")
        check((try? LZFSE.decompress(input, outputLimit: output.count)) == output, "the output's own size as the limit fails")
        if !output.isEmpty {
            let over = try? LZFSE.decompress(input, outputLimit: output.count - 1)
            check(over == nil, "decoded beyond the limit")
        }
        // The array entry point agrees with the pointer one.
        check((try? LZFSE.decompress(Array(input), outputLimit: limit)) == output, "the array entry point differs")
    case (.failure(let error), .failure(let again)):
        check(error == again, "two decodings fail differently: \(error) / \(again)")
    default:
        fail("two decodings disagree")
    }
    return 0
}
