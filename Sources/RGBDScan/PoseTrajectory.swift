/// Timestamped camera poses, one per frame: the trajectory `rgbd refine` writes and the
/// scene commands take in place of a scan's own poses. On disk it is the TUM RGB-D
/// benchmark's trajectory text (evo and the TUM tools read it as it is): one line per pose,
/// `timestamp tx ty tz qx qy qz qw` separated by spaces, `#` lines are comments; the pose
/// camera-to-world with OpenCV camera axes, the quaternion Hamilton with its scalar last;
/// timestamps in seconds since the scan's first frame (`Scene.frameSeconds`), as the TUM
/// export's `groundtruth.txt` names frames.
public struct PoseTrajectory: Sendable {
    /// The poses in increasing time.
    public var poses: [(seconds: Double, pose: Pose)]

    /// A trajectory from its poses (in increasing time).
    public init(poses: [(seconds: Double, pose: Pose)]) { self.poses = poses }

    /// How close a frame's time must be to a pose's for the pose to be the frame's,
    /// seconds: half a millisecond (the text has six decimals; frames are 8 ms or more apart).
    package static let matchTolerance = 0.0005

    /// The largest trajectory file read: 256 MB (a pose line is under 200 bytes).
    package static let maxFileBytes = 256 << 20

    /// Reads a trajectory file.
    /// - Throws: `RGBDError` naming the file and line: a line that is not eight numbers, a
    ///   number that is not finite, a quaternion whose norm is not 1, a timestamp not
    ///   after the one before (duplicated or unsorted), no pose at all.
    public static func read(_ path: String) throws -> PoseTrajectory {
        let bytes = try FileSystem.readFile(path, limit: maxFileBytes)
        return try parse(bytes, file: path)
    }

    /// Parses trajectory text; `file` names it in errors.
    package static func parse(_ bytes: [UInt8], file: String) throws -> PoseTrajectory {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw RGBDError(.invalidArgument, file: file, "not a pose file: not UTF-8 text")
        }
        var poses: [(seconds: Double, pose: Pose)] = []
        var number = 0
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" }) {
            number += 1
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," || $0 == "\r" })
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            let line = "line \(number)"
            guard fields.count == 8 else {
                throw RGBDError(.invalidArgument, file: file,
                                "\(line): \(fields.count) values, expected 8 (timestamp tx ty tz qx qy qz qw)")
            }
            var values: [Double] = []
            for field in fields {
                guard let value = Double(field), value.isFinite else {
                    throw RGBDError(.invalidArgument, file: file, "\(line): '\(field.prefix(40))' is not a finite number")
                }
                values.append(value)
            }
            guard let pose = Pose(quaternionX: values[4], y: values[5], z: values[6], w: values[7],
                                  translation: SIMD3(values[1], values[2], values[3])) else {
                let norm = (values[4] * values[4] + values[5] * values[5] + values[6] * values[6] + values[7] * values[7]).squareRoot()
                throw RGBDError(.invalidArgument, file: file, "\(line): the quaternion's norm is \(norm), not 1: not a rotation")
            }
            if let last = poses.last, !(values[0] > last.seconds) {
                throw RGBDError(.invalidArgument, file: file,
                                "\(line): timestamp \(values[0]) is not after the line before's (\(last.seconds)): duplicated or unsorted")
            }
            poses.append((values[0], pose))
        }
        guard !poses.isEmpty else { throw RGBDError(.invalidArgument, file: file, "no pose in the file") }
        return PoseTrajectory(poses: poses)
    }

    /// The pose at `seconds`, within `matchTolerance`; nil when none is.
    public func pose(at seconds: Double) -> Pose? {
        var low = 0, high = poses.count
        while low < high {
            let mid = (low + high) / 2
            if poses[mid].seconds < seconds { low = mid + 1 } else { high = mid }
        }
        for i in [low - 1, low] where poses.indices.contains(i) {
            if abs(poses[i].seconds - seconds) <= Self.matchTolerance { return poses[i].pose }
        }
        return nil
    }
}

