/// Where a scene's world is placed (`WorldFrame.Kind` for scans): the parts of
/// `WorldFrame` that know what a scene is.
extension WorldFrame {
    /// The frame `kind` for `scene`: for a scan, by its world (`forScene(_:world:file:)`);
    /// for a scene whose storage places its own frames (captures registered by their tags,
    /// `rgbd register`: `SceneStorage.worldFrame`), the storage's.
    ///
    /// - Throws: `RGBDError` naming the scene when no frame can be placed.
    public static func forScene(_ kind: Kind, scene: Scene) throws -> WorldFrame {
        if kind != .camera, let frame = try scene.storage.worldFrame(kind, scene: scene) { return frame }
        return try forScene(kind, world: scene.world, basis: scene.worldBasis, file: scene.path)
    }

    /// The frame `kind` for a scene whose world is `world`; `basis` (`Scene.worldBasis`)
    /// says what the world rests on, for the messages and the frame's basis.
    ///
    /// - Throws: `RGBDError` naming `file` for `level` on a world that is not gravity-aligned,
    ///   and for `enu` (scans carry no geodetic position).
    public static func forScene(_ kind: Kind, world: SceneWorld, basis: String? = nil, file: String) throws -> WorldFrame {
        switch kind {
        case .camera:
            return .camera
        case .level:
            guard world == .gravityAligned else {
                throw RGBDError(.invalidArgument, file: file,
                                "the level frame needs a gravity-aligned world, but this scan's world is \(world.rawValue)"
                                    + (basis.map { " (\($0))" } ?? ""),
                                argument: .frame)
            }
            // ARKit's world: x right, y up, z toward the viewer at the start → x, −z, y.
            var frame = WorldFrame(kind: .level, transform: Pose(row0: SIMD3(1, 0, 0), row1: SIMD3(0, 0, -1), row2: SIMD3(0, 1, 0),
                                                                 translation: .zero))
            frame.basis.append("gravity: the scan's gravity-aligned world (+y up), turned so that up is +z"
                               + (basis.map { "; world: \($0)" } ?? ""))
            return frame
        case .enu:
            throw RGBDError(.invalidArgument, file: file, "the enu frame needs a geodetic position and heading, which scans do not record",
                            argument: .frame)
        }
    }
}
