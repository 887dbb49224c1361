import ArgumentParser
import RGBDKit

/// The captures a command works on: files and directories, and an explicit photo for a
/// single capture.
struct CaptureInputs: ParsableArguments {
    @Argument(help: "Capture JSON files, Portrait photos (HEIC or JPEG with a depth image), or directories of captures; info, cloud and preview also take scans (Stray Scanner folders, Record3D .r3d files or EXR + JPG folders) and folders rgbd register wrote.",
              completion: .file())
    var inputs: [String]

    @Option(name: .customLong("image"), help: "The photo (JPEG or HEIC), if not the one beside the JSON (one capture only).",
            completion: .file())
    var image: String?

    @Flag(name: [.short, .long], help: "Take the captures in the subdirectories of directory inputs too (not hidden ones); each capture's outputs go into the same subfolder of the output directory (IN/a/b/shot.json: OUT/a/b/shot.*).")
    var recursive = false

    func validate() throws {
        if image != nil && inputs.count != 1 { throw ValidationError("--image applies to a single capture JSON") }
    }
}

/// How captures are read and rectified (every command that rectifies takes these).
struct ReadingOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Rectification: depth is interpolated only between neighbors whose depths differ by less than this fraction; larger steps are edges, never blended.")
    var maxBlendStep: Float = 0.05

    @Option(parsing: .unconditional, help: ArgumentHelp("Depths beyond this many meters are no depth (markers such as 9999); how many were discarded is reported.",
                               valueName: "meters"))
    var maxValidDepth: Float = CaptureReadingOptions.defaultMaxValidDepth

    func validate() throws {
        if !(maxBlendStep > 0 && maxBlendStep < 1) { throw ValidationError("--max-blend-step must be between 0 and 1") }
        if !(maxValidDepth > 0 && maxValidDepth.isFinite) {
            throw ValidationError("--max-valid-depth must be a positive number of meters")
        }
    }

    /// The rectifier these options ask for.
    var rectifier: Rectifier { Rectifier(maxRelativeDepthStep: maxBlendStep) }

    /// The reading options these options ask for.
    var reading: CaptureReadingOptions { CaptureReadingOptions(maxValidDepth: maxValidDepth) }
}

/// What a command prints besides its results.
struct ReportingOptions: ParsableArguments {
    @Flag(help: "Report the time spent in each stage on stderr.")
    var timings = false

    @Flag(name: [.short, .long], help: "Print nothing but errors and warnings.")
    var quiet = false

    /// The batch runner for `captures` with these options.
    func batch(_ captures: CaptureInputs) -> Batch {
        Batch(inputs: captures.inputs, recursive: captures.recursive, image: captures.image, quiet: quiet,
              showTimings: timings)
    }
}

/// The lowest ARKit confidence of the depth a scene command uses: one spelling of the
/// library's `ConfidenceLevel`, checked by its rule (cloud, fuse, export and refine).
struct SceneConfidenceOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Scans: use depth of at least this ARKit confidence: 0 or low, 1 or medium, 2 or high (frames without confidence use all).",
        valueName: "level"), transform: { try ConfidenceLevel(validating: $0) })
    var minConfidence: ConfidenceLevel = .high
}

/// Which of a scan's depth and frames the scene commands (cloud, fuse, export) use: one
/// spelling of the library's `ConfidenceLevel` and `FrameSelection.every`, checked by the
/// library's own rules.
struct SceneSelectionOptions: ParsableArguments {
    @OptionGroup var confidence: SceneConfidenceOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("Scans: use every N-th frame.", valueName: "N"))
    var every: Int = 1

    /// The lowest confidence used.
    var minConfidence: ConfidenceLevel { confidence.minConfidence }

    func validate() throws {
        do {
            try FrameSelection(every: every).validate()
        } catch let error as RGBDError {
            throw ValidationError(Report.describe(error))
        }
    }
}

/// Which depth pixels become points or are fused: the depth range and the flying-pixel
/// filter, one spelling of the library's `PointCloudOptions` fields for cloud, fuse and
/// refine, checked by its rule.
struct DepthFilterOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Use no depth nearer than this many meters.")
    var minDepth: Float = 0

    @Option(parsing: .unconditional, help: "Use no depth farther than this many meters.")
    var maxDepth: Float = .infinity

    @Option(parsing: .unconditional, help: "Flying-pixel filter: drop a depth that differs from one of its 4 neighbors' by more than this fraction of it (a pixel on a depth edge, where sensors invent points between foreground and background).")
    var flyingPixelStep: Float = 0.05

    @Flag(help: "Flying-pixel filter off: keep depth on discontinuities.")
    var keepEdges = false

    /// These choices written into the library's point options.
    func apply(to options: inout PointCloudOptions) {
        options.minDepth = minDepth
        options.maxDepth = maxDepth
        options.dropEdges = !keepEdges
        options.edgeThreshold = flyingPixelStep
    }

    func validate() throws {
        var options = PointCloudOptions()
        apply(to: &options)
        do {
            try options.validate()
        } catch let error as RGBDError {
            throw ValidationError(Report.describe(error))
        }
    }
}

/// The most memory a TSDF volume may take (fuse, refine, and `--refine` elsewhere).
struct VolumeMemoryOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp("The most memory the TSDF volume (and fuse's texture atlases) may take, MB (default half the machine's); frames and the mesh take more.", valueName: "MB"))
    var maxMemory: Int?

    /// The budget in bytes, nil for the library's default.
    var bytes: Int? { maxMemory.map { $0 << 20 } }

    func validate() throws {
        if let maxMemory, !(1...(1 << 30)).contains(maxMemory) { throw ValidationError("--max-memory must be a positive number of MB") }
    }
}

/// Where a scene command places its output: one spelling of the library's
/// `WorldFrame.Kind` for cloud, fuse and export (each capture or scan placed by
/// `WorldFrame.forCapture` / `forScene`).
struct WorldFrameOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Place the output: camera (a capture's camera frame; a scan's world as it is), level (z up: gravity from a photo's accelerometer, a gravity-aligned scan world (Stray Scanner's, or a Record3D file's that rgbd info calls so), or a registered scene by its photos; y the camera's heading) or enu (east, north, up meters at a photo's GPS position, turned by its compass heading: captures and registered scenes). docs/geo.md.", valueName: "frame"))
    var frame: WorldFrame.Kind = .camera
}

/// Checks a command's output path before anything runs: a path ending in the extension of
/// a file format the command does not write is a usage error, never a folder to create.
/// Returns whether the path names one file (it ends in one of `fileExtensions`).
@discardableResult
func checkOutputPath(_ output: String, writes fileExtensions: [String]) throws -> Bool {
    do {
        return try SceneOutputPlan.isSingleFile(output, fileExtensions: fileExtensions)
    } catch let error as RGBDError {
        throw ValidationError(error.description)
    }
}
