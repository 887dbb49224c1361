import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// What every scene command says about a path that is not quite a scan: one line naming
/// the path and what is missing, the same for every command.
@Suite(.serialized) struct SceneMessagesCLITests {
    static let commands: [(name: String, extra: [String])] = [
        ("info", []), ("cloud", ["-o", "OUT/x.ply"]), ("preview", ["-o", "OUT/p"]), ("fuse", ["-o", "OUT/x.ply"]),
        ("export", ["--format", "colmap", "-o", "OUT/e"]),
    ]

    static func run(_ command: (name: String, extra: [String]), _ path: String, out: String) throws -> CLITests.Run {
        try CLITests.run([command.name, path] + command.extra.map { $0.replacingOccurrences(of: "OUT", with: out) })
    }

    /// The scene options cloud, fuse and export share (`--min-confidence`, `--every`) are
    /// one option group checked by the library's rules: the same usage error from each,
    /// before the scan is read, and nothing written.
    @Test func theSharedSceneOptionsAreCheckedOnceForEveryCommand() throws {
        let (dir, path) = try SceneCLITests.write(.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for command in Self.commands where ["cloud", "fuse", "export"].contains(command.name) {
            for (option, value, words) in [("--min-confidence", "3", "the confidence levels are 0 (low), 1 (medium) and 2 (high), not 3"),
                                           ("--min-confidence", "highest", "the confidence levels are 0 (low), 1 (medium) and 2 (high), not highest"),
                                           ("--every", "0", "the frame step must be at least 1 (0) (--every)")] {
                let run = try CLITests.run([command.name, path, option, value]
                                           + command.extra.map { $0.replacingOccurrences(of: "OUT", with: dir) })
                #expect(run.status == 64, "\(command.name) \(option) \(value): exit \(run.status)")
                #expect(run.stderr.contains(words), "\(command.name) \(option) \(value): \(run.stderr)")
            }
            let help = try CLITests.run([command.name, "--help"])
            #expect(help.stdout.contains("--min-confidence <level>") && help.stdout.contains("--every <N>"), "\(command.name): \(help.stdout)")
        }
        #expect(CLITests.files(in: dir) == ["scan", "scan.truth.json"])
    }

    /// The other shared groups: the depth filters (cloud, fuse, refine), the confidence
    /// (refine too), the volume's memory (fuse, refine) and the world frame (cloud, fuse,
    /// export): one spelling, one help text and one check each, whichever command takes them.
    @Test func theDepthMemoryAndFrameOptionsAreOneGroupEach() throws {
        let (dir, path) = try SceneCLITests.write(.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let commands: [String: [String]] = [
            "cloud": ["-o", dir + "/x.ply"], "fuse": ["-o", dir + "/x.ply"], "refine": ["-o", dir + "/x.txt"],
            "export": ["--format", "colmap", "-o", dir + "/e"],
        ]
        let cases: [(commands: [String], arguments: [String], words: String)] = [
            (["cloud", "fuse", "refine"], ["--min-depth", "2", "--max-depth", "1"],
             "the depth range needs 0 <= minimum < maximum (2.0, 1.0) (--min-depth, --max-depth)"),
            (["cloud", "fuse", "refine"], ["--flying-pixel-step", "0"],
             "the flying-pixel threshold must be positive and finite (0.0) (--flying-pixel-step)"),
            (["fuse", "refine"], ["--max-memory", "0"], "--max-memory must be a positive number of MB"),
            (["refine"], ["--min-confidence", "3"], "the confidence levels are 0 (low), 1 (medium) and 2 (high), not 3"),
            (["cloud", "fuse", "export"], ["--frame", "up"], "'up'"),
        ]
        for (names, arguments, words) in cases {
            for name in names {
                let run = try CLITests.run([name, path] + arguments + (commands[name] ?? []))
                #expect(run.status == 64, "\(name) \(arguments): exit \(run.status) \(run.stderr)")
                #expect(run.stderr.contains(words), "\(name) \(arguments): \(run.stderr)")
            }
        }
        // One help text per option, whichever command shows it.
        func helpLine(_ command: String, _ option: String) throws -> String {
            let help = try CLITests.run([command, "--help"]).stdout
            // The options' table, not the discussion above it.
            let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                .drop { $0 != "OPTIONS:" }
            guard let start = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix(option + " ") }) else { return "" }
            var text = [lines[start].trimmingCharacters(in: .whitespaces)]
            for line in lines[(start + 1)...] {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.isEmpty || trimmed.hasPrefix("-") { break }
                text.append(trimmed)
            }
            return text.joined(separator: " ")
        }
        for (option, names) in [("--frame", ["cloud", "fuse", "export"]), ("--min-depth", ["cloud", "fuse", "refine"]),
                                ("--flying-pixel-step", ["cloud", "fuse", "refine"]), ("--max-memory", ["fuse", "refine"]),
                                ("--min-confidence", ["cloud", "fuse", "export", "refine"])] {
            let texts = try names.map { try helpLine($0, option) }
            #expect(!texts[0].isEmpty && Set(texts).count == 1, "\(option): \(texts)")
        }
        #expect(CLITests.files(in: dir) == ["scan", "scan.truth.json"])
    }

