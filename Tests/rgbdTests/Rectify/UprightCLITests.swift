import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// `rgbd rectify --upright --crop valid` and `rgbd cloud --upright` through the real binary
/// (the geometry itself: OutputGeometryTests).
@Suite(.serialized) struct UprightCLITests {
    /// The intrinsics under `key` (top level: nil) of a sidecar.
    static func intrinsics(_ path: String, key: String? = nil) throws -> (Double, Double, Double, Double, Int, Int) {
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        if let key { json = try #require(json[key] as? [String: Any]) }
        let m = try #require(json["intrinsic_matrix"] as? [Double])
        return (m[0], m[4], m[6], m[7], try #require(json["width"] as? Int), try #require(json["height"] as? Int))
    }

    /// A portrait shot (EXIF 6): --upright writes the outputs portrait, with the intrinsics
    /// of the turned grid; without it they stay as stored.
    @Test func rectifyUprightTurnsAPortraitShot() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try CLITests.writeCapture(in: directory, stem: "shot")
        try Data(SyntheticOrientation.tagged(try FileSystem.readFile(capture.image), exif: 6))
            .write(to: URL(fileURLWithPath: capture.image))
        let stored = try CLITests.run(["rectify", capture.json, "-o", directory + "/stored", "-q"])
        #expect(stored.status == 0, "\(stored.stderr)")
        let upright = try CLITests.run(["rectify", capture.json, "-o", directory + "/upright", "--upright", "-q"])
        #expect(upright.status == 0, "\(upright.stderr)")
        let color = try PNGCodec.decodeRGB(FileSystem.readFile(directory + "/upright/shot.color.png"))
        #expect(color.width == 480 && color.height == 640, "\(color.width)×\(color.height)")
        let before = try Self.intrinsics(directory + "/stored/shot.intrinsics.json")
        let after = try Self.intrinsics(directory + "/upright/shot.intrinsics.json")
        // One quarter turn clockwise of a w × h = 160 × 120 depth map: fx' = fy, fy' = fx,
        // cx' = h − 1 − cy, cy' = cx, 120 × 160.
        #expect(after.0 == before.1 && after.1 == before.0)
        #expect(abs(after.2 - (Double(before.5) - 1 - before.3)) < 1e-9 && after.3 == before.2)
        #expect(after.4 == before.5 && after.5 == before.4)

        let cloud = try CLITests.run(["cloud", capture.json, "-o", directory + "/up.ply", "--upright", "-q"])
        #expect(cloud.status == 0 && FileManager.default.fileExists(atPath: directory + "/up.ply"), "\(cloud.stderr)")
    }

    /// --crop valid with a pincushion lens: smaller images, no black pixel, cx and cy
    /// shifted by whole pixels.
    @Test func rectifyCropValidRemovesTheBlackBorder() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let synthetic = SyntheticCapture(colorWidth: 320, colorHeight: 240, depthWidth: 160, depthHeight: 120,
                                         calibration: SyntheticCapture.iPhoneCalibration(cornerMagnification: 0.06))
        let capture = try synthetic.write(to: directory, stem: "shot")
        let run = try CLITests.run(["rectify", capture.json, "-o", directory + "/out", "--crop", "valid", "-q"])
        #expect(run.status == 0, "\(run.stderr)")
        let color = try PNGCodec.decodeRGB(FileSystem.readFile(directory + "/out/shot.color.png"))
        #expect(color.width < 320 && color.height <= 240)
        let black = (0..<(color.width * color.height)).filter { color.samples[3 * $0] == 0 && color.samples[3 * $0 + 1] == 0 && color.samples[3 * $0 + 2] == 0 }
        #expect(black.isEmpty, "\(black.count) black pixels")
        let k = try Self.intrinsics(directory + "/out/shot.intrinsics.json", key: "color")
        #expect(k.4 == color.width && k.5 == color.height)
        let bad = try CLITests.run(["rectify", capture.json, "-o", directory + "/bad", "--crop", "black"])
        #expect(bad.status != 0 && bad.stderr.contains("--crop"), "\(bad.stderr)")
    }
}
