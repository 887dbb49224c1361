/// `rgbd rectify --upright --crop valid`: the rectified capture turned upright and cropped
/// to its valid pixels, then written.
extension RectifyPipeline {
    /// `run` with an `OutputGeometry` that changes something: the capture is rectified
    /// whole (no depth-side files staged while the photo decodes: they depend on the crop
    /// and turn), then cropped (`cropToValid`, in the stored orientation, where the lens
    /// model lives) and turned (`upright`), color, depth, matte and intrinsics together,
    /// and the outputs staged and committed as `run` does.
    static func runReshaped(json: String, image: String?, directory: String, rectifier: Rectifier,
                            alignment: PixelAlignment?, geometry: OutputGeometry, pngEffort: PNGCodec.Effort,
                            reading: CaptureReadingOptions, timings: StageTimings?) throws -> Result<[String]> {
        let paths = RectifiedCapture.outputPaths(stem: Path.stem(json), in: directory)
        let opening = try CaptureOpening(json: json, image: image, timings: timings)
        let (result, side) = try rectified(opening, rectifier: rectifier, alignment: alignment, reading: reading,
                                           timings: timings) { _, _, _, _ in }
        var warnings = result.warnings
        var capture = result.output
        var matte: ImageBuffer<UInt8>?
        var matteIntrinsics: Intrinsics?
        var matteLens: LensDistortion?
        if let stored = side.metadata.matte {
            let grid = alignment == nil ? (stored.width, stored.height) : (capture.depth.width, capture.depth.height)
            matte = timings.measure("matte") {
                RectifiedCapture.rectifiedMatte(stored, calibration: side.depthCalibration, rectifier: rectifier,
                                                alignment: alignment, grid: grid)
            }
            matteIntrinsics = RectifiedCapture.matteIntrinsics(width: stored.width, height: stored.height,
                                                               depth: capture.depthIntrinsics, alignment: alignment)
            matteLens = RectifiedCapture.matteLens(width: stored.width, height: stored.height,
                                                   calibration: side.depthCalibration)
        }

        if geometry.cropToValid {
            try timings.measure("crop to valid pixels") {
                let colorLens = side.colorCalibration.distortion
                func rectangle(_ mask: [Bool], _ width: Int, _ height: Int) throws -> PixelRectangle {
                    guard let rectangle = PixelRectangle.largest(in: mask, width: width, height: height) else {
                        throw RGBDError(.invalidImage, file: json, "no pixel of the rectified image is valid: nothing to crop to")
                    }
                    return rectangle
                }
                switch alignment {
                case nil:
                    let color = try rectangle(colorLens.validMask(), colorLens.width, colorLens.height)
                    let depthLens = side.depthCalibration.distortion
                    let depth = try rectangle(depthLens.validMask(), depthLens.width, depthLens.height)
                    capture.color = capture.color.cropped(to: color)
                    capture.colorIntrinsics = capture.colorIntrinsics.cropped(to: color)
                    capture.depth = capture.depth.cropped(to: depth)
                    capture.depthIntrinsics = capture.depthIntrinsics.cropped(to: depth)
                    if let lens = matteLens, let rectified = matte, let intrinsics = matteIntrinsics {
                        let own = try rectangle(lens.validMask(), lens.width, lens.height)
                        matte = rectified.cropped(to: own)
                        matteIntrinsics = intrinsics.cropped(to: own)
                    }
                case .color?, .depth?:
                    // One grid for the three: the photo's, its valid pixels (`.color`); or
                    // the depth map's, each pixel the color averaged over its footprint,
                    // valid when every photo pixel of the footprint is (`.depth`).
                    let (width, height) = (capture.depth.width, capture.depth.height)
                    let mask = alignment == .color
                        ? colorLens.validMask()
                        : Self.footprintsValid(colorLens.validMask(), width: colorLens.width, height: colorLens.height,
                                               gridWidth: width, gridHeight: height)
                    let one = try rectangle(mask, width, height)
                    capture.color = capture.color.cropped(to: one)
                    capture.depth = capture.depth.cropped(to: one)
                    capture.depthIntrinsics = capture.depthIntrinsics.cropped(to: one)
                    capture.colorIntrinsics = capture.depthIntrinsics
                    matte = matte?.cropped(to: one)
                    matteIntrinsics = matteIntrinsics.map { $0.cropped(to: one) }
                }
            }
        }

        if geometry.upright {
            let orientation = side.metadata.orientation
            if orientation.mirrored {
                warnings.append("\(opening.imagePath): its orientation (EXIF \(orientation.exifValue)) mirrors the image; turning upright turns images only, so the outputs are as stored")
            } else if orientation.clockwiseQuarterTurns != 0 {
                let turns = orientation.clockwiseQuarterTurns
                timings.measure("turn upright") {
                    capture.color = capture.color.rotated(clockwiseQuarterTurns: turns)
                    capture.depth = capture.depth.rotated(clockwiseQuarterTurns: turns)
                    capture.colorIntrinsics = capture.colorIntrinsics.rotated(clockwiseQuarterTurns: turns)
                    capture.depthIntrinsics = capture.depthIntrinsics.rotated(clockwiseQuarterTurns: turns)
                    matte = matte?.rotated(clockwiseQuarterTurns: turns)
                    matteIntrinsics = matteIntrinsics?.rotated(clockwiseQuarterTurns: turns)
                }
            }
        }

        let files = StagedFiles()
        try files.createDirectory(directory)
        try RectifiedCapture.stageDepthOutputs(
            depth: capture.depth, colorIntrinsics: capture.colorIntrinsics, depthIntrinsics: capture.depthIntrinsics,
            matteIntrinsics: matteIntrinsics, source: json, metadata: side.metadata, paths: paths, files: files,
            pngEffort: pngEffort, timings: timings)
        var written = paths
        if let matte {
            let path = Path.join(directory, "\(Path.stem(json)).matte.png")
            try files.stage(path, bytes: try RectifiedCapture.matteBytes(matte, effort: pngEffort))
            written.append(path)
        }
        let png = try timings.measure("encode color png") { try PNGCodec.encodeRGB(capture.color, effort: pngEffort) }
        try timings.measure("write color png") { try files.stage(paths[0], bytes: png) }
        try files.commit()
        return Result(output: written, warnings: warnings, metadata: result.metadata)
    }