    /// A Stray folder without odometry.csv: every command names the missing file.
    @Test func aStrayScanWithoutPosesNamesTheMissingFile() throws {
        let (dir, path) = try SceneCLITests.write(.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.removeItem(atPath: path + "/odometry.csv")
        for command in Self.commands {
            let run = try Self.run(command, path, out: dir)
            #expect(run.status == 1, "\(command.name): exit \(run.status)")
            let errors = run.stderr.split(separator: "\n").filter { $0.hasPrefix("rgbd: error:") }
            #expect(errors.count == 1, "\(command.name): \(run.stderr)")
            #expect(errors.first?.contains("\(path): a Stray Scanner scan") == true
                    && errors.first?.contains("without odometry.csv") == true, "\(command.name): \(run.stderr)")
            #expect(!run.stderr.contains("NAME.json"), "\(command.name) speaks of captures: \(run.stderr)")
        }
        #expect(CLITests.files(in: dir) == ["scan", "scan.truth.json"])
    }

    /// A path that does not exist is "no such file or directory" for every command; a
    /// `.r3d` that is no ZIP archive says so (not "no image beside it").
    @Test func missingPathsAndDamagedArchivesAreNamed() throws {
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("not a zip".utf8).write(to: URL(fileURLWithPath: dir + "/notzip.r3d"))
        for command in Self.commands {
            let missing = try Self.run(command, dir + "/nope", out: dir)
            #expect(missing.status == 1 && missing.stderr.contains("\(dir)/nope: no such file or directory"),
                    "\(command.name): \(missing.stderr)")
            let archive = try Self.run(command, dir + "/notzip.r3d", out: dir)
            #expect(archive.status == 1 && archive.stderr.contains("notzip.r3d: not a Record3D .r3d archive"),
                    "\(command.name): \(archive.stderr)")
            #expect(!archive.stderr.contains("image beside"), "\(command.name): \(archive.stderr)")
        }
    }

    /// `info` of a one-frame `.r3d`: each row named once, "1 frame", not "1 frames".
    @Test func infoOfARecord3DArchiveNamesEachRowOnce() throws {
        let scan = SyntheticScan(frameCount: 1, colorWidth: 320, colorHeight: 240)
        let (dir, path) = try SceneCLITests.write(.record3D(.r3d, keys: .new, portrait: false), scan: scan)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try CLITests.run(["info", path])
        #expect(run.status == 0, "\(run.stderr)")
        // Rows are "  key   value", the key column padded: a key ends at two spaces.
        let keys = run.stdout.split(separator: "\n").dropFirst().map {
            String($0.dropFirst(2)).components(separatedBy: "  ").first ?? ""
        }
        #expect(Set(keys).count == keys.count, "a row named twice: \(run.stdout)")
        #expect(!run.stdout.contains("1 frames"), "\(run.stdout)")
        #expect(run.stdout.contains("1 frame sampled"), "\(run.stdout)")
    }
}
