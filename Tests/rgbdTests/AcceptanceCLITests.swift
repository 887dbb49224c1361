import Foundation
import Testing
import RGBDKit

/// `rgbd info` and `rgbd rectify` (the real binary) accept and refuse the same inputs with
/// the same message, because both open captures one way (`CaptureOpening`), and the one
/// content sniffer (`FileFormat`) decides what a file is.
@Suite(.serialized) struct AcceptanceCLITests {
    typealias CLI = CLITests

    /// The error line both commands print for `input`, and their exit statuses.
    static func refusals(_ input: String, in directory: String) throws -> (info: CLI.Run, rectify: CLI.Run) {
        let info = try CLI.run(["info", input])
        let rectify = try CLI.run(["rectify", input, "-o", Path.join(directory, "out"), "-q"])
        return (info, rectify)
    }

    static func errorLine(_ run: CLI.Run) -> String {
        run.stderr.split(separator: "\n").first { $0.hasPrefix("rgbd: error:") }.map(String.init) ?? ""
    }

    /// A JPEG whose header is sound and whose stream stops early: rectify refused it at
    /// decode while info (which never decoded) said nothing. Both refuse it now, with
    /// TurboJPEG's reason.
    @Test func aPhotoThatFailsOnlyAtDecodeIsRefusedByInfoToo() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try CLI.writeCapture(in: directory, stem: "cut")
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: capture.image))
        try jpeg.prefix(jpeg.count * 2 / 3).write(to: URL(fileURLWithPath: capture.image))
        let (info, rectify) = try Self.refusals(capture.json, in: directory)
        #expect(info.status != 0 && rectify.status != 0, "info \(info.status), rectify \(rectify.status)")
        let line = Self.errorLine(info)
        #expect(line.contains("cut.jpg: cannot decode JPEG"), "\(info.stderr)")
        #expect(line == Self.errorLine(rectify), "info: \(info.stderr)\nrectify: \(rectify.stderr)")
    }

    /// A JPEG whose frame header claims 60000×60000 pixels in a few kilobytes.
    @Test func aForgedPhotoSizeIsRefusedByBoth() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try CLI.writeCapture(in: directory, stem: "forged")
        var jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: capture.image)))
        // SOF0 (FF C0): length (2), precision (1), height (2), width (2).
        let sof = try #require((0..<(jpeg.count - 9)).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        for offset in [sof + 5, sof + 7] { jpeg[offset] = 0xEA; jpeg[offset + 1] = 0x60 }  // 60000
        try Data(jpeg).write(to: URL(fileURLWithPath: capture.image))
        let (info, rectify) = try Self.refusals(capture.json, in: directory)
        #expect(info.status != 0 && rectify.status != 0, "info \(info.status), rectify \(rectify.status)")
        let line = Self.errorLine(info)
        #expect(line.contains("forged.jpg: the JPEG claims 60000×60000 pixels"), "\(info.stderr)")
        #expect(line == Self.errorLine(rectify), "info: \(info.stderr)\nrectify: \(rectify.stderr)")
    }

    /// A HEIF whose `ftyp` names `mif1` (the structural brand) as its major brand and does
    /// not list `heic`: libheif decodes it, and so does rgbd, to the same pixels.
    @Test func aHEIFBrandedMif1IsRead() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let original = Path.join(PortraitCLITests.fixtures, "portrait.heic")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: original)))
        #expect(String(decoding: bytes[4..<12], as: UTF8.self) == "ftypheic")
        let size = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        // Major brand mif1; every compatible brand heic becomes miaf.
        bytes.replaceSubrange(8..<12, with: Array("mif1".utf8))
        for i in stride(from: 16, to: size, by: 4) where String(decoding: bytes[i..<(i + 4)], as: UTF8.self) == "heic" {
            bytes.replaceSubrange(i..<(i + 4), with: Array("miaf".utf8))
        }
        let brands = String(decoding: bytes[8..<size], as: UTF8.self)
        #expect(!brands.contains("heic"), "\(brands)")
        let mif1 = Path.join(directory, "branded.heic")
        try Data(bytes).write(to: URL(fileURLWithPath: mif1))
        #expect(FileFormat(bytes: bytes) == .heif)

        let a = Path.join(directory, "a"), b = Path.join(directory, "b")
        let runA = try CLI.run(["rectify", original, "-o", a, "-q"])
        let runB = try CLI.run(["rectify", mif1, "-o", b, "-q"])
        #expect(runA.status == 0 && runB.status == 0, "\(runA.stderr)\n\(runB.stderr)")
        let colorA = try Data(contentsOf: URL(fileURLWithPath: Path.join(a, "portrait.color.png")))
        let colorB = try Data(contentsOf: URL(fileURLWithPath: Path.join(b, "branded.color.png")))
        #expect(colorA == colorB)
        #expect(try CLI.run(["info", mif1]).status == 0)
    }

    /// An empty file named like a photo is an empty photo, not a JSON that names another file.
    @Test func anEmptyHEICIsAnEmptyPhoto() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = Path.join(directory, "x.heic")
        try Data().write(to: URL(fileURLWithPath: path))
        let (info, rectify) = try Self.refusals(path, in: directory)
        for run in [info, rectify] {
            #expect(run.status != 0)
            #expect(Self.errorLine(run) == "rgbd: error: \(path): the file is empty", "\(run.stderr)")
        }
    }

    /// A file that starts with JPEG's SOI marker is a JPEG whatever follows: a broken one
    /// is reported as a JPEG that cannot be read, the same through the CLI and every front.
    @Test func aBrokenJPEGIsAJPEG() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = Path.join(directory, "broken.jpg")
        try Data([0xFF, 0xD8, 0xFE, 0x00, 0x41, 0x42]).write(to: URL(fileURLWithPath: path))
        #expect(FileFormat(bytes: [0xFF, 0xD8, 0xFE, 0x00]) == .jpeg)
        #expect(FileFormat(bytes: [0x50, 0x4B, 0x03, 0x04, 0x14, 0x00]) == .zip)
        #expect(FileFormat(bytes: [0x50, 0x4B, 0x05, 0x06]) == nil)
        let (info, rectify) = try Self.refusals(path, in: directory)
        #expect(info.status != 0 && rectify.status != 0)
        #expect(Self.errorLine(info).hasPrefix("rgbd: error: \(path): "), "\(info.stderr)")
        #expect(!Self.errorLine(info).contains("not a JPEG"), "\(info.stderr)")
        #expect(Self.errorLine(info) == Self.errorLine(rectify))
        do {
            _ = try Capture.load(photo: path)
            Issue.record("a broken JPEG loaded")
        } catch let error as RGBDError {
            #expect("rgbd: error: \(error)" == Self.errorLine(info), "library: \(error)")
        }
    }

    /// The library names the argument an error points at; the command line spells it as
    /// its option, the library's own text spells no front's option.
    @Test func theMissingPhotoIsNamedInTheCallersWords() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try CLI.writeCapture(in: directory, stem: "alone")
        try FileManager.default.removeItem(atPath: capture.image)
        let run = try CLI.run(["rectify", capture.json, "-o", Path.join(directory, "out"), "-q"])
        #expect(run.status != 0)
        #expect(Self.errorLine(run).hasSuffix("give the image explicitly (--image)"), "\(run.stderr)")
        do {
            _ = try Capture.load(json: capture.json)
            Issue.record("a capture without its photo loaded")
        } catch let error as RGBDError {
            #expect(error.argument == .image)
            #expect(!error.description.contains("--"), "\(error)")
        }
    }

    /// A file that is not a capture given as one says what it is and what to give: an
    /// output of rgbd (a PNG), or a capture's photo with its JSON beside it.
    @Test func theWrongFileGetsAHint() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = try CLI.writeCapture(in: directory, stem: "shot")
        let out = Path.join(directory, "out")
        #expect(try CLI.run(["rectify", capture.json, "-o", out, "-q"]).status == 0)
        let png = Path.join(out, "shot.color.png")
        let fromPNG = try CLI.run(["rectify", png, "-o", Path.join(directory, "again"), "-q"])
        #expect(fromPNG.status != 0)
        #expect(Self.errorLine(fromPNG) == "rgbd: error: \(png): is a PNG image, not a capture (its name is that of one of rgbd's own outputs): give a capture's JSON (its photo beside it) or a Portrait photo",
                "\(fromPNG.stderr)")
        let fromPhoto = try CLI.run(["rectify", capture.image, "-o", Path.join(directory, "again"), "-q"])
        #expect(fromPhoto.status != 0)
        #expect(Self.errorLine(fromPhoto) == "rgbd: error: \(capture.image): holds no depth image, so it is not a capture by itself; \(capture.json) beside it is a capture JSON: give that",
                "\(fromPhoto.stderr)")
        // A ZIP archive (a Record3D .r3d named like nothing rgbd knows) is said to be one.
        let zip = Path.join(directory, "archive.zip")
        try Data([0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 0, count: 26)).write(to: URL(fileURLWithPath: zip))
        let fromZIP = try CLI.run(["rectify", zip, "-o", Path.join(directory, "again"), "-q"])
        #expect(fromZIP.status != 0)
        #expect(Self.errorLine(fromZIP) == "rgbd: error: \(zip): is a ZIP archive, not a capture: give a capture's JSON (its photo beside it) or a Portrait photo",
                "\(fromZIP.stderr)")
        #expect(!FileManager.default.fileExists(atPath: Path.join(directory, "again")))
    }
}

