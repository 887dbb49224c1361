/// A scene: many frames of one place, each with depth, a camera pose in the scene's world
/// and intrinsics, and (when the scan has them) color and confidence — what the iPhone
/// LiDAR apps record (Stray Scanner, Record3D; docs/scans.md).
///
/// Opening reads the small parts (poses, intrinsics, which frames have depth) and checks
/// them; pixels are read per frame (`frame(at:)`, `forEachFrame`), so a scene of any
/// length is opened in constant memory. Poses are camera-to-world with OpenCV camera axes
/// whatever the app wrote (`Pose`).
public final class Scene: Sendable {
    /// The scan's path (a folder or a `.r3d` file).
    public let path: String
    /// Which app wrote it, and which variant of its layout.
    public let format: SceneFormat
    /// What the world's axes are.
    public let world: SceneWorld
    /// What `world` rests on, in words, when the layout leaves a choice (Record3D's two
    /// worlds, told apart from the file's content); nil when the layout has one world.
    public let worldBasis: String?
    /// The frames that have depth and a pose, in order.
    public let frames: [SceneFrameInfo]
    /// The color frames' size, nil for a depth-only scene.
    public let colorSize: (width: Int, height: Int)?
    /// The depth maps' size.
    public let depthSize: (width: Int, height: Int)
    /// Frames per second the app recorded at, when it says.
    public let framesPerSecond: Double?
    /// Frames that have a pose but were left out, with why (no depth file).
    public let skipped: [SkippedFrame]
    /// Things worth telling the user that did not stop the reading (no video, …).
    public let warnings: [String]
    /// Facts only some layouts have (IMU, lens tables), for `info`.
    public let details: [(key: String, value: String)]
    /// Where the frames' poses come from, in words: the app's recording, or what replaced
    /// them (`replacingPoses`: a refinement, a trajectory file). Written into outputs.
    public let poseSource: String

    let storage: any SceneStorage

    /// A frame that has a pose but no depth (the apps log such frames).
    public struct SkippedFrame: Sendable {
        /// The frame's number in the scan.
        public var index: Int
        /// Why it was left out.
        public var reason: String
    }

    init(path: String, format: SceneFormat, world: SceneWorld, worldBasis: String? = nil, frames: [SceneFrameInfo],
         colorSize: (width: Int, height: Int)?, depthSize: (width: Int, height: Int), framesPerSecond: Double?,
         skipped: [SkippedFrame], warnings: [String], details: [(key: String, value: String)], storage: any SceneStorage,
         poseSource: String? = nil) {
        self.path = path
        self.format = format
        self.world = world
        self.worldBasis = worldBasis
        self.frames = frames
        self.colorSize = colorSize
        self.depthSize = depthSize
        self.framesPerSecond = framesPerSecond
        self.skipped = skipped
        self.warnings = warnings
        self.details = details
        self.storage = storage
        self.poseSource = poseSource ?? "as \(format.app.rawValue) recorded them"
    }

    /// Opens the scan at `path`, recognised by content: a folder with `odometry.csv` is a
    /// Stray Scanner scan, a ZIP holding `metadata` a Record3D `.r3d`, a folder with
    /// `metadata.json` and `depth/*.exr` a Record3D "EXR + JPG" export, a folder with
    /// rgbd's own `scene.json` the captures `rgbd register` placed by their tags.
    ///
    /// - Throws: `RGBDError` naming the file (and frame) for anything malformed; `.invalidScene`
    ///   for a path that is no scan rgbd reads.
    public static func open(_ path: String) throws -> Scene {
        guard FileSystem.exists(path) else { throw RGBDError(.io, file: path, "no such file or directory") }
        guard let kind = SceneKind.recognise(path) else {
            if let damage = SceneKind.damage(path) { throw RGBDError(.invalidScene, file: path, damage) }
            throw RGBDError(.invalidScene, file: path,
                            "not a scan rgbd reads (a Stray Scanner folder with odometry.csv, a Record3D .r3d file or EXR + JPG folder, a folder rgbd register wrote)")
        }
        switch kind {
        case .stray: return try StrayScan.open(path)
        case .record3DArchive: return try Record3DScan.openArchive(path)
        case .record3DExport: return try Record3DScan.openExport(path)
        case .registered: return try RegisteredScene.open(path)
        }
    }

    /// The files and folders the scene reads: the scan's path, and for registered
    /// captures each capture and photo. Outputs never replace or hold one of them.
    package var inputs: [String] { [path] + storage.inputFiles }

    /// Whether `path` looks like a scan (by its content, without reading it whole).
    package static func isScene(_ path: String) -> Bool { SceneKind.recognise(path) != nil }

    /// Whether `path` is a scan or looks like a damaged one (a Stray Scanner folder
    /// missing `odometry.csv`, a `.r3d` file that is no ZIP archive): such a path is
    /// meant as a scan, and opening it says what is missing.
    package static func looksLikeScene(_ path: String) -> Bool {
        SceneKind.recognise(path) != nil || SceneKind.damage(path) != nil
    }

