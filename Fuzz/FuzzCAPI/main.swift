// libFuzzer target: the C ABI's load-from-memory path (rgbd_capture_load_memory) and
// everything a loaded handle offers, through the C functions alone. The input is a
// capture JSON and a JPEG: 2 bytes (little-endian) give the JSON's length, the JSON
// follows, the rest is the JPEG. A finding is a crash, a sanitizer report, a failure
// without a message, or results that disagree with the sizes the handle reports.
// Fuzz/README.md; Scripts/fuzz.sh.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFuzzDriver
import CRGBD
import RGBDKit

// SwiftPM names this module's entry point FuzzCAPI_main and links it as `main`, so
// libFuzzer's own main is not used: its driver is called from here.
exit(rgbd_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzzOne($0, $1) })

/// Stops the fuzzer with a finding (a trap, which libFuzzer reports with the input).
func fail(_ message: String) -> Never {
    fatalError("FuzzCAPI finding: \(message)")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// A call that must succeed on a loaded capture.
func ok(_ status: Int32, _ what: String) {
    check(status == RGBD_OK, "\(what) failed (\(status)): \(String(cString: rgbd_last_error()))")
}

/// One input: [JSON length, 2 bytes LE] [JSON] [JPEG].
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size >= 2 else { return 0 }
    let jsonSize = min(size - 2, Int(data[0]) | Int(data[1]) << 8)
    let json = data + 2, jpeg = data + 2 + jsonSize, jpegSize = size - 2 - jsonSize
    var capture: OpaquePointer? = nil
    let status = rgbd_capture_load_memory(json, jsonSize, jpeg, jpegSize, "fuzz.json", &capture)
    guard status == RGBD_OK, let capture else {
        check(capture == nil, "a handle returned with status \(status)")
        let message = String(cString: rgbd_last_error())
        check(!message.isEmpty && !message.contains("\n"), "status \(status) with message '\(message)'")
        return 0
    }
    defer { rgbd_capture_destroy(capture) }
    exercise(capture, seed: size)
    return 0
}

func exercise(_ capture: OpaquePointer, seed: Int) {
    var cw: Int32 = 0, ch: Int32 = 0, dw: Int32 = 0, dh: Int32 = 0, rw: Int32 = 0, rh: Int32 = 0
    ok(rgbd_capture_color_size(capture, &cw, &ch), "color_size")
    ok(rgbd_capture_depth_size(capture, &dw, &dh), "depth_size")
    ok(rgbd_capture_reference_size(capture, &rw, &rh), "reference_size")
    check(cw > 0 && ch > 0 && dw > 0 && dh > 0 && rw > 0 && rh > 0, "sizes \(cw)×\(ch), \(dw)×\(dh), \(rw)×\(rh)")
    var k = rgbd_intrinsics()
    for which in [RGBD_INTRINSICS_REFERENCE, RGBD_INTRINSICS_COLOR, RGBD_INTRINSICS_DEPTH] {
        ok(rgbd_capture_intrinsics(capture, which, &k), "intrinsics \(which)")
    }
    var cx = 0.0, cy = 0.0, count = 0
    ok(rgbd_capture_distortion_center(capture, &cx, &cy), "distortion_center")
    ok(rgbd_capture_lookup_table(capture, 0, nil, 0, &count), "lookup_table count")
    check(count >= 2, "a table of \(count) entries")
    var table = [Float](repeating: 0, count: count)
    ok(rgbd_capture_lookup_table(capture, 0, &table, count, &count), "lookup_table")

    // The pixel work only for sizes a fuzzer can afford many times a second.
    let colorSize = Int(cw) * Int(ch) * 3, depthCount = Int(dw) * Int(dh)
    guard colorSize <= 3 << 18, depthCount <= 1 << 16 else { return }
    var depth = [Float](repeating: 0, count: depthCount)
    ok(rgbd_capture_rectified_depth(capture, &depth, depthCount), "rectified_depth")
    check(rgbd_capture_rectified_depth(capture, &depth, depthCount - 1) == RGBD_ERROR_INVALID_ARGUMENT,
          "a too small depth buffer accepted")
    var rgb = [UInt8](repeating: 0, count: colorSize)
    ok(rgbd_capture_rectified_color(capture, &rgb, colorSize), "rectified_color")

    var options = rgbd_cloud_options()
    rgbd_cloud_options_default(&options)
    options.stride = Int32(1 + seed % 4)
    options.keep_edges = Int32(seed % 2)
    options.normals = Int32(seed / 2 % 2)
    options.axes = Int32(seed / 4 % 2)
    var points = 0, kept = 0
    ok(rgbd_capture_point_cloud_count(capture, &options, &points), "point_cloud_count")
    options.keep_edges = 1
    options.stride = 1
    ok(rgbd_capture_point_cloud_count(capture, &options, &kept), "point_cloud_count (all)")
    check(kept == depth.filter { !$0.isNaN }.count, "\(kept) points with edges kept, \(depth.filter { !$0.isNaN }.count) depths")
    check(points <= kept, "\(points) points, more than the \(kept) depths")
    let capacity = max(1, kept)
    var xyz = [Float](repeating: 0, count: capacity * 3), colors = [UInt8](repeating: 0, count: capacity * 3)
    var normals = [Float](repeating: 0, count: capacity * 3), written = 0
    ok(rgbd_capture_point_cloud(capture, &options, &xyz, &colors, &normals, capacity, &written), "point_cloud")
    check(written == kept, "\(written) points written, \(kept) counted")
}
