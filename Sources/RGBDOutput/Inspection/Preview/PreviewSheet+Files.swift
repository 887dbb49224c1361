extension PreviewSheet {
    /// `rgbd preview` of one capture: loads `json` (with `image`, or the photo beside it),
    /// renders its sheet and writes it as PNG to `path` (created atomically, its directory
    /// too). `reading` sets the physical maximum depth. Returns the capture's warnings (and,
    /// with `options.upright`, that a mirroring orientation was left as stored).
    @discardableResult
    package static func write(json: String, image: String?, to path: String, options: PreviewOptions = PreviewOptions(),
                             reading: CaptureReadingOptions = CaptureReadingOptions(),
                             timings: StageTimings? = nil) throws -> [String] {
        try options.validate()
        let capture = try Capture.load(json: json, image: image, reading: reading, timings: timings)
        let sheet = try render(capture, options: options, timings: timings)
        let png = try timings.measure("encode preview png") { try PNGCodec.encodeRGB(sheet) }
        try FileSystem.createDirectory(Path.directory(of: path))
        let files = StagedFiles()
        try timings.measure("write preview png") { try files.stage(path, bytes: png) }
        try files.commit()
        var warnings = capture.warnings
        if options.upright && capture.metadata.orientation.mirrored {
            warnings.append("\(capture.imagePath): its orientation (EXIF \(capture.metadata.orientation.exifValue)) mirrors the image; turning upright turns images only, so the sheet is as stored")
        }
        return warnings
    }
}
