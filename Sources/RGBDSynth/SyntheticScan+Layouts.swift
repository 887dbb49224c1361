import RGBDKit

extension SyntheticScan {
    /// The file layouts of the iPhone LiDAR apps a scan can be written in.
    package enum Layout: Equatable, Sendable {
        /// A Stray Scanner folder: `rgb.mp4`, `depth/`, `confidence/`, `camera_matrix.csv`,
        /// `odometry.csv`, `imu.csv`. `imuInG`: accelerometer in g (2025+) rather than m/s².
        case stray(odometry: StrayOdometry = .v15, depth: StrayDepth = .png, video: StrayVideo = .hevc,
                   imuInG: Bool = false)
        /// Record3D: a `.r3d` archive or an "EXR + JPG" export folder, with the old or the
        /// new metadata keys, recorded in landscape (960×720-like) or portrait, with poses
        /// re-based on the first frame or in ARKit's gravity-aligned world.
        case record3D(Record3DContainer = .r3d, keys: Record3DKeys = .new, portrait: Bool = false,
                      world: Record3DWorld = .firstFrame)

        /// A short name: `stray-v15`, `stray-v9-npy-h264`, `r3d-new`, `exr-old-portrait` …
        package var name: String {
            switch self {
            case let .stray(odometry, depth, video, imuInG):
                return "stray-\(odometry)" + (depth == .npy ? "-npy" : "") + (video == .h264 ? "-h264" : "")
                    + (imuInG ? "-imu-g" : "")
            case let .record3D(container, keys, portrait, world):
                return "\(container)-\(keys)" + (portrait ? "-portrait" : "") + (world == .arkit ? "-arkit" : "")
            }
        }

        /// Whether the scan's poses are re-based on the first frame (Record3D's first-frame world).
        var rebased: Bool { if case .record3D(_, _, _, .firstFrame) = self { return true } else { return false } }
        /// Whether the scan is recorded in portrait.
        var portrait: Bool { if case .record3D(_, _, let p, _) = self { return p } else { return false } }
    }

    /// Stray Scanner's `odometry.csv` variants.
    package enum StrayOdometry: String, Equatable, Sendable {
        /// Before 2021-08: no header, `x, y, z, qx, qy, qz, qw`.
        case legacy
        /// 2021-08 … 2025: `timestamp, frame, x, y, z, qx, qy, qz, qw`.
        case v9
        /// 2026: v9 plus `fx, fy, cx, cy, distortion_center_x, distortion_center_y`.
        case v15
    }

    /// Stray Scanner's depth files.
    package enum StrayDepth: String, Equatable, Sendable {
        /// `depth/NNNNNN.png`, 16-bit gray, millimetres.
        case png
        /// `depth/NNNNNN.npy`, uint16 millimetres (before 2022-02).
        case npy
    }

    /// Stray Scanner's video codec.
    package enum StrayVideo: String, Equatable, Sendable {
        /// HEVC (`libx265`, tagged `hvc1`), as current versions record.
        case hevc
        /// H.264 (`libx264`), as older versions did.
        case h264
    }

    /// Record3D's containers.
    package enum Record3DContainer: String, Equatable, Sendable {
        /// A `.r3d` file (a ZIP).
        case r3d
        /// The "EXR + JPG" export folder.
        case exr
    }

    /// The worlds Record3D's poses come in.
    package enum Record3DWorld: String, Equatable, Sendable {
        /// Re-based on the first frame: pose 0 is the identity (OpenGL camera axes); the new
        /// key set's `initPose` holds the room pose the re-basing removed.
        case firstFrame = "first-frame"
        /// ARKit's gravity-aligned world (+y up) as tracked, not re-based: pose 0 is the
        /// first camera's pose in the room; the new key set's `initPose` is the identity
        /// (as in a real 2023 EXR + JPG export).
        case arkit
    }

    /// Record3D's metadata key sets.
    package enum Record3DKeys: String, Equatable, Sendable {
        /// `h, w, fps, K, poses` only.
        case old
        /// Also `dw, dh, initPose, frameTimestamps, perFrameIntrinsicCoeffs, cameraType`.
        case new
    }

    /// What `write(layout:to:)` wrote.
    package struct Written: Sendable {
        /// The scan: the folder, or the `.r3d` file.
        package var scan: String
        /// The ground truth JSON beside it (`truthJSON(for:)`).
        package var truth: String
    }

    /// Where the ground truth of a scan written at `path` goes: beside it, named after it
    /// (`scan/` → `scan.truth.json`, `scan.r3d` → `scan.truth.json`), so that it is not
    /// mistaken for part of the scan.
    package static func truthPath(forScanAt path: String) -> String {
        var base = path
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        if base.hasSuffix(".r3d") { base.removeLast(4) }
        return base + ".truth.json"
    }

    /// Renders every frame and writes the scan in `layout` at `path` (a folder, created if
    /// needed, or for `.record3D(.r3d, …)` the archive file), and the ground truth beside it
    /// (`truthPath(forScanAt:)`). Frames are streamed: memory stays bounded for long scans.
    /// The same scan gives the same bytes on every run (the video: see `docs/testing.md`).
    @discardableResult
    package func write(layout: Layout, to path: String) throws -> Written {
        guard frameCount > 0 else { throw RGBDError(.invalidArgument, "a scan needs at least one frame") }
        switch layout {
        case let .stray(odometry, depth, video, imuInG):
            try writeStray(to: path, odometry: odometry, depth: depth, video: video, imuInG: imuInG)
        case let .record3D(container, keys, portrait, world):
            try writeRecord3D(to: path, container: container, keys: keys, portrait: portrait, world: world)
        }
        let truth = Self.truthPath(forScanAt: path)
        try ScanOutputFile.write(truth, Array(truthJSON(for: layout).utf8))
        return Written(scan: path, truth: truth)
    }

    /// The depth grid frame `i` is written at (nil: the scan's own), and whether it has
    /// depth at all.
    func depthSize(frame i: Int, portrait: Bool) -> SIMD2<Int>? {
        guard options.framesWithOtherDepthSize.contains(i) else { return nil }
        let s = options.otherDepthSize
        return portrait ? SIMD2(s.y, s.x) : s
    }
}

/// An 8-bit grayscale PNG (the confidence maps): unfiltered rows deflated by RGBDKit's
/// zlib stream, chunks and CRCs written here.
enum ScanPNG {
    static func gray8(width: Int, height: Int, values: [UInt8]) throws -> [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity((width + 1) * height)
        for y in 0..<height {
            raw.append(0)
            raw += values[(y * width)..<(y * width + width)]
        }
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ data: [UInt8]) {
            let body = Array(type.utf8) + data
            out.be32(UInt32(data.count))
            out += body
            out.be32(ScanCRC32.checksum(body))
        }
        var header: [UInt8] = []
        header.be32(UInt32(width))
        header.be32(UInt32(height))
        header += [8, 0, 0, 0, 0]   // 8 bits, grayscale, deflate, adaptive filtering, no interlace
        chunk("IHDR", header)
        chunk("IDAT", try PNGCodec.zlibStreamISAL(raw, level: 1))
        chunk("IEND", [])
        return out
    }
}

extension [UInt8] {
    mutating func be32(_ v: UInt32) { for s in stride(from: 24, through: 0, by: -8) { append(UInt8((v >> UInt32(s)) & 0xFF)) } }
}
