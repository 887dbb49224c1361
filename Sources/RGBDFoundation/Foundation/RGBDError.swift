/// The one error type of rgbd: what went wrong, with the file (and, where it applies,
/// the JSON key or depth row) it went wrong in.
///
/// `description` is a single line meant for users, for example
/// `shot.json: calibration_data.intrinsic_matrix: not a 3×3 intrinsic matrix (no 0,0,1 row or column)`.
public struct RGBDError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The kind of failure, for callers that branch on it.
    public enum Kind: String, Sendable {
        /// A file could not be opened, read or written.
        case io
        /// The JSON is not valid JSON.
        case invalidJSON
        /// The JSON is valid but a key is missing or holds the wrong kind of value.
        case invalidCapture
        /// An image file could not be decoded, or its size contradicts the calibration.
        case invalidImage
        /// An argument given by the caller is out of range.
        case invalidArgument
        /// A scan's files are malformed or disagree: a table, a frame, a pose, an archive.
        case invalidScene
    }

    /// The kind of failure.
    public var kind: Kind
    /// The file the failure is about, if any.
    public var file: String?
    /// The JSON key path (`calibration_data.lens_distortion_center`) or other location.
    public var location: String?
    /// What is wrong, in words.
    public var message: String
    /// The caller's argument the message points at, if it does ("give the image
    /// explicitly"): each front names it in its own words (the CLI `--image`, Python and C
    /// `image_path`), so the library's messages never spell one front's options.
    public var argument: Argument? = nil

    /// A caller's argument an error can point at.
    public enum Argument: String, Sendable {
        /// The capture's photo, when it is not the one beside the JSON.
        case image
        /// A point cloud's depth range (`PointCloudOptions.minDepth`, `maxDepth`).
        case depthRange
        /// A point cloud's pixel stride (`PointCloudOptions.stride`).
        case stride
        /// A point cloud's flying-pixel threshold (`PointCloudOptions.edgeThreshold`).
        case edgeThreshold
        /// Permission to replace an output folder that is not empty (`SceneExportOptions.overwrite`).
        case overwrite
        /// The frame points and poses are placed in (`WorldFrame.Kind`).
        case frame
        /// The coordinate system of written coordinates (`Projection`).
        case crs
        /// The lowest depth confidence a scene command uses (`ConfidenceLevel`).
        case minConfidence
        /// The step between a scene's frames (`FrameSelection.every`).
        case every
        /// The number of triangles a mesh is simplified to (`MeshSimplification.targetTriangles`).
        case triangles
        /// The largest geometric error a mesh's simplification may make (`MeshSimplification.maxError`).
        case maxError
        /// The side of a mesh's texture atlases (`TexturingOptions.side`).
        case textureSize
        /// The most memory a step may take (`SceneFusionOptions.memoryBudget`, `TexturingOptions.memoryBudget`).
        case memoryBudget
    }

    /// Makes an error; `file` and `location` are prefixed to the message when printed.
    public init(_ kind: Kind, file: String? = nil, location: String? = nil, _ message: String,
                argument: Argument? = nil) {
        self.kind = kind
        self.file = file
        self.location = location
        self.message = message
        self.argument = argument
    }

    /// `description` followed by the caller's spelling of `argument` in parentheses, when
    /// the error points at one: `spell` gives a front's name for it.
    public func description(naming spell: (Argument) -> String) -> String {
        guard let argument else { return description }
        return "\(description) (\(spell(argument)))"
    }

    /// Text from a file, shown in a message: at most `limit` characters, control
    /// characters (line breaks included) as `?`, so that a message stays one line.
    package static func shown(_ text: some StringProtocol, limit: Int = 24) -> String {
        let cleaned = String(text.prefix(limit).map { $0.isASCII && ($0.asciiValue ?? 0) < 0x20 || $0 == "\u{7F}" ? "?" : $0 })
        return text.count > limit ? cleaned + "…" : cleaned
    }

    /// `file: location: message`, leaving out the parts that are absent.
    public var description: String {
        var parts: [String] = []
        if let file { parts.append(file) }
        if let location { parts.append(location) }
        parts.append(message)
        return parts.joined(separator: ": ")
    }
}
