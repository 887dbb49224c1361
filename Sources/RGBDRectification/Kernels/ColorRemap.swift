import CKernels

/// Bilinear resampling of 8-bit images at source positions given in 1/256 pixel, a span
/// of an output row at a time (OpenCV `remap` vocabulary: a backward map, bilinear
/// interpolation, constant black border, never in place).
///
/// A position `(sx, sy)` in fixed point `(X, Y) = round(256·(sx, sy))` (to nearest,
/// ties to even: `SourcePositions.fixedPoint`) has integer part
/// `(X >> 8, Y >> 8)`; the interpolation weights use 1/128-pixel fractions
/// `fx = (X & 255 + 1) >> 1` (0…128), so the four weights `(128 − fx)(128 − fy)`, …
/// sum to 16384 and fit 16 bits. Each output sample is `(Σ w·s + 2¹³) >> 14`, the same
/// exact integer whichever path computes it. Neighbors outside the source count as black.
enum ColorRemap {
    /// Integer part and the four bilinear weights (sum 16384) of a fixed-point position.
    @inline(__always)
    static func split(_ X: Int, _ Y: Int) -> (x0: Int, y0: Int, w00: Int, w10: Int, w01: Int, w11: Int) {
        let (w00, w10, w01, w11) = BilinearWeights.weights(fx: BilinearWeights.fraction(X), fy: BilinearWeights.fraction(Y))
        return (X >> 8, Y >> 8, w00, w10, w01, w11)
    }

    /// Whether the fast paths may read the 2×2 neighborhood at `(x0, y0)` with 4-byte
    /// loads of RGB pixels: the fourth byte (the next pixel's) must exist, so
    /// `x0 + 1 < width − 1`.
    @inline(__always)
    static func inFastRegion(_ x0: Int, _ y0: Int, width: Int, height: Int) -> Bool {
        x0 >= 0 && y0 >= 0 && x0 < width &- 2 && y0 < height &- 1
    }

    /// Samples an RGB image (3 channels) at fixed-point `(X, Y)` into `out[0...2]`.
    ///
    /// The fast path reads each neighbor with one unaligned 4-byte load (the fourth byte
    /// is the next pixel's and is masked away) and interpolates red and blue in the two
    /// 32-bit lanes of one 64-bit product, green in another.
    @inline(__always)
    static func sampleRGB(_ X: Int, _ Y: Int, src: UnsafeRawPointer, width: Int, height: Int, rowBytes: Int,
                          out: UnsafeMutablePointer<UInt8>) {
        let (x0, y0, w00i, w10i, w01i, w11i) = split(X, Y)
        let w00 = UInt64(truncatingIfNeeded: w00i), w10 = UInt64(truncatingIfNeeded: w10i)
        let w01 = UInt64(truncatingIfNeeded: w01i), w11 = UInt64(truncatingIfNeeded: w11i)
        if inFastRegion(x0, y0, width: width, height: height) {
            let o = y0 &* rowBytes &+ x0 &* 3
            let p00 = UInt64(src.loadUnaligned(fromByteOffset: o, as: UInt32.self).littleEndian)
            let p10 = UInt64(src.loadUnaligned(fromByteOffset: o &+ 3, as: UInt32.self).littleEndian)
            let p01 = UInt64(src.loadUnaligned(fromByteOffset: o &+ rowBytes, as: UInt32.self).littleEndian)
            let p11 = UInt64(src.loadUnaligned(fromByteOffset: o &+ rowBytes &+ 3, as: UInt32.self).littleEndian)
            // Red in bits 0..<32 and blue in bits 32..<64; green alone. Each lane holds at
            // most 255·16384 + 2¹³ < 2²³, so lanes never carry into each other.
            let rb00 = (p00 & 0xFF) | ((p00 & 0xFF_0000) << 16), g00 = (p00 >> 8) & 0xFF
            let rb10 = (p10 & 0xFF) | ((p10 & 0xFF_0000) << 16), g10 = (p10 >> 8) & 0xFF
            let rb01 = (p01 & 0xFF) | ((p01 & 0xFF_0000) << 16), g01 = (p01 >> 8) & 0xFF
            let rb11 = (p11 & 0xFF) | ((p11 & 0xFF_0000) << 16), g11 = (p11 >> 8) & 0xFF
            let accRB = rb00 &* w00 &+ rb10 &* w10 &+ rb01 &* w01 &+ rb11 &* w11 &+ 0x2000_0000_2000
            let accG = g00 &* w00 &+ g10 &* w10 &+ g01 &* w01 &+ g11 &* w11 &+ 0x2000
            out[0] = UInt8(truncatingIfNeeded: accRB >> 14)
            out[1] = UInt8(truncatingIfNeeded: accG >> 14)
            out[2] = UInt8(truncatingIfNeeded: accRB >> 46)
            return
        }
        sampleChecked(x0, y0, weights: (w00, w10, w01, w11), channels: 3, src: src.assumingMemoryBound(to: UInt8.self),
                      width: width, height: height, rowBytes: rowBytes, out: out)
    }

