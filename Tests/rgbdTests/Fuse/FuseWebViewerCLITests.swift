import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// `rgbd fuse -o room.html` through the real binary: one file holding three.js (as found,
/// with its licence notice), the very glTF binary `-o room.glb` writes and the cameras'
/// path; without three.js one error line saying what to install, before any fusion, and
/// nothing written. The page drawn by a browser: Tests/python/test_web_viewer.py.
@Suite(.serialized) struct FuseWebViewerCLITests {
    /// A stand-in for three.js in its release layout, with a revision and a `</script>`
    /// that the page must not let end its script element.
    static func fakeThreeJS(in dir: String) throws -> [String: String] {
        let scripts = [
            "build/three.min.js": "var THREE={REVISION:\"999\"};/* the library */ var s='</script>';",
            "examples/js/controls/OrbitControls.js": "THREE.OrbitControls=function(){};/* controls */",
            "examples/js/loaders/GLTFLoader.js": "THREE.GLTFLoader=function(){};/* loader */",
        ]
        for (file, text) in scripts {
            let url = URL(fileURLWithPath: dir + "/" + file)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        return scripts
    }

    /// The text between `start` and the next `</script>`.
    static func element(_ page: String, _ start: String) throws -> String {
        let open = try #require(page.range(of: start))
        let close = try #require(page.range(of: "</script>", range: open.upperBound..<page.endIndex))
        return String(page[open.upperBound..<close.lowerBound])
    }

    @Test func pageHoldsThreeJSTheGLBAndTheCameraPath() throws {
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scan = FuseCLITests.scan()
        try scan.write(layout: FuseCLITests.layout, to: dir + "/scan")
        let scripts = try Self.fakeThreeJS(in: dir + "/three")
        try FileManager.default.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true)
        let run = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/out/room.html", "--voxel", "0.02", "-q"],
                                   environment: ["RGBD_THREE_DIR": dir + "/three"])
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        // One file, nothing beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/out") == ["room.html"])
        let page = try String(contentsOfFile: dir + "/out/room.html", encoding: .utf8)
        #expect(page.hasPrefix("<!DOCTYPE html>") && page.hasSuffix("</html>\n"))
        #expect(page.contains("<title>room (rgbd)</title>"))
        // Nothing is fetched: no src or href attribute, no URL but three.js's home in its notice.
        #expect(!page.contains("src=") && !page.contains("href="))
        #expect(page.components(separatedBy: "https://").count == 2 && page.contains("https://threejs.org"))
        // three.js embedded as found, its "</script" made harmless, after the MIT notice.
        for (file, text) in scripts {
            #expect(page.contains(text.replacingOccurrences(of: "</script", with: "<\\/script")), "\(file)")
            #expect(page.contains("\(file), as found in \(dir)/three"))
        }
        #expect(page.contains("three.js r999, https://threejs.org") && page.contains("The MIT License"))
        let notice = try #require(page.range(of: "The MIT License")), library = try #require(page.range(of: "the library"))
        #expect(notice.lowerBound < library.lowerBound)
        // The surface: byte for byte the glTF binary -o room.glb writes.
        let glbRun = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/room.glb", "--voxel", "0.02", "-q"])
        #expect(glbRun.status == 0, "\(glbRun.stderr)")
        let glb = try Data(contentsOf: URL(fileURLWithPath: dir + "/room.glb"))
        let base64 = try Self.element(page, "<script type=\"application/octet-stream\" id=\"rgbd-glb\">")
        let embedded = try #require(Data(base64Encoded: base64, options: .ignoreUnknownCharacters))
        #expect(glb.count > 100_000 && embedded == glb, "\(embedded.count) bytes embedded, \(glb.count) in the .glb")
        // The camera path: each frame's recorded position (a gravity-aligned world: glTF's axes as they are).
        let json = try Self.element(page, "<script type=\"application/json\" id=\"rgbd-camera-path\">")
        let values = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [Double])
        let poses = scan.truth(for: FuseCLITests.layout).recordedPoses
        #expect(values.count == 3 * poses.count && poses.count == 12)
        for (i, pose) in poses.enumerated() where 3 * i + 2 < values.count {
            let p = SIMD3(values[3 * i], values[3 * i + 1], values[3 * i + 2])
            #expect(((p - pose.translation) * (p - pose.translation)).sum().squareRoot() < 2e-4, "frame \(i): \(p) against \(pose.translation)")
        }
    }

    static let system = "/usr/share/javascript/three"

    /// Debian's libjs-three (which Scripts/bootstrap.sh installs): the real library is
    /// embedded, the loader too. Skipped where it is not installed.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["RGBD_THREE_DIR"] == nil
                   && FileManager.default.fileExists(atPath: system + "/build/three.min.js"),
                   "Debian's libjs-three is not installed (or RGBD_THREE_DIR names another three.js)"))
    func pageEmbedsTheSystemsThreeJS() throws {
        let system = Self.system
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FuseCLITests.scan().write(layout: FuseCLITests.layout, to: dir + "/scan")
        let run = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/room.html", "--voxel", "0.04", "-q"])
        #expect(run.status == 0, "\(run.stderr)")
        let page = try Data(contentsOf: URL(fileURLWithPath: dir + "/room.html"))
        let library = try Data(contentsOf: URL(fileURLWithPath: system + "/build/three.min.js"))
        let loader = try Data(contentsOf: URL(fileURLWithPath: system + "/examples/js/loaders/GLTFLoader.js"))
        #expect(page.range(of: library) != nil && page.range(of: loader) != nil)
        #expect(page.range(of: Data("three.js r".utf8)) != nil && page.count > library.count + loader.count)
    }

    /// Without three.js: one line naming what to install, exit 1, before the scan is fused
    /// (no summary), nothing written; a folder lacking one file names it.
    @Test func refusesWithoutThreeJS() throws {
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FuseCLITests.scan().write(layout: FuseCLITests.layout, to: dir + "/scan")
        try FileManager.default.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true)
        let absent = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/out/room.html", "--voxel", "0.04"],
                                      environment: ["RGBD_THREE_DIR": dir + "/no-such-folder"])
        #expect(absent.status == 1)
        let lines = absent.stderr.split(separator: "\n")
        #expect(lines.count == 1 && absent.stderr.contains("three.js") && absent.stderr.contains("libjs-three")
                && absent.stderr.contains("RGBD_THREE_DIR=\(dir)/no-such-folder has no build/three.min.js"), "\(absent.stderr)")
        #expect(!absent.stderr.contains("frames"), "nothing fused: \(absent.stderr)")
        _ = try Self.fakeThreeJS(in: dir + "/partial")
        try FileManager.default.removeItem(atPath: dir + "/partial/examples/js/loaders/GLTFLoader.js")
        let partial = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/out/room.html", "--voxel", "0.04", "-q"],
                                       environment: ["RGBD_THREE_DIR": dir + "/partial"])
        #expect(partial.status == 1 && partial.stderr.contains("has no examples/js/loaders/GLTFLoader.js"), "\(partial.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/out").isEmpty)
        // Other formats do not need it.
        let glb = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/out/room.glb", "--voxel", "0.04", "-q"],
                                   environment: ["RGBD_THREE_DIR": dir + "/no-such-folder"])
        #expect(glb.status == 0, "\(glb.stderr)")
        // --cloud is for PLY only.
        let cloud = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/out/room2.html", "--cloud"])
        #expect(cloud.status == 64 && cloud.stderr.contains("--cloud writes PLY"), "\(cloud.stderr)")
    }
}

