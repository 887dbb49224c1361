/// The layout of Open3D's reconstruction system (`examples/python/reconstruction_system`):
/// `color/NNNNNN.jpg` and `depth/NNNNNN.png` paired by name (16-bit millimeters, 0 =
/// unknown, the color images' size), `camera_intrinsic.json`, `trajectory.log` and
/// `config.json`.
///
/// Conventions (Open3D's `PinholeCameraIntrinsic` and `.log` trajectories): pixel
/// centres at integer coordinates, as rgbd's, so the intrinsics are written as they are;
/// `intrinsic_matrix` column by column; the log holds, per frame, a line `i i i+1` and
/// the **camera-to-world** 4×4 rows (Open3D's camera axes are OpenCV's). One camera for
/// all frames.
struct Open3DWriter: SceneLayoutWriter {
    var layout: SceneLayout { SceneLayout(colorFolder: "color", depthFolder: "depth", depthScale: 1000, singleCamera: true) }

    func fileStem(_ info: SceneFrameInfo, ordinal: Int, seconds: Double) -> String { ExportFiles.padded(ordinal, 6) }

    func finish(_ frames: [ExportedFrame], cloud: SceneCloud?, scene: Scene, options: SceneExportOptions,
                into folder: StagedDirectory) throws {
        guard let k = frames.first?.camera else { return }
        let intrinsic = JSONValue.object([
            .init("width", .int(k.width)), .init("height", .int(k.height)),
            .init("intrinsic_matrix", .array(k.columnMajor.map { .number($0) })),
        ])
        try folder.write("camera_intrinsic.json", text: intrinsic.text() + "\n")
        var log = ""
        for (i, frame) in frames.enumerated() {
            log += "\(i) \(i) \(i + 1)\n" + ExportFiles.matrixLines(frame.info.pose)
        }
        try folder.write("trajectory.log", text: log)
        let destination = FileSystem.canonicalPath(folder.destination) ?? folder.destination
        let config = JSONValue.object([
            .init("name", .string("rgbd export of \(scene.path)")),
            .init("path_dataset", .string(destination)),
            .init("path_intrinsic", .string(Path.join(destination, "camera_intrinsic.json"))),
            .init("depth_scale", .number(layout.depthScale)),
            .init("depth_min", .number(0.1)),
            .init("depth_max", .number(4.0)),
            .init("max_depth", .number(4.0)),
            .init("voxel_size", .number(0.05)),
            .init("tsdf_cubic_size", .number(3.0)),
            .init("python_multi_threading", .bool(false)),
        ])
        try folder.write("config.json", text: config.text() + "\n")
    }
}