    /// `a₀·b₀ + a₁·b₁` for each of the four pairs of 16-bit lanes (`pmaddwd` on x86).
    @inline(__always)
    static func multiplyAddPairs(_ a: SIMD8<Int16>, _ b: SIMD8<Int16>) -> SIMD4<Int32> {
        let p = Lanes.widen(a) &* Lanes.widen(b)
        return p.evenHalf &+ p.oddHalf
    }

    /// The bytes `R0 G0 B0 R1 G1 B1` of two neighbors in one source row (an 8-byte load
    /// at byte `o`) as 16-bit pairs `R0 R1 G0 G1 B0 B1 x x`: the bytes interleaved with
    /// themselves shifted by one pixel (a 64-bit shift and two unpacks; SSE2 has no byte
    /// shuffle).
    ///
    /// Written so on purpose: with two narrower loads instead of the shift, the
    /// optimizer sees the unused lanes and splits the loads into byte loads.
    @inline(__always)
    static func neighborPairs(_ src: UnsafeRawPointer, _ o: Int, pixelBits: UInt64 = 24) -> SIMD8<Int16> {
        let u = UInt64(littleEndian: src.loadUnaligned(fromByteOffset: o, as: UInt64.self))
        let a = unsafeBitCast(u, to: SIMD8<UInt8>.self), b = unsafeBitCast(u >> pixelBits, to: SIMD8<UInt8>.self)
        let interleaved = SIMD8<UInt8>(a[0], b[0], a[1], b[1], a[2], b[2], a[3], b[3])
        return Lanes.widen(interleaved)
    }

    /// Interpolates one RGB pixel whose 2×2 neighborhood starts at byte `o` of `src`
    /// (in the fast region): `[R, G, B, junk]` before rounding, i.e. `Σ w·s`.
    ///
    /// `neighborPairs` pairs each row's two neighbors so that one multiply-add of pairs
    /// per row applies its two weights, `top` = `w00 | w10 << 16` and `bottom` =
    /// `w01 | w11 << 16`.
    @inline(__always)
    static func interpolateRGB(_ o: Int, top: UInt32, bottom: UInt32, src: UnsafeRawPointer,
                               rowBytes: Int, pixelBits: UInt64 = 24) -> SIMD4<Int32> {
        let topWeights = unsafeBitCast(SIMD4<UInt32>(repeating: top), to: SIMD8<Int16>.self)
        let bottomWeights = unsafeBitCast(SIMD4<UInt32>(repeating: bottom), to: SIMD8<Int16>.self)
        return multiplyAddPairs(neighborPairs(src, o, pixelBits: pixelBits), topWeights)
            &+ multiplyAddPairs(neighborPairs(src, o &+ rowBytes, pixelBits: pixelBits), bottomWeights)
    }

    /// Sampling parameters of RGB output pixels `0 ..< count` from their fixed-point
    /// positions in `chunk.xs`, `chunk.ys`, four at a time: byte offsets of the
    /// neighborhoods, their weights as 16-bit pairs per row (`top` = `w00 | w10 << 16`,
    /// `bottom` = `w01 | w11 << 16`), and per group of four whether all four
    /// neighborhoods are inside (`0 ≤ x0 < width − 2`, `0 ≤ y0 < height − 1`: the 8-byte
    /// loads stay in the rows) and the group is whole.
    ///
    /// Out of line on purpose, like `SourcePositions.fixedPointSpan`: a small loop of
    /// lane operations the optimizer keeps in vector registers.
    @inline(never)
    static func prepareRGB(count: Int, chunk: PositionChunk, width: Int, height: Int, rowBytes: Int) {
        BilinearWeights.prepare(count: count, chunk: chunk, width: width, height: height, rowBytes: rowBytes,
                                margin: 2) { x0 in x0 &* 3 }
    }

