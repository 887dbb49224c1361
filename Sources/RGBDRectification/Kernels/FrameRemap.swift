import CKernels

/// Bilinear sampling of 8-bit frames whose rows lie `rowBytes` apart (`CVPixelBuffer`
/// planes, strided arrays), from fixed-point positions in a `PositionChunk`.
///
/// The arithmetic is `ColorRemap`'s, bit for bit: the same integer parts, the same
/// 1/128-pixel weights summing to 16384, `(Σ w·s + 2¹³) >> 14`, black outside. One,
/// two and four channels have their own vector paths here (each pixel's two neighbors in
/// a source row come from one load and meet their two weights in one multiply-add of
/// 16-bit pairs); three channels use `ColorRemap`'s RGB path with row strides.
enum FrameRemap {
    /// Offsets, weights and "fast" flags of output pixels `0 ..< count` for the 1-, 2-
    /// and 4-channel paths, four at a time: the byte offset `y0·rowBytes + x0·2^shift`
    /// of each neighborhood, its weights as 16-bit pairs per row (`top` = `w00 | w10 << 16`,
    /// `bottom` = `w01 | w11 << 16`, as `ColorRemap.prepareRGB`), and per group of four
    /// whether the group is whole and all four neighborhoods are inside
    /// (`0 ≤ x0 < width − 1`, `0 ≤ y0 < height − 1`: the loads read exactly the two
    /// neighbors of each row).
    ///
    /// Out of line on purpose (a small loop of lane operations kept in vector registers).
    @inline(never)
    static func preparePairs(count: Int, chunk: PositionChunk, width: Int, height: Int, rowBytes: Int,
                             pixelShift: Int32) {
        let shift = SIMD4<Int32>(repeating: pixelShift)
        BilinearWeights.prepare(count: count, chunk: chunk, width: width, height: height, rowBytes: rowBytes,
                                margin: 1) { x0 in x0 &<< shift }
    }

