/// The dataset layouts `SceneExport` writes (docs/export.md).
public enum SceneExportFormat: String, CaseIterable, Sendable {
    /// nerfstudio: `images/`, `depth/` (mm), `transforms.json` (OpenGL camera-to-world), a seed cloud.
    case nerfstudio
    /// A COLMAP model: `images/`, `sparse/0/` (PINHOLE cameras, world-to-camera poses, points).
    case colmap
    /// COLMAP's layout for Gaussian splatting trainers: principal point centred,
    /// `sparse/0/points3D.ply`.
    case gaussianSplatting = "3dgs"
    /// Open3D's reconstruction system: `color/`, `depth/` (mm), `camera_intrinsic.json`,
    /// `trajectory.log`, `config.json`.
    case open3d
    /// The TUM RGB-D layout: `rgb/`, `depth/` (1/5000 m), `rgb.txt`, `depth.txt`,
    /// `groundtruth.txt`, `associations.txt`.
    case tum
}

/// How exported color frames are stored.
public enum ExportImageFormat: String, CaseIterable, Sendable {
    /// Baseline JPEG at `SceneExportOptions.jpegQuality`.
    case jpeg
    /// 8-bit RGB PNG (lossless).
    case png

    /// The file extension.
    package var fileExtension: String { self == .jpeg ? "jpg" : "png" }
}

/// The pixel grid of exported depth images.
public enum ExportDepthSize: String, CaseIterable, Sendable {
    /// The depth map's own size (the sensor's resolution, 256×192 on an iPhone's LiDAR):
    /// depth pixel `i` holds the depth on the ray through the middle of the image pixels
    /// that a nearest-neighbour resize to the images' size gives it, `(i + ½)·w/w_d`
    /// (pixel centres at integers), which is how nerfstudio loads depth. The nerfstudio
    /// default; when the images are smaller than the depth map (a large `downscale`), the
    /// images' size is used.
    case sensor
    /// The color images' size, pixel for pixel (Open3D's and TUM's layouts require it).
    case image
}

/// What `SceneExport` writes.
public struct SceneExportOptions: Equatable, Sendable {
    /// The layout.
    public var format: SceneExportFormat
    /// Which frames.
    public var selection = FrameSelection()
    /// The color files' format; nil = the layout's usual one (PNG for TUM, JPEG otherwise).
    public var imageFormat: ExportImageFormat? = nil
    /// JPEG quality, 1…100.
    public var jpegQuality = 93
    /// Shrink the images by this whole factor (1 = as recorded); intrinsics follow.
    public var downscale = 1
    /// Depth pixels below this ARKit confidence (0 low, 1 medium, 2 high) are written as
    /// unknown (0).
    public var minConfidence: ConfidenceLevel = .high
    /// COLMAP layouts: the text model instead of the binary one.
    public var colmapText = false
    /// Replace an output folder that is not empty.
    public var overwrite = false
    /// The seed cloud's cell size, meters (nerfstudio, COLMAP, 3DGS).
    public var seedVoxel = 0.02
    /// The depth images' grid; nil = the layout's own (`sensor` for nerfstudio, `image`
    /// for open3d and tum, which require it).
    public var depthSize: ExportDepthSize? = nil
    /// The world the poses and the seed cloud are written in (from `WorldFrame.forScene`):
    /// `camera` keeps the scene's world; `level` turns a gravity-aligned world to +z up.
    public var frame: WorldFrame = .camera

    /// The defaults for `format`.
    public init(format: SceneExportFormat) { self.format = format }

    /// Checks the values.
    public func validate() throws {
        try selection.validate()
        guard (1...100).contains(jpegQuality) else {
            throw RGBDError(.invalidArgument, "the JPEG quality is 1 to 100 (\(jpegQuality))")
        }
        guard (1...64).contains(downscale) else {
            throw RGBDError(.invalidArgument, "the downscale factor is a whole number from 1 to 64 (\(downscale))")
        }
        if let depthSize, depthSize != .image || !format.writer.layout.hasDepth {
            guard format == .nerfstudio else {
                throw RGBDError(.invalidArgument, format.writer.layout.hasDepth
                    ? "the \(format.rawValue) layout stores depth at the images' size; a depth size applies to nerfstudio"
                    : "the \(format.rawValue) layout has no depth images; a depth size applies to nerfstudio")
            }
        }
        guard seedVoxel > 0, seedVoxel.isFinite else {
            throw RGBDError(.invalidArgument, "the seed cloud's cell must be a positive number of meters (\(seedVoxel))")
        }
    }

