import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// A Stray Scanner scan without its `rgb.mp4` (depth only): the color size K refers to is
/// not recorded, so it is taken from the principal point (a known iPhone video size it
/// fits, else twice it at the depth maps' aspect) and a warning names what was assumed.
/// Through the real binary: `rgbd info` gives K at the true size, `rgbd cloud` puts the
/// points on the room's true surfaces (the depth intrinsics follow from that size).
@Suite(.serialized) struct StrayDepthOnlyCLITests {
    /// The real scans beside the repository (`../shared/data/scans`), when present.
    static let sharedScans: String? = {
        let path = FuzzRegressionTests.repository.deletingLastPathComponent().appendingPathComponent("shared/data/scans").path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }()

    /// Writes a 3-frame Stray scan (9-column odometry: K from `camera_matrix.csv`) with
    /// color frames of `width × height`, removes its video, and checks `rgbd info` and
    /// `rgbd cloud` against the truth. Returns the warnings.
    static func check(width: Int, height: Int) throws -> [String] {
        let layout = SyntheticScan.Layout.stray(odometry: .v9, depth: .png, video: .hevc, imuInG: false)
        var options = SyntheticScan.Options()
        options.videoPreset = "ultrafast"
        let scan = SyntheticScan(frameCount: 3, colorWidth: width, colorHeight: height, options: options)
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/scan"
        try scan.write(layout: layout, to: path)
        try FileManager.default.removeItem(atPath: path + "/rgb.mp4")
        let truth = scan.truth(for: layout)

        let run = try CLITests.run(["info", "--json", path])
        #expect(run.status == 0, "\(width)×\(height): \(run.stderr)")
        let entry = try #require((try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])?.first)
        #expect(entry["frames"] as? Int == 3)
        #expect(entry["color_size"] is NSNull, "a depth-only scene has no color: \(String(describing: entry["color_size"]))")
        let k = try #require(entry["intrinsics"] as? [String: Any])
        #expect(k["width"] as? Int == width && k["height"] as? Int == height, "\(k)")
        #expect(abs((k["cx"] as? Double ?? .nan) - truth.colorCamera.cx) < 1e-6)
        let warnings = (entry["warnings"] as? [String]) ?? []
        #expect(warnings.contains { $0.contains("rgb.mp4: missing") && $0.contains("\(width)×\(height) color frames") },
                "\(warnings)")

        let cloud = try CLITests.run(["cloud", path, "-o", directory + "/scene.ply", "--voxel", "0.01"])
        #expect(cloud.status == 0, "\(width)×\(height): \(cloud.stderr)")
        #expect(cloud.stderr.contains("\(width)×\(height) color frames"), "the warning is printed: \(cloud.stderr)")
        let points = try SceneCLITests.vertices(directory + "/scene.ply")
        #expect(points.count > 2000)
        let off = points.filter { truth.distanceToSurface($0) > 0.009 }.count
        #expect(off == 0, "\(width)×\(height): \(off) of \(points.count) points more than 9 mm from a true surface")
        return warnings
    }

    @Test func vgaCameraMatrix() throws {
        let warnings = try Self.check(width: 640, height: 480)
        #expect(warnings.contains { $0.contains("an iPhone video size") })
    }

    @Test func arkitCameraMatrix() throws {
        let warnings = try Self.check(width: 1920, height: 1440)
        #expect(warnings.contains { $0.contains("an iPhone video size") })
    }

    /// No known size has its centre near (160, 120): twice the principal point is
    /// assumed, and the warning says that no known size fits.
    @Test func unknownSizeIsTwiceThePrincipalPoint() throws {
        let warnings = try Self.check(width: 320, height: 240)
        #expect(warnings.contains { $0.contains("twice the principal point") && $0.contains("no known video size fits") })
    }

    /// The real depth-only scan: its K (cx 962.3, cy 722.4) is ARKit's 1920×1440, and
    /// the depth intrinsics are K scaled to 256×192.
    @Test func realDepthOnlyScan() throws {
        guard let scans = Self.sharedScans else { return }
        let path = scans + "/stray-demo1"
        let run = try CLITests.run(["info", "--json", path])
        #expect(run.status == 0, "\(run.stderr)")
        let entry = try #require((try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])?.first)
        let k = try #require(entry["intrinsics"] as? [String: Any])
        #expect(k["width"] as? Int == 1920 && k["height"] as? Int == 1440, "\(k)")
        #expect(abs((k["cx"] as? Double ?? 0) - 962.2834) < 1e-3 && abs((k["fx"] as? Double ?? 0) - 1333.9379) < 1e-3)
        #expect(((entry["warnings"] as? [String]) ?? []).contains { $0.contains("1920×1440 color frames") })
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cloud = try CLITests.run(["cloud", path, "-o", directory + "/scene.ply", "-q"])
        #expect(cloud.status == 0, "\(cloud.stderr)")
        #expect(try SceneCLITests.vertices(directory + "/scene.ply").count > 1000)
    }
}

extension StrayDepthOnlyCLITests {
    /// A depth-only scan fused to `.glb` and `.obj`: no texture (nothing to take it from),
    /// white vertex colors, the summary line saying why; nothing else written beside.
    @Test func depthOnlyScanKeepsVertexColorsInGLBAndOBJ() throws {
        let layout = SyntheticScan.Layout.stray(odometry: .v9, depth: .png, video: .hevc, imuInG: false)
        var options = SyntheticScan.Options()
        options.videoPreset = "ultrafast"
        let scan = SyntheticScan(frameCount: 3, colorWidth: 640, colorHeight: 480, options: options)
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/scan"
        try scan.write(layout: layout, to: path)
        try FileManager.default.removeItem(atPath: path + "/rgb.mp4")
        for name in ["room.glb", "room.obj"] {
            let run = try CLITests.run(["fuse", path, "-o", directory + "/out/" + name, "--voxel", "0.02"])
            #expect(run.status == 0, "\(name): \(run.stderr)")
            #expect(run.stderr.contains("vertex colors: the scan has no color to texture from"), "\(name): \(run.stderr)")
        }
        let written = try FileManager.default.contentsOfDirectory(atPath: directory + "/out").sorted()
        #expect(written == ["room.glb", "room.obj"], "\(written)")
        let glb = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/out/room.glb")))
        let length = Int(glb[12]) | Int(glb[13]) << 8 | Int(glb[14]) << 16 | Int(glb[15]) << 24
        let json = try #require(try JSONSerialization.jsonObject(with: Data(glb[20..<(20 + length)])) as? [String: Any])
        let primitive = try #require(((json["meshes"] as? [[String: Any]])?.first?["primitives"] as? [[String: Any]])?.first)
        let attributes = try #require(primitive["attributes"] as? [String: Any])
        #expect(attributes["COLOR_0"] != nil && attributes["TEXCOORD_0"] == nil && json["images"] == nil, "\(attributes)")
        let obj = try String(contentsOfFile: directory + "/out/room.obj", encoding: .utf8)
        let colors = obj.split(separator: "\n").filter { $0.hasPrefix("v ") }.prefix(100).map { $0.split(separator: " ").suffix(3).compactMap { Double($0) } }
        #expect(colors.count == 100 && colors.allSatisfy { $0 == [1, 1, 1] }, "white vertices")
    }
}
