// Elementary functions through the C library, without Foundation.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The scan generator's own small geometry: rotations, quaternions, rigid poses and the
/// pinhole camera, written independently of RGBDKit's code so that a convention mistake in
/// the readers cannot be mirrored by the generator that tests them.
///
/// Conventions: a rotation matrix maps camera coordinates to world coordinates when it is
/// part of a camera-to-world pose (`p_world = R·p_cam + t`); quaternions are Hamilton, their
/// components listed `x, y, z, w` (scalar last).

/// A 3×3 matrix, stored as its rows.
package struct SynthMatrix3: Equatable, Sendable {
    /// Row 0.
    package var r0: SIMD3<Double>
    /// Row 1.
    package var r1: SIMD3<Double>
    /// Row 2.
    package var r2: SIMD3<Double>

    /// A matrix from its rows.
    package init(rows r0: SIMD3<Double>, _ r1: SIMD3<Double>, _ r2: SIMD3<Double>) {
        self.r0 = r0
        self.r1 = r1
        self.r2 = r2
    }

    /// A matrix from its columns.
    package init(columns c0: SIMD3<Double>, _ c1: SIMD3<Double>, _ c2: SIMD3<Double>) {
        r0 = SIMD3(c0.x, c1.x, c2.x)
        r1 = SIMD3(c0.y, c1.y, c2.y)
        r2 = SIMD3(c0.z, c1.z, c2.z)
    }

    /// The identity.
    package static let identity = SynthMatrix3(rows: SIMD3(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1))

    /// `diag(1, −1, −1)`: the change between OpenCV camera axes (x right, y down, z forward)
    /// and OpenGL/ARKit camera axes (x right, y up, z backward); its own inverse.
    package static let flipYZ = SynthMatrix3(rows: SIMD3(1, 0, 0), SIMD3(0, -1, 0), SIMD3(0, 0, -1))

    /// Column `i` (0…2).
    package func column(_ i: Int) -> SIMD3<Double> { SIMD3(r0[i], r1[i], r2[i]) }

    /// The entry at row `row`, column `column`.
    package subscript(row: Int, column: Int) -> Double {
        switch row {
        case 0: return r0[column]
        case 1: return r1[column]
        default: return r2[column]
        }
    }

    /// The transpose (the inverse of a rotation).
    package var transposed: SynthMatrix3 { SynthMatrix3(columns: r0, r1, r2) }

    /// The determinant.
    package var determinant: Double {
        let c = SIMD3(r1.y * r2.z - r1.z * r2.y, r1.z * r2.x - r1.x * r2.z, r1.x * r2.y - r1.y * r2.x)
        return (r0 * c).sum()
    }

    /// Matrix times vector.
    package static func * (m: SynthMatrix3, v: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3((m.r0 * v).sum(), (m.r1 * v).sum(), (m.r2 * v).sum())
    }

    /// Matrix product.
    package static func * (a: SynthMatrix3, b: SynthMatrix3) -> SynthMatrix3 {
        let bt = b.transposed
        func row(_ r: SIMD3<Double>) -> SIMD3<Double> { SIMD3((r * bt.r0).sum(), (r * bt.r1).sum(), (r * bt.r2).sum()) }
        return SynthMatrix3(rows: row(a.r0), row(a.r1), row(a.r2))
    }

    /// The rotation by `angle` radians about the unit vector `axis` (right-hand rule).
    package static func rotation(axis: SIMD3<Double>, angle: Double) -> SynthMatrix3 {
        let c = cosine(angle), s = sine(angle), t = 1 - c
        let x = axis.x, y = axis.y, z = axis.z
        return SynthMatrix3(rows: SIMD3(t * x * x + c, t * x * y - s * z, t * x * z + s * y),
                            SIMD3(t * x * y + s * z, t * y * y + c, t * y * z - s * x),
                            SIMD3(t * x * z - s * y, t * y * z + s * x, t * z * z + c))
    }

    /// The largest absolute difference between entries.
    package func maxDifference(_ other: SynthMatrix3) -> Double {
        max(absolute(r0 - other.r0).max(), absolute(r1 - other.r1).max(), absolute(r2 - other.r2).max())
    }
}

