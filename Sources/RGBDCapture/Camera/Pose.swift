#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a camera is: the rigid transform from its camera frame to a scene's world,
/// `p_world = R·p_camera + t`, meters.
///
/// Inside rgbd every pose is camera-to-world with **OpenCV camera axes** (x right, y down,
/// z forward), the frame of `rgbd cloud`'s points; each reader converts its file's
/// convention once (`init(quaternionX:…)`, `fromOpenGLCamera()`), and each writer converts
/// to its target's convention once.
public struct Pose: Equatable, Sendable {
    /// The rotation's rows: `R = [row0; row1; row2]`.
    public var row0: SIMD3<Double>
    /// See `row0`.
    public var row1: SIMD3<Double>
    /// See `row0`.
    public var row2: SIMD3<Double>
    /// The camera's centre in the world, meters.
    public var translation: SIMD3<Double>

    /// A pose from its rotation rows and translation (the rows must form a rotation).
    public init(row0: SIMD3<Double>, row1: SIMD3<Double>, row2: SIMD3<Double>, translation: SIMD3<Double>) {
        self.row0 = row0
        self.row1 = row1
        self.row2 = row2
        self.translation = translation
    }

    /// The camera at the world's origin, axes aligned.
    public static let identity = Pose(row0: SIMD3(1, 0, 0), row1: SIMD3(0, 1, 0), row2: SIMD3(0, 0, 1),
                                      translation: .zero)

    /// How far a quaternion's norm may be from 1 and still be taken for a rotation: files
    /// store float32 quaternions (norm within about 1e-6 of 1); a larger error means the
    /// numbers are not a rotation.
    package static let quaternionNormTolerance = 1e-3

