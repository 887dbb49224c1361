/// Which image's pixel grid a pixel-aligned color + depth pair shares (`rgbd rectify
/// --align-to`): pixel `(u, v)` of both files then sees the same point, with the same
/// intrinsics, as `RGBDImage.create_from_color_and_depth` in Open3D and most RGB-D
/// datasets expect.
public enum PixelAlignment: String, Sendable, CaseIterable {
    /// Both at the depth map's size: the rectified color averaged over each depth
    /// pixel's footprint (the colors `rgbd cloud` gives its points).
    case depth
    /// Both at the color image's size: the depth map rectified straight onto the color
    /// image's pixel grid with the edge-aware depth sampling (no depth invented between a
    /// foreground and a background, holes stay holes).
    case color
}

extension Rectifier {
    /// Rectifies a depth map whose size is the distortion's onto a `width × height` grid
    /// of the same pinhole camera (intrinsics scaled to that size, docs/lens-model.md), in one
    /// resampling: output pixel `(x, y)` is the rectified depth map's point
    /// `(x·w/width, y·h/height)`, sampled like `rectify(_:distortion:)` samples (only
    /// neighbors within `maxRelativeDepthStep` of the nearest one are blended, holes and
    /// the outside give NaN). At the depth map's own size the result is
    /// `rectify(_:distortion:)`'s, bit for bit.
    ///
    /// Upsampling this way never invents depth across an edge: every output value is a
    /// blend of source depths within a few percent of each other.
    package func rectify(_ depth: DepthMap, distortion: LensDistortion, toWidth width: Int, height: Int) -> DepthMap {
        precondition(depth.width == distortion.width && depth.height == distortion.height,
                     "the distortion model is for another image size")
        precondition(depth.channels == 1, "depth maps have one channel")
        precondition(width > 0 && height > 0, "the output grid must not be empty")
        let ratio = SIMD2(Double(depth.width) / Double(width), Double(depth.height) / Double(height))
        let sourceWidth = depth.width, sourceHeight = depth.height
        let evaluator = SourcePositions(distortion)
        let step = maxRelativeDepthStep
        let dxs = (0..<width).map { Float(Double($0) * ratio.x) - evaluator.cx }
        let output = LargeBuffer.make(count: width * height) { (destination: UnsafeMutableBufferPointer<Float>) in
            depth.samples.withUnsafeBufferPointer { source in
                dxs.withUnsafeBufferPointer { columns in
                    guard let src = source.baseAddress, let dst = destination.baseAddress,
                          let dx = columns.baseAddress else { return }
                    evaluator.withTables { table, slopes in
                        scheduler.forEachBand(rows: height) { rows in
                            for y in rows {
                                DepthRemap.rectifyRow(y, outputWidth: width, ratio: ratio, dxs: dx, positions: evaluator,
                                                      table: table, slopes: slopes, src: src, width: sourceWidth,
                                                      height: sourceHeight, maxRelativeStep: step, dst: dst)
                            }
                        }
                    }
                }
            }
        }
        return DepthMap(width: width, height: height, channels: 1, samples: output)
    }
}

