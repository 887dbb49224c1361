import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// Everyday use of the commands, what a user meets after the first runs (issue 27, "the
/// second hour"): output places, numbers out of range and wrong shapes, usage errors, an
/// empty cloud, help texts, recursion hints, completions, JSON that is not a capture, reruns.
@Suite(.serialized) struct UsageCLITests {
    typealias CLI = CLITests

    static func occurrences(of text: String, in string: String) -> Int {
        string.components(separatedBy: text).count - 1
    }

    /// A directory of `count` captures.
    static func batch(_ count: Int, in directory: String) throws -> String {
        let folder = directory + "/big"
        for i in 0..<count { _ = try CLI.writeCapture(in: folder, stem: "shot\(i)") }
        return folder
    }

    /// An output place that cannot take the outputs is said once, before the batch,
    /// with a failure status and nothing written.
    @Test func outputPlaceIsCheckedOnce() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let big = try Self.batch(3, in: directory)
        let file = directory + "/afile"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        var places = [(file, "not a directory"), (file + "/sub", "cannot create directory")]
        if FileManager.default.fileExists(atPath: "/proc/self") { places.append(("/proc/nope", "cannot create directory")) }
        for command in ["rectify", "cloud", "preview"] {
            for (place, message) in places {
                let run = try CLI.run([command, big, "-o", place, "-q"])
                #expect(run.status == 1, "\(command) -o \(place): \(run.stderr)")
                #expect(Self.occurrences(of: place, in: run.stderr) == 1, "\(command) -o \(place): \(run.stderr)")
                #expect(Self.occurrences(of: message, in: run.stderr) == 1, "\(command) -o \(place): \(run.stderr)")
            }
        }
        // A single .ply output: its directory is checked.
        let single = try CLI.run(["cloud", big + "/shot0.json", "-o", file + "/one.ply"])
        #expect(single.status == 1 && Self.occurrences(of: "not a directory", in: single.stderr) == 1, "\(single.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "x")
        #expect(CLI.files(in: big).filter { !$0.hasPrefix("shot") }.isEmpty)
        // A directory that does not exist yet is still created, and the batch runs.
        let fresh = try CLI.run(["rectify", big, "-o", directory + "/new/deeper", "-q"])
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(CLI.files(in: directory + "/new/deeper").count == 12)
    }

    /// Negative numbers are values, said to be out of range, not missing.
    @Test func negativeNumbersAreOutOfRange() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try CLI.writeCapture(in: directory, stem: "shot")
        let cases: [([String], String)] = [
            (["cloud", capture.json, "--stride", "-1"], "--stride must be at least 1"),
            (["cloud", capture.json, "--min-depth", "-2"], "--min-depth"),
            (["cloud", capture.json, "--flying-pixel-step", "-0.5"], "must be positive and finite (-0.5) (--flying-pixel-step)"),
            (["rectify", capture.json, "--max-blend-step", "-1"], "--max-blend-step must be between 0 and 1"),
            (["rectify", capture.json, "--max-valid-depth", "-3"], "--max-valid-depth must be a positive number"),
            (["preview", capture.json, "--width", "-5"], "--width must be between"),
            (["preview", capture.json, "--min-depth", "-1"], "--min-depth must be at least 0"),
        ]
        for (arguments, message) in cases {
            let run = try CLI.run(arguments + ["-o", directory + "/out"])
            #expect(run.status == 64, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
            #expect(!run.stderr.contains("Missing value"), "\(arguments): \(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/out"))
    }

    /// A usage error only the inputs reveal shows the subcommand's usage.
    @Test func usageErrorOfARunShowsTheCommandsUsage() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let big = try Self.batch(2, in: directory)
        let run = try CLI.run(["cloud", big, "-o", directory + "/one.ply"])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("a .ply output path takes a single capture"), "\(run.stderr)")
        #expect(run.stderr.contains("Usage: rgbd cloud "), "\(run.stderr)")
        #expect(run.stderr.contains("See 'rgbd cloud --help'"), "\(run.stderr)")
        #expect(!run.stderr.contains("Usage: rgbd <subcommand>"), "\(run.stderr)")
        let image = try CLI.run(["rectify", big, "--image", big + "/shot0.jpg", "-o", directory + "/out"])
        #expect(image.status == 64, "\(image.stderr)")
        #expect(image.stderr.contains("Usage: rgbd rectify "), "\(image.stderr)")
    }

    /// A cloud that a filter leaves empty is written, warned about (capture and
    /// filter named) and counted in the summary.
    @Test func emptyCloudIsSaid() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let big = try Self.batch(2, in: directory)
        let run = try CLI.run(["cloud", big, "-o", directory + "/out", "--min-depth", "500"])
        #expect(run.status == 0, "\(run.stderr)")
        for stem in ["shot0", "shot1"] {
            #expect(run.stderr.contains("warning: \(big)/\(stem).json: ") , "\(run.stderr)")
        }
        #expect(Self.occurrences(of: "holds no point: none of its depths", in: run.stderr) == 2, "\(run.stderr)")
        #expect(run.stderr.contains("--min-depth 500"), "\(run.stderr)")
        #expect(run.stderr.contains("2 of 2 captures done, 0 failed, 2 with an empty output"), "\(run.stderr)")
        // A single capture says it too, even quiet; a cloud with points says nothing.
        let one = try CLI.run(["cloud", big + "/shot0.json", "-o", directory + "/one.ply", "--max-depth", "0.01", "-q"])
        #expect(one.status == 0 && one.stderr.contains("--max-depth 0.01"), "\(one.stderr)")
        #expect(one.stderr.contains("1 of 1 captures done, 0 failed, 1 with an empty output"), "\(one.stderr)")
        let full = try CLI.run(["cloud", big + "/shot0.json", "-o", directory + "/full.ply", "-q"])
        #expect(full.status == 0 && full.stderr.isEmpty, "\(full.stderr)")
    }

    /// `rgbd preview --help` lays its panel list out as a table: every continuation line
    /// of a panel keeps its indentation.
    @Test func previewHelpKeepsThePanelTableIndented() throws {
        let help = try CLI.run(["preview", "--help"])
        #expect(help.status == 0)
        let text = help.stdout
        // The table runs from the blank line after "panels:" to the next blank line.
        guard let start = text.range(of: "panels:\n\n"),
              let end = text.range(of: "\n\n", range: start.upperBound..<text.endIndex) else {
            Issue.record("no panel list in: \(text)")
            return
        }
        let lines = text[start.upperBound..<end.lowerBound].split(separator: "\n")
        #expect(lines.count >= 5)
        for line in lines {
            #expect(line.hasPrefix("  "), "\(line)")
        }
        let starts = lines.filter { !$0.hasPrefix("   ") }.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
        #expect(starts == ["captured color", "rectified color", "rectified depth", "depth over", "point cloud"], "\(starts)")
        #expect(text.contains("rectified depth map"), "\(text)")
    }

    /// Captures only in subfolders: the message says to add -r; with -r they are taken,
    /// each capture's outputs in its subfolder of the output directory.
    @Test func recursionIsHintedAndKeepsSubfolders() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let caps = directory + "/my caps"
        _ = try CLI.writeCapture(in: caps + "/a", stem: "shot")
        _ = try CLI.writeCapture(in: caps + "/b/c", stem: "shot")
        _ = try CLI.writeCapture(in: caps + "/.hidden", stem: "secret")
        let flat = try CLI.run(["rectify", caps, "-o", directory + "/out"])
        #expect(flat.status == 1, "\(flat.stderr)")
        #expect(flat.stderr.contains("no capture in this directory"), "\(flat.stderr)")
        #expect(flat.stderr.contains("add -r (--recursive)"), "\(flat.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/out"))
        let deep = try CLI.run(["rectify", "-r", caps, "-o", directory + "/out"])
        #expect(deep.status == 0, "\(deep.stderr)")
        #expect(CLI.files(in: directory + "/out/a").count == 4)
        #expect(CLI.files(in: directory + "/out/b/c").count == 4)
        #expect(CLI.files(in: directory + "/out") == ["a", "b"])
        #expect(!deep.stderr.contains("warning"), "\(deep.stderr)")
        let cloud = try CLI.run(["cloud", "--recursive", caps, "-o", directory + "/clouds", "-q"])
        #expect(cloud.status == 0, "\(cloud.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory + "/clouds/a/shot.ply"))
        #expect(FileManager.default.fileExists(atPath: directory + "/clouds/b/c/shot.ply"))
        // No hint where there is nothing below either.
        try FileManager.default.createDirectory(atPath: directory + "/void/sub", withIntermediateDirectories: true)
        let void = try CLI.run(["rectify", directory + "/void", "-o", directory + "/out2"])
        #expect(void.status == 1 && !void.stderr.contains("--recursive"), "\(void.stderr)")
        let help = try CLI.run(["rectify", "--help"])
        #expect(help.stdout.contains("-r, --recursive"), "\(help.stdout)")
    }

    /// A JSON file that is not a capture (no calibration or depth key at its top level)
    /// beside captures is ignored without a word; a capture JSON without its photo is
    /// still reported and counted.
    @Test func jsonThatIsNotACaptureIsIgnored() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let folder = directory + "/d"
        let capture = try CLI.writeCapture(in: folder, stem: "shot")
        #expect(FileManager.default.fileExists(atPath: folder + "/shot.truth.json"))
        try Data("{\"note\": \"kitchen\", \"intrinsics\": [1, 2]}".utf8).write(to: URL(fileURLWithPath: folder + "/notes.json"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: folder + "/empty.json"))
        try Data("not json".utf8).write(to: URL(fileURLWithPath: folder + "/broken.json"))
        let quiet = try CLI.run(["rectify", folder, "-o", directory + "/out"])
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(!quiet.stderr.contains("warning"), "\(quiet.stderr)")
        #expect(!quiet.stderr.contains("skipped"), "\(quiet.stderr)")
        // A capture JSON whose photo is missing is still said, and counted.
        try FileManager.default.copyItem(atPath: capture.json, toPath: folder + "/orphan.json")
        try Data("{\"calibrationData\": {}}".utf8).write(to: URL(fileURLWithPath: folder + "/camel.json"))
        let orphan = try CLI.run(["rectify", folder, "-o", directory + "/out2"])
        #expect(orphan.status == 0, "\(orphan.stderr)")
        #expect(orphan.stderr.contains("orphan.json: skipped: no image beside it"), "\(orphan.stderr)")
        #expect(orphan.stderr.contains("camel.json: skipped: no image beside it"), "\(orphan.stderr)")
        #expect(Self.occurrences(of: "warning", in: orphan.stderr) == 2, "\(orphan.stderr)")
        #expect(orphan.stderr.contains("2 JSON files without an image skipped"), "\(orphan.stderr)")
        // A directory with no capture at all still counts every JSON file in its error.
        try FileManager.default.createDirectory(atPath: directory + "/notes", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: folder + "/notes.json", toPath: directory + "/notes/notes.json")
        let none = try CLI.run(["rectify", directory + "/notes", "-o", directory + "/out3"])
        #expect(none.status == 1 && none.stderr.contains("(1 JSON file(s) without an image)"), "\(none.stderr)")
    }

    /// Runs bash with `rgbd --generate-completion-script bash` sourced, in `directory`,
    /// completes the last of `words` (`COMP_WORDS`, `COMP_CWORD`) with the script's
    /// function and returns `COMPREPLY`, one entry a line.
    static func bashCompletions(_ words: [String], in directory: String, script: String) throws -> [String] {
        let line = words.joined(separator: " ")
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let program = """
            source "$1"
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
            COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
            _rgbd rgbd '\(words[words.count - 1])' '\(words[words.count - 2])'
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let run = try CLI.run(["-c", "cd '\(directory)' && { \(program)\n}", "bash", script], executable: "/bin/bash")
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    /// The completion scripts complete file and folder names for the inputs, --image
    /// and -o (bash run for real; zsh and fish by their scripts' text).
    @Test func completionsCompleteFileNames() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try CLI.writeCapture(in: directory + "/caps/sample", stem: "shot")
        let generated = try CLI.run(["--generate-completion-script", "bash"])
        #expect(generated.status == 0)
        let script = directory + "/rgbd.bash"
        try generated.stdout.write(toFile: script, atomically: true, encoding: .utf8)

        for command in ["rectify", "cloud", "preview", "info"] {
            let input = try Self.bashCompletions(["rgbd", command, "caps/sam"], in: directory, script: script)
            #expect(input == ["caps/sample"], "\(command): \(input)")
            let second = try Self.bashCompletions(["rgbd", command, "caps/sample/shot.json", "caps/sample/shot.j"],
                                                  in: directory, script: script)
            #expect(second.contains("caps/sample/shot.jpg") && second.contains("caps/sample/shot.json"), "\(command): \(second)")
            let image = try Self.bashCompletions(["rgbd", command, "caps/sample/shot.json", "--image", "caps/sample/shot.j"],
                                                 in: directory, script: script)
            #expect(image.contains("caps/sample/shot.jpg"), "\(command): \(image)")
        }
        for command in ["rectify", "cloud", "preview"] {
            let output = try Self.bashCompletions(["rgbd", command, "caps", "-o", "caps/sa"], in: directory, script: script)
            #expect(output == ["caps/sample"], "\(command): \(output)")
        }
        // Options still complete as before.
        let options = try Self.bashCompletions(["rgbd", "rectify", "--align-to", ""], in: directory, script: script)
        #expect(options.sorted() == ["color", "depth"], "\(options)")

        let zsh = try CLI.run(["--generate-completion-script", "zsh"])
        #expect(zsh.stdout.contains(":inputs:_files"), "\(zsh.stdout)")
        #expect(zsh.stdout.contains(":image:_files"), "\(zsh.stdout)")
        #expect(zsh.stdout.contains(":output:_files -/"), "\(zsh.stdout)")
        let fish = try CLI.run(["--generate-completion-script", "fish"])
        #expect(fish.stdout.contains("-l 'image' -d 'The photo (JPEG or HEIC), if not the one beside the JSON (one capture only).' -rF"),
                "\(fish.stdout)")
        #expect(fish.stdout.contains(" -ge 1' -F\n"), "\(fish.stdout)")
        #expect(fish.stdout.contains("-rfa '(__rgbd_complete_directories)'"), "\(fish.stdout)")
    }

    /// A photo or depth map whose aspect ratio no crop or rounding explains is an error
    /// naming the file and both shapes, with nothing written; crops to camera shapes
    /// (16:9, square) still work with a warning, and rounding says nothing. `info` still
    /// describes a refused capture and lists the error.
    @Test func wrongShapesAreErrors() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func capture(_ stem: String, color: (Int, Int), depth: (Int, Int)) throws -> (json: String, image: String) {
            let synthetic = SyntheticCapture(colorWidth: color.0, colorHeight: color.1, depthWidth: depth.0, depthHeight: depth.1)
            return try synthetic.write(to: directory + "/" + stem, stem: stem, jpegQuality: 80, supersampling: 1)
        }
        // The issue's shapes, for the 4032×3024 calibration.
        let wrong: [(String, (Int, Int), (Int, Int), String, isPhoto: Bool)] = [
            ("flat", (1344, 100), (256, 192), "1344×100", true),
            ("band", (1344, 1008), (256, 50), "256×50", false),
            ("tall", (1344, 1008), (128, 192), "128×192", false),
            ("upright", (1008, 1300), (256, 192), "1008×1300", true),
        ]
        for (stem, color, depth, shape, isPhoto) in wrong {
            let files = try capture(stem, color: color, depth: depth)
            let named = isPhoto ? files.image : files.json
            for command in ["rectify", "cloud", "preview"] {
                let out = directory + "/out-\(stem)-\(command)"
                let run = try CLI.run([command, files.json, "-o", out])
                #expect(run.status == 1, "\(stem) \(command): \(run.stderr)")
                let line = run.stderr.split(separator: "\n").first { $0.contains(shape) }.map(String.init) ?? ""
                #expect(line.contains(named + ": ") && line.contains("4032×3024"), "\(stem) \(command): \(run.stderr)")
                #expect(line.contains("neither rounding (1 %) nor a crop"), "\(stem) \(command): \(run.stderr)")
                #expect(CLI.files(in: out).isEmpty, "\(stem) \(command): \(CLI.files(in: out))")
            }
            // info describes it, says the error under "errors", on stderr too, status 1.
            let info = try CLI.run(["info", files.json])
            #expect(info.status == 1, "\(stem): \(info.stderr)")
            #expect(info.stdout.contains("reference") && info.stdout.contains("errors"), "\(stem): \(info.stdout)")
            #expect(info.stdout.contains("(rectify, cloud and preview refuse it)"), "\(stem): \(info.stdout)")
            #expect(info.stderr.contains(shape) && info.stderr.contains("4032×3024"), "\(stem): \(info.stderr)")
            let document = try InfoCLITests.document(try CLI.run(["info", "--json", files.json]))
            let entry = try #require(document.first)
            #expect(entry["status"] as? String == "ok")
            let errors = try #require(entry["errors"] as? [String])
            #expect(errors.count == 1 && errors[0].contains(shape), "\(errors)")
        }
        // Crops and rounding.
        let fine: [(String, (Int, Int), (Int, Int), Int)] = [
            ("wide", (1344, 756), (256, 144), 2),    // 16:9 photo and depth map
            ("square", (1008, 1008), (256, 192), 1), // a square photo
            ("rounded", (1346, 1008), (257, 192), 0), // whole pixels, 0.15 % and 0.4 %
        ]
        for (stem, color, depth, warnings) in fine {
            let files = try capture(stem, color: color, depth: depth)
            let run = try CLI.run(["rectify", files.json, "-o", directory + "/out-" + stem])
            #expect(run.status == 0, "\(stem): \(run.stderr)")
            #expect(Self.occurrences(of: "as a crop would", in: run.stderr) == warnings, "\(stem): \(run.stderr)")
            #expect(CLI.files(in: directory + "/out-" + stem).count == 4)
            let info = try CLI.run(["info", files.json])
            #expect(info.status == 0 && !info.stdout.contains("errors"), "\(stem): \(info.stdout)")
        }
    }

    /// Writing into the input folder works again and again: rgbd's own outputs of an
    /// earlier run are not inputs of the capture (its JSON holds its depth), for a single
    /// capture and a batch, and for every command; a depth image the capture does read
    /// is still never written over.
    @Test func rerunningIntoTheInputFolderWorks() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let sample = directory + "/sample"
        let capture = try CLI.writeCapture(in: sample, stem: "shot")
        let inputs = CLI.files(in: sample)
        let json = try Data(contentsOf: URL(fileURLWithPath: capture.json))
        let image = try Data(contentsOf: URL(fileURLWithPath: capture.image))
        for round in 1...2 {
            let run = try CLI.run(["rectify", capture.json, "-o", sample])
            #expect(run.status == 0, "round \(round): \(run.stderr)")
            #expect(!run.stderr.contains("warning"), "round \(round): \(run.stderr)")
        }
        let outputs = ["shot.color.png", "shot.depth.png", "shot.depth.tiff", "shot.intrinsics.json"]
        #expect(CLI.files(in: sample) == (inputs + outputs).sorted())
        for command in ["cloud", "preview"] {
            for round in 1...2 {
                let run = try CLI.run([command, capture.json, "-o", sample, "-q"])
                #expect(run.status == 0, "\(command) round \(round): \(run.stderr)")
            }
        }
        // A batch of the folder into itself, twice: outputs are not captures either.
        _ = try CLI.writeCapture(in: sample, stem: "other")
        for round in 1...2 {
            let run = try CLI.run(["rectify", sample, "-o", sample])
            #expect(run.status == 0, "batch round \(round): \(run.stderr)")
            #expect(!run.stderr.contains("warning") && !run.stderr.contains("skipped"), "batch round \(round): \(run.stderr)")
            #expect(run.stderr.contains("2 of 2 captures done"), "batch round \(round): \(run.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: capture.json)) == json)
        #expect(try Data(contentsOf: URL(fileURLWithPath: capture.image)) == image)
        // The outputs of the second run are the first run's (nothing read from them).
        let again = try CLI.run(["rectify", capture.json, "-o", directory + "/fresh", "-q"])
        #expect(again.status == 0, "\(again.stderr)")
        for name in outputs where name != "shot.intrinsics.json" {
            #expect(try Data(contentsOf: URL(fileURLWithPath: sample + "/" + name))
                    == Data(contentsOf: URL(fileURLWithPath: directory + "/fresh/" + name)), "\(name)")
        }
        // A Portrait photo into its own folder, twice (its depth is in the photo).
        let portraits = directory + "/portraits"
        try FileManager.default.createDirectory(atPath: portraits, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Path.join(PortraitCLITests.fixtures, "portrait.heic"),
                                         toPath: portraits + "/portrait.heic")
        for round in 1...2 {
            let run = try CLI.run(["rectify", portraits + "/portrait.heic", "-o", portraits, "-q"])
            #expect(run.status == 0, "portrait round \(round): \(run.stderr)")
        }
        #expect(CLI.files(in: portraits).count == 6, "\(CLI.files(in: portraits))")
        // A JSON naming its depth image reads it: that one is still never written over.
        let named = directory + "/named"
        try FileManager.default.createDirectory(atPath: named, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: capture.image, toPath: named + "/shot.jpg")
        try FileManager.default.copyItem(atPath: sample + "/shot.depth.tiff", toPath: named + "/shot.depth.tiff")
        var object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        object["depth_data"] = nil
        object["depth_file"] = "shot.depth.tiff"
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: named + "/shot.json"))
        let refused = try CLI.run(["rectify", named + "/shot.json", "-o", named])
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("would overwrite the input \(named)/shot.depth.tiff"), "\(refused.stderr)")
    }
}
