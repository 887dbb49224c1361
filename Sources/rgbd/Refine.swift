import ArgumentParser
import RGBDKit

/// `rgbd refine`: a scan's camera poses corrected against its depth, written as a TUM
/// trajectory.
struct Refine: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Correct a scan's camera poses against its depth (ARKit's drift and jumps); write them as a TUM trajectory.",
        discussion: """
        The poses an iPhone LiDAR app records drift by a centimeter or two per second and \
        jump when ARKit relocalises: fused meshes get doubled walls, NeRFs and splats blur. \
        rgbd refine aligns each frame's depth to the surface fused from the frames before \
        it (a TSDF, as rgbd fuse builds) and writes the corrected pose of every frame with \
        depth.

        Each frame starts from the previous frame's corrected pose moved by the recorded \
        motion between the two, and is aligned point to plane to the fused surface \
        (Gauss-Newton, Huber weights, the depth weighted as rgbd fuse weighs it). Where \
        the depth constrains the pose it decides, and a jump is undone; where it does not \
        (one plain wall lets the camera slide along it), the recorded motion is kept in \
        that direction. The first frame keeps its recorded pose: it anchors the scan's \
        world. Then a pose graph: every 10th frame is a keyframe; a keyframe that sees \
        again what one at least 120 frames earlier saw is aligned to a model of the frames \
        around that one (a loop closure), and Levenberg-Marquardt spreads any disagreement \
        along the least certain links; every frame takes its keyframes' correction. The \
        result is the same on any number of processors.

        Output OUT: the TUM trajectory format, which evo and the TUM tools read: '#' \
        comment lines (source, axes, summary), then one line per frame, 'timestamp tx ty \
        tz qx qy qz qw': seconds since the scan's first frame (6 decimals, the times rgbd \
        export's TUM groundtruth.txt uses), the camera-to-world translation in meters in \
        the scan's world, and the rotation as a unit quaternion, scalar last; OpenCV \
        camera axes (x right, y down, z forward). Give it to rgbd cloud, fuse, export or \
        preview with --poses OUT, or refine in the same run with --refine.

        --voxel sets the tracked model's voxel (default: rgbd fuse's automatic voxel, at \
        least 8 mm, or a fiftieth of the median depth for objects nearer than 40 cm); its \
        truncation is 5 cm (a tenth of the median depth nearer than 50 cm, at least 4 \
        voxels), the reach within which a frame is pulled onto the surface. \
        --min-confidence, the depth filters (--min-depth, --max-depth, \
        --flying-pixel-step, --keep-edges) and --max-memory are rgbd fuse's; --refine on \
        cloud, fuse and export refines with that command's own. A summary on stderr gives frames tracked, frames \
        where the depth left a direction free, jumps undone, keyframes and loop closures, \
        and the median distance of the frames' depth to the model before and after. Drift \
        that the depth cannot see (along a plain wall) stays unless a loop closure sees it. \
        On a terminal a status line shows frames done, rate and time left.
        """)

    @Argument(help: "Scans: Stray Scanner folders, Record3D .r3d files or EXR + JPG folders, folders rgbd register wrote.", completion: .file())
    var scans: [String]

    @Option(name: [.short, .customLong("output")], help: "Output trajectory .txt path (one scan) or directory (NAME.txt per scan).", completion: .file())
    var output: String

    @Option(parsing: .unconditional, help: ArgumentHelp("The tracked model's voxel edge, meters (0.001 to 1; default rgbd fuse's automatic voxel, at least 0.008 or a fiftieth of the median depth).", valueName: "meters"))
    var voxel: Double?

    @OptionGroup var depth: DepthFilterOptions

    @OptionGroup var confidence: SceneConfidenceOptions

    @OptionGroup var memory: VolumeMemoryOptions

    @Flag(name: [.short, .long], help: "Print nothing but errors and warnings.")
    var quiet = false

    func validate() throws {
        try checkOutputPath(output, writes: ["txt"])
        if let voxel, !(voxel >= 0.001 && voxel <= 1) { throw ValidationError("--voxel must be between 0.001 and 1 meters") }
    }

    /// The library's options for a refinement: the model fused as the command's own depth
    /// filters, confidence and memory say (rgbd refine's, or the command that takes
    /// `--refine`), with the tracked model's `voxel` (nil: chosen from the scan).
    static func options(voxel: Double? = nil, depth: DepthFilterOptions?, confidence: ConfidenceLevel = .high,
                        memory: VolumeMemoryOptions?) -> PoseRefinementOptions {
        var options = PoseRefinementOptions()
        options.model.voxel = voxel
        depth?.apply(to: &options.model.points)
        options.model.minConfidence = confidence
        options.model.memoryBudget = memory?.bytes
        return options
    }

    /// Refines `scene` with a status line on a terminal.
    static func refine(_ scene: Scene, path: String, options: PoseRefinementOptions, quiet: Bool) throws -> PoseRefinement {
        let progress = FrameProgress(name: Path.lastComponent(path) + " (refining poses)", quiet: quiet)
        defer { progress.finish() }
        return try PoseRefinement.run(scene, options: options,
                                      progress: { done, total in progress.update(done: done, total: total) },
                                      stage: { progress.stage($0.rawValue) })
    }

    func run() throws {
        let options = Self.options(voxel: voxel, depth: depth, confidence: confidence.minConfidence, memory: memory)
        let plan: SceneOutputPlan
        do {
            plan = try SceneOutputPlan(scenes: scans, output: output, suffix: "txt", fileExtensions: ["txt"])
        } catch {
            Report.error(error)
            throw ExitCode(1)
        }
        var failures = 0
        for (path, target) in plan.targets.map({ ($0.scene, $0.path) }) {
            let start = Host.monotonicSeconds()
            do {
                let scene = try SceneInputs.open(path, report: !quiet)
                let refined = try Self.refine(scene, path: path, options: options, quiet: quiet)
                try refined.trajectory(of: scene).write(to: target, comments: refined.comments(scene))
                if !quiet {
                    let seconds = Progress.format(seconds: Host.monotonicSeconds() - start, decimals: 2)
                    Terminal.printError("\(path): \(refined.summary) → \(target) (\(seconds) s)\n")
                }
            } catch {
                Report.error(error)
                failures += 1
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }
}

/// Which poses a scene command uses: the scan's, a trajectory file's, or refined first.
struct ScenePoseOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Scans: use the poses of this trajectory file (TUM format, as rgbd refine writes it) instead of the scan's, matched by time; frames without a pose are left out.", valueName: "file"), completion: .file())
    var poses: String?

    @Flag(help: "Scans: refine the poses against the depth first (as rgbd refine does, with this command's confidence and depth filters), then use them.")
    var refine = false

    func validate() throws {
        if poses != nil && refine { throw ValidationError("--poses and --refine exclude each other") }
    }
}

