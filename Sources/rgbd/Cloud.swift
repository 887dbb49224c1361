import ArgumentParser
import RGBDKit

extension CameraAxes: ExpressibleByArgument {}
extension WorldFrame.Kind: ExpressibleByArgument {}

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
        0.01 m). With --normals each point carries the mean of its frames' normals (each \
        from that frame's depth grid, toward its camera; zero where no frame gave one). --every N takes every N-th \
        frame. --axes, --upright and --image apply to captures and are refused for scans. \
        A scene of registered captures placed with --frame enu can be written with --crs. \
        Memory follows the occupied cells, not the number of frames. On a terminal a status line shows frames done, rate and \
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

        --frame level or enu places each capture's points by its photo's EXIF (Apple's \
        accelerometer vector for gravity; GPS position and compass heading for enu; a \
        magnetic heading is used with a warning) and a scan's points by its gravity-aligned \
        world (Stray Scanner's; a Record3D file's when its poses are ARKit's as tracked, \
        which rgbd info says; one re-based on its first frame is refused), and a scene of \
        registered captures (rgbd register) by the first of its photos whose EXIF has what \
        the frame needs; the transform, the \
        geodetic origin and what they rest on are written in the header comments \
        (docs/geo.md). A capture whose photo lacks what the frame needs fails with a message \
        naming the photo.
        --upright turns each capture's cloud as its photo asks to be shown (EXIF \
        Orientation, HEIF irot): the same points turned about the optical axis, so that \
        +y is down in the upright picture (as rgbd rectify --upright's intrinsics).

        Output: PLY 1.0, binary little-endian (or --ascii), vertex properties float x y z, \
        uchar red green blue, and float nx ny nz with --normals (from the depth grid's \
        neighbors, oriented toward the camera). Header comments give the units, frame, \
        intrinsics and source. OUT is a directory (NAME.ply per capture) or, for a single \
        capture, a path ending in .ply. Files appear only when complete.

        LAS: an OUT ending in .las (or --format las, NAME.las per capture) writes LAS 1.4 \
        instead (point format 7: coordinates at 0.1 mm with an offset, 16-bit RGB), the \
        format GIS tools read. With --frame enu, --crs EPSG:NNNN writes the coordinates in \
        that system (through PROJ; e.g. a UTM zone), heights above mean sea level (the \
        EGM96 geoid when PROJ's grid is installed), and the system's WKT in the file \
        (docs/geo.md).
        """)

    @OptionGroup var captures: CaptureInputs

    @Option(help: ArgumentHelp("Output format: ply or las (default: from OUT's extension, else ply).", valueName: "format"))
    var format: String?

    @Option(help: ArgumentHelp("With --frame enu and LAS output: write coordinates in this coordinate system (through PROJ, e.g. EPSG:32632 for UTM zone 32N), its WKT in the file; heights above mean sea level.", valueName: "crs"))
    var crs: String?

    @Option(name: [.short, .customLong("output")], help: "Output directory, or a .ply (.las) path for a single capture.",
            completion: .file())
    var output: String

    @Option(help: "Output frame: opencv (x right, y down, z forward) or opengl (X, -Y, -Z).")
    var axes: CameraAxes = .opencv

    @OptionGroup var placement: WorldFrameOptions

    /// `--frame`.
    var frame: WorldFrame.Kind { placement.frame }

    @OptionGroup var depth: DepthFilterOptions

    @Option(parsing: .unconditional, help: "Keep every N-th depth pixel in each direction.")
    var stride: Int = 1

    @Flag(help: "Add normals (nx, ny, nz) from the depth grid, oriented toward the camera.")
    var normals = false

    @Flag(help: "Write ASCII PLY instead of binary.")
    var ascii = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Scans: thinning grid cell, meters; one averaged point per occupied cell (0 keeps every point).", valueName: "meters"))
    var voxel: Double = 0.01

    @OptionGroup var selection: SceneSelectionOptions

    @OptionGroup var poseSource: ScenePoseOptions

    @Flag(help: "Captures: turn the cloud as the photo asks to be shown (EXIF orientation, HEIF rotation); default: as stored.")
    var upright = false

    @OptionGroup var reading: ReadingOptions

    @OptionGroup var reporting: ReportingOptions

    func validate() throws {
        try checkOutputPath(output, writes: ["ply", "las"])
        if stride < 1 { throw ValidationError("--stride must be at least 1") }
        if !(voxel >= 0 && voxel.isFinite) { throw ValidationError("--voxel must be 0 or a positive number of meters") }
        if frame != .camera && axes != .opencv { throw ValidationError("--axes opengl applies to --frame camera only") }
        if frame != .camera && upright { throw ValidationError("--upright applies to --frame camera only") }
        if let format, format != "ply", format != "las" { throw ValidationError("--format is ply or las, got \(format)") }
        if outputExtension == "las" && (normals || ascii) { throw ValidationError("LAS output has no normals and no ASCII form") }
        if let crs {
            guard frame == .enu, outputExtension == "las" else {
                throw ValidationError("--crs needs --frame enu and LAS output (a .las path or --format las)")
            }
            // A system PROJ does not know is a usage error; PROJ missing is not (exit 1).
            do { _ = try Projection(crs: crs) } catch let error as RGBDError where error.kind == .io {
                Report.error(error)
                throw ExitCode(1)
            } catch {
                throw ValidationError("\(error)")
            }
        }
    }

    func run() throws {
        var options = PointCloudOptions()
        depth.apply(to: &options)
        options.stride = stride
        options.normals = normals
        options.axes = axes
        let encoding: PLYWriter.Encoding = ascii ? .ascii : .binaryLittleEndian
        // Scans are merged into one cloud each; the other inputs are captures.
        let (scenes, captureInputs) = SceneInputs.split(captures.inputs)
        var sceneFailures = 0
        if !scenes.isEmpty {
            // What applies to single captures only is refused for scans, never ignored.
            var notForScans: [String] = []
            if axes != .opencv { notForScans.append("--axes (a scan's points are in its world, not a camera frame)") }
            if upright { notForScans.append("--upright (a scan's world has its own up: --frame level)") }
            if captures.image != nil { notForScans.append("--image") }
            if !notForScans.isEmpty {
                Report.error("\(notForScans.joined(separator: ", ")) applies to captures, not to scans: \(scenes.joined(separator: ", "))")
                throw ExitCode(1)
            }
            var sceneOptions = SceneCloudOptions()
            sceneOptions.points = options
            sceneOptions.voxel = voxel
            sceneOptions.every = selection.every
            sceneOptions.minConfidence = selection.minConfidence
            sceneFailures = SceneCloudCommand(options: sceneOptions, frame: frame, encoding: encoding, quiet: reporting.quiet, poses: poseSource,
                                              refining: Refine.options(depth: depth, confidence: selection.minConfidence, memory: nil),
                                              las: outputExtension == "las", crs: crs)
                .run(scenes, output: output)
            guard !captureInputs.isEmpty else {
                if sceneFailures > 0 { throw ExitCode(1) }
                return
            }
        }
        var captures = captures
        captures.inputs = captureInputs
        let singleFile = try checkOutputPath(output, writes: ["ply", "las"])
        let rectifier = reading.rectifier, readingOptions = reading.reading
        let batch = reporting.batch(captures)
        let ext = outputExtension
        let path = { (item: CaptureDiscovery.Item) in singleFile ? output : Path.join(item.outputDirectory(under: output), "\(Path.stem(item.json)).\(ext)") }
        let single = singleFile ? "a .\(ext) output path takes a single capture; give a directory" : nil
        var saidRelative = false
        let failures = try batch.run(single: single, directory: singleFile ? Path.directory(of: output) : output,
                                     outputs: { [path($0)] }) { item, stageTimings in
            let result = try RectifyPipeline.pointCloud(
                json: item.json, image: item.image, rectifier: rectifier, options: options,
                reading: readingOptions, frame: frame, upright: upright, timings: stageTimings)
            for warning in result.warnings { Report.warning(warning) }
            let relative = result.metadata.portrait?.isRelative == true
            // Said once per run on stderr (and in each such cloud's PLY header).
            if relative, !saidRelative {
                Report.warning("\(item.json): \(PortraitDepth.relativeNote)")
                saidRelative = true
            }
            if ext == "las" {
                var (positions, colors) = result.output.positionsAndColors()
                var wkt: String? = nil
                if let crs {
                    let projection = try Projection(crs: crs)
                    let projected = try projection.project(enu: positions, frame: result.output.options.frame)
                    positions = projected.positions
                    wkt = projection.wkt
                    for note in projected.notes where note.hasPrefix("no geoid") { Report.warning("\(item.json): \(note)") }
                }
                try LASWriter.write(path: path(item), positions: positions, colors: colors, wkt: wkt)
            } else {
                try result.output.write(to: path(item), source: item.json, encoding: encoding,
                                        note: relative ? PortraitDepth.relativeNote : nil, timings: stageTimings)
            }
            guard let cause = result.output.emptyCause else { return .done }
            Report.warning("\(item.json): \(path(item)) holds no point: \(emptyReason(cause))")
            return .empty
        }
        if failures + sceneFailures > 0 { throw ExitCode(1) }
    }

    /// `las` or `ply`: `--format`, else OUT's extension, else `ply`.
    var outputExtension: String {
        format ?? (output.lowercased().hasSuffix(".las") ? "las" : "ply")
    }

    /// Which option or stage left a cloud empty, in this command's terms.
    func emptyReason(_ cause: PointCloud.EmptyCause) -> String {
        switch cause {
        case .noDepth:
            return "the rectified depth map has no depth"
        case .depthRange(let nearest, let farthest):
            let range = "--min-depth \(depth.minDepth)" + (depth.maxDepth.isFinite ? " to --max-depth \(depth.maxDepth)" : "")
            return "none of its depths (\(nearest) to \(farthest) m) lies within \(range)"
        case .stride:
            return "--stride \(stride) samples only holes"
        case .edges:
            return "the flying-pixel filter (--flying-pixel-step \(depth.flyingPixelStep)) dropped every point; --keep-edges keeps them"
        }
    }
}
