/// One iPhone depth capture as exported: the calibration and depth map from the JSON,
/// and the color photo (JPEG or HEIC), all as captured (distorted, sensor orientation).
public struct Capture: Sendable {
    /// The capture JSON's path (for a Portrait photo, the photo's).
    public var jsonPath: String
    /// The color image's path.
    public var imagePath: String
    /// The calibration at its reference dimensions.
    public var calibration: Calibration
    /// The depth map as captured: meters, NaN = no depth.
    public var depth: DepthMap
    /// The color image as stored in the photo (no EXIF or HEIF rotation).
    public var color: ColorImage
    /// Things worth telling the user that did not stop the reading (aspect mismatches).
    public var warnings: [String]
    /// What only some sources carry: for a Portrait photo (`jsonPath == imagePath`), its
    /// depth metadata and matte.
    public var metadata = CaptureMetadata()

    /// The name outputs are derived from: the JSON's file name without its extension.
    public var stem: String { Path.stem(jsonPath) }

    /// Loads a capture: parses the JSON and decodes the image (`image` defaults to the
    /// photo beside the JSON with the same stem, `imagePath(besideJSON:)`; JPEG or HEIC),
    /// both at once on two threads. Sizes are checked against the calibration. A JSON
    /// without a depth map takes its depth from the image it names or the one beside it
    /// (`depthImagePath(besideJSON:)`); `reading` sets the physical maximum depth.
    ///
    /// A Portrait photo (a HEIC or JPEG holding a depth image, recognised by content)
    /// given as `json` with no `image` is a capture by itself (`load(photo:)`).
    public static func load(json: String, image: String? = nil, reading: CaptureReadingOptions = CaptureReadingOptions(),
                            timings: StageTimings? = nil) throws -> Capture {
        try load(try CaptureOpening(json: json, image: image), reading: reading, timings: timings)
    }

    /// Loads a Portrait photo as a capture: its primary image is the color, its depth
    /// image and depth metadata the depth map and calibration (docs/portrait.md).
    /// `jsonPath` and `imagePath` are both `photo`.
    ///
    /// - Throws: `RGBDError` naming the photo; "holds no depth image" for a photo without one.
    public static func load(photo: String, reading: CaptureReadingOptions = CaptureReadingOptions(),
                            timings: StageTimings? = nil) throws -> Capture {
        let bytes = try FileSystem.readFile(photo)
        return try load(photoBytes: bytes, name: photo, reading: reading, timings: timings)
    }

    /// A Portrait photo's capture from the file's bytes alone; `name` stands for the file
    /// in messages and gives `stem`.
    public static func load(photoBytes: [UInt8], name: String, reading: CaptureReadingOptions = CaptureReadingOptions(),
                            timings: StageTimings? = nil) throws -> Capture {
        try load(try CaptureOpening(portraitBytes: photoBytes, name: name), reading: reading, timings: timings)
    }

    /// Makes a capture from the bytes of its JSON and photo, JPEG or HEIC (both parsed on two threads);
    /// `name` stands for the files in messages and gives `stem`.
    public static func load(jsonBytes: [UInt8], jpegBytes: [UInt8], name: String) throws -> Capture {
        try load(try CaptureOpening(jsonBytes: jsonBytes, photoBytes: jpegBytes, name: name),
                 reading: CaptureReadingOptions(), timings: nil)
    }

    /// The capture `opening` leads to: its depth side read and checked while the photo decodes.
    static func load(_ opening: CaptureOpening, reading: CaptureReadingOptions, timings: StageTimings?) throws -> Capture {
        let (side, color) = try opening.run(depthSide: { try opening.readDepthSide(reading: reading, timings: timings) },
                                            colorSide: { try opening.decode(timings: timings) })
        let contents = side.contents
        var capture = Capture(jsonPath: opening.jsonPath, imagePath: opening.imagePath, calibration: contents.calibration,
                              depth: contents.depth, color: color, warnings: side.warnings)
        capture.metadata = contents.metadata
        return capture
    }

    /// A capture from its parts, as they are (no checks).
    package init(jsonPath: String, imagePath: String, calibration: Calibration, depth: DepthMap, color: ColorImage,
                warnings: [String] = []) {
        self.jsonPath = jsonPath
        self.imagePath = imagePath
        self.calibration = calibration
        self.depth = depth
        self.color = color
        self.warnings = warnings
    }

    /// The photo beside a capture JSON: same directory and stem, extension `jpg` or
    /// `jpeg` in any case, else `heic` or `heif` (a JPEG is preferred when both exist).
    package static func imagePath(besideJSON json: String) throws -> String {
        guard FileSystem.exists(json) else { throw RGBDError(.io, file: json, "no such file") }
        let directory = Path.directory(of: json)
        let stem = Path.stem(json)
        let names = (try? FileSystem.contentsOfDirectory(directory)) ?? []
        let candidates = names.filter { Path.stem($0) == stem }
        let preferred = FileFormat.photoExtensions.lazy.compactMap { ext in
            candidates.first { Path.pathExtension($0) == ext }
        }.first
        guard let name = preferred else {
            throw RGBDError(.io, file: json, "no image beside it (looked for \(stem).jpg, .jpeg, .heic or .heif in \(directory)); give the image explicitly",
                            argument: .image)
        }
        return directory == "." && !json.hasPrefix("./") ? name : Path.join(directory, name)
    }

