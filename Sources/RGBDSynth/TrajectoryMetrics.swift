/// How far an estimated camera path is from the true one, as the SLAM benchmarks measure
/// it (TUM RGB-D's and evo's `evo_ape -a` / `evo_rpe`): positions compared after the rigid
/// motion that best aligns them (Horn's closed form, no scale).
package enum TrajectoryMetrics {
    /// The absolute trajectory error: the root mean square distance between the true and
    /// the estimated camera centres after the rigid alignment of the estimate onto the truth.
    package static func absoluteError(_ estimate: [SIMD3<Double>], truth: [SIMD3<Double>]) -> Double {
        let aligned = align(estimate, onto: truth)
        return rms(zip(aligned, truth).map { $0 - $1 })
    }

    /// The per-frame distances after the rigid alignment (for the frames of a stretch).
    package static func alignedErrors(_ estimate: [SIMD3<Double>], truth: [SIMD3<Double>]) -> [Double] {
        let aligned = align(estimate, onto: truth)
        return zip(aligned, truth).map { let d = $0 - $1; return (d * d).sum().squareRoot() }
    }

    /// The relative pose error in translation over `gap` frames: the root mean square of
    /// |Δ_est − Δ_true| where Δ is the motion from frame i to i + gap expressed in frame
    /// i's camera (`evo_rpe --delta gap`, translation part).
    package static func relativeError(_ estimate: [SynthPose], truth: [SynthPose], gap: Int) -> Double {
        var errors: [SIMD3<Double>] = []
        for i in 0..<max(0, estimate.count - gap) {
            let e = estimate[i].inverse * estimate[i + gap], t = truth[i].inverse * truth[i + gap]
            let d = (t.inverse * e).translation
            errors.append(d)
        }
        return rms(errors)
    }

    static func rms(_ vectors: [SIMD3<Double>]) -> Double {
        guard !vectors.isEmpty else { return .nan }
        return (vectors.reduce(0) { $0 + ($1 * $1).sum() } / Double(vectors.count)).squareRoot()
    }

    /// `estimate` moved by the rotation and translation that minimise the squared distances
    /// to `truth` (Horn 1987: the rotation's quaternion is the top eigenvector of a 4×4
    /// matrix of the cross-covariance).
    package static func align(_ estimate: [SIMD3<Double>], onto truth: [SIMD3<Double>]) -> [SIMD3<Double>] {
        let n = Double(estimate.count)
        guard n > 0 else { return [] }
        let ce = estimate.reduce(.zero, +) / n, ct = truth.reduce(.zero, +) / n
        var s = [[Double]](repeating: [0, 0, 0], count: 3)
        for (e, t) in zip(estimate, truth) {
            let a = e - ce, b = t - ct
            for r in 0..<3 { for c in 0..<3 { s[r][c] += a[r] * b[c] } }
        }
        let (sxx, sxy, sxz) = (s[0][0], s[0][1], s[0][2])
        let (syx, syy, syz) = (s[1][0], s[1][1], s[1][2])
        let (szx, szy, szz) = (s[2][0], s[2][1], s[2][2])
        let m: [Double] = [
            sxx + syy + szz, syz - szy, szx - sxz, sxy - syx,
            syz - szy, sxx - syy - szz, sxy + syx, szx + sxz,
            szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy,
            sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz,
        ]
        let q = topEigenvector(m)
        let (w, x, y, z) = (q[0], q[1], q[2], q[3])
        let r = SynthMatrix3(rows: SIMD3(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
                             SIMD3(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
                             SIMD3(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)))
        return estimate.map { r * ($0 - ce) + ct }
    }

    /// The unit eigenvector of the largest eigenvalue of a symmetric 4×4 matrix (Jacobi).
    static func topEigenvector(_ matrix: [Double]) -> [Double] {
        var a = matrix
        var v: [Double] = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
        for _ in 0..<50 {
            var off = 0.0
            for i in 0..<4 { for j in (i + 1)..<4 { off += a[i * 4 + j] * a[i * 4 + j] } }
            if off < 1e-24 { break }
            for p in 0..<4 {
                for q in (p + 1)..<4 where a[p * 4 + q] != 0 {
                    let theta = (a[q * 4 + q] - a[p * 4 + p]) / (2 * a[p * 4 + q])
                    let t = (theta >= 0 ? 1 : -1) / (abs(theta) + (theta * theta + 1).squareRoot())
                    let c = 1 / (t * t + 1).squareRoot(), s = t * c
                    for k in 0..<4 {
                        let akp = a[k * 4 + p], akq = a[k * 4 + q]
                        a[k * 4 + p] = c * akp - s * akq
                        a[k * 4 + q] = s * akp + c * akq
                    }
                    for k in 0..<4 {
                        let apk = a[p * 4 + k], aqk = a[q * 4 + k]
                        a[p * 4 + k] = c * apk - s * aqk
                        a[q * 4 + k] = s * apk + c * aqk
                    }
                    for k in 0..<4 {
                        let vkp = v[k * 4 + p], vkq = v[k * 4 + q]
                        v[k * 4 + p] = c * vkp - s * vkq
                        v[k * 4 + q] = s * vkp + c * vkq
                    }
                }
            }
        }
        let best = (0..<4).max { a[$0 * 4 + $0] < a[$1 * 4 + $1] } ?? 0
        return (0..<4).map { v[$0 * 4 + best] }
    }
}
