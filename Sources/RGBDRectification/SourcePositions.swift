/// Single-precision evaluation of a `LensDistortion` for every pixel of a row: where
/// rectified pixel `(x, y)` (integer pixel indices) lies in the distorted image.
///
/// Same formula as `LensDistortion.apply(to:)`, in `Float` as Apple's reference
/// implementation computes it, with the table's per-segment slopes precomputed.
package struct SourcePositions: Sendable {
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
    /// Whether every pixel's displacement `q − p` lies within ±8000 px (true of any real
    /// lens), so that the fixed-point kernels need not check it.
    let bounded: Bool

    /// Prepares the evaluation of `distortion`.
    package init(_ distortion: LensDistortion) {
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
        // |q − p| = |p − c|·|mag|, mag stays within the table's range, and |p − c| is at
        // most r_max (plus the few pixels past the right edge the kernels compute).
        let low = Double(distortion.table.min() ?? 0), high = Double(distortion.table.max() ?? 0)
        let reach = (distortion.maxRadius + 4) * max(abs(low), abs(high))
        bounded = reach < 8000 && distortion.center.x.isFinite && distortion.center.y.isFinite  // false for NaN
    }

    /// `1 + mag` for a squared radius, reading the table through the given pointers.
    @inline(__always)
    func scale(radiusSquared r2: Float, table: UnsafePointer<Float>, slopes: UnsafePointer<Float>) -> Float {
        1 + magnification(radiusSquared: r2, table: table, slopes: slopes)
    }

    /// `mag` for a squared radius: the table interpolated at `r·(n − 1)/r_max`, its
    /// last entry at and beyond `r_max`.
    @inline(__always)
    func magnification(radiusSquared r2: Float, table: UnsafePointer<Float>, slopes: UnsafePointer<Float>) -> Float {
        let t = r2.squareRoot() * indexPerPixel
        if t < lastIndex {
            let i = Int(t)
            let f = t - Float(i)
            return table[i] + f * slopes[i]
        }
        return table[Int(lastIndex)]
    }

    /// The source position of rectified pixel `(x, y)`.
    package func position(x: Int, y: Int) -> SIMD2<Float> {
        withTables { table, slopes in
            let dx = Float(x) - cx, dy = Float(y) - cy
            let k = scale(radiusSquared: dx * dx + dy * dy, table: table, slopes: slopes)
            return SIMD2(cx + dx * k, cy + dy * k)
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

    /// The fixed-point source position of rectified pixel `(x, y)`, one pixel at a time:
    /// `256·p + round(256·(q − p))` (to nearest, ties to even) with the displacement
    /// `q − p = (p − c)·mag` computed in `Float`. The reference the vectorized
    /// `fixedPointSpan` must equal bit for bit.
    ///
    /// Working with the displacement (a few pixels to a few hundred) rather than the
    /// position keeps full precision and the fixed-point range whatever the image size.
    /// A displacement beyond ±8192 px (an absurd lens) or NaN gives a position far
    /// outside every image (`outside`).
    func fixedPoint(x: Int, y: Int) -> SIMD2<Int32> {
        withTables { table, slopes in
            let dx = Float(x) - cx, dy = Float(y) - cy
            let m256 = magnification(radiusSquared: dx * dx + dy * dy, table: table, slopes: slopes) * 256
            let ux = dx * m256, uy = dy * m256
            let limit: Float = 8192 * 256
            guard abs(ux) <= limit, abs(uy) <= limit else { return SIMD2(repeating: Self.outside) }
            return SIMD2(Int32(truncatingIfNeeded: x &* 256) &+ Int32(ux.rounded(.toNearestOrEven)),
                         Int32(truncatingIfNeeded: y &* 256) &+ Int32(uy.rounded(.toNearestOrEven)))
        }
    }

    /// The fixed-point position given to pixels whose displacement is out of range: far
    /// outside any image, and far from overflowing when neighbors are added.
    static let outside: Int32 = -(1 << 30)

    /// Fixed-point source positions of pixels `x0 ..< x0 + count` of row `y`, planar
    /// (`x` into `xs`, `y` into `ys`), four at a time: the buffers must hold `count`
    /// rounded up to a multiple of 4 (the last group is computed whole).
    ///
    /// The same arithmetic as `fixedPoint(x:y:)` lane by lane, bit for bit: `x − c.x`
    /// comes from the exact integer `x`; the table and slopes are scaled by 256, and
    /// scaling by a power of two commutes with rounding, so `256·mag` and `d·(256·mag)`
    /// round exactly as the reference's products do. Four neighbors almost always share a
    /// table segment, so the segment of the previous group is tried first (a range check
    /// on the fractions) and the per-lane lookup runs only where the segment changes.
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
                               xs: xs, ys: ys, checked: false)
            } else {
                fixedPointSpan(y: y, from: x0, count: count, table: table, slopes: table + tables.count / 2,
                               xs: xs, ys: ys, checked: true)
            }
        }
    }

    /// `fixedPointSpan` with 256-scaled tables; with `checked`, displacements beyond
    /// ±8192 px (or NaN) give `outside`; without, they must be known to be in range
    /// (`bounded`).
    @inline(__always)
    func fixedPointSpan(y: Int, from x0: Int, count: Int, table: UnsafePointer<Float>, slopes: UnsafePointer<Float>,
                        xs: UnsafeMutablePointer<Int32>, ys: UnsafeMutablePointer<Int32>, checked: Bool) {
        let dy = SIMD4<Float>(repeating: Float(y) - cy)
        let dy2 = dy * dy
        let c = SIMD4<Float>(repeating: cx)
        let last = SIMD4<Float>(repeating: lastIndex)
        let zero = SIMD4<Float>(), one = SIMD4<Float>(repeating: 1)
        let yFixed = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: y &* 256))
        var xFixed = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: x0 &* 256)) &+ SIMD4(0, 256, 512, 768)
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
                store(dx: dx, dy: dy, m256: base + f * slope, xFixed: xFixed, yFixed: yFixed, checked: checked,
                      xs: xs + i, ys: ys + i)
                // The next group most likely lies in the last lane's segment.
                segment = SIMD4(repeating: whole[3])
                base = SIMD4(repeating: base[3])
                slope = SIMD4(repeating: slope[3])
            } else {
                store(dx: dx, dy: dy, m256: base + f * slope, xFixed: xFixed, yFixed: yFixed, checked: checked,
                      xs: xs + i, ys: ys + i)
            }
            x += 4
            xFixed &+= 1024
            i &+= 4
        }
    }

    /// Stores `256·p + round(d·256·mag)` for four pixels.
    @inline(__always)
    func store(dx: SIMD4<Float>, dy: SIMD4<Float>, m256: SIMD4<Float>, xFixed: SIMD4<Int32>, yFixed: SIMD4<Int32>,
               checked: Bool, xs: UnsafeMutablePointer<Int32>, ys: UnsafeMutablePointer<Int32>) {
        let ux = dx * m256, uy = dy * m256
        var px = xFixed &+ Self.roundToInt32(ux), py = yFixed &+ Self.roundToInt32(uy)
        if checked {
            let limit = SIMD4<Float>(repeating: 8192 * 256)
            // |u| ≤ limit, NaN excluded.
            let inRange = (ux .<= limit) .& (ux .>= -limit) .& (uy .<= limit) .& (uy .>= -limit)
            let outside = SIMD4<Int32>(repeating: Self.outside)
            px = px.replacing(with: outside, where: .!inRange)
            py = py.replacing(with: outside, where: .!inRange)
        }
        UnsafeMutableRawPointer(xs).storeBytes(of: px, as: SIMD4<Int32>.self)
        UnsafeMutableRawPointer(ys).storeBytes(of: py, as: SIMD4<Int32>.self)
    }
}