    /// Samples RGB output pixels `0 ..< count` of a prepared chunk (`prepareRGB`) into
    /// `out` (3 bytes per pixel): four at a time where the group is fast, one at a time
    /// (`sampleRGB`, the same arithmetic) elsewhere. With `spill`, the byte after the
    /// span may be written (it is rewritten later: the next pixel of the same row,
    /// sampled after this span).
    ///
    /// With `fourChannels`, the pixels have 4 bytes (BGRA, RGBA; prepared by
    /// `FrameRemap.preparePairs`): each row's two neighbors are paired by a 32-bit shift and
    /// four pixels are stored as 16 bytes (`spill` is then irrelevant).
    ///
    /// Out of line on purpose, like `SourcePositions.fixedPointSpan`, and compiled once
    /// per pixel size (`sampleSpan3`, `sampleSpan4`): with the size a run-time argument,
    /// the 3-channel kernel that `rgbd rectify` uses was measurably slower (shifts by a
    /// variable, a branch per group; BENCHMARKS.md, "Session 5: a regression of goal 2").
    @inline(__always)
    static func sampleRGBSpan(count: Int, chunk: PositionChunk, src: UnsafeRawPointer, width: Int, height: Int,
                              rowBytes: Int, out: UnsafeMutablePointer<UInt8>, spill: Bool, fourChannels: Bool = false) {
        if fourChannels {
            sampleSpan4(count: count, chunk: chunk, src: src, width: width, height: height, rowBytes: rowBytes, out: out)
        } else {
            sampleSpan3(count: count, chunk: chunk, src: src, width: width, height: height, rowBytes: rowBytes, out: out,
                        spill: spill)
        }
    }

    /// `sampleRGBSpan` for 3-byte pixels: with AVX2 (`avx2`), eight pixels at a time by
    /// `rgbd_sample3_prepared_avx2` (the same bytes), which leaves groups that are not
    /// fast to the Swift loop.
    @inline(never)
    static func sampleSpan3(count: Int, chunk: PositionChunk, src: UnsafeRawPointer, width: Int, height: Int,
                            rowBytes: Int, out: UnsafeMutablePointer<UInt8>, spill: Bool,
                            avx2: Bool = VectorKernels.avx2) {
        guard avx2 else {
            sampleColorSpan(count: count, chunk: chunk, src: src, width: width, height: height, rowBytes: rowBytes,
                            out: out, spill: spill, fourChannels: false)
            return
        }
        let bytes = src.assumingMemoryBound(to: UInt8.self)
        var i = 0   // a multiple of 4 until the last group
        while i < count {
            i &+= rgbd_sample3_prepared_avx2(count &- i, chunk.offsets + i, chunk.top + i, chunk.bottom + i,
                                             chunk.fast + (i &>> 2), bytes, rowBytes, out + i &* 3)
            guard i < count else { break }
            let n = min(8, count &- i)
            // A byte written past these pixels belongs to the next ones, written after.
            sampleColorSpan(count: n, chunk: chunk.advanced(by: i), src: src, width: width, height: height,
                            rowBytes: rowBytes, out: out + i &* 3, spill: spill || i &+ n < count, fourChannels: false)
            i &+= n
        }
    }

    /// `sampleRGBSpan` for 4-byte pixels.
    @inline(never)
    static func sampleSpan4(count: Int, chunk: PositionChunk, src: UnsafeRawPointer, width: Int, height: Int,
                            rowBytes: Int, out: UnsafeMutablePointer<UInt8>) {
        sampleColorSpan(count: count, chunk: chunk, src: src, width: width, height: height, rowBytes: rowBytes, out: out,
                        spill: false, fourChannels: true)
    }

