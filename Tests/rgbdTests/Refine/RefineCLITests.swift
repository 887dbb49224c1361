import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// `rgbd refine` and `--poses` through the real binary: the TUM trajectory it writes, fuse
/// with it and with the true poses (the surface back on the truth), hostile pose files
/// refused with one line naming the file and line, nothing written.
@Suite(.serialized) struct RefineCLITests {
    /// 120 frames (2 s) of the loop with ARKit-like drift and a jump.
    static func scan(error: SyntheticPoseError? = nil) -> SyntheticScan {
        var options = SyntheticScan.Options()
        options.videoPreset = "ultrafast"
        options.depthNoise = 0.002
        var drift = SyntheticPoseError()
        drift.positionDrift = 0.03
        drift.jumps = [1.2]
        options.poseError = error ?? drift
        var scan = SyntheticScan(frameCount: 120, colorWidth: 160, colorHeight: 120, options: options)
        scan.trajectory = .loop(frames: 600, wallSeconds: nil)
        return scan
    }

    /// The median distance of a PLY's vertices to the room's true surfaces.
    static func medianDistance(_ ply: String, room: SyntheticRoom) throws -> Double {
        let vertices = try FuseCLITests.read(ply).vertices
        let distances = vertices.map { room.distanceToSurface($0) }.sorted()
        return distances.isEmpty ? .infinity : distances[distances.count / 2]
    }

    @Test func refineWritesATrajectoryThatFuseUses() throws {
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scan = Self.scan()
        try scan.write(layout: .stray(), to: dir + "/scan")
        let run = try CLITests.run(["refine", dir + "/scan", "-o", dir + "/poses.txt"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("120 frames, 119 tracked"), "\(run.stderr)")
        let lines = try String(contentsOfFile: dir + "/poses.txt", encoding: .utf8).split(separator: "\n")
        let poses = lines.filter { !$0.hasPrefix("#") }
        #expect(poses.count == 120)
        #expect(lines.contains("# timestamp tx ty tz qx qy qz qw"))
        // Frame 0 anchors the world: its recorded pose, at time 0.
        let truth = scan.truth(for: .stray())
        let first = poses[0].split(separator: " ").compactMap { Double($0) }
        #expect(first.count == 8 && first[0] == 0)
        #expect(abs(first[1] - truth.recordedPoses[0].translation.x) < 1e-6)

        // Fused with the refined poses, the surface is nearer the truth than with the recorded.
        let recorded = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/recorded.ply", "--voxel", "0.01", "-q"])
        let refined = try CLITests.run(["fuse", dir + "/scan", "--poses", dir + "/poses.txt", "-o", dir + "/refined.ply", "--voxel", "0.01", "-q"])
        #expect(recorded.status == 0 && refined.status == 0, "\(recorded.stderr)\(refined.stderr)")
        let before = try Self.medianDistance(dir + "/recorded.ply", room: scan.room)
        let after = try Self.medianDistance(dir + "/refined.ply", room: scan.room)
        print("fuse: median distance to the truth \(before) m with the recorded poses, \(after) m refined")
        #expect(after < before)
        let header = try FuseCLITests.read(dir + "/refined.ply").header
        #expect(header.contains("comment poses from \(dir)/poses.txt"))

        // The true poses as a file: the surface on the truth.
        let text = PoseTrajectory(poses: truth.poses.enumerated().map { i, p in
            (truth.timestamps[i] - truth.timestamps[0], Pose(row0: p.rotation.r0, row1: p.rotation.r1, row2: p.rotation.r2, translation: p.translation))
        }).text(comments: ["truth"])
        try text.write(toFile: dir + "/truth.txt", atomically: true, encoding: .utf8)
        let exact = try CLITests.run(["fuse", dir + "/scan", "--poses", dir + "/truth.txt", "-o", dir + "/truth.ply", "--voxel", "0.01", "-q"])
        #expect(exact.status == 0, "\(exact.stderr)")
        let onTruth = try Self.medianDistance(dir + "/truth.ply", room: scan.room)
        #expect(onTruth <= 0.002, "median \(onTruth) m with the true poses")
    }

    @Test func refineInTheSameRun() throws {
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.scan().write(layout: .stray(), to: dir + "/scan")
        let run = try CLITests.run(["cloud", dir + "/scan", "--refine", "-o", dir + "/cloud.ply"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("poses refined: 120 frames"), "\(run.stderr)")
        #expect(try FuseCLITests.read(dir + "/cloud.ply").header.contains { $0.hasPrefix("comment poses refined against the depth") })
        let both = try CLITests.run(["fuse", dir + "/scan", "--refine", "--poses", dir + "/x.txt", "-o", dir + "/m.ply"])
        #expect(both.status != 0 && both.stderr.contains("--poses and --refine exclude each other"))
    }

    @Test func hostilePoseFilesAreRefused() throws {
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.scan().write(layout: .stray(), to: dir + "/scan")
        let cases: [(String, String)] = [
            ("0 0 0 0 0 0 0 1\n0.016667 nan 0 0 0 0 0 1\n", "line 2: 'nan' is not a finite number"),
            ("0 0 0 0 0.5 0 0 1\n", "line 1: the quaternion's norm is"),
            ("0 0 0 0 0 0 0 1\n0 0 0 0 0 0 0 1\n", "duplicated or unsorted"),
            ("100 0 0 0 0 0 0 1\n200 0 0 0 0 0 0 1\n", "no pose matches a frame of"),
        ]
        for (n, (text, message)) in cases.enumerated() {
            let file = dir + "/poses\(n).txt"
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            let run = try CLITests.run(["fuse", dir + "/scan", "--poses", file, "-o", dir + "/out\(n).ply"])
            #expect(run.status == 1)
            let errors = run.stderr.split(separator: "\n").filter { $0.contains("error") }
            #expect(errors.count == 1 && errors[0].contains(file) && errors[0].contains(message), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/out\(n).ply"))
        }
        // A frame without a pose: one warning line, the rest fused.
        let partial = PoseTrajectory(poses: (0..<60).map { (Double($0) / 60, Pose.identity) }).text(comments: [])
        try partial.write(toFile: dir + "/half.txt", atomically: true, encoding: .utf8)
        let run = try CLITests.run(["cloud", dir + "/scan", "--poses", dir + "/half.txt", "-o", dir + "/half.ply"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("60 of 120 frames have no pose in \(dir)/half.txt and are left out"), "\(run.stderr)")
        // One frame: refine refuses it.
        var one = SyntheticScan.Options()
        one.videoPreset = "ultrafast"
        try SyntheticScan(frameCount: 1, colorWidth: 160, colorHeight: 120, options: one).write(layout: .stray(), to: dir + "/one")
        let single = try CLITests.run(["refine", dir + "/one", "-o", dir + "/one.txt"])
        #expect(single.status == 1 && single.stderr.contains("refining poses needs two or more"), "\(single.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/one.txt"))
    }
}