    /// The color files' format actually used.
    package var images: ExportImageFormat { imageFormat ?? (format == .tum ? .png : .jpeg) }

    /// The depth images' grid actually used.
    package var depthGrid: ExportDepthSize { depthSize ?? (format == .nerfstudio ? .sensor : .image) }
}

/// What an export wrote.
public struct SceneExportResult: Sendable {
    /// The folder written.
    public var directory: String
    /// Frames exported.
    public var frames: Int
    /// Points of the seed cloud, when the layout has one.
    public var seedPoints: Int?
    /// The exported images' size.
    public var width: Int
    /// See `width`.
    public var height: Int

    /// Each stored property given.
    package init(directory: String, frames: Int, seedPoints: Int? = nil, width: Int, height: Int) {
        self.directory = directory
        self.frames = frames
        self.seedPoints = seedPoints
        self.width = width
        self.height = height
    }
}

/// One exported frame, as the layout writers see it.
package struct ExportedFrame: Sendable {
    /// Its position in `Scene.frames`.
    var position: Int
    /// Its small parts (index, time, pose).
    var info: SceneFrameInfo
    /// The exported images' camera (rgbd's pixel convention).
    var camera: Intrinsics
    /// The color file, relative to the export folder.
    package var colorFile: String
    /// The depth file, relative to the export folder; nil when the layout has no depth.
    package var depthFile: String?
    /// Seconds since the scan's first frame: its own time, else its index over the frame
    /// rate (30 fps when unknown).
    var seconds: Double

    /// Each stored property given.
    package init(position: Int, info: SceneFrameInfo, camera: Intrinsics, colorFile: String, depthFile: String? = nil, seconds: Double) {
        self.position = position
        self.info = info
        self.camera = camera
        self.colorFile = colorFile
        self.depthFile = depthFile
        self.seconds = seconds
    }
}

/// Where a layout puts its images and what it asks of them.
package struct SceneLayout {
    /// The folder of color images.
    package var colorFolder: String
    /// The folder of depth images, nil when the layout has none.
    package var depthFolder: String? = nil
    /// Whether the layout has depth images.
    var hasDepth: Bool { depthFolder != nil }
    /// Depth units per meter in the depth images.
    package var depthScale: Double = 1000
    /// Whether the layout takes a seed cloud.
    package var seedCloud = false
    /// Whether the principal point must be the image's centre.
    package var centredPrincipalPoint = false
    /// Whether the layout holds a single camera for all frames.
    package var singleCamera = false
}

/// A layout's writer: where files go and the layout's own files.
package protocol SceneLayoutWriter {
    /// Where its images go.
    var layout: SceneLayout { get }
    /// A frame's file name without extension (`ordinal` counts exported frames from 0).
    func fileStem(_ info: SceneFrameInfo, ordinal: Int, seconds: Double) -> String
    /// Writes the layout's own files once every frame's images are written.
    func finish(_ frames: [ExportedFrame], cloud: SceneCloud?, scene: Scene, options: SceneExportOptions,
                into folder: StagedDirectory) throws
}

extension SceneLayout {
    /// How far two frames' intrinsics may differ (pixels) and still be one camera.
    static let sameCameraTolerance = 1e-3

    /// Whether two frames' intrinsics are one camera (within `sameCameraTolerance`).
    package static func sameCamera(_ a: Intrinsics, _ b: Intrinsics) -> Bool {
        a.width == b.width && a.height == b.height && abs(a.fx - b.fx) <= sameCameraTolerance
            && abs(a.fy - b.fy) <= sameCameraTolerance && abs(a.cx - b.cx) <= sameCameraTolerance
            && abs(a.cy - b.cy) <= sameCameraTolerance
    }
}

extension SceneExportFormat {
    /// The layout's writer.
    package var writer: any SceneLayoutWriter {
        switch self {
        case .nerfstudio: return NerfstudioWriter()
        case .colmap: return COLMAPWriter(centred: false)
        case .gaussianSplatting: return GaussianSplattingWriter()
        case .open3d: return Open3DWriter()
        case .tum: return TUMWriter()
        }
    }
}