    /// The body of `sampleSpan3` and `sampleSpan4` (`fourChannels` a constant in each).
    @inline(__always)
    static func sampleColorSpan(count: Int, chunk: PositionChunk, src: UnsafeRawPointer, width: Int, height: Int,
                                rowBytes: Int, out: UnsafeMutablePointer<UInt8>, spill: Bool, fourChannels: Bool) {
        let pixelBits: UInt64 = fourChannels ? 32 : 24
        var i = 0
        while i < count {
            if chunk.fast[i &>> 2] != 0 {
                let o = UnsafeRawPointer(chunk.offsets + i).loadUnaligned(as: SIMD4<Int32>.self)
                let top = UnsafeRawPointer(chunk.top + i).loadUnaligned(as: SIMD4<UInt32>.self)
                let bottom = UnsafeRawPointer(chunk.bottom + i).loadUnaligned(as: SIMD4<UInt32>.self)
                let p0 = interpolateRGB(Int(o[0]), top: top[0], bottom: bottom[0], src: src, rowBytes: rowBytes,
                                          pixelBits: pixelBits)
                let p1 = interpolateRGB(Int(o[1]), top: top[1], bottom: bottom[1], src: src, rowBytes: rowBytes,
                                          pixelBits: pixelBits)
                let p2 = interpolateRGB(Int(o[2]), top: top[2], bottom: bottom[2], src: src, rowBytes: rowBytes,
                                          pixelBits: pixelBits)
                let p3 = interpolateRGB(Int(o[3]), top: top[3], bottom: bottom[3], src: src, rowBytes: rowBytes,
                                          pixelBits: pixelBits)
                let sums = SIMD16<Int32>(lowHalf: SIMD8(lowHalf: p0, highHalf: p1), highHalf: SIMD8(lowHalf: p2, highHalf: p3))
                let bytes = Lanes.narrow8((sums &+ 0x2000) &>> 14)
                if fourChannels {
                    UnsafeMutableRawPointer(out + i &* 4).storeBytes(of: bytes, as: SIMD16<UInt8>.self)
                    i &+= 4
                    continue
                }
                storeRGB(bytes, to: UnsafeMutableRawPointer(out + i &* 3), spill: spill || i &+ 4 < count)
            } else if fourChannels {
                for j in i..<min(i &+ 4, count) {
                    sample(Int(chunk.xs[j]), Int(chunk.ys[j]), channels: 4, src: src.assumingMemoryBound(to: UInt8.self),
                           width: width, height: height, rowBytes: rowBytes, out: out + j &* 4)
                }
            } else {
                for j in i..<min(i &+ 4, count) {
                    sampleRGB(Int(chunk.xs[j]), Int(chunk.ys[j]), src: src, width: width, height: height, rowBytes: rowBytes,
                              out: out + j &* 3)
                }
            }
            i &+= 4
        }
    }

    /// Stores four RGB pixels given as `R G B x` four times: with `spill`, as four 4-byte
    /// stores each over the previous one's `x` (the last `x` lands on the next pixel,
    /// written later); without, exactly 12 bytes.
    @inline(__always)
    static func storeRGB(_ bytes: SIMD16<UInt8>, to raw: UnsafeMutableRawPointer, spill: Bool) {
        if spill {
            let words = unsafeBitCast(bytes, to: SIMD4<UInt32>.self)
            raw.storeBytes(of: words[0], as: UInt32.self)
            raw.storeBytes(of: words[1], toByteOffset: 3, as: UInt32.self)
            raw.storeBytes(of: words[2], toByteOffset: 6, as: UInt32.self)
            raw.storeBytes(of: words[3], toByteOffset: 9, as: UInt32.self)
        } else {
            let words = unsafeBitCast(bytes, to: SIMD2<UInt64>.self)
            let lo = UInt64(littleEndian: words[0]), hi = UInt64(littleEndian: words[1])
            let first = (lo & 0xFF_FFFF) | ((lo >> 8) & 0xFFFF_FF00_0000)
            let second = (hi & 0xFF_FFFF) | ((hi >> 8) & 0xFFFF_FF00_0000)
            raw.storeBytes(of: (first | (second << 48)).littleEndian, as: UInt64.self)
            raw.storeBytes(of: UInt32(truncatingIfNeeded: second >> 16).littleEndian, toByteOffset: 8, as: UInt32.self)
        }
    }

