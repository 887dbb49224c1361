/// A Stray Scanner scan folder (docs/scans.md): `odometry.csv` (a camera-to-world pose
/// per frame, OpenCV camera axes, ARKit world), `camera_matrix.csv` (K at the color
/// size), `depth/NNNNNN.png` (16-bit millimetres; older scans `.npy`),
/// `confidence/NNNNNN.png` (0/1/2), `rgb.mp4`, `imu.csv`.
enum StrayScan {
    /// The most bytes read of a table (`odometry.csv` of an hour at 60 fps is about 40 MB).
    static let maxTableBytes = 256 << 20

    static func open(_ folder: String) throws -> Scene {
        let odometryPath = Path.join(folder, "odometry.csv")
        let (variant, rows) = try StrayTables.odometry(FileSystem.readFile(odometryPath, limit: maxTableBytes),
                                                       name: odometryPath)
        var warnings: [String] = []
        var details: [(key: String, value: String)] = []

        // The color camera's K: per frame in the 15-column layout, else camera_matrix.csv.
        let matrixPath = Path.join(folder, "camera_matrix.csv")
        var matrix: (fx: Double, fy: Double, cx: Double, cy: Double)?
        if FileSystem.exists(matrixPath) {
            matrix = try StrayTables.cameraMatrix(FileSystem.readFile(matrixPath, limit: 1 << 20), name: matrixPath)
        }
        if matrix == nil && rows.contains(where: { $0.intrinsics == nil }) {
            throw RGBDError(.invalidScene, file: matrixPath,
                            "missing, and \(Path.lastComponent(odometryPath)) has no intrinsics per frame")
        }

        // Depth files by frame number.
        let depthFolder = Path.join(folder, "depth")
        let (depthFiles, depthExtension) = try numberedFiles(in: depthFolder, extensions: ["png", "npy"])
        guard !depthFiles.isEmpty else {
            throw RGBDError(.invalidScene, file: depthFolder, "holds no depth maps (NNNNNN.png or .npy)")
        }
        let confidenceFolder = Path.join(folder, "confidence")
        let confidenceFiles = FileSystem.isDirectory(confidenceFolder)
            ? try numberedFiles(in: confidenceFolder, extensions: ["png"]).files : [:]

        // The depth size, from the first depth map (every other is checked when read).
        guard let firstDepth = rows.lazy.compactMap({ depthFiles[$0.frame] }).first else {
            throw RGBDError(.invalidScene, file: depthFolder,
                            "none of its depth maps belongs to a frame of \(Path.lastComponent(odometryPath))")
        }
        let depthSize = try StrayFrameReader.readDepth(firstDepth, expected: nil).size

        // Color: the video's frames, one per row of odometry.csv.
        let videoPath = Path.join(folder, "rgb.mp4")
        var video: StrayVideo.Summary?
        let colorSize: (width: Int, height: Int)
        if FileSystem.exists(videoPath) {
            let probed = try StrayVideo.probe(videoPath)
            video = probed
            colorSize = (probed.width, probed.height)
        } else {
            // K is given at the color size, which only the video records: assumed, and said.
            let assumed = assumedColorSize(matrix ?? rows[0].intrinsics, depth: depthSize)
            colorSize = assumed.size
            warnings.append("\(videoPath): missing: a depth-only scene (no colors); K taken to be for \(assumed.size.width)×\(assumed.size.height) color frames (\(assumed.reason))")
        }
        if let video, let count = video.frameCount, let last = rows.last, last.frame >= count {
            throw RGBDError(.invalidScene, file: videoPath,
                            "has \(count) frames and \(Path.lastComponent(odometryPath)) has frame \(last.frame)")
        }
        guard colorSize.width * depthSize.height == colorSize.height * depthSize.width else {
            throw RGBDError(.invalidScene, file: firstDepth,
                            "a \(depthSize.width)×\(depthSize.height) depth map does not have the color frames' aspect (\(colorSize.width)×\(colorSize.height))")
        }

        var frames: [SceneFrameInfo] = []
        var skipped: [Scene.SkippedFrame] = []
        let startTime = rows.first?.timestamp
        for row in rows {
            guard depthFiles[row.frame] != nil else {
                skipped.append(Scene.SkippedFrame(index: row.frame, reason: "no depth file"))
                continue
            }
            guard let k = row.intrinsics ?? matrix else { continue }
            let color = Intrinsics(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: colorSize.width, height: colorSize.height)
            var time: Double?
            if let t = row.timestamp, let startTime { time = t - startTime }
            frames.append(SceneFrameInfo(index: row.frame, time: time, pose: row.pose, colorIntrinsics: color,
                                         depthIntrinsics: color.scaled(toWidth: depthSize.width, height: depthSize.height)))
        }
        guard !frames.isEmpty else {
            throw RGBDError(.invalidScene, file: odometryPath, "no frame has a depth map")
        }
        if !skipped.isEmpty {
            warnings.append("\(skipped.count) frame\(skipped.count == 1 ? "" : "s") with a pose and no depth file skipped (first: frame \(skipped[0].index))")
        }
        if let video, let fps = video.framesPerSecond, let check = timingDisagreement(frames, fps: fps) {
            warnings.append("\(videoPath): \(check)")
        }

        details.append(("depth files", depthExtension == "npy" ? "uint16 .npy, millimeters (before 2022)" : "16-bit PNG, millimeters"))
        details.append(("confidence maps", confidenceFiles.isEmpty ? "none" : "\(confidenceFiles.count) maps (0 low, 1 medium, 2 high)"))
        if let video { details.append(("video", "\(video.codec) \(video.width)×\(video.height)" + (video.frameCount.map { ", \($0) frames" } ?? ""))) }
        let imuPath = Path.join(folder, "imu.csv")
        if FileSystem.exists(imuPath) {
            let imu = try StrayTables.imu(FileSystem.readFile(imuPath, limit: maxTableBytes), name: imuPath)
            let rate = imu.rate.map { ", \(DecimalText.fixed($0, 0)) Hz" } ?? ""
            details.append(("imu", "\(imu.count) samples\(rate), acceleration in \(imu.inG ? "g" : "m/s²")"))
        }
        // Lens tables: a frame with a table file and a distortion centre is rectified.
        let lensFolder = Path.join(folder, "distortion")
        var lenses: [Int: StrayLens] = [:]
        if FileSystem.isDirectory(lensFolder) {
            let tables = try numberedFiles(in: lensFolder, extensions: ["bin"]).files
            for row in rows {
                guard let table = tables[row.frame], let center = row.distortionCenter else { continue }
                lenses[row.frame] = StrayLens(table: table, center: center)
            }
            let unrectified = frames.filter { lenses[$0.index] == nil }.count
            details.append(("lens tables", "\(frames.count - unrectified) frames rectified with their lookup tables (Apple's model)"
                + (unrectified > 0 ? ", \(unrectified) used as recorded (no table or no distortion centre)" : "")))
        } else {
            details.append(("lens", "no lens tables: frames used as recorded"))
        }
        let fps = video?.framesPerSecond ?? frameRate(rows)
        let storage = StrayStorage(depthFiles: depthFiles, confidenceFiles: confidenceFiles, depthSize: depthSize,
                                   colorSize: colorSize, videoPath: video == nil ? nil : videoPath, lenses: lenses)
        return Scene(path: folder, format: SceneFormat(app: .strayScanner, variant: "folder, odometry.csv with \(variant.rawValue)"),
                     world: .gravityAligned, frames: frames, colorSize: video == nil ? nil : colorSize,
                     depthSize: depthSize, framesPerSecond: fps, skipped: skipped, warnings: warnings,
                     details: details, storage: storage)
    }

