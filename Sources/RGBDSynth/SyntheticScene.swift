#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RGBDKit

/// A scene with known geometry, in the camera frame (OpenCV: x right, y down,
/// z forward; meters): a fronto-parallel checkerboard wall, a floor and a box on it; or,
/// with `cameraToScene`, the same scene seen by a tilted camera.
///
/// Everything is analytic, so the true depth and color seen along any ray are known
/// exactly; the tests compare rgbd's output with them.
package struct SyntheticScene: Sendable {
    /// Distance of the wall plane `z = wallZ`.
    package var wallZ: Double = 3.0
    /// Side of the wall's checker squares.
    package var checkerSize: Double = 0.1
    /// A corner of the checker pattern (the lines are `x = origin.x + k·size` and
    /// `y = origin.y + k·size` on the wall).
    package var checkerOrigin: SIMD2<Double> = SIMD2(0.013, -0.027)
    /// The floor plane `y = floorY` (below the camera).
    package var floorY: Double = 1.2
    /// The box's opposite corners (axis-aligned, standing on the floor).
    package var boxMin: SIMD3<Double> = SIMD3(-0.95, 0.55, 1.6)
    /// See `boxMin`.
    package var boxMax: SIMD3<Double> = SIMD3(-0.35, 1.2, 2.0)

    /// Printed AprilTags standing in the scene (plates in front of whatever is behind them).
    package var tags: [SyntheticTag] = []

    /// The surfaces of the scene (a tag's `face` in `hit` is its index in `tags`).
    package enum Surface: Sendable { case wall, floor, box, tag }

    /// Colors of the surfaces.
    package static let lightSquare: SIMD3<Double> = SIMD3(225, 205, 170)
    /// See `lightSquare`.
    package static let darkSquare: SIMD3<Double> = SIMD3(30, 40, 75)

    /// The camera's rotation in the scene (camera to scene axes, translation ignored), nil
    /// for a camera level with the scene (the default: camera axes are scene axes). The
    /// scene's own axes are level: gravity along its +y (the floor is below), its +z the
    /// horizontal direction the wall faces.
    package var cameraToScene: Pose? = nil

    /// The printed black and white of tags (paper is not quite white, toner not quite black).
    package static let tagBlack: SIMD3<Double> = SIMD3(22, 22, 26)
    /// See `tagBlack`.
    package static let tagWhite: SIMD3<Double> = SIMD3(232, 232, 226)

    /// A scene with the default layout.
    package init() {}

    /// The camera turned `pitchDown` degrees below the horizon (about its x axis) after
    /// being rolled `roll` degrees about its optical axis (positive: the image's +x toward
    /// the scene's +y): `R = Rx(−pitchDown)·Rz(roll)`, camera to scene.
    package static func tilt(pitchDown: Double, roll: Double) -> Pose {
        let p = -pitchDown * .pi / 180, r = roll * .pi / 180
        let rx = Pose(row0: SIMD3(1, 0, 0), row1: SIMD3(0, cos(p), -sin(p)), row2: SIMD3(0, sin(p), cos(p)), translation: .zero)
        let rz = Pose(row0: SIMD3(cos(r), -sin(r), 0), row1: SIMD3(sin(r), cos(r), 0), row2: SIMD3(0, 0, 1), translation: .zero)
        return rx.composed(with: rz)
    }

    /// The direction of the camera ray through `(a, b, 1)` in scene axes; its parameter
    /// along the ray is still the camera's depth `z`.
    @inline(__always) func sceneRay(_ a: Double, _ b: Double) -> SIMD3<Double> {
        guard let r = cameraToScene else { return SIMD3(a, b, 1) }
        return r.rotate(SIMD3(a, b, 1))
    }

    /// The nearest surface along the ray through `(a, b, 1)`: its depth `z` and which
    /// surface it is. The wall is infinite, so every forward ray hits something.
    package func hit(_ a: Double, _ b: Double) -> (z: Double, surface: Surface, face: Int) {
        // The ray t·d in scene axes; t is the camera's depth z.
        let d = sceneRay(a, b)
        var best = (z: d.z > 0 ? wallZ / d.z : Double.infinity, surface: Surface.wall, face: 0)
        if d.y > 0 {
            let z = floorY / d.y
            if z < best.z { best = (z, .floor, 0) }
        }
        // Slab intersection of the ray with the box.
        var tNear = -Double.infinity, tFar = Double.infinity, face = 0
        for axis in 0..<3 {
            if d[axis] == 0 {
                if 0 < boxMin[axis] || 0 > boxMax[axis] { return best }
                continue
            }
            var t0 = boxMin[axis] / d[axis], t1 = boxMax[axis] / d[axis]
            if t0 > t1 { swap(&t0, &t1) }
            if t0 > tNear { tNear = t0; face = axis }
            tFar = min(tFar, t1)
        }
        if tNear <= tFar && tNear > 0 && tNear < best.z { best = (tNear, .box, face) }
        for (index, tag) in tags.enumerated() {
            if let z = tag.intersect(a, b)?.z, z < best.z { best = (z, .tag, index) }
        }
        return best
    }

    /// The color seen along the ray through `(a, b, 1)`, for an image whose pixels
    /// subtend `pixelAngle` (`1/fx`).
    ///
    /// Checker edges are linear ramps one pixel wide, centered on the true line: point
    /// samples of such a ramp equal the area samples of a sharp edge, so the rendered
    /// image is what a sensor integrating over its pixels would record, without the
    /// quantization of supersampling.
    package func color(_ a: Double, _ b: Double, pixelAngle: Double) -> SIMD3<Double> {
        let h = hit(a, b)
        let p = sceneRay(a, b) * h.z
        let x = p.x, y = p.y, z = p.z
        let ramp = z * pixelAngle
        switch h.surface {
        case .wall:
            let sx = Self.smoothSign((x - checkerOrigin.x) / checkerSize, width: ramp / checkerSize)
            let sy = Self.smoothSign((y - checkerOrigin.y) / checkerSize, width: ramp / checkerSize)
            let light = 0.5 + 0.5 * sx * sy
            return Self.darkSquare + (Self.lightSquare - Self.darkSquare) * light
        case .floor:
            // The floor is seen at a slant; its ramp is only approximately a pixel wide.
            let sx = Self.smoothSign(x / 0.25, width: ramp / 0.25)
            let sz = Self.smoothSign(z / 0.25, width: 4 * ramp / 0.25)
            let light = 0.5 + 0.5 * sx * sz
            return SIMD3(95, 85, 75) + SIMD3(35, 35, 30) * light
        case .tag:
            let tag = tags[h.face]
            guard let local = tag.intersect(a, b)?.local else { return Self.tagWhite }
            // A pixel's footprint on the plate grows as the plate turns away from the ray.
            let n = tag.pose.rotation.column(2), d = SIMD3(a, b, 1.0)
            let slant = max(0.2, abs((n * d).sum()) / (d * d).sum().squareRoot())
            let light = tag.brightness(at: local, footprint: ramp / slant)
            return Self.tagBlack + (Self.tagWhite - Self.tagBlack) * light
        case .box:
            switch h.face {
            case 2: return SIMD3(200, 60, 50)     // front
            case 1: return SIMD3(235, 150, 90)    // top
            default: return SIMD3(150, 45, 35)    // side
            }
        }
    }

    /// +1 in even cells of `t` (cells `[k, k+1)`), −1 in odd ones, with linear ramps of
    /// total `width` (in cells) centered on each integer.
    static func smoothSign(_ t: Double, width: Double) -> Double {
        let cell = t.rounded(.down)
        let parity: Double = Int(cell) & 1 == 0 ? 1 : -1
        // Distance to the nearest cell boundary, signed toward this cell's interior.
        let fromLower = t - cell, fromUpper = cell + 1 - t
        let distance = min(fromLower, fromUpper)
        let half = width / 2
        guard distance < half else { return parity }
        // At the boundary the value is 0; it reaches ±1 at half the width inside.
        return parity * distance / half
    }

    /// The box's front-face corners (at `z = boxMin.z`), top-left first, clockwise.
    package var boxFrontCorners: [SIMD3<Double>] {
        [SIMD3(boxMin.x, boxMin.y, boxMin.z), SIMD3(boxMax.x, boxMin.y, boxMin.z),
         SIMD3(boxMax.x, boxMax.y, boxMin.z), SIMD3(boxMin.x, boxMax.y, boxMin.z)]
    }
}
