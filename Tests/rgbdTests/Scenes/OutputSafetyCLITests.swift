import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// Nothing lost: the scene commands through the real binary never remove, replace or
/// change an input or a file they did not write. Every input byte is compared before and
/// after; refusals are one line, a non-zero exit and nothing written.
@Suite(.serialized) struct OutputSafetyCLITests {
    /// Every file under `directory` (relative path → bytes).
    static func snapshot(_ directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return files }
        for case let relative as String in walker {
            var isDirectory: ObjCBool = false
            let path = directory + "/" + relative
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[relative] = try Data(contentsOf: URL(fileURLWithPath: path))
            } else {
                files[relative + "/"] = Data()
            }
        }
        return files
    }

    static func errorLines(_ run: CLITests.Run) -> [Substring] {
        run.stderr.split(separator: "\n").filter { $0.hasPrefix("rgbd: error:") || $0.hasPrefix("Error:") }
    }

    /// `export SCAN -o DIR --overwrite` with the scan inside DIR, `-o SCAN`, `-o SCAN/..`:
    /// refused naming the input, every byte of DIR (the scan and an unrelated file) still
    /// there, and no temporary folder left anywhere.
    @Test func exportNeverReplacesItsInput() throws {
        let (dir, scan) = try SceneCLITests.write(.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/keepme", withIntermediateDirectories: true)
        try Data("notes".utf8).write(to: URL(fileURLWithPath: dir + "/keepme/notes.txt"))
        let before = try Self.snapshot(dir)
        #expect(before["scan/odometry.csv"] != nil && before["keepme/notes.txt"] != nil)
        for output in [dir, scan, scan + "/..", scan + "/", dir + "/./scan/../"] {
            for format in ["colmap", "nerfstudio"] {
                let run = try CLITests.run(["export", scan, "--format", format, "-o", output, "--overwrite", "-q"])
                #expect(run.status == 1, "\(output): exit \(run.status)")
                let errors = Self.errorLines(run)
                #expect(errors.count == 1 && errors[0].contains("the input \(scan)"), "\(output): \(run.stderr)")
                #expect(try Self.snapshot(dir) == before, "\(output): the folder changed")
            }
        }
        // Nothing left beside the scan's parent either (the temporaries go beside DIR).
        let parent = (dir as NSString).deletingLastPathComponent
        #expect(!CLITests.files(in: parent).contains { $0.contains(".rgbd-tmp-") && $0.contains((dir as NSString).lastPathComponent) })
    }

    /// `--overwrite` replaces a folder an earlier export wrote, and refuses one holding
    /// anything else, naming it, with every byte kept; without it a non-empty folder is refused.
    @Test func overwriteReplacesOnlyAnEarlierExport() throws {
        let (dir, scan) = try SceneCLITests.write(.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let out = dir + "/out"
        let first = try CLITests.run(["export", scan, "--format", "colmap", "-o", out, "-q"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(FileManager.default.fileExists(atPath: out + "/.rgbd-written"))
        // Replaced by another format: only the new export's files remain.
        let second = try CLITests.run(["export", scan, "--format", "nerfstudio", "-o", out, "--overwrite", "-q"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(CLITests.files(in: out) == [".rgbd-written", "depth", "images", "sparse_pc.ply", "transforms.json"])
        // A file the user put there: refused, naming it; everything kept.
        try Data("mine".utf8).write(to: URL(fileURLWithPath: out + "/images/mine.txt"))
        let before = try Self.snapshot(out)
        let third = try CLITests.run(["export", scan, "--format", "colmap", "-o", out, "--overwrite", "-q"])
        #expect(third.status == 1 && Self.errorLines(third).count == 1, "\(third.stderr)")
        #expect(third.stderr.contains("images/mine.txt"), "\(third.stderr)")
        #expect(try Self.snapshot(out) == before)
        // A folder rgbd never wrote (no list): refused even with --overwrite.
        let foreign = dir + "/foreign"
        try FileManager.default.createDirectory(atPath: foreign + "/images", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: foreign + "/images/a.jpg"))
        let refused = try CLITests.run(["export", scan, "--format", "colmap", "-o", foreign, "--overwrite", "-q"])
        #expect(refused.status == 1 && refused.stderr.contains("not written by rgbd"), "\(refused.stderr)")
        #expect(FileManager.default.fileExists(atPath: foreign + "/images/a.jpg"))
        // Without --overwrite a non-empty folder is refused, and the message says how.
        let plain = try CLITests.run(["export", scan, "--format", "colmap", "-o", foreign, "-q"])
        #expect(plain.status == 1 && plain.stderr.contains("--overwrite"), "\(plain.stderr)")
        #expect(CLITests.files(in: dir).allSatisfy { !$0.contains(".rgbd-tmp-") }, "\(CLITests.files(in: dir))")
    }

    /// `register -o DIR`: a non-empty folder is refused (its files kept); `--overwrite`
    /// replaces an earlier register's folder; a folder holding an input is refused.
    @Test func registerRefusesAFolderItDidNotWrite() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (paths, _, _) = try MarkerCLITests.writeRoom(in: directory + "/in", seed: 9)
        let out = directory + "/reg"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: out + "/notes.txt"))
        let refused = try CLITests.run(["register"] + paths + ["--tag-size", "0.16", "-o", out])
        #expect(refused.status == 1 && Self.errorLines(refused).count == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("not empty"), "\(refused.stderr)")
        #expect(CLITests.files(in: out) == ["notes.txt"])
        let fresh = directory + "/reg2"
        let first = try CLITests.run(["register"] + paths + ["--tag-size", "0.16", "-o", fresh])
        #expect(first.status == 0, "\(first.stderr)")
        // The summary goes to stderr, as every command's; stdout stays empty.
        #expect(first.stdout.isEmpty && first.stderr.contains("wrote"), "\(first.stdout)")
        let again = try CLITests.run(["register"] + paths + ["--tag-size", "0.16", "-o", fresh, "--overwrite", "-q"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(CLITests.files(in: fresh) == [".rgbd-written", "report.json", "scene.json"])
        let inputs = try Self.snapshot(directory + "/in")
        let holding = try CLITests.run(["register"] + paths + ["--tag-size", "0.16", "-o", directory + "/in", "--overwrite"])
        #expect(holding.status == 1 && holding.stderr.contains("holds the input"), "\(holding.stderr)")
        #expect(try Self.snapshot(directory + "/in") == inputs)
    }

    /// Two scans with one name: `fuse`, `cloud` and `preview` refuse the run in one line
    /// naming both, before anything is written.
    @Test func scansWithOneNameAreRefusedBeforeAnythingIsWritten() throws {
        let (dir, scan) = try SceneCLITests.write(.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false), name: "room")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/day2", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: scan, toPath: dir + "/day2/room")
        let other = dir + "/day2/room"
        for command in ["fuse", "cloud", "preview"] {
            let out = dir + "/\(command)-out"
            let run = try CLITests.run([command, scan, other, "-o", out, "-q"])
            #expect(run.status == 1, "\(command): exit \(run.status)")
            let errors = Self.errorLines(run)
            #expect(errors.count == 1 && errors[0].contains(scan) && errors[0].contains(other), "\(command): \(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out), "\(command): \(out) was created")
        }
        // A .r3d and a folder of one name collide too (room.r3d and room give room.ply).
        let named = try CLITests.run(["fuse", scan, scan + "/", "-o", dir + "/twice", "-q"])
        #expect(named.status == 1 && !FileManager.default.fileExists(atPath: dir + "/twice"), "\(named.stderr)")
    }

    /// An output path ending in an extension the command does not write is a usage error,
    /// never a folder.
    @Test func unknownOutputExtensionsAreErrors() throws {
        let (dir, scan) = try SceneCLITests.write(.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (command, output) in [("fuse", "m.las"), ("cloud", "m.glb"), ("export", "d.json"), ("preview", "p.png")] {
            var arguments = [command, scan, "-o", dir + "/" + output]
            if command == "export" { arguments += ["--format", "colmap"] }
            let run = try CLITests.run(arguments)
            #expect(run.status == 64, "\(command) -o \(output): exit \(run.status) \(run.stderr)")
            #expect(run.stderr.contains(output) && run.stderr.contains("not an output"), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/" + output))
        }
        // A folder name with a dot is still a folder.
        let run = try CLITests.run(["fuse", scan, "-o", dir + "/run.v2", "-q", "--voxel", "0.05"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir + "/run.v2/scan.ply"))
    }
}
