/// Writing a rectified capture's four output files.
extension RectifiedCapture {
    /// The paths `write(to:)` produces in `directory`: `<stem>.color.png`,
    /// `<stem>.depth.png`, `<stem>.depth.tiff`, `<stem>.intrinsics.json`.
    public func outputPaths(in directory: String) -> [String] {
        Self.outputPaths(stem: stem, in: directory)
    }

    /// The four output paths of a capture named `stem` in `directory`.
    public static func outputPaths(stem: String, in directory: String) -> [String] {
        ["color.png", "depth.png", "depth.tiff", "intrinsics.json"].map { Path.join(directory, "\(stem).\($0)") }
    }

    /// Writes the outputs to `directory` (created if missing): rectified color as 8-bit
    /// RGB PNG, depth as 16-bit PNG in millimeters (0 = no depth) and as float32 TIFF in
    /// meters (NaN = no depth), and the intrinsics sidecar.
    ///
    /// All four are written under temporary names and renamed into place only when all
    /// are complete, so a failure leaves none of them half-written. The depth files are
    /// written in the background while the color PNG is encoded on all processors.
    @discardableResult
    package func write(to directory: String, pngEffort: PNGCodec.Effort = .fast,
                      timings: StageTimings? = nil) throws -> [String] {
        try FileSystem.createDirectory(directory)
        let paths = outputPaths(in: directory)
        let files = StagedFiles()
        let colorPNG: [UInt8]
        (colorPNG, _) = try Concurrently.withBackground(
            {
                try Self.stageDepthOutputs(depth: depth, colorIntrinsics: colorIntrinsics, depthIntrinsics: depthIntrinsics,
                                           source: source, metadata: metadata, paths: paths, files: files, pngEffort: pngEffort, timings: timings)
            },
            foreground: { try timings.measure("encode color png") { try PNGCodec.encodeRGB(color, effort: pngEffort) } })
        try timings.measure("write color png") { try files.stage(paths[0], bytes: colorPNG) }
        try files.commit()
        return paths
    }

    /// Encodes and stages the depth PNG, the depth TIFF and the intrinsics sidecar
    /// (`paths[1...3]` of `outputPaths`); `matteIntrinsics` are those of a matte file
    /// written beside them, if one is.
    package static func stageDepthOutputs(depth: DepthMap, colorIntrinsics: Intrinsics, depthIntrinsics: Intrinsics,
                                  matteIntrinsics: Intrinsics? = nil, source: String,
                                  metadata: CaptureMetadata = CaptureMetadata(), paths: [String], files: StagedFiles,
                                  pngEffort: PNGCodec.Effort, timings: StageTimings?) throws {
        let millimeters = DepthEncoding.millimeters(depth)
        let depthPNG = try timings.measure("encode depth png") {
            try PNGCodec.encodeGray16(width: depth.width, height: depth.height, samples: millimeters, effort: pngEffort)
        }
        try timings.measure("write depth png") { try files.stage(paths[1], bytes: depthPNG) }
        try timings.measure("write depth tiff") {
            try files.stage(paths[2]) { fd, temporary in try TIFFCodec.writeFloat(depth, fd: fd, path: temporary) }
        }
        try timings.measure("write intrinsics") {
            let text = IntrinsicsFile.json(color: colorIntrinsics, depth: depthIntrinsics, matte: matteIntrinsics,
                                           source: source, depthAccuracy: metadata.portrait?.accuracy,
                                           depthQuality: metadata.portrait?.quality,
                                           frames: WorldFrame.Kind.allCases.compactMap { kind in
                                               kind == .camera ? nil : try? WorldFrame.forCapture(kind, geo: metadata.geo, file: source)
                                           })
            try files.stage(paths[3], bytes: Array(text.utf8))
        }
    }

