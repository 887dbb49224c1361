import CKernels
import Testing
@testable import RGBDFoundation
@testable import RGBDRectification
@testable import RGBDKit

/// The AVX2 kernels (`CKernels`) against the Swift loops they stand in for, bit for bit,
/// on CPUs that have AVX2 (elsewhere the AVX2 code never runs, and these tests are
/// skipped). The rest of the tests run whichever the machine uses.
@Suite(.enabled(if: VectorKernels.cpuHasAVX2, "this CPU has no AVX2"))
struct VectorKernelsTests {
    /// Luminance, RGB and BGRA sampling from a map, row by row over whole rows and over odd
    /// spans (starts and counts not multiples of eight or sixteen), on padded rows, with a
    /// lens whose corners sample outside the frame (groups at the borders go back to Swift)
    /// and with a steep one (neighbors up to four pixels apart in the source: luminance
    /// groups outside one 16-byte window go back to Swift too).
    @Test(arguments: [(257, 131, 0.08), (64, 9, 0.08), (9, 4, 0.08), (120, 60, 1.2)], [1, 3, 4])
    func samplingKernelEqualsSwiftLoop(shape: (Int, Int, Float), channels: Int) throws {
        let (width, height, strength) = shape
        let rowBytes = width * channels + 12
        let image = FrameRectifierTests.randomImage(width: width, height: height, channels: channels, seed: 23)
        let source = FrameRectifierTests.padded(image, rowBytes: rowBytes, fill: 0x5A)
        let distortion = LensDistortion(center: SIMD2(Double(width) * 0.46, Double(height) * 0.53),
                                        table: (0..<42).map { strength * Float($0 * $0) / 1681 },
                                        width: width, height: height)
        let map = try #require(RectificationMap(distortion))
        let spans = [(0, width), (3, max(0, width - 3)), (5, min(width - 5, 21)), (1, min(width - 1, 8))]
            .filter { $0.0 < width && $0.1 > 0 }
        var outputs: [[UInt8]] = [[], []]
        var mismatches = 0, avx2Pixels = 0, middlePixels = 0
        source.withUnsafeBytes { src in
            map.offsets.withUnsafeBufferPointer { offsets in
                for y in 0..<height {
                    for (x0, count) in spans {
                        let words = UnsafeRawPointer(offsets.baseAddress! + (y * width + x0) * 2)
                        for avx2 in [false, true] {
                            var out = [UInt8](repeating: 0xA5, count: width * channels + 32)
                            out.withUnsafeMutableBufferPointer { o in
                                if channels == 1 {
                                    FrameRemap.sample1Direct(count: count, words: words, y: y, from: x0,
                                                             src: src.baseAddress!, width: width, height: height,
                                                             rowBytes: rowBytes, out: o.baseAddress!, avx2: avx2)
                                } else if channels == 3 {
                                    // Not spilling: the byte after the span must stay as it was.
                                    FrameRemap.sampleColorDirect3(count: count, words: words, y: y, from: x0,
                                                                  src: src.baseAddress!, width: width, height: height,
                                                                  rowBytes: rowBytes, out: o.baseAddress!, spill: false,
                                                                  avx2: avx2)
                                } else {
                                    FrameRemap.sampleColorDirect4(count: count, words: words, y: y, from: x0,
                                                                  src: src.baseAddress!, width: width, height: height,
                                                                  rowBytes: rowBytes, out: o.baseAddress!, avx2: avx2)
                                }
                            }
                            outputs[avx2 ? 1 : 0] = out
                        }
                        if outputs[0] != outputs[1] { mismatches += 1 }
                    }
                    // The AVX2 loop itself (not the Swift one it leaves groups to) does the
                    // middle of the middle rows, where every neighborhood is inside.
                    if (height / 3..<(2 * height / 3)).contains(y) {
                        let x0 = width / 4, count = width / 2
                        middlePixels += count
                        avx2Pixels += avx2Kernel(channels: channels, UnsafeRawPointer(offsets.baseAddress! + (y * width + x0) * 2),
                                                 count: count, y: y, x0: x0, src: src.baseAddress!, width: width,
                                                 height: height, rowBytes: rowBytes)
                    }
                }
            }
        }
        #expect(mismatches == 0)
        if width >= 64 && strength < 1 {
            #expect(avx2Pixels >= middlePixels * 8 / 10, "the AVX2 loop did \(avx2Pixels) of \(middlePixels) pixels")
        }
    }