extension Rectifier {
    /// A capture's rectified pair: the one implementation behind `Capture.rectified()`,
    /// `Capture.rectified(alignedTo:)` and the rectify pipeline. Without `alignment`, each
    /// image rectified at its own size with its own calibration; `.depth`: the rectified
    /// color averaged over each depth pixel's footprint, both on the depth map's grid;
    /// `.color`: the depth map rectified straight onto the color grid, both on it.
    /// `.depth` wants a depth map no larger than the color image (`Capture.checkAlignable`,
    /// the caller's check).
    ///
    /// - Parameters:
    ///   - depth: the depth map as captured, or with `depthIsRectified` (not for `.color`)
    ///     already rectified at its own size.
    ///   - colorOutput: a buffer of the color image's size to rectify the color into (its
    ///     pages touched beforehand by the caller), else a new one.
    ///   - rectifyingColor: with `.color`, given the aligned depth map, the shared
    ///     intrinsics and the color's rectification, runs that rectification and returns
    ///     its image (the rectify pipeline does depth-side work beside it; `Capture` just
    ///     runs it).
    package func rectifiedPair(color: ColorImage, colorCalibration: ImageCalibration, depth: DepthMap,
                               depthCalibration: ImageCalibration, depthIsRectified: Bool, alignment: PixelAlignment?,
                               colorOutput: [UInt8]? = nil, stem: String, source: String,
                               metadata: CaptureMetadata, timings: StageTimings?,
                               rectifyingColor: (DepthMap, Intrinsics, () -> ColorImage) throws -> ColorImage) rethrows
        -> RectifiedCapture {
        precondition(!(depthIsRectified && alignment == .color), "the depth map is aligned to the color grid from its raw samples")
        func rectifyColor() -> ColorImage {
            timings.measure("rectify color") {
                guard var output = colorOutput else { return rectify(color, distortion: colorCalibration.distortion) }
                color.samples.withUnsafeBufferPointer { source in
                    output.withUnsafeMutableBufferPointer { destination in
                        rectify(source, channels: 3, distortion: colorCalibration.distortion, into: destination)
                    }
                }
                return ColorImage(width: color.width, height: color.height, channels: 3, samples: output)
            }
        }
        func nativeDepth() -> DepthMap {
            depthIsRectified ? depth : timings.measure("rectify depth") { rectify(depth, distortion: depthCalibration.distortion) }
        }
        switch alignment {
        case nil:
            let rectifiedColor = rectifyColor()
            return RectifiedCapture(stem: stem, source: source, color: rectifiedColor, depth: nativeDepth(),
                                    colorIntrinsics: colorCalibration.intrinsics,
                                    depthIntrinsics: depthCalibration.intrinsics, metadata: metadata)
        case .depth?:
            let colors = timings.measure("rectify and average colors") {
                rectifyAreaAveraged(color, distortion: colorCalibration.distortion, toWidth: depth.width, height: depth.height)
            }
            return RectifiedCapture(stem: stem, source: source, color: colors, depth: nativeDepth(),
                                    colorIntrinsics: depthCalibration.intrinsics,
                                    depthIntrinsics: depthCalibration.intrinsics, metadata: metadata)
        case .color?:
            let aligned = timings.measure("rectify depth") {
                rectify(depth, distortion: depthCalibration.distortion, toWidth: color.width, height: color.height)
            }
            let rectifiedColor = try rectifyingColor(aligned, colorCalibration.intrinsics, rectifyColor)
            return RectifiedCapture(stem: stem, source: source, color: rectifiedColor, depth: aligned,
                                    colorIntrinsics: colorCalibration.intrinsics,
                                    depthIntrinsics: colorCalibration.intrinsics, metadata: metadata)
        }
    }
}

extension Capture {
    /// Rectifies the capture into a pixel-aligned pair at one resolution: at the depth
    /// map's size (the color averaged over each depth pixel's footprint) or at the color
    /// image's (the depth rectified onto the color grid). Both intrinsics of the result
    /// are the shared grid's.
    ///
    /// Throws if `.depth` is asked of a depth map larger than the color image (there is
    /// no footprint to average).
    public func rectified(with rectifier: Rectifier = Rectifier(), alignedTo alignment: PixelAlignment,
                          timings: StageTimings? = nil) throws -> RectifiedCapture {
        if alignment == .depth { try Self.checkAlignable(color: color, depth: depth, json: jsonPath) }
        return rectifier.rectifiedPair(color: color, colorCalibration: calibration.scaled(toWidth: color.width, height: color.height),
                                    depth: depth, depthCalibration: calibration.scaled(toWidth: depth.width, height: depth.height),
                                    depthIsRectified: false, alignment: alignment, stem: stem, source: jsonPath,
                                    metadata: metadata, timings: timings, rectifyingColor: { _, _, rectify in rectify() })
    }

    /// The intrinsics of the grid `rectified(alignedTo:)` puts both images on (its width and
    /// height the grid's size), without rectifying anything. Throws as `rectified(alignedTo:)`
    /// does when `.depth` is asked of a depth map larger than the color image.
    public func alignedIntrinsics(_ alignment: PixelAlignment) throws -> Intrinsics {
        switch alignment {
        case .depth:
            try Self.checkAlignable(color: color, depth: depth, json: jsonPath)
            return calibration.scaled(toWidth: depth.width, height: depth.height).intrinsics
        case .color:
            return calibration.scaled(toWidth: color.width, height: color.height).intrinsics
        }
    }

    /// Rejects aligning to the depth map's size when the depth map is larger than the
    /// color image along an axis (its footprints in the color image would be empty).
    package static func checkAlignable(colorWidth: Int, colorHeight: Int, depthWidth: Int, depthHeight: Int,
                               json: String) throws {
        guard depthWidth <= colorWidth && depthHeight <= colorHeight else {
            throw RGBDError(.invalidArgument, file: json,
                            "the depth map (\(depthWidth)×\(depthHeight)) is larger than the image (\(colorWidth)×\(colorHeight)): the color cannot be averaged down to it (align to the color image instead)")
        }
    }

    package static func checkAlignable(color: ColorImage, depth: DepthMap, json: String) throws {
        try checkAlignable(colorWidth: color.width, colorHeight: color.height, depthWidth: depth.width,
                           depthHeight: depth.height, json: json)
    }
}
