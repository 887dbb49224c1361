/// Bilinear resampling of 8-bit images at source positions given in 1/256 pixel, one
/// output row at a time (OpenCV `remap` vocabulary: a backward map, bilinear
/// interpolation, constant black border, never in place).
///
/// A position `(sx, sy)` in fixed point `(X, Y) = round(256·(sx, sy))` has integer part
/// `(X >> 8, Y >> 8)` and weights `(X & 255)/256`, `(Y & 255)/256`. Each output sample is
/// `(Σ w·s + 2¹⁵) >> 16` with the four weights `w` summing to 65536, so results are
/// exact integers independent of the order of evaluation. Neighbors outside the
/// source count as black.
enum ColorRemap {
    /// Samples an RGB image (3 channels) at fixed-point `(X, Y)` into `out[0...2]`.
    ///
    /// The fast path reads each neighbor with one unaligned 4-byte load (the fourth byte
    /// is the next pixel's and is masked away), so it is taken only where that byte
    /// exists: `x0 + 1 < width − 1`.
    @inline(__always)
    static func sampleRGB(_ X: Int, _ Y: Int, src: UnsafeRawPointer, width: Int, height: Int,
                          out: UnsafeMutablePointer<UInt8>) {
        let x0 = X >> 8, y0 = Y >> 8
        let fx = UInt64(truncatingIfNeeded: X & 255), fy = UInt64(truncatingIfNeeded: Y & 255)
        let w00 = (256 &- fx) &* (256 &- fy), w10 = fx &* (256 &- fy)
        let w01 = (256 &- fx) &* fy, w11 = fx &* fy
        if x0 >= 0 && y0 >= 0 && x0 < width &- 2 && y0 < height &- 1 {
            let rowBytes = width &* 3
            let o = y0 &* rowBytes &+ x0 &* 3
            let p00 = UInt64(src.loadUnaligned(fromByteOffset: o, as: UInt32.self).littleEndian)
            let p10 = UInt64(src.loadUnaligned(fromByteOffset: o &+ 3, as: UInt32.self).littleEndian)
            let p01 = UInt64(src.loadUnaligned(fromByteOffset: o &+ rowBytes, as: UInt32.self).littleEndian)
            let p11 = UInt64(src.loadUnaligned(fromByteOffset: o &+ rowBytes &+ 3, as: UInt32.self).littleEndian)
            // Red in bits 0..<32 and blue in bits 32..<64; green alone. Each lane holds at
            // most 255·65536 + 2¹⁵ < 2²⁴, so lanes never carry into each other.
            let rb00 = (p00 & 0xFF) | ((p00 & 0xFF_0000) << 16), g00 = (p00 >> 8) & 0xFF
            let rb10 = (p10 & 0xFF) | ((p10 & 0xFF_0000) << 16), g10 = (p10 >> 8) & 0xFF
            let rb01 = (p01 & 0xFF) | ((p01 & 0xFF_0000) << 16), g01 = (p01 >> 8) & 0xFF
            let rb11 = (p11 & 0xFF) | ((p11 & 0xFF_0000) << 16), g11 = (p11 >> 8) & 0xFF
            let accRB = rb00 &* w00 &+ rb10 &* w10 &+ rb01 &* w01 &+ rb11 &* w11 &+ 0x8000_0000_8000
            let accG = g00 &* w00 &+ g10 &* w10 &+ g01 &* w01 &+ g11 &* w11 &+ 0x8000
            out[0] = UInt8(truncatingIfNeeded: accRB >> 16)
            out[1] = UInt8(truncatingIfNeeded: accG >> 16)
            out[2] = UInt8(truncatingIfNeeded: accRB >> 48)
            return
        }
        sampleChecked(x0, y0, weights: (w00, w10, w01, w11), channels: 3, src: src.assumingMemoryBound(to: UInt8.self),
                      width: width, height: height, out: out)
    }

    /// Samples any number of channels at fixed-point `(X, Y)`, checking every neighbor.
    @inline(__always)
    static func sample(_ X: Int, _ Y: Int, channels: Int, src: UnsafePointer<UInt8>, width: Int, height: Int,
                       out: UnsafeMutablePointer<UInt8>) {
        let x0 = X >> 8, y0 = Y >> 8
        let fx = UInt64(X & 255), fy = UInt64(Y & 255)
        sampleChecked(x0, y0, weights: ((256 - fx) * (256 - fy), fx * (256 - fy), (256 - fx) * fy, fx * fy),
                      channels: channels, src: src, width: width, height: height, out: out)
    }

    @inline(__always)
    static func sampleChecked(_ x0: Int, _ y0: Int, weights: (UInt64, UInt64, UInt64, UInt64), channels: Int,
                              src: UnsafePointer<UInt8>, width: Int, height: Int, out: UnsafeMutablePointer<UInt8>) {
        let inX0 = x0 >= 0 && x0 < width, inX1 = x0 + 1 >= 0 && x0 + 1 < width
        let inY0 = y0 >= 0 && y0 < height, inY1 = y0 + 1 >= 0 && y0 + 1 < height
        for c in 0..<channels {
            var acc: UInt64 = 0x8000
            if inY0 && inX0 { acc &+= UInt64(src[(y0 * width + x0) * channels + c]) &* weights.0 }
            if inY0 && inX1 { acc &+= UInt64(src[(y0 * width + x0 + 1) * channels + c]) &* weights.1 }
            if inY1 && inX0 { acc &+= UInt64(src[((y0 + 1) * width + x0) * channels + c]) &* weights.2 }
            if inY1 && inX1 { acc &+= UInt64(src[((y0 + 1) * width + x0 + 1) * channels + c]) &* weights.3 }
            out[c] = UInt8(truncatingIfNeeded: acc >> 16)
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
            for x in 0..<width {
                sampleRGB(Int(positions[2 &* x]), Int(positions[2 &* x &+ 1]), src: raw, width: width, height: height,
                          out: row + x &* 3)
            }
        } else {
            for x in 0..<width {
                sample(Int(positions[2 &* x]), Int(positions[2 &* x &+ 1]), channels: channels, src: src, width: width,
                       height: height, out: row + x &* channels)
            }
        }
    }
}