    /// `NNNNNN.ext` files of a folder by number (the first extension of `extensions`
    /// found decides the folder's kind).
    static func numberedFiles(in folder: String, extensions: [String]) throws -> (files: [Int: String], extension: String) {
        guard FileSystem.isDirectory(folder) else {
            throw RGBDError(.invalidScene, file: folder, "missing (or not a folder)")
        }
        var byExtension: [String: [Int: String]] = [:]
        for name in try FileSystem.contentsOfDirectory(folder) {
            let ext = Path.pathExtension(name).lowercased()
            guard extensions.contains(ext), let n = Int(Path.stem(name)), n >= 0 else { continue }
            byExtension[ext, default: [:]][n] = Path.join(folder, name)
        }
        for ext in extensions {
            if let files = byExtension[ext] { return (files, ext) }
        }
        return ([:], extensions[0])
    }

    /// The color sizes iPhones and iPads record scans at (ARKit's video formats, stored
    /// landscape or, by some apps, portrait), most common first.
    static let knownColorSizes: [(width: Int, height: Int)] = [
        (1920, 1440), (1440, 1920), (1920, 1080), (1080, 1920), (3840, 2160), (2160, 3840),
        (2560, 1440), (1440, 2560), (1280, 960), (960, 1280), (1280, 720), (720, 1280),
        (640, 480), (480, 640),
    ]

    /// How far K's principal point may lie from a size's centre for K to be taken as that
    /// size's: a fraction of the width and height (real calibrations are within 1 %).
    static let principalPointTolerance = 0.05