    /// Frame `position` of `frames` with its pixels: depth, confidence, and color when
    /// `color` is true and the scene has color. Random access: a video is sought.
    public func frame(at position: Int, color: Bool = true) throws -> SceneFrame {
        guard frames.indices.contains(position) else {
            throw RGBDError(.invalidArgument, file: path, "frame \(position) of \(frames.count)")
        }
        var reader = try storage.makeReader(color: color && colorSize != nil)
        return try reader.read(frames[position])
    }

    /// A reader that keeps its place: frames read in increasing order are read in one
    /// pass (a video is decoded once, not sought per frame). For one thread at a time.
    public func cursor(color: Bool = true) throws -> Cursor {
        Cursor(scene: self, reader: try storage.makeReader(color: color && colorSize != nil))
    }

    /// Reads frames of a scene by position, in any order, fastest in increasing order.
    public final class Cursor {
        /// The scene read.
        public let scene: Scene
        private var reader: any SceneFrameReader

        init(scene: Scene, reader: any SceneFrameReader) {
            self.scene = scene
            self.reader = reader
        }

        /// Frame `position` of `scene.frames` with its pixels.
        public func frame(at position: Int) throws -> SceneFrame {
            guard scene.frames.indices.contains(position) else {
                throw RGBDError(.invalidArgument, file: scene.path, "frame \(position) of \(scene.frames.count)")
            }
            return try reader.read(scene.frames[position])
        }
    }

    /// Calls `body` with the frames at `positions` (increasing positions into `frames`),
    /// in order, reading each once; color only when `color` is true. The next frames are
    /// read while `body` runs.
    public func forEachFrame(_ positions: [Int], color: Bool = true, _ body: (SceneFrame) throws -> Void) throws {
        try forEachFrame(positions, color: color, videoPictures: false, body)
    }

    /// `forEachFrame`, with `videoPictures`: a color frame that is a video's Y′CbCr 4:2:0
    /// picture as decoded, needing no correction, comes as `SceneFrame.picture` instead of
    /// RGB (for a JPEG encoder, which takes Y′CbCr).
    package func forEachFrame(_ positions: [Int], color: Bool, videoPictures: Bool, _ body: (SceneFrame) throws -> Void) throws {
        for position in positions where !frames.indices.contains(position) {
            throw RGBDError(.invalidArgument, file: path, "frame \(position) of \(frames.count)")
        }
        var reader = try storage.makeReader(color: color && colorSize != nil, videoPictures: videoPictures)
        try Prefetch.run(count: positions.count, produce: { i in try reader.read(self.frames[positions[i]]) },
                         consume: body)
    }
}

/// Which app wrote a scene and how.
public struct SceneFormat: Equatable, Sendable {
    /// The app.
    public enum App: String, Sendable {
        /// Stray Scanner (a folder).
        case strayScanner = "Stray Scanner"
        /// Record3D (a `.r3d` file or an EXR + JPG folder).
        case record3D = "Record3D"
        /// Single captures registered by their AprilTags (`rgbd register`'s folder).
        case rgbdRegister = "rgbd register"
    }

    /// The app.
    public var app: App
    /// The layout's variant, in words (`odometry.csv with 15 columns …`).
    public var variant: String
}

/// What a scene's world is.
public enum SceneWorld: String, Sendable {
    /// ARKit's world: gravity along −y (+y up), meters, origin and heading where the
    /// session started (Stray Scanner; Record3D files whose poses are not re-based).
    case gravityAligned = "gravity-aligned (ARKit world: +y up, origin where tracking started)"
    /// The first frame's camera (Record3D files whose poses are re-based so that frame 0
    /// is the identity): not gravity-aligned.
    case firstFrame = "the first frame's camera (not gravity-aligned)"
    /// A Record3D file that does not say whether its poses are re-based (pose 0 is not the
    /// identity, and no `initPose` that is the identity says they are ARKit's as tracked):
    /// taken as not gravity-aligned.
    case undetermined = "not known to be gravity-aligned (Record3D: re-based or ARKit's world, the file does not say; taken as not gravity-aligned)"
    /// The origin tag's frame (`rgbd register`): x right, y down, z into the tag, meters,
    /// origin at the tag's centre; not gravity-aligned.
    case originTag = "the origin tag's frame (x right, y down, z into the tag; not gravity-aligned)"
}

/// A frame's small parts: read at opening for every frame.
public struct SceneFrameInfo: Sendable {
    /// The frame's number in the scan (its file names and video frame).
    public var index: Int
    /// Seconds since the scan's first frame, when known.
    public var time: Double?
    /// Camera-to-world, OpenCV camera axes.
    public var pose: Pose
    /// The color camera's intrinsics at the color size (for a depth-only scene, at the
    /// size they were given for).
    public var colorIntrinsics: Intrinsics
    /// The same camera at the depth map's size.
    public var depthIntrinsics: Intrinsics
}

