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
    public func write(to directory: String, pngEffort: PNGCodec.Effort = .fast,
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
    /// (`paths[1...3]` of `outputPaths`).
    static func stageDepthOutputs(depth: DepthMap, colorIntrinsics: Intrinsics, depthIntrinsics: Intrinsics,
                                  source: String, metadata: CaptureMetadata = CaptureMetadata(), paths: [String], files: StagedFiles, pngEffort: PNGCodec.Effort,
                                  timings: StageTimings?) throws {
        let millimeters = DepthEncoding.millimeters(depth)
        let depthPNG = try timings.measure("encode depth png") {
            try PNGCodec.encodeGray16(width: depth.width, height: depth.height, samples: millimeters, effort: pngEffort)
        }
        try timings.measure("write depth png") { try files.stage(paths[1], bytes: depthPNG) }
        try timings.measure("write depth tiff") {
            try files.stage(paths[2]) { fd, temporary in try TIFFCodec.writeFloat(depth, fd: fd, path: temporary) }
        }
        try timings.measure("write intrinsics") {
            let text = IntrinsicsFile.json(color: colorIntrinsics, depth: depthIntrinsics, source: source,
                                           depthAccuracy: metadata.portrait?.accuracy)
            try files.stage(paths[3], bytes: Array(text.utf8))
        }
    }

    /// A Portrait Effects Matte rectified with the calibration scaled to its size (it is
    /// aligned with the depth map), as a 16-bit grayscale PNG (0 to 65535 = 0 to 1).
    static func mattePNG(_ matte: ImageBuffer<UInt8>, calibration: ImageCalibration, rectifier: Rectifier,
                         effort: PNGCodec.Effort) throws -> [UInt8] {
        let scaled = LensDistortion(center: SIMD2(calibration.distortion.center.x * Double(matte.width) / Double(calibration.distortion.width),
                                                  calibration.distortion.center.y * Double(matte.height) / Double(calibration.distortion.height)),
                                    table: calibration.distortion.table, width: matte.width, height: matte.height)
        var rectified = [UInt8](repeating: 0, count: matte.samples.count)
        matte.samples.withUnsafeBufferPointer { source in
            rectified.withUnsafeMutableBufferPointer { destination in
                rectifier.rectify(source, channels: 1, distortion: scaled, into: destination)
            }
        }
        return try PNGCodec.encodeGray16(width: matte.width, height: matte.height,
                                         samples: rectified.map { UInt16($0) * 257 }, effort: effort)
    }
}
