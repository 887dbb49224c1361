import ArgumentParser
import RGBDKit

/// `rgbd preview`: one labelled sheet per capture to check it by looking.
struct Preview: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            abstract: "Draw a sheet per capture: the lens, rectified color and depth, alignment and the point cloud.",
            discussion: """
            For each capture NAME, NAME.preview.png (8-bit RGB) is written into the output \
            directory: a header with the file names, image sizes, intrinsics of the rectified \
            color and depth, and the lens table's length and sign, then six panels:

            \(HelpText.table(Self.panelTable))

            Files appear only when complete. A capture that fails is reported on stderr and \
            the others are still processed; the exit status is 1 if any failed.
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

    @OptionGroup var reading: ReadingOptions

    @OptionGroup var reporting: ReportingOptions

    var options: PreviewOptions {
        var options = PreviewOptions()
        options.width = width
        options.minDepth = minDepth
        options.maxDepth = maxDepth
        options.flyingPixelStep = flyingPixelStep
        options.rectifier = reading.rectifier
        return options
    }

    func validate() throws {
        if width < PreviewLayout.minimumWidth || width > PreviewLayout.maximumWidth {
            throw ValidationError("--width must be between \(PreviewLayout.minimumWidth) and \(PreviewLayout.maximumWidth)")
        }
        if !(minDepth >= 0 && minDepth.isFinite) { throw ValidationError("--min-depth must be at least 0") }
        if let maxDepth, !(maxDepth.isFinite && maxDepth > minDepth) {
            throw ValidationError("--max-depth must be greater than --min-depth")
        }
        if !(flyingPixelStep > 0 && flyingPixelStep.isFinite) { throw ValidationError("--flying-pixel-step must be positive") }
    }

    func run() throws {
        let options = self.options
        let batch = reporting.batch(captures)
        let path = { (item: CaptureDiscovery.Item) in Path.join(item.outputDirectory(under: output), "\(Path.stem(item.json)).preview.png") }
        let failures = try batch.run(directory: output, outputs: { [path($0)] }) { item, stageTimings in
            let warnings = try PreviewSheet.write(json: item.json, image: item.image, to: path(item), options: options,
                                                  reading: reading.reading, timings: stageTimings)
            for warning in warnings { Report.warning(warning) }
            return .done
        }
        if failures > 0 { throw ExitCode(1) }
    }
}
