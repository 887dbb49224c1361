/// Record3D scans (docs/scans.md): the `.r3d` file (a ZIP of `metadata`, `rgbd/N.jpg`,
/// LZFSE-compressed `rgbd/N.depth` float32 meters and `rgbd/N.conf` 0/1/2) and the
/// "EXR + JPG" export folder (`metadata.json`, `rgb/N.jpg`, `depth/N.exr`).
enum Record3DScan {
    /// The largest `metadata` read (100 000 poses are about 10 MB of JSON).
    static let maxMetadataBytes = 256 << 20

    static func openArchive(_ path: String) throws -> Scene {
        let archive = try ZIPArchive(path: path)
        guard let metadataEntry = archive.entry(named: "metadata") else {
            throw RGBDError(.invalidScene, file: path, "a ZIP without a \"metadata\" entry: not a Record3D .r3d file")
        }
        let name = "\(path): metadata"
        let metadata = try Record3DMetadata.parse(archive.read(metadataEntry, limit: maxMetadataBytes), name: name)
        var entries: [Int: (color: ZIPArchive.Entry?, depth: ZIPArchive.Entry?, confidence: ZIPArchive.Entry?)] = [:]
        for entry in archive.entries where entry.name.hasPrefix("rgbd/") {
            let file = entry.name.dropFirst(5)
            let ext = Path.pathExtension(String(file))
            guard let n = Int(Path.stem(String(file))), n >= 0, n < metadata.poses.count else { continue }
            switch ext {
            case "jpg": entries[n, default: (nil, nil, nil)].color = entry
            case "depth": entries[n, default: (nil, nil, nil)].depth = entry
            case "conf": entries[n, default: (nil, nil, nil)].confidence = entry
            default: break
            }
        }
        let depthNumbers = entries.filter { $0.value.depth != nil }.keys.sorted()
        guard let first = depthNumbers.first, let firstEntry = entries[first]?.depth else {
            throw RGBDError(.invalidScene, file: path, "no rgbd/N.depth entry for any of the \(metadata.poses.count) poses")
        }
        let firstName = "\(path): \(firstEntry.name)"
        var depthSize: (width: Int, height: Int)
        if let dw = metadata.depthWidth, let dh = metadata.depthHeight {
            depthSize = try Self.depthSize(metadata, bytes: dw * dh * 4, name: firstName)
        } else {
            // Old metadata has no depth size: the first map's decompressed size tells it.
            let compressed = try archive.read(firstEntry, limit: FileSystem.maxFileBytes)
            let bytes: Int
            do {
                bytes = try LZFSE.decompress(compressed, outputLimit: InputLimits.maxDepthPixels * 4).count
            } catch var error as RGBDError {
                error.file = firstName
                throw error
            }
            depthSize = try Self.depthSize(metadata, bytes: bytes, name: firstName)
        }
        let storage = ArchiveStorage(path: path, archive: archive, entries: entries, depthSize: depthSize,
                                     colorSize: (metadata.width, metadata.height))
        let hasColor = entries.values.contains { $0.color != nil }
        return try scene(path: path, metadata: metadata, has: { entries[$0]?.depth != nil }, depthSize: depthSize,
                         hasColor: hasColor, variant: ".r3d archive", storage: storage)
    }

    /// The depth size: `dw × dh` when the metadata says, else from the first depth map's
    /// byte count (float32) and the color frames' aspect (old files).
    static func depthSize(_ metadata: Record3DMetadata, bytes: Int, name: String) throws -> (width: Int, height: Int) {
        if let dw = metadata.depthWidth, let dh = metadata.depthHeight {
            guard dw * dh <= InputLimits.maxDepthPixels else {
                throw RGBDError(.invalidScene, file: name, "metadata claims \(dw)×\(dh) depth pixels, more than rgbd reads")
            }
            return (dw, dh)
        }
        let pixels = bytes / 4
        let height = Int((Double(pixels) * Double(metadata.height) / Double(metadata.width)).squareRoot().rounded())
        guard height > 0, pixels % height == 0, pixels <= InputLimits.maxDepthPixels else {
            throw RGBDError(.invalidScene, file: name,
                            "\(bytes) bytes of depth that are no float32 map with the color frames' aspect (\(metadata.width)×\(metadata.height))")
        }
        return (pixels / height, height)
    }

