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
    /// `256·table` then `256·slopes` (exact scalings): the fixed-point kernels' table.
    let scaledTables: [Float]
    /// Whether every source position of the image (and of the few pixels past its right
    /// edge that the kernels compute in passing) lies within ±8000 px, so that the
    /// fixed-point kernels need not clamp.
    let bounded: Bool

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
        scaledTables = (distortion.table + slopes).map { $0 * 256 }
        // |q − c| = |p − c|·|1 + mag| and mag stays within the table's range.
        let low = Double(distortion.table.min() ?? 0), high = Double(distortion.table.max() ?? 0)
        let gain = max(abs(1 + low), abs(1 + high))
        let c = distortion.center
        let reachX = abs(c.x) + max(abs(c.x), abs(Double(distortion.width + 4) - c.x)) * gain
        let reachY = abs(c.y) + max(abs(c.y), abs(Double(distortion.height) - c.y)) * gain
        bounded = reachX < 8000 && reachY < 8000  // false for NaN
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
    static func floorNonNegative(_ v: SIMD4<Float>) -> (floor: SIMD4<Float>, int: SIMD4<Int32>) {
        let magic = SIMD4<Float>(repeating: 8_388_608)  // 2²³
        var rounded = (v + magic) - magic
        rounded = rounded.replacing(with: rounded - 1, where: rounded .> v)
        let bits = unsafeBitCast(rounded + magic, to: SIMD4<Int32>.self) & 0x7F_FFFF
        return (rounded, bits)
    }

    /// `v` rounded to the nearest integer (ties to even) for |v| ≤ 2²², lane by lane:
    /// adding 1.5·2²³ leaves the rounded value in the low mantissa bits.
    @inline(__always)
    static func roundToInt32(_ v: SIMD4<Float>) -> SIMD4<Int32> {
        unsafeBitCast(v + 12_582_912, to: SIMD4<Int32>.self) &- 0x4B40_0000
    }

    /// The fixed-point source position `round(256·q)` (to nearest, ties to even) of
    /// rectified pixel `(x, y)`, one pixel at a time: the reference the vectorized
    /// `fixedPointSpan` must equal bit for bit.
    func fixedPoint(x: Int, y: Int) -> SIMD2<Int32> {
        withTables { table, slopes in
            let dx = Float(x) - cx, dy = Float(y) - cy
            let k256 = scale(radiusSquared: dx * dx + dy * dy, table: table, slopes: slopes) * 256
            let limit: Float = 8192 * 256
            func fixed(_ v: Float) -> Int32 {
                Int32((v > limit ? limit : (v >= -limit ? v : -limit)).rounded(.toNearestOrEven))
            }
            return SIMD2(fixed(cx * 256 + dx * k256), fixed(cy * 256 + dy * k256))
        }
    }

    /// Fixed-point source positions `round(256·q)` of pixels `x0 ..< x0 + count` of row
    /// `y`, planar (`x` into `xs`, `y` into `ys`), four at a time: the buffers must hold
    /// `count` rounded up to a multiple of 4 (the last group is computed whole).
    ///
    /// The same arithmetic as `fixedPoint(x:y:)` lane by lane, bit for bit: `x − c.x`
    /// comes from the exact integer `x`; the table and slopes are scaled by 256, and
    /// scaling by a power of two commutes with rounding, so `1 + mag` times 256 and
    /// `256·c + dx·(256·k)` round exactly as the reference's products do. Four
    /// neighbors almost always share a table segment, so the segment of the previous
    /// group is tried first (a range check on the fractions) and the per-lane lookup
    /// runs only where the segment changes.
    ///
    /// Out of line on purpose: compiled on its own, every SIMD operation in it is
    /// specialized into a few instructions; inlined into a large loop, the optimizer may
    /// leave generic SIMD operations as calls.
    @inline(never)
    func fixedPointSpan(y: Int, from x0: Int, count: Int, xs: UnsafeMutablePointer<Int32>, ys: UnsafeMutablePointer<Int32>) {
        scaledTables.withUnsafeBufferPointer { tables in
            guard let table = tables.baseAddress else { return }
            if bounded {
                fixedPointSpan(y: y, from: x0, count: count, table: table, slopes: table + tables.count / 2,
                               xs: xs, ys: ys, clamp: false)
            } else {
                fixedPointSpan(y: y, from: x0, count: count, table: table, slopes: table + tables.count / 2,
                               xs: xs, ys: ys, clamp: true)
            }
        }
    }

    /// `fixedPointSpan` with 256-scaled tables; with `clamp`, positions are clamped to
    /// ±8192 px (far outside any image; NaN, from absurd calibrations, becomes −8192),
    /// without, they must be known to lie within (`bounded`).
    @inline(__always)
    func fixedPointSpan(y: Int, from x0: Int, count: Int, table: UnsafePointer<Float>, slopes: UnsafePointer<Float>,
                        xs: UnsafeMutablePointer<Int32>, ys: UnsafeMutablePointer<Int32>, clamp: Bool) {
        let dy = SIMD4<Float>(repeating: Float(y) - cy)
        let dy2 = dy * dy
        let c = SIMD4<Float>(repeating: cx)
        let cx256 = SIMD4<Float>(repeating: cx * 256), cy256 = SIMD4<Float>(repeating: cy * 256)
        let last = SIMD4<Float>(repeating: lastIndex)
        let zero = SIMD4<Float>(), one = SIMD4<Float>(repeating: 1)
        let limit = SIMD4<Float>(repeating: 8192 * 256)
        var x = SIMD4<Float>(repeating: Float(x0)) + SIMD4<Float>(0, 1, 2, 3)  // exact integers
        // The current segment: its index, first entry and slope.
        var segment = SIMD4<Float>(repeating: -1)
        var base = SIMD4<Float>(), slope = SIMD4<Float>()
        var i = 0
        while i < count {
            let dx = x - c
            var t = (dx * dx + dy2).squareRoot() * indexPerPixel
            t = t.replacing(with: last, where: .!(t .<= last))
            var f = t - segment
            if !all((f .>= zero) .& (f .< one)) {
                // Another segment for at least one lane: look each lane up.
                let (whole, index) = Self.floorNonNegative(t)
                f = t - whole
                base = SIMD4(table[Int(index[0])], table[Int(index[1])], table[Int(index[2])], table[Int(index[3])])
                slope = SIMD4(slopes[Int(index[0])], slopes[Int(index[1])], slopes[Int(index[2])], slopes[Int(index[3])])
                let k256 = 256 + (base + f * slope)
                store(dx: dx, dy: dy, k256: k256, cx256: cx256, cy256: cy256, limit: limit, clamp: clamp, xs: xs + i, ys: ys + i)
                // The next group most likely lies in the last lane's segment.
                segment = SIMD4(repeating: whole[3])
                base = SIMD4(repeating: base[3])
                slope = SIMD4(repeating: slope[3])
            } else {
                let k256 = 256 + (base + f * slope)
                store(dx: dx, dy: dy, k256: k256, cx256: cx256, cy256: cy256, limit: limit, clamp: clamp, xs: xs + i, ys: ys + i)
            }
            x += 4
            i &+= 4
        }
    }

    /// Stores `round(256·c + d·k256)` for four pixels.
    @inline(__always)
    func store(dx: SIMD4<Float>, dy: SIMD4<Float>, k256: SIMD4<Float>, cx256: SIMD4<Float>, cy256: SIMD4<Float>,
               limit: SIMD4<Float>, clamp: Bool, xs: UnsafeMutablePointer<Int32>, ys: UnsafeMutablePointer<Int32>) {
        var sx = cx256 + dx * k256, sy = cy256 + dy * k256
        if clamp {
            sx = sx.replacing(with: limit, where: sx .> limit).replacing(with: -limit, where: .!(sx .>= -limit))
            sy = sy.replacing(with: limit, where: sy .> limit).replacing(with: -limit, where: .!(sy .>= -limit))
        }
        UnsafeMutableRawPointer(xs).storeBytes(of: Self.roundToInt32(sx), as: SIMD4<Int32>.self)
        UnsafeMutableRawPointer(ys).storeBytes(of: Self.roundToInt32(sy), as: SIMD4<Int32>.self)
    }
}
