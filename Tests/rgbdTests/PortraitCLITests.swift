import Foundation
import Testing
import RGBDKit

/// The real `rgbd` binary on Portrait photos (Tests/RGBDKitTests/Fixtures/portrait, made
/// by Tests/python/portrait_files.py: planes at 1, 1.25 and 2 m, relative accuracy, a matte).
@Suite(.serialized) struct PortraitCLITests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("RGBDKitTests/Fixtures/portrait").path

    @Test(arguments: ["portrait.heic", "portrait.jpg"])
    func rectifyWithoutJSON(name: String) throws {
        let out = try CLITests.temporaryDirectory()
        let run = try CLITests.run(["rectify", Path.join(Self.fixtures, name), "-o", out, "-q"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(CLITests.files(in: out) == ["portrait.color.png", "portrait.depth.png", "portrait.depth.tiff",
                                            "portrait.intrinsics.json", "portrait.matte.png"])
        let sidecar = String(decoding: try FileSystem.readFile(Path.join(out, "portrait.intrinsics.json")), as: UTF8.self)
        #expect(sidecar.contains("\"depth_accuracy\": \"relative\""))
        let depth = try TIFFCodec.readFloat(path: Path.join(out, "portrait.depth.tiff"))
        #expect((depth.width, depth.height) == (80, 60))
        // The planes' depths (exact from the lossless HEIC; the JPEG's depth image is lossy).
        let tolerance: Float = name.hasSuffix("heic") ? 1e-6 : 0.01
        let near = depth.samples.filter { v in [1, 1.25, 2].contains { abs(v - $0) <= $0 * tolerance } }
        #expect(Double(near.count) > 0.8 * Double(depth.samples.count))
    }

    @Test func infoCloudAndPreview() throws {
        let heic = Path.join(Self.fixtures, "portrait.heic")
        let info = try CLITests.run(["info", heic, "--json"])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("\"lens_distortion_lookup_table\": [0.0, "))
        #expect(info.stdout.contains("\"origin\": \"portrait_xmp\""))
        let out = try CLITests.temporaryDirectory()
        let cloud = try CLITests.run(["cloud", heic, "-o", Path.join(out, "p.ply")])
        #expect(cloud.status == 0, "\(cloud.stderr)")
        #expect(cloud.stderr.components(separatedBy: "Accuracy = relative").count == 2)
        let preview = try CLITests.run(["preview", heic, "-o", out, "--width", "600"])
        #expect(preview.status == 0, "\(preview.stderr)")
        #expect(FileManager.default.fileExists(atPath: Path.join(out, "portrait.preview.png")))
    }

    @Test func directoryPicksUpPhotosWithoutJSON() throws {
        let input = try CLITests.temporaryDirectory(), out = try CLITests.temporaryDirectory()
        let photo = try FileSystem.readFile(Path.join(Self.fixtures, "portrait.heic"))
        #expect(FileManager.default.createFile(atPath: Path.join(input, "IMG_0001.HEIC"), contents: Data(photo)))
        // A JPEG without depth: the primary image of the Portrait JPEG alone.
        let jpeg = try FileSystem.readFile(Path.join(Self.fixtures, "portrait.jpg"))
        let plain = try JPEGCodec.encode(JPEGCodec.decodeRGB(jpeg))
        #expect(FileManager.default.createFile(atPath: Path.join(input, "IMG_0002.JPG"), contents: Data(plain)))
        let run = try CLITests.run(["rectify", input, "-o", out, "-q"])
        #expect(run.status == 1)
        let lines = run.stderr.split(separator: "\n").filter { $0.contains("IMG_0002.JPG") }
        #expect(lines == ["rgbd: error: \(Path.join(input, "IMG_0002.JPG")): holds no depth image"])
        #expect(CLITests.files(in: out).contains("IMG_0001.depth.tiff"))
        #expect(!CLITests.files(in: out).contains { $0.hasPrefix("IMG_0002") })
    }

    /// A photo without depth fails before anything is written: the output directory (and
    /// its missing parent) is not created. A batch with one good capture still creates it.
    @Test func failedRectifyLeavesNoOutputDirectory() throws {
        let input = try CLITests.temporaryDirectory()
        let jpeg = try FileSystem.readFile(Path.join(Self.fixtures, "portrait.jpg"))
        let plain = Path.join(input, "IMG_0002.JPG")
        #expect(FileManager.default.createFile(atPath: plain, contents: Data(try JPEGCodec.encode(JPEGCodec.decodeRGB(jpeg)))))
        let parent = Path.join(input, "new"), out = Path.join(parent, "out")
        for alignment in [[], ["--align-to", "depth"], ["--align-to", "color"]] {
            let run = try CLITests.run(["rectify", plain, "-o", out, "-q"] + alignment)
            #expect(run.status == 1)
            #expect(run.stderr.contains("IMG_0002.JPG: holds no depth image"), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: parent), "\(alignment)")
        }
        let good = Path.join(input, "IMG_0001.HEIC")
        #expect(FileManager.default.createFile(atPath: good, contents: Data(try FileSystem.readFile(Path.join(Self.fixtures, "portrait.heic")))))
        let batch = try CLITests.run(["rectify", plain, good, "-o", out, "-q"])
        #expect(batch.status == 1)
        #expect(CLITests.files(in: out) == ["IMG_0001.color.png", "IMG_0001.depth.png", "IMG_0001.depth.tiff",
                                            "IMG_0001.intrinsics.json", "IMG_0001.matte.png"])
    }
}
