/// Single-precision evaluation of a `LensDistortion` for every pixel of a row: where
/// rectified pixel `(x, y)` (integer pixel indices) lies in the distorted image.
///
/// Same formula as `LensDistortion.apply(to:)`, in `Float` as Apple's reference
/// implementation computes it, with the table's per-segment slopes precomputed.
public struct SourcePositions: Sendable {
    let cx: Float
    let cy: Float
    /// `(n − 1) / r_max`: table index per pixel of radius.
    let indexPerPixel: Float
    /// `Float(n − 1)`: radii at or beyond r_max use the last entry.
    let lastIndex: Float
    let table: [Float]
    let slopes: [Float]

    /// Prepares the evaluation of `distortion`.
    public init(_ distortion: LensDistortion) {
        cx = Float(distortion.center.x)
        cy = Float(distortion.center.y)
        let n = distortion.table.count
        indexPerPixel = distortion.maxRadius > 0 ? Float(Double(n - 1) / distortion.maxRadius) : 0
        lastIndex = Float(n - 1)
        table = distortion.table
        // slopes[n − 1] = 0, so index n − 1 (radii at or beyond r_max) gives the last entry.
        var slopes = [Float](repeating: 0, count: n)
        for i in 0..<(n - 1) { slopes[i] = distortion.table[i + 1] - distortion.table[i] }
        self.slopes = slopes
    }

    /// `1 + mag` for a squared radius, reading the table through the given pointers.
    @inline(__always)
    func scale(radiusSquared r2: Float, table: UnsafePointer<Float>, slopes: UnsafePointer<Float>) -> Float {
        let t = r2.squareRoot() * indexPerPixel
        if t < lastIndex {
            let i = Int(t)
            let f = t - Float(i)
            return 1 + (table[i] + f * slopes[i])
        }
        return 1 + table[Int(lastIndex)]
    }

    /// The source position of rectified pixel `(x, y)`.
    public func position(x: Int, y: Int) -> SIMD2<Float> {
        table.withUnsafeBufferPointer { t in
            slopes.withUnsafeBufferPointer { s in
                guard let tb = t.baseAddress, let sb = s.baseAddress else { return .zero }
                let dx = Float(x) - cx, dy = Float(y) - cy
                let k = scale(radiusSquared: dx * dx + dy * dy, table: tb, slopes: sb)
                return SIMD2(cx + dx * k, cy + dy * k)
            }
        }
    }

    /// Calls `body` with pointers to the table and slopes (for kernels' inner loops).
    @inline(__always)
    func withTables<R>(_ body: (UnsafePointer<Float>, UnsafePointer<Float>) -> R) -> R {
        table.withUnsafeBufferPointer { t in
            slopes.withUnsafeBufferPointer { s in
                // Both arrays hold at least two entries (LensDistortion's precondition).
                guard let tb = t.baseAddress, let sb = s.baseAddress else { preconditionFailure("empty lookup table") }
                return body(tb, sb)
            }
        }
    }
}

extension SourcePositions {
    /// `floor(v)` of non-negative values below 2²², lane by lane, without a conversion
    /// instruction: adding 2²³ leaves `round(v)` in the low mantissa bits; one is taken
    /// off where that rounded up.
    @inline(__always)
    static func floorNonNegative(_ v: SIMD8<Float>) -> (floor: SIMD8<Float>, int: SIMD8<Int32>) {
        let magic = SIMD8<Float>(repeating: 8_388_608)  // 2²³
        let biased = v + magic
        var rounded = biased - magic
        let over = rounded .> v
        rounded = rounded.replacing(with: rounded - 1, where: over)
        let bits = unsafeBitCast(rounded + magic, to: SIMD8<Int32>.self) & 0x7F_FFFF
        return (rounded, bits)
    }

    /// `floor(v)` for |v| < 2²¹ (signed), lane by lane (same trick with 1.5·2²³).
    @inline(__always)
    static func floorSigned(_ v: SIMD8<Float>) -> SIMD8<Int32> {
        let magic = SIMD8<Float>(repeating: 12_582_912)  // 1.5·2²³
        var rounded = (v + magic) - magic
        rounded = rounded.replacing(with: rounded - 1, where: rounded .> v)
        return unsafeBitCast(rounded + magic, to: SIMD8<Int32>.self) &- 0x4B40_0000
    }

