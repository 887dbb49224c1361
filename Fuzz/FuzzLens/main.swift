// libFuzzer target: the lens kernels with fuzzed image sizes, channels, distortion
// centers and tables — through the C ABI (rgbd_rectify_u8 / rgbd_rectify_f32, which
// must refuse what is invalid with a message) and through the Swift kernels directly,
// including models the checks would refuse (NaN or huge centers and entries). Serial
// and parallel results, the precomputed map and the frame rectifier (Swift and C, with
// and without its map, rows padded) must agree bit for bit. A finding is a crash, a
// sanitizer report or a disagreement. Fuzz/README.md; Scripts/fuzz.sh.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFuzzDriver
import CRGBD
import RGBDKit

// SwiftPM names this module's entry point FuzzLens_main and links it as `main`, so
// libFuzzer's own main is not used: its driver is called from here.
exit(rgbd_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzzOne($0, $1) })

/// Stops the fuzzer with a finding (a trap, which libFuzzer reports with the input).
func fail(_ message: String) -> Never {
    fatalError("FuzzLens finding: \(message)")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// The input read front to back; zeros once it runs out.
struct Input {
    let data: UnsafeBufferPointer<UInt8>
    var offset = 0

    mutating func byte() -> UInt8 {
        defer { offset += 1 }
        return offset < data.count ? data[offset] : 0
    }
    mutating func u16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }
    mutating func u32() -> UInt32 { UInt32(u16()) | UInt32(u16()) << 16 }
    mutating func u64() -> UInt64 { UInt64(u32()) | UInt64(u32()) << 32 }

    /// A Float: any bit pattern (NaN, infinities, huge) or, mostly, a lens-like value.
    mutating func magnification() -> Float {
        switch byte() % 4 {
        case 0: return Float(bitPattern: u32())
        case 1: return Float(Int8(bitPattern: byte())) / 100
        default: return Float(Int16(bitPattern: u16())) / 32768 * 0.2
        }
    }

    /// A Double coordinate: any bit pattern or, mostly, near the image.
    mutating func coordinate(_ size: Int32) -> Double {
        byte() % 4 == 0 ? Double(bitPattern: u64()) : Double(size) * (Double(Int16(bitPattern: u16())) / 16384 + 0.5)
    }
}

