/// The TUM RGB-D benchmark's layout: `rgb/T.png` and `depth/T.png` (16-bit, **5000 per
/// meter**, 0 = unknown, the color images' size) named by their timestamp `T` (seconds
/// since the scan's first frame, 6 decimals), the lists `rgb.txt` and `depth.txt`
/// (`timestamp path`), `groundtruth.txt` (`timestamp tx ty tz qx qy qz qw`:
/// camera-to-world, OpenCV camera axes, quaternion scalar last), `associations.txt`
/// (`timestamp rgb/… timestamp depth/…`, as `associate.py` writes it), and `camera.yaml`,
/// the intrinsics in the settings style of ORB-SLAM and its kin (`Camera.fx` …,
/// `DepthMapFactor: 5000`; pixel centres at integer coordinates). One camera for all frames.
struct TUMWriter: SceneLayoutWriter {
    var layout: SceneLayout { SceneLayout(colorFolder: "rgb", depthFolder: "depth", depthScale: 5000, singleCamera: true) }

    func fileStem(_ info: SceneFrameInfo, ordinal: Int, seconds: Double) -> String { Self.timestamp(seconds) }

    /// Seconds with six decimals, as the benchmark's files write them (`0.016667`).
    static func timestamp(_ seconds: Double) -> String {
        let micro = Int64(max(0, seconds * 1e6).rounded())
        return "\(micro / 1_000_000)." + ExportFiles.padded(Int(micro % 1_000_000), 6)
    }

    func finish(_ frames: [ExportedFrame], cloud: SceneCloud?, scene: Scene, options: SceneExportOptions,
                into folder: StagedDirectory) throws {
        guard let k = frames.first?.camera else { return }
        let header = "# rgbd export of \(scene.path)\n"
        var rgb = "# color images\n" + header + "# timestamp filename\n"
        var depth = "# depth maps (16-bit PNG, 5000 per meter, 0 = unknown)\n" + header + "# timestamp filename\n"
        var truth = "# ground truth trajectory: camera-to-world, OpenCV camera axes (x right, y down, z forward), meters\n"
            + header + "# poses \(scene.poseSource)\n# timestamp tx ty tz qx qy qz qw\n"
        var pairs = ""
        for frame in frames {
            let t = Self.timestamp(frame.seconds)
            let depthFile = frame.depthFile ?? ""
            rgb += "\(t) \(frame.colorFile)\n"
            depth += "\(t) \(depthFile)\n"
            let q = frame.info.pose.quaternion, p = frame.info.pose.translation
            truth += t + " " + [p.x, p.y, p.z, q.x, q.y, q.z, q.w].map(ExportFiles.number).joined(separator: " ") + "\n"
            pairs += "\(t) \(frame.colorFile) \(t) \(depthFile)\n"
        }
        try folder.write("rgb.txt", text: rgb)
        try folder.write("depth.txt", text: depth)
        try folder.write("groundtruth.txt", text: truth)
        try folder.write("associations.txt", text: pairs)
        let camera = """
            %YAML:1.0
            # rgbd export of \(scene.path): the camera of rgb/ and depth/ (pinhole, rectified,
            # pixel centres at integer coordinates, as OpenCV's)
            Camera.fx: \(ExportFiles.number(k.fx))
            Camera.fy: \(ExportFiles.number(k.fy))
            Camera.cx: \(ExportFiles.number(k.cx))
            Camera.cy: \(ExportFiles.number(k.cy))
            Camera.k1: 0.0
            Camera.k2: 0.0
            Camera.p1: 0.0
            Camera.p2: 0.0
            Camera.k3: 0.0
            Camera.width: \(k.width)
            Camera.height: \(k.height)
            Camera.fps: \(ExportFiles.number(scene.framesPerSecond ?? 30))
            Camera.RGB: 1
            DepthMapFactor: \(ExportFiles.number(layout.depthScale))

            """
        try folder.write("camera.yaml", text: camera)
    }
}
