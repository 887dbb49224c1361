/// A capture after rectification: ideal pinhole images whose intrinsics are the
/// calibration's intrinsic matrix scaled to each image (docs/lens-model.md).
public struct RectifiedCapture: Sendable {
    /// Name outputs are derived from.
    public var stem: String
    /// The capture JSON this came from.
    public var source: String
    /// Rectified color, 8-bit RGB.
    public var color: ColorImage
    /// Rectified depth, meters, NaN = no depth.
    public var depth: DepthMap
    /// Pinhole intrinsics of `color`.
    public var colorIntrinsics: Intrinsics
    /// Pinhole intrinsics of `depth`.
    public var depthIntrinsics: Intrinsics
    /// What only some sources carry, as the capture carried it (a Portrait photo's depth
    /// metadata: the sidecar notes a relative accuracy).
    public var metadata: CaptureMetadata = CaptureMetadata()

    /// Each stored property given.
    package init(stem: String, source: String, color: ColorImage, depth: DepthMap, colorIntrinsics: Intrinsics, depthIntrinsics: Intrinsics, metadata: CaptureMetadata = CaptureMetadata()) {
        self.stem = stem
        self.source = source
        self.color = color
        self.depth = depth
        self.colorIntrinsics = colorIntrinsics
        self.depthIntrinsics = depthIntrinsics
        self.metadata = metadata
    }
}

extension Capture {
    /// Rectifies the color image and the depth map, each with the calibration scaled to
    /// its own size.
    public func rectified(with rectifier: Rectifier = Rectifier(), timings: StageTimings? = nil) -> RectifiedCapture {
        rectifier.rectifiedPair(color: color, colorCalibration: calibration.scaled(toWidth: color.width, height: color.height),
                                depth: depth, depthCalibration: calibration.scaled(toWidth: depth.width, height: depth.height),
                                depthIsRectified: false, alignment: nil, stem: stem, source: jsonPath,
                                metadata: metadata, timings: timings, rectifyingColor: { _, _, rectify in rectify() })
    }
}