extension SceneInputs {
    /// Opens a scene with the poses `poses` asks for: a file's (a warning line for frames
    /// without a pose) or refined first with `refining` (the summary on stderr unless
    /// `quiet`).
    static func open(_ path: String, poses: ScenePoseOptions, refining: PoseRefinementOptions,
                     quiet: Bool = false) throws -> Scene {
        try openRefined(path, poses: poses, refining: refining, quiet: quiet).scene
    }

    /// `open(_:poses:refining:quiet:)`, and the refinement when the poses were refined.
    static func openRefined(_ path: String, poses: ScenePoseOptions, refining: PoseRefinementOptions,
                            quiet: Bool = false) throws -> (scene: Scene, refinement: PoseRefinement?) {
        let scene = try open(path, report: !quiet)
        if let file = poses.poses {
            let trajectory = try PoseTrajectory.read(file)
            let (replaced, missing) = try scene.replacingPoses(with: trajectory, source: "from \(file)", file: file)
            if !missing.isEmpty {
                let listed = missing.prefix(5).map(String.init).joined(separator: ", ") + (missing.count > 5 ? ", …" : "")
                Report.warning("\(path): \(missing.count) of \(scene.frames.count) frames have no pose in \(file) and are left out (frames \(listed))")
            }
            return (replaced, nil)
        }
        if poses.refine {
            let refined = try Refine.refine(scene, path: path, options: refining, quiet: quiet)
            if !quiet { Terminal.printError("\(path): poses refined: \(refined.summary)\n") }
            return (try refined.applied(to: scene), refined)
        }
        return (scene, nil)
    }
}