    /// `preparePairs` / `ColorRemap.prepareRGB` reading the positions straight from a
    /// `RectificationMap`'s offsets (pixels `x0 ..< x0 + count` of row `y`), without
    /// writing them to `chunk.xs`/`chunk.ys` first, except for groups that are not fast
    /// (their pixels are sampled one at a time from `xs`, `ys`). `pixelBytes` 1 to 4;
    /// three-byte pixels need one more pixel of margin on the right (their 8-byte loads).
    /// For one channel the weights are stored as the 1-D pairs `sample1Mapped` takes.
    @inline(never)
    static func prepareFromMap(count: Int, chunk: PositionChunk, offsets: UnsafePointer<Int16>, mapWidth: Int, y: Int,
                               from x0: Int, width: Int, height: Int, rowBytes: Int, pixelBytes: Int) {
        let margin = pixelBytes == 3 ? 2 : 1
        let separable = pixelBytes == 1
        let limitX = SIMD4<UInt32>(repeating: UInt32(truncatingIfNeeded: max(0, width &- margin)))
        let limitY = SIMD4<UInt32>(repeating: UInt32(truncatingIfNeeded: max(0, height &- 1)))
        let stride = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: rowBytes))
        // x·pixelBytes as shifts (no 32-bit lane multiply on SSE2): 1, 2, 4 = 1 << shift;
        // 3 = 2 + 1.
        let shift = SIMD4<Int32>(repeating: pixelBytes == 4 ? 2 : pixelBytes == 2 ? 1 : pixelBytes == 3 ? 1 : 0)
        let plusOne = SIMD4<Int32>(repeating: pixelBytes == 3 ? -1 : 0)
        let yBase = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: y &* 256))
        var xBase = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: x0 &* 256)) &+ SIMD4(0, 256, 512, 768)
        // One 32-bit word per pixel: x offset in the low half, y offset in the high half.
        let words = UnsafeRawPointer(offsets + (y &* mapWidth &+ x0) &* 2)
        let whole = count & ~3
        var i = 0
        while i < whole {
            let v = words.loadUnaligned(fromByteOffset: i &* 4, as: SIMD4<Int32>.self)
            let X = ((v &<< 16) &>> 16) &+ xBase, Y = (v &>> 16) &+ yBase
            xBase &+= 1024
            let x = X &>> 8, yy = Y &>> 8
            let inside = (unsafeBitCast(x, to: SIMD4<UInt32>.self) .< limitX) .& (unsafeBitCast(yy, to: SIMD4<UInt32>.self) .< limitY)
            let fast = all(inside)
            chunk.fast[i &>> 2] = fast ? 1 : 0
            if !fast {
                UnsafeMutableRawPointer(chunk.xs + i).storeBytes(of: X, as: SIMD4<Int32>.self)
                UnsafeMutableRawPointer(chunk.ys + i).storeBytes(of: Y, as: SIMD4<Int32>.self)
            }
            let fx = BilinearWeights.fraction(X), fy = BilinearWeights.fraction(Y)
            if separable {
                // One channel (`sample1Mapped`): the 1-D weight pairs, (128 − fx, fx) and (128 − fy, fy).
                UnsafeMutableRawPointer(chunk.top + i).storeBytes(of: BilinearWeights.pairs(fx), as: SIMD4<Int32>.self)
                UnsafeMutableRawPointer(chunk.bottom + i).storeBytes(of: BilinearWeights.pairs(fy), as: SIMD4<Int32>.self)
            } else {
                let (top, bottom) = BilinearWeights.rowPairs(fx: fx, fy: fy)
                UnsafeMutableRawPointer(chunk.top + i).storeBytes(of: top, as: SIMD8<Int16>.self)
                UnsafeMutableRawPointer(chunk.bottom + i).storeBytes(of: bottom, as: SIMD8<Int16>.self)
            }
            UnsafeMutableRawPointer(chunk.offsets + i).storeBytes(of: yy &* stride &+ (x &<< shift) &+ (x & plusOne),
                                                                  as: SIMD4<Int32>.self)
            i &+= 4
        }
        if i < count {
            // The partial last group: sampled one pixel at a time from xs, ys.
            chunk.fast[i &>> 2] = 0
            while i < count {
                let o = (y &* mapWidth &+ x0 &+ i) &* 2
                chunk.xs[i] = Int32(offsets[o]) &+ Int32(truncatingIfNeeded: (x0 &+ i) &* 256)
                chunk.ys[i] = Int32(offsets[o &+ 1]) &+ Int32(truncatingIfNeeded: y &* 256)
                i &+= 1
            }
        }
    }

    /// Samples the prepared pixels `0 ..< count` of a chunk (`prepareFromMap`, or the
    /// prepare step of `sampleSpan`) with the path for `channels`.
    @inline(__always)
    static func samplePrepared(count: Int, chunk: PositionChunk, channels: Int, src: UnsafeRawPointer, width: Int,
                               height: Int, rowBytes: Int, out: UnsafeMutablePointer<UInt8>, spill: Bool) {
        switch channels {
        case 1:
            sample1Mapped(count: count, chunk: chunk, src: src, width: width, height: height, rowBytes: rowBytes, out: out)
        case 2:
            sample2Span(count: count, chunk: chunk, src: src, width: width, height: height, rowBytes: rowBytes, out: out)
        default:
            ColorRemap.sampleRGBSpan(count: count, chunk: chunk, src: src, width: width, height: height,
                                     rowBytes: rowBytes, out: out, spill: spill, fourChannels: channels == 4)
        }
    }

    /// One pixel at fixed-point `(X, Y)` with every neighbor checked (`ColorRemap.sample`
    /// with a row stride).
    @inline(__always)
    static func sampleChecked(_ X: Int32, _ Y: Int32, channels: Int, src: UnsafeRawPointer, width: Int, height: Int,
                              rowBytes: Int, out: UnsafeMutablePointer<UInt8>) {
        ColorRemap.sample(Int(X), Int(Y), channels: channels, src: src.assumingMemoryBound(to: UInt8.self), width: width,
                          height: height, rowBytes: rowBytes, out: out)
    }

    /// The pixels of a group that is not fast, one at a time (out of line: rare, and the
    /// vector loops stay small enough for the optimizer to inline their lane conversions).
    @inline(never)
    static func sampleGroupChecked(_ i: Int, count: Int, chunk: PositionChunk, channels: Int, src: UnsafeRawPointer,
                                   width: Int, height: Int, rowBytes: Int, out: UnsafeMutablePointer<UInt8>) {
        var j = i
        let end = min(i &+ 4, count)
        while j < end {
            sampleChecked(chunk.xs[j], chunk.ys[j], channels: channels, src: src, width: width, height: height,
                          rowBytes: rowBytes, out: out + j &* channels)
            j &+= 1
        }
    }

    /// One channel, one pixel at a time in scalar code (as fast as lane shuffling on SSE2,
    /// and simpler): `Σ w·s` from the prepared offsets and weights.
    @inline(never)
    static func sample1Span(count: Int, chunk: PositionChunk, src: UnsafeRawPointer, width: Int, height: Int,
                            rowBytes: Int, out: UnsafeMutablePointer<UInt8>) {
        let bytes = src.assumingMemoryBound(to: UInt8.self)
        var i = 0
        while i < count {
            if chunk.fast[i &>> 2] != 0 {
                for j in i..<(i &+ 4) {
                    let p = bytes + Int(chunk.offsets[j])
                    let t = chunk.top[j], b = chunk.bottom[j]
                    let s = UInt32(p[0]) &* (t & 0xFFFF) &+ UInt32(p[1]) &* (t &>> 16)
                        &+ UInt32(p[rowBytes]) &* (b & 0xFFFF) &+ UInt32(p[rowBytes &+ 1]) &* (b &>> 16) &+ 0x2000
                    out[j] = UInt8(truncatingIfNeeded: s &>> 14)
                }
            } else {
                sampleGroupChecked(i, count: count, chunk: chunk, channels: 1, src: src, width: width, height: height,
                                   rowBytes: rowBytes, out: out)
            }
            i &+= 4
        }
    }

    /// One channel from `prepareFromMap`'s 1-D weights, four pixels at a time: the eight
    /// 2-byte loads (each row's two neighbors) in one vector, interpolated along x in
    /// 16-bit lanes (`p·(128 − fx) + q·fx` ≤ 32640), then along y in 32-bit lanes:
    /// `(128 − fy)·top + fy·bottom` is `Σ w·s` exactly.
    @inline(never)
    static func sample1Mapped(count: Int, chunk: PositionChunk, src: UnsafeRawPointer, width: Int, height: Int,
                              rowBytes: Int, out: UnsafeMutablePointer<UInt8>) {
        var i = 0
        while i < count {
            if chunk.fast[i &>> 2] != 0 {
                let o = UnsafeRawPointer(chunk.offsets + i).loadUnaligned(as: SIMD4<Int32>.self)
                let o0 = Int(o[0]), o1 = Int(o[1]), o2 = Int(o[2]), o3 = Int(o[3])
                let v = SIMD8<UInt16>(src.loadUnaligned(fromByteOffset: o0, as: UInt16.self),
                                      src.loadUnaligned(fromByteOffset: o1, as: UInt16.self),
                                      src.loadUnaligned(fromByteOffset: o2, as: UInt16.self),
                                      src.loadUnaligned(fromByteOffset: o3, as: UInt16.self),
                                      src.loadUnaligned(fromByteOffset: o0 &+ rowBytes, as: UInt16.self),
                                      src.loadUnaligned(fromByteOffset: o1 &+ rowBytes, as: UInt16.self),
                                      src.loadUnaligned(fromByteOffset: o2 &+ rowBytes, as: UInt16.self),
                                      src.loadUnaligned(fromByteOffset: o3 &+ rowBytes, as: UInt16.self))
                // Little-endian: the left neighbor in the low byte.
                let left = v & 0xFF, right = v &>> 8
                let wx = UnsafeRawPointer(chunk.top + i).loadUnaligned(as: SIMD8<UInt16>.self)
                let gx = SIMD8<UInt16>(wx[0], wx[2], wx[4], wx[6], wx[0], wx[2], wx[4], wx[6])
                let fx = SIMD8<UInt16>(wx[1], wx[3], wx[5], wx[7], wx[1], wx[3], wx[5], wx[7])
                let h = left &* gx &+ right &* fx      // top row of pixels 0...3, then the bottom row
                let pairs = unsafeBitCast(SIMD8<UInt16>(h[0], h[4], h[1], h[5], h[2], h[6], h[3], h[7]), to: SIMD4<UInt32>.self)
                let wy = UnsafeRawPointer(chunk.bottom + i).loadUnaligned(as: SIMD4<UInt32>.self)
                let sums = (pairs & 0xFFFF) &* (wy & 0xFFFF) &+ (pairs &>> 16) &* (wy &>> 16) &+ 0x2000
                let b = unsafeBitCast(sums &>> 14, to: SIMD16<UInt8>.self)
                UnsafeMutableRawPointer(out + i).storeBytes(of: SIMD4(b[0], b[4], b[8], b[12]), as: SIMD4<UInt8>.self)
            } else {
                sampleGroupChecked(i, count: count, chunk: chunk, channels: 1, src: src, width: width, height: height,
                                   rowBytes: rowBytes, out: out)
            }
            i &+= 4
        }
    }

    /// Whether the direct paths (`sample1Direct`) apply to a plane: integer parts of
    /// positions, their neighbors and `rowBytes` fit signed 16-bit lanes.
    @inline(__always)
    static func directFits(width: Int, height: Int, rowBytes: Int) -> Bool {
        width < 32_000 && height < 32_000 && rowBytes <= Int(Int16.max)
    }

    /// The direct paths' lanes for pixels from `x0` of row `y`, as `(x, y)` pairs of
    /// 16-bit lanes: `limits` (a neighborhood at `(x₀, y₀)` is inside when
    /// `0 ≤ x₀ < width − margin` and `0 ≤ y₀ < height − 1`), `start` (the first four
    /// pixels' own coordinates), and `strides`, `(pixelBytes, rowBytes)` built from one
    /// 32-bit word (so that the byte offsets are one multiply-add of pairs).
    @inline(__always)
    static func directLanes(y: Int, from x0: Int, width: Int, height: Int, rowBytes: Int, pixelBytes: Int, margin: Int)
        -> (limits: SIMD8<Int16>, start: SIMD8<Int16>, strides: SIMD8<Int16>) {
        let w1 = Int16(truncatingIfNeeded: width &- margin), h1 = Int16(truncatingIfNeeded: height &- 1)
        let yy = Int16(truncatingIfNeeded: y), xx = Int16(truncatingIfNeeded: x0)
        let strides = unsafeBitCast(SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: pixelBytes | (rowBytes << 16))),
                                    to: SIMD8<Int16>.self)
        return (SIMD8(w1, h1, w1, h1, w1, h1, w1, h1), SIMD8(xx, yy, xx &+ 1, yy, xx &+ 2, yy, xx &+ 3, yy), strides)
    }

    /// One channel straight from a `RectificationMap`'s offsets (pixels `x0 ..< x0 +
    /// count` of row `y`), eight pixels at a time, with nothing written in between (no
    /// prepared offsets or weights: each group's arithmetic stays in vector registers).
    ///
    /// A map word holds the offsets `(dx, dy)` of the fixed-point position `(X, Y) =
    /// (256·x + dx, 256·y + dy)`; since `256·x` has no fraction, the integer parts are
    /// `x + (dx >> 8)`, `y + (dy >> 8)` and the fractions come from `dx & 255`,
    /// `dy & 255`, all in 16-bit lanes. Byte offsets are one multiply-add of the (x₀, y₀)
    /// pairs with `(1, rowBytes)` (`pmaddwd`); each source row of the eight pixels is
    /// interpolated along x in 16-bit lanes (`p·(128 − fx) + q·fx` ≤ 32640), and the two
    /// rows meet `(128 − fy, fy)` in a multiply-add of pairs: `Σ w·s` exactly as
    /// `ColorRemap` computes it. Requires `directFits`.
    ///
    /// With AVX2 (`avx2`), `rgbd_sample1_direct_avx2` does sixteen pixels at a time (the
    /// same bytes) where their neighborhoods share a window of the source, and leaves the
    /// other groups to the Swift loop.
    @inline(never)
    static func sample1Direct(count: Int, words: UnsafeRawPointer, y: Int, from x0: Int, src: UnsafeRawPointer,
                              width: Int, height: Int, rowBytes: Int, out: UnsafeMutablePointer<UInt8>,
                              avx2: Bool = VectorKernels.avx2) {
        direct(rgbd_sample1_direct_avx2, avx2: avx2, group: 16, pixelBytes: 1, count: count, words: words, y: y,
               from: x0, src: src, width: width, height: height, rowBytes: rowBytes, out: out) { n, words, x, out in
            sample1DirectLoop(count: n, words: words, y: y, from: x, src: src, width: width, height: height,
                              rowBytes: rowBytes, out: out)
        }
    }

    /// The signature of the AVX2 direct kernels (`rgbd_kernels.h`): count, map words, y,
    /// x0, source, width, height, row bytes, output; returns the pixels done.
    typealias DirectKernel = @convention(c) (Int, UnsafeRawPointer?, Int32, Int32, UnsafePointer<UInt8>?, Int32, Int32,
                                             Int, UnsafeMutablePointer<UInt8>?) -> Int

    /// Pixels `0 ..< count` of row `y` from `x0` (map words from `words`, output from
    /// `out`, `pixelBytes` each). Without AVX2 (`avx2` false) the Swift `loop` does them
    /// all; with it the AVX2 `kernel` does, and each group of `group` pixels it stops at
    /// (or the last few) goes to `loop`, the kernel going on after it.
    @inline(__always)
    static func direct(_ kernel: DirectKernel, avx2: Bool, group: Int, pixelBytes: Int, count: Int,
                       words: UnsafeRawPointer, y: Int, from x0: Int, src: UnsafeRawPointer, width: Int, height: Int,
                       rowBytes: Int, out: UnsafeMutablePointer<UInt8>,
                       loop: (_ count: Int, _ words: UnsafeRawPointer, _ x: Int, _ out: UnsafeMutablePointer<UInt8>) -> Void) {
        guard avx2 else {
            loop(count, words, x0, out)
            return
        }
        let bytes = src.assumingMemoryBound(to: UInt8.self)
        let row = Int32(truncatingIfNeeded: y), w = Int32(truncatingIfNeeded: width), h = Int32(truncatingIfNeeded: height)
        var i = 0
        while i < count {
            i &+= kernel(count &- i, words + i &* 4, row, Int32(truncatingIfNeeded: x0 &+ i), bytes, w, h, rowBytes,
                         out + i &* pixelBytes)
            guard i < count else { break }
            let n = min(group, count &- i)
            loop(n, words + i &* 4, x0 &+ i, out + i &* pixelBytes)
            i &+= n
        }
    }

    /// `sample1Direct`'s Swift loop.
    @inline(never)
    static func sample1DirectLoop(count: Int, words: UnsafeRawPointer, y: Int, from x0: Int, src: UnsafeRawPointer,
                                  width: Int, height: Int, rowBytes: Int, out: UnsafeMutablePointer<UInt8>) {
        let (limits, start, strides) = directLanes(y: y, from: x0, width: width, height: height, rowBytes: rowBytes,
                                                   pixelBytes: 1, margin: 1)
        var base = start
        let step = SIMD8<Int16>(4, 0, 4, 0, 4, 0, 4, 0)
        let below = src + rowBytes   // the bottom neighbors' row
        let whole = count & ~7
        var i = 0
        while i < whole {
            let wa = words.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Int16>.self)
            let wb = words.loadUnaligned(fromByteOffset: i &* 4 &+ 16, as: SIMD8<Int16>.self)
            // Integer parts (x₀, y₀) of pixels i ..< i + 4, then i + 4 ..< i + 8.
            let pa = (wa &>> 8) &+ base
            let pb = (wb &>> 8) &+ base &+ step
            base &+= step &+ step
            let inside = (pa .>= SIMD8<Int16>.zero) .& (pa .< limits) .& (pb .>= SIMD8<Int16>.zero) .& (pb .< limits)
            if all(inside) {
                let oa = ColorRemap.multiplyAddPairs(pa, strides), ob = ColorRemap.multiplyAddPairs(pb, strides)
                // Two offsets per 64-bit move out of the vector registers.
                let qa = unsafeBitCast(oa, to: SIMD2<Int64>.self), qb = unsafeBitCast(ob, to: SIMD2<Int64>.self)
                let o0 = Int(Int32(truncatingIfNeeded: qa[0])), o1 = Int(qa[0] &>> 32)
                let o2 = Int(Int32(truncatingIfNeeded: qa[1])), o3 = Int(qa[1] &>> 32)
                let o4 = Int(Int32(truncatingIfNeeded: qb[0])), o5 = Int(qb[0] &>> 32)
                let o6 = Int(Int32(truncatingIfNeeded: qb[1])), o7 = Int(qb[1] &>> 32)
                // Each row's two neighbors of the eight pixels (little-endian: the left one in
                // the low byte), the top row in one vector, the bottom row in another.
                let top = neighborPairs(src, o0, o1, o2, o3, o4, o5, o6, o7)
                let bottom = neighborPairs(below, o0, o1, o2, o3, o4, o5, o6, o7)
                // Fractions fx, fy of the eight pixels (0…128), each in its own vector:
                // ⌈(d & 255) / 2⌉ of the map words' halves.
                let fa = unsafeBitCast(wa & 255, to: SIMD4<Int32>.self), fb = unsafeBitCast(wb & 255, to: SIMD4<Int32>.self)
                let fa2 = fa &- ((fa &>> 1) & 0x7F_007F), fb2 = fb &- ((fb &>> 1) & 0x7F_007F)
                let fx = unsafeBitCast(Lanes.narrow16(SIMD8<Int32>(lowHalf: fa2 & 0xFFFF, highHalf: fb2 & 0xFFFF)), to: SIMD8<UInt16>.self)
                let fy = Lanes.narrow16(SIMD8<Int32>(lowHalf: fa2 &>> 16, highHalf: fb2 &>> 16))
                // Along x in 16-bit lanes, a row of eight pixels per vector (at most 255·128).
                let gx = 128 &- fx
                let h = unsafeBitCast((top & 0xFF) &* gx &+ (top &>> 8) &* fx, to: SIMD8<Int16>.self)
                let v = unsafeBitCast((bottom & 0xFF) &* gx &+ (bottom &>> 8) &* fx, to: SIMD8<Int16>.self)
                // Along y: (top, bottom) pairs times (128 − fy, fy) pairs.
                let gy = 128 &- fy
                let a = ColorRemap.multiplyAddPairs(SIMD8(h[0], v[0], h[1], v[1], h[2], v[2], h[3], v[3]),
                                                    SIMD8(gy[0], fy[0], gy[1], fy[1], gy[2], fy[2], gy[3], fy[3]))
                let b = ColorRemap.multiplyAddPairs(SIMD8(h[4], v[4], h[5], v[5], h[6], v[6], h[7], v[7]),
                                                    SIMD8(gy[4], fy[4], gy[5], fy[5], gy[6], fy[6], gy[7], fy[7]))
                let bytes = Lanes.narrow8((SIMD8<Int32>(lowHalf: a, highHalf: b) &+ 0x2000) &>> 14)
                UnsafeMutableRawPointer(out + i).storeBytes(of: bytes, as: SIMD8<UInt8>.self)
            } else {
                sampleDirectChecked(from: i, to: i &+ 8, channels: 1, words: words, y: y, x0: x0, src: src, width: width,
                                     height: height, rowBytes: rowBytes, out: out)
            }
            i &+= 8
        }
        if i < count {
            sampleDirectChecked(from: i, to: count, channels: 1, words: words, y: y, x0: x0, src: src, width: width, height: height,
                                 rowBytes: rowBytes, out: out)
        }
    }

    /// The two bytes at each of eight offsets from `base` (a row's left and right neighbors
    /// of eight pixels; little-endian: the left one in the low byte).
    @inline(__always)
    static func neighborPairs(_ base: UnsafeRawPointer, _ o0: Int, _ o1: Int, _ o2: Int, _ o3: Int, _ o4: Int,
                              _ o5: Int, _ o6: Int, _ o7: Int) -> SIMD8<UInt16> {
        SIMD8(base.loadUnaligned(fromByteOffset: o0, as: UInt16.self), base.loadUnaligned(fromByteOffset: o1, as: UInt16.self),
              base.loadUnaligned(fromByteOffset: o2, as: UInt16.self), base.loadUnaligned(fromByteOffset: o3, as: UInt16.self),
              base.loadUnaligned(fromByteOffset: o4, as: UInt16.self), base.loadUnaligned(fromByteOffset: o5, as: UInt16.self),
              base.loadUnaligned(fromByteOffset: o6, as: UInt16.self), base.loadUnaligned(fromByteOffset: o7, as: UInt16.self))
    }

    /// The bilinear weights of four pixels from their map words `w` (`dx, dy` pairs, 1/256
    /// pixel) as 16-bit pairs per pixel: `top` = (w00, w10) = (128 − fx, fx)·(128 − fy),
    /// `bottom` = (w01, w11) = (128 − fx, fx)·fy, with fx, fy = `((d & 255) + 1) >> 1`.
    @inline(__always)
    static func weightPairs(_ w: SIMD8<Int16>) -> (top: SIMD8<Int16>, bottom: SIMD8<Int16>) {
        // fx from the 32-bit words, fy from the 16-bit lanes: so written, both stay vector
        // operations (other forms were narrowed into per-lane scalar code).
        let fx = BilinearWeights.fraction(unsafeBitCast(w, to: SIMD4<Int32>.self))
        let horizontal = unsafeBitCast(BilinearWeights.pairs(fx), to: SIMD8<Int16>.self)
        let f16 = BilinearWeights.fraction(w)
        let fy = SIMD8<Int16>(f16[1], f16[1], f16[3], f16[3], f16[5], f16[5], f16[7], f16[7])
        let bottom = horizontal &* fy
        return ((horizontal &<< 7) &- bottom, bottom)
    }

    /// Three or four channels (RGB, BGRA) straight from a `RectificationMap`'s offsets,
    /// four pixels at a time (`sample1Direct`'s way to offsets and weights; each pixel's
    /// two rows through `ColorRemap.interpolateRGB`). `spill` as for
    /// `ColorRemap.sampleRGBSpan` (three channels: the byte after the span may be written).
    /// Requires `directFits` for the plane's `rowBytes`. Compiled once per pixel size
    /// (`sampleColorDirect3`, `sampleColorDirect4`), as `ColorRemap.sampleRGBSpan` is.
    @inline(__always)
    static func sampleColorDirect(count: Int, words: UnsafeRawPointer, y: Int, from x0: Int, src: UnsafeRawPointer,
                                  width: Int, height: Int, rowBytes: Int, out: UnsafeMutablePointer<UInt8>,
                                  fourChannels: Bool, spill: Bool) {
        if fourChannels {
            sampleColorDirect4(count: count, words: words, y: y, from: x0, src: src, width: width, height: height,
                               rowBytes: rowBytes, out: out)
        } else {
            sampleColorDirect3(count: count, words: words, y: y, from: x0, src: src, width: width, height: height,
                               rowBytes: rowBytes, out: out, spill: spill)
        }
    }

    /// `sampleColorDirect` for 3-byte pixels: with AVX2 (`avx2`), eight pixels at a time
    /// by `rgbd_sample3_direct_avx2` (the same bytes), which leaves groups at the borders
    /// to the Swift loop.
    @inline(never)
    static func sampleColorDirect3(count: Int, words: UnsafeRawPointer, y: Int, from x0: Int, src: UnsafeRawPointer,
                                   width: Int, height: Int, rowBytes: Int, out: UnsafeMutablePointer<UInt8>, spill: Bool,
                                   avx2: Bool = VectorKernels.avx2) {
        let end = out + count &* 3
        direct(rgbd_sample3_direct_avx2, avx2: avx2, group: 8, pixelBytes: 3, count: count, words: words, y: y,
               from: x0, src: src, width: width, height: height, rowBytes: rowBytes, out: out) { n, words, x, out in
            // A byte written past these pixels belongs to the next ones, written after.
            colorDirect(count: n, words: words, y: y, from: x, src: src, width: width, height: height,
                        rowBytes: rowBytes, out: out, fourChannels: false, spill: spill || out + n &* 3 < end)
        }
    }

    /// `sampleColorDirect` for 4-byte pixels: with AVX2 (`avx2`), eight pixels at a time
    /// by `rgbd_sample4_direct_avx2` (the same bytes), which leaves groups at the borders
    /// to the Swift loop.
    @inline(never)
    static func sampleColorDirect4(count: Int, words: UnsafeRawPointer, y: Int, from x0: Int, src: UnsafeRawPointer,
                                   width: Int, height: Int, rowBytes: Int, out: UnsafeMutablePointer<UInt8>,
                                   avx2: Bool = VectorKernels.avx2) {
        direct(rgbd_sample4_direct_avx2, avx2: avx2, group: 8, pixelBytes: 4, count: count, words: words, y: y,
               from: x0, src: src, width: width, height: height, rowBytes: rowBytes, out: out) { n, words, x, out in
            colorDirect(count: n, words: words, y: y, from: x, src: src, width: width, height: height,
                        rowBytes: rowBytes, out: out, fourChannels: true, spill: false)
        }
    }

    /// The body of `sampleColorDirect3` and `sampleColorDirect4` (`fourChannels` a constant
    /// in each).
    @inline(__always)
    static func colorDirect(count: Int, words: UnsafeRawPointer, y: Int, from x0: Int, src: UnsafeRawPointer,
                            width: Int, height: Int, rowBytes: Int, out: UnsafeMutablePointer<UInt8>,
                            fourChannels: Bool, spill: Bool) {
        let pixelBytes = fourChannels ? 4 : 3
        // An 8-byte load at x₀ reads two 4-byte pixels, or two 3-byte pixels and two bytes more.
        let (limits, start, strides) = directLanes(y: y, from: x0, width: width, height: height, rowBytes: rowBytes,
                                                   pixelBytes: pixelBytes, margin: fourChannels ? 1 : 2)
        var base = start
        let step = SIMD8<Int16>(4, 0, 4, 0, 4, 0, 4, 0)
        let pixelBits: UInt64 = fourChannels ? 32 : 24
        let whole = count & ~3
        var i = 0
        while i < whole {
            let w = words.loadUnaligned(fromByteOffset: i &* 4, as: SIMD8<Int16>.self)
            let p = (w &>> 8) &+ base
            base &+= step
            guard all((p .>= SIMD8<Int16>.zero) .& (p .< limits)) else {
                sampleDirectChecked(from: i, to: i &+ 4, channels: pixelBytes, words: words, y: y, x0: x0, src: src,
                                    width: width, height: height, rowBytes: rowBytes, out: out)
                i &+= 4
                continue
            }
            let o = ColorRemap.multiplyAddPairs(p, strides)
            let (top, bottom) = weightPairs(w)
            let t = unsafeBitCast(top, to: SIMD4<UInt32>.self), b = unsafeBitCast(bottom, to: SIMD4<UInt32>.self)
            let p0 = ColorRemap.interpolateRGB(Int(o[0]), top: t[0], bottom: b[0], src: src, rowBytes: rowBytes,
                                               pixelBits: pixelBits)
            let p1 = ColorRemap.interpolateRGB(Int(o[1]), top: t[1], bottom: b[1], src: src, rowBytes: rowBytes,
                                               pixelBits: pixelBits)
            let p2 = ColorRemap.interpolateRGB(Int(o[2]), top: t[2], bottom: b[2], src: src, rowBytes: rowBytes,
                                               pixelBits: pixelBits)
            let p3 = ColorRemap.interpolateRGB(Int(o[3]), top: t[3], bottom: b[3], src: src, rowBytes: rowBytes,
                                               pixelBits: pixelBits)
            let sums = SIMD16<Int32>(lowHalf: SIMD8(lowHalf: p0, highHalf: p1), highHalf: SIMD8(lowHalf: p2, highHalf: p3))
            let bytes = Lanes.narrow8((sums &+ 0x2000) &>> 14)
            if fourChannels {
                UnsafeMutableRawPointer(out + i &* 4).storeBytes(of: bytes, as: SIMD16<UInt8>.self)
            } else {
                ColorRemap.storeRGB(bytes, to: UnsafeMutableRawPointer(out + i &* 3), spill: spill || i &+ 4 < count)
            }
            i &+= 4
        }
        if i < count {
            sampleDirectChecked(from: i, to: count, channels: pixelBytes, words: words, y: y, x0: x0, src: src,
                                width: width, height: height, rowBytes: rowBytes, out: out)
        }
    }

    /// The direct paths' pixels `i ..< end` one at a time, every neighbor checked (out of
    /// line: rare, at the borders).
    @inline(never)
    static func sampleDirectChecked(from i: Int, to end: Int, channels: Int, words: UnsafeRawPointer, y: Int, x0: Int,
                                    src: UnsafeRawPointer, width: Int, height: Int, rowBytes: Int,
                                    out: UnsafeMutablePointer<UInt8>) {
        for j in i..<end {
            let dx = words.loadUnaligned(fromByteOffset: j &* 4, as: Int16.self)
            let dy = words.loadUnaligned(fromByteOffset: j &* 4 &+ 2, as: Int16.self)
            sampleChecked(Int32(dx) &+ Int32(truncatingIfNeeded: (x0 &+ j) &* 256),
                          Int32(dy) &+ Int32(truncatingIfNeeded: y &* 256), channels: channels, src: src, width: width,
                          height: height, rowBytes: rowBytes, out: out + j &* channels)
        }
    }

    /// Two channels (interleaved chroma), one pixel at a time in scalar code: both
    /// channels in the two 32-bit halves of 64-bit products (`ColorRemap.sampleRGB`'s trick).
    @inline(never)
    static func sample2Span(count: Int, chunk: PositionChunk, src: UnsafeRawPointer, width: Int, height: Int,
                            rowBytes: Int, out: UnsafeMutablePointer<UInt8>) {
        @inline(__always) func spread(_ v: UInt16) -> UInt64 {
            let x = UInt64(UInt16(littleEndian: v))
            return (x & 0xFF) | ((x & 0xFF00) << 24)
        }
        var i = 0
        while i < count {
            if chunk.fast[i &>> 2] != 0 {
                for j in i..<(i &+ 4) {
                    let o = Int(chunk.offsets[j])
                    let t = UInt64(chunk.top[j]), b = UInt64(chunk.bottom[j])
                    let s = spread(src.loadUnaligned(fromByteOffset: o, as: UInt16.self)) &* (t & 0xFFFF)
                        &+ spread(src.loadUnaligned(fromByteOffset: o &+ 2, as: UInt16.self)) &* (t &>> 16)
                        &+ spread(src.loadUnaligned(fromByteOffset: o &+ rowBytes, as: UInt16.self)) &* (b & 0xFFFF)
                        &+ spread(src.loadUnaligned(fromByteOffset: o &+ rowBytes &+ 2, as: UInt16.self)) &* (b &>> 16)
                        &+ 0x2000_0000_2000
                    out[2 &* j] = UInt8(truncatingIfNeeded: s &>> 14)
                    out[2 &* j &+ 1] = UInt8(truncatingIfNeeded: s &>> 46)
                }
            } else {
                sampleGroupChecked(i, count: count, chunk: chunk, channels: 2, src: src, width: width, height: height,
                                   rowBytes: rowBytes, out: out)
            }
            i &+= 4
        }
    }

    /// Samples output pixels `0 ..< count` of one row of any 8-bit frame from the
    /// positions in `chunk` into `out` (`channels` bytes per pixel). `vector` says whether
    /// byte offsets of the source fit 32 bits (else every pixel is checked one at a time);
    /// `spill` as for `ColorRemap.sampleRGBSpan` (three channels only: may write the
    /// first byte of the next pixel of the same row, which is sampled later).
    @inline(__always)
    static func sampleSpan(count: Int, chunk: PositionChunk, channels: Int, src: UnsafeRawPointer, width: Int,
                           height: Int, rowBytes: Int, out: UnsafeMutablePointer<UInt8>, vector: Bool, spill: Bool) {
        guard vector else {
            for i in 0..<count {
                sampleChecked(chunk.xs[i], chunk.ys[i], channels: channels, src: src, width: width, height: height,
                              rowBytes: rowBytes, out: out + i &* channels)
            }
            return
        }
        switch channels {
        case 1:
            preparePairs(count: count, chunk: chunk, width: width, height: height, rowBytes: rowBytes, pixelShift: 0)
            sample1Span(count: count, chunk: chunk, src: src, width: width, height: height, rowBytes: rowBytes, out: out)
        case 2:
            preparePairs(count: count, chunk: chunk, width: width, height: height, rowBytes: rowBytes, pixelShift: 1)
            sample2Span(count: count, chunk: chunk, src: src, width: width, height: height, rowBytes: rowBytes, out: out)
        case 3:
            ColorRemap.prepareRGB(count: count, chunk: chunk, width: width, height: height, rowBytes: rowBytes)
            ColorRemap.sampleRGBSpan(count: count, chunk: chunk, src: src, width: width, height: height,
                                     rowBytes: rowBytes, out: out, spill: spill)
        case 4:
            preparePairs(count: count, chunk: chunk, width: width, height: height, rowBytes: rowBytes, pixelShift: 2)
            ColorRemap.sampleRGBSpan(count: count, chunk: chunk, src: src, width: width, height: height,
                                     rowBytes: rowBytes, out: out, spill: spill, fourChannels: true)
        default:
            for i in 0..<count {
                sampleChecked(chunk.xs[i], chunk.ys[i], channels: channels, src: src, width: width, height: height,
                              rowBytes: rowBytes, out: out + i &* channels)
            }
        }
    }
}
