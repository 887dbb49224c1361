import Dispatch

/// `rgbd export`: a scene's frames, poses and intrinsics into a dataset layout that a
/// trainer or reconstruction system loads as it is (docs/export.md).
///
/// Frames are streamed: read in the background (`Scene.forEachFrame`) while earlier ones
/// are encoded on the other processors, at most a few frames in memory whatever the
/// scene's length. Everything is written into a temporary folder beside the destination
/// and moved into place at the end (`StagedDirectory`): a failed run leaves nothing.
public enum SceneExport {
    /// Exports `scene` into the folder `directory`; `progress` is called with frames done
    /// and to do (a `sharpest` selection reads every frame first, counted in both).
    ///
    /// - Throws: `RGBDError` for bad options, a depth-only scene, a destination that is a
    ///   file, the scan or a folder holding it, a folder that is not empty (unless
    ///   `overwrite`, and then only a folder an earlier export wrote: `StagedDirectory`), intrinsics a
    ///   single-camera layout cannot hold, a frame that cannot be read (naming it), or a
    ///   failed write.
    @discardableResult
    public static func run(_ scene: Scene, to directory: String, options: SceneExportOptions,
                           progress: ((Int, Int) -> Void)? = nil) throws -> SceneExportResult {
        try run(scene, to: directory, options: options, videoPictures: true, progress: progress)
    }

    /// `run`; `videoPictures`: whether video frames are taken as decoded (Y′CbCr) and
    /// made into JPEGs without RGB where they need no change (`FrameEncoder`), else all
    /// through RGB (tests compare the two).
    static func run(_ scene: Scene, to directory: String, options: SceneExportOptions, videoPictures: Bool,
                    progress: ((Int, Int) -> Void)?) throws -> SceneExportResult {
        try options.validate()
        guard let colorSize = scene.colorSize else {
            throw RGBDError(.invalidScene, file: scene.path, "the scan has no color frames (depth only): nothing to export images from")
        }
        guard !scene.frames.isEmpty else { throw RGBDError(.invalidScene, file: scene.path, "no frame with a pose and depth") }
        let writer = options.format.writer
        // Checked (and the temporary folder made) before any frame is read.
        let folder = try StagedDirectory(destination: directory, replacing: options.overwrite, inputs: scene.inputs)
        let count = scene.frames.count
        let selecting = options.selection.sharpest ? count : 0
        let positions: [Int]
        if options.selection.sharpest {
            var scores: [Double] = []
            scores.reserveCapacity(count)
            let total = count + options.selection.windows(count: count).count
            try scene.forEachFrame(Array(0..<count), color: true) { frame in
                guard let color = frame.color else { throw missingColor(scene, frame.info) }
                scores.append(ExportFrameImages.sharpness(color))
                progress?(scores.count, total)
            }
            positions = options.selection.sharpestPositions(scores: scores)
        } else {
            positions = options.selection.positions(count: count)
        }
        let cameras = try plan(scene, positions: positions, colorSize: colorSize, writer: writer, options: options)

        try folder.createDirectory(writer.layout.colorFolder)
        if let depthFolder = writer.layout.depthFolder { try folder.createDirectory(depthFolder) }

        let fps = scene.framesPerSecond ?? 30
        let firstTime = scene.frames[0].time
        let exported: [ExportedFrame] = positions.enumerated().map { ordinal, position in
            var info = scene.frames[position]
            // The chosen frame places the scene's world, after each pose (as `SceneCloud`).
            if options.frame.kind != .camera { info.pose = options.frame.transform.composed(with: info.pose) }
            let seconds = info.time.map { $0 - (firstTime ?? 0) } ?? Double(info.index) / fps
            let stem = writer.fileStem(info, ordinal: ordinal, seconds: seconds)
            return ExportedFrame(position: position, info: info, camera: cameras[ordinal].intrinsics,
                                 colorFile: Path.join(writer.layout.colorFolder, stem + "." + options.images.fileExtension),
                                 depthFile: writer.layout.depthFolder.map { Path.join($0, stem + ".png") }, seconds: seconds)
        }
        let merger = writer.layout.seedCloud ? SeedMerger(options: seedOptions(options)) : nil
        let seedStep = max(1, positions.count / seedFrames)
        let encoder = FrameEncoder(folder: folder, options: options, writer: writer)
        var submitted = 0
        // On any failure the frames under way are waited for, so that the temporary
        // folder is removed (when `folder` is released) with nothing still writing into it.
        defer {
            encoder.drain()
            merger?.drain()
        }
        try scene.forEachFrame(positions, color: true, videoPictures: videoPictures) { frame in
            let ordinal = submitted
            let size = frame.color.map { ($0.width, $0.height) } ?? frame.picture.map { ($0.width, $0.height) }
            guard let size else { throw missingColor(scene, frame.info) }
            guard size.0 == colorSize.width, size.1 == colorSize.height else {
                throw RGBDError(.invalidScene, file: scene.path, location: "frame \(frame.info.index)",
                                "color frame is \(size.0)×\(size.1), the scan's are \(colorSize.width)×\(colorSize.height)")
            }
            try encoder.submit(frame, camera: cameras[ordinal], record: exported[ordinal])
            if ordinal % seedStep == 0 { try merger?.add(frame) }
            submitted += 1
            progress?(selecting + encoder.finished, selecting + positions.count)
        }
        try encoder.wait()
        progress?(selecting + positions.count, selecting + positions.count)
        let cloud = try merger?.cloud()
        try writer.finish(exported, cloud: cloud, scene: scene, options: options, into: folder)
        try folder.commit()
        let size = cameras.first?.intrinsics
        return SceneExportResult(directory: folder.given, frames: positions.count, seedPoints: cloud?.count,
                                 width: size?.width ?? 0, height: size?.height ?? 0)
    }

