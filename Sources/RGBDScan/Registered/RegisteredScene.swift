/// Reads the scene `rgbd register` writes (`RegisteredSceneFile`): a folder with a
/// `scene.json` whose first key is `"rgbd_scene": "registered captures"`. Each frame is a
/// capture read and rectified when asked for, its depth corrected as the file says.
package enum RegisteredScene {
    /// Whether `folder` holds such a scene (by the file's first bytes).
    static func recognise(_ folder: String) -> Bool {
        let file = Path.join(folder, RegisteredSceneFile.name)
        guard let prefix = try? FileSystem.readPrefix(file, count: 64) else { return false }
        return String(decoding: prefix, as: UTF8.self).contains("\"rgbd_scene\": \"\(RegisteredSceneFile.kind)\"")
    }

    /// Opens the scene in `folder`.
    static func open(_ folder: String) throws -> Scene {
        let file = Path.join(folder, RegisteredSceneFile.name)
        let parsed = try parse(try FileSystem.readFile(file, limit: 64 << 20), file: file)
        func resolve(_ path: String) -> String { path.hasPrefix("/") ? path : Path.join(folder, path) }
        var sources: [Int: RegisteredStorage.Source] = [:]
        for (i, source) in parsed.sources.enumerated() {
            sources[i] = RegisteredStorage.Source(capture: resolve(source.capture), image: resolve(source.image),
                                                  factor: source.factor, offset: source.offset)
        }
        let first = parsed.frames[0]
        var details: [(key: String, value: String)] = [("tags", parsed.family)]
        if let origin = parsed.originTag { details.append(("origin tag", String(origin))) }
        return Scene(path: folder, format: SceneFormat(app: .rgbdRegister, variant: "captures registered by their tags"),
                     world: .originTag, frames: parsed.frames,
                     colorSize: (first.colorIntrinsics.width, first.colorIntrinsics.height),
                     depthSize: (first.depthIntrinsics.width, first.depthIntrinsics.height), framesPerSecond: nil,
                     skipped: [], warnings: [], details: details, storage: RegisteredStorage(sources: sources))
    }

    /// What `scene.json` says: one frame (pose, intrinsics) and one source per capture, in order.
    package struct Parsed {
        /// One frame's capture, photo (as written: absolute, or relative to the scene
        /// folder) and depth correction (`depth = factor`-scaled, then `offset` in disparity).
        package struct Source: Sendable {
            package var capture: String
            package var image: String
            package var factor: Double
            package var offset: Double
        }
        /// The frames, with at least one; all of one color size and one depth size.
        package var frames: [SceneFrameInfo]
        /// Each frame's source, in the frames' order.
        package var sources: [Source]
        /// The origin tag's id, when given.
        package var originTag: Int?
        /// The tag family's name ("?" when not given).
        package var family: String
    }

    /// Parses the bytes of `scene.json` (`file` names it in errors). Every error is an
    /// `RGBDError` naming the file and the key that is wrong.
    package static func parse(_ bytes: [UInt8], file: String) throws -> Parsed {
        let document: JSONDocument
        switch bytes.withUnsafeBufferPointer({ JSONDocument.parse($0) }) {
        case .success(let d): document = d
        case .failure(let e): throw RGBDError(.invalidJSON, file: file, "not valid JSON at byte \(e.offset): \(e.message)")
        }
        let root = document.rootNode
        func fail(_ location: String, _ message: String) -> RGBDError {
            RGBDError(.invalidScene, file: file, location: location, message)
        }
        func numbers(_ node: JSONNode?, _ location: String, count: Int) throws -> [Double] {
            guard let items = node?.elements, items.count == count else { throw fail(location, "not \(count) numbers") }
            return try items.map { item in
                guard let v = item.number, v.isFinite else { throw fail(location, "not a finite number") }
                return v
            }
        }
        func pose(_ node: JSONNode?, _ location: String) throws -> Pose {
            let m = try numbers(node, location, count: 16)
            let p = Pose(row0: SIMD3(m[0], m[1], m[2]), row1: SIMD3(m[4], m[5], m[6]), row2: SIMD3(m[8], m[9], m[10]),
                         translation: SIMD3(m[3], m[7], m[11]))
            // A rotation: orthonormal rows (R·Rᵀ = I) and determinant +1; last row 0 0 0 1.
            let rows = [p.row0, p.row1, p.row2]
            var orthonormal = true
            for i in 0..<3 { for j in 0..<3 { orthonormal = orthonormal && abs((rows[i] * rows[j]).sum() - (i == j ? 1 : 0)) < 1e-6 } }
            let c = SIMD3(p.row1.y * p.row2.z - p.row1.z * p.row2.y, p.row1.z * p.row2.x - p.row1.x * p.row2.z,
                          p.row1.x * p.row2.y - p.row1.y * p.row2.x)
            guard orthonormal, (p.row0 * c).sum() > 0, m[12] == 0, m[13] == 0, m[14] == 0, m[15] == 1 else {
                throw fail(location, "not a rigid transform (a rotation and a translation)")
            }
            return p
        }
        func intrinsics(_ node: JSONNode?, _ location: String) throws -> Intrinsics {
            func value(_ key: String) throws -> Double {
                guard let v = node?.member(key)?.number, v.isFinite, v > 0 else { throw fail("\(location).\(key)", "missing or not positive") }
                return v
            }
            let w = try value("width"), h = try value("height")
            guard w == w.rounded(), h == h.rounded(), w * h <= Double(JPEGCodec.maxPixels) else {
                throw fail(location, "image size out of range")
            }
            return Intrinsics(fx: try value("fx"), fy: try value("fy"), cx: try value("cx"), cy: try value("cy"),
                              width: Int(w), height: Int(h))
        }
        guard let items = root.member("frames")?.elements, !items.isEmpty else { throw fail("frames", "missing or empty") }
        var frames: [SceneFrameInfo] = [], sources: [Parsed.Source] = []
        for (i, item) in items.enumerated() {
            let at = "frames[\(i)]"
            guard let capture = item.member("capture")?.string, let image = item.member("image")?.string else {
                throw fail(at, "no capture or image path")
            }
            let factor = item.member("depth_factor")?.number ?? 1, offset = item.member("disparity_offset")?.number ?? 0
            guard factor.isFinite, factor > 0, offset.isFinite else { throw fail(at, "depth correction out of range") }
            let color = try intrinsics(item.member("color_intrinsics"), "\(at).color_intrinsics")
            let depth = try intrinsics(item.member("depth_intrinsics"), "\(at).depth_intrinsics")
            frames.append(SceneFrameInfo(index: i, time: nil, pose: try pose(item.member("camera_to_world"), "\(at).camera_to_world"),
                                         colorIntrinsics: color, depthIntrinsics: depth))
            sources.append(Parsed.Source(capture: capture, image: image, factor: factor, offset: offset))
        }
        let first = frames[0]
        for f in frames where f.colorIntrinsics.width != first.colorIntrinsics.width
            || f.colorIntrinsics.height != first.colorIntrinsics.height || f.depthIntrinsics.width != first.depthIntrinsics.width
            || f.depthIntrinsics.height != first.depthIntrinsics.height {
            throw fail("frames[\(f.index)]", "image sizes differ from the first frame's")
        }
        var origin: Int?
        if let node = root.member("origin_tag") {
            guard let v = node.number, v == v.rounded(), v >= 0, v <= Double(Int32.max) else {
                throw fail("origin_tag", "not a tag id (a whole number from 0)")
            }
            origin = Int(v)
        }
        return Parsed(frames: frames, sources: sources, originTag: origin, family: root.member("tag_family")?.string ?? "?")
    }
}

