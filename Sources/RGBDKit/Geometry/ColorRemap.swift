/// Bilinear resampling of 8-bit images at source positions given in 1/256 pixel, one
/// output row at a time (OpenCV `remap` vocabulary: a backward map, bilinear
/// interpolation, constant black border, never in place).
///
/// A position `(sx, sy)` in fixed point `(X, Y) = round(256·(sx, sy))` has integer part
/// `(X >> 8, Y >> 8)`; the interpolation weights use 1/128-pixel fractions
/// `fx = (X & 255 + 1) >> 1` (0…128), so the four weights `(128 − fx)(128 − fy)`, …
/// sum to 16384 and fit 16 bits. Each output sample is `(Σ w·s + 2¹³) >> 14`, the same
/// exact integer whichever path computes it. Neighbors outside the source count as black.
enum ColorRemap {
    /// Integer part and the four bilinear weights (sum 16384) of a fixed-point position.
    @inline(__always)
    static func split(_ X: Int, _ Y: Int) -> (x0: Int, y0: Int, w00: Int, w10: Int, w01: Int, w11: Int) {
        let fx = ((X & 255) &+ 1) >> 1, fy = ((Y & 255) &+ 1) >> 1
        return (X >> 8, Y >> 8, (128 &- fx) &* (128 &- fy), fx &* (128 &- fy), (128 &- fx) &* fy, fx &* fy)
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
    static func sampleRGB(_ X: Int, _ Y: Int, src: UnsafeRawPointer, width: Int, height: Int,
                          out: UnsafeMutablePointer<UInt8>) {
        let (x0, y0, w00i, w10i, w01i, w11i) = split(X, Y)
        let w00 = UInt64(truncatingIfNeeded: w00i), w10 = UInt64(truncatingIfNeeded: w10i)
        let w01 = UInt64(truncatingIfNeeded: w01i), w11 = UInt64(truncatingIfNeeded: w11i)
        if inFastRegion(x0, y0, width: width, height: height) {
            let rowBytes = width &* 3
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
                      width: width, height: height, out: out)
    }

    /// `a₀·b₀ + a₁·b₁` for each of the four pairs of 16-bit lanes (`pmaddwd` on x86).
    @inline(__always)
    static func multiplyAddPairs(_ a: SIMD8<Int16>, _ b: SIMD8<Int16>) -> SIMD4<Int32> {
        let p = SIMD8<Int32>(truncatingIfNeeded: a) &* SIMD8<Int32>(truncatingIfNeeded: b)
        return p.evenHalf &+ p.oddHalf
    }

    /// The weights `(w0, w1)` repeated in the four pairs of lanes.
    @inline(__always)
    static func pairWeights(_ w0: Int, _ w1: Int) -> SIMD8<Int16> {
        let pair = UInt32(truncatingIfNeeded: w0) | UInt32(truncatingIfNeeded: w1) << 16
        return unsafeBitCast(SIMD4<UInt32>(repeating: pair), to: SIMD8<Int16>.self)
    }

    /// Samples two RGB pixels at once with 16-bit SIMD (the arithmetic of `sampleRGB`,
    /// as `pmaddwd` on SSE2) and stores them at `out`: 6 bytes, plus 1 byte of the pixel
    /// after them that the caller rewrites. Both neighborhoods must be in the fast region.
    ///
    /// Kept out of line on purpose: compiled on its own, every SIMD conversion in it is
    /// specialized into a few instructions; inlined into a large loop, the optimizer may
    /// leave them as generic calls.
    @inline(never)
    static func sampleRGBPair(_ a: (x0: Int, y0: Int, w00: Int, w10: Int, w01: Int, w11: Int),
                              _ b: (x0: Int, y0: Int, w00: Int, w10: Int, w01: Int, w11: Int),
                              src: UnsafeRawPointer, rowBytes: Int, out: UnsafeMutableRawPointer) {
        let oa = a.y0 &* rowBytes &+ a.x0 &* 3, ob = b.y0 &* rowBytes &+ b.x0 &* 3
        // Left neighbors (top and bottom rows of both pixels), then right neighbors.
        let left = SIMD4<UInt32>(src.loadUnaligned(fromByteOffset: oa, as: UInt32.self),
                                 src.loadUnaligned(fromByteOffset: ob, as: UInt32.self),
                                 src.loadUnaligned(fromByteOffset: oa &+ rowBytes, as: UInt32.self),
                                 src.loadUnaligned(fromByteOffset: ob &+ rowBytes, as: UInt32.self))
        let right = SIMD4<UInt32>(src.loadUnaligned(fromByteOffset: oa &+ 3, as: UInt32.self),
                                  src.loadUnaligned(fromByteOffset: ob &+ 3, as: UInt32.self),
                                  src.loadUnaligned(fromByteOffset: oa &+ rowBytes &+ 3, as: UInt32.self),
                                  src.loadUnaligned(fromByteOffset: ob &+ rowBytes &+ 3, as: UInt32.self))
        let l = unsafeBitCast(left, to: SIMD16<UInt8>.self), r = unsafeBitCast(right, to: SIMD16<UInt8>.self)
        // Left and right bytes interleaved: R0 R1 G0 G1 B0 B1 x x for pixel a, then b.
        let top = SIMD16<UInt8>(l[0], r[0], l[1], r[1], l[2], r[2], l[3], r[3], l[4], r[4], l[5], r[5], l[6], r[6], l[7], r[7])
        let bottom = SIMD16<UInt8>(l[8], r[8], l[9], r[9], l[10], r[10], l[11], r[11],
                                   l[12], r[12], l[13], r[13], l[14], r[14], l[15], r[15])
        let sa = multiplyAddPairs(SIMD8<Int16>(truncatingIfNeeded: top.lowHalf), pairWeights(a.w00, a.w10))
            &+ multiplyAddPairs(SIMD8<Int16>(truncatingIfNeeded: bottom.lowHalf), pairWeights(a.w01, a.w11))
        let sb = multiplyAddPairs(SIMD8<Int16>(truncatingIfNeeded: top.highHalf), pairWeights(b.w00, b.w10))
            &+ multiplyAddPairs(SIMD8<Int16>(truncatingIfNeeded: bottom.highHalf), pairWeights(b.w01, b.w11))
        let v = SIMD8<UInt8>(truncatingIfNeeded: (SIMD8<Int32>(lowHalf: sa, highHalf: sb) &+ 0x2000) &>> 14)
        // R G B x of a, then R G B x of b over a's x.
        let word = unsafeBitCast(v, to: UInt64.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: word), as: UInt32.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: word >> 32), toByteOffset: 3, as: UInt32.self)
    }

    /// Samples any number of channels at fixed-point `(X, Y)`, checking every neighbor.
    @inline(__always)
    static func sample(_ X: Int, _ Y: Int, channels: Int, src: UnsafePointer<UInt8>, width: Int, height: Int,
                       out: UnsafeMutablePointer<UInt8>) {
        let (x0, y0, w00, w10, w01, w11) = split(X, Y)
        sampleChecked(x0, y0, weights: (UInt64(truncatingIfNeeded: w00), UInt64(truncatingIfNeeded: w10),
                                        UInt64(truncatingIfNeeded: w01), UInt64(truncatingIfNeeded: w11)),
                      channels: channels, src: src, width: width, height: height, out: out)
    }

    @inline(__always)
    static func sampleChecked(_ x0: Int, _ y0: Int, weights: (UInt64, UInt64, UInt64, UInt64), channels: Int,
                              src: UnsafePointer<UInt8>, width: Int, height: Int, out: UnsafeMutablePointer<UInt8>) {
        let inX0 = x0 >= 0 && x0 < width, inX1 = x0 + 1 >= 0 && x0 + 1 < width
        let inY0 = y0 >= 0 && y0 < height, inY1 = y0 + 1 >= 0 && y0 + 1 < height
        for c in 0..<channels {
            var acc: UInt64 = 0x2000
            if inY0 && inX0 { acc &+= UInt64(src[(y0 * width + x0) * channels + c]) &* weights.0 }
            if inY0 && inX1 { acc &+= UInt64(src[(y0 * width + x0 + 1) * channels + c]) &* weights.1 }
            if inY1 && inX0 { acc &+= UInt64(src[((y0 + 1) * width + x0) * channels + c]) &* weights.2 }
            if inY1 && inX1 { acc &+= UInt64(src[((y0 + 1) * width + x0 + 1) * channels + c]) &* weights.3 }
            out[c] = UInt8(truncatingIfNeeded: acc >> 14)
        }
    }

    /// Rectifies output row `y`, computing source positions on the fly: first the
    /// whole row's fixed-point positions into `scratch` (2·width `Int32`, eight pixels
    /// at a time with `SourcePositions.fixedPoint8`), then the sampling.
    @inline(__always)
    static func rectifyRow(_ y: Int, positions: SourcePositions, table: UnsafePointer<Float>, slopes: UnsafePointer<Float>,
                           channels: Int, src: UnsafePointer<UInt8>, width: Int, height: Int,
                           dst: UnsafeMutablePointer<UInt8>, scratch: UnsafeMutablePointer<Int32>) {
        positions.fixedPointRow(y, width: width, table: table, slopes: slopes, into: scratch)
        rectifyRow(y, map: scratch - y * width * 2, channels: channels, src: src, width: width, height: height, dst: dst)
    }

    /// Rectifies output row `y` with positions read from a precomputed map.
    @inline(__always)
    static func rectifyRow(_ y: Int, map: UnsafePointer<Int32>, channels: Int, src: UnsafePointer<UInt8>,
                           width: Int, height: Int, dst: UnsafeMutablePointer<UInt8>) {
        let row = dst + y * width * channels
        let positions = map + y * width * 2
        let raw = UnsafeRawPointer(src)
        if channels == 3 {
            // Two pixels at a time where both neighborhoods are inside and the store
            // stays in the row (it writes 1 byte of pixel x + 2, rewritten next).
            let rowBytes = width &* 3
            var x = 0
            while x < width {
                let X = Int(positions[2 &* x]), Y = Int(positions[2 &* x &+ 1])
                if x &+ 2 < width {
                    let a = split(X, Y)
                    let b = split(Int(positions[2 &* x &+ 2]), Int(positions[2 &* x &+ 3]))
                    if inFastRegion(a.x0, a.y0, width: width, height: height)
                        && inFastRegion(b.x0, b.y0, width: width, height: height) {
                        sampleRGBPair(a, b, src: raw, rowBytes: rowBytes, out: UnsafeMutableRawPointer(row + x &* 3))
                        x &+= 2
                        continue
                    }
                }
                sampleRGB(X, Y, src: raw, width: width, height: height, out: row + x &* 3)
                x &+= 1
            }
        } else {
            for x in 0..<width {
                sample(Int(positions[2 &* x]), Int(positions[2 &* x &+ 1]), channels: channels, src: src, width: width,
                       height: height, out: row + x &* channels)
            }
        }
    }
}
