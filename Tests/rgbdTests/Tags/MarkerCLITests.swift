import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// `rgbd info --tags`, `rgbd register` and `rgbd preview`'s tag overlay, with the real
/// binary on synthetic captures with tags at known poses.
@Suite(.serialized) struct MarkerCLITests {
    static func pose(_ p: SynthPose) -> Pose {
        Pose(row0: p.rotation.r0, row1: p.rotation.r1, row2: p.rotation.r2, translation: p.translation)
    }

    /// Writes the room's captures (1344×1008, depth 512×384) as `cam0…`, with `depthScale`.
    static func writeRoom(in directory: String, seed: UInt64, depthScale: Double = 1)
        throws -> (paths: [String], room: SyntheticTagScene, cameras: [SynthPose]) {
        let (room, cameras) = SyntheticTagScene.room(seed: seed, tags: 3, cameras: 3)
        var paths: [String] = []
        for (i, camera) in cameras.enumerated() {
            var capture = room.capture(camera: camera, colorWidth: 1344, colorHeight: 1008, depthWidth: 512, depthHeight: 384)
            capture.depthNoise = 0.002
            capture.depthScale = depthScale
            paths.append(try capture.write(to: directory, stem: "cam\(i)", jpegQuality: 92).json)
        }
        return (paths, room, cameras)
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    static func matrix(_ value: Any?) throws -> Pose {
        let m = try #require(value as? [Double])
        try #require(m.count == 16)
        return Pose(row0: SIMD3(m[0], m[1], m[2]), row1: SIMD3(m[4], m[5], m[6]), row2: SIMD3(m[8], m[9], m[10]),
                    translation: SIMD3(m[3], m[7], m[11]))
    }

    /// `info --tags --json` lists the tags each capture sees with poses near the truth;
    /// a size given in centimeters warns on stderr.
    @Test func infoTags() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (paths, room, cameras) = try Self.writeRoom(in: directory, seed: 5)
        let run = try CLITests.run(["info", paths[0], "--tags", "--tag-size", "0.16", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
        let tags = try #require(entries.first?["tags"] as? [String: Any])
        let found = try #require(tags["found"] as? [[String: Any]])
        #expect(!found.isEmpty)
        for tag in found {
            let id = try #require(tag["id"] as? Int)
            let truthTag = try #require(room.tags.first { $0.id == id })
            let truth = Self.pose(cameras[0].inverse * truthTag.pose)
            let measured = try Self.matrix(tag["tag_to_camera"])
            let d = measured.translation - truth.translation
            #expect((d * d).sum().squareRoot() < 0.01, "tag \(id): \(d)")
        }
        let text = try CLITests.run(["info", paths[0], "--tags", "--tag-size", "16"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("tags      tag36h11"))
        #expect(text.stderr.contains("warning") && text.stderr.contains("meters"), "\(text.stderr)")
    }

    /// `register` places the captures (relative poses near the truth), leaves out a capture
    /// sharing no tag (exit 1, one warning naming it), writes a scene `info` and `cloud` read.
    @Test func registerWritesAScene() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (paths, _, cameras) = try Self.writeRoom(in: directory, seed: 9)
        var lonelyScene = SyntheticScene()
        lonelyScene.tags = [try #require(SyntheticTag(id: 200, size: 0.16, pose: SyntheticTag.pose(center: SIMD3(0, 0, 2))))]
        let lonely = try SyntheticCapture(colorWidth: 1344, colorHeight: 1008, depthWidth: 512, depthHeight: 384, scene: lonelyScene)
            .write(to: directory, stem: "lonely").json
        let out = directory + "/registered"
        let run = try CLITests.run(["register"] + paths + [lonely, "--tag-size", "0.16", "-o", out])
        #expect(run.status == 1)
        #expect(run.stderr.contains("lonely.json") && run.stderr.contains("shares no tag"), "\(run.stderr)")
        let scene = try Self.object(String(contentsOfFile: out + "/scene.json", encoding: .utf8))
        let frames = try #require(scene["frames"] as? [[String: Any]])
        #expect(frames.count == 3)
        let c0 = try Self.matrix(frames[0]["camera_to_world"]), c1 = try Self.matrix(frames[1]["camera_to_world"])
        let relative = c0.inverse.composed(with: c1)
        let truth = Self.pose(cameras[0]).inverse.composed(with: Self.pose(cameras[1]))
        let d = relative.translation - truth.translation
        #expect((d * d).sum().squareRoot() < 0.01, "\(d)")  // 1344×1008: the goal is measured at higher resolution (MarkerRegistrationTests)
        let report = try Self.object(String(contentsOfFile: out + "/report.json", encoding: .utf8))
        let entries = try #require(report["captures"] as? [[String: Any]])
        #expect(entries.map { $0["registered"] as? Bool } == [true, true, true, false])
        #expect((entries[0]["residual_mm"] as? Double).map { $0 < 5 } == true)

        let info = try CLITests.run(["info", out])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("rgbd register"))
        let cloud = try CLITests.run(["cloud", out, "-o", directory + "/room.ply", "--quiet"])
        #expect(cloud.status == 0, "\(cloud.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory + "/room.ply"))

        // A scene whose first pose is scaled (not a rotation): one line naming the file and key.
        let text = try String(contentsOfFile: out + "/scene.json", encoding: .utf8)
        let index = try #require(text.range(of: "\"camera_to_world\": ["))
        let comma = try #require(text[index.upperBound...].firstIndex(of: ","))
        try (text[..<index.upperBound] + "2" + text[comma...]).write(toFile: out + "/scene.json", atomically: true, encoding: .utf8)
        let bad = try CLITests.run(["info", out])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("scene.json") && bad.stderr.contains("frames[0].camera_to_world")
                && bad.stderr.split(separator: "\n").count == 1, "\(bad.stderr)")
    }

    /// Depth off by 1.1 (all captures): `--metric-from-tags` records a factor of 1/1.1
    /// within 0.5 % for each capture, and the registered poses are near the truth (the
    /// factor's 0.5 % along each camera's distance, 0.5°).
    @Test func metricFromTags() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (paths, _, cameras) = try Self.writeRoom(in: directory, seed: 11, depthScale: 1.1)
        let out = directory + "/metric"
        let run = try CLITests.run(["register"] + paths + ["--tag-size", "0.16", "--metric-from-tags", "-o", out])
        #expect(run.status == 0, "\(run.stderr)")
        let scene = try Self.object(String(contentsOfFile: out + "/scene.json", encoding: .utf8))
        let frames = try #require(scene["frames"] as? [[String: Any]])
        for frame in frames {
            let factor = try #require(frame["depth_factor"] as? Double)
            #expect(abs(factor * 1.1 - 1) < 0.005, "factor \(factor)")
        }
        // The poses are right too: each pair's relative pose against the truth, within
        // 5 mm plus what the factor's own 0.5 % allows along each camera's distance
        // (a depth scaled about the camera moves it along its view).
        let poses = try frames.map { try Self.matrix($0["camera_to_world"]) }
        for a in poses.indices { for b in poses.indices where b > a {
            let relative = poses[a].inverse.composed(with: poses[b])
            let truth = Self.pose(cameras[a]).inverse.composed(with: Self.pose(cameras[b]))
            let d = relative.translation - truth.translation
            let reach = 0.005 * ((poses[a].translation * poses[a].translation).sum().squareRoot()
                                 + (poses[b].translation * poses[b].translation).sum().squareRoot())
            #expect((d * d).sum().squareRoot() < 0.005 + reach, "captures \(a), \(b): \(d)")
            let r = relative.inverse.composed(with: truth)
            // 0.5°: at 1344×1008 the room's tags stand nearly in a row, and the turn about
            // the row rests on the tags' own tilts (the goal is measured on wall sets).
            #expect(acos(max(-1, min(1, (r.row0.x + r.row1.y + r.row2.z - 1) / 2))) * 180 / .pi < 0.5)
        } }
        let refused = try CLITests.run(["register"] + paths + ["--metric-from-tags", "-o", out])
        #expect(refused.status == 64 && refused.stderr.contains("--tag-size"))
    }