/// One input: the parameters, then the pixels (repeated as needed).
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    var input = Input(data: UnsafeBufferPointer(start: data, count: size))
    let width = Int32(1 + input.byte() % 80), height = Int32(1 + input.byte() % 60)
    let channels = Int32(input.byte() % 6)  // 1, 3 and 4 are valid
    let referenceWidth = input.byte() % 8 == 0 ? Int32(bitPattern: input.u32()) : Int32(1 + input.u16() % 5000)
    let referenceHeight = input.byte() % 8 == 0 ? Int32(bitPattern: input.u32()) : Int32(1 + input.u16() % 5000)
    let centerX = input.coordinate(referenceWidth), centerY = input.coordinate(referenceHeight)
    let tableCount = Int(input.byte() % 70)
    let table = (0..<tableCount).map { _ in input.magnification() }
    let step = input.byte() % 4 == 0 ? Float(bitPattern: input.u32()) : Float(input.byte()) / 256
    let pixels = Int(width) * Int(height)
    let start = min(input.offset, size)
    let rest = size - start
    let samples = (0..<(pixels * 4)).map { i in rest > 0 ? data[start + i % rest] : UInt8(truncatingIfNeeded: i * 7) }
    let depths = (0..<pixels).map { i -> Float in
        let b = samples[i]
        return b < 16 ? .nan : Float(b) / 64
    }

    // The C ABI: a status for everything, a message for every refusal.
    table.withUnsafeBufferPointer { t in
        var lens = rgbd_lens(reference_width: referenceWidth, reference_height: referenceHeight, center_x: centerX,
                             center_y: centerY, table: t.baseAddress, table_count: tableCount)
        var out = [UInt8](repeating: 0, count: pixels * max(1, Int(channels)))
        let status = rgbd_rectify_u8(&lens, samples, width, height, channels, &out)
        check(status == RGBD_OK || !String(cString: rgbd_last_error()).isEmpty, "u8: status \(status) without a message")
        var depthOut = [Float](repeating: 0, count: pixels)
        let depthStatus = rgbd_rectify_f32(&lens, depths, width, height, step, &depthOut)
        check(depthStatus == RGBD_OK || !String(cString: rgbd_last_error()).isEmpty, "f32: status \(depthStatus) without a message")

        // The frame rectifier through C: refused with a message, or the same bits as
        // rgbd_rectify_u8 / _f32 from rows padded by `pad` bytes (padding untouched).
        for mapBytes in [Int(RGBD_RECTIFIER_MAP_BYTES_DEFAULT), 0] {
            var handle: OpaquePointer? = nil
            let created = rgbd_rectifier_create(&lens, width, height, step, mapBytes, &handle)
            guard created == RGBD_OK, let handle else {
                check(handle == nil && !String(cString: rgbd_last_error()).isEmpty,
                      "rectifier_create: status \(created) without a message or with a handle")
                continue
            }
            defer { rgbd_rectifier_destroy(handle) }
            let c = Int(channels)
            guard (1...4).contains(c) else {
                var byte: UInt8 = 0
                check(rgbd_rectifier_apply_u8(handle, channels, samples, 1, 1, &byte, 1, 1) != RGBD_OK
                      && !String(cString: rgbd_last_error()).isEmpty, "rectifier took \(c) channels")
                continue
            }
            // rgbd_rectify_u8 takes 1, 3 and 4 channels: with those, the lens it refused
            // the rectifier must refuse too.
            check(status == RGBD_OK || c == 2, "rectifier created for a lens rgbd_rectify_u8 refused")
            let pad = Int(samples[2] % 5)
            let row = Int(width) * c + pad, planeBytes = Int(height) * row
            var padded = [UInt8](repeating: 0xA5, count: planeBytes), result = [UInt8](repeating: 0x5A, count: planeBytes)
            for y in 0..<Int(height) {
                for i in 0..<(Int(width) * c) { padded[y * row + i] = samples[y * Int(width) * c + i] }
            }
            let applied = rgbd_rectifier_apply_u8(handle, channels, padded, row, planeBytes, &result, row, planeBytes)
            check(applied == RGBD_OK, "rectifier_apply_u8 failed: \(String(cString: rgbd_last_error()))")
            for y in 0..<Int(height) {
                if c != 2 {
                    check(result[(y * row)..<(y * row + Int(width) * c)].elementsEqual(out[(y * Int(width) * c)..<((y + 1) * Int(width) * c)]),
                          "rectifier u8 != rgbd_rectify_u8 (row \(y), map \(mapBytes))")
                }
                check(result[(y * row + Int(width) * c)..<((y + 1) * row)].allSatisfy { $0 == 0x5A }, "rectifier wrote padding")
            }
            var frameDepth = [Float](repeating: 0, count: pixels)
            let depthApplied = frameDepth.withUnsafeMutableBytes { dst in
                depths.withUnsafeBytes { src in
                    rgbd_rectifier_apply_f32(handle, src.baseAddress?.assumingMemoryBound(to: Float.self), Int(width) * 4,
                                             src.count, dst.baseAddress?.assumingMemoryBound(to: Float.self),
                                             Int(width) * 4, dst.count)
                }
            }
            check(depthApplied == depthStatus, "rectifier f32 status \(depthApplied) != rgbd_rectify_f32's \(depthStatus)")
            if depthApplied == RGBD_OK {
                check(frameDepth.map(\.bitPattern) == depthOut.map(\.bitPattern), "rectifier f32 != rgbd_rectify_f32")
            }
        }
    }

    // The kernels on a validated model, and on any model with at least two entries.
    var models: [LensDistortion] = []
    if let validated = try? LensDistortion.validated(
        center: SIMD2(centerX, centerY), referenceWidth: Int(referenceWidth), referenceHeight: Int(referenceHeight),
        table: table, width: Int(width), height: Int(height)) {
        models.append(validated)
    }
    if table.count >= 2 {
        models.append(LensDistortion(center: SIMD2(centerX, centerY), table: table, width: Int(width), height: Int(height)))
    }
    let validChannels = [1, 3, 4].contains(channels) ? Int(channels) : 3
    let image = ImageBuffer<UInt8>(width: Int(width), height: Int(height), channels: validChannels,
                                   samples: Array(samples[0..<(pixels * validChannels)]))
    let depth = DepthMap(width: Int(width), height: Int(height), channels: 1, samples: depths)
    let relativeStep = step > 0 && step.isFinite ? step : 0.05
    for model in models {
        let serial = Rectifier(scheduler: .serial, maxRelativeDepthStep: relativeStep)
        let parallel = Rectifier(scheduler: .parallel, maxRelativeDepthStep: relativeStep)
        let color = serial.rectify(image, distortion: model)
        check(color.samples == parallel.rectify(image, distortion: model).samples, "u8: serial != parallel")
        if let map = RectificationMap(model) {
            check(serial.rectify(image, map: map).samples == color.samples, "u8: map != on the fly")
        }
        let a = serial.rectify(depth, distortion: model), b = parallel.rectify(depth, distortion: model)
        check(a.samples.map(\.bitPattern) == b.samples.map(\.bitPattern), "f32: serial != parallel")
        check(zip(a.samples, depth.samples).allSatisfy { out, _ in out.isNaN || out > 0 }, "f32: invented a non-positive depth")
        if validChannels == 3 {
            let w = 1 + Int(samples[0] % 40), h = 1 + Int(samples[1] % 30)
            let fused = serial.rectifyAreaAveraged(image, distortion: model, toWidth: w, height: h)
            check(fused.samples == color.areaAverage(toWidth: w, height: h).samples, "averaged: fused != two steps")
        }
    }
    return 0
}