    /// Without a video the color size, which K refers to, is not recorded. It is taken to be
    /// the known size (`knownColorSizes`) of the depth maps' aspect whose centre K's
    /// principal point fits best (within `principalPointTolerance`); when none fits,
    /// twice the principal point at the depth maps' aspect (a whole multiple of its
    /// smallest size, so that the two grids keep one aspect). `reason` says which, for the
    /// warning that names the assumption.
    static func assumedColorSize(_ k: (fx: Double, fy: Double, cx: Double, cy: Double)?,
                                 depth: (width: Int, height: Int)) -> (size: (width: Int, height: Int), reason: String) {
        guard let k else { return ((1920, 1440), "ARKit's LiDAR video size; no camera matrix") }
        let w = max(depth.width, 1), h = max(depth.height, 1)
        var best: (size: (width: Int, height: Int), offset: Double)?
        for size in knownColorSizes where size.width * h == size.height * w {
            let offset = max(abs(k.cx - Double(size.width) / 2) / Double(size.width),
                             abs(k.cy - Double(size.height) / 2) / Double(size.height))
            if offset <= principalPointTolerance, offset < best?.offset ?? .infinity { best = (size, offset) }
        }
        let point = "principal point (\(DecimalText.fixed(k.cx, 1)), \(DecimalText.fixed(k.cy, 1)))"
        if let best {
            return (best.size, "an iPhone video size whose centre the \(point) fits")
        }
        // The smallest size of the depth maps' aspect, scaled to twice cx.
        var (a, b) = (w, h)
        while b != 0 { (a, b) = (b, a % b) }
        let unit = (width: w / a, height: h / a)
        let n = max(1, Int((2 * k.cx / Double(unit.width)).rounded()))
        return ((n * unit.width, n * unit.height),
                "twice the \(point) at the depth maps' aspect: no known video size fits it")
    }

    /// Frames per second from the odometry's timestamps.
    static func frameRate(_ rows: [StrayTables.OdometryRow]) -> Double? {
        guard rows.count > 1, let first = rows.first, let last = rows.last,
              let t0 = first.timestamp, let t1 = last.timestamp, t1 > t0, last.frame > first.frame else { return nil }
        return Double(last.frame - first.frame) / (t1 - t0)
    }

    /// The video's clock against the odometry's: frame n is shown at n/fps; the poses'
    /// timestamps should advance alike. A message when they drift apart by more than
    /// three frame intervals.
    static func timingDisagreement(_ frames: [SceneFrameInfo], fps: Double) -> String? {
        guard fps > 0, let first = frames.first, let firstTime = first.time else { return nil }
        var worst = (frame: 0, seconds: 0.0)
        for frame in frames {
            guard let time = frame.time else { continue }
            let videoTime = Double(frame.index - first.index) / fps
            let gap = abs((time - firstTime) - videoTime)
            if gap > worst.seconds { worst = (frame.index, gap) }
        }
        guard worst.seconds > 3 / fps else { return nil }
        return "frame \(worst.frame) is shown \(DecimalText.fixed(worst.seconds, 3)) s away from its pose's timestamp (at \(DecimalText.fixed(fps, 2)) fps): poses and video may not match"
    }
}

/// A frame's lens: Apple's lookup table (`distortion/NNNNNN.bin`, float32) and the
/// distortion centre at the color size (odometry's 15-column layout).
struct StrayLens: Sendable {
    /// The table file.
    let table: String
    /// The distortion centre, color pixels.
    let center: SIMD2<Double>

    /// The most entries a table may have (Apple's have 42).
    static let maxEntries = 4096

    /// The lens model for an image of `width × height`, the table read and checked.
    func distortion(colorSize: (width: Int, height: Int), width: Int, height: Int) throws -> LensDistortion {
        let bytes = try FileSystem.readFile(table, limit: 4 * Self.maxEntries)
        guard bytes.count % 4 == 0, bytes.count >= 8 else {
            throw RGBDError(.invalidScene, file: table, "\(bytes.count) bytes: not a table of float32 entries (at least 2)")
        }
        let entries = bytes.withUnsafeBytes { raw in
            (0..<bytes.count / 4).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self))) }
        }
        do {
            return try LensDistortion.validated(center: center, referenceWidth: colorSize.width,
                                                referenceHeight: colorSize.height, table: entries,
                                                width: width, height: height)
        } catch var error as RGBDError {
            error.file = table
            error.kind = .invalidScene
            throw error
        }
    }
}

/// Where a Stray scan's pixels are.
struct StrayStorage: SceneStorage {
    let depthFiles: [Int: String]
    let confidenceFiles: [Int: String]
    let depthSize: (width: Int, height: Int)
    let colorSize: (width: Int, height: Int)
    let videoPath: String?
    let lenses: [Int: StrayLens]

    func makeReader(color: Bool) throws -> any SceneFrameReader {
        try makeReader(color: color, videoPictures: false)
    }

