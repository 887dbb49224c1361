// libFuzzer target: any bytes as a Portrait photo (Capture.load(photoBytes:name:), the
// C ABI's rgbd_capture_load_photo_memory path): the HEIC depth image through libheif or
// the JPEG's MPF index, the XMP reader, the lens polynomial, the depth values; then
// rectification serially and in parallel, which must agree bit for bit. The same bytes
// also go to the XMP reader alone. A finding is a crash, a sanitizer report, an error
// that is not an RGBDError naming the file, or a broken invariant. Fuzz/README.md.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFuzzDriver
import RGBDKit

exit(rgbd_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzzOne($0, $1) })

func fail(_ message: String) -> Never {
    fatalError("FuzzPortrait finding: \(message)")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    // The XMP reader on anything: it only ever returns fields.
    let xmp = PortraitXMP(bytes)
    for (name, _) in xmp.fields { check(!name.contains("<"), "a field name with markup: \(name)") }
    // The packet's calibration and depth description, as for a 128×96 photo: refused
    // with one line naming the file, or plausible (finite, so no output holds a NaN).
    do {
        let calibration = try PortraitReader.calibration(xmp, imageWidth: 128, imageHeight: 96, file: "fuzz.xmp")
        if let problem = CalibrationPlausibility.problem(of: calibration) {
            fail("an implausible calibration accepted: \(problem.message)")
        }
        let info = try PortraitReader.depthInfo(xmp, bits: 8, container: "XMP", file: "fuzz.xmp")
        for stored in [0.0, 1, 128, 255] {
            let meters = info.meters(ofStored: stored)
            // (Beyond a float's range is +infinity, which reading discards as beyond the maximum.)
            check(meters.isNaN || meters > 0, "a depth of \(meters) m from stored \(stored)")
        }
    } catch let error as RGBDError {
        check(error.description.hasPrefix("fuzz.xmp: "), "an error that does not name the file: \(error)")
        check(!error.description.contains("\n"), "a message of more than one line: \(error)")
    } catch {
        fail("not an RGBDError: \(error)")
    }
    // Big images are refused or decoded, not rectified (time).
    if let (width, height) = try? PhotoDecoder.size(of: bytes), width * height > 1 << 18 { return 0 }
    let capture: Capture
    do {
        capture = try Capture.load(photoBytes: bytes, name: "fuzz.heic")
    } catch let error as RGBDError {
        check(error.description.hasPrefix("fuzz.heic"), "an error that does not name the file: \(error)")
        check(!error.description.contains("\n"), "a message of more than one line: \(error)")
        return 0
    } catch {
        fail("not an RGBDError: \(error)")
    }
    let c = capture.calibration
    if let problem = CalibrationPlausibility.problem(of: c) { fail("an implausible calibration accepted: \(problem.message)") }
    check(c.lookupTable.count == LensPolynomial.tableCount, "table of \(c.lookupTable.count) entries")
    check(c.lookupTable.allSatisfy { $0 > -1 && $0 < 10 }, "table out of range")
    check(capture.depth.samples.allSatisfy { $0.isNaN || ($0 > 0 && $0.isFinite) }, "a depth that is not positive or NaN")
    check(capture.metadata.portrait != nil, "a Portrait capture without its depth description")
    guard capture.depth.width * capture.depth.height <= 1 << 16 else { return 0 }
    let serial = capture.rectified(with: Rectifier(scheduler: .serial))
    let parallel = capture.rectified(with: Rectifier(scheduler: .parallel))
    check(serial.color.samples == parallel.color.samples, "color: serial != parallel")
    check(serial.depth.samples.map(\.bitPattern) == parallel.depth.samples.map(\.bitPattern), "depth: serial != parallel")
    return 0
}
