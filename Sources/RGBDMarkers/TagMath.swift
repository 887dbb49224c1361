#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The geometry the marker code needs over the shared linear algebra (`SmallMatrix`) and
/// rotation vectors (`Pose(rotationVector:)`): angles between poses, small steps, the rigid
/// fit of point sets and planes through them.
enum TagMath {
    /// The angle whose sine and cosine are proportional to the arguments, radians.
    static func angle(sine: Double, cosine: Double) -> Double { atan2(sine, cosine) }

    /// The angle of the rotation between two poses' rotations, radians.
    static func angleBetween(_ a: Pose, _ b: Pose) -> Double {
        let w = a.inverse.composed(with: b).rotationVector
        return (w * w).sum().squareRoot()
    }

    /// `pose` moved by a small step: rotation vector `w` applied on the left (in the outer
    /// frame), translation added.
    static func perturbed(_ pose: Pose, rotation w: SIMD3<Double>, translation dt: SIMD3<Double>) -> Pose {
        var p = Pose(rotationVector: w).composed(with: Pose(row0: pose.row0, row1: pose.row1, row2: pose.row2, translation: .zero))
        p.translation = pose.translation + dt
        return p
    }

    /// The rigid transform (rotation and translation, no scale) that best maps `model` onto
    /// `measured` in least squares (Horn's quaternion method); nil for fewer than 3 points.
    static func rigidFit(model: [SIMD3<Double>], measured: [SIMD3<Double>]) -> Pose? {
        guard let fit = SmallMatrix.rigidAlignment(from: model, to: measured),
              var pose = Pose(quaternionX: fit.quaternion[1], y: fit.quaternion[2], z: fit.quaternion[3], w: fit.quaternion[0],
                              translation: .zero) else { return nil }
        pose.translation = fit.toCentroid - pose.rotate(fit.fromCentroid)
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
        let (values, vectors) = SmallMatrix.symmetricEigen(m, n: 3)
        var normal = SIMD3(vectors[0][0], vectors[0][1], vectors[0][2])
        if (normal * c).sum() > 0 { normal = -normal }
        return (c, normal, (max(0, values[0]) / Double(points.count)).squareRoot())
    }
}