extension Scene {
    /// Frame `position`'s time in a trajectory: seconds since the scan's first frame (its
    /// recorded time; without one, its number over the frame rate, 30 when unknown).
    public func frameSeconds(_ position: Int) -> Double {
        let info = frames[position]
        if let time = info.time { return time - (frames[0].time ?? 0) }
        return Double(info.index) / (framesPerSecond ?? 30)
    }

    /// This scene with the poses of `trajectory`, matched to its frames by time
    /// (`frameSeconds`); frames without a pose in it are left out (`missing`).
    /// `source` says where the poses come from (`poseSource`).
    /// - Throws: `RGBDError` naming `file` when no frame has a pose in the trajectory.
    public func replacingPoses(with trajectory: PoseTrajectory, source: String, file: String) throws
        -> (scene: Scene, missing: [Int]) {
        var kept: [SceneFrameInfo] = [], missing: [Int] = []
        for position in frames.indices {
            if let pose = trajectory.pose(at: frameSeconds(position)) {
                var info = frames[position]
                info.pose = pose
                kept.append(info)
            } else {
                missing.append(frames[position].index)
            }
        }
        guard !kept.isEmpty else {
            let first = trajectory.poses[0].seconds, last = trajectory.poses[trajectory.poses.count - 1].seconds
            throw RGBDError(.invalidArgument, file: file,
                            "no pose matches a frame of \(path) (its frames at \(format3(frameSeconds(0))) to "
                            + "\(format3(frameSeconds(frames.count - 1))) s since its first; the file's poses at \(format3(first)) to \(format3(last)) s)")
        }
        return (withFrames(kept, poseSource: source), missing)
    }

    /// This scene with `poses` (one per frame, in `frames`' order); `source` says where
    /// they come from.
    /// - Throws: `RGBDError` when the count differs from the frames', a number is not
    ///   finite or a rotation is not one (rows of unit length, orthogonal, determinant 1,
    ///   within 1e-5).
    public func replacingPoses(_ poses: [Pose], source: String) throws -> Scene {
        guard poses.count == frames.count else {
            throw RGBDError(.invalidArgument, file: path, "\(poses.count) poses for \(frames.count) frames")
        }
        for (i, pose) in poses.enumerated() {
            let rows = [pose.row0, pose.row1, pose.row2]
            let finite = (rows + [pose.translation]).allSatisfy { $0.x.isFinite && $0.y.isFinite && $0.z.isFinite }
            var rotation = finite
            for a in 0..<3 where rotation {
                rotation = abs((rows[a] * rows[a]).sum() - 1) < 1e-5
                for b in (a + 1)..<3 where abs((rows[a] * rows[b]).sum()) >= 1e-5 { rotation = false }
            }
            let r0 = pose.row0, r1 = pose.row1, r2 = pose.row2
            let determinant = r0.x * (r1.y * r2.z - r1.z * r2.y) - r0.y * (r1.x * r2.z - r1.z * r2.x) + r0.z * (r1.x * r2.y - r1.y * r2.x)
            guard finite, rotation, determinant > 0 else {
                throw RGBDError(.invalidArgument, file: path,
                                "pose \(i): " + (finite ? "its rotation is not a rotation (rows of unit length, orthogonal, determinant 1)" : "a number is not finite"))
            }
        }
        var replaced = frames
        for i in replaced.indices { replaced[i].pose = poses[i] }
        return withFrames(replaced, poseSource: source)
    }

    func withFrames(_ frames: [SceneFrameInfo], poseSource: String) -> Scene {
        Scene(path: path, format: format, world: world, worldBasis: worldBasis, frames: frames, colorSize: colorSize,
              depthSize: depthSize, framesPerSecond: framesPerSecond, skipped: skipped, warnings: warnings,
              details: details, storage: storage, poseSource: poseSource)
    }
}

/// Three decimals.
private func format3(_ x: Double) -> Double { (x * 1000).rounded() / 1000 }
