// libFuzzer target: the capture JSON reader on arbitrary bytes, and what a capture it
// accepts goes through (calibration scaled to the depth map, depth rectification serial
// and parallel, colors averaged from a color image of another size, the point cloud).
// A finding is a crash, a sanitizer report, an error that is not an RGBDError, or
// serial != parallel. Fuzz/README.md; Scripts/fuzz.sh.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFuzzDriver
import RGBDKit

// SwiftPM names this module's entry point FuzzJSON_main and links it as `main`, so
// libFuzzer's own main is not used: its driver is called from here.
exit(rgbd_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzzOne($0, $1) })

/// One input.
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let contents: CaptureReader.Contents
    do {
        contents = try CaptureReader.parse(bytes, file: "fuzz.json")
    } catch let error as RGBDError {
        check(!error.description.isEmpty && !error.description.contains("\n"), "one-line error: \(error)")
        return 0
    } catch {
        fail("not an RGBDError: \(error)")
    }
    exercise(contents, seed: size)
    return 0
}

/// Stops the fuzzer with a finding (a trap, which libFuzzer reports with the input).
func fail(_ message: String) -> Never {
    fatalError("FuzzJSON finding: \(message)")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// What the rest of rgbd relies on from an accepted capture, and the work it then does.
func exercise(_ contents: CaptureReader.Contents, seed: Int) {
    let depth = contents.depth, calibration = contents.calibration
    check(depth.width >= 1 && depth.height >= 1 && depth.samples.count == depth.width * depth.height,
          "depth map \(depth.width)×\(depth.height) with \(depth.samples.count) samples")
    check(depth.samples.allSatisfy { $0.isNaN || ($0 > 0 && $0.isFinite) }, "a depth that is neither a hole nor positive")
    check(calibration.lookupTable.count >= 2, "lookup table of \(calibration.lookupTable.count) entries")
    let (W, H) = calibration.referenceSize
    check(W >= 1 && H >= 1, "reference size \(W)×\(H)")
    if let problem = CalibrationPlausibility.problem(of: calibration) {
        fail("an implausible calibration accepted: \(problem.message)")
    }
    guard depth.width * depth.height <= 4096 else { return }

    let depthCalibration = calibration.scaled(toWidth: depth.width, height: depth.height)
    let serial = Rectifier(scheduler: .serial).rectify(depth, distortion: depthCalibration.distortion)
    let parallel = Rectifier().rectify(depth, distortion: depthCalibration.distortion)
    check(serial.samples.map(\.bitPattern) == parallel.samples.map(\.bitPattern), "depth: serial != parallel")

    // A color image of a size chosen by the input (larger or smaller than the depth map).
    let width = 1 + seed % 37, height = 1 + (seed / 37) % 29
    let color = ColorImage(width: width, height: height, channels: 3,
                           samples: (0..<(width * height * 3)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ seed) })
    let colorCalibration = calibration.scaled(toWidth: width, height: height)
    let fused = Rectifier(scheduler: .serial).rectifyAreaAveraged(
        color, distortion: colorCalibration.distortion, toWidth: depth.width, height: depth.height)
    let rectifiedColor = Rectifier().rectify(color, distortion: colorCalibration.distortion)
    let twoSteps = rectifiedColor.areaAverage(toWidth: depth.width, height: depth.height)
    check(fused.samples == twoSteps.samples, "colors: fused != two steps")

    var options = PointCloudOptions()
    options.normals = seed % 2 == 0
    options.stride = 1 + seed % 3
    let cloud = PointCloud(depth: parallel, intrinsics: depthCalibration.intrinsics, colors: twoSteps, options: options)
    let points = UnsafeMutablePointer<Float>.allocate(capacity: max(1, cloud.count * 3))
    let colors = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, cloud.count * 3))
    let normals = UnsafeMutablePointer<Float>.allocate(capacity: max(1, cloud.count * 3))
    defer { points.deallocate(); colors.deallocate(); normals.deallocate() }
    let written = cloud.fill(rows: 0..<depth.height, points: points, colors: colors, normals: normals)
    check(written == cloud.count, "point cloud: \(written) written, \(cloud.count) counted")
}
