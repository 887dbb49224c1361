/// nerfstudio's layout: `images/frame_NNNNN.jpg`, `depth/frame_NNNNN.png` (16-bit
/// millimeters, 0 = unknown; by default the depth map's own size, which nerfstudio's loader
/// resizes to the images' with nearest neighbours: `ExportDepthSize.sensor`),
/// `sparse_pc.ply` (the seed cloud) and `transforms.json`.
///
/// Conventions (nerfstudio's data conventions): `transform_matrix` is camera-to-world
/// with **OpenGL camera axes** (x right, y up, z backward); `fl_x fl_y cx cy w h` with
/// pixel centres at `i + 0.5`, so `cx = cx_rgbd + 0.5`; intrinsics at the top level when
/// every frame shares them, else per frame. A gravity-aligned world (ARKit's, +y up) is
/// turned to nerfstudio's +z up (`x, y, z → x, −z, y`, recorded as `applied_transform`)
/// and `orientation_override` is `none`; a world that is not gravity-aligned is left as
/// it is for nerfstudio's own orientation. With `--frame level` the poses arrive already
/// turned (`SceneExportOptions.frame`) and that transform is the one recorded. The seed
/// cloud is in the poses' world.
struct NerfstudioWriter: SceneLayoutWriter {
    var layout: SceneLayout { SceneLayout(colorFolder: "images", depthFolder: "depth", depthScale: 1000, seedCloud: true) }

    func fileStem(_ info: SceneFrameInfo, ordinal: Int, seconds: Double) -> String {
        "frame_" + ExportFiles.padded(ordinal + 1, 5)
    }

    /// ARKit's +y-up world to nerfstudio's +z-up: `(x, y, z) → (x, −z, y)`.
    static let zUp = Pose(row0: SIMD3(1, 0, 0), row1: SIMD3(0, 0, -1), row2: SIMD3(0, 1, 0), translation: .zero)

    func finish(_ frames: [ExportedFrame], cloud: SceneCloud?, scene: Scene, options: SceneExportOptions,
                into folder: StagedDirectory) throws {
        let placed = options.frame.kind != .camera
        let gravity = placed || scene.world == .gravityAligned
        // What turns the scene's world to +z up: applied here, or already by `options.frame`.
        let world = gravity && !placed ? Self.zUp : .identity
        let applied = placed ? options.frame.transform : Self.zUp
        let shared = frames.allSatisfy { SceneLayout.sameCamera($0.camera, frames[0].camera) }
        func camera(_ k: Intrinsics) -> [JSONValue.Member] {
            [.init("fl_x", .number(k.fx)), .init("fl_y", .number(k.fy)),
             .init("cx", .number(k.cx + 0.5)), .init("cy", .number(k.cy + 0.5)),
             .init("w", .int(k.width)), .init("h", .int(k.height))]
        }
        let entries: [JSONValue] = frames.map { frame in
            let c2w = world.composed(with: frame.info.pose).toOpenGLCamera()
            var members: [JSONValue.Member] = [.init("file_path", .string(frame.colorFile))]
            members.append(.init("transform_matrix", ExportFiles.rows(c2w)))
            if let depth = frame.depthFile { members.append(.init("depth_file_path", .string(depth))) }
            if !shared { members += camera(frame.camera) }
            members.append(.init("rgbd_frame", .int(frame.info.index)))
            members.append(.init("rgbd_time", .number(frame.seconds)))
            return .object(members)
        }
        var top: [JSONValue.Member] = [.init("camera_model", .string("PINHOLE"))]
        if shared, let first = frames.first { top += camera(first.camera) }
        if let cloud, cloud.count > 0 {
            try ExportFiles.writeCloud(cloud, transformed: world, colored: scene.colorSize != nil, normals: false,
                                       to: folder.path("sparse_pc.ply"), scene: scene)
            top.append(.init("ply_file_path", .string("sparse_pc.ply")))
        }
        if gravity {
            let t = applied.translation
            top.append(.init("applied_transform", .array(zip([applied.row0, applied.row1, applied.row2], [t.x, t.y, t.z]).map { r, ti in
                .array([.number(r.x), .number(r.y), .number(r.z), .number(ti)])
            })))
            top.append(.init("orientation_override", .string("none")))
        }
        top.append(.init("rgbd", .object([
            .init("source", .string(scene.path)),
            .init("poses", .string(scene.poseSource)),
            .init("world", .string(placed
                ? "frame \(options.frame.kind.rawValue): \(options.frame.axesDescription), from the scene's world (\(scene.world.rawValue)) by applied_transform; orientation_override none"
                : gravity
                ? "gravity-aligned: the scan's ARKit world (+y up) turned to +z up by applied_transform; orientation_override none"
                : "\(scene.world.rawValue): left to nerfstudio's orientation")),
            .init("pixels", .string("cx, cy in nerfstudio's convention: pixel centres at i + 0.5")),
            .init("depth", .string(options.depthGrid == .sensor
                ? "16-bit PNG, millimeters, 0 = unknown, the depth map's size (the images' where they are smaller): resized to the images with nearest neighbours, as nerfstudio loads it, each depth pixel is the ray through the middle of the image pixels it is resized to"
                : "16-bit PNG, millimeters, 0 = unknown, the images' size")),
            .init("frames", .int(frames.count)),
        ])))
        top.append(.init("frames", .array(entries)))
        try folder.write("transforms.json", text: JSONValue.object(top).text() + "\n")
    }
}
