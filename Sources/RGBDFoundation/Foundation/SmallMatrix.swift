/// The small dense linear algebra the library's estimators share (tag poses and their
/// registration, pose tracking and the pose graph, the trajectory metrics of the
/// generator): matrices are row-major `[Double]` of a few to a few hundred rows.
package enum SmallMatrix {
    /// Eigenvalues (ascending) and unit eigenvectors (`vectors[k]` belongs to `values[k]`)
    /// of a symmetric `n × n` matrix, by cyclic Jacobi rotations: exact to rounding for
    /// the small matrices here, whatever their conditioning.
    package static func symmetricEigen(_ matrix: [Double], n: Int) -> (values: [Double], vectors: [[Double]]) {
        precondition(matrix.count == n * n, "symmetricEigen: \(matrix.count) entries for \(n) × \(n)")
        var a = matrix
        var v = [Double](repeating: 0, count: n * n)
        for i in 0..<n { v[i * n + i] = 1 }
        var scale = 0.0
        for x in a { scale = max(scale, abs(x)) }
        for _ in 0..<60 {
            var off = 0.0
            for p in 0..<n { for q in (p + 1)..<n { off += a[p * n + q] * a[p * n + q] } }
            // Off the diagonal below rounding of the largest entry: done.
            if off == 0 || off <= 1e-30 * scale * scale { break }
            for p in 0..<n {
                for q in (p + 1)..<n where a[p * n + q] != 0 {
                    let theta = (a[q * n + q] - a[p * n + p]) / (2 * a[p * n + q])
                    let t = (theta >= 0 ? 1.0 : -1.0) / (abs(theta) + (theta * theta + 1).squareRoot())
                    let c = 1 / (t * t + 1).squareRoot(), s = t * c
                    for k in 0..<n {
                        let akp = a[k * n + p], akq = a[k * n + q]
                        a[k * n + p] = c * akp - s * akq
                        a[k * n + q] = s * akp + c * akq
                    }
                    for k in 0..<n {
                        let apk = a[p * n + k], aqk = a[q * n + k]
                        a[p * n + k] = c * apk - s * aqk
                        a[q * n + k] = s * apk + c * aqk
                    }
                    for k in 0..<n {
                        let vkp = v[k * n + p], vkq = v[k * n + q]
                        v[k * n + p] = c * vkp - s * vkq
                        v[k * n + q] = s * vkp + c * vkq
                    }
                }
            }
        }
        let order = (0..<n).sorted { a[$0 * n + $0] < a[$1 * n + $1] }
        return (order.map { a[$0 * n + $0] }, order.map { j in (0..<n).map { v[$0 * n + j] } })
    }

    /// Solves `A·x = b` (`A` row-major `n × n`, `n` = `b.count`) by Gaussian elimination
    /// with partial pivoting; nil when `A` is singular or the solution not finite.
    package static func solve(_ matrix: [Double], _ rhs: [Double]) -> [Double]? {
        let n = rhs.count
        var a = matrix, b = rhs
        for col in 0..<n {
            var pivot = col
            for r in (col + 1)..<max(col + 1, n) where abs(a[r * n + col]) > abs(a[pivot * n + col]) { pivot = r }
            guard abs(a[pivot * n + col]) > 1e-300 else { return nil }
            if pivot != col {
                for k in 0..<n { a.swapAt(col * n + k, pivot * n + k) }
                b.swapAt(col, pivot)
            }
            for r in (col + 1)..<max(col + 1, n) {
                let f = a[r * n + col] / a[col * n + col]
                if f == 0 { continue }
                for k in col..<n { a[r * n + k] -= f * a[col * n + k] }
                b[r] -= f * b[col]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for r in stride(from: n - 1, through: 0, by: -1) {
            var s = b[r]
            for k in (r + 1)..<max(r + 1, n) { s -= a[r * n + k] * x[k] }
            x[r] = s / a[r * n + r]
        }
        return x.allSatisfy(\.isFinite) ? x : nil
    }

    /// Solves `A·x = b` for a symmetric positive definite `A` (`n × n`, `n` = `b.count`)
    /// by Cholesky: half the work of `solve`; nil when `A` is not positive definite.
    package static func solvePositiveDefinite(_ matrix: [Double], _ rhs: [Double]) -> [Double]? {
        let n = rhs.count
        var l = matrix
        for j in 0..<n {
            var d = l[j * n + j]
            for k in 0..<j { d -= l[j * n + k] * l[j * n + k] }
            guard d > 0, d.isFinite else { return nil }
            let root = d.squareRoot()
            l[j * n + j] = root
            for i in (j + 1)..<n {
                var sum = l[i * n + j]
                for k in 0..<j { sum -= l[i * n + k] * l[j * n + k] }
                l[i * n + j] = sum / root
            }
        }
        var y = rhs
        for i in 0..<n {
            var sum = y[i]
            for k in 0..<i { sum -= l[i * n + k] * y[k] }
            y[i] = sum / l[i * n + i]
        }
        var x = y
        for i in stride(from: n - 1, through: 0, by: -1) {
            var sum = x[i]
            for k in (i + 1)..<n { sum -= l[k * n + i] * x[k] }
            x[i] = sum / l[i * n + i]
        }
        return x
    }

    /// The rotation (a unit quaternion `(w, x, y, z)`) and the two centroids of the rigid
    /// motion that best maps `from` onto `to` in least squares, no scale: Horn (1987), the
    /// quaternion is the top eigenvector of a 4×4 matrix of the cross-covariance. The
    /// motion is `q ↦ R·(q − fromCentroid) + toCentroid`. Nil for fewer than 3 pairs.
    package static func rigidAlignment(from: [SIMD3<Double>], to: [SIMD3<Double>])
        -> (quaternion: SIMD4<Double>, fromCentroid: SIMD3<Double>, toCentroid: SIMD3<Double>)? {
        guard from.count == to.count, from.count >= 3 else { return nil }
        let n = Double(from.count)
        let ca = from.reduce(.zero, +) / n, cb = to.reduce(.zero, +) / n
        var s = [[Double]](repeating: [0, 0, 0], count: 3)
        for (a, b) in zip(from, to) {
            let p = a - ca, q = b - cb
            for i in 0..<3 { for j in 0..<3 { s[i][j] += p[i] * q[j] } }
        }
        let (sxx, sxy, sxz) = (s[0][0], s[0][1], s[0][2])
        let (syx, syy, syz) = (s[1][0], s[1][1], s[1][2])
        let (szx, szy, szz) = (s[2][0], s[2][1], s[2][2])
        let k: [Double] = [
            sxx + syy + szz, syz - szy, szx - sxz, sxy - syx,
            syz - szy, sxx - syy - szz, sxy + syx, szx + sxz,
            szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy,
            sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz,
        ]
        let q = symmetricEigen(k, n: 4).vectors[3]
        return (SIMD4(q[0], q[1], q[2], q[3]), ca, cb)
    }

    /// The median of `values` (the upper of the two middle values for an even count; the
    /// values that are not numbers are left out); nil when none is a number. Inlinable:
    /// specialized where it is called, the generic sort is several times slower (the
    /// frames' median depths of texturing spent a fifth of their time in it).
    @inlinable
    package static func median<T: BinaryFloatingPoint>(_ values: [T]) -> T? {
        var numbers = values.filter { !$0.isNaN }
        guard !numbers.isEmpty else { return nil }
        let middle = numbers.count / 2
        // Partial selection would do; a sort is simple and fast for the sizes here.
        numbers.sort()
        return numbers[middle]
    }
}
