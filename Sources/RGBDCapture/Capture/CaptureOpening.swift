/// The one way into a capture: from files (a capture JSON with its photo, or a Portrait
/// photo) or from bytes, to the photo's bytes and stored size and the depth side (the
/// calibration and depth map, checked against the photo). `Capture.load`,
/// `CaptureInfo.read`, the rectify and cloud pipelines and the C ABI all open captures
/// through it, so they accept and refuse the same inputs with the same messages.
///
/// Opening reads the photo's header only (one that cannot be read is reported after the
/// depth side: the JSON's error comes first). `readDepthSide` parses the JSON (or the Portrait
/// photo's depth image and metadata) and checks every size against the calibration;
/// `decode` decodes the photo; `run` does both, at once on two threads, or, for a photo of
/// more than `sequentialDecodePixels`, the depth side first, so that a capture refused for
/// its sizes never allocates the photo's pixels.
package struct CaptureOpening: Sendable {
    /// Where the depth side comes from.
    package enum DepthSideSource: Sendable {
        /// The capture JSON at `jsonPath` (a depth image beside it may be read too).
        case jsonFile
        /// The bytes of a capture JSON, named `jsonPath` in messages (the depth map must
        /// be in it).
        case jsonBytes([UInt8])
        /// The photo itself: a Portrait photo's depth image and depth metadata.
        case portrait
    }

    /// The capture's JSON (for a Portrait photo, the photo), as messages name it and
    /// output names derive from it.
    package var jsonPath: String
    /// The photo's path.
    package var imagePath: String
    /// Where the calibration and depth map are read from.
    package var source: DepthSideSource
    /// The photo's bytes.
    package var photo: [UInt8]
    /// The photo's format, by content.
    package var format: FileFormat
    /// The photo's stored width, from its header.
    package var width: Int
    /// The photo's stored height, from its header.
    package var height: Int

    /// What the depth side holds once read and checked.
    package struct DepthSide: Sendable {
        /// The calibration, depth map and metadata as read.
        package var contents: CaptureReader.Contents
        /// What reading found worth telling (aspect mismatches, discarded depth markers).
        package var warnings: [String]
        /// With `collectingShapeErrors`, the images whose shape the calibration refuses
        /// (`Capture.checkSizes`): what rectifying would fail with.
        package var shapeErrors: [RGBDError] = []
    }

    /// Whether the capture is a Portrait photo (the photo holds its own depth).
    package var isPortrait: Bool {
        if case .portrait = source { return true }
        return false
    }

    /// Opens capture `json` with `image` (default: the photo beside the JSON,
    /// `Capture.imagePath(besideJSON:)`). With no `image`, a `json` that is a photo by
    /// content, or is named like one (`FileFormat.photoExtensions`), is a Portrait photo.
    ///
    /// - Throws: `RGBDError` naming the file: a photo given as the JSON together with an
    ///   image, no photo beside the JSON, a photo that cannot be read, an implausible size.
    package init(json: String, image: String?, timings: StageTimings? = nil) throws {
        // The input's first bytes, read once: a photo, another image, or (nil) a JSON.
        let format = FileFormat(path: json)
        if let image, format?.isPhoto == true {
            throw RGBDError(.invalidJSON, file: json,
                            "is a photo, not a capture JSON: a Portrait photo is a capture by itself and takes no other image, but \(image) was given",
                            argument: .image)
        }
        if let format, !format.isPhoto {
            throw Self.notACapture(json, format: format)
        }
        // A photo by content, or named like one (so that an empty or broken photo is
        // reported as the photo it was meant to be, not parsed as a JSON).
        let portrait = image == nil && (format?.isPhoto ?? FileFormat.isNamedLikePhoto(json))
        let imagePath = portrait ? json : try image ?? Capture.imagePath(besideJSON: json)
        let photo = try timings.measure("read image") { try FileSystem.readFile(imagePath) }
        try self.init(jsonPath: json, imagePath: imagePath, source: portrait ? .portrait : .jsonFile, photo: photo)
    }

    /// Opens a Portrait photo from its bytes; `name` stands for the file in messages and
    /// gives the stem of output names.
    package init(portraitBytes: [UInt8], name: String) throws {
        try self.init(jsonPath: name, imagePath: name, source: .portrait, photo: portraitBytes)
    }

    /// Opens a capture from the bytes of its JSON and photo; `name` stands for the files in
    /// messages (`NAME.json` and `NAME.jpg`) and gives the stem of output names.
    package init(jsonBytes: [UInt8], photoBytes: [UInt8], name: String) throws {
        let jsonName = name.hasSuffix(".json") ? name : name + ".json"
        let directory = Path.directory(of: jsonName)
        let imageName = directory == "." && !jsonName.hasPrefix("./")
            ? Path.stem(jsonName) + ".jpg" : Path.join(directory, Path.stem(jsonName) + ".jpg")
        try self.init(jsonPath: jsonName, imagePath: imageName, source: .jsonBytes(jsonBytes), photo: photoBytes)
    }

    /// Why the photo's header could not be read, if it could not: thrown by
    /// `readDepthSide` once the depth side has been read, so that a capture whose JSON and
    /// photo are both broken reports the JSON, as when both are read at once.
    private var headerError: (any Error)?

    private init(jsonPath: String, imagePath: String, source: DepthSideSource, photo: [UInt8]) throws {
        self.jsonPath = jsonPath
        self.imagePath = imagePath
        self.source = source
        self.photo = photo
        (format, width, height) = (.jpeg, 0, 0)
        do {
            format = try PhotoDecoder.recognise(photo, file: imagePath)
            (width, height) = try PhotoDecoder.size(of: photo, file: imagePath)
        } catch {
            headerError = error
            return
        }
        if decodesAfterChecks, format == .jpeg {
            try JPEGCodec.checkPlausible(width: width, height: height, byteCount: photo.count, file: imagePath)
        }
    }

    /// The error for an image given where a capture is expected: what it is, what to give
    /// instead, and whether its name is one of rgbd's own outputs.
    static func notACapture(_ path: String, format: FileFormat) -> RGBDError {
        let outputs = [".color.png", ".depth.png", ".depth.tiff", ".matte.png", ".preview.png"]
        let ours = outputs.contains { Path.lastComponent(path).lowercased().hasSuffix($0) }
            ? " (its name is that of one of rgbd's own outputs)" : ""
        return RGBDError(.invalidCapture, file: path,
                         "is a \(format.rawValue) \(format == .zip ? "archive" : "image"), not a capture\(ours): give a capture's JSON (its photo beside it) or a Portrait photo")
    }

    /// The capture JSON beside a photo (same folder and stem, `.json` in any case), if one
    /// exists.
    static func captureJSON(besidePhoto photo: String) -> String? {
        let directory = Path.directory(of: photo)
        let stem = Path.stem(photo)
        let names = (try? FileSystem.contentsOfDirectory(directory)) ?? []
        guard let name = names.first(where: { Path.stem($0) == stem && Path.pathExtension($0) == "json" }) else {
            return nil
        }
        return directory == "." && !photo.hasPrefix("./") ? name : Path.join(directory, name)
    }

    /// 24 megapixels: 72 MB of RGB, twice that with the rectified copy; a 12 MP iPhone
    /// photo is still decoded while its JSON is parsed, a 48 MP one after.
    package static let sequentialDecodePixels = 24_000_000

    /// Whether the photo is decoded only after the depth side has been read and the
    /// photo's size checked against it: one of more than `sequentialDecodePixels`, whose
    /// decoding (and the rectified copy prepared beside it) would cost more memory than a
    /// rejected input may if the JSON then failed.
    package var decodesAfterChecks: Bool { width * height > Self.sequentialDecodePixels }

    /// Reads the calibration and depth map and checks the photo's and the depth map's
    /// sizes against the calibration (`Capture.checkSizes`); `reading` sanitizes the depth.
    /// With `collectingShapeErrors`, an image whose aspect ratio no crop or rounding
    /// explains is returned in `shapeErrors` instead of thrown (for `rgbd info`).
    package func readDepthSide(reading: CaptureReadingOptions = CaptureReadingOptions(),
                               timings: StageTimings? = nil, collectingShapeErrors: Bool = false) throws -> DepthSide {
        var contents = try timings.measure("parse") {
            switch source {
            case .jsonFile: try CaptureReader.read(path: jsonPath, options: reading)
            case .jsonBytes(let bytes): try CaptureReader.parse(bytes, file: jsonPath, options: reading)
            case .portrait: try readPortrait(reading: reading)
            }
        }
        if let headerError { throw headerError }
        var (warnings, shapeErrors) = try Capture.checkSizes(
            image: imagePath, width: width, height: height, json: jsonPath, depth: contents.depth,
            calibration: contents.calibration, keys: contents.keys, depthFile: contents.depthSource.path,
            collectingShapeErrors: collectingShapeErrors)
        if let warning = contents.discardWarning(json: jsonPath) { warnings.append(warning) }
        // The EXIF's place, heading and gravity (a few kilobytes of the photo's header);
        // what cannot be used is a warning, never a failure.
        let exif = EXIFMetadata(photo: photo)  // read once: the orientation and the geotag
        contents.metadata.orientation = PhotoOrientation.of(photo: photo, exif: exif)
        if let exif {
            let geo = GeoTag(exif: exif, width: width, height: height)
            contents.metadata.geo = geo
            warnings += geo.warnings.map { "\(imagePath): \($0)" }
        }
        return DepthSide(contents: contents, warnings: warnings, shapeErrors: shapeErrors)
    }

    /// A Portrait photo's depth side; a photo without a depth image that has a capture JSON
    /// beside it (a capture's photo given instead of its JSON) says which file to give.
    private func readPortrait(reading: CaptureReadingOptions) throws -> CaptureReader.Contents {
        do {
            return try PortraitReader.read(photo, file: jsonPath, options: reading)
        } catch let error as RGBDError where error.message == PortraitReader.noDepthImage {
            guard let json = Self.captureJSON(besidePhoto: jsonPath) else { throw error }
            throw RGBDError(error.kind, file: error.file,
                            "\(error.message), so it is not a capture by itself; \(json) beside it is a capture JSON: give that")
        }
    }

    /// Decodes the photo to 8-bit RGB, pixels as stored.
    package func decode(timings: StageTimings? = nil) throws -> ColorImage {
        try timings.measure("decode") { try PhotoDecoder.decodeRGB(photo, file: imagePath) }
    }

    /// Runs `depthSide` (which reads the depth side and whatever the caller does with it)
    /// and `colorSide` (which decodes the photo and whatever the caller does with it): at
    /// once, the depth side in the background and the color side on the calling thread, or
    /// the depth side first for a photo that `decodesAfterChecks`. If both fail, the depth
    /// side's error is the one thrown.
    ///
    /// The color side runs outside any `concurrentPerform`, so that a decoder that spreads
    /// its own work (a HEIC's tiles) gets every processor; inside one, libdispatch would
    /// give it only the width the outer loop leaves (one thread on two processors).
    package func run<D, C>(depthSide: () throws -> D, colorSide: () throws -> C) throws -> (D, C) {
        if decodesAfterChecks {
            let depth = try depthSide()
            return (depth, try colorSide())
        }
        let (color, depth) = try Concurrently.withBackground({ Result { try depthSide() } },
                                                             foreground: { Result { try colorSide() } })
        return (try depth.get(), try color.get())
    }
}