    /// The depth map, colors and intrinsics of a point cloud, turned upright as the photo
    /// asks (`OutputGeometry.upright`): the cloud of the turned capture is the stored
    /// one's, turned about the optical axis (`Intrinsics.cameraRotation`). A mirroring
    /// orientation is left as stored, with a warning.
    static func turnedUpright(depth: DepthMap, colors: ColorImage, intrinsics: Intrinsics, orientation: PhotoOrientation, imagePath: String,
                        warnings: inout [String]) -> (DepthMap, ColorImage, Intrinsics) {
        if orientation.mirrored {
            warnings.append("\(imagePath): its orientation (EXIF \(orientation.exifValue)) mirrors the image; turning upright turns images only, so the cloud is as stored")
            return (depth, colors, intrinsics)
        }
        let turns = orientation.clockwiseQuarterTurns
        return (depth.rotated(clockwiseQuarterTurns: turns), colors.rotated(clockwiseQuarterTurns: turns),
                intrinsics.rotated(clockwiseQuarterTurns: turns))
    }

    /// Which pixels of a `gridWidth × gridHeight` grid have a footprint (the photo pixels
    /// `areaAverage` averages for it) made of valid photo pixels only.
    static func footprintsValid(_ mask: [Bool], width: Int, height: Int, gridWidth: Int, gridHeight: Int) -> [Bool] {
        // Invalid photo pixels counted over rectangles with a summed-area table.
        var sums = [Int](repeating: 0, count: (width + 1) * (height + 1))
        for y in 0..<height {
            var row = 0
            for x in 0..<width {
                row += mask[y * width + x] ? 0 : 1
                sums[(y + 1) * (width + 1) + x + 1] = sums[y * (width + 1) + x + 1] + row
            }
        }
        let columns = ColorImage.footprints(count: gridWidth, over: width)
        let rows = ColorImage.footprints(count: gridHeight, over: height)
        var valid = [Bool](repeating: false, count: gridWidth * gridHeight)
        for v in 0..<gridHeight {
            let (y0, y1) = rows[v]
            for u in 0..<gridWidth {
                let (x0, x1) = columns[u]
                let invalid = sums[y1 * (width + 1) + x1] - sums[y0 * (width + 1) + x1]
                    - sums[y1 * (width + 1) + x0] + sums[y0 * (width + 1) + x0]
                valid[v * gridWidth + u] = invalid == 0
            }
        }
        return valid
    }
}