    /// The number of pixels the AVX2 kernel for `channels` does before it stops.
    private func avx2Kernel(channels: Int, _ words: UnsafeRawPointer, count: Int, y: Int, x0: Int,
                            src: UnsafeRawPointer, width: Int, height: Int, rowBytes: Int) -> Int {
        var scratch = [UInt8](repeating: 0, count: count * channels + 32)
        return scratch.withUnsafeMutableBufferPointer { o in
            let bytes = src.assumingMemoryBound(to: UInt8.self)
            switch channels {
            case 1:
                return rgbd_sample1_direct_avx2(count, words, Int32(y), Int32(x0), bytes, Int32(width), Int32(height),
                                                rowBytes, o.baseAddress!)
            case 3:
                return rgbd_sample3_direct_avx2(count, words, Int32(y), Int32(x0), bytes, Int32(width), Int32(height),
                                                rowBytes, o.baseAddress!)
            default:
                return rgbd_sample4_direct_avx2(count, words, Int32(y), Int32(x0), bytes, Int32(width), Int32(height),
                                                rowBytes, o.baseAddress!)
            }
        }
    }

    /// RGB sampling from prepared neighborhoods (`rgbd rectify`'s path: positions per
    /// chunk, `ColorRemap.prepareRGB`, then `sampleSpan3`) with the AVX2 loop and with the
    /// Swift one, over whole rows and odd spans, with and without spilling; groups at the
    /// borders go back to Swift, and the AVX2 loop does the middle itself.
    @Test(arguments: [(257, 131, 0.08), (40, 7, 0.08), (120, 60, 1.2)])
    func preparedRGBKernelEqualsSwiftLoop(shape: (Int, Int, Float)) throws {
        let (width, height, strength) = shape
        let image = FrameRectifierTests.randomImage(width: width, height: height, channels: 3, seed: 31)
        let distortion = LensDistortion(center: SIMD2(Double(width) * 0.46, Double(height) * 0.53),
                                        table: (0..<42).map { strength * Float($0 * $0) / 1681 },
                                        width: width, height: height)
        let positions = SourcePositions(distortion)
        let chunk = PositionChunk.allocate()
        defer { chunk.deallocate() }
        // Spans of at most a chunk (`rectifyChunk`'s limit).
        let chunkPixels = PositionChunk.capacity
        let spans = [(0, min(width, chunkPixels)), (3, min(width - 3, chunkPixels)), (5, min(width - 5, 21))]
        var mismatches = 0, avx2Pixels = 0, middlePixels = 0
        var firstMismatch: String?
        image.samples.withUnsafeBytes { src in
            for y in 0..<height {
                for (x0, count) in spans {
                    for spill in [false, true] {
                        var outputs: [[UInt8]] = []
                        for avx2 in [false, true] {
                            positions.fixedPointSpan(y: y, from: x0, count: count, xs: chunk.xs, ys: chunk.ys)
                            ColorRemap.prepareRGB(count: count, chunk: chunk, width: width, height: height, rowBytes: width * 3)
                            var out = [UInt8](repeating: 0xA5, count: count * 3 + 16)
                            out.withUnsafeMutableBufferPointer { o in
                                ColorRemap.sampleSpan3(count: count, chunk: chunk, src: src.baseAddress!, width: width,
                                                       height: height, rowBytes: width * 3, out: o.baseAddress!,
                                                       spill: spill, avx2: avx2)
                            }
                            // Without spilling, nothing after the span is written.
                            outputs.append(spill ? Array(out[0..<(count * 3)]) : out)
                        }
                        if outputs[0] != outputs[1] {
                            mismatches += 1
                            if firstMismatch == nil {
                                let at = zip(outputs[0], outputs[1]).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                                firstMismatch = "row \(y), span \(x0)+\(count), spill \(spill), byte \(at ?? -1)"
                            }
                        }
                    }
                }
                if (height / 3..<(2 * height / 3)).contains(y) {
                    let x0 = width / 4, count = width / 2
                    positions.fixedPointSpan(y: y, from: x0, count: count, xs: chunk.xs, ys: chunk.ys)
                    ColorRemap.prepareRGB(count: count, chunk: chunk, width: width, height: height, rowBytes: width * 3)
                    var out = [UInt8](repeating: 0, count: count * 3 + 16)
                    middlePixels += count
                    avx2Pixels += out.withUnsafeMutableBufferPointer { o in
                        rgbd_sample3_prepared_avx2(count, chunk.offsets, chunk.top, chunk.bottom, chunk.fast,
                                                   src.baseAddress!.assumingMemoryBound(to: UInt8.self), width * 3,
                                                   o.baseAddress!)
                    }
                }
            }
        }
        #expect(mismatches == 0, "first: \(firstMismatch ?? "none")")
        if strength < 1 {
            #expect(avx2Pixels >= middlePixels * 8 / 10, "the AVX2 loop did \(avx2Pixels) of \(middlePixels) pixels")
        }
    }

