/// A COLMAP model: `images/NNNNNN.jpg` and `sparse/0/` with `cameras`, `images` and
/// `points3D`, binary (`.bin`, what COLMAP prefers) or text (`.txt`).
///
/// Conventions (COLMAP's `doc/format.rst`, `doc/cameras.rst`): cameras `PINHOLE` with
/// `fx fy cx cy`, pixel centres at `i + 0.5` (`cx = cx_rgbd + 0.5`), one camera per
/// distinct intrinsics; each image's pose **world-to-camera** (OpenCV camera axes) as a
/// quaternion `QW QX QY QZ` (Hamilton, scalar first) and `TX TY TZ`, followed by its 2-D
/// points line, empty; points3D from the scene's seed cloud with their colors, error 0
/// and an empty track.
struct COLMAPWriter: SceneLayoutWriter {
    /// Whether the principal point is centred (the Gaussian splatting variant).
    package var centred: Bool

    var layout: SceneLayout { SceneLayout(colorFolder: "images", seedCloud: true, centredPrincipalPoint: centred) }
    static let model = "sparse/0"

    func fileStem(_ info: SceneFrameInfo, ordinal: Int, seconds: Double) -> String { ExportFiles.padded(info.index, 6) }

    func finish(_ frames: [ExportedFrame], cloud: SceneCloud?, scene: Scene, options: SceneExportOptions,
                into folder: StagedDirectory) throws {
        try folder.createDirectory(Self.model)
        var cameras: [Intrinsics] = []
        let cameraIDs: [Int] = frames.map { frame in
            if let i = cameras.firstIndex(where: { SceneLayout.sameCamera($0, frame.camera) }) { return i + 1 }
            cameras.append(frame.camera)
            return cameras.count
        }
        let images = frames.enumerated().map { i, frame in
            Image(id: i + 1, worldToCamera: frame.info.pose.inverse, camera: cameraIDs[i],
                  name: Path.lastComponent(frame.colorFile))
        }
        if options.colmapText {
            try folder.write(Self.model + "/cameras.txt", text: camerasText(cameras))
            try folder.write(Self.model + "/images.txt", text: imagesText(images, poses: scene.poseSource))
            try folder.write(Self.model + "/points3D.txt", text: pointsText(cloud))
        } else {
            try folder.write(Self.model + "/cameras.bin", camerasBinary(cameras))
            try folder.write(Self.model + "/images.bin", imagesBinary(images))
            try folder.write(Self.model + "/points3D.bin", pointsBinary(cloud))
        }
    }

    package struct Image {
        var id: Int
        var worldToCamera: Pose
        var camera: Int
        var name: String
    }

    /// COLMAP's `PINHOLE` parameters: `fx fy cx cy`, pixel centres at `i + 0.5`.
    static func parameters(_ k: Intrinsics) -> [Double] { [k.fx, k.fy, k.cx + 0.5, k.cy + 0.5] }

    func camerasText(_ cameras: [Intrinsics]) -> String {
        var text = "# Camera list with one line of data per camera:\n#   CAMERA_ID, MODEL, WIDTH, HEIGHT, PARAMS[]\n"
        text += "# Number of cameras: \(cameras.count)\n"
        for (i, k) in cameras.enumerated() {
            text += "\(i + 1) PINHOLE \(k.width) \(k.height) " + Self.parameters(k).map(ExportFiles.number).joined(separator: " ") + "\n"
        }
        return text
    }

    func imagesText(_ images: [Image], poses: String) -> String {
        var text = "# Image list with two lines of data per image:\n"
        text += "#   IMAGE_ID, QW, QX, QY, QZ, TX, TY, TZ, CAMERA_ID, NAME\n#   POINTS2D[] as (X, Y, POINT3D_ID)\n"
        text += "# Number of images: \(images.count), mean observations per image: 0\n"
        text += "# Poses: \(poses)\n"
        for image in images {
            let q = image.worldToCamera.quaternion, t = image.worldToCamera.translation
            let numbers = [q.w, q.x, q.y, q.z, t.x, t.y, t.z].map(ExportFiles.number).joined(separator: " ")
            text += "\(image.id) \(numbers) \(image.camera) \(image.name)\n\n"
        }
        return text
    }

    func pointsText(_ cloud: SceneCloud?) -> String {
        var text = "# 3D point list with one line of data per point:\n"
        text += "#   POINT3D_ID, X, Y, Z, R, G, B, ERROR, TRACK[] as (IMAGE_ID, POINT2D_IDX)\n"
        guard let cloud else { return text + "# Number of points: 0, mean track length: 0\n" }
        text += "# Number of points: \(cloud.count), mean track length: 0\n"
        for i in 0..<cloud.count {
            let p = (0..<3).map { ExportFiles.number(Double(cloud.positions[3 * i + $0])) }.joined(separator: " ")
            let c = (0..<3).map { String(cloud.colors[3 * i + $0]) }.joined(separator: " ")
            text += "\(i + 1) \(p) \(c) 0\n"
        }
        return text
    }

    func camerasBinary(_ cameras: [Intrinsics]) -> [UInt8] {
        var out = LittleEndianBytes()
        out.u64(cameras.count)
        for (i, k) in cameras.enumerated() {
            out.i32(i + 1)
            out.i32(1)  // PINHOLE
            out.u64(k.width)
            out.u64(k.height)
            for p in Self.parameters(k) { out.f64(p) }
        }
        return out.bytes
    }

    func imagesBinary(_ images: [Image]) -> [UInt8] {
        var out = LittleEndianBytes()
        out.u64(images.count)
        for image in images {
            let q = image.worldToCamera.quaternion, t = image.worldToCamera.translation
            out.i32(image.id)
            for v in [q.w, q.x, q.y, q.z, t.x, t.y, t.z] { out.f64(v) }
            out.i32(image.camera)
            out.bytes += Array(image.name.utf8) + [0]
            out.u64(0)  // no 2-D points
        }
        return out.bytes
    }

    func pointsBinary(_ cloud: SceneCloud?) -> [UInt8] {
        var out = LittleEndianBytes()
        let count = cloud?.count ?? 0
        out.u64(count)
        guard let cloud else { return out.bytes }
        for i in 0..<count {
            out.u64(i + 1)
            for a in 0..<3 { out.f64(Double(cloud.positions[3 * i + a])) }
            out.bytes += cloud.colors[(3 * i)..<(3 * i + 3)]
            out.f64(0)  // error
            out.u64(0)  // track length
        }
        return out.bytes
    }
}

/// Bytes of little-endian numbers, as COLMAP's binary model stores them.
struct LittleEndianBytes {
    var bytes: [UInt8] = []

    mutating func u64(_ v: Int) { append(UInt64(v)) }
    mutating func i32(_ v: Int) { append(UInt32(truncatingIfNeeded: v)) }
    mutating func f64(_ v: Double) { append(v.bitPattern) }

    private mutating func append<T: FixedWidthInteger>(_ v: T) {
        withUnsafeBytes(of: v.littleEndian) { bytes += $0 }
    }
}
