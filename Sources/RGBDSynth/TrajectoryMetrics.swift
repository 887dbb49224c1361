import RGBDKit

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
        guard let fit = SmallMatrix.rigidAlignment(from: estimate, to: truth) else { return estimate }
        let q = fit.quaternion, ce = fit.fromCentroid, ct = fit.toCentroid
        let (w, x, y, z) = (q[0], q[1], q[2], q[3])
        let r = SynthMatrix3(rows: SIMD3(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
                             SIMD3(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
                             SIMD3(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)))
        return estimate.map { r * ($0 - ce) + ct }
    }
}
