/// Pinhole intrinsics of an image: focal lengths and principal point in pixels, and the
/// size of the pixel grid they refer to.
///
/// Projection of a camera-frame point `(X, Y, Z)` (OpenCV frame: x right, y down,
/// z forward): `u = fx·X/Z + cx`, `v = fy·Y/Z + cy`.
public struct Intrinsics: Equatable, Sendable {
    /// Focal length along x, pixels.
    public var fx: Double
    /// Focal length along y, pixels.
    public var fy: Double
    /// Principal point x, pixels.
    public var cx: Double
    /// Principal point y, pixels.
    public var cy: Double
    /// Width of the pixel grid these values refer to.
    public var width: Int
    /// Height of the pixel grid these values refer to.
    public var height: Int

    /// Makes intrinsics from their values.
    public init(fx: Double, fy: Double, cx: Double, cy: Double, width: Int, height: Int) {
        self.fx = fx
        self.fy = fy
        self.cx = cx
        self.cy = cy
        self.width = width
        self.height = height
    }

    /// The same camera on a `width × height` grid: `fx, cx` scale by `width / self.width`,
    /// `fy, cy` by `height / self.height` (docs/lens-model.md).
    public func scaled(toWidth width: Int, height: Int) -> Intrinsics {
        let sx = Double(width) / Double(self.width)
        let sy = Double(height) / Double(self.height)
        return Intrinsics(fx: fx * sx, fy: fy * sy, cx: cx * sx, cy: cy * sy, width: width, height: height)
    }

    /// The 3×3 matrix `[[fx, 0, cx], [0, fy, cy], [0, 0, 1]]` as 9 numbers, column-major
    /// (`fx, 0, 0, 0, fy, 0, cx, cy, 1`), the order Open3D's `intrinsic_matrix` uses.
    public var columnMajor: [Double] { [fx, 0, 0, 0, fy, 0, cx, cy, 1] }

    /// Projects a camera-frame point to pixel coordinates.
    public func project(_ point: SIMD3<Double>) -> SIMD2<Double> {
        SIMD2(fx * point.x / point.z + cx, fy * point.y / point.z + cy)
    }

    /// The camera-frame point at pixel `(u, v)` and depth `z`.
    public func backProject(u: Double, v: Double, depth z: Double) -> SIMD3<Double> {
        SIMD3((u - cx) * z / fx, (v - cy) * z / fy, z)
    }
}