    /// Samples any number of channels at fixed-point `(X, Y)`, checking every neighbor.
    @inline(__always)
    static func sample(_ X: Int, _ Y: Int, channels: Int, src: UnsafePointer<UInt8>, width: Int, height: Int,
                       out: UnsafeMutablePointer<UInt8>) {
        sample(X, Y, channels: channels, src: src, width: width, height: height, rowBytes: width * channels, out: out)
    }

    /// Samples any number of channels at fixed-point `(X, Y)` of an image whose rows lie
    /// `rowBytes` apart, checking every neighbor.
    @inline(__always)
    static func sample(_ X: Int, _ Y: Int, channels: Int, src: UnsafePointer<UInt8>, width: Int, height: Int,
                       rowBytes: Int, out: UnsafeMutablePointer<UInt8>) {
        let (x0, y0, w00, w10, w01, w11) = split(X, Y)
        sampleChecked(x0, y0, weights: (UInt64(truncatingIfNeeded: w00), UInt64(truncatingIfNeeded: w10),
                                        UInt64(truncatingIfNeeded: w01), UInt64(truncatingIfNeeded: w11)),
                      channels: channels, src: src, width: width, height: height, rowBytes: rowBytes, out: out)
    }

    /// Samples `channels` interleaved samples with the neighborhood at `(x0, y0)`, rows
    /// `rowBytes` apart, checking every neighbor (outside counts as black).
    @inline(__always)
    static func sampleChecked(_ x0: Int, _ y0: Int, weights: (UInt64, UInt64, UInt64, UInt64), channels: Int,
                              src: UnsafePointer<UInt8>, width: Int, height: Int, rowBytes: Int,
                              out: UnsafeMutablePointer<UInt8>) {
        let inX0 = x0 >= 0 && x0 < width, inX1 = x0 + 1 >= 0 && x0 + 1 < width
        let inY0 = y0 >= 0 && y0 < height, inY1 = y0 + 1 >= 0 && y0 + 1 < height
        for c in 0..<channels {
            var acc: UInt64 = 0x2000
            if inY0 && inX0 { acc &+= UInt64(src[y0 * rowBytes + x0 * channels + c]) &* weights.0 }
            if inY0 && inX1 { acc &+= UInt64(src[y0 * rowBytes + (x0 + 1) * channels + c]) &* weights.1 }
            if inY1 && inX0 { acc &+= UInt64(src[(y0 + 1) * rowBytes + x0 * channels + c]) &* weights.2 }
            if inY1 && inX1 { acc &+= UInt64(src[(y0 + 1) * rowBytes + (x0 + 1) * channels + c]) &* weights.3 }
            out[c] = UInt8(truncatingIfNeeded: acc >> 14)
        }
    }

    /// Samples output pixels `0 ..< count` (any number of channels) from the fixed-point
    /// positions in `chunk` into `out` (`spill` as for `sampleRGBSpan`).
    @inline(__always)
    static func sampleSpan(count: Int, chunk: PositionChunk, channels: Int, src: UnsafePointer<UInt8>, width: Int,
                           height: Int, out: UnsafeMutablePointer<UInt8>, spill: Bool) {
        // The vector path's byte offsets are 32-bit.
        if channels == 3 && width &* height &* 3 <= Int(Int32.max) {
            prepareRGB(count: count, chunk: chunk, width: width, height: height, rowBytes: width &* 3)
            sampleRGBSpan(count: count, chunk: chunk, src: UnsafeRawPointer(src), width: width, height: height,
                          rowBytes: width &* 3, out: out, spill: spill)
        } else {
            for i in 0..<count {
                sample(Int(chunk.xs[i]), Int(chunk.ys[i]), channels: channels, src: src, width: width, height: height,
                       out: out + i &* channels)
            }
        }
    }