    /// Checks the sizes of the color image (`width × height`, from `image`) and of the
    /// depth map (from `json`, or the depth image `depthFile`) against the calibration;
    /// returns the warnings (an aspect ratio a crop explains). An aspect ratio no crop or
    /// rounding explains (`Calibration.aspectAgreement`) is an error naming the file and
    /// both shapes: thrown, or with `collectingShapeErrors` (`rgbd info`, which shows such
    /// a capture) returned.
    ///
    /// An image whose size is the reference size transposed, or a principal point that
    /// lies as if the frame were transposed, is an orientation mismatch. Which input is
    /// wrong is decided by the three orientations (reference size, principal point,
    /// images): the one that disagrees with the other two is named, the JSON key when it
    /// is the calibration's.
    static func checkSizes(image: String, width: Int, height: Int, json: String, depth: DepthMap,
                           calibration: Calibration, keys: CalibrationKeys = CalibrationKeys(),
                           depthFile: String? = nil, collectingShapeErrors: Bool = false)
        throws -> (warnings: [String], shapeErrors: [RGBDError]) {
        let (W, H) = calibration.referenceSize
        let pointAgrees = calibration.principalPointAgreesWithReference
        let k = calibration.intrinsics
        let point = "(\(Self.short(k.cx)), \(Self.short(k.cy)))"
        let images = [(width, height, "image", image), (depth.width, depth.height, "depth map", depthFile ?? json)]
        for (w, h, what, file) in images where isTransposed(width: w, height: h, W: W, H: H) {
            if pointAgrees == false {
                throw RGBDError(.invalidCapture, file: json, location: keys.referenceDimensions,
                                "is \(W)×\(H), but the principal point \(point) and the \(what) (\(w)×\(h)\(file == json ? "" : ", " + file)) are \(orientation(w, h)): the reference dimensions are transposed (\(H)×\(W) would fit)")
            }
            throw RGBDError(.invalidImage, file: file,
                            "the \(what) is \(w)×\(h), the calibration's reference size transposed (\(W)×\(H)\(pointAgrees == true ? ", which the principal point \(point) confirms" : "")): it was rotated; rgbd needs the pixels as the camera stored them, in the calibration's (sensor) orientation")
        }
        if pointAgrees == false {
            throw RGBDError(.invalidCapture, file: json, location: keys.intrinsicMatrix,
                            "the principal point \(point) lies as in a \(H)×\(W) frame, but the reference dimensions and the images are \(orientation(W, H)) (\(W)×\(H)): the intrinsic matrix is of a rotated frame")
        }
        var warnings: [String] = []
        var shapeErrors: [RGBDError] = []
        for (w, h, what, file) in images {
            let percent = Int((calibration.aspectMismatch(width: w, height: h) * 100).rounded())
            switch calibration.aspectAgreement(width: w, height: h) {
            case .same:
                break
            case .crop:
                warnings.append("\(file): the \(what) is \(w)×\(h), whose aspect ratio differs from the reference \(W)×\(H) by \(percent) % (as a crop would); calibration is scaled per axis")
            case .wrong:
                let error = aspectError(file: file, what: what, width: w, height: h, W: W, H: H, percent: percent)
                guard collectingShapeErrors else { throw error }
                shapeErrors.append(error)
            }
        }
        return (warnings, shapeErrors)
    }

    /// The error for an image whose shape no crop or rounding explains
    /// (`Calibration.AspectAgreement.wrong`): one line naming the file and both shapes.
    static func aspectError(file: String, what: String, width w: Int, height h: Int, W: Int, H: Int,
                            percent: Int) -> RGBDError {
        let widest = "16:9"
        return RGBDError(.invalidImage, file: file,
                         "the \(what) is \(w)×\(h) (\(orientation(w, h)), aspect \(DecimalText.fixed(Double(w) / Double(h), 3))), but the calibration's reference is \(W)×\(H) (\(orientation(W, H)), aspect \(DecimalText.fixed(Double(W) / Double(H), 3))): a difference of \(percent) % that neither rounding (1 %) nor a crop (square to \(widest), in the reference's orientation) explains; it is not the \(what) this calibration describes")
    }

    /// Whether a `width × height` image has the aspect of `H × W` and not of `W × H`.
    static func isTransposed(width: Int, height: Int, W: Int, H: Int) -> Bool {
        guard W != H else { return false }
        let transposedAspect = Double(height) / Double(width) - Double(W) / Double(H)
        let sameAspect = Double(width) / Double(height) - Double(W) / Double(H)
        return abs(transposedAspect) < 1e-6 && abs(sameAspect) > 1e-6
    }

    static func orientation(_ width: Int, _ height: Int) -> String {
        width > height ? "landscape" : width < height ? "portrait" : "square"
    }

    /// A coordinate in messages: at most one decimal.
    static func short(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? "\(Int(rounded))" : "\(rounded)"
    }
}