    /// The pose of a unit quaternion (Hamilton convention, components given by name, so
    /// the order in a file is the reader's business) and a translation; nil when a number
    /// is not finite or the quaternion's norm is off 1 by more than
    /// `quaternionNormTolerance`. The quaternion is normalized before use.
    public init?(quaternionX x: Double, y: Double, z: Double, w: Double, translation: SIMD3<Double>) {
        let norm = (x * x + y * y + z * z + w * w).squareRoot()
        guard norm.isFinite, translation.x.isFinite, translation.y.isFinite, translation.z.isFinite,
              abs(norm - 1) <= Self.quaternionNormTolerance else { return nil }
        let (x, y, z, w) = (x / norm, y / norm, z / norm, w / norm)
        row0 = SIMD3(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y))
        row1 = SIMD3(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x))
        row2 = SIMD3(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y))
        self.translation = translation
    }

    /// The rotation as a unit quaternion `(x, y, z, w)` (Hamilton, `w >= 0`).
    public var quaternion: (x: Double, y: Double, z: Double, w: Double) {
        let (m00, m11, m22) = (row0.x, row1.y, row2.z)
        let trace = m00 + m11 + m22
        var q: (x: Double, y: Double, z: Double, w: Double)
        if trace > 0 {
            let s = (trace + 1).squareRoot() * 2
            q = ((row2.y - row1.z) / s, (row0.z - row2.x) / s, (row1.x - row0.y) / s, s / 4)
        } else if m00 > m11 && m00 > m22 {
            let s = (1 + m00 - m11 - m22).squareRoot() * 2
            q = (s / 4, (row0.y + row1.x) / s, (row0.z + row2.x) / s, (row2.y - row1.z) / s)
        } else if m11 > m22 {
            let s = (1 + m11 - m00 - m22).squareRoot() * 2
            q = ((row0.y + row1.x) / s, s / 4, (row1.z + row2.y) / s, (row0.z - row2.x) / s)
        } else {
            let s = (1 + m22 - m00 - m11).squareRoot() * 2
            q = ((row0.z + row2.x) / s, (row1.z + row2.y) / s, s / 4, (row1.x - row0.y) / s)
        }
        if q.w < 0 { q = (-q.x, -q.y, -q.z, -q.w) }
        return q
    }

    /// `R·p + t`: a camera-frame point in the world.
    @inlinable
    public func apply(_ p: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3((row0 * p).sum(), (row1 * p).sum(), (row2 * p).sum()) + translation
    }

    /// `R·v`: a camera-frame direction in the world.
    @inlinable
    public func rotate(_ v: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3((row0 * v).sum(), (row1 * v).sum(), (row2 * v).sum())
    }

    /// The world-to-camera transform, as a pose (`Rᵀ`, `−Rᵀ·t`).
    public var inverse: Pose {
        let c0 = SIMD3(row0.x, row1.x, row2.x)
        let c1 = SIMD3(row0.y, row1.y, row2.y)
        let c2 = SIMD3(row0.z, row1.z, row2.z)
        let t = -SIMD3((c0 * translation).sum(), (c1 * translation).sum(), (c2 * translation).sum())
        return Pose(row0: c0, row1: c1, row2: c2, translation: t)
    }

    /// `self ∘ other`: first `other`, then `self`.
    public func composed(with other: Pose) -> Pose {
        let c0 = SIMD3(other.row0.x, other.row1.x, other.row2.x)
        let c1 = SIMD3(other.row0.y, other.row1.y, other.row2.y)
        let c2 = SIMD3(other.row0.z, other.row1.z, other.row2.z)
        func row(_ r: SIMD3<Double>) -> SIMD3<Double> { SIMD3((r * c0).sum(), (r * c1).sum(), (r * c2).sum()) }
        return Pose(row0: row(row0), row1: row(row1), row2: row(row2), translation: apply(other.translation))
    }

    /// This pose read as one with OpenGL/ARKit camera axes (x right, y up, z backward),
    /// converted to OpenCV camera axes: the rotation's second and third columns change sign
    /// (`R_cv = R_gl·diag(1, −1, −1)`); the camera's centre stays.
    public func fromOpenGLCamera() -> Pose {
        Pose(row0: row0 * SIMD3(1, -1, -1), row1: row1 * SIMD3(1, -1, -1), row2: row2 * SIMD3(1, -1, -1),
             translation: translation)
    }

    /// The same conversion back (it is its own inverse): OpenCV to OpenGL camera axes.
    public func toOpenGLCamera() -> Pose { fromOpenGLCamera() }

    /// The camera's viewing direction (its +z axis) in the world.
    public var forward: SIMD3<Double> { SIMD3(row0.z, row1.z, row2.z) }

    /// The 4×4 matrix, row-major (16 numbers, last row 0 0 0 1).
    public var matrix: [Double] {
        [row0.x, row0.y, row0.z, translation.x,
         row1.x, row1.y, row1.z, translation.y,
         row2.x, row2.y, row2.z, translation.z,
         0, 0, 0, 1]
    }
}

extension Pose {
    /// The rotation by the vector `w` (axis × angle in radians; Rodrigues' formula), no
    /// translation; to first order `I + [w]×` for a vanishing angle.
    package init(rotationVector w: SIMD3<Double>) {
        let angle = (w * w).sum().squareRoot()
        guard angle > 1e-15 else {
            self.init(row0: SIMD3(1, -w.z, w.y), row1: SIMD3(w.z, 1, -w.x), row2: SIMD3(-w.y, w.x, 1), translation: .zero)
            return
        }
        let k = w / angle, c = cos(angle), s = sin(angle), v = 1 - c
        self.init(row0: SIMD3(c + k.x * k.x * v, k.x * k.y * v - k.z * s, k.x * k.z * v + k.y * s),
                  row1: SIMD3(k.y * k.x * v + k.z * s, c + k.y * k.y * v, k.y * k.z * v - k.x * s),
                  row2: SIMD3(k.z * k.x * v - k.y * s, k.z * k.y * v + k.x * s, c + k.z * k.z * v),
                  translation: .zero)
    }

    /// The rotation vector of this pose's rotation (its logarithm: axis × angle, the angle
    /// in 0…π), through its quaternion, which stays exact near a half turn.
    package var rotationVector: SIMD3<Double> {
        let q = quaternion
        let s = (q.x * q.x + q.y * q.y + q.z * q.z).squareRoot()
        guard s > 1e-15 else { return SIMD3(q.x, q.y, q.z) * 2 }
        return SIMD3(q.x, q.y, q.z) / s * (2 * atan2(s, q.w))
    }
}
