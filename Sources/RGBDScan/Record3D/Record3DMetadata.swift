import CJSONC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Record3D's `metadata` JSON (in a `.r3d` archive, or `metadata.json` beside an EXR + JPG
/// export): sizes, frame rate, K, a pose per frame; newer files add timestamps and
/// per-frame intrinsics. Poses are camera-to-world with OpenGL camera axes (`poses` here
/// are converted to OpenCV camera axes), in one of two worlds told apart by the file's
/// content (`world`, docs/scans.md): re-based on the first frame, or ARKit's
/// gravity-aligned world.
package struct Record3DMetadata: Sendable {
    /// The color frames' size.
    package var width: Int
    /// See `width`.
    package var height: Int
    /// The depth maps' size, when the file says (old files do not).
    package var depthWidth: Int?
    /// See `depthWidth`.
    package var depthHeight: Int?
    /// Frames per second.
    package var fps: Double?
    /// K at the color size.
    package var k: (fx: Double, fy: Double, cx: Double, cy: Double)
    /// A camera-to-world pose per frame, OpenCV camera axes.
    package var poses: [Pose]
    /// Seconds per frame, when the file has `frameTimestamps`.
    package var timestamps: [Double]?
    /// `fx, fy, cx, cy` per frame at the color size, when the file has them.
    package var perFrameIntrinsics: [(fx: Double, fy: Double, cx: Double, cy: Double)]?
    /// Whether the file has the newer key set (`frameTimestamps`, `perFrameIntrinsicCoeffs`, …).
    package var newKeys: Bool
    /// `cameraType`, when present.
    package var cameraType: Int?
    /// The poses' world, as the file's content tells it (`world(firstPose:initPose:)`).
    package var world: SceneWorld
    /// What `world` rests on, in words (for `info`).
    package var worldBasis: String

    /// The most frames read: a 4-hour recording at 60 fps.
    package static let maxFrames = 1_000_000

    /// Parses the metadata; `name` names the file in errors.
    package static func parse(_ bytes: [UInt8], name: String) throws -> Record3DMetadata {
        guard !bytes.isEmpty else { throw RGBDError(.invalidJSON, file: name, "the file is empty") }
        let document: JSONDocument
        switch bytes.withUnsafeBufferPointer({ JSONDocument.parse($0) }) {
        case .success(let parsed): document = parsed
        case .failure(let error):
            throw RGBDError(.invalidJSON, file: name, location: "byte \(error.offset)", error.message)
        }
        let root = document.rootNode
        guard root.isObject else { throw RGBDError(.invalidScene, file: name, "not a JSON object") }

        func integer(_ key: String, required: Bool = true) throws -> Int? {
            guard let node = root.member(key) else {
                if required { throw RGBDError(.invalidScene, file: name, location: key, "missing") }
                return nil
            }
            guard let v = node.number, v.isFinite, v == v.rounded(), v > 0, v <= 100_000 else {
                throw RGBDError(.invalidScene, file: name, location: key, "\(node.typeName) is not a size in pixels")
            }
            return Int(v)
        }
        func numbers(_ node: JSONNode, count: Int?) throws -> [Double] {
            guard let elements = node.elements else {
                throw RGBDError(.invalidScene, file: name, location: node.path, "\(node.typeName), not an array of numbers")
            }
            if let count, elements.count != count {
                throw RGBDError(.invalidScene, file: name, location: node.path, "\(elements.count) numbers where \(count) belong")
            }
            return try elements.map { element in
                guard let v = element.number, v.isFinite else {
                    throw RGBDError(.invalidScene, file: name, location: element.path, "\(element.typeName), not a finite number")
                }
                return v
            }
        }
        func rows(_ key: String, width: Int) throws -> [[Double]]? {
            guard let node = root.member(key) else { return nil }
            guard let count = node.count else {
                throw RGBDError(.invalidScene, file: name, location: key, "\(node.typeName), not an array")
            }
            guard count <= maxFrames else {
                throw RGBDError(.invalidScene, file: name, location: key, "\(count) entries, more than rgbd reads (\(maxFrames))")
            }
            return try (0..<count).map { i in
                guard let element = node.element(at: i) else { return [] }
                return try numbers(element, count: width)
            }
        }

        let width = try integer("w") ?? 0, height = try integer("h") ?? 0
        let depthWidth = try integer("dw", required: false), depthHeight = try integer("dh", required: false)
        var fps: Double?
        if let node = root.member("fps") {
            guard let v = node.number, v.isFinite, v > 0, v <= 10_000 else {
                throw RGBDError(.invalidScene, file: name, location: "fps", "\(node.typeName) is not a frame rate")
            }
            fps = v
        }
        guard let kNode = root.member("K") else { throw RGBDError(.invalidScene, file: name, location: "K", "missing") }
        guard let entries = Intrinsics.matrixEntries(try numbers(kNode, count: 9)), entries.fx > 0, entries.fy > 0 else {
            throw RGBDError(.invalidScene, file: name, location: "K", "not a 3×3 intrinsic matrix with positive focal lengths")
        }
        guard let poseRows = try rows("poses", width: 7) else {
            throw RGBDError(.invalidScene, file: name, location: "poses", "missing")
        }
        guard !poseRows.isEmpty else { throw RGBDError(.invalidScene, file: name, location: "poses", "empty") }
        var initPose: [Double]?
        if let node = root.member("initPose") { initPose = try numbers(node, count: 7) }
        let (world, worldBasis) = Self.world(firstPose: poseRows[0], initPose: initPose)
        let poses = try poseRows.enumerated().map { i, p in
            guard let pose = Pose(quaternionX: p[0], y: p[1], z: p[2], w: p[3], translation: SIMD3(p[4], p[5], p[6])) else {
                let norm = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]).squareRoot()
                throw RGBDError(.invalidScene, file: name, location: "poses[\(i)] (frame \(i))",
                                "the quaternion (qx, qy, qz, qw) has norm \(DecimalText.fixed(norm, 4)), not a rotation")
            }
            return pose.fromOpenGLCamera()
        }
        var timestamps: [Double]?
        if let node = root.member("frameTimestamps") {
            let values = try numbers(node, count: nil)
            if !values.isEmpty { timestamps = values }
        }
        var perFrame: [(fx: Double, fy: Double, cx: Double, cy: Double)]?
        if let coefficients = try rows("perFrameIntrinsicCoeffs", width: 4), !coefficients.isEmpty {
            perFrame = try coefficients.enumerated().map { i, c in
                guard c[0] > 0, c[1] > 0 else {
                    throw RGBDError(.invalidScene, file: name, location: "perFrameIntrinsicCoeffs[\(i)]",
                                    "focal lengths must be positive")
                }
                return (c[0], c[1], c[2], c[3])
            }
        }
        var cameraType: Int?
        if let v = root.member("cameraType")?.number, v.isFinite, abs(v) < 1000 { cameraType = Int(v) }
        return Record3DMetadata(width: width, height: height, depthWidth: depthWidth, depthHeight: depthHeight, fps: fps,
                                k: (entries.fx, entries.fy, entries.cx, entries.cy), poses: poses,
                                timestamps: timestamps, perFrameIntrinsics: perFrame,
                                newKeys: root.member("frameTimestamps") != nil || root.member("perFrameIntrinsicCoeffs") != nil
                                    || root.member("initPose") != nil,
                                cameraType: cameraType, world: world, worldBasis: worldBasis)
    }

    /// Which world Record3D's poses are in, from the file alone, and what that rests on.
    /// `firstPose` and `initPose` are `[qx, qy, qz, qw, x, y, z]` as stored.
    ///
    /// - Pose 0 is the identity: the poses are re-based on the first frame, as the app's
    ///   author describes it (ARKit's world would give the identity only for a camera held
    ///   exactly level at the world's origin): `.firstFrame`.
    /// - Pose 0 is not the identity and `initPose` is the identity: nothing was re-based;
    ///   the poses are ARKit's as tracked, in its gravity-aligned world (+y up), as in a
    ///   real 2023 EXR + JPG export whose door plane is vertical in that world:
    ///   `.gravityAligned`.
    /// - Otherwise (no `initPose`, or one that is not the identity, with pose 0 not the
    ///   identity, as in a re-based recording trimmed before export) the file does not
    ///   say: `.undetermined`, taken as not gravity-aligned.
    package static func world(firstPose: [Double], initPose: [Double]?) -> (SceneWorld, String) {
        if isIdentity(firstPose) {
            return (.firstFrame, "pose 0 is the identity: poses re-based on the first frame")
        }
        guard let initPose else {
            return (.undetermined, "pose 0 is not the identity and the file has no initPose: the world is not known to be gravity-aligned (assumed not)")
        }
        guard isIdentity(initPose) else {
            return (.undetermined, "pose 0 is not the identity and initPose is not the identity either: the world is not known to be gravity-aligned (assumed not)")
        }
        return (.gravityAligned, "pose 0 is not the identity and initPose is the identity: ARKit's poses as tracked, not re-based")
    }

    /// Whether `[qx, qy, qz, qw, x, y, z]` is the identity: a rotation under 1e-4 rad
    /// (0.006°) and a translation under 0.1 mm.
    static func isIdentity(_ p: [Double]) -> Bool {
        guard p.count == 7 else { return false }
        let vector = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).squareRoot()
        let angle = 2 * atan2(vector, abs(p[3]))
        let offset = (p[4] * p[4] + p[5] * p[5] + p[6] * p[6]).squareRoot()
        return angle < 1e-4 && offset < 1e-4
    }
}
