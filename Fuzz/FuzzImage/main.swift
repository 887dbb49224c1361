// libFuzzer target: image decoding, rectification and the point cloud on arbitrary
// image bytes, with a fixed small calibration (Capture.load(jsonBytes:jpegBytes:), the
// C ABI's path, then what `rgbd rectify` and `rgbd cloud` compute). Every result is
// computed serially and in parallel, which must agree bit for bit. A finding is a
// crash, a sanitizer report, an error that is not an RGBDError, or a disagreement.
// Fuzz/README.md; Scripts/fuzz.sh.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFuzzDriver
import RGBDKit

// SwiftPM names this module's entry point FuzzImage_main and links it as `main`, so
// libFuzzer's own main is not used: its driver is called from here.
exit(rgbd_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzzOne($0, $1) })

/// Stops the fuzzer with a finding (a trap, which libFuzzer reports with the input).
func fail(_ message: String) -> Never {
    fatalError("FuzzImage finding: \(message)")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// An iPhone-like calibration (reference 4032×3024, a 42-entry barrel table) with a
/// `width × height` depth map of 2 m with a few holes, as capture JSON.
func captureJSON(depthWidth width: Int, height: Int) -> [UInt8] {
    let table = (0..<42).map { i -> String in
        let s = Double(i) / 41
        return "\(-0.028 * s * s - 0.012 * s * s * s * s)"
    }
    let rows = (0..<height).map { y in
        "[" + (0..<width).map { x in (x * 7 + y * 3) % 11 == 0 ? "0" : "\(2 + Double(x + y) / 100)" }.joined(separator: ",") + "]"
    }
    let text = """
        {"calibration_data": {"intrinsic_matrix": [[2900, 0, 0], [0, 2900, 0], [2016.3, 1511.6, 1]],
         "intrinsic_matrix_reference_dimensions": [4032, 3024], "lens_distortion_center": [2015.53, 1511.21],
         "lens_distortion_lookup_table": [\(table.joined(separator: ","))]},
         "depth_data": [\(rows.joined(separator: ","))]}
        """
    return Array(text.utf8)
}

/// One input: the image bytes.
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let jpeg = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    // The depth map's size: coarser than the image, or finer (both happen in the wild).
    guard let (width, height) = try? PhotoDecoder.size(of: jpeg), width * height <= 1 << 18 else {
        // Unreadable headers and big images are still decoded (or refused), not rectified.
        do { _ = try PhotoDecoder.decodeRGB(jpeg, file: "fuzz.jpg") } catch is RGBDError {} catch { fail("\(error)") }
        return 0
    }
    for (depthWidth, depthHeight) in [(max(1, width / 4), max(1, height / 4)), (min(96, width * 2), min(72, height * 2))] {
        let capture: Capture
        do {
            capture = try Capture.load(jsonBytes: captureJSON(depthWidth: depthWidth, height: depthHeight),
                                       jpegBytes: jpeg, name: "fuzz")
        } catch let error as RGBDError {
            check(error.description.contains("fuzz"), "an error that does not name the file: \(error)")
            return 0
        } catch {
            fail("not an RGBDError: \(error)")
        }
        check(capture.color.width == width && capture.color.height == height, "decoded size != header size")
        let serial = capture.rectified(with: Rectifier(scheduler: .serial))
        let parallel = capture.rectified(with: Rectifier(scheduler: .parallel))
        check(serial.color.samples == parallel.color.samples, "color: serial != parallel")
        check(serial.depth.samples.map(\.bitPattern) == parallel.depth.samples.map(\.bitPattern), "depth: serial != parallel")

        // `rgbd cloud`'s colors: rectified and averaged band by band, as in two steps.
        let distortion = capture.calibration.scaled(toWidth: width, height: height).distortion
        for scheduler in [RowScheduler.serial, .parallel] {
            let fused = Rectifier(scheduler: scheduler).rectifyAreaAveraged(
                capture.color, distortion: distortion, toWidth: depthWidth, height: depthHeight)
            let twoSteps = parallel.color.areaAverage(toWidth: depthWidth, height: depthHeight, scheduler: scheduler)
            check(fused.samples == twoSteps.samples, "colors: fused != two steps (\(scheduler))")
        }
        var options = PointCloudOptions()
        options.normals = true
        let cloud = PointCloud(parallel, options: options)
        var count = 0
        cloud.forEachPoint { _ in count += 1 }
        check(count == cloud.count, "point cloud: \(count) points, \(cloud.count) counted")
    }
    return 0
}
