import ArgumentParser
import RGBDKit
import RGBDSynth

/// `rgbd-synth scan`: a synthetic LiDAR scan in a Stray Scanner or Record3D layout.
struct Scan: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Write a synthetic LiDAR scan (video or images, depth, confidence, poses) and its ground truth.",
        discussion: """
        A camera walks a 5×3×4 m room (floor, walls, ceiling, three boxes; textures that \
        never repeat) along a smooth hand-held path, with poses in ARKit's world \
        (gravity-aligned, +y up, metres). Each frame is ray cast exactly: colour at --size, \
        depth (metres) at --depth-size with the same field of view, ARKit confidence \
        (2 high, 1 at grazing angles and depth edges, 0 beyond 4 m and in holes).

        Layouts:
          stray         Stray Scanner folder NAME/: rgb.mp4 (HEVC),
                        depth/NNNNNN.png (mm), confidence/, camera_matrix.csv,
                        odometry.csv (15 columns), imu.csv
          stray-v9      the same, odometry.csv of 9 columns (2021-08 to 2025)
          stray-legacy  the same, odometry.csv of 7 columns without a header
          stray-npy     depth/NNNNNN.npy (uint16 mm, before 2022-02), 9 columns
          r3d           Record3D archive NAME.r3d (a ZIP: metadata, rgbd/N.jpg,
                        rgbd/N.depth, rgbd/N.conf), the new metadata keys;
                        poses with OpenGL axes, re-based on the first frame
          r3d-old       the same with the old keys (h, w, fps, K, poses)
          r3d-exr       Record3D "EXR + JPG" folder NAME/: rgb/N.jpg,
                        depth/N.exr, metadata.json
        With --record3d-world arkit, the Record3D layouts' poses are in the room's \
        gravity-aligned world as ARKit tracks it (not re-based; the new keys' initPose \
        the identity), as in a real 2023 EXR + JPG export.

        The ground truth goes beside the scan, NAME.truth.json: the true camera-to-world \
        poses (OpenCV axes) in the layout's world, the transform from the room's world to \
        it, the intrinsics and the room. Stray videos are encoded by the ffmpeg tool \
        (on PATH). The default --size is 1920x1440 for Stray and 960x720 for Record3D. \
        Everything but the video is the same on every run.
        """)

    @Option(name: [.short, .customLong("output")], help: "Directory to write into.")
    var output: String

    @Option(help: "The scan's name: NAME/ or NAME.r3d, and NAME.truth.json.")
    var name = "scan"

    @Option(help: "stray, stray-v9, stray-legacy, stray-npy, r3d, r3d-old or r3d-exr (see above).")
    var layout = "stray"

    @Option(help: "Number of frames.")
    var frames = 60

    @Option(help: "Colour image size (landscape), WIDTHxHEIGHT.")
    var size: String?

    @Option(help: "Depth map size (landscape), WIDTHxHEIGHT.")
    var depthSize = "256x192"

    @Option(help: "Frames per second.")
    var fps: Double = 60

    @Flag(help: "Record3D: recorded in portrait (images stored taller than wide, 720x960 by default).")
    var portrait = false

    @Option(help: "Record3D: the poses' world, first-frame (re-based on the first frame) or arkit (the room's gravity-aligned world, not re-based).")
    var record3dWorld = "first-frame"

    @Flag(help: "Stray: encode the video as H.264 (libx264) instead of HEVC.")
    var h264 = false

    @Flag(help: "Stray: write imu.csv's accelerometer in g (2025+) instead of m/s².")
    var imuInG = false

    @Option(help: "Depth noise: standard deviation at 1 m, metres (grows with depth²).")
    var depthNoise: Double = 0

    @Flag(help: "Cut a few small holes (no depth, confidence 0) into every depth map.")
    var holes = false

    @Option(help: "Seed of the noise and holes.")
    var seed: UInt64 = 1

    @Option(help: "Frames written without depth or confidence, comma-separated (e.g. 3,17).")
    var withoutDepth = ""

    @Option(help: "Video quality (the encoder's CRF; lower is better).")
    var videoQuality = 18

    @Option(help: "Video encoder preset (ultrafast … veryslow).")
    var videoPreset = "fast"

    @Option(help: "Also write NAME.points.csv: this many points per frame on the true surfaces the frame sees (frame,x,y,z in the layout's world, r,g,b the colour rendered there), for checking exports by reprojection.")
    var truthPoints = 0

    @Flag(help: "Print five AprilTags (tag36h11, IDs 0 to 4, 20 cm) on the walls the default path faces, listed in the truth (for texturing: they decode only where the texture is sharp).")
    var wallTags = false

    @Flag(help: "The path makes one whole loop over the frames (it ends where it started), with a 1.2 s stretch facing one plain wall (for pose refinement).")
    var loop = false

    @Flag(help: "Write ARKit-like odometry error into the scan's poses (drift of position and heading, jitter, relocalisation jumps at 42 % and 73 % of the scan); the truth keeps the true poses and lists the recorded ones.")
    var poseDrift = false

    @Option(help: "Seed of the odometry error.")
    var poseSeed: UInt64 = 7

    @Option(help: "Record3D: a Python with the PyPI lzfse package to compress depth and confidence (default: uncompressed LZFSE blocks).")
    var lzfsePython: String?

    func validate() throws {
        guard frames > 0 else { throw ValidationError("--frames must be at least 1") }
        guard truthPoints >= 0 else { throw ValidationError("--truth-points must be 0 or more") }
        guard fps > 0 else { throw ValidationError("--fps must be positive") }
        _ = try parseSize(depthSize)
        if let size { _ = try parseSize(size) }
        let target = try self.target()
        if portrait, case .stray = target { throw ValidationError("--portrait applies to the Record3D layouts") }
        if record3dWorld != "first-frame", case .stray = target {
            throw ValidationError("--record3d-world applies to the Record3D layouts")
        }
        _ = try framesWithoutDepth()
    }

    /// The layout `--layout` and the flags name.
    func target() throws -> SyntheticScan.Layout {
        guard let world = SyntheticScan.Record3DWorld(rawValue: record3dWorld) else {
            throw ValidationError("--record3d-world is first-frame or arkit, got \(record3dWorld)")
        }
        switch layout {
        case "stray": return .stray(odometry: .v15, depth: .png, video: h264 ? .h264 : .hevc, imuInG: imuInG)
        case "stray-v9": return .stray(odometry: .v9, depth: .png, video: h264 ? .h264 : .hevc, imuInG: imuInG)
        case "stray-legacy": return .stray(odometry: .legacy, depth: .png, video: h264 ? .h264 : .hevc, imuInG: imuInG)
        case "stray-npy": return .stray(odometry: .v9, depth: .npy, video: h264 ? .h264 : .hevc, imuInG: imuInG)
        case "r3d": return .record3D(.r3d, keys: .new, portrait: portrait, world: world)
        case "r3d-old": return .record3D(.r3d, keys: .old, portrait: portrait, world: world)
        case "r3d-exr": return .record3D(.exr, keys: .new, portrait: portrait, world: world)
        default: throw ValidationError("--layout is stray, stray-v9, stray-legacy, stray-npy, r3d, r3d-old or r3d-exr, got \(layout)")
        }
    }

    /// The frame numbers of `--without-depth`.
    func framesWithoutDepth() throws -> Set<Int> {
        var frames = Set<Int>()
        for item in withoutDepth.split(separator: ",") {
            guard let i = Int(item.trimmingCharacters(in: " ")), i >= 0 else {
                throw ValidationError("--without-depth takes frame numbers separated by commas, got \(withoutDepth)")
            }
            frames.insert(i)
        }
        return frames
    }

    func run() throws {
        let target = try self.target()
        let (dw, dh) = try parseSize(depthSize)
        let isStray: Bool
        if case .stray = target { isStray = true } else { isStray = false }
        let (cw, ch) = try parseSize(size ?? (isStray ? "1920x1440" : "960x720"))
        var options = SyntheticScan.Options()
        options.depthNoise = depthNoise
        options.holes = holes
        options.seed = seed
        options.videoQuality = videoQuality
        options.videoPreset = videoPreset
        if let lzfsePython { options.lzfse = .python(lzfsePython) }
        options.framesWithoutDepth = try framesWithoutDepth()
        if poseDrift {
            var error = SyntheticPoseError()
            let seconds = Double(frames) / fps
            error.jumps = [0.42 * seconds, 0.73 * seconds]
            error.seed = poseSeed
            options.poseError = error
        }
        var scan = SyntheticScan(frameCount: frames, colorWidth: cw, colorHeight: ch, depthWidth: dw, depthHeight: dh,
                                 fps: fps, options: options)
        if loop { scan.trajectory = .loop(frames: frames, fps: fps) }
        if wallTags { scan.room.wallTags = SyntheticRoom.taggedWalls() }
        let path = Path.join(output, layout == "r3d" || layout == "r3d-old" ? "\(name).r3d" : name)
        let written = try scan.write(layout: target, to: path)
        print(written.scan)
        print(written.truth)
        if truthPoints > 0 {
            let pointsPath = Path.join(output, "\(name).points.csv")
            try scan.writeVisiblePoints(count: truthPoints, layout: target, to: pointsPath)
            print(pointsPath)
        }
    }
}

extension Substring {
    /// The text without leading and trailing `character`s.
    func trimmingCharacters(in character: Character) -> Substring {
        var s = self
        while s.first == character { s.removeFirst() }
        while s.last == character { s.removeLast() }
        return s
    }
}