    func makeReader(color: Bool, videoPictures: Bool) throws -> any SceneFrameReader {
        StrayFrameReader(storage: self, video: color ? try videoPath.map(StrayVideo.Frames.init) : nil,
                         videoPictures: videoPictures)
    }
}

/// Reads a Stray scan's frames: depth and confidence files, video frames in order.
struct StrayFrameReader: SceneFrameReader {
    let storage: StrayStorage
    var video: StrayVideo.Frames?
    /// Whether a frame without a lens table gives its video picture as decoded
    /// (`SceneFrame.picture`) rather than RGB.
    var videoPictures = false

    mutating func read(_ info: SceneFrameInfo) throws -> SceneFrame {
        guard let path = storage.depthFiles[info.index] else {
            throw RGBDError(.invalidScene, location: "frame \(info.index)", "no depth file")
        }
        let depth = try Self.readDepth(path, expected: storage.depthSize).map
        var confidence: ImageBuffer<UInt8>?
        if let confidencePath = storage.confidenceFiles[info.index] {
            let map = try PNGCodec.decodeGray8(FileSystem.readFile(confidencePath, limit: 64 << 20), file: confidencePath)
            guard map.width == depth.width, map.height == depth.height else {
                throw RGBDError(.invalidScene, file: confidencePath,
                                "\(map.width)×\(map.height), not the depth maps' \(depth.width)×\(depth.height)")
            }
            confidence = map
        }
        guard let lens = storage.lenses[info.index] else {
            if videoPictures, let video {
                switch try video.picture(info.index) {
                case .ycbcr(let picture):
                    return SceneFrame(info: info, depth: depth, confidence: confidence, color: nil, picture: picture)
                case .rgb(let image):
                    return SceneFrame(info: info, depth: depth, confidence: confidence, color: image)
                }
            }
            return SceneFrame(info: info, depth: depth, confidence: confidence, color: try video?.frame(info.index))
        }
        var color = try video?.frame(info.index)
        // Rectified with the same kernels as captures: color bilinear, depth never blended
        // across edges, confidence levels (1–3 as depths, so no level blends into another).
        let rectifier = Rectifier()
        let depthLens = try lens.distortion(colorSize: storage.colorSize, width: depth.width, height: depth.height)
        let rectifiedDepth = rectifier.rectify(depth, distortion: depthLens)
        var rectifiedConfidence: ImageBuffer<UInt8>?
        if let confidence {
            let levels = DepthMap(width: confidence.width, height: confidence.height, channels: 1,
                                  samples: confidence.samples.map { Float($0) + 1 })
            let rectified = rectifier.rectify(levels, distortion: depthLens)
            rectifiedConfidence = ImageBuffer(width: confidence.width, height: confidence.height, channels: 1,
                                              samples: rectified.samples.map { $0.isFinite ? UInt8(clamping: Int(($0 - 1).rounded())) : 0 })
        }
        if let image = color {
            color = rectifier.rectify(image, distortion: try lens.distortion(colorSize: storage.colorSize,
                                                                             width: image.width, height: image.height))
        }
        return SceneFrame(info: info, depth: rectifiedDepth, confidence: rectifiedConfidence, color: color)
    }

    /// A depth file in meters, NaN where there is none (0 in the file); an error naming the
    /// file when its size is not `expected`. A PNG is read as a capture's depth image is
    /// (`CaptureDepth.readImage`: 16-bit grayscale millimeters, by content); an older scan's
    /// `.npy` holds uint16 millimeters.
    static func readDepth(_ path: String, expected: (width: Int, height: Int)?) throws
        -> (map: DepthMap, size: (width: Int, height: Int)) {
        let width: Int, height: Int, stored: [Float]
        if Path.pathExtension(path).lowercased() == "npy" {
            let bytes = try FileSystem.readFile(path, limit: 128 << 20)
            let array = try NPYArray(bytes, name: path, maxElements: InputLimits.maxDepthPixels)
            guard array.element == .uint16 else {
                throw RGBDError(.invalidScene, file: path, "a depth array of \(array.element.rawValue), not uint16 millimeters")
            }
            (width, height, stored) = (array.width, array.height, array.values.map { $0 / 1000 })
        } else {
            let (image, _) = try CaptureDepth.readImage(path: path, key: nil)
            (width, height, stored) = (image.width, image.height, image.samples)
        }
        if let expected, expected.width != width || expected.height != height {
            throw RGBDError(.invalidScene, file: path,
                            "a \(width)×\(height) depth map where the scan's are \(expected.width)×\(expected.height)")
        }
        let meters = stored.map { $0 > 0 ? $0 : Float.nan }
        return (DepthMap(width: width, height: height, channels: 1, samples: meters), (width, height))
    }
}