    static func scene(path: String, metadata: Record3DMetadata, has: (Int) -> Bool, depthSize: (width: Int, height: Int),
                      hasColor: Bool, variant: String, storage: any SceneStorage) throws -> Scene {
        let colorSize = (width: metadata.width, height: metadata.height)
        guard colorSize.width * depthSize.height == colorSize.height * depthSize.width else {
            throw RGBDError(.invalidScene, file: path,
                            "\(depthSize.width)×\(depthSize.height) depth maps do not have the color frames' aspect (\(colorSize.width)×\(colorSize.height))")
        }
        var frames: [SceneFrameInfo] = []
        var skipped: [Scene.SkippedFrame] = []
        var warnings: [String] = []
        for (i, pose) in metadata.poses.enumerated() {
            guard has(i) else {
                skipped.append(Scene.SkippedFrame(index: i, reason: "no depth"))
                continue
            }
            let k = metadata.perFrameIntrinsics.flatMap { i < $0.count ? $0[i] : nil } ?? metadata.k
            let color = Intrinsics(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: colorSize.width, height: colorSize.height)
            var time: Double?
            if let stamps = metadata.timestamps, i < stamps.count { time = stamps[i] - stamps[0] }
            else if let fps = metadata.fps { time = Double(i) / fps }
            frames.append(SceneFrameInfo(index: i, time: time, pose: pose, colorIntrinsics: color,
                                         depthIntrinsics: color.scaled(toWidth: depthSize.width, height: depthSize.height)))
        }
        if !skipped.isEmpty {
            warnings.append("\(skipped.count) frame\(skipped.count == 1 ? "" : "s") with a pose and no depth skipped (first: frame \(skipped[0].index))")
        }
        if !hasColor { warnings.append("\(path): no color frames: a depth-only scene") }
        var details: [(key: String, value: String)] = [("metadata", metadata.newKeys ? "newer key set (timestamps, per-frame intrinsics)" : "old key set (w, h, fps, K, poses)")]
        if let cameraType = metadata.cameraType { details.append(("camera type", "\(cameraType)")) }
        details.append(("K stored", metadata.perFrameIntrinsics == nil ? "once, for all frames" : "per frame"))
        return Scene(path: path, format: SceneFormat(app: .record3D, variant: variant + (metadata.newKeys ? "" : ", old metadata")),
                     world: metadata.world, worldBasis: metadata.worldBasis, frames: frames, colorSize: hasColor ? colorSize : nil, depthSize: depthSize,
                     framesPerSecond: metadata.fps, skipped: skipped, warnings: warnings, details: details,
                     storage: storage)
    }

    /// Checks a decoded color frame's size against the metadata's.
    static func checkColor(_ image: ColorImage, _ size: (width: Int, height: Int), file: String) throws {
        guard image.width == size.width, image.height == size.height else {
            throw RGBDError(.invalidScene, file: file,
                            "a \(image.width)×\(image.height) frame where the metadata says \(size.width)×\(size.height)")
        }
    }

    /// Depth as stored (float32 meters) with 0 and non-finite values as NaN.
    static func meters(_ samples: [Float]) -> [Float] {
        samples.map { $0.isFinite && $0 > 0 ? $0 : .nan }
    }
}

/// A `.r3d` archive's entries per frame.
struct ArchiveStorage: SceneStorage {
    let path: String
    let archive: ZIPArchive
    let entries: [Int: (color: ZIPArchive.Entry?, depth: ZIPArchive.Entry?, confidence: ZIPArchive.Entry?)]
    let depthSize: (width: Int, height: Int)
    let colorSize: (width: Int, height: Int)

    func makeReader(color: Bool) throws -> any SceneFrameReader { Reader(storage: self, color: color) }

    struct Reader: SceneFrameReader {
        let storage: ArchiveStorage
        package let color: Bool

        func read(_ info: SceneFrameInfo) throws -> SceneFrame {
            let s = storage
            guard let files = s.entries[info.index], let depthEntry = files.depth else {
                throw RGBDError(.invalidScene, file: s.path, location: "frame \(info.index)", "no depth")
            }
            let pixels = s.depthSize.width * s.depthSize.height
            let depthName = "\(s.path): \(depthEntry.name)"
            let raw = try decompress(depthEntry, expected: pixels * 4, name: depthName)
            let floats = raw.withUnsafeBytes { bytes in
                (0..<pixels).map { Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self))) }
            }
            let depth = DepthMap(width: s.depthSize.width, height: s.depthSize.height, channels: 1,
                                 samples: Record3DScan.meters(floats))
            var confidence: ImageBuffer<UInt8>?
            if let entry = files.confidence {
                let bytes = try decompress(entry, expected: pixels, name: "\(s.path): \(entry.name)")
                confidence = ImageBuffer(width: s.depthSize.width, height: s.depthSize.height, channels: 1, samples: bytes)
            }
            var image: ColorImage?
            if color, let entry = files.color {
                let name = "\(s.path): \(entry.name)"
                let jpeg = try s.archive.read(entry, limit: FileSystem.maxFileBytes)
                let decoded = try JPEGCodec.decodeRGB(jpeg, file: name)
                try Record3DScan.checkColor(decoded, s.colorSize, file: name)
                image = decoded
            }
            return SceneFrame(info: info, depth: depth, confidence: confidence, color: image)
        }

        private func decompress(_ entry: ZIPArchive.Entry, expected: Int, name: String) throws -> [UInt8] {
            let compressed = try storage.archive.read(entry, limit: FileSystem.maxFileBytes)
            var bytes: [UInt8]
            do {
                bytes = try LZFSE.decompress(compressed, outputLimit: expected)
            } catch var error as RGBDError {
                error.file = name
                throw error
            }
            guard bytes.count == expected else {
                throw RGBDError(.invalidScene, file: name, "\(bytes.count) bytes where a \(storage.depthSize.width)×\(storage.depthSize.height) map has \(expected)")
            }
            return bytes
        }
    }
}