    /// Fixed-point source positions of a whole row, `x, y` interleaved, into
    /// `out[0 ..< 2·width]` (the layout of `RectificationMap`).
    @inline(__always)
    func fixedPointRow(_ y: Int, width: Int, table: UnsafePointer<Float>, slopes: UnsafePointer<Float>,
                       into out: UnsafeMutablePointer<Int32>) {
        let dy = Float(y) - cy
        var x0 = 0
        while x0 < width {
            let (xs, ys) = fixedPoint8(x0: x0, dy: dy, table: table, slopes: slopes)
            if x0 + 8 <= width {
                // Interleave with two shuffles and store 16 values at once.
                let a = SIMD8(xs[0], ys[0], xs[1], ys[1], xs[2], ys[2], xs[3], ys[3])
                let b = SIMD8(xs[4], ys[4], xs[5], ys[5], xs[6], ys[6], xs[7], ys[7])
                UnsafeMutableRawPointer(out + 2 * x0).storeBytes(of: a, as: SIMD8<Int32>.self)
                UnsafeMutableRawPointer(out + 2 * x0 + 8).storeBytes(of: b, as: SIMD8<Int32>.self)
            } else {
                for lane in 0..<(width - x0) {
                    out[2 * (x0 + lane)] = xs[lane]
                    out[2 * (x0 + lane) + 1] = ys[lane]
                }
            }
            x0 += 8
        }
    }

    /// Fixed-point source positions `floor(256·q + 0.5)` of rectified pixels
    /// `(x, y)`, `x` in `x0 ..< x0 + 8`, eight at a time.
    ///
    /// Same arithmetic as `scale(radiusSquared:table:slopes:)` lane by lane: the table
    /// index is clamped to `n − 1`, where the appended zero slope gives the last entry
    /// exactly. Positions are clamped to ±8192 px first (far outside any image).
    @inline(__always)
    func fixedPoint8(x0: Int, dy: Float, table: UnsafePointer<Float>, slopes: UnsafePointer<Float>)
        -> (x: SIMD8<Int32>, y: SIMD8<Int32>) {
        let lanes = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)
        let dx = SIMD8<Float>(repeating: Float(x0) - cx) + lanes
        let dyv = SIMD8<Float>(repeating: dy)
        let r2 = dx * dx + dyv * dyv
        var t = r2.squareRoot() * indexPerPixel
        // Beyond r_max (and NaN, from absurd calibrations) use the last entry: the
        // table index must stay in range whatever the input.
        t = t.replacing(with: lastIndex, where: .!(t .<= lastIndex))
        let (whole, index) = Self.floorNonNegative(t)
        let f = t - whole
        var base: SIMD8<Float>, slope: SIMD8<Float>
        let first = index[0]
        if index == SIMD8(repeating: first) {
            // Usually all eight pixels fall in one table segment (segments are tens of
            // pixels wide): one lookup instead of eight.
            base = SIMD8(repeating: table[Int(first)])
            slope = SIMD8(repeating: slopes[Int(first)])
        } else {
            base = SIMD8()
            slope = SIMD8()
            for lane in 0..<8 {
                let i = Int(index[lane])
                base[lane] = table[i]
                slope[lane] = slopes[i]
            }
        }
        let k = 1 + (base + f * slope)
        let limit = SIMD8<Float>(repeating: 8192)
        var sx = SIMD8<Float>(repeating: cx) + dx * k
        var sy = SIMD8<Float>(repeating: cy) + dyv * k
        // NaN positions become -limit: outside every image, so black / no depth.
        sx = sx.replacing(with: limit, where: sx .> limit).replacing(with: -limit, where: .!(sx .>= -limit))
        sy = sy.replacing(with: limit, where: sy .> limit).replacing(with: -limit, where: .!(sy .>= -limit))
        return (Self.floorSigned(sx * 256 + 0.5), Self.floorSigned(sy * 256 + 0.5))
    }
}
