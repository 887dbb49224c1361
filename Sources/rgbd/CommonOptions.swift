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

/// Which of a scan's depth and frames the scene commands (cloud, fuse, export) use: one
/// spelling of the library's `ConfidenceLevel` and `FrameSelection.every`, checked by the
/// library's own rules.
struct SceneSelectionOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Scans: use depth of at least this ARKit confidence: 0 or low, 1 or medium, 2 or high (frames without confidence use all).",
        valueName: "level"), transform: { try ConfidenceLevel(validating: $0) })
    var minConfidence: ConfidenceLevel = .high

    @Option(parsing: .unconditional, help: ArgumentHelp("Scans: use every N-th frame.", valueName: "N"))
    var every: Int = 1

    func validate() throws {
        do {
            try FrameSelection(every: every).validate()
        } catch let error as RGBDError {
            throw ValidationError(Report.describe(error))
        }
    }
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
