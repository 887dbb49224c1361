/// `rgbd register`: single captures placed in one world by the AprilTags they share
/// (`TagRegistration`), optionally made metric by the tags first (`DepthScaleFit`), written
/// as a scene (`RegisteredSceneFile`) and a report.
package enum RegisterPipeline {
    /// What to do.
    package struct Options: Sendable {
        /// Family and size of the tags.
        package var tags: TagOptions
        /// The world's tag (nil: the lowest ID seen by two captures).
        package var originTag: Int?
        /// Rescale each capture's depth by its tags before registering.
        package var metricFromTags = false
        /// Replace an output folder an earlier run wrote (`StagedDirectory`).
        package var overwrite = false

        /// Options for `tags`.
        package init(tags: TagOptions, originTag: Int? = nil, metricFromTags: Bool = false, overwrite: Bool = false) {
            self.tags = tags
            self.originTag = originTag
            self.metricFromTags = metricFromTags
            self.overwrite = overwrite
        }
    }

    /// One input capture's outcome.
    package struct CaptureOutcome: Sendable {
        /// The capture JSON or photo, as given.
        package var path: String
        /// Its tags (nil when it could not be read).
        package var tags: CaptureTags?
        /// The depth correction applied (`metricFromTags`).
        package var correction: DepthScaleFit?
        /// True for a Portrait photo whose depth its metadata marks "relative".
        package var relativeDepth = false
        /// Why it was left out, when it was.
        package var leftOut: String?
        /// Its pose, when registered.
        package var pose: Pose?
        /// Its residuals, when registered.
        package var residual: TagRegistration.CaptureResidual?
        /// Rectified intrinsics (color, depth), when read.
        var intrinsics: (color: Intrinsics, depth: Intrinsics)?
        /// The photo's path.
        var image: String?
    }

    /// The result: per capture what happened, the origin tag, the files written.
    package struct Result: Sendable {
        /// Per input, in order.
        package var captures: [CaptureOutcome]
        /// The origin tag (nil when nothing was registered).
        package var originTag: Int?
        /// The tags' poses in the world.
        package var tags: [Int: Pose]
        /// The scene file and report written.
        package var written: [String]
    }

    /// Reads, rectifies and finds the tags of each capture in `inputs` (a capture that
    /// cannot be read is reported and left out), registers the rest and writes the folder
    /// `output` with `scene.json` and `report.json`, whole or not at all. `output` must be
    /// new or empty, or with `overwrite` a folder an earlier run wrote (`StagedDirectory`),
    /// and never an input or a folder holding one.
    ///
    /// - Throws: `RGBDError` when no two captures can be registered, or the output cannot be written.
    package static func run(_ inputs: [String], output: String, options: Options,
                            progress: ((Int, Int) -> Void)? = nil) throws -> Result {
        // The output folder is checked (and its temporary made) before any capture is read.
        let folder = try StagedDirectory(destination: output, replacing: options.overwrite, inputs: inputs)
        var outcomes: [CaptureOutcome] = []
        let detector = TagDetector(family: options.tags.family, minimumDecisionMargin: options.tags.minimumDecisionMargin)
        for (n, path) in inputs.enumerated() {
            progress?(n, inputs.count)
            var outcome = CaptureOutcome(path: path)
            do {
                let capture = try Capture.load(json: path)
                var rectified = capture.rectified()
                outcome.image = capture.imagePath
                outcome.relativeDepth = capture.metadata.portrait?.isRelative ?? false
                outcome.intrinsics = (rectified.colorIntrinsics, rectified.depthIntrinsics)
                let (detections, rejected) = detector.detect(rectified.color)
                var tags = CaptureTags.estimate(detections, rejected: rejected, in: rectified, options: options.tags)
                if options.metricFromTags, let fit = tags.scale {
                    rectified.depth = fit.apply(to: rectified.depth)
                    tags = CaptureTags.estimate(detections, rejected: rejected, in: rectified, options: options.tags)
                    outcome.correction = fit
                }
                outcome.tags = tags
            } catch let error as RGBDError {
                outcome.leftOut = error.description
            } catch {
                outcome.leftOut = "\(path): \(error)"
            }
            outcomes.append(outcome)
        }
        progress?(inputs.count, inputs.count)
        let readable = outcomes.indices.filter { outcomes[$0].tags != nil }
        let registration = try TagRegistration.solve(readable.compactMap { outcomes[$0].tags }, originTag: options.originTag)
        for (n, i) in readable.enumerated() {
            outcomes[i].pose = registration.cameras[n]
            outcomes[i].residual = registration.residuals[n]
        }
        for (n, reason) in registration.leftOut { outcomes[readable[n]].leftOut = reason }
        guard outcomes.contains(where: { $0.pose != nil }) else {
            throw RGBDError(.invalidArgument, "no capture could be registered")
        }

        var frames: [RegisteredSceneFile.Frame] = []
        for outcome in outcomes {
            guard let pose = outcome.pose, let k = outcome.intrinsics, let image = outcome.image else { continue }
            frames.append(RegisteredSceneFile.Frame(
                capture: FileSystem.canonicalPath(outcome.path) ?? outcome.path, image: FileSystem.canonicalPath(image) ?? image,
                pose: pose, colorIntrinsics: k.color, depthIntrinsics: k.depth,
                depthFactor: outcome.correction?.factor ?? 1, disparityOffset: outcome.correction?.offset ?? 0))
        }
        let scene = RegisteredSceneFile(family: options.tags.family, tagSize: options.tags.size,
                                        originTag: registration.originTag, frames: frames, tags: registration.tags)
        let sceneFile = Path.join(output, RegisteredSceneFile.name), reportFile = Path.join(output, "report.json")
        try folder.write(RegisteredSceneFile.name, text: scene.json.text() + "\n")
        try folder.write("report.json", text: report(outcomes, originTag: registration.originTag).text() + "\n")
        try folder.commit()
        return Result(captures: outcomes, originTag: registration.originTag, tags: registration.tags,
                      written: [sceneFile, reportFile])
    }

    /// Why a capture's residual is null.
    package static let uncheckedReason = "not checked: no tag of this capture can be left out "
        + "(it is placed by one tag, or its other tags are tied to the world through this one only)"

    /// The report's JSON: per capture its tags, residuals in millimeters and degrees
    /// (leave-one-tag-out, `TagRegistration.CaptureResidual`), the fit's RMS, the depth
    /// correction, or why it was left out.
    static func report(_ outcomes: [CaptureOutcome], originTag: Int) -> JSONValue {
        typealias M = JSONValue.Member
        return .object([
            M("origin_tag", .int(originTag)),
            M("captures", .array(outcomes.map { o in
                var members = [M("capture", .string(o.path)), M("registered", .bool(o.pose != nil))]
                if let reason = o.leftOut { members.append(M("left_out", .string(reason))) }
                if let r = o.residual {
                    members.append(M("tags_used", .array(r.tags.map { .int($0) })))
                    // Leave-one-tag-out (TagRegistration.CaptureResidual): null when no tag
                    // could be left out, with the reason.
                    members.append(M("residual_mm", r.translationRMS.map { .number($0 * 1000) } ?? .null))
                    members.append(M("residual_deg", r.rotationRMS.map { .number($0 * 180 / .pi) } ?? .null))
                    members.append(M("residual_tags_left_out", .int(r.checkedTags)))
                    if r.translationRMS == nil { members.append(M("residual_note", .string(uncheckedReason))) }
                    members.append(M("fit_mm", .number(r.fitRMS * 1000)))
                }
                if let tags = o.tags {
                    members.append(M("tags_found", .array(tags.tags.map { .int($0.detection.id) })))
                    if !tags.warnings.isEmpty { members.append(M("warnings", .array(tags.warnings.map { .string($0) }))) }
                }
                if let c = o.correction {
                    members.append(M("depth_factor", .number(c.factor)))
                    members.append(M("disparity_offset", .number(c.offset)))
                }
                if o.relativeDepth {
                    members.append(M("depth_accuracy", .string(o.correction != nil ? "relative, made metric by the tags" : "relative")))
                }
                return .object(members)
            })),
        ])
    }
}
