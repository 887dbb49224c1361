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
                body(t.baseAddress.unsafelyUnwrapped, s.baseAddress.unsafelyUnwrapped)
            }
        }
    }
}
