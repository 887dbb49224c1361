import RGBDKit

/// Writing a scan as a Stray Scanner folder.
extension SyntheticScan {
    /// Writes `rgb.mp4` (frames piped raw to the `ffmpeg` tool), `depth/NNNNNN.png|npy`,
    /// `confidence/NNNNNN.png`, `camera_matrix.csv`, `odometry.csv` and `imu.csv` into
    /// `directory`. Poses: camera-to-world, OpenCV camera axes, ARKit world, quaternion
    /// `qx, qy, qz, qw` (Hamilton).
    func writeStray(to directory: String, odometry: StrayOdometry, depth: StrayDepth, video: StrayVideo,
                    imuInG: Bool) throws {
        guard colorWidth % 2 == 0, colorHeight % 2 == 0 else {
            throw RGBDError(.invalidArgument, "the video (yuv420p) needs an even width and height, got \(colorWidth)×\(colorHeight)")
        }
        try FileSystem.createDirectory(Path.join(directory, "depth"))
        try FileSystem.createDirectory(Path.join(directory, "confidence"))
        let encoder = try ScanChildProcess(ffmpegArguments(output: Path.join(directory, "rgb.mp4"), video: video))
        do {
            for i in 0..<frameCount {
                let hasDepth = !options.framesWithoutDepth.contains(i)
                let frame = render(frame: i, depthSize: depthSize(frame: i, portrait: false))
                try frame.color.samples.withUnsafeBytes { try encoder.send($0) }
                guard hasDepth else { continue }
                let name = String(repeating: "0", count: max(0, 6 - String(i).count)) + String(i)
                let millimetres = frame.depth.samples.map { d -> UInt16 in
                    guard d.isFinite, d > 0 else { return 0 }
                    return UInt16(min(65535, (Double(d) * 1000).rounded()))
                }
                let w = frame.depth.width, h = frame.depth.height
                switch depth {
                case .png:
                    try ScanOutputFile.write(Path.join(directory, "depth/\(name).png"),
                                             PNGCodec.encodeGray16(width: w, height: h, samples: millimetres))
                case .npy:
                    try ScanOutputFile.write(Path.join(directory, "depth/\(name).npy"),
                                             ScanNPY.encodeUInt16(width: w, height: h, values: millimetres))
                }
                try ScanOutputFile.write(Path.join(directory, "confidence/\(name).png"),
                                         ScanPNG.gray8(width: w, height: h, values: frame.confidence.samples))
            }
        } catch {
            _ = try? encoder.finish()
            throw error
        }
        try encoder.finish()

        let k = colorCamera()
        let matrix = [[k.fx, 0, k.cx], [0, k.fy, k.cy], [0, 0, 1]]
        try ScanOutputFile.write(Path.join(directory, "camera_matrix.csv"),
                                 Array(matrix.map { $0.map { "\($0)" }.joined(separator: ",") + "\n" }.joined().utf8))
        try ScanOutputFile.write(Path.join(directory, "odometry.csv"), Array(strayOdometry(odometry).utf8))
        try ScanOutputFile.write(Path.join(directory, "imu.csv"), Array(strayIMU(inG: imuInG).utf8))
    }

    /// The `ffmpeg` command that reads raw RGB frames on its standard input and writes the
    /// video: HEVC (`libx265`, `hvc1`) or H.264 (`libx264`), yuv420p, constant quality,
    /// without version strings or dates (`+bitexact`, no metadata).
    func ffmpegArguments(output: String, video: StrayVideo) -> [String] {
        var arguments = [options.ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                         "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "\(colorWidth)x\(colorHeight)",
                         "-framerate", scanNumber(trajectory.fps), "-i", "pipe:0"]
        switch video {
        case .hevc:
            arguments += ["-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "log-level=error"]
        case .h264:
            arguments += ["-c:v", "libx264"]
        }
        arguments += ["-preset", options.videoPreset, "-crf", String(options.videoQuality), "-pix_fmt", "yuv420p",
                      "-map_metadata", "-1", "-fflags", "+bitexact", "-flags:v", "+bitexact", output]
        return arguments
    }

    /// `odometry.csv` in one of its variants.
    func strayOdometry(_ variant: StrayOdometry) -> String {
        let k = colorCamera()
        var lines: [String] = []
        switch variant {
        case .legacy: break
        case .v9: lines.append("timestamp, frame, x, y, z, qx, qy, qz, qw")
        case .v15: lines.append("timestamp, frame, x, y, z, qx, qy, qz, qw, fx, fy, cx, cy, distortion_center_x, distortion_center_y")
        }
        let recorded = recordedPoses()
        for i in 0..<frameCount {
            let pose = recorded[i]
            let q = SynthQuaternion(pose.rotation)
            let t = pose.translation
            let poseColumns = [t.x, t.y, t.z, q.x, q.y, q.z, q.w].map { "\($0)" }
            let frame = String(repeating: "0", count: max(0, 6 - String(i).count)) + String(i)
            switch variant {
            case .legacy:
                lines.append(poseColumns.joined(separator: ", "))
            case .v9:
                lines.append((["\(trajectory.timestamp(frame: i))", frame] + poseColumns).joined(separator: ", "))
            case .v15:
                lines.append((["\(trajectory.timestamp(frame: i))", frame] + poseColumns
                    + [k.fx, k.fy, k.cx, k.cy].map { "\($0)" } + ["", ""]).joined(separator: ", "))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Standard gravity, m/s².
    static let standardGravity = 9.80665

    /// `imu.csv` at 100 Hz over the frames' time span. The accelerometer as CoreMotion
    /// reports it: gravity minus the device's acceleration (a phone at rest reads the vector
    /// pointing to the floor, 1 g long), in m/s² or in g; the gyroscope in rad/s. Both in
    /// the iPhone's device axes (x right and y up on the screen held in portrait, z out of
    /// the screen; the back camera's landscape image has x = −device y, up = device x).
    func strayIMU(inG: Bool) -> String {
        var lines = ["timestamp, a_x, a_y, a_z, alpha_x, alpha_y, alpha_z"]
        let span = Double(max(0, frameCount - 1)) / trajectory.fps
        let rate = 100.0, h = 1e-3
        let gravity = SIMD3(0, -Self.standardGravity, 0)
        let count = Int((span * rate).rounded(.down)) + 1
        for n in 0..<count {
            let s = Double(n) / rate
            let pose = trajectory.pose(at: s)
            let before = trajectory.pose(at: s - h), after = trajectory.pose(at: s + h)
            let acceleration = (after.translation - 2 * pose.translation + before.translation) / (h * h)
            // Camera axes OpenGL (x right, y up, z backward) → device axes.
            let gl = pose.rotation * .flipYZ
            func device(_ v: SIMD3<Double>) -> SIMD3<Double> { SIMD3(v.y, -v.x, v.z) }
            var a = device(gl.transposed * (gravity - acceleration))
            if inG { a /= Self.standardGravity }
            let turn = SynthQuaternion((before.rotation * .flipYZ).transposed * (after.rotation * .flipYZ))
            let omega = device(turn.rotationVector / (2 * h))
            let values = [trajectory.startTime + s, a.x, a.y, a.z, omega.x, omega.y, omega.z]
            lines.append(values.map { "\($0)" }.joined(separator: ", "))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
