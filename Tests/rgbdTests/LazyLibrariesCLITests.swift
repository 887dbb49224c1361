import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// FFmpeg's libraries are loaded when the first video is opened, not at every start of
/// `rgbd` (linked, they and their ~130 dependencies cost every command tens of
/// milliseconds and megabytes before main); without them, a scan's video is one clear
/// error and the rest of rgbd works. Through the real binary.
@Suite(.serialized) struct LazyLibrariesCLITests {
    static let scan = SyntheticScan(frameCount: 3, colorWidth: 160, colorHeight: 120)

    #if os(Linux)
    /// The shared libraries the dynamic loader opened during a run (glibc's `LD_DEBUG=files`
    /// lists each one as `file=NAME [0];  needed by …` or `… dynamically loaded by …`; into
    /// files, `LD_DEBUG_OUTPUT`, rather than onto stderr, whose pipe it would fill).
    static func loadedLibraries(_ arguments: [String]) throws -> (run: CLITests.Run, libraries: [String]) {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try CLITests.run(arguments, environment: ["LD_DEBUG": "files", "LD_DEBUG_OUTPUT": directory + "/ld"])
        var libraries: [String] = []
        for name in CLITests.files(in: directory) {
            let text = try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
            libraries += text.split(separator: "\n").compactMap { line -> String? in
                guard let start = line.range(of: "file=") else { return nil }
                return String(line[start.upperBound...].prefix { $0 != " " })
            }
        }
        return (run, libraries)
    }

