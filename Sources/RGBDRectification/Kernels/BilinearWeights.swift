/// The bilinear weights of the 8-bit kernels (`ColorRemap`, `FrameRemap`), written once.
///
/// A fixed-point coordinate `v` (1/256 pixel) has the 1/128-pixel fraction
/// `f = ((v & 255) + 1) >> 1` (0…128); a position's four weights are `(128 − fx, fx)`
/// times `128 − fy` (its top row of neighbors) and `fy` (its bottom row), and sum to
/// 16384. The vector paths keep each row's two weights as a pair of 16-bit lanes,
/// `w00 | w10 << 16` and `w01 | w11 << 16`, the form `pmaddwd` multiplies.
///
/// Everything here is `@inline(__always)`: the helpers run in the kernels' inner loops,
/// where, inlined, they are the same instructions as the copies they replaced (callgrind
/// totals of the rectify and frame stages unchanged).
enum BilinearWeights {
    /// The 1/128-pixel fraction of a fixed-point coordinate.
    @inline(__always)
    static func fraction(_ v: Int) -> Int { ((v & 255) &+ 1) >> 1 }

    /// The 1/128-pixel fractions of four fixed-point coordinates.
    @inline(__always)
    static func fraction(_ v: SIMD4<Int32>) -> SIMD4<Int32> { ((v & 255) &+ 1) &>> 1 }

    /// The 1/128-pixel fractions of eight fixed-point coordinates in 16-bit lanes.
    @inline(__always)
    static func fraction(_ v: SIMD8<Int16>) -> SIMD8<Int16> { ((v & 255) &+ 1) &>> 1 }

    /// The four weights of fractions `(fx, fy)`: `(w00, w10, w01, w11)`, summing to 16384.
    @inline(__always)
    static func weights(fx: Int, fy: Int) -> (Int, Int, Int, Int) {
        ((128 &- fx) &* (128 &- fy), fx &* (128 &- fy), (128 &- fx) &* fy, fx &* fy)
    }

    /// The 1-D weight pairs `(128 − f, f)` of four fractions, as two 16-bit lanes of
    /// each 32-bit lane.
    @inline(__always)
    static func pairs(_ f: SIMD4<Int32>) -> SIMD4<Int32> { (128 &- f) | (f &<< 16) }

    /// The weights of four positions of fractions `(fx, fy)` as 16-bit pairs per row:
    /// `top` = `(w00, w10)`, `bottom` = `(w01, w11)`.
    @inline(__always)
    static func rowPairs(fx: SIMD4<Int32>, fy: SIMD4<Int32>) -> (top: SIMD8<Int16>, bottom: SIMD8<Int16>) {
        let horizontal = unsafeBitCast(pairs(fx), to: SIMD8<Int16>.self)
        let gy = 128 &- fy
        return (horizontal &* unsafeBitCast(gy | (gy &<< 16), to: SIMD8<Int16>.self),
                horizontal &* unsafeBitCast(fy | (fy &<< 16), to: SIMD8<Int16>.self))
    }

    /// Offsets, weights and "fast" flags of the positions `0 ..< count` of `chunk` (`xs`,
    /// `ys`), four at a time: the byte offset `y0·rowBytes + byteOffset(x0)` of each
    /// neighborhood, its `rowPairs` (into `top`, `bottom`), and per group of four whether
    /// the group is whole and all four neighborhoods are inside (`0 ≤ x0 < width −
    /// margin`, `0 ≤ y0 < height − 1`), where the vector paths' loads stay in the rows.
    /// The body of `ColorRemap.prepareRGB` and `FrameRemap.preparePairs`.
    @inline(__always)
    static func prepare(count: Int, chunk: PositionChunk, width: Int, height: Int, rowBytes: Int, margin: Int,
                        byteOffset: (SIMD4<Int32>) -> SIMD4<Int32>) {
        // Unsigned comparisons test 0 ≤ v < limit at once.
        let limitX = SIMD4<UInt32>(repeating: UInt32(truncatingIfNeeded: max(0, width &- margin)))
        let limitY = SIMD4<UInt32>(repeating: UInt32(truncatingIfNeeded: max(0, height &- 1)))
        let stride = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: rowBytes))
        var i = 0
        while i < count {
            let X = UnsafeRawPointer(chunk.xs + i).loadUnaligned(as: SIMD4<Int32>.self)
            let Y = UnsafeRawPointer(chunk.ys + i).loadUnaligned(as: SIMD4<Int32>.self)
            let x0 = X &>> 8, y0 = Y &>> 8
            let inside = (unsafeBitCast(x0, to: SIMD4<UInt32>.self) .< limitX) .& (unsafeBitCast(y0, to: SIMD4<UInt32>.self) .< limitY)
            chunk.fast[i &>> 2] = i &+ 4 <= count && all(inside) ? 1 : 0
            let (top, bottom) = rowPairs(fx: fraction(X), fy: fraction(Y))
            UnsafeMutableRawPointer(chunk.top + i).storeBytes(of: top, as: SIMD8<Int16>.self)
            UnsafeMutableRawPointer(chunk.bottom + i).storeBytes(of: bottom, as: SIMD8<Int16>.self)
            UnsafeMutableRawPointer(chunk.offsets + i).storeBytes(of: y0 &* stride &+ byteOffset(x0), as: SIMD4<Int32>.self)
            i &+= 4
        }
    }
}