/// A frame with its pixels: the vocabulary single captures and scenes share (`color`,
/// `depth`, `confidence`, intrinsics, `pose`).
public struct SceneFrame: Sendable {
    /// Its small parts.
    public var info: SceneFrameInfo
    /// Depth, meters along the optical axis, NaN where there is none.
    public var depth: DepthMap
    /// ARKit's confidence per depth pixel: 0 low, 1 medium, 2 high; nil when the scan has none.
    public var confidence: ImageBuffer<UInt8>?
    /// The color frame (RGB), nil for a depth-only scene or when not asked for (or given
    /// as `picture`).
    public var color: ColorImage?
    /// The color frame as the video decoder gave it, instead of `color`, when the reader
    /// was asked for video pictures (`Scene.forEachFrame(videoPictures:)`) and the frame
    /// is a video's Y′CbCr 4:2:0 picture that needs no correction (no lens table).
    package var picture: YCbCrPicture? = nil

    /// Camera-to-world, OpenCV camera axes.
    public var pose: Pose { info.pose }
}

/// The layouts rgbd recognises.
enum SceneKind {
    case stray, record3DArchive, record3DExport, registered

    /// By content: the files a layout must have; a ZIP by its signature.
    static func recognise(_ path: String) -> SceneKind? {
        if FileSystem.isDirectory(path) {
            if FileSystem.exists(Path.join(path, "odometry.csv")) && FileSystem.isDirectory(Path.join(path, "depth")) {
                return .stray
            }
            if FileSystem.exists(Path.join(path, "metadata.json")) && FileSystem.isDirectory(Path.join(path, "depth")) {
                return .record3DExport
            }
            if RegisteredScene.recognise(path) { return .registered }
            return nil
        }
        guard FileFormat(path: path) == .zip else { return nil }
        return .record3DArchive
    }

    /// What is missing from a path that looks like a scan but is none: a folder with two
    /// or more of a Stray Scanner scan's parts but not the two it needs, a Record3D export
    /// without its depth, a `.r3d` file that is not a ZIP archive. Nil for anything else.
    static func damage(_ path: String) -> String? {
        if FileSystem.isDirectory(path) {
            func has(_ name: String) -> Bool { FileSystem.exists(Path.join(path, name)) }
            let strayParts = ["odometry.csv", "camera_matrix.csv", "rgb.mp4", "confidence", "depth", "imu.csv"].filter(has)
            if strayParts.count >= 2 && !has("metadata.json") {
                let missing = ["odometry.csv", "depth"].filter { !strayParts.contains($0) }
                    .map { $0 == "depth" ? "the depth/ folder" : "\($0) (the camera poses)" }
                return "a Stray Scanner scan (it has \(strayParts.joined(separator: ", "))) without \(missing.joined(separator: " and ")): "
                    + (missing.count > 1 ? "they are missing" : "it is missing")
            }
            if has("metadata.json") && (has("rgb") || has("rgbd")) && !FileSystem.isDirectory(Path.join(path, "depth")) {
                return "a Record3D export (it has metadata.json) without its depth/ folder of EXR depth maps"
            }
            return nil
        }
        if Path.pathExtension(path) == "r3d" {
            return "not a Record3D .r3d archive: the file is not a ZIP archive"
        }
        return nil
    }
}

/// Where a scene's pixels come from: one per layout.
protocol SceneStorage: Sendable {
    /// A reader of frames, used from one thread at a time (a video decoder keeps state).
    func makeReader(color: Bool) throws -> any SceneFrameReader
    /// A reader that may give video pictures as decoded (`SceneFrame.picture`) when
    /// `videoPictures`; by default the same as `makeReader(color:)`.
    func makeReader(color: Bool, videoPictures: Bool) throws -> any SceneFrameReader
    /// Files the frames are read from outside the scene's own path (none for a scan).
    var inputFiles: [String] { get }
    /// The frame `kind` placed by the storage itself (a registered scene, from its
    /// captures' photos), or nil when the scene's world decides it (`WorldFrame.forScene`).
    func worldFrame(_ kind: WorldFrame.Kind, scene: Scene) throws -> WorldFrame?
}

extension SceneStorage {
    func makeReader(color: Bool, videoPictures: Bool) throws -> any SceneFrameReader {
        try makeReader(color: color)
    }

    var inputFiles: [String] { [] }

    func worldFrame(_ kind: WorldFrame.Kind, scene: Scene) throws -> WorldFrame? { nil }
}

/// Reads frames' pixels; frames asked in increasing order are read without seeking.
protocol SceneFrameReader {
    mutating func read(_ info: SceneFrameInfo) throws -> SceneFrame
}
