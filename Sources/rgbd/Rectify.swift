import ArgumentParser
import RGBDKit

/// `rgbd rectify`: rectified color, depth and intrinsics for each capture.
struct Rectify: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            abstract: "Rectify captures: undistorted color, depth and pinhole intrinsics.",
            discussion: """
            INPUTS are capture JSON files or directories of captures (every NAME.json with \
            a NAME.jpg or NAME.jpeg beside it; other JSON files there are reported and \
            skipped). The image defaults to the JPEG beside the JSON with the same name \
            (.jpg or .jpeg, any case). Pixels are used as stored: the JPEG's EXIF \
            rotation is not applied.

            For each capture NAME, written into the output directory:
            \(HelpText.table(Self.outputTable))

            Depth is Z along the optical axis. Color is interpolated bilinearly; depth is \
            interpolated only between neighbors of similar depth (--max-blend-step), so no \
            depth is invented between a foreground and a background.

            Files appear only when complete. A capture that fails is reported on stderr \
            and the others are still processed; the exit status is 1 if any failed. Two \
            captures of one batch that would write the same file (a/shot.json and \
            b/shot.json into one directory) refuse the batch before anything is written.
            """)
    }

    /// The output files, for the help table.
    static let outputTable: [(name: String, text: String)] = [
        ("NAME.color.png", "rectified color, 8-bit RGB"),
        ("NAME.depth.png", "rectified depth, 16-bit gray, millimeters (0 = no depth)"),
        ("NAME.depth.tiff", "rectified depth, 32-bit float, meters (NaN = no depth)"),
        ("NAME.intrinsics.json", "pinhole intrinsics of the rectified depth (top level, as Open3D's read_pinhole_camera_intrinsic reads them) and color; intrinsic_matrix column-major"),
    ]

    @Argument(help: "Capture JSON files, or directories of captures.")
    var inputs: [String]

    @Option(name: .customLong("image"), help: "The color image, if not the JPEG beside the JSON (one capture only).")
    var image: String?

    @Option(name: [.short, .customLong("output")], help: "Output directory (created if missing).")
    var output: String

    @Option(help: "Rectification: depth is interpolated only between neighbors whose depths differ by less than this fraction; larger steps are edges, never blended.")
    var maxBlendStep: Float = 0.05

    @Flag(help: "Compress PNGs harder (smaller files, several times slower).")
    var smallPNG = false

    @Flag(help: "Report the time spent in each stage on stderr.")
    var timings = false

    @Flag(name: [.short, .long], help: "Print nothing but errors and warnings.")
    var quiet = false

    func validate() throws {
        if image != nil && inputs.count != 1 {
            throw ValidationError("--image applies to a single capture JSON")
        }
        if !(maxBlendStep > 0 && maxBlendStep < 1) {
            throw ValidationError("--max-blend-step must be between 0 and 1")
        }
    }

    func run() throws {
        let rectifier = Rectifier(maxRelativeDepthStep: maxBlendStep)
        let effort: PNGCodec.Effort = smallPNG ? .small : .fast
        let batch = Batch(inputs: inputs, image: image, quiet: quiet, showTimings: timings)
        let outputs = { (item: CaptureDiscovery.Item) in RectifiedCapture.outputPaths(stem: Path.stem(item.json), in: output) }
        let failures = try batch.run(outputs: outputs) { item, stageTimings in
            let result = try RectifyPipeline.run(json: item.json, image: item.image, directory: output,
                                                 rectifier: rectifier, pngEffort: effort, timings: stageTimings)
            for warning in result.warnings { Report.warning(warning) }
        }
        if failures > 0 { throw ExitCode(1) }
    }
}
