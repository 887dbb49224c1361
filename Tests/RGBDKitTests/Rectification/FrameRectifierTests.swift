import Dispatch
import Testing
@testable import RGBDKit

/// `FrameRectifier` against `Rectifier` (bit for bit, on strided planes), against the
/// geometry of a known lens, and against bad arguments.
@Suite struct FrameRectifierTests {
    /// A strong lens centered off the middle (its corners sample outside the frame), as in
    /// `RectificationTests.kernelEqualsOnePixelReference`.
    static func lens(width: Int, height: Int) -> LensDistortion {
        LensDistortion(center: SIMD2(Double(width) * 0.46, Double(height) * 0.53),
                       table: (0..<42).map { 0.08 * Float($0 * $0) / 1681 }, width: width, height: height)
    }

    static func randomImage(width: Int, height: Int, channels: Int, seed: UInt64) -> ImageBuffer<UInt8> {
        var rng = SeededGenerator(seed: seed)
        return ImageBuffer(width: width, height: height, channels: channels,
                           samples: (0..<(width * height * channels)).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    /// Where two outputs first differ ("equal" when they do not): compared so, a failure
    /// is reported at once (an `#expect(a == b)` on megabyte arrays builds a difference of
    /// the two collections, which took minutes).
    static func difference(_ a: [UInt8], _ b: [UInt8]) -> String {
        guard a.count == b.count else { return "\(a.count) bytes against \(b.count)" }
        guard let i = a.indices.first(where: { a[$0] != b[$0] }) else { return "equal" }
        let count = zip(a, b).reduce(0) { $0 + ($1.0 != $1.1 ? 1 : 0) }
        return "\(count) bytes differ, the first at \(i): \(a[i]) against \(b[i])"
    }

    /// `image` copied into rows `rowBytes` apart, the padding filled with `fill`.
    static func padded(_ image: ImageBuffer<UInt8>, rowBytes: Int, fill: UInt8) -> [UInt8] {
        let row = image.width * image.channels
        var bytes = [UInt8](repeating: fill, count: (image.height - 1) * rowBytes + row)
        for y in 0..<image.height {
            bytes.replaceSubrange(y * rowBytes..<(y * rowBytes + row), with: image.samples[(y * row)..<((y + 1) * row)])
        }
        return bytes
    }

    /// The rows of a padded plane, and whether every padding byte still holds `fill`.
    static func unpadded(_ bytes: [UInt8], width: Int, height: Int, channels: Int, rowBytes: Int,
                         fill: UInt8) -> (samples: [UInt8], paddingIntact: Bool) {
        let row = width * channels
        var samples: [UInt8] = []
        var intact = true
        for y in 0..<height {
            samples += bytes[(y * rowBytes)..<(y * rowBytes + row)]
            if y < height - 1 { intact = intact && bytes[(y * rowBytes + row)..<((y + 1) * rowBytes)].allSatisfy { $0 == fill } }
        }
        return (samples, intact)
    }

    /// Rectifies `image` through padded planes (both strides larger than a row, by
    /// different amounts).
    static func rectifyPadded(_ rectifier: FrameRectifier, _ image: ImageBuffer<UInt8>) throws
        -> (samples: [UInt8], paddingIntact: Bool) {
        let row = image.width * image.channels
        let source = padded(image, rowBytes: row + 13, fill: 0x5A)
        var out = [UInt8](repeating: 0xA5, count: (image.height - 1) * (row + 7) + row)
        try source.withUnsafeBytes { src in
            try out.withUnsafeMutableBytes { dst in
                try rectifier.rectify(FramePlane(src, rowBytes: row + 13), channels: image.channels,
                                      into: MutableFramePlane(dst, rowBytes: row + 7))
            }
        }
        return unpadded(out, width: image.width, height: image.height, channels: image.channels, rowBytes: row + 7, fill: 0xA5)
    }

    @Test(arguments: [(97, 61), (1008, 756), (6, 5), (2, 2), (1, 3)], [1, 2, 3, 4])
    func equalsRectifierBitForBitOnStridedPlanes(size: (Int, Int), channels: Int) throws {
        let (width, height) = size
        let image = Self.randomImage(width: width, height: height, channels: channels, seed: UInt64(width * 10 + channels))
        let distortion = Self.lens(width: width, height: height)
        let reference = Rectifier().rectify(image, distortion: distortion).samples
        // Not the identity: the lens moves pixels (so equality is not trivially met).
        if width > 50 { #expect(reference != image.samples) }
        for limit in [FrameRectifier.defaultMapByteLimit, 0] {
            let rectifier = try FrameRectifier(distortion: distortion, mapByteLimit: limit)
            #expect(rectifier.usesMaps == (limit > 0))
            let (samples, intact) = try Self.rectifyPadded(rectifier, image)
            #expect(Self.difference(samples, reference) == "equal", "channels \(channels), \(width)×\(height), map limit \(limit)")
            #expect(intact, "the bytes between rows were written")
            #expect(Self.difference(try rectifier.rectify(image).samples, reference) == "equal")
        }
    }

    /// Row strides beyond 16-bit lanes (32767 bytes) leave the direct paths for the
    /// prepared one; both give `Rectifier`'s bits.
    @Test(arguments: [32_767, 32_768, 70_001], [1, 3, 4])
    func hugeRowStridesEqualRectifier(rowBytes: Int, channels: Int) throws {
        let (width, height) = (203, 37)
        let image = Self.randomImage(width: width, height: height, channels: channels, seed: 17)
        let distortion = Self.lens(width: width, height: height)
        let reference = Rectifier().rectify(image, distortion: distortion).samples
        let rectifier = try FrameRectifier(distortion: distortion)
        let source = Self.padded(image, rowBytes: rowBytes, fill: 0x5A)
        var out = [UInt8](repeating: 0xA5, count: (height - 1) * rowBytes + width * channels)
        try source.withUnsafeBytes { src in
            try out.withUnsafeMutableBytes { dst in
                try rectifier.rectify(FramePlane(src, rowBytes: rowBytes), channels: channels,
                                      into: MutableFramePlane(dst, rowBytes: rowBytes))
            }
        }
        let (samples, intact) = Self.unpadded(out, width: width, height: height, channels: channels, rowBytes: rowBytes,
                                              fill: 0xA5)
        #expect(Self.difference(samples, reference) == "equal")
        #expect(intact)
    }

    @Test func serialEqualsParallelAndThreadsShareOneRectifier() throws {
        let image = Self.randomImage(width: 301, height: 211, channels: 4, seed: 5)
        let distortion = Self.lens(width: 301, height: 211)
        let reference = Rectifier(scheduler: .serial).rectify(image, distortion: distortion).samples
        let serial = try FrameRectifier(distortion: distortion, scheduler: .serial)
        #expect(Self.difference(try serial.rectify(image).samples, reference) == "equal")
        let shared = try FrameRectifier(distortion: distortion)
        let results = Lock()
        nonisolated(unsafe) var outputs: [[UInt8]] = []
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            let out = (try? shared.rectify(image).samples) ?? []
            results.withLock { outputs.append(out) }
        }
        #expect(outputs.count == 6 && outputs.allSatisfy { $0 == reference })
    }

    @Test func depthEqualsRectifierBitForBit() throws {
        let depth = Scenes.small.depth
        let distortion = Scenes.small.depthCalibration.distortion
        let reference = Rectifier().rectify(depth, distortion: distortion).samples
        let rectifier = try FrameRectifier(distortion: distortion)
        #expect(identicalBits(try rectifier.rectify(depth).samples, reference))
        // Holes stay holes: the hole patch is in the reference and in ours.
        #expect(reference.contains { $0.isNaN })
        // Strided: rows 3 floats apart more than a row, the padding untouched.
        let w = depth.width, h = depth.height, stride = w + 3
        var source = [Float](repeating: -7, count: (h - 1) * stride + w)
        for y in 0..<h { for x in 0..<w { source[y * stride + x] = depth[x, y] } }
        var out = [Float](repeating: 42, count: (h - 1) * (w + 1) + w)
        try source.withUnsafeBytes { src in
            try out.withUnsafeMutableBytes { dst in
                try rectifier.rectifyDepth(FramePlane(src, rowBytes: stride * 4), into: MutableFramePlane(dst, rowBytes: (w + 1) * 4))
            }
        }
        var rows: [Float] = []
        for y in 0..<h { rows += out[(y * (w + 1))..<(y * (w + 1) + w)] }
        #expect(identicalBits(rows, reference))
        #expect((0..<(h - 1)).allSatisfy { out[$0 * (w + 1) + w] == 42 })
    }

    /// The documented siting: chroma sample `(i, j)` is the luminance-grid point
    /// `(2i, 2j + ½)`, so the chroma lens must move it where the frame's lens moves that point.
    @Test func chromaLensIsTheFrameLensOnTheChromaGrid() throws {
        let distortion = Self.lens(width: 97, height: 61)
        let rectifier = try FrameRectifier(distortion: distortion)
        #expect(rectifier.chromaWidth == 49 && rectifier.chromaHeight == 31)
        let chroma = rectifier.chromaDistortion
        for (i, j) in [(0, 0), (48, 30), (10, 20), (30, 3), (24, 15)] {
            let q = distortion.apply(to: SIMD2(2 * Double(i), 2 * Double(j) + 0.5))
            let qc = chroma.apply(to: SIMD2(Double(i), Double(j)))
            #expect(abs(2 * qc.x - q.x) < 1e-9 && abs(2 * qc.y + 0.5 - q.y) < 1e-9, "chroma sample (\(i), \(j))")
        }
    }

    @Test(arguments: [(97, 61), (640, 480)])
    func nv12EqualsLuminanceAndChromaKernels(size: (Int, Int)) throws {
        let (width, height) = size
        let distortion = Self.lens(width: width, height: height)
        let rectifier = try FrameRectifier(distortion: distortion)
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        let luma = Self.randomImage(width: width, height: height, channels: 1, seed: 1)
        let chroma = Self.randomImage(width: cw, height: ch, channels: 2, seed: 2)
        // The chroma plane's lens written out from the documentation, independently.
        let chromaLens = LensDistortion(center: SIMD2(distortion.center.x / 2, distortion.center.y / 2 - 0.25),
                                        table: distortion.table, width: cw, height: ch, maxRadius: distortion.maxRadius / 2)
        let expectedLuma = Rectifier().rectify(luma, distortion: distortion).samples
        let expectedChroma = Rectifier().rectify(chroma, distortion: chromaLens).samples
        // As in a CVPixelBuffer: both planes with padded rows (64-byte aligned strides).
        let yStride = (width + 63) / 64 * 64 + 64, cStride = (2 * cw + 63) / 64 * 64 + 64
        let ySource = Self.padded(luma, rowBytes: yStride, fill: 1), cSource = Self.padded(chroma, rowBytes: cStride, fill: 2)
        var yOut = [UInt8](repeating: 0xEE, count: yStride * height)
        var cOut = [UInt8](repeating: 0xEE, count: cStride * ch)
        try ySource.withUnsafeBytes { ys in
            try cSource.withUnsafeBytes { cs in
                try yOut.withUnsafeMutableBytes { yd in
                    try cOut.withUnsafeMutableBytes { cd in
                        try rectifier.rectifyNV12(luma: FramePlane(ys, rowBytes: yStride), chroma: FramePlane(cs, rowBytes: cStride),
                                                  intoLuma: MutableFramePlane(yd, rowBytes: yStride),
                                                  chroma: MutableFramePlane(cd, rowBytes: cStride))
                    }
                }
            }
        }
        let y = Self.unpadded(yOut, width: width, height: height, channels: 1, rowBytes: yStride, fill: 0xEE)
        let c = Self.unpadded(cOut, width: cw, height: ch, channels: 2, rowBytes: cStride, fill: 0xEE)
        #expect(Self.difference(y.samples, expectedLuma) == "equal" && y.paddingIntact)
        #expect(Self.difference(c.samples, expectedChroma) == "equal" && c.paddingIntact)
        // The last row's padding too (the buffers are whole strides long).
        #expect(yOut[((height - 1) * yStride + width)...].allSatisfy { $0 == 0xEE })
        #expect(cOut[((ch - 1) * cStride + 2 * cw)...].allSatisfy { $0 == 0xEE })
    }

    /// Ground truth: lines that are straight in the pinhole image, drawn through the lens
    /// (each distorted pixel shows what lies at its rectified position), come out of the
    /// rectifier straight and where they were drawn, on luminance frames.
    @Test func straightLinesThroughAKnownLensComeOutStraight() throws {
        let width = 480, height = 360
        // iPhone-like barrel (−4 % at the corner), center off the middle.
        let distortion = LensDistortion(center: SIMD2(243.1, 178.6),
                                        table: (0..<42).map { i in let s = Float(i) / 41; return -0.028 * s * s - 0.012 * s * s * s * s },
                                        width: width, height: height)
        let rectifier = try FrameRectifier(distortion: distortion)
        let lines = stride(from: 40.0, through: 440.0, by: 50.0).map { $0 + 0.3 }
        for vertical in [true, false] {
            // A triangle profile 3 px wide either side of each line, sampled at the
            // rectified position of every distorted pixel (LensDistortion.invert).
            var samples = [UInt8](repeating: 0, count: width * height)
            for y in 0..<height {
                for x in 0..<width {
                    let p = distortion.invert(SIMD2(Double(x), Double(y)))
                    let t = vertical ? p.x : p.y
                    let v = lines.map { max(0, 1 - abs(t - $0) / 3) }.max() ?? 0
                    samples[y * width + x] = UInt8((v * 250).rounded())
                }
            }
            let drawn = ImageBuffer(width: width, height: height, channels: 1, samples: samples)
            let rectified = try rectifier.rectify(drawn)
            // Where each line crosses each row (column), by the centroid over ±5 px.
            func crossing(_ image: ImageBuffer<UInt8>, line: Double, at across: Int) -> Double {
                let mid = Int(line.rounded())
                var sum = 0.0, weight = 0.0
                for k in (mid - 5)...(mid + 5) {
                    let v = Double(vertical ? image[k, across] : image[across, k])
                    sum += v * Double(k)
                    weight += v
                }
                return sum / weight
            }
            var worstRectified = 0.0, worstDrawn = 0.0
            let extent = vertical ? height : width
            for line in lines where line > 60 && line < Double((vertical ? width : height) - 60) {
                for across in stride(from: 30, to: extent - 30, by: 7) {
                    worstRectified = max(worstRectified, abs(crossing(rectified, line: line, at: across) - line))
                    worstDrawn = max(worstDrawn, abs(crossing(drawn, line: line, at: across) - line))
                }
            }
            #expect(worstDrawn > 1.5, "the lens bends the drawn lines")
            #expect(worstRectified < 0.1, "rectified lines are straight and in place (\(vertical ? "vertical" : "horizontal"): \(worstRectified) px)")
        }
    }

    @Test func badArgumentsThrow() throws {
        let distortion = Self.lens(width: 20, height: 10)
        let rectifier = try FrameRectifier(distortion: distortion)
        let source = [UInt8](repeating: 9, count: 20 * 10 * 4)
        var out = [UInt8](repeating: 0, count: 20 * 10 * 4)
        func attempt(channels: Int, srcRowBytes: Int, srcCount: Int = 800, dstRowBytes: Int, dstCount: Int = 800) -> Bool {
            source.withUnsafeBytes { src in
                out.withUnsafeMutableBytes { dst in
                    do {
                        try rectifier.rectify(FramePlane(UnsafeRawBufferPointer(rebasing: src[0..<srcCount]), rowBytes: srcRowBytes),
                                              channels: channels,
                                              into: MutableFramePlane(UnsafeMutableRawBufferPointer(rebasing: dst[0..<dstCount]), rowBytes: dstRowBytes))
                        return true
                    } catch let error as RGBDError {
                        return error.kind != .invalidArgument
                    } catch {
                        return true
                    }
                }
            }
        }
        #expect(attempt(channels: 4, srcRowBytes: 80, dstRowBytes: 80))        // valid
        #expect(attempt(channels: 1, srcRowBytes: 20, srcCount: 200, dstRowBytes: 20, dstCount: 200))
        #expect(!attempt(channels: 0, srcRowBytes: 80, dstRowBytes: 80))
        #expect(!attempt(channels: 5, srcRowBytes: 100, dstRowBytes: 100))
        #expect(!attempt(channels: 4, srcRowBytes: 79, dstRowBytes: 80))       // stride below a row
        #expect(!attempt(channels: 4, srcRowBytes: 80, dstRowBytes: -80))
        #expect(!attempt(channels: 4, srcRowBytes: 80, srcCount: 799, dstRowBytes: 80))  // one byte short
        #expect(!attempt(channels: 4, srcRowBytes: 80, dstRowBytes: 80, dstCount: 799))
        #expect(!attempt(channels: 4, srcRowBytes: Int.max / 2, dstRowBytes: 80))        // overflowing extent
        // NULL, overlap, misaligned depth, wrong image size, empty frames.
        #expect(throws: RGBDError.self) {
            try rectifier.rectify(FramePlane(UnsafeRawBufferPointer(start: nil, count: 0), rowBytes: 20), channels: 1,
                                  into: MutableFramePlane(UnsafeMutableRawBufferPointer(start: nil, count: 0), rowBytes: 20))
        }
        #expect(throws: RGBDError.self) {
            try out.withUnsafeMutableBytes { both in
                try rectifier.rectify(FramePlane(UnsafeRawBufferPointer(both), rowBytes: 20), channels: 1,
                                      into: MutableFramePlane(UnsafeMutableRawBufferPointer(rebasing: both[100...]), rowBytes: 20))
            }
        }
        #expect(throws: RGBDError.self) {
            try source.withUnsafeBytes { src in
                try out.withUnsafeMutableBytes { dst in
                    try rectifier.rectifyDepth(FramePlane(src, rowBytes: 82), into: MutableFramePlane(dst, rowBytes: 80))
                }
            }
        }
        #expect(throws: RGBDError.self) { try rectifier.rectify(Self.randomImage(width: 10, height: 20, channels: 3, seed: 1)) }
        #expect(throws: RGBDError.self) { try FrameRectifier(distortion: Self.lens(width: 0, height: 10)) }
        #expect(throws: RGBDError.self) { try FrameRectifier(distortion: distortion, maxRelativeDepthStep: .nan) }
        // NV12: a chroma plane one row short, and a destination that is also a source.
        let y = [UInt8](repeating: 0, count: 200), c = [UInt8](repeating: 0, count: 20 * 5)
        var yo = [UInt8](repeating: 0, count: 200), co = [UInt8](repeating: 0, count: 20 * 5)
        #expect(throws: RGBDError.self) {
            try y.withUnsafeBytes { ys in
                try c.withUnsafeBytes { cs in
                    try yo.withUnsafeMutableBytes { yd in
                        try co.withUnsafeMutableBytes { cd in
                            try rectifier.rectifyNV12(luma: FramePlane(ys, rowBytes: 20),
                                                      chroma: FramePlane(UnsafeRawBufferPointer(rebasing: cs[0..<80]), rowBytes: 20),
                                                      intoLuma: MutableFramePlane(yd, rowBytes: 20), chroma: MutableFramePlane(cd, rowBytes: 20))
                        }
                    }
                }
            }
        }
        try y.withUnsafeBytes { ys in
            try c.withUnsafeBytes { cs in
                try yo.withUnsafeMutableBytes { yd in
                    try co.withUnsafeMutableBytes { cd in
                        // Valid, then the chroma destination aliasing the luminance destination.
                        try rectifier.rectifyNV12(luma: FramePlane(ys, rowBytes: 20), chroma: FramePlane(cs, rowBytes: 20),
                                                  intoLuma: MutableFramePlane(yd, rowBytes: 20), chroma: MutableFramePlane(cd, rowBytes: 20))
                        #expect(throws: RGBDError.self) {
                            try rectifier.rectifyNV12(luma: FramePlane(ys, rowBytes: 20), chroma: FramePlane(cs, rowBytes: 20),
                                                      intoLuma: MutableFramePlane(yd, rowBytes: 20),
                                                      chroma: MutableFramePlane(UnsafeMutableRawBufferPointer(rebasing: yd[0..<100]), rowBytes: 20))
                        }
                    }
                }
            }
        }
    }

    @Test func memoryHeldIsTheMapsOrAlmostNothing() throws {
        let distortion = Self.lens(width: 640, height: 480)
        let withMaps = try FrameRectifier(distortion: distortion)
        #expect(withMaps.usesMaps)
        // 4 bytes per luminance pixel and per chroma pixel, plus the tables.
        let maps = 4 * 640 * 480 + 4 * 320 * 240
        #expect(withMaps.bytesHeld >= maps && withMaps.bytesHeld < maps + 4096)
        let bounded = try FrameRectifier(distortion: distortion, mapByteLimit: maps - 1)
        #expect(bounded.bytesHeld < 4 * 640 * 480 + 4096)
        let onTheFly = try FrameRectifier(distortion: distortion, mapByteLimit: 0)
        #expect(!onTheFly.usesMaps && onTheFly.bytesHeld < 4096)
    }
}