    /// `rgbd-synth tag-set` (the real generator: tags fixed on a wall, five cameras 1–4 m
    /// away, 1920×1440, depth noise growing with z², lens tables) and `rgbd register` on
    /// it: every capture registered, the median relative pose error against the truth
    /// file within 3 mm and 0.2°; report.json's residual is a number for a capture with
    /// tags to leave out, null with the reason for the one capture placed by one tag.
    @Test func registerAMultiViewSet() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let synth = URL(fileURLWithPath: CLITests.binary).deletingLastPathComponent().appendingPathComponent("rgbd-synth").path
        let generated = try CLITests.run(["tag-set", "-o", directory, "--seed", "21"], executable: synth)
        #expect(generated.status == 0, "\(generated.stderr)")
        let truth = try Self.object(String(contentsOfFile: directory + "/cam.set.truth.json", encoding: .utf8))
        let cameras = try #require(truth["cameras"] as? [[String: Any]])
        #expect(cameras.count == 5)
        let paths = try cameras.map { directory + "/" + (try #require($0["capture"] as? String)) }
        let out = directory + "/registered"
        let run = try CLITests.run(["register"] + paths + ["--tag-size", "0.16", "-o", out])
        #expect(run.status == 0, "\(run.stderr)")
        let scene = try Self.object(String(contentsOfFile: out + "/scene.json", encoding: .utf8))
        #expect(scene["origin_tag"] as? Int == truth["origin_tag"] as? Int)
        let frames = try #require(scene["frames"] as? [[String: Any]])
        try #require(frames.count == cameras.count)
        let estimated = try frames.map { try Self.matrix($0["camera_to_world"]) }
        let real = try cameras.map { try Self.matrix($0["camera_to_origin_tag"]) }
        var mm: [Double] = [], deg: [Double] = []
        for a in real.indices { for b in real.indices where b > a {
            let e = estimated[a].inverse.composed(with: estimated[b]), t = real[a].inverse.composed(with: real[b])
            let d = e.translation - t.translation
            mm.append((d * d).sum().squareRoot() * 1000)
            let r = e.inverse.composed(with: t)
            deg.append(acos(max(-1, min(1, (r.row0.x + r.row1.y + r.row2.z - 1) / 2))) * 180 / .pi)
        } }
        let median = { (v: [Double]) in v.sorted()[v.count / 2] }
        #expect(median(mm) <= 3 && median(deg) <= 0.2, "\(mm) mm, \(deg)°")
        let report = try Self.object(String(contentsOfFile: out + "/report.json", encoding: .utf8))
        let entries = try #require(report["captures"] as? [[String: Any]])
        var unchecked = 0
        for entry in entries {
            let used = try #require(entry["tags_used"] as? [Int])
            if used.count == 1 {
                unchecked += 1
                #expect(entry["residual_mm"] is NSNull && entry["residual_deg"] is NSNull, "\(entry)")
                #expect((entry["residual_note"] as? String)?.contains("one tag") == true)
            } else {
                #expect((entry["residual_mm"] as? Double).map { $0 > 0 } == true, "\(entry)")
                #expect((entry["residual_tags_left_out"] as? Int).map { $0 >= 1 } == true)
            }
        }
        #expect(unchecked == 1)   // seed 21: the camera 1.5 m away sees tag 1 alone
        #expect(run.stderr.contains("not checked (one tag places it)"), "\(run.stderr)")
    }

    /// The preview of a capture without tags is the same with and without tag search; with a
    /// tag the rectified panel gains the overlay.
    @Test func previewOverlay() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let plain = try CLITests.writeCapture(in: directory, stem: "plain").json
        let a = try CLITests.run(["preview", plain, "-o", directory + "/a", "--quiet"])
        let b = try CLITests.run(["preview", plain, "-o", directory + "/b", "--quiet", "--no-tags"])
        #expect(a.status == 0 && b.status == 0, "\(a.stderr) \(b.stderr)")
        let pa = try Data(contentsOf: URL(fileURLWithPath: directory + "/a/plain.preview.png"))
        let pb = try Data(contentsOf: URL(fileURLWithPath: directory + "/b/plain.preview.png"))
        #expect(pa == pb)
        var scene = SyntheticScene()
        scene.tags = [try #require(SyntheticTag(id: 1, size: 0.3, pose: SyntheticTag.pose(center: SIMD3(0.2, 0, 1.5))))]
        let tagged = try SyntheticCapture(colorWidth: 1344, colorHeight: 1008, depthWidth: 512, depthHeight: 384, scene: scene)
            .write(to: directory, stem: "tagged").json
        let c = try CLITests.run(["preview", tagged, "-o", directory + "/c", "--quiet"])
        let d = try CLITests.run(["preview", tagged, "-o", directory + "/d", "--quiet", "--no-tags"])
        #expect(c.status == 0 && d.status == 0)
        let pc = try Data(contentsOf: URL(fileURLWithPath: directory + "/c/tagged.preview.png"))
        let pd = try Data(contentsOf: URL(fileURLWithPath: directory + "/d/tagged.preview.png"))
        #expect(pc != pd)
    }
}

extension MarkerCLITests {
    /// `--frame level` on a registered scene: placed by the first capture whose photo has an
    /// accelerometer vector (here the second: the first has no EXIF), the room's true down
    /// (+y of the room, in the origin tag's frame) becomes −z within 0.3°; with no photo
    /// carrying gravity, one line naming the scene and nothing written.
    @Test func registeredSceneLevelFrameFromThePhotos() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (room, cameras) = SyntheticTagScene.room(seed: 9, tags: 3, cameras: 3)
        var withGravity: [String] = [], without: [String] = []
        for (i, camera) in cameras.enumerated() {
            var capture = room.capture(camera: camera, colorWidth: 1344, colorHeight: 1008, depthWidth: 512, depthHeight: 384)
            capture.depthNoise = 0.002
            let plain = try capture.write(to: directory + "/plain", stem: "cam\(i)", jpegQuality: 92).json
            if i > 0 {
                var exif = SyntheticEXIF()
                exif.acceleration = SyntheticEXIF.acceleration(down: camera.rotation.r1)   // the room's +y, in the camera
                capture.exif = exif
            }
            withGravity.append(try capture.write(to: directory + "/exif", stem: "cam\(i)", jpegQuality: 92).json)
            without.append(plain)
        }
        let out = directory + "/registered", bare = directory + "/bare"
        let run = try CLITests.run(["register"] + withGravity + ["--tag-size", "0.16", "-o", out])
        let runBare = try CLITests.run(["register"] + without + ["--tag-size", "0.16", "-o", bare])
        #expect(run.status == 0 && runBare.status == 0, "\(run.stderr) \(runBare.stderr)")
        let cloud = try CLITests.run(["cloud", out, "-o", directory + "/level.ply", "--frame", "level", "-q"])
        #expect(cloud.status == 0, "\(cloud.stderr)")
        let header = try String(contentsOfFile: directory + "/level.ply", encoding: .isoLatin1)
            .components(separatedBy: "end_header")[0].split(separator: "\n")
        #expect(header.contains { $0.contains("from capture") && $0.contains("cam1.json") }, "\(header)")
        let line = try #require(header.first { $0.hasPrefix("comment transform from the source frame (row-major 4x4) ") })
        let m = line.split(separator: " ").suffix(16).compactMap { Double($0) }
        try #require(m.count == 16)
        // The origin tag (the lowest ID) is the registered world: the room's down in it is
        // row 1 of the tag's rotation (tag-to-room).
        let origin = try #require(room.tags.min { $0.id < $1.id })
        let down = origin.pose.rotation.r1
        let placed = SIMD3(m[0] * down.x + m[1] * down.y + m[2] * down.z, m[4] * down.x + m[5] * down.y + m[6] * down.z,
                           m[8] * down.x + m[9] * down.y + m[10] * down.z)
        let angle = acos(max(-1, min(1, -placed.z / (placed * placed).sum().squareRoot()))) * 180 / .pi
        #expect(angle < 0.3, "the room's down is \(angle)° from -z")
        let refused = try CLITests.run(["cloud", bare, "-o", directory + "/bare.ply", "--frame", "level", "-q"])
        #expect(refused.status == 1 && refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains(bare) && refused.stderr.contains("gravity"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/bare.ply"))
    }
}