/// A Hamilton quaternion, components `x, y, z` (vector) and `w` (scalar).
package struct SynthQuaternion: Equatable, Sendable {
    /// Vector part, x.
    package var x: Double
    /// Vector part, y.
    package var y: Double
    /// Vector part, z.
    package var z: Double
    /// Scalar part.
    package var w: Double

    /// A quaternion from its components (scalar last).
    package init(x: Double, y: Double, z: Double, w: Double) {
        self.x = x
        self.y = y
        self.z = z
        self.w = w
    }

    /// The unit quaternion of a rotation matrix (Shepperd's method: the largest of the four
    /// squared components is computed first, for accuracy), with `w ≥ 0`.
    package init(_ m: SynthMatrix3) {
        let trace = m[0, 0] + m[1, 1] + m[2, 2]
        var q: SIMD4<Double>   // x, y, z, w
        if trace > 0 {
            let s = (trace + 1).squareRoot() * 2   // 4w
            q = SIMD4((m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, s / 4)
        } else if m[0, 0] > m[1, 1] && m[0, 0] > m[2, 2] {
            let s = (1 + m[0, 0] - m[1, 1] - m[2, 2]).squareRoot() * 2   // 4x
            q = SIMD4(s / 4, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s)
        } else if m[1, 1] > m[2, 2] {
            let s = (1 + m[1, 1] - m[0, 0] - m[2, 2]).squareRoot() * 2   // 4y
            q = SIMD4((m[0, 1] + m[1, 0]) / s, s / 4, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s)
        } else {
            let s = (1 + m[2, 2] - m[0, 0] - m[1, 1]).squareRoot() * 2   // 4z
            q = SIMD4((m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, s / 4, (m[1, 0] - m[0, 1]) / s)
        }
        if q.w < 0 { q = -q }
        q /= (q * q).sum().squareRoot()
        self.init(x: q.x, y: q.y, z: q.z, w: q.w)
    }

    /// The rotation matrix of this (unit) quaternion.
    package var matrix: SynthMatrix3 {
        let xx = x * x, yy = y * y, zz = z * z
        let xy = x * y, xz = x * z, yz = y * z, wx = w * x, wy = w * y, wz = w * z
        return SynthMatrix3(rows: SIMD3(1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy)),
                            SIMD3(2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx)),
                            SIMD3(2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)))
    }

    /// The components in the order `x, y, z, w`.
    package var xyzw: [Double] { [x, y, z, w] }

    /// The rotation vector (axis · angle, radians, angle in [0, π]).
    package var rotationVector: SIMD3<Double> {
        let v = SIMD3(x, y, z)
        let n = (v * v).sum().squareRoot()
        guard n > 1e-15 else { return v * 2 }
        let angle = 2 * arcTangent2(n, abs(w))
        return v / n * angle * (w < 0 ? -1 : 1)
    }
}

