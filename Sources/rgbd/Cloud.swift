import ArgumentParser
import RGBDKit

extension CameraAxes: ExpressibleByArgument {}

/// `rgbd cloud`: colored PLY point clouds from captures.
struct Cloud: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Back-project captures to colored PLY point clouds (meters); merge scans into one cloud.",
        discussion: """
        SCANS (a Stray Scanner folder, a Record3D .r3d file or EXR + JPG folder, \
        recognised by content; docs/scans.md) give one merged cloud each: every frame's \
        depth pixels of at least --min-confidence (default 2, ARKit's "high"; frames \
        without confidence keep all) within the depth range and past the flying-pixel \
        filter become points in the scan's world (the frame's pose applied to its \
        camera-frame point), colored by the frame's own color averaged over the depth \
        pixel's footprint, then thinned to one averaged point per --voxel cell (default \
        0.01 m). --every N takes every N-th frame. Memory follows the occupied cells, not \
        the number of frames. On a terminal a status line shows frames done, rate and \
        time left.

        Each capture is rectified first (as `rgbd rectify` does), then every depth pixel \
        (u, v) with depth Z becomes the point X = (u - cx) Z / fx, Y = (v - cy) Z / fy, Z in \
        meters, with the intrinsics of the rectified depth map: the OpenCV camera frame \
        (x right, y down, z forward), or (X, -Y, -Z) with --axes opengl.

        A point's color is the rectified color image averaged over the depth pixel's \
        footprint (the color image is several times larger than the depth map), not a \
        single color pixel.

        Two stages use a relative depth step, each with its own option. Rectification \
        (--max-blend-step, as in rgbd rectify) interpolates depth only between neighbors \
        whose depths differ by less than that fraction. The point filter, after it, \
        drops "flying pixels": a point whose depth differs from one of its 4 neighbors' \
        by more than --flying-pixel-step times its depth (default 0.05 = 5 %) lies on a \
        depth discontinuity, where sensors produce points between foreground and \
        background. --keep-edges turns the filter off. Holes give no points.

        Depth comes from the JSON, else the depth image it names, else NAME.depth.tiff or \
        NAME.depth.png beside it (as in rgbd rectify). 0, negatives, null, NaN and depths \
        beyond --max-valid-depth (default 1000 m; markers such as 9999) are holes, never \
        points; how many were discarded is reported.

        --upright turns each capture's cloud as its photo asks to be shown (EXIF \
        Orientation, HEIF irot): the same points turned about the optical axis, so that \
        +y is down in the upright picture (as rgbd rectify --upright's intrinsics).

        Output: PLY 1.0, binary little-endian (or --ascii), vertex properties float x y z, \
        uchar red green blue, and float nx ny nz with --normals (from the depth grid's \
        neighbors, oriented toward the camera). Header comments give the units, frame, \
        intrinsics and source. OUT is a directory (NAME.ply per capture) or, for a single \
        capture, a path ending in .ply. Files appear only when complete.
        """)

    @OptionGroup var captures: CaptureInputs

    @Option(name: [.short, .customLong("output")], help: "Output directory, or a .ply path for a single capture.",
            completion: .file())
    var output: String

    @Option(help: "Output frame: opencv (x right, y down, z forward) or opengl (X, -Y, -Z).")
    var axes: CameraAxes = .opencv

    @Option(parsing: .unconditional, help: "Drop points nearer than this many meters.")
    var minDepth: Float = 0

    @Option(parsing: .unconditional, help: "Drop points farther than this many meters.")
    var maxDepth: Float = .infinity

    @Option(parsing: .unconditional, help: "Keep every N-th depth pixel in each direction.")
    var stride: Int = 1

    @Option(parsing: .unconditional, help: "Point filter: drop a point whose depth differs from a neighbor's by more than this fraction of its depth.")
    var flyingPixelStep: Float = 0.05

    @Flag(help: "Point filter off: keep points on depth discontinuities (flying pixels).")
    var keepEdges = false

    @Flag(help: "Add normals (nx, ny, nz) from the depth grid, oriented toward the camera.")
    var normals = false

    @Flag(help: "Write ASCII PLY instead of binary.")
    var ascii = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Scans: thinning grid cell, meters; one averaged point per occupied cell (0 keeps every point).", valueName: "meters"))
    var voxel: Double = 0.01

    @Option(parsing: .unconditional, help: ArgumentHelp("Scans: use every N-th frame.", valueName: "N"))
    var every: Int = 1

    @Option(parsing: .unconditional, help: ArgumentHelp("Scans: keep depth of at least this ARKit confidence (0 low, 1 medium, 2 high).", valueName: "level"))
    var minConfidence: Int = 2

    @Flag(help: "Captures: turn the cloud as the photo asks to be shown (EXIF orientation, HEIF rotation); default: as stored.")
    var upright = false

    @OptionGroup var reading: ReadingOptions

    @OptionGroup var reporting: ReportingOptions

    func validate() throws {
        if stride < 1 { throw ValidationError("--stride must be at least 1") }
        if !(minDepth >= 0) || !(maxDepth > minDepth) { throw ValidationError("need 0 <= --min-depth < --max-depth") }
        if !(flyingPixelStep > 0) { throw ValidationError("--flying-pixel-step must be positive") }
        if !(voxel >= 0 && voxel.isFinite) { throw ValidationError("--voxel must be 0 or a positive number of meters") }
        if every < 1 { throw ValidationError("--every must be at least 1") }
        if !(0...2).contains(minConfidence) { throw ValidationError("--min-confidence must be 0, 1 or 2") }
    }

    func run() throws {
        var options = PointCloudOptions()
        options.minDepth = minDepth
        options.maxDepth = maxDepth
        options.stride = stride
        options.dropEdges = !keepEdges
        options.edgeThreshold = flyingPixelStep
        options.normals = normals
        options.axes = axes
        let encoding: PLYWriter.Encoding = ascii ? .ascii : .binaryLittleEndian
        // Scans are merged into one cloud each; the other inputs are captures.
        let (scenes, captureInputs) = SceneInputs.split(captures.inputs)
        var sceneFailures = 0
        if !scenes.isEmpty {
            var sceneOptions = SceneCloudOptions()
            sceneOptions.points = options
            sceneOptions.voxel = voxel
            sceneOptions.every = every
            sceneOptions.minConfidence = UInt8(minConfidence)
            sceneFailures = SceneCloudCommand(options: sceneOptions, encoding: encoding, quiet: reporting.quiet)
                .run(scenes, output: output)
            guard !captureInputs.isEmpty else {
                if sceneFailures > 0 { throw ExitCode(1) }
                return
            }
        }
        var captures = captures
        captures.inputs = captureInputs
        let singleFile = output.lowercased().hasSuffix(".ply")
        let rectifier = reading.rectifier, readingOptions = reading.reading
        let batch = reporting.batch(captures)
        let path = { (item: CaptureDiscovery.Item) in singleFile ? output : Path.join(item.outputDirectory(under: output), "\(Path.stem(item.json)).ply") }
        let single = singleFile ? "a .ply output path takes a single capture; give a directory" : nil
        var saidRelative = false
        let failures = try batch.run(single: single, directory: singleFile ? Path.directory(of: output) : output,
                                     outputs: { [path($0)] }) { item, stageTimings in
            let result = try RectifyPipeline.pointCloud(
                json: item.json, image: item.image, rectifier: rectifier, options: options,
                reading: readingOptions, upright: upright, timings: stageTimings)
            for warning in result.warnings { Report.warning(warning) }
            let relative = result.metadata.portrait?.isRelative == true
            // Said once per run on stderr (and in each such cloud's PLY header).
            if relative, !saidRelative {
                Report.warning("\(item.json): \(PortraitDepth.relativeNote)")
                saidRelative = true
            }
            try result.output.write(to: path(item), source: item.json, encoding: encoding,
                            note: relative ? PortraitDepth.relativeNote : nil, timings: stageTimings)
            guard let cause = result.output.emptyCause else { return .done }
            Report.warning("\(item.json): \(path(item)) holds no point: \(emptyReason(cause))")
            return .empty
        }
        if failures + sceneFailures > 0 { throw ExitCode(1) }
    }

    /// Which option or stage left a cloud empty, in this command's terms.
    func emptyReason(_ cause: PointCloud.EmptyCause) -> String {
        switch cause {
        case .noDepth:
            return "the rectified depth map has no depth"
        case .depthRange(let nearest, let farthest):
            let range = "--min-depth \(minDepth)" + (maxDepth.isFinite ? " to --max-depth \(maxDepth)" : "")
            return "none of its depths (\(nearest) to \(farthest) m) lies within \(range)"
        case .stride:
            return "--stride \(stride) samples only holes"
        case .edges:
            return "the flying-pixel filter (--flying-pixel-step \(flyingPixelStep)) dropped every point; --keep-edges keeps them"
        }
    }
}
