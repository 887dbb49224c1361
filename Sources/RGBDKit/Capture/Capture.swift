/// One iPhone depth capture as exported: the calibration and depth map from the JSON,
/// and the color photo from the JPEG, all as captured (distorted, sensor orientation).
public struct Capture: Sendable {
    /// The capture JSON's path.
    public var jsonPath: String
    /// The color image's path.
    public var imagePath: String
    /// The calibration at its reference dimensions.
    public var calibration: Calibration
    /// The depth map as captured: meters, NaN = no depth.
    public var depth: DepthMap
    /// The color image as stored in the JPEG (no EXIF rotation).
    public var color: ColorImage
    /// Things worth telling the user that did not stop the reading (aspect mismatches).
    public var warnings: [String]

    /// The name outputs are derived from: the JSON's file name without its extension.
    public var stem: String { Path.stem(jsonPath) }

    /// Loads a capture: parses the JSON and decodes the image (`image` defaults to the
    /// file beside the JSON with the same stem and a `.jpg`/`.jpeg` extension in any case),
    /// both at once on two threads. Sizes are checked against the calibration.
    public static func load(json: String, image: String? = nil, timings: StageTimings? = nil) throws -> Capture {
        let imagePath = try image ?? Capture.imagePath(besideJSON: json)
        let jpeg = try FileSystem.readFile(imagePath)
        let (contents, color) = try parseAndDecode(
            jpeg: jpeg, image: imagePath, json: json,
            parse: { try timings.measure("parse") { try CaptureReader.read(path: json) } },
            decode: { try timings.measure("decode") { try JPEGCodec.decodeRGB(jpeg, file: imagePath) } })
        return try Capture(json: json, image: imagePath, contents: contents, color: color)
    }

    /// Makes a capture from the bytes of its JSON and JPEG (both parsed on two threads);
    /// `name` stands for the files in messages and gives `stem`.
    public static func load(jsonBytes: [UInt8], jpegBytes: [UInt8], name: String) throws -> Capture {
        let jsonName = name.hasSuffix(".json") ? name : name + ".json"
        let directory = Path.directory(of: jsonName)
        let imageName = directory == "." && !jsonName.hasPrefix("./")
            ? Path.stem(jsonName) + ".jpg" : Path.join(directory, Path.stem(jsonName) + ".jpg")
        let (contents, color) = try parseAndDecode(
            jpeg: jpegBytes, image: imageName, json: jsonName,
            parse: { try CaptureReader.parse(jsonBytes, file: jsonName) },
            decode: { try JPEGCodec.decodeRGB(jpegBytes, file: imageName) })
        return try Capture(json: jsonName, image: imageName, contents: contents, color: color)
    }

    /// Whether an image of `width × height` is decoded only after the JSON has been
    /// read and the image's size checked against it: one beyond any camera's size
    /// (`JPEGCodec.trialDecodePixels`), whose decoding would cost more memory than a
    /// rejected input may.
    static func decodesAfterChecks(width: Int, height: Int) -> Bool {
        width * height > JPEGCodec.trialDecodePixels
    }

    /// `parse` and `decode` of `jpeg` at once on two threads (the JSON's error first if
    /// both fail); for an image that `decodesAfterChecks`, one after the other with the
    /// size from the JPEG's header checked against the calibration (and for
    /// plausibility) in between, so a capture rejected for its size never allocates the
    /// image's pixels.
    static func parseAndDecode(jpeg: [UInt8], image: String, json: String,
                               parse: () throws -> CaptureReader.Contents,
                               decode: () throws -> ColorImage) throws -> (CaptureReader.Contents, ColorImage) {
        guard let (width, height) = try? JPEGCodec.size(of: jpeg), decodesAfterChecks(width: width, height: height) else {
            return try Concurrently.run(parse, decode)
        }
        try JPEGCodec.checkPlausible(width: width, height: height, byteCount: jpeg.count, file: image)
        let contents = try parse()
        _ = try checkSizes(image: image, width: width, height: height, json: json, depth: contents.depth,
                           calibration: contents.calibration)
        return (contents, try decode())
    }

    /// Assembles a capture, checking the images' sizes against the calibration.
    private init(json: String, image: String, contents: CaptureReader.Contents, color: ColorImage) throws {
        let warnings = try Self.checkSizes(image: image, width: color.width, height: color.height, json: json,
                                           depth: contents.depth, calibration: contents.calibration)
        self.init(jsonPath: json, imagePath: image, calibration: contents.calibration, depth: contents.depth,
                  color: color, warnings: warnings)
    }

    /// A capture from its parts, as they are (no checks).
    public init(jsonPath: String, imagePath: String, calibration: Calibration, depth: DepthMap, color: ColorImage,
                warnings: [String] = []) {
        self.jsonPath = jsonPath
        self.imagePath = imagePath
        self.calibration = calibration
        self.depth = depth
        self.color = color
        self.warnings = warnings
    }

    /// The JPEG beside a capture JSON: same directory and stem, extension `jpg` or `jpeg`
    /// in any case.
    public static func imagePath(besideJSON json: String) throws -> String {
        guard FileSystem.exists(json) else { throw RGBDError(.io, file: json, "no such file") }
        let directory = Path.directory(of: json)
        let stem = Path.stem(json)
        let names = (try? FileSystem.contentsOfDirectory(directory)) ?? []
        let candidates = names.filter { name in
            Path.stem(name) == stem && ["jpg", "jpeg"].contains(Path.pathExtension(name))
        }
        guard let name = candidates.first else {
            throw RGBDError(.io, file: json, "no image beside it (looked for \(stem).jpg or \(stem).jpeg in \(directory)); give the image explicitly (--image)")
        }
        return directory == "." && !json.hasPrefix("./") ? name : Path.join(directory, name)
    }

    /// `checkSize` of the color image (`width × height`, from `image`) and of the depth
    /// map (from `json`); returns the warnings.
    static func checkSizes(image: String, width: Int, height: Int, json: String, depth: DepthMap,
                           calibration: Calibration) throws -> [String] {
        var warnings: [String] = []
        try checkSize(width: width, height: height, of: "image", file: image, calibration: calibration,
                      warnings: &warnings)
        try checkSize(width: depth.width, height: depth.height, of: "depth map", file: json, calibration: calibration,
                      warnings: &warnings)
        return warnings
    }

    /// Rejects an image whose stored size is the reference size transposed (a rotated
    /// export), and warns when aspect ratios differ by more than 1 % (FORMAT.md §2–3).
    static func checkSize(width: Int, height: Int, of what: String, file: String, calibration: Calibration,
                          warnings: inout [String]) throws {
        let (W, H) = calibration.referenceSize
        if W != H {
            let transposedAspect = Double(height) / Double(width) - Double(W) / Double(H)
            let sameAspect = Double(width) / Double(height) - Double(W) / Double(H)
            if abs(transposedAspect) < 1e-6 && abs(sameAspect) > 1e-6 {
                throw RGBDError(.invalidImage, file: file,
                                "the \(what) is \(width)×\(height), the calibration's reference size transposed (\(W)×\(H)): it was rotated to portrait; rgbd needs the pixels in sensor (landscape) orientation")
            }
        }
        let mismatch = calibration.aspectMismatch(width: width, height: height)
        if mismatch > 0.01 {
            warnings.append("\(file): the \(what) is \(width)×\(height), whose aspect ratio differs from the reference \(W)×\(H) by \(Int((mismatch * 100).rounded())) %; calibration is scaled per axis")
        }
    }
}