    /// The AVX2 Paeth filter against the PNG specification's predictor for every
    /// (a, b, c): with 65536 bytes per "pixel", row = [a… | x…] and above = [c… | b…],
    /// a and b running over all pairs within each of the 256 rows' c.
    @Test func paethFilterMatchesTheSpecificationOnEveryTriple() {
        let bpp = 65_536
        var row = [UInt8](repeating: 0, count: 2 * bpp), above = row
        var out = [UInt8](repeating: 0, count: 2 * bpp)
        var mismatches = 0, done = 0
        for j in 0..<bpp {
            row[j] = UInt8(truncatingIfNeeded: j)                         // a
            row[bpp + j] = UInt8(truncatingIfNeeded: j &* 7 &+ (j >> 8))  // x
            above[bpp + j] = UInt8(truncatingIfNeeded: j >> 8)            // b
        }
        for c in 0..<256 {
            for j in 0..<bpp { above[j] = UInt8(c) }
            row.withUnsafeBufferPointer { r in
                above.withUnsafeBufferPointer { u in
                    out.withUnsafeMutableBufferPointer { o in
                        done = rgbd_paeth_filter_avx2(r.baseAddress!, u.baseAddress!, bpp, o.baseAddress!, bpp, 2 * bpp)
                    }
                }
            }
            for j in 0..<bpp {
                let expected = row[bpp + j] &- RowFilter.paethPredictor(row[j], above[bpp + j], UInt8(c))
                if out[bpp + j] != expected { mismatches += 1 }
            }
        }
        #expect(done == 2 * bpp)
        #expect(mismatches == 0)
    }

    /// A filtered row with AVX2 equals the Swift loops' (its head, the 32-byte steps, and a
    /// tail shorter than 32 bytes), for RGB and 16-bit gray pixel sizes.
    @Test(arguments: [3, 2, 6], [1, 31, 32, 33, 100, 12_099])
    func paethRowEqualsSwiftLoops(bpp: Int, count: Int) {
        var rng = SeededGenerator(seed: UInt64(bpp * 100_000 + count))
        let row = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let above = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
        var swift = [UInt8](repeating: 0, count: count), avx2 = swift
        for avx in [false, true] {
            var out = [UInt8](repeating: 0, count: count)
            row.withUnsafeBufferPointer { r in
                above.withUnsafeBufferPointer { u in
                    out.withUnsafeMutableBufferPointer { o in
                        RowFilter.apply(.paeth, r.baseAddress!, u.baseAddress!, o.baseAddress!, count, bpp, paethAVX2: avx)
                    }
                }
            }
            if avx { avx2 = out } else { swift = out }
        }
        let reference = (0..<count).map { i in
            row[i] &- (i < bpp ? above[i] : RowFilter.paethPredictor(row[i - bpp], above[i], above[i - bpp]))
        }
        #expect(swift == reference)
        #expect(avx2 == reference)
    }
}
