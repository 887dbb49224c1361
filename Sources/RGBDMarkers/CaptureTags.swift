/// What to look for in a capture: the tag family and, when known, the printed size.
package struct TagOptions: Equatable, Sendable {
    /// The family (default tag36h11).
    package var family: TagFamily = .tag36h11
    /// Edge of the black square, meters; nil to measure it in the depth (each tag's edge
    /// from its corners cut with its depth plane).
    package var size: Double?
    /// The smallest decision margin kept.
    package var minimumDecisionMargin = TagDetector.defaultMinimumDecisionMargin

    /// Options for `family` tags of black-square edge `size` meters (nil: measured).
    package init(family: TagFamily = .tag36h11, size: Double? = nil) {
        self.family = family
        self.size = size
    }

    /// The largest factor by which depth and the given size may disagree before a warning.
    package static let sizeDisagreementFactor = 2.0
}

/// The tags of one rectified capture: the clean detections with their poses, the decodes
/// left out and why, and what the tags say about the depth's scale.
package struct CaptureTags: Sendable {
    /// The options used.
    package var options: TagOptions
    /// Clean tags with depth under them, each with its pose, by ID.
    package var tags: [TagPose]
    /// Decodes left out (not clean, cut by the border, no depth under them).
    package var rejected: [RejectedTag]
    /// The depth's scale as the tags measure it (nil without tags or without a size).
    package var scale: DepthScaleFit?
    /// Things worth telling the user (depth and size disagree).
    package var warnings: [String]

    /// Finds the tags of `capture` with `detector` (one per thread; made from `options` when
    /// nil) and estimates their poses from corners and depth.
    package static func find(in capture: RectifiedCapture, options: TagOptions, detector: TagDetector? = nil) -> CaptureTags {
        let detector = detector ?? TagDetector(family: options.family, minimumDecisionMargin: options.minimumDecisionMargin)
        let (detections, rejected) = detector.detect(capture.color)
        return estimate(detections, rejected: rejected, in: capture, options: options)
    }

    /// Poses for already detected tags of `capture` (see `find`).
    package static func estimate(_ detections: [TagDetection], rejected: [RejectedTag], in capture: RectifiedCapture,
                         options: TagOptions) -> CaptureTags {
        var tags: [TagPose] = [], rejected = rejected
        for detection in detections {
            var poseOptions = TagPoseOptions(size: options.size ?? 1)
            var result = TagPoseEstimator.estimate(detection, colorIntrinsics: capture.colorIntrinsics, depth: capture.depth,
                                                   depthIntrinsics: capture.depthIntrinsics, options: poseOptions)
            if options.size == nil, case .success(let measured) = result {
                // No size given: the depth's measurement of the edge is the size.
                poseOptions.size = measured.depthScale
                result = TagPoseEstimator.estimate(detection, colorIntrinsics: capture.colorIntrinsics, depth: capture.depth,
                                                   depthIntrinsics: capture.depthIntrinsics, options: poseOptions)
            }
            switch result {
            case .success(let pose): tags.append(pose)
            case .failure(let reason): rejected.append(reason)
            }
        }
        var found = CaptureTags(options: options, tags: tags, rejected: rejected, scale: nil, warnings: [])
        if let size = options.size, let fit = DepthScaleFit.fit(tags) {
            found.scale = fit
            let k = fit.depthScale
            let limit = TagOptions.sizeDisagreementFactor
            if k > limit || k < 1 / limit {
                found.warnings.append("the depth says the tags' black squares are \(DecimalText.fixed(size * k, 3)) m, "
                    + "not \(DecimalText.fixed(size, 3)) m (a factor of \(DecimalText.fixed(k, 2))): "
                    + "is the tag size in meters, and the edge of the black square?")
            }
        }
        return found
    }
}
