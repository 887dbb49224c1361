/// How a surface's axes become those of glTF (and of OBJ as Blender and most viewers read
/// it): +Y up, right-handed, meters. A rotation (a signed permutation of the axes), so
/// lengths, normals and the triangles' turning are kept.
public struct YUpAxes: Equatable, Sendable {
    /// The rotation's rows: the new x, y, z as combinations of the old ones.
    public var rows: [SIMD3<Float>]
    /// The mapping in words, with what "up" is (written in the files).
    public var description: String
    /// Whether +Y is gravity's up (false: the first camera's up, or the tag's).
    package var gravityUp: Bool

    /// The mapping for a surface in `world`, placed in `frame`:
    /// - `level` and `enu` (z up): (x, y, z) → (x, z, −y), so their up is +Y;
    /// - a gravity-aligned scan's own world (ARKit's, +y up): unchanged;
    /// - a world that is not gravity-aligned (a Record3D first camera's, a tag's, both with
    ///   OpenCV's axes: x right, y down, z forward): (x, y, z) → (x, −y, −z), OpenGL's camera
    ///   axes, so +Y is that camera's up, not gravity's.
    public init(world: SceneWorld, frame: WorldFrame.Kind) {
        switch (frame, world) {
        case (.level, _), (.enu, _):
            rows = [SIMD3(1, 0, 0), SIMD3(0, 0, 1), SIMD3(0, -1, 0)]
            description = "rgbd's \(frame.rawValue) frame (z up) turned so that its +z is +Y: (x, y, z) -> (x, z, -y); +Y is gravity's up"
            gravityUp = true
        case (.camera, .gravityAligned):
            rows = [SIMD3(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1)]
            description = "the scan's gravity-aligned world (ARKit's: +y up, right-handed) as it is: (x, y, z) -> (x, y, z); +Y is gravity's up"
            gravityUp = true
        case (.camera, _):
            rows = [SIMD3(1, 0, 0), SIMD3(0, -1, 0), SIMD3(0, 0, -1)]
            description = "the scan's world (\(world.rawValue); OpenCV axes: x right, y down, z forward) turned to OpenGL's camera axes: (x, y, z) -> (x, -y, -z); +Y is that camera's up, not gravity's"
            gravityUp = false
        }
    }

    /// `p` in the new axes.
    @inline(__always) public func apply(_ p: SIMD3<Float>) -> SIMD3<Float> {
        SIMD3((rows[0] * p).sum(), (rows[1] * p).sum(), (rows[2] * p).sum())
    }

    /// The rotation, row-major (for the files).
    public var matrix: [Double] { rows.flatMap { [Double($0.x), Double($0.y), Double($0.z)] } }
}