    /// A photo capture, `--version` and `--help` load none of FFmpeg's libraries; a Stray
    /// scan's video loads them (so the check sees them when they are there).
    @Test func ffmpegIsLoadedOnlyForVideos() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try CLITests.writeCapture(in: directory, stem: "shot")
        let ffmpeg = ["libavformat", "libavcodec", "libswscale", "libavutil"]
        for arguments in [["--version"], ["--help"], ["info", capture.json], ["rectify", capture.json, "-o", directory + "/out", "-q"]] {
            let (run, libraries) = try Self.loadedLibraries(arguments)
            #expect(run.status == 0, "\(arguments): \(run.stderr.suffix(500))")
            #expect(libraries.contains { $0.hasPrefix("libswiftCore") }, "LD_DEBUG listed nothing: \(run.stderr.prefix(300))")
            let loaded = libraries.filter { name in ffmpeg.contains { name.hasPrefix($0) } }
            #expect(loaded.isEmpty, "\(arguments) loaded \(loaded)")
            // Linked, FFmpeg brought ~100 more (158 in all); what is left is rgbd's own few dozen.
            #expect(Set(libraries).count < 100, "\(arguments) loaded \(Set(libraries).count) libraries")
        }
        let path = directory + "/scan"
        try Self.scan.write(layout: .stray(odometry: .v15, depth: .png, video: .hevc, imuInG: true), to: path)
        let (run, libraries) = try Self.loadedLibraries(["info", path])
        #expect(run.status == 0, "\(run.stderr.suffix(500))")
        for name in ffmpeg {
            #expect(libraries.contains { $0.hasPrefix(name) }, "reading the video did not load \(name)")
        }
    }
    #endif

    /// Without FFmpeg's libraries (`RGBD_FFMPEG_DIR` pointing at an empty directory), a
    /// scan's video is one line naming the file, what is missing and how to install it;
    /// exit 1, nothing written; photo captures still work.
    @Test func withoutFFmpegAVideoIsOneClearError() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let empty = directory + "/no-ffmpeg"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let path = directory + "/scan"
        try Self.scan.write(layout: .stray(odometry: .v15, depth: .png, video: .hevc, imuInG: true), to: path)
        let environment = ["RGBD_FFMPEG_DIR": empty]

        let cloud = try CLITests.run(["cloud", path, "-o", directory + "/scene.ply"], environment: environment)
        #expect(cloud.status == 1, "\(cloud.stderr)")
        let lines = cloud.stderr.split(separator: "\n").filter { $0.contains("FFmpeg") }
        #expect(lines.count == 1, "\(cloud.stderr)")
        let line = try #require(lines.first)
        #expect(line.contains("rgb.mp4: reading scan videos needs FFmpeg's libraries ("), "\(line)")
        #expect(line.contains(empty + "/libavutil."), "the library tried is not named: \(line)")
        #expect(line.contains("install them with Scripts/bootstrap.sh"), "\(line)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/scene.ply"))

        let info = try CLITests.run(["info", path], environment: environment)
        #expect(info.status == 1 && info.stderr.contains("needs FFmpeg's libraries"), "\(info.status) \(info.stderr)")

        let capture = try CLITests.writeCapture(in: directory, stem: "shot")
        let rectify = try CLITests.run(["rectify", capture.json, "-o", directory + "/out", "-q"], environment: environment)
        #expect(rectify.status == 0, "\(rectify.stderr)")
    }

    /// A HEIC photo's tiles are decoded by FFmpeg's HEVC decoder when its libraries load,
    /// and by libde265 when they do not: the same color image either way, exit 0.
    @Test func heicDecodesWithAndWithoutFFmpeg() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let empty = directory + "/no-ffmpeg"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let heic = Path.join(PortraitCLITests.fixtures, "portrait.heic")
        var colors: [[UInt8]] = []
        for (name, environment) in [("with", [String: String]()), ("without", ["RGBD_FFMPEG_DIR": empty])] {
            let out = directory + "/" + name
            let run = try CLITests.run(["rectify", heic, "-o", out, "-q"], environment: environment)
            #expect(run.status == 0, "\(name) FFmpeg: \(run.stderr)")
            colors.append(try PNGCodec.decodeRGB(try FileSystem.readFile(Path.join(out, "portrait.color.png"))).samples)
        }
        #expect(colors.count == 2 && !colors[0].isEmpty)
        let same = colors.count == 2 && colors[0] == colors[1]
        #expect(same, "the color images differ with and without FFmpeg")
    }

    /// PROJ is loaded only for `--crs`: a geotagged capture's cloud in a UTM zone works
    /// (and, on Linux, loads libproj, which `info` and a cloud without `--crs` do not);
    /// without the library (`RGBD_PROJ_DIR` at an empty directory) `--crs` is one clear
    /// line, exit 1, nothing written, and the rest still works.
    @Test func projIsLoadedOnlyForCRS() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let json = try GeoCLITests.writeTilted(in: directory, stem: "geo")
        let crs = ["--frame", "enu", "--crs", "EPSG:32756"]
        #if os(Linux)
        for (arguments, expected) in [(["info", json], false), (["cloud", json, "-o", directory + "/a.ply"], false),
                                      (["cloud", json, "-o", directory + "/b.las"] + crs, true)] {
            let (run, libraries) = try Self.loadedLibraries(arguments)
            #expect(run.status == 0, "\(arguments): \(run.stderr.suffix(500))")
            #expect(libraries.contains { $0.hasPrefix("libproj") } == expected, "\(arguments): libproj loaded \(!expected)")
        }
        #endif
        let empty = directory + "/no-proj"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let environment = ["RGBD_PROJ_DIR": empty]
        let run = try CLITests.run(["cloud", json, "-o", directory + "/c.las"] + crs, environment: environment)
        #expect(run.status == 1, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n").filter { $0.contains("PROJ") }
        #expect(lines.count == 1, "\(run.stderr)")
        #expect(lines.first?.contains("the coordinate system EPSG:32756 needs PROJ's library (") == true, "\(run.stderr)")
        #expect(lines.first?.hasSuffix("(--crs)") == true, "\(run.stderr)")
        #expect(lines.first?.contains("install it with Scripts/bootstrap.sh") == true, "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/c.las"))
        let plain = try CLITests.run(["cloud", json, "-o", directory + "/d.ply", "--frame", "enu"], environment: environment)
        #expect(plain.status == 0, "\(plain.stderr)")
    }

    #if os(Linux)
    /// A library under the unversioned name whose major version differs from the headers'
    /// (whose structs rgbd was compiled against) is refused, not called.
    @Test func aLibraryOfAnotherVersionIsRefused() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let libraries = directory + "/ffmpeg"
        try FileManager.default.createDirectory(atPath: libraries, withIntermediateDirectories: true)
        // The real libavutil under its versioned name, and under libswscale's unversioned
        // name a library that is not libswscale (it has no swscale_version).
        let system = try #require(Self.systemLibrary("libavutil.so."), "no libavutil found")
        let name = URL(fileURLWithPath: system).lastPathComponent
        try FileManager.default.createSymbolicLink(atPath: libraries + "/" + name, withDestinationPath: system)
        try FileManager.default.createSymbolicLink(atPath: libraries + "/libswscale.so", withDestinationPath: system)
        let path = directory + "/scan"
        try Self.scan.write(layout: .stray(odometry: .v15, depth: .png, video: .hevc, imuInG: true), to: path)
        let run = try CLITests.run(["info", path], environment: ["RGBD_FFMPEG_DIR": libraries])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains(libraries + "/libswscale.so has no swscale_version: not libswscale"), "\(run.stderr)")
    }

    /// The versioned libavutil (`libavutil.so.57`) of the system's dynamic loader cache.
    static func systemLibrary(_ prefix: String) -> String? {
        for directory in ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            if let name = names.filter({ $0.hasPrefix(prefix) && $0.split(separator: ".").count == 3 }).sorted().first {
                return directory + "/" + name
            }
        }
        return nil
    }
    #endif
}
