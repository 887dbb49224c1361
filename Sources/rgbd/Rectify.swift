import ArgumentParser
import RGBDKit

extension PixelAlignment: ExpressibleByArgument {}

/// `--crop`'s values.
enum CropChoice: String, ExpressibleByArgument, CaseIterable {
    /// The largest rectangle of valid pixels.
    case valid
}

/// `rgbd rectify`: rectified color, depth and intrinsics for each capture.
struct Rectify: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            abstract: "Rectify captures: undistorted color, depth and pinhole intrinsics.",
            discussion: """
            INPUTS are capture JSON files or directories of captures (every NAME.json with \
            a photo beside it; a capture JSON without its photo is reported and skipped, \
            other JSON files such as NAME.truth.json are ignored; -r takes subdirectories \
            too, each capture's outputs in the same subfolder of the output directory). The photo \
            defaults to the one beside the JSON with the same name: NAME.jpg or \
            NAME.jpeg, else NAME.heic or NAME.heif (any case); JPEG and HEIC are told apart \
            by content. Pixels are used as stored: EXIF orientation and HEIF rotation, \
            mirror and crop are not applied, unless --upright.

            --upright turns the outputs as the photo asks to be shown (its EXIF \
            Orientation, or HEIF irot): color, depth, matte and the intrinsics together \
            (a quarter turn swaps width and height, fx and fy, and moves the principal \
            point with its pixel), so a portrait shot comes out portrait; the 3-D points \
            are the same, turned about the optical axis. Mirroring orientations are left \
            as stored, with a warning. --crop valid cuts each image to the largest \
            rectangle of valid pixels (whose source lies inside the photo: no black \
            border where a pincushion lens pulled the corners in), cx and cy shifted by \
            the crop's corner (with --align-to, one rectangle for the pair). Both are \
            applied after rectification, the crop first.

            A Portrait photo (a HEIC or JPEG an iPhone took with depth: it holds a depth \
            or disparity image and the camera's calibration in its XMP) is a capture by \
            itself: rgbd rectify IMG_1234.HEIC -o out, no JSON. A directory contributes \
            every photo without a NAME.json beside it as such; a photo that holds no depth \
            image is reported ("... holds no depth image") and the batch goes on. Its \
            Portrait Effects Matte, if any, is written rectified as NAME.matte.png (16-bit \
            gray, aligned with the depth map; with --align-to at the pair's size, like the \
            depth), its intrinsics in the sidecar under matte. docs/portrait.md.

            Depth is read from the JSON (rows, a flat array or base64 float32, with the \
            calibration under any known key set: docs/format.md); a JSON without depth \
            takes it from the image its depth_file key names, else from NAME.depth.tiff \
            (float32 meters) or NAME.depth.png (16-bit millimeters) beside it. Depth in \
            the JSON always wins, and an existing NAME.depth.* beside an input is never \
            overwritten. 0, negatives, null, NaN and depths beyond --max-valid-depth are \
            no depth; negatives and those beyond are counted in a warning.

            For each capture NAME, written into the output directory:
            \(HelpText.table(Self.outputTable))

            Depth is Z along the optical axis. Color is interpolated bilinearly; depth is \
            interpolated only between neighbors of similar depth (--max-blend-step), so no \
            depth is invented between a foreground and a background.

            Files appear only when complete. A capture that fails is reported on stderr \
            and the others are still processed; the exit status is 1 if any failed. Two \
            captures of one batch that would write the same file (a/shot.json and \
            b/shot.json into one directory) refuse the batch before anything is written.

            The photo is several times larger than the depth map. For tools that need \
            color and depth pixel-aligned at one size (Open3D's \
            RGBDImage.create_from_color_and_depth, TUM-style datasets), --align-to depth \
            writes NAME.color.png at the depth map's size, each pixel the rectified color \
            averaged over the depth pixel's footprint; --align-to color writes the depth \
            files at the photo's size, the depth rectified straight onto the photo's pixel \
            grid with the same edge-aware sampling (nothing invented between a foreground \
            and a background, holes stay holes). The sidecar's top level, color and depth \
            (and matte) entries then all give that one grid. Open3D: \
            create_from_color_and_depth(color, depth, depth_scale=1000, depth_trunc=..., \
            convert_rgb_to_intensity=False); its default depth_trunc of 3 m drops \
            everything from 3 m on.
            """)
    }

    /// The output files, for the help table.
    static let outputTable: [(name: String, text: String)] = [
        ("NAME.color.png", "rectified color, 8-bit RGB"),
        ("NAME.depth.png", "rectified depth, 16-bit gray, millimeters (0 = no depth)"),
        ("NAME.depth.tiff", "rectified depth, 32-bit float, meters (NaN = no depth)"),
        ("NAME.intrinsics.json", "pinhole intrinsics of the rectified depth (top level, as Open3D's read_pinhole_camera_intrinsic reads them) and color; intrinsic_matrix column-major"),
    ]

    @OptionGroup var captures: CaptureInputs

    @Option(name: [.short, .customLong("output")], help: "Output directory (created if missing).", completion: .directory)
    var output: String

    @OptionGroup var reading: ReadingOptions

    @Option(help: ArgumentHelp("Write color and depth pixel-aligned at one size: the depth map's or the color image's.",
                               valueName: "depth|color"))
    var alignTo: PixelAlignment?

    @Flag(help: "Turn color, depth, matte and intrinsics as the photo asks to be shown (EXIF orientation, HEIF rotation); default: as stored.")
    var upright = false

    @Option(help: ArgumentHelp("Crop each image to the largest rectangle of valid pixels (no black border after rectification); the intrinsics move with it.",
                               valueName: "valid"))
    var crop: CropChoice?

    @Flag(help: "Compress PNGs harder (libdeflate's near-optimal parsing): photographs 2-12 % and depth maps 9-25 % smaller, but much slower.")
    var smallPNG = false

    @OptionGroup var reporting: ReportingOptions

    func validate() throws {
        try checkOutputPath(output, writes: [])
    }

    func run() throws {
        let rectifier = reading.rectifier, options = reading.reading
        let effort: PNGCodec.Effort = smallPNG ? .small : .fast
        let batch = reporting.batch(captures)
        let outputs = { (item: CaptureDiscovery.Item) in RectifiedCapture.outputPaths(stem: Path.stem(item.json), in: item.outputDirectory(under: output)) }
        let failures = try batch.run(directory: output, outputs: outputs) { item, stageTimings in
            let result = try RectifyPipeline.run(json: item.json, image: item.image, directory: item.outputDirectory(under: output),
                                                 rectifier: rectifier, alignment: alignTo,
                                                 geometry: OutputGeometry(upright: upright, cropToValid: crop == .valid),
                                                 pngEffort: effort,
                                                 reading: options,
                                                 timings: stageTimings)
            for warning in result.warnings { Report.warning(warning) }
            return .done
        }
        if failures > 0 { throw ExitCode(1) }
    }
}
