#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The small linear algebra the marker code needs: symmetric eigen-decomposition, dense
/// solves, rotations as vectors, and the rigid fit of point sets. Kept here, beside its
/// only users.
enum TagMath {
    /// Eigenvalues (ascending) and unit eigenvectors of a symmetric `n × n` matrix given
    /// row-major, by cyclic Jacobi rotations.
    static func symmetricEigen(_ matrix: [Double], n: Int) -> (values: [Double], vectors: [[Double]]) {
        var a = matrix
        var v = [Double](repeating: 0, count: n * n)
        for i in 0..<n { v[i * n + i] = 1 }
        for _ in 0..<60 {
            var off = 0.0
            for p in 0..<n { for q in (p + 1)..<n { off += a[p * n + q] * a[p * n + q] } }
            if off < 1e-30 { break }
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

    /// Solves `A·x = b` (`A` row-major `n × n`) by Gaussian elimination with partial
    /// pivoting; nil when `A` is singular.
    static func solve(_ matrix: [Double], _ rhs: [Double]) -> [Double]? {
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

    /// The rotation by the vector `w` (axis × angle in radians), Rodrigues' formula, as a
    /// pose without translation.
    static func rotation(_ w: SIMD3<Double>) -> Pose {
        let angle = (w * w).sum().squareRoot()
        guard angle > 1e-15 else {
            return Pose(row0: SIMD3(1, -w.z, w.y), row1: SIMD3(w.z, 1, -w.x), row2: SIMD3(-w.y, w.x, 1), translation: .zero)
        }
        let k = w / angle, c = cos(angle), s = sin(angle), v = 1 - c
        return Pose(row0: SIMD3(c + k.x * k.x * v, k.x * k.y * v - k.z * s, k.x * k.z * v + k.y * s),
                    row1: SIMD3(k.y * k.x * v + k.z * s, c + k.y * k.y * v, k.y * k.z * v - k.x * s),
                    row2: SIMD3(k.z * k.x * v - k.y * s, k.z * k.y * v + k.x * s, c + k.z * k.z * v),
                    translation: .zero)
    }

    /// The rotation vector of a pose's rotation (inverse of `rotation(_:)`), through its quaternion.
    static func rotationVector(_ pose: Pose) -> SIMD3<Double> {
        let q = pose.quaternion
        let s = (q.x * q.x + q.y * q.y + q.z * q.z).squareRoot()
        guard s > 1e-15 else { return SIMD3(q.x, q.y, q.z) * 2 }
        let angle = 2 * atan2(s, q.w)
        return SIMD3(q.x, q.y, q.z) / s * angle
    }

    /// The angle whose sine and cosine are proportional to the arguments, radians.
    static func angle(sine: Double, cosine: Double) -> Double { atan2(sine, cosine) }

    /// The angle of the rotation between two poses' rotations, radians.
    static func angleBetween(_ a: Pose, _ b: Pose) -> Double {
        let w = rotationVector(a.inverse.composed(with: b))
        return (w * w).sum().squareRoot()
    }

    /// `pose` moved by a small step: rotation vector `w` applied on the left (in the outer
    /// frame), translation added.
    static func perturbed(_ pose: Pose, rotation w: SIMD3<Double>, translation dt: SIMD3<Double>) -> Pose {
        var p = rotation(w).composed(with: Pose(row0: pose.row0, row1: pose.row1, row2: pose.row2, translation: .zero))
        p.translation = pose.translation + dt
        return p
    }

    /// The rigid transform (rotation and translation, no scale) that best maps `model` onto
    /// `measured` in least squares (Horn's quaternion method); nil for fewer than 3 points.
    static func rigidFit(model: [SIMD3<Double>], measured: [SIMD3<Double>]) -> Pose? {
        guard model.count == measured.count, model.count >= 3 else { return nil }
        let n = Double(model.count)
        let cm = model.reduce(.zero, +) / n, cs = measured.reduce(.zero, +) / n
        var s = [[Double]](repeating: [0, 0, 0], count: 3)
        for (a, b) in zip(model, measured) {
            let p = a - cm, q = b - cs
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
        guard var pose = Pose(quaternionX: q[1], y: q[2], z: q[3], w: q[0], translation: .zero) else { return nil }
        pose.translation = cs - pose.rotate(cm)
        return pose
    }

    /// Plane through points in least squares: centroid, unit normal (the covariance's least
    /// eigenvector, turned to face the camera at the origin: `n·c < 0`) and RMS distance.
    static func plane(_ points: [SIMD3<Double>]) -> (centroid: SIMD3<Double>, normal: SIMD3<Double>, rms: Double)? {
        guard points.count >= 3 else { return nil }
        let c = points.reduce(.zero, +) / Double(points.count)
        var m = [Double](repeating: 0, count: 9)
        for p in points {
            let d = p - c
            for i in 0..<3 { for j in 0..<3 { m[i * 3 + j] += d[i] * d[j] } }
        }
        let (values, vectors) = symmetricEigen(m, n: 3)
        var normal = SIMD3(vectors[0][0], vectors[0][1], vectors[0][2])
        if (normal * c).sum() > 0 { normal = -normal }
        return (c, normal, (max(0, values[0]) / Double(points.count)).squareRoot())
    }
}

