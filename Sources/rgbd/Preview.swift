import ArgumentParser
import RGBDKit

/// `rgbd preview`: one labelled sheet per capture or scan to check it by looking.
struct Preview: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            abstract: "Draw a sheet per capture or scan: lens, rectified color and depth, alignment and cloud; a scan's trajectory, frames and merged cloud.",
            discussion: """
            For each capture NAME, NAME.preview.png (8-bit RGB) is written into the output \
            directory: a header with the file names, image sizes, intrinsics of the rectified \
            color and depth, and the lens table's length and sign, then six panels:

            \(HelpText.table(Self.panelTable))

            A SCAN (a Stray Scanner folder, a Record3D .r3d file or EXR + JPG folder, \
            recognised by content; docs/scans.md) gets NAME.preview.png too, NAME the \
            folder's or file's stem: a header (path, app and layout, frames, frame rate, \
            duration, color and depth sizes, world), then

            \(HelpText.table(Self.scanPanelTable))

            Panels show the images as stored (the sensor's orientation); --upright turns \
            them as the photo asks to be shown (EXIF orientation, HEIF rotation): the \
            captured and rectified color, depth and overlay turned, the clouds those of the \
            turned camera, the header's sizes and intrinsics the turned images'.

            With --placemarks places.csv, each place the photo's EXIF position and compass \
            heading put in view, and that its depth map does not hide, is labelled over the \
            rectified color: its name and distance, a line at its column (to a dot at its \
            row when the place's altitude and the photo's gravity give one). docs/geo.md.

            Captures and scans may be mixed in the inputs. Files appear only when \
            complete. A capture or scan that fails is reported on stderr (one line naming \
            the file) and the others are still processed; the exit status is 1 if any failed.
            """)
    }

    /// The sheet's panels, for the help table.
    static let panelTable: [(name: String, text: String)] = [
        ("captured color", "with the grid of the rectified image's straight lines as the lens bends them (the bending multiplied to be visible; the factor and the largest displacement in pixels are written) and the distortion center;"),
        ("rectified color", "the ideal pinhole image;"),
        ("rectified depth", "in the Turbo colormap from --min-depth to --max-depth (default: the 99th percentile rounded up), with a scale bar in meters; holes gray; depth range and the fraction of holes in this rectified depth map written (rgbd info counts the captured one's);"),
        ("depth over color", "the colormap blended over the gray rectified color, depth edges white: they should follow the edges of the color;"),
        ("point cloud", "from the camera (front) and from three quarters (turned left and from above), colored, with a depth buffer; magenta points are flying-pixel candidates (what rgbd cloud drops: a 4-neighbor's depth differs by more than --flying-pixel-step of its own)."),
    ]

    /// The scan sheet's panels, for the help table.
    static let scanPanelTable: [(name: String, text: String)] = [
        ("trajectory", "from above (down the world's up axis: +y for a gravity-aligned world, the x-z plane; for a world that is not, such as Record3D's, the first camera's -y, as the caption says) and from the side, framed on the path: the camera centres as a path, a frustum (the image corners at a fixed depth) every k-th camera, start green and end red, the world's axes and a scale bar of 1, 2 or 5 times a power of ten meters (10 cm for a close-up, 1 m for a room);"),
        ("merged cloud", "from above, framed on the cloud and the path, the camera path drawn on it: rgbd cloud's merge (high confidence where the frames have confidence maps, flying pixels dropped) on 2 cm cells, over at most 300 frames;"),
        ("frames", "--frames frames spread over the scan, each labelled with its number and time: color (when the scan has it), depth in Turbo on one scale for the strip (--min-depth to --max-depth, default the 99th percentile; holes gray) and confidence (0 low, 1 medium, 2 high in three colors; no such row when the frames have no confidence maps, as Record3D's EXR exports and registered scenes)."),
    ]

    @OptionGroup var captures: CaptureInputs

    @Option(name: [.short, .customLong("output")], help: "Output directory (created if missing).", completion: .directory)
    var output: String

    @Option(parsing: .unconditional, help: "Width of the sheet in pixels (\(PreviewLayout.minimumWidth) to \(PreviewLayout.maximumWidth)).")
    var width: Int = PreviewLayout.defaultWidth

    @Option(parsing: .unconditional, help: "Depth at the top of the color scale, meters (default: from the depth map).")
    var maxDepth: Float?

    @Option(parsing: .unconditional, help: "Depth at the bottom of the color scale, meters.")
    var minDepth: Float = 0

    @Option(parsing: .unconditional, help: "Mark a point as a flying-pixel candidate when a neighbor's depth differs by more than this fraction of its own.")
    var flyingPixelStep: Float = 0.05

    @Option(parsing: .unconditional, help: ArgumentHelp("Scans: frames in the sheet's strip, spread over the scan (1 to \(ScenePreviewLayout.maximumFrames)).", valueName: "N"))
    var frames: Int = 5

    @OptionGroup var reading: ReadingOptions

    @OptionGroup var poseSource: ScenePoseOptions

    @OptionGroup var reporting: ReportingOptions

    @OptionGroup var tagArguments: TagArguments

    @Option(help: ArgumentHelp("A CSV of places (name,latitude,longitude[,altitude]): each one in the photo's view (from its EXIF position and heading) and not hidden by its depth map is labelled over the rectified color with its name and distance, at its column (and row with altitude and gravity) (docs/geo.md).", valueName: "places.csv"), completion: .file())
    var placemarks: String?

    @Flag(help: "Captures: show every panel turned as the photo asks to be shown (EXIF orientation, HEIF rotation; mirroring orientations are left as stored, with a warning), a portrait photo in tall panels, the header's sizes and intrinsics those of the turned images; default: as stored.")
    var upright = false

    @Flag(help: "Do not look for AprilTags (by default each tag found is drawn over the rectified color: outline, ID, and its axes x red, y green, z blue into the tag).")
    var noTags = false

    var options: PreviewOptions {
        var options = PreviewOptions()
        options.width = width
        options.minDepth = minDepth
        options.maxDepth = maxDepth
        options.flyingPixelStep = flyingPixelStep
        options.rectifier = reading.rectifier
        options.tags = noTags ? nil : tagArguments.options
        options.upright = upright
        return options
    }

    func validate() throws {
        try checkOutputPath(output, writes: [])
        if width < PreviewLayout.minimumWidth || width > PreviewLayout.maximumWidth {
            throw ValidationError("--width must be between \(PreviewLayout.minimumWidth) and \(PreviewLayout.maximumWidth)")
        }
        if !(minDepth >= 0 && minDepth.isFinite) { throw ValidationError("--min-depth must be at least 0") }
        if let maxDepth, !(maxDepth.isFinite && maxDepth > minDepth) {
            throw ValidationError("--max-depth must be greater than --min-depth")
        }
        if !(flyingPixelStep > 0 && flyingPixelStep.isFinite) { throw ValidationError("--flying-pixel-step must be positive") }
        if frames < 1 || frames > ScenePreviewLayout.maximumFrames {
            throw ValidationError("--frames must be between 1 and \(ScenePreviewLayout.maximumFrames)")
        }
    }

    var sceneOptions: ScenePreviewOptions {
        var options = ScenePreviewOptions()
        options.width = width
        options.frames = frames
        options.minDepth = minDepth
        options.maxDepth = maxDepth
        options.cloud.points.edgeThreshold = flyingPixelStep
        return options
    }

    /// The sheets of scans: NAME.preview.png each. Returns how many failed (each reported
    /// in one line; nothing written for them).
    func runScenes(_ scenes: [String]) -> Int {
        var failures = 0
        // Every scan's sheet decided, and collisions refused, before anything is read.
        let plan: SceneOutputPlan
        do {
            plan = try SceneOutputPlan(scenes: scenes, output: output, suffix: "preview.png", fileExtensions: [])
        } catch {
            Report.error(error)
            return scenes.count
        }
        for (path, target) in plan.targets.map({ ($0.scene, $0.path) }) {
            do {
                let start = Host.monotonicSeconds()
                let scene = try SceneInputs.open(path, poses: poseSource, refining: Refine.options(depth: nil, memory: nil),
                                                 quiet: reporting.quiet)
                let progress = FrameProgress(name: Path.lastComponent(path), quiet: reporting.quiet)
                defer { progress.finish() }
                try ScenePreviewSheet.write(scene, to: target, options: sceneOptions) { done, total in
                    progress.update(done: done, total: total)
                }
                progress.finish()
                if !reporting.quiet {
                    let seconds = Progress.format(seconds: Host.monotonicSeconds() - start, decimals: 2)
                    Terminal.printError("\(path): \(scene.frames.count) frames → \(target) (\(seconds) s)\n")
                }
            } catch {
                Report.error(error)
                failures += 1
            }
        }
        return failures
    }

    func run() throws {
        // Scans get the scan sheet; the other inputs are captures.
        let places = try Placemark.readArgument(placemarks)
        let (scenes, captureInputs) = SceneInputs.split(captures.inputs)
        let sceneFailures = runScenes(scenes)
        guard !captureInputs.isEmpty else {
            if sceneFailures > 0 { throw ExitCode(1) }
            return
        }
        var captures = captures
        captures.inputs = captureInputs
        var options = self.options
        options.placemarks = places
        let batch = reporting.batch(captures)
        let path = { (item: CaptureDiscovery.Item) in Path.join(item.outputDirectory(under: output), "\(Path.stem(item.json)).preview.png") }
        let failures = try batch.run(directory: output, outputs: { [path($0)] }) { item, stageTimings in
            let warnings = try PreviewSheet.write(json: item.json, image: item.image, to: path(item), options: options,
                                                  reading: reading.reading, timings: stageTimings)
            for warning in warnings { Report.warning(warning) }
            return .done
        }
        if failures + sceneFailures > 0 { throw ExitCode(1) }
    }
}
