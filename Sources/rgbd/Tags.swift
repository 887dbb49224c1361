import ArgumentParser
import RGBDKit

extension TagFamily: ExpressibleByArgument {}

/// The tags to look for (`rgbd info --tags`, `rgbd preview`, `rgbd register`).
struct TagArguments: ParsableArguments {
    @Option(help: "AprilTag family: tag36h11 (default) or tagStandard41h12.")
    var tagFamily: TagFamily = .tag36h11

    @Option(help: ArgumentHelp("Edge of the tags' black square in meters (for tag36h11, 8/10 of the printed pattern with its white ring); without it each tag's edge is measured in the depth.",
                               valueName: "meters"))
    var tagSize: Double?

    func validate() throws {
        if let s = tagSize, !(s > 0 && s.isFinite) { throw ValidationError("--tag-size must be a positive number of meters") }
    }

    var options: TagOptions { TagOptions(family: tagFamily, size: tagSize) }
}

/// `rgbd register`: single captures placed in one world by their AprilTags.
struct Register: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Place single captures in one world by the AprilTags they share, and write a scene.",
        discussion: """
        Each capture is rectified and its AprilTags found (clean decodes only: no corrected \
        bit, a clear decision margin, the whole pattern inside the photo, depth under the \
        tag). Each tag's pose comes from its corners and the depth under it; the captures' \
        poses are then solved together from the 3-D corners of all tags seen by two or \
        more captures (one least-squares adjustment over every capture and tag). The \
        world is the frame of --origin-tag (default: the lowest ID seen by two captures): x right along the tag, y down it, z into it, \
        meters, origin at its centre.

        Writes DIR/scene.json, a scene rgbd cloud, info and preview read like a scan (it \
        names the captures by absolute path: keep them where they are), and \
        DIR/report.json: per capture the tags used and the residuals in millimeters and \
        degrees (each tag left out in turn and predicted by the others: docs/markers.md), \
        or why it was left out. A capture that shares no tag with the others, or \
        cannot be read, is reported and left out; the rest is registered. The summary \
        goes to stderr, as every command's.

        DIR is written whole or not at all. It must be new or empty; --overwrite replaces \
        a folder an earlier rgbd register wrote, and refuses one holding anything else \
        (naming it). DIR is never an input or a folder holding one.

        --metric-from-tags rescales each capture's depth by its tags first (scale, and a \
        disparity offset when tags at clearly different distances support it; docs/markers.md) \
        and records the factor in the scene; use it for Portrait photos, whose depth Apple \
        marks relative. A capture whose depth and --tag-size disagree by more than a \
        factor of 2 is warned about (a size in centimeters?).
        """)

    @Argument(help: "Capture JSON files or Portrait photos.", completion: .file())
    var inputs: [String]

    @OptionGroup var tags: TagArguments

    @Option(name: .customLong("origin-tag"), help: "The ID of the tag whose frame is the world.")
    var originTag: Int?

    @Flag(help: "Rescale each capture's depth by its tags (needs --tag-size) before registering.")
    var metricFromTags = false

    @Option(name: [.short, .customLong("output")], help: "The folder to write scene.json and report.json into.",
            completion: .directory)
    var output: String

    @Flag(help: "Replace DIR if an earlier rgbd register wrote it (a folder holding anything else is refused).")
    var overwrite = false

    @Flag(name: [.short, .long], help: "Print nothing but errors and warnings.")
    var quiet = false

    func validate() throws {
        try checkOutputPath(output, writes: [])
        if inputs.count < 2 { throw ValidationError("give two or more captures to register") }
        if metricFromTags && tags.tagSize == nil { throw ValidationError("--metric-from-tags needs --tag-size") }
    }

    func run() throws {
        let progress = FrameProgress(name: "register", quiet: quiet)
        let result: RegisterPipeline.Result
        do {
            result = try RegisterPipeline.run(inputs, output: output,
                                              options: RegisterPipeline.Options(tags: tags.options, originTag: originTag,
                                                                                metricFromTags: metricFromTags,
                                                                                overwrite: overwrite),
                                              progress: { progress.update(done: $0, total: $1) })
        } catch {
            progress.finish()
            Report.error(error)
            throw ExitCode(1)
        }
        progress.finish()
        var leftOut = 0
        for capture in result.captures {
            for warning in capture.tags?.warnings ?? [] { Report.warning("\(capture.path): \(warning)") }
            if let reason = capture.leftOut {
                leftOut += 1
                Report.warning(reason.hasPrefix(capture.path) ? "\(reason); left out" : "\(capture.path): \(reason); left out")
                continue
            }
            guard !quiet, let r = capture.residual else { continue }
            var line = "\(capture.path): tags \(r.tags.map(String.init).joined(separator: ", ")), residual "
            if let t = r.translationRMS, let a = r.rotationRMS {
                line += "\(DecimalText.fixed(t * 1000, 2)) mm \(DecimalText.fixed(a * 180 / .pi, 3))° (tags left out in turn)"
            } else {
                line += "not checked (one tag places it)"
            }
            if let c = capture.correction {
                line += ", depth × \(DecimalText.fixed(c.factor, 4))" + (c.offset != 0 ? " (disparity offset \(DecimalText.fixed(c.offset, 5)) 1/m)" : "")
                if capture.relativeDepth { line += ": relative depth made metric by the tags" }
            } else if capture.relativeDepth {
                line += " (depth marked relative: --metric-from-tags makes it metric)"
            }
            Terminal.printError(line + "\n")
        }
        if !quiet {
            Terminal.printError("world: tag \(result.originTag.map(String.init) ?? "?"); wrote \(result.written.joined(separator: ", "))\n")
        }
        if leftOut > 0 { throw ExitCode(1) }
    }
}