/// A textured OBJ writes `NAME.mtl` and `NAME.jpg` beside `NAME.obj`, files the user did
/// not name: one of the user's under such a name is never replaced (one line naming it,
/// exit 1, nothing written); the files an earlier rgbd run wrote there are.
@Suite(.serialized) struct TexturedOBJSideFilesCLITests {
    @Test func aUsersImageBesideTheOBJIsKeptAndNothingIsWritten() throws {
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FuseCLITests.scan().write(layout: FuseCLITests.layout, to: dir + "/scan")
        try FileManager.default.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true)
        let photo = Data("the user's own photo".utf8)
        try photo.write(to: URL(fileURLWithPath: dir + "/out/room.jpg"))
        let refused = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/out/room.obj", "--voxel", "0.02", "-q"])
        #expect(refused.status == 1)
        let lines = refused.stderr.split(separator: "\n")
        #expect(lines.count == 1 && refused.stderr.contains("\(dir)/out/room.jpg") && refused.stderr.contains("rgbd did not write it"),
                "\(refused.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/out/room.jpg")) == photo)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/out") == ["room.jpg"])

        // A .mtl that is not rgbd's: refused alike, kept.
        try FileManager.default.removeItem(atPath: dir + "/out/room.jpg")
        let material = Data("newmtl mine\nmap_Kd room.jpg\n".utf8)
        try material.write(to: URL(fileURLWithPath: dir + "/out/room.mtl"))
        let refusedMTL = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/out/room.obj", "--voxel", "0.02", "-q"])
        #expect(refusedMTL.status == 1 && refusedMTL.stderr.contains("\(dir)/out/room.mtl"), "\(refusedMTL.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/out/room.mtl")) == material)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/out") == ["room.mtl"])

        // What rgbd wrote is replaced by the next run; a vertex-colored OBJ writes nothing beside itself.
        try FileManager.default.removeItem(atPath: dir + "/out/room.mtl")
        for _ in 0..<2 {
            let run = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/out/room.obj", "--voxel", "0.02", "-q"])
            #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/out").sorted() == ["room.jpg", "room.mtl", "room.obj"])
        try photo.write(to: URL(fileURLWithPath: dir + "/out/plain.jpg"))
        let plain = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/out/plain.obj", "--voxel", "0.02", "--texture-size", "0", "-q"])
        #expect(plain.status == 0 && plain.stderr.isEmpty, "\(plain.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/out/plain.jpg")) == photo)
    }
}
