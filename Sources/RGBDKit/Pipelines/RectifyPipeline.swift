/// A capture from files to rectified images (and outputs), scheduled for two processors.
///
/// The same steps as `Capture.load` and `Capture.rectified`, arranged so that no
/// processor waits: while one thread decodes the photo (the longest single step) and then
/// touches the memory the rectified color will go to (the kernel clears fresh pages on
/// first touch), the other parses the JSON, rectifies the depth map and does the
/// caller's depth-side work (staging the depth files). Then the color image is rectified
/// on every processor.
package enum RectifyPipeline {
    /// What a pipeline returns: its output, the warnings reading gave, and what only some
    /// sources carry (a Portrait photo's depth metadata).
    package struct Result<Output: Sendable>: Sendable {
        /// The pipeline's product.
        package var output: Output
        /// Things worth telling the user that did not stop the work.
        package var warnings: [String]
        /// The capture's metadata (`CaptureMetadata`).
        package var metadata: CaptureMetadata
    }

    /// What the decoding thread produces: the image and, if asked, the touched memory
    /// for its rectified copy.
    struct ColorSide {
        var color: ColorImage
        var output: [UInt8]?
    }

    /// What the parsing thread produces.
    struct DepthSide {
        var warnings: [String]
        /// The rectified depth map; with `.color` alignment, the depth map as captured
        /// (the caller rectifies it onto the color grid with every processor).
        var depth: DepthMap
        var colorCalibration: ImageCalibration
        var depthCalibration: ImageCalibration
        /// Intrinsics of the depth output (the color image's with `.color` alignment).
        var depthIntrinsics: Intrinsics
        /// The capture's metadata.
        var metadata: CaptureMetadata
    }

    /// Decodes the photo (and, if asked, touches the color output memory) on one thread
    /// while the other reads the depth side (`CaptureOpening.readDepthSide`), rectifies the
    /// depth map and runs `alongsideDepth` with the depth map, the intrinsics of the color
    /// and depth outputs and the metadata (for an image of more than 24 megapixels, the
    /// depth side first: the image's size is checked before its pixels are allocated).
    ///
    /// With `alignment` `.depth`, the color output's intrinsics are the depth map's (the
    /// caller averages the color down to it). With `.color`, the parsing thread leaves
    /// the depth map as captured and does not run `alongsideDepth`: rectifying it onto
    /// the color grid is many times the work of the native size, and is better done on
    /// every processor once the photo is decoded.
    static func prepare(_ opening: CaptureOpening, rectifier: Rectifier,
                        prefaultColorOutput: Bool, alignment: PixelAlignment? = nil,
                        reading: CaptureReadingOptions = CaptureReadingOptions(), timings: StageTimings?,
                        alongsideDepth: (DepthMap, Intrinsics, Intrinsics, CaptureMetadata) throws -> Void) throws
        -> (color: ColorImage, colorOutput: [UInt8]?, side: DepthSide) {
        let (colorWidth, colorHeight) = (opening.width, opening.height)
        func colorSide() throws -> ColorSide {
            let color = try opening.decode(timings: timings)
            guard prefaultColorOutput else { return ColorSide(color: color, output: nil) }
            let output: [UInt8] = timings.measure("prepare color buffer") {
                LargeBuffer.make(count: colorWidth * colorHeight * 3) { $0.initialize(repeating: 0) }
            }
            return ColorSide(color: color, output: output)
        }
        func depthSide() throws -> DepthSide {
            let read = try opening.readDepthSide(reading: reading, timings: timings)
            let contents = read.contents
            let calibration = contents.calibration
            let colorCalibration = calibration.scaled(toWidth: colorWidth, height: colorHeight)
            let depthCalibration = calibration.scaled(toWidth: contents.depth.width, height: contents.depth.height)
            if alignment == .color {
                return DepthSide(warnings: read.warnings, depth: contents.depth, colorCalibration: colorCalibration,
                                 depthCalibration: depthCalibration, depthIntrinsics: colorCalibration.intrinsics,
                                 metadata: contents.metadata)
            }
            if alignment == .depth {
                try Capture.checkAlignable(colorWidth: colorWidth, colorHeight: colorHeight,
                                           depthWidth: contents.depth.width, depthHeight: contents.depth.height,
                                           json: opening.jsonPath)
            }
            // This thread's rows one after another when the other processor is decoding.
            var depthRectifier = rectifier
            if !opening.decodesAfterChecks { depthRectifier.scheduler = .serial }
            let depth = timings.measure("rectify depth") {
                depthRectifier.rectify(contents.depth, distortion: depthCalibration.distortion)
            }
            let colorIntrinsics = alignment == .depth ? depthCalibration.intrinsics : colorCalibration.intrinsics
            try alongsideDepth(depth, colorIntrinsics, depthCalibration.intrinsics, contents.metadata)
            return DepthSide(warnings: read.warnings, depth: depth, colorCalibration: colorCalibration,
                             depthCalibration: depthCalibration, depthIntrinsics: depthCalibration.intrinsics,
                             metadata: contents.metadata)
        }
        let (side, decoded) = try opening.run(depthSide: depthSide, colorSide: colorSide)
        return (decoded.color, decoded.output, side)
    }

    /// The rectified capture `json` (with `image`, or the photo beside it; a Portrait photo
    /// given alone is the capture by itself), with the warnings and metadata.
    /// `alongsideDepth` runs with the rectified capture's depth side (the rectified depth
    /// map, the color and depth intrinsics and the metadata) while the color is being
    /// decoded or rectified. With `alignment`, the capture is the pixel-aligned pair
    /// `Capture.rectified(with:alignedTo:)` gives.
    package static func rectified(json: String, image: String?, rectifier: Rectifier = Rectifier(),
                                 alignment: PixelAlignment? = nil,
                                 reading: CaptureReadingOptions = CaptureReadingOptions(), timings: StageTimings? = nil,
                                 alongsideDepth: (DepthMap, Intrinsics, Intrinsics, CaptureMetadata) throws -> Void
                                     = { _, _, _, _ in })
        throws -> Result<RectifiedCapture> {
        try rectified(try CaptureOpening(json: json, image: image, timings: timings), rectifier: rectifier,
                      alignment: alignment, reading: reading, timings: timings, alongsideDepth: alongsideDepth).result
    }

    /// `rectified` of an opened capture, also returning the depth side (calibrations, the matte).
    static func rectified(_ opening: CaptureOpening, rectifier: Rectifier, alignment: PixelAlignment?,
                          reading: CaptureReadingOptions, timings: StageTimings?,
                          alongsideDepth: (DepthMap, Intrinsics, Intrinsics, CaptureMetadata) throws -> Void)
        throws -> (result: Result<RectifiedCapture>, side: DepthSide) {
        let json = opening.jsonPath
        let (color, colorOutput, side) = try prepare(opening, rectifier: rectifier,
                                                     prefaultColorOutput: alignment != .depth, alignment: alignment,
                                                     reading: reading, timings: timings, alongsideDepth: alongsideDepth)
        let capture = try rectifier.rectifiedPair(
            color: color, colorCalibration: side.colorCalibration, depth: side.depth, depthCalibration: side.depthCalibration,
            depthIsRectified: alignment != .color, alignment: alignment, colorOutput: colorOutput, stem: Path.stem(json),
            source: json, metadata: side.metadata, timings: timings,
            // The depth-side work in the background while the color is rectified.
            rectifyingColor: { depth, intrinsics, rectify in
                try Concurrently.withBackground({ try alongsideDepth(depth, intrinsics, intrinsics, side.metadata) },
                                                foreground: rectify).0
            })
        return (Result(output: capture, warnings: side.warnings, metadata: side.metadata), side)
    }

    /// The point cloud of capture `json`, as `PointCloud(rectified(...).output)` but
    /// without the full-size rectified color image: the color is rectified and averaged
    /// over the depth pixels' footprints band by band (`Rectifier.rectifyAreaAveraged`),
    /// the same values bit for bit. Returns the cloud with the warnings and metadata.
    /// `upright`: the cloud of the capture turned as its photo asks to be shown (the
    /// stored cloud turned about the optical axis; `OutputGeometry.upright`), for
    /// `frame` `.camera` only (a level or ENU frame places the points itself).
    package static func pointCloud(json: String, image: String?, rectifier: Rectifier = Rectifier(),
                                  options: PointCloudOptions = PointCloudOptions(),
                                  reading: CaptureReadingOptions = CaptureReadingOptions(), frame: WorldFrame.Kind = .camera,
                                  upright: Bool = false,
                                  timings: StageTimings? = nil)
        throws -> Result<PointCloud> {
        let opening = try CaptureOpening(json: json, image: image, timings: timings)
        var placed: WorldFrame?
        let (color, _, side) = try prepare(opening, rectifier: rectifier, prefaultColorOutput: false, reading: reading,
                                           timings: timings) { _, _, _, metadata in
            // The frame is settled before the photo's pixels matter: a capture without what
            // it needs fails here.
            placed = try WorldFrame.forCapture(frame, geo: metadata.geo, file: opening.imagePath)
        }
        var options = options
        options.frame = placed ?? .camera
        let colors = timings.measure("rectify and average colors") {
            rectifier.rectifyAreaAveraged(color, distortion: side.colorCalibration.distortion,
                                          toWidth: side.depth.width, height: side.depth.height)
        }
        var (depth, averaged, intrinsics) = (side.depth, colors, side.depthIntrinsics)
        var warnings = side.warnings
        if upright && frame == .camera {
            (depth, averaged, intrinsics) = turnedUpright(depth: depth, colors: averaged, intrinsics: intrinsics,
                                                    orientation: side.metadata.orientation, imagePath: opening.imagePath,
                                                    warnings: &warnings)
        }
        let cloud = timings.measure("select points") {
            PointCloud(depth: depth, intrinsics: intrinsics, colors: averaged, options: options)
        }
        return Result(output: cloud, warnings: warnings + options.frame.warnings.map { "\(opening.imagePath): \($0)" },
                      metadata: side.metadata)
    }

    /// `rgbd rectify` of one capture: the four outputs in `directory`, the depth-side
    /// files staged while the photo decodes, all committed together, and a Portrait
    /// photo's matte (`NAME.matte.png`, its intrinsics in the sidecar under `matte`). With
    /// `alignment`, color, depth and matte files are a pixel-aligned trio at one size (see
    /// `PixelAlignment`) and the sidecar's intrinsics are that grid's. Returns the paths written with the
    /// warnings and metadata.
    ///
    /// `directory` (and its parents) is created only once the capture has been read and
    /// checked, just before the first file is staged, and removed again if the run then
    /// fails (a photo that fails to decode): a capture that fails leaves no empty
    /// directory behind.
    ///
    /// `geometry` turns the outputs upright and crops them to their valid pixels
    /// (`OutputGeometry`; by default they are as stored).
    @discardableResult
    package static func run(json: String, image: String?, directory: String, rectifier: Rectifier = Rectifier(),
                           alignment: PixelAlignment? = nil, geometry: OutputGeometry = .asStored,
                           pngEffort: PNGCodec.Effort = .fast,
                           reading: CaptureReadingOptions = CaptureReadingOptions(),
                           timings: StageTimings? = nil) throws -> Result<[String]> {
        if !geometry.isIdentity {
            return try runReshaped(json: json, image: image, directory: directory, rectifier: rectifier,
                                   alignment: alignment, geometry: geometry, pngEffort: pngEffort, reading: reading,
                                   timings: timings)
        }
        let paths = RectifiedCapture.outputPaths(stem: Path.stem(json), in: directory)
        let files = StagedFiles()
        let opening = try CaptureOpening(json: json, image: image, timings: timings)
        // `alongsideDepth` runs once, with every alignment, before anything else is staged.
        let (result, side) = try rectified(
            opening, rectifier: rectifier, alignment: alignment, reading: reading,
            timings: timings) { depth, colorIntrinsics, depthIntrinsics, metadata in
            try files.createDirectory(directory)
            let matteIntrinsics = metadata.matte.map {
                RectifiedCapture.matteIntrinsics(width: $0.width, height: $0.height, depth: depthIntrinsics,
                                                 alignment: alignment)
            }
            try RectifiedCapture.stageDepthOutputs(
                depth: depth, colorIntrinsics: colorIntrinsics, depthIntrinsics: depthIntrinsics,
                matteIntrinsics: matteIntrinsics, source: json, metadata: metadata, paths: paths, files: files,
                pngEffort: pngEffort, timings: timings)
        }
        let capture = result.output
        var written = paths
        if let matte = side.metadata.matte {
            let path = Path.join(directory, "\(Path.stem(json)).matte.png")
            let png = try timings.measure("matte") {
                try RectifiedCapture.mattePNG(matte, calibration: side.depthCalibration, rectifier: rectifier,
                                              alignment: alignment, grid: (capture.depth.width, capture.depth.height),
                                              effort: pngEffort)
            }
            try files.stage(path, bytes: png)
            written.append(path)
        }
        let png = try timings.measure("encode color png") { try PNGCodec.encodeRGB(capture.color, effort: pngEffort) }
        try timings.measure("write color png") { try files.stage(paths[0], bytes: png) }
        try files.commit()
        return Result(output: written, warnings: result.warnings, metadata: result.metadata)
    }
}
