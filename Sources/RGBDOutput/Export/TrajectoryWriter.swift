extension PoseTrajectory {
    /// The trajectory as TUM trajectory text: `comments` as `#` lines, a line naming the
    /// columns, then `timestamp tx ty tz qx qy qz qw` per pose (6 decimals of seconds).
    package func text(comments: [String]) -> String {
        var text = comments.map { "# " + $0 + "\n" }.joined() + "# timestamp tx ty tz qx qy qz qw\n"
        for (seconds, pose) in poses {
            let q = pose.quaternion, p = pose.translation
            text += TUMWriter.timestamp(seconds) + " "
                + [p.x, p.y, p.z, q.x, q.y, q.z, q.w].map(ExportFiles.number).joined(separator: " ") + "\n"
        }
        return text
    }

    /// Writes `text(comments:)` to `path`, whole or not at all (a temporary name, then a rename).
    public func write(to path: String, comments: [String]) throws {
        let files = StagedFiles()
        try files.stage(path, bytes: Array(text(comments: comments).utf8))
        try files.commit()
    }
}

extension PoseRefinement {
    /// The refined poses as a trajectory, timed as `Scene.frameSeconds` of `scene` (the
    /// scene refined).
    public func trajectory(of scene: Scene) -> PoseTrajectory {
        PoseTrajectory(poses: poses.indices.map { (scene.frameSeconds($0), poses[$0]) })
    }

    /// What the trajectory file's header says: its source, axes, and how it was refined.
    public func comments(_ scene: Scene) -> [String] {
        [
            "rgbd \(RGBDVersion.string): camera poses of \(scene.path) refined against its depth (rgbd refine)",
            "camera-to-world, OpenCV camera axes (x right, y down, z forward), meters, world: \(scene.world.rawValue)",
            "timestamps: seconds since the scan's first frame; quaternion x y z w (Hamilton)",
            summary,
        ]
    }

    /// One line: frames, decisions, residuals.
    public var summary: String {
        func mm(_ m: Double) -> String { m.isFinite ? "\((m * 10_000).rounded() / 10) mm" : "none" }
        return "\(poses.count) frames, \(tracked) tracked against the fused model (voxel \(mm(voxel)), reach \(mm(truncation))); "
            + "\(undecided) where the depth left a direction free (the recorded motion kept there), "
            + "\(corrected) whose recorded motion the depth contradicted (jumps undone); "
            + "\(keyframes) keyframes, \(loopClosures) loop closure\(loopClosures == 1 ? "" : "s") in the pose graph; "
            + "median depth residual \(mm(residualBefore)) from the recorded motion, \(mm(residualAfter)) refined"
    }

    /// The scene with the refined poses, saying so in its `poseSource`.
    public func applied(to scene: Scene) throws -> Scene {
        try scene.replacingPoses(poses, source: "refined against the depth by rgbd \(RGBDVersion.string) (\(tracked) frames tracked)")
    }
}