/// A registered scene's pixels: each frame's capture, read and rectified.
struct RegisteredStorage: SceneStorage {
    struct Source: Sendable {
        var capture: String
        var image: String
        var factor: Double
        var offset: Double
    }

    let sources: [Int: Source]

    func makeReader(color: Bool) throws -> any SceneFrameReader { Reader(sources: sources, color: color) }

    var inputFiles: [String] { sources.keys.sorted().compactMap { sources[$0] }.flatMap { [$0.capture, $0.image] } }

    /// A level or ENU frame from the first capture whose photo's EXIF has what the frame
    /// needs (gravity; for `enu` also a position and a heading): that capture's
    /// `WorldFrame.forCapture` frame, after the world-to-camera transform of its pose, so
    /// the frame's origin is that camera.
    func worldFrame(_ kind: WorldFrame.Kind, scene: Scene) throws -> WorldFrame? {
        guard scene.world == .originTag else { return nil }
        var lacking: String?
        for info in scene.frames {
            guard let source = sources[info.index] else { continue }
            let geo = (try? FileSystem.readFile(source.image)).flatMap {
                GeoTag(photo: $0, width: info.colorIntrinsics.width, height: info.colorIntrinsics.height)
            }
            do {
                var frame = try WorldFrame.forCapture(kind, geo: geo, file: source.image)
                frame.transform = frame.transform.composed(with: info.pose.inverse)
                frame.basis.insert("from capture \(source.capture) (frame \(info.index)) and its registered pose", at: 0)
                return frame
            } catch let error as RGBDError {
                if lacking == nil { lacking = error.description }
            }
        }
        throw RGBDError(.invalidArgument, file: scene.path,
                        "the \(kind.rawValue) frame: no registered capture's photo has what it needs (the first: \(lacking ?? "no photo"))",
                        argument: .frame)
    }

    struct Reader: SceneFrameReader {
        let sources: [Int: Source]
        package let color: Bool

        func read(_ info: SceneFrameInfo) throws -> SceneFrame {
            guard let source = sources[info.index] else {
                throw RGBDError(.invalidScene, "frame \(info.index) has no capture")
            }
            let rectified = try Capture.load(json: source.capture, image: source.image).rectified()
            guard rectified.depth.width == info.depthIntrinsics.width, rectified.depth.height == info.depthIntrinsics.height,
                  rectified.color.width == info.colorIntrinsics.width, rectified.color.height == info.colorIntrinsics.height else {
                throw RGBDError(.invalidScene, file: source.capture, "its images are not the size the registered scene recorded")
            }
            let depth = source.factor == 1 && source.offset == 0 ? rectified.depth
                : DepthScaleFit(factor: source.factor, offset: source.offset, tags: 0).apply(to: rectified.depth)
            return SceneFrame(info: info, depth: depth, confidence: nil, color: color ? rectified.color : nil)
        }
    }
}