    /// Rectifies output row `y`, computing source positions on the fly a chunk at a
    /// time (`SourcePositions.fixedPointSpan`, then `sampleSpan`).
    @inline(__always)
    static func rectifyRow(_ y: Int, positions: SourcePositions, channels: Int, src: UnsafePointer<UInt8>, width: Int,
                           height: Int, dst: UnsafeMutablePointer<UInt8>, scratch: PositionChunk) {
        var x0 = 0
        while x0 < width {
            let n = min(PositionChunk.capacity, width &- x0)
            rectifyChunk(y, from: x0, count: n, positions: positions, channels: channels, src: src, width: width,
                         height: height, dst: dst, scratch: scratch)
            x0 &+= n
        }
    }

    /// Rectifies pixels `x0 ..< x0 + count` (at most `PositionChunk.capacity`) of output
    /// row `y`, computing their source positions on the fly.
    @inline(__always)
    static func rectifyChunk(_ y: Int, from x0: Int, count: Int, positions: SourcePositions, channels: Int,
                             src: UnsafePointer<UInt8>, width: Int, height: Int, dst: UnsafeMutablePointer<UInt8>,
                             scratch: PositionChunk) {
        positions.fixedPointSpan(y: y, from: x0, count: count, xs: scratch.xs, ys: scratch.ys)
        sampleSpan(count: count, chunk: scratch, channels: channels, src: src, width: width,
                   height: height, out: dst + (y &* width &+ x0) &* channels, spill: x0 &+ count < width)
    }

    /// Rectifies pixels `x0 ..< x0 + count` (at most `PositionChunk.capacity`) of output
    /// row `y` with positions read from a precomputed map.
    @inline(__always)
    static func rectifyChunk(_ y: Int, from x0: Int, count: Int, map: RectificationMap, offsets: UnsafePointer<Int16>,
                             channels: Int, src: UnsafePointer<UInt8>, width: Int, height: Int,
                             dst: UnsafeMutablePointer<UInt8>, scratch: PositionChunk) {
        map.span(y: y, from: x0, count: count, offsets: offsets, xs: scratch.xs, ys: scratch.ys)
        sampleSpan(count: count, chunk: scratch, channels: channels, src: src, width: width,
                   height: height, out: dst + (y &* width &+ x0) &* channels, spill: x0 &+ count < width)
    }
}

/// One thread's fixed-point source positions of a chunk of a row (planar, 1/256 px),
/// small enough to stay in the first-level cache between computing and sampling.
struct PositionChunk {
    /// Pixels per chunk (a multiple of 4).
    static let capacity = 256
    /// Source x positions.
    let xs: UnsafeMutablePointer<Int32>
    /// Source y positions.
    let ys: UnsafeMutablePointer<Int32>
    /// RGB sampling: byte offsets of the neighborhoods (`ColorRemap.prepareRGB`).
    let offsets: UnsafeMutablePointer<Int32>
    /// RGB sampling: top-row weight pairs.
    let top: UnsafeMutablePointer<UInt32>
    /// RGB sampling: bottom-row weight pairs.
    let bottom: UnsafeMutablePointer<UInt32>
    /// RGB sampling: per group of four pixels, 1 where the vector path applies.
    let fast: UnsafeMutablePointer<UInt8>

    /// Allocates zeroed storage; call `deallocate()` when done.
    static func allocate() -> PositionChunk {
        let words = 5 * capacity + capacity / 16
        let storage = UnsafeMutablePointer<Int32>.allocate(capacity: words)
        storage.initialize(repeating: 0, count: words)
        let raw = UnsafeMutableRawPointer(storage)
        return PositionChunk(xs: storage, ys: storage + capacity, offsets: storage + 2 * capacity,
                             top: (raw + 12 * capacity).assumingMemoryBound(to: UInt32.self),
                             bottom: (raw + 16 * capacity).assumingMemoryBound(to: UInt32.self),
                             fast: (raw + 20 * capacity).assumingMemoryBound(to: UInt8.self))
    }

    /// The same storage from pixel `i` on (`i` a multiple of 4, so that the fast flags
    /// stay per group of four).
    func advanced(by i: Int) -> PositionChunk {
        PositionChunk(xs: xs + i, ys: ys + i, offsets: offsets + i, top: top + i, bottom: bottom + i, fast: fast + (i &>> 2))
    }

    /// Frees the storage.
    func deallocate() { xs.deallocate() }
}