    /// The intrinsics of the matte file `mattePNG` writes for a matte of `width × height`,
    /// given those of the depth output (`depth`): with `alignment`, the same (the matte is
    /// on the pixel-aligned pair's grid); without, scaled to the matte's size (the matte
    /// is aligned with the depth map).
    package static func matteIntrinsics(width: Int, height: Int, depth: Intrinsics, alignment: PixelAlignment?) -> Intrinsics {
        alignment == nil ? depth.scaled(toWidth: width, height: height) : depth
    }

    /// A Portrait Effects Matte rectified, as a 16-bit grayscale PNG (0 to 65535 = 0 to 1).
    /// It is aligned with the depth map: rectified with the depth map's calibration
    /// (`calibration`) scaled to its size. Without `alignment` it keeps its own size; with
    /// one it is put on the pixel-aligned pair's grid (`grid`), as the depth map is: with
    /// `.color`, rectified straight onto the photo's grid in one bilinear resampling
    /// (the pair's depth's mapping); with `.depth`, rectified at its size and averaged
    /// over each depth pixel's footprint (as the pair's color is).
    package static func mattePNG(_ matte: ImageBuffer<UInt8>, calibration: ImageCalibration, rectifier: Rectifier,
                         alignment: PixelAlignment? = nil, grid: (width: Int, height: Int)? = nil,
                         effort: PNGCodec.Effort) throws -> [UInt8] {
        let rectified = rectifiedMatte(matte, calibration: calibration, rectifier: rectifier, alignment: alignment,
                                       grid: grid ?? (matte.width, matte.height))
        return try matteBytes(rectified, effort: effort)
    }

    /// A rectified matte (8-bit) as the 16-bit grayscale PNG of `NAME.matte.png`.
    package static func matteBytes(_ rectified: ImageBuffer<UInt8>, effort: PNGCodec.Effort) throws -> [UInt8] {
        try PNGCodec.encodeGray16(width: rectified.width, height: rectified.height,
                                  samples: rectified.samples.map { UInt16($0) * 257 }, effort: effort)
    }

    /// The lens model of a matte of `width × height` aligned with the depth map whose
    /// calibration is `calibration`: the depth map's, scaled to the matte's size.
    package static func matteLens(width: Int, height: Int, calibration: ImageCalibration) -> LensDistortion {
        let distortion = calibration.distortion
        return LensDistortion(center: SIMD2(distortion.center.x * Double(width) / Double(distortion.width),
                                            distortion.center.y * Double(height) / Double(distortion.height)),
                              table: distortion.table, width: width, height: height)
    }

    /// The rectified matte of `mattePNG`, 8-bit.
    package static func rectifiedMatte(_ matte: ImageBuffer<UInt8>, calibration: ImageCalibration, rectifier: Rectifier,
                               alignment: PixelAlignment?, grid: (width: Int, height: Int)) -> ImageBuffer<UInt8> {
        let lens = matteLens(width: matte.width, height: matte.height, calibration: calibration)
        switch alignment {
        case nil:
            return rectifier.rectify(matte, distortion: lens)
        case .depth?:
            return rectifier.rectify(matte, distortion: lens).areaAverage(toWidth: grid.width, height: grid.height,
                                                                         scheduler: rectifier.scheduler)
        case .color?:
            // The depth resampling onto a grid, every neighbor blended (no edge to keep
            // in a matte: plain bilinear), on values 1…256 so that none is a hole.
            var blending = rectifier
            blending.maxRelativeDepthStep = .greatestFiniteMagnitude
            let values = DepthMap(width: matte.width, height: matte.height, channels: 1,
                                  samples: matte.samples.map { Float($0) + 1 })
            let resampled = blending.rectify(values, distortion: lens, toWidth: grid.width, height: grid.height)
            return ImageBuffer(width: grid.width, height: grid.height, channels: 1,
                               samples: resampled.samples.map { $0.isFinite ? UInt8(clamping: Int(($0 - 1).rounded())) : 0 })
        }
    }
}
