import CAprilTag
import RGBDKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A printed AprilTag in a synthetic scene: a flat plate (the tag's pattern with a white
/// margin) at a known pose, so the detector's corners and the pose estimators can be
/// checked against the truth.
///
/// The pattern comes from the AprilTag library itself (`apriltag_to_image` over the family's
/// own code table), not from a copy, so a mistake in rgbd's reading of tags cannot be
/// mirrored here.
package struct SyntheticTag: Sendable {
    /// The family.
    package var family: TagFamily
    /// The ID (an index into the family's code table).
    package var id: Int
    /// Edge of the black square, meters.
    package var size: Double
    /// Tag-to-camera pose: tag frame x right, y down, z into the tag (the library's frame);
    /// its origin is the tag's centre. A frontal tag facing the camera has the identity rotation.
    package var pose: SynthPose
    /// True when the depth map has no depth over the plate (a hole in the depth).
    package var depthMissing = false
    /// The pattern's cells, row by row, `cells × cells`, true = white.
    package let pattern: [Bool]
    /// Cells per side of `pattern` (the family's whole pattern, its outer white ring included
    /// for tag36h11).
    package let cells: Int

    /// A tag of `family` with `id`, black square `size` meters, at `pose` (tag to camera);
    /// nil when `id` is not in the family's table.
    package init?(family: TagFamily = .tag36h11, id: Int, size: Double, pose: SynthPose) {
        let table: UnsafeMutablePointer<apriltag_family_t>
        switch family {
        case .tag36h11: table = tag36h11_create()
        case .tagStandard41h12: table = tagStandard41h12_create()
        }
        defer {
            switch family {
            case .tag36h11: tag36h11_destroy(table)
            case .tagStandard41h12: tagStandard41h12_destroy(table)
            }
        }
        guard id >= 0, id < Int(table.pointee.ncodes), let image = apriltag_to_image(table, Int32(id)) else { return nil }
        let n = Int(image.pointee.width), rowStride = Int(image.pointee.stride)
        var pattern = [Bool](repeating: false, count: n * n)
        if let buf = image.pointee.buf {
            for y in 0..<n { for x in 0..<n { pattern[y * n + x] = buf[y * rowStride + x] > 127 } }
            // The library's image_u8_destroy is not exported in every build; it frees these two.
            free(buf)
        }
        free(image)
        self.family = family
        self.id = id
        self.size = size
        self.pose = pose
        self.pattern = pattern
        self.cells = n
    }

    /// Edge of one cell, meters.
    package var cellSize: Double { size / Double(family.borderCells) }
    /// Half the plate's edge: the pattern plus one white cell of margin on every side.
    package var plateHalf: Double { (Double(cells) / 2 + 1) * cellSize }

    /// The black square's corners in the camera frame, in the detector's order
    /// (`TagDetection.modelCorners`).
    package var cornersInCamera: [SIMD3<Double>] { TagDetection.modelCorners(size: size).map(pose.apply) }

    /// Where the ray through `(a, b, 1)` meets the plate: depth `z` and the point in tag
    /// coordinates; nil when it misses.
    func intersect(_ a: Double, _ b: Double) -> (z: Double, local: SIMD2<Double>)? {
        let n = pose.rotation.column(2), d = SIMD3(a, b, 1.0)
        let denominator = (n * d).sum()
        guard abs(denominator) > 1e-9 else { return nil }
        let z = (n * pose.translation).sum() / denominator
        guard z > 0 else { return nil }
        let local = pose.rotation.transposed * (d * z - pose.translation)
        guard abs(local.x) <= plateHalf, abs(local.y) <= plateHalf else { return nil }
        return (z, SIMD2(local.x, local.y))
    }

    /// The brightness in [0, 1] at tag coordinates `local`: the pattern area-averaged over a
    /// square of edge `footprint` meters (about one pixel), so edges are rendered as a
    /// sensor integrating light would record them.
    func brightness(at local: SIMD2<Double>, footprint: Double) -> Double {
        let w = min(max(footprint / cellSize, 1e-6), 1)
        let u = local.x / cellSize + Double(cells) / 2, v = local.y / cellSize + Double(cells) / 2
        func overlaps(_ c: Double) -> [(Int, Double)] {
            let lo = c - w / 2, hi = c + w / 2
            let i0 = Int(lo.rounded(.down)), i1 = Int(hi.rounded(.down))
            if i0 == i1 { return [(i0, 1)] }
            let split = Double(i1)
            return [(i0, (split - lo) / w), (i1, (hi - split) / w)]
        }
        var sum = 0.0
        for (iy, wy) in overlaps(v) {
            for (ix, wx) in overlaps(u) {
                let white = ix < 0 || iy < 0 || ix >= cells || iy >= cells || pattern[iy * cells + ix]
                if white { sum += wx * wy }
            }
        }
        return sum
    }

    /// A frontal-ish pose: the tag centred at `center` (camera frame), turned by `yaw` about
    /// the camera's y axis and `pitch` about its x axis (radians), then `roll` about its own
    /// normal.
    package static func pose(center: SIMD3<Double>, yaw: Double = 0, pitch: Double = 0, roll: Double = 0) -> SynthPose {
        let r = SynthMatrix3.rotation(axis: SIMD3(0, 1, 0), angle: yaw)
            * SynthMatrix3.rotation(axis: SIMD3(1, 0, 0), angle: pitch)
            * SynthMatrix3.rotation(axis: SIMD3(0, 0, 1), angle: roll)
        return SynthPose(rotation: r, translation: center)
    }

    /// `count` tag36h11 tags (IDs 0, 1, …) of black square `size`, in a row across the view
    /// 1.6 to 2.8 m away, each turned a little: the tags `rgbd-synth capture --tags` paints.
    package static func row(count: Int, size: Double = 0.16) -> [SyntheticTag] {
        (0..<max(0, count)).compactMap { i in
            let t = count > 1 ? Double(i) / Double(count - 1) : 0.5
            let center = SIMD3(-0.9 + 1.8 * t, -0.2 + 0.3 * Double(i % 2), 1.6 + 1.2 * t)
            return SyntheticTag(id: i, size: size, pose: pose(center: center, yaw: 0.3 * (t - 0.5), roll: 0.2 * Double(i % 3)))
        }
    }
}