    /// About how many of the kept frames (spread evenly) the seed cloud merges: enough to
    /// cover a scan, without merging every frame of a long one.
    static let seedFrames = 200

    /// The seed cloud: high-confidence depth, flying pixels dropped, one point per cell.
    static func seedOptions(_ options: SceneExportOptions) -> SceneCloudOptions {
        var cloud = SceneCloudOptions()
        cloud.voxel = options.seedVoxel
        cloud.minConfidence = max(options.minConfidence, .medium)
        cloud.points.frame = options.frame
        return cloud
    }

    static func missingColor(_ scene: Scene, _ info: SceneFrameInfo) -> RGBDError {
        RGBDError(.invalidScene, file: scene.path, location: "frame \(info.index)", "no color frame")
    }

    /// The exported camera of each kept frame: the recorded one shrunk by `downscale`;
    /// for a centred layout cropped to the largest window centred on every frame's
    /// principal point (one size for all).
    static func plan(_ scene: Scene, positions: [Int], colorSize: (width: Int, height: Int), writer: any SceneLayoutWriter,
                     options: SceneExportOptions) throws -> [ExportCamera] {
        let f = options.downscale
        guard colorSize.width / f >= 2, colorSize.height / f >= 2 else {
            throw RGBDError(.invalidArgument, file: scene.path,
                            "the color frames (\(colorSize.width)×\(colorSize.height)) are too small to shrink \(f) times")
        }
        let shrunk = positions.map { p -> Intrinsics in
            var k = scene.frames[p].colorIntrinsics
            // The intrinsics refer to the color frames' size (a scan stores them for it).
            if k.width != colorSize.width || k.height != colorSize.height {
                k = k.scaled(toWidth: colorSize.width, height: colorSize.height)
            }
            return ExportCamera.shrunk(k, by: f)
        }
        if writer.layout.singleCamera, let first = shrunk.first {
            for (k, p) in zip(shrunk, positions) where !SceneLayout.sameCamera(k, first) {
                let info = scene.frames[p]
                throw RGBDError(.invalidScene, file: scene.path, location: "frame \(info.index)",
                                "its intrinsics (fx \(DecimalText.fixed(k.fx, 3)), cx \(DecimalText.fixed(k.cx, 3))) differ from the first exported frame's (fx \(DecimalText.fixed(first.fx, 3)), cx \(DecimalText.fixed(first.cx, 3))); this layout holds one camera for all frames: export to nerfstudio or colmap, which keep a camera per frame")
            }
        }
        guard writer.layout.centredPrincipalPoint else {
            return shrunk.map { ExportCamera(intrinsics: $0, downscale: f, shift: .zero) }
        }
        let halfWidth = shrunk.map { ExportCamera.centredHalfSize(principal: $0.cx, size: $0.width) }.min() ?? 0
        let halfHeight = shrunk.map { ExportCamera.centredHalfSize(principal: $0.cy, size: $0.height) }.min() ?? 0
        guard halfWidth >= 1, halfHeight >= 1 else {
            throw RGBDError(.invalidScene, file: scene.path, "the principal point lies outside the images: no centred crop exists")
        }
        return shrunk.map { ExportCamera.centred($0, downscale: f, width: 2 * halfWidth, height: 2 * halfHeight) }
    }
}

/// Encodes and writes frames on the processors the reading leaves free: `submit` hands a
/// frame to a worker and returns at once unless as many frames as processors are being
/// encoded already (so memory stays bounded); the first failure stops further work and is
/// thrown by the next `submit` or by `wait`.
///
/// Each frame is encoded on one thread (the frames are the parallel work; PNG's own
/// strips are not spread over threads here). A video picture given as decoded
/// (`SceneFrame.picture`) that the exported camera takes as it is (no shrinking, no
/// crop) is made into a JPEG from its Y′CbCr planes, converted to JPEG's colours when its
/// matrix or range differ (`YCbCrPicture.inJPEGColors`), when the JPEG is 4:2:0 (quality
/// below 95); otherwise it is made RGB first.
final class FrameEncoder: @unchecked Sendable {
    private let folder: StagedDirectory
    private let options: SceneExportOptions
    private let writer: any SceneLayoutWriter
    private let slots: DispatchSemaphore
    private let group = DispatchGroup()
    private let lock = Lock()
    private var failure: (any Error)?
    private var done = 0