/// A rigid transform `p ↦ R·p + t`; as a camera pose it is camera-to-world.
package struct SynthPose: Equatable, Sendable {
    /// The rotation.
    package var rotation: SynthMatrix3
    /// The translation.
    package var translation: SIMD3<Double>

    /// A transform from its rotation and translation.
    package init(rotation: SynthMatrix3, translation: SIMD3<Double>) {
        self.rotation = rotation
        self.translation = translation
    }

    /// The identity.
    package static let identity = SynthPose(rotation: .identity, translation: .zero)

    /// Applies the transform to a point.
    package func apply(_ p: SIMD3<Double>) -> SIMD3<Double> { rotation * p + translation }

    /// The inverse transform.
    package var inverse: SynthPose {
        let rt = rotation.transposed
        return SynthPose(rotation: rt, translation: -(rt * translation))
    }

    /// Composition: `(a * b).apply(p) == a.apply(b.apply(p))`.
    package static func * (a: SynthPose, b: SynthPose) -> SynthPose {
        SynthPose(rotation: a.rotation * b.rotation, translation: a.rotation * b.translation + a.translation)
    }

    /// The same camera pose with OpenCV camera axes turned into OpenGL ones or back
    /// (`R·diag(1, −1, −1)`, translation unchanged).
    package var flippingCameraAxes: SynthPose { SynthPose(rotation: rotation * .flipYZ, translation: translation) }

    /// The 4×4 matrix, row by row.
    package var rows: [[Double]] {
        (0..<3).map { r in [rotation[r, 0], rotation[r, 1], rotation[r, 2], translation[r]] } + [[0, 0, 0, 1]]
    }
}

/// A pinhole camera on a pixel grid, OpenCV axes (x right, y down, z forward), pixel
/// `(i, j)`'s centre at integer coordinates: `u = fx·x/z + cx`, `v = fy·y/z + cy`.
package struct SynthPinhole: Equatable, Sendable {
    /// Focal length along x, pixels.
    package var fx: Double
    /// Focal length along y, pixels.
    package var fy: Double
    /// Principal point x, pixels.
    package var cx: Double
    /// Principal point y, pixels.
    package var cy: Double
    /// Grid width.
    package var width: Int
    /// Grid height.
    package var height: Int

    /// A camera from its values.
    package init(fx: Double, fy: Double, cx: Double, cy: Double, width: Int, height: Int) {
        self.fx = fx
        self.fy = fy
        self.cx = cx
        self.cy = cy
        self.width = width
        self.height = height
    }

    /// The same field of view on a `width × height` grid, as the iPhone apps scale K from
    /// the RGB image to the depth map: `fx, cx` times `width / self.width`, `fy, cy` times
    /// `height / self.height`.
    package func resized(width: Int, height: Int) -> SynthPinhole {
        let sx = Double(width) / Double(self.width), sy = Double(height) / Double(self.height)
        return SynthPinhole(fx: fx * sx, fy: fy * sy, cx: cx * sx, cy: cy * sy, width: width, height: height)
    }

    /// The ray through pixel `(u, v)`, with z component 1 (so depth z scales it to the point).
    package func ray(_ u: Double, _ v: Double) -> SIMD3<Double> { SIMD3((u - cx) / fx, (v - cy) / fy, 1) }

    /// The pixel coordinates of a camera-frame point (z > 0).
    package func project(_ p: SIMD3<Double>) -> SIMD2<Double> { SIMD2(fx * p.x / p.z + cx, fy * p.y / p.z + cy) }

    /// The camera-frame point at pixel `(u, v)` and depth `z`.
    package func backProject(_ u: Double, _ v: Double, depth z: Double) -> SIMD3<Double> { ray(u, v) * z }
}

@inline(__always) func sine(_ x: Double) -> Double { sin(x) }
@inline(__always) func cosine(_ x: Double) -> Double { cos(x) }
@inline(__always) func arcTangent2(_ y: Double, _ x: Double) -> Double { atan2(y, x) }
@inline(__always) func floorOf(_ x: Double) -> Double { x.rounded(.down) }

/// Normalized vector.
@inline(__always) func normalized(_ v: SIMD3<Double>) -> SIMD3<Double> { v / (v * v).sum().squareRoot() }
/// Cross product.
@inline(__always) func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
    SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
}
/// Dot product.
@inline(__always) func dot(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double { (a * b).sum() }
@inline(__always) func logarithm(_ x: Double) -> Double { log(x) }
@inline(__always) func exponential(_ x: Double) -> Double { exp(x) }
/// Component-wise absolute value.
@inline(__always) func absolute(_ v: SIMD3<Double>) -> SIMD3<Double> { SIMD3(abs(v.x), abs(v.y), abs(v.z)) }
