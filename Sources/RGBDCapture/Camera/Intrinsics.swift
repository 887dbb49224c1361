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

    /// The entries of a 3×3 intrinsic matrix, whichever way it was listed.
    package struct MatrixEntries: Equatable, Sendable {
        package var fx, fy, cx, cy: Double
        /// The entry right of `fx` (row 0, column 1): the skew.
        package var skew: Double
        /// The entry below `fx` (row 1, column 0): 0 in an upper-triangular matrix.
        package var lower: Double
    }

    /// Reads a 3×3 intrinsic matrix from its 9 numbers as listed (3 columns, or 3 rows,
    /// one after another): column-major when the last number of each group of three is
    /// 0, 0, 1 (the bottom row), else row-major when the last group is 0, 0, 1; nil when
    /// neither (no 0, 0, 1 row or column). Column-major wins when both hold, as Apple
    /// writes the matrix column by column. The one rule for the matrices of capture JSONs
    /// and of Portrait photos' metadata.
    package static func matrixEntries(_ m: [Double]) -> MatrixEntries? {
        guard m.count == 9 else { return nil }
        if m[2] == 0, m[5] == 0, m[8] == 1 {
            return MatrixEntries(fx: m[0], fy: m[4], cx: m[6], cy: m[7], skew: m[3], lower: m[1])
        }
        if m[6] == 0, m[7] == 0, m[8] == 1 {
            return MatrixEntries(fx: m[0], fy: m[4], cx: m[2], cy: m[5], skew: m[1], lower: m[3])
        }
        return nil
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