    init(folder: StagedDirectory, options: SceneExportOptions, writer: any SceneLayoutWriter) {
        self.folder = folder
        self.options = options
        self.writer = writer
        slots = DispatchSemaphore(value: max(2, Host.processorCount))
    }

    /// Frames written so far.
    var finished: Int { lock.withLock { done } }

    func submit(_ frame: SceneFrame, camera: ExportCamera, record: ExportedFrame) throws {
        slots.wait()
        if let failure = lock.withLock({ failure }) {
            slots.signal()
            throw failure
        }
        DispatchQueue.global().async(group: group) { [self] in
            defer { slots.signal() }
            if lock.withLock({ failure != nil }) { return }
            do {
                try write(frame, camera: camera, record: record)
                lock.withLock { done += 1 }
            } catch {
                lock.withLock { if failure == nil { failure = error } }
            }
        }
    }

    /// Waits for every submitted frame; throws the first failure.
    func wait() throws {
        group.wait()
        if let failure = lock.withLock({ failure }) { throw failure }
    }

    /// Waits for every submitted frame, whatever happened.
    func drain() { group.wait() }

    private func write(_ frame: SceneFrame, camera: ExportCamera, record: ExportedFrame) throws {
        try folder.write(record.colorFile, try colorFile(frame, camera: camera))
        guard let depthFile = record.depthFile else { return }
        var k = camera.intrinsics
        var source = frame.info.depthIntrinsics
        if source.width != frame.depth.width || source.height != frame.depth.height {
            source = source.scaled(toWidth: frame.depth.width, height: frame.depth.height)
        }
        if options.depthGrid == .sensor, frame.depth.width <= k.width, frame.depth.height <= k.height {
            k = ExportCamera.footprints(of: k, width: frame.depth.width, height: frame.depth.height)
        }
        let units = ExportFrameImages.depth(frame.depth, confidence: frame.confidence, minConfidence: options.minConfidence.rawValue,
                                            from: source, to: k, scale: writer.layout.depthScale)
        try folder.write(depthFile, PNGCodec.encodeGray16(width: k.width, height: k.height, samples: units,
                                                          effort: .fast, threads: 1))
    }

    /// The color file's bytes.
    private func colorFile(_ frame: SceneFrame, camera: ExportCamera) throws -> [UInt8] {
        let jpeg = options.images == .jpeg
        if jpeg, options.jpegQuality < 95, let picture = frame.picture,
           camera.keeps(width: picture.width, height: picture.height), let planes = picture.inJPEGColors() {
            return try JPEGCodec.encodeYCbCr420(luma: planes.luma, cb: planes.cb, cr: planes.cr, width: planes.width,
                                                height: planes.height, quality: options.jpegQuality)
        }
        guard let color = try frame.color ?? frame.picture?.rgb() else {
            throw RGBDError(.invalidScene, location: "frame \(frame.info.index)", "no color frame")
        }
        let image = ExportFrameImages.color(color, camera: camera)
        return jpeg ? try JPEGCodec.encode(image, quality: options.jpegQuality)
            : try PNGCodec.encodeRGB(image, effort: .fast, threads: 1)
    }
}

/// Merges the seed cloud's frames (`SceneCloud.Merger`) on a serial queue of its own, in
/// the order given, so that reading the next frames does not wait for it; at most two
/// frames wait. A frame given as a video picture is made RGB for its colours, the same
/// RGB the decoder gives; its colours are averaged on the queue's thread.
final class SeedMerger: @unchecked Sendable {
    /// The merger; nil once its cloud is taken (so that its grid is freed before the
    /// layout's files are written).
    private var merger: SceneCloud.Merger?
    private let queue = DispatchQueue(label: "rgbd.export.seed")
    private let slots = DispatchSemaphore(value: 2)
    private let lock = Lock()
    private var failure: (any Error)?

    init(options: SceneCloudOptions) {
        merger = SceneCloud.Merger(options: options, rows: .serial)
    }

    /// Queues `frame`; throws an earlier frame's failure.
    func add(_ frame: SceneFrame) throws {
        slots.wait()
        if let failure = lock.withLock({ failure }) {
            slots.signal()
            throw failure
        }
        queue.async { [self] in
            defer { slots.signal() }
            if lock.withLock({ failure != nil }) { return }
            do {
                var frame = frame
                if frame.color == nil, let picture = frame.picture {
                    frame.color = try picture.rgb()
                    frame.picture = nil
                }
                merger?.add(frame)
            } catch {
                lock.withLock { if failure == nil { failure = error } }
            }
        }
    }

    /// Waits for the frames queued.
    func drain() { queue.sync {} }

    /// The merged cloud, once every frame queued is in; throws the first failure. Once
    /// only: the merger's grid is released.
    func cloud() throws -> SceneCloud {
        drain()
        if let failure = lock.withLock({ failure }) { throw failure }
        defer { merger = nil }
        return merger?.cloud() ?? SceneCloud(positions: [], colors: [], frames: 0, inputPoints: 0)
    }
}
