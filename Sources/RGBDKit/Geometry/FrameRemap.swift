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
        let limitX = SIMD4<UInt32>(repeating: UInt32(truncatingIfNeeded: max(0, width &- 1)))
        let limitY = SIMD4<UInt32>(repeating: UInt32(truncatingIfNeeded: max(0, height &- 1)))
        let stride = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: rowBytes))
        let shift = SIMD4<Int32>(repeating: pixelShift)
        var i = 0
        while i < count {
            let X = UnsafeRawPointer(chunk.xs + i).loadUnaligned(as: SIMD4<Int32>.self)
            let Y = UnsafeRawPointer(chunk.ys + i).loadUnaligned(as: SIMD4<Int32>.self)
            let x0 = X &>> 8, y0 = Y &>> 8
            let inside = (SIMD4<UInt32>(truncatingIfNeeded: x0) .< limitX) .& (SIMD4<UInt32>(truncatingIfNeeded: y0) .< limitY)
            chunk.fast[i &>> 2] = i &+ 4 <= count && all(inside) ? 1 : 0
            let fx = ((X & 255) &+ 1) &>> 1, fy = ((Y & 255) &+ 1) &>> 1
            let horizontal = unsafeBitCast((128 &- fx) | (fx &<< 16), to: SIMD8<Int16>.self)
            let gy = 128 &- fy
            let top = horizontal &* unsafeBitCast(gy | (gy &<< 16), to: SIMD8<Int16>.self)
            let bottom = horizontal &* unsafeBitCast(fy | (fy &<< 16), to: SIMD8<Int16>.self)
            UnsafeMutableRawPointer(chunk.top + i).storeBytes(of: top, as: SIMD8<Int16>.self)
            UnsafeMutableRawPointer(chunk.bottom + i).storeBytes(of: bottom, as: SIMD8<Int16>.self)
            UnsafeMutableRawPointer(chunk.offsets + i).storeBytes(of: y0 &* stride &+ (x0 &<< shift), as: SIMD4<Int32>.self)
            i &+= 4
        }
    }

    /// One pixel at fixed-point `(X, Y)` with every neighbor checked (`ColorRemap.sample`
    /// with a row stride).
    @inline(__always)
    static func sampleChecked(_ X: Int32, _ Y: Int32, channels: Int, src: UnsafeRawPointer, width: Int, height: Int,
                              rowBytes: Int, out: UnsafeMutablePointer<UInt8>) {
        let (x0, y0, w00, w10, w01, w11) = ColorRemap.split(Int(X), Int(Y))
        ColorRemap.sampleChecked(x0, y0, weights: (UInt64(truncatingIfNeeded: w00), UInt64(truncatingIfNeeded: w10),
                                                   UInt64(truncatingIfNeeded: w01), UInt64(truncatingIfNeeded: w11)),
                                 channels: channels, src: src.assumingMemoryBound(to: UInt8.self), width: width,
                                 height: height, rowBytes: rowBytes, out: out)
    }

    /// The pixels of a group that is not fast, one at a time.
    @inline(__always)
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

    /// `(Σ + 2¹³) >> 14` of each lane, as bytes.
    @inline(__always)
    static func rounded(_ sums: SIMD4<Int32>) -> SIMD4<UInt8> {
        SIMD4<UInt8>(truncatingIfNeeded: (sums &+ 0x2000) &>> 14)
    }

    /// One channel: four pixels from eight 2-byte loads (each row's two neighbors).
    @inline(never)
    static func sample1Span(count: Int, chunk: PositionChunk, src: UnsafeRawPointer, width: Int, height: Int,
                            rowBytes: Int, out: UnsafeMutablePointer<UInt8>) {
        var i = 0
        while i < count {
            if chunk.fast[i &>> 2] != 0 {
                let o = UnsafeRawPointer(chunk.offsets + i).loadUnaligned(as: SIMD4<Int32>.self)
                let o0 = Int(o[0]), o1 = Int(o[1]), o2 = Int(o[2]), o3 = Int(o[3])
                let t = SIMD4<UInt16>(src.loadUnaligned(fromByteOffset: o0, as: UInt16.self),
                                      src.loadUnaligned(fromByteOffset: o1, as: UInt16.self),
                                      src.loadUnaligned(fromByteOffset: o2, as: UInt16.self),
                                      src.loadUnaligned(fromByteOffset: o3, as: UInt16.self))
                let b = SIMD4<UInt16>(src.loadUnaligned(fromByteOffset: o0 &+ rowBytes, as: UInt16.self),
                                      src.loadUnaligned(fromByteOffset: o1 &+ rowBytes, as: UInt16.self),
                                      src.loadUnaligned(fromByteOffset: o2 &+ rowBytes, as: UInt16.self),
                                      src.loadUnaligned(fromByteOffset: o3 &+ rowBytes, as: UInt16.self))
                // Little-endian: each 2-byte load is (left, right) in two byte lanes.
                let topPairs = SIMD8<Int16>(truncatingIfNeeded: unsafeBitCast(t, to: SIMD8<UInt8>.self))
                let bottomPairs = SIMD8<Int16>(truncatingIfNeeded: unsafeBitCast(b, to: SIMD8<UInt8>.self))
                let top = UnsafeRawPointer(chunk.top + i).loadUnaligned(as: SIMD8<Int16>.self)
                let bottom = UnsafeRawPointer(chunk.bottom + i).loadUnaligned(as: SIMD8<Int16>.self)
                let sums = ColorRemap.multiplyAddPairs(topPairs, top) &+ ColorRemap.multiplyAddPairs(bottomPairs, bottom)
                UnsafeMutableRawPointer(out + i).storeBytes(of: rounded(sums), as: SIMD4<UInt8>.self)
            } else {
                sampleGroupChecked(i, count: count, chunk: chunk, channels: 1, src: src, width: width, height: height,
                                   rowBytes: rowBytes, out: out)
            }
            i &+= 4
        }
    }

    /// The 4 bytes `a b c d` of two 2-channel neighbors at byte `o` as 16-bit pairs
    /// `a c b d` (each channel's left and right sample side by side).
    @inline(__always)
    static func pairs2(_ src: UnsafeRawPointer, _ o: Int, _ p: Int) -> SIMD8<Int16> {
        let u = unsafeBitCast(src.loadUnaligned(fromByteOffset: o, as: UInt32.self), to: SIMD4<UInt8>.self)
        let v = unsafeBitCast(src.loadUnaligned(fromByteOffset: p, as: UInt32.self), to: SIMD4<UInt8>.self)
        let w = SIMD8<Int16>(truncatingIfNeeded: SIMD8<UInt8>(lowHalf: u, highHalf: v))
        return SIMD8<Int16>(w[0], w[2], w[1], w[3], w[4], w[6], w[5], w[7])
    }

    /// Two channels (interleaved chroma): four pixels, two per multiply-add.
    @inline(never)
    static func sample2Span(count: Int, chunk: PositionChunk, src: UnsafeRawPointer, width: Int, height: Int,
                            rowBytes: Int, out: UnsafeMutablePointer<UInt8>) {
        var i = 0
        while i < count {
            if chunk.fast[i &>> 2] != 0 {
                let o = UnsafeRawPointer(chunk.offsets + i).loadUnaligned(as: SIMD4<Int32>.self)
                let o0 = Int(o[0]), o1 = Int(o[1]), o2 = Int(o[2]), o3 = Int(o[3])
                let top = UnsafeRawPointer(chunk.top + i).loadUnaligned(as: SIMD4<UInt32>.self)
                let bottom = UnsafeRawPointer(chunk.bottom + i).loadUnaligned(as: SIMD4<UInt32>.self)
                let top01 = unsafeBitCast(SIMD4(top[0], top[0], top[1], top[1]), to: SIMD8<Int16>.self)
                let top23 = unsafeBitCast(SIMD4(top[2], top[2], top[3], top[3]), to: SIMD8<Int16>.self)
                let bottom01 = unsafeBitCast(SIMD4(bottom[0], bottom[0], bottom[1], bottom[1]), to: SIMD8<Int16>.self)
                let bottom23 = unsafeBitCast(SIMD4(bottom[2], bottom[2], bottom[3], bottom[3]), to: SIMD8<Int16>.self)
                let s01 = ColorRemap.multiplyAddPairs(pairs2(src, o0, o1), top01)
                    &+ ColorRemap.multiplyAddPairs(pairs2(src, o0 &+ rowBytes, o1 &+ rowBytes), bottom01)
                let s23 = ColorRemap.multiplyAddPairs(pairs2(src, o2, o3), top23)
                    &+ ColorRemap.multiplyAddPairs(pairs2(src, o2 &+ rowBytes, o3 &+ rowBytes), bottom23)
                let bytes = SIMD8<UInt8>(lowHalf: rounded(s01), highHalf: rounded(s23))
                UnsafeMutableRawPointer(out + i &* 2).storeBytes(of: bytes, as: SIMD8<UInt8>.self)
            } else {
                sampleGroupChecked(i, count: count, chunk: chunk, channels: 2, src: src, width: width, height: height,
                                   rowBytes: rowBytes, out: out)
            }
            i &+= 4
        }
    }

    /// The 8 bytes of two 4-channel neighbors at byte `o` as 16-bit pairs, channel by
    /// channel (`R0 R1 G0 G1 B0 B1 A0 A1`).
    @inline(__always)
    static func pairs4(_ src: UnsafeRawPointer, _ o: Int) -> SIMD8<Int16> {
        let a = unsafeBitCast(src.loadUnaligned(fromByteOffset: o, as: UInt64.self), to: SIMD8<UInt8>.self)
        return SIMD8<Int16>(truncatingIfNeeded: SIMD8<UInt8>(a[0], a[4], a[1], a[5], a[2], a[6], a[3], a[7]))
    }

    /// One 4-channel pixel whose neighborhood starts at byte `o`: `Σ w·s` per channel.
    @inline(__always)
    static func interpolate4(_ o: Int, top: UInt32, bottom: UInt32, src: UnsafeRawPointer, rowBytes: Int) -> SIMD4<Int32> {
        ColorRemap.multiplyAddPairs(pairs4(src, o), unsafeBitCast(SIMD4<UInt32>(repeating: top), to: SIMD8<Int16>.self))
            &+ ColorRemap.multiplyAddPairs(pairs4(src, o &+ rowBytes),
                                           unsafeBitCast(SIMD4<UInt32>(repeating: bottom), to: SIMD8<Int16>.self))
    }

    /// Four channels (BGRA, RGBA): one pixel per two 8-byte loads.
    @inline(never)
    static func sample4Span(count: Int, chunk: PositionChunk, src: UnsafeRawPointer, width: Int, height: Int,
                            rowBytes: Int, out: UnsafeMutablePointer<UInt8>) {
        var i = 0
        while i < count {
            if chunk.fast[i &>> 2] != 0 {
                let o = UnsafeRawPointer(chunk.offsets + i).loadUnaligned(as: SIMD4<Int32>.self)
                let top = UnsafeRawPointer(chunk.top + i).loadUnaligned(as: SIMD4<UInt32>.self)
                let bottom = UnsafeRawPointer(chunk.bottom + i).loadUnaligned(as: SIMD4<UInt32>.self)
                let p0 = interpolate4(Int(o[0]), top: top[0], bottom: bottom[0], src: src, rowBytes: rowBytes)
                let p1 = interpolate4(Int(o[1]), top: top[1], bottom: bottom[1], src: src, rowBytes: rowBytes)
                let p2 = interpolate4(Int(o[2]), top: top[2], bottom: bottom[2], src: src, rowBytes: rowBytes)
                let p3 = interpolate4(Int(o[3]), top: top[3], bottom: bottom[3], src: src, rowBytes: rowBytes)
                let sums = SIMD16<Int32>(lowHalf: SIMD8(lowHalf: p0, highHalf: p1), highHalf: SIMD8(lowHalf: p2, highHalf: p3))
                let bytes = SIMD16<UInt8>(truncatingIfNeeded: (sums &+ 0x2000) &>> 14)
                UnsafeMutableRawPointer(out + i &* 4).storeBytes(of: bytes, as: SIMD16<UInt8>.self)
            } else {
                sampleGroupChecked(i, count: count, chunk: chunk, channels: 4, src: src, width: width, height: height,
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
            sample4Span(count: count, chunk: chunk, src: src, width: width, height: height, rowBytes: rowBytes, out: out)
        default:
            for i in 0..<count {
                sampleChecked(chunk.xs[i], chunk.ys[i], channels: channels, src: src, width: width, height: height,
                              rowBytes: rowBytes, out: out + i &* channels)
            }
        }
    }
}
