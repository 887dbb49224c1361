import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// `rgbd info` and `rgbd cloud` on scans, through the real binary: what they say, the
/// merged cloud on the true surfaces, and hostile scans refused with one line naming the
/// file (and frame), a non-zero exit and nothing written.
@Suite(.serialized) struct SceneCLITests {
    static let scan = SyntheticScan(frameCount: 6, colorWidth: 320, colorHeight: 240)

    static func write(_ layout: SyntheticScan.Layout, scan: SyntheticScan = scan, name: String = "scan")
        throws -> (dir: String, path: String) {
        let dir = try CLITests.temporaryDirectory()
        var isArchive = false
        if case .record3D(.r3d, _, _, _) = layout { isArchive = true }
        let path = "\(dir)/\(name)\(isArchive ? ".r3d" : "")"
        try scan.write(layout: layout, to: path)
        return (dir, path)
    }

    static func vertices(_ ply: String) throws -> [SIMD3<Double>] {
        let data = try Data(contentsOf: URL(fileURLWithPath: ply))
        let bytes = [UInt8](data)
        guard let end = data.range(of: Data("end_header\n".utf8)) else { throw CocoaError(.fileReadCorruptFile) }
        let header = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
        let count = Int(header.split(separator: "\n").first { $0.hasPrefix("element vertex") }?.split(separator: " ").last ?? "0") ?? 0
        var points: [SIMD3<Double>] = []
        var offset = end.upperBound
        for _ in 0..<count {
            func float(_ o: Int) -> Double {
                Double(Float(bitPattern: UInt32(bytes[o]) | UInt32(bytes[o + 1]) << 8 | UInt32(bytes[o + 2]) << 16 | UInt32(bytes[o + 3]) << 24))
            }
            points.append(SIMD3(float(offset), float(offset + 4), float(offset + 8)))
            offset += 15
        }
        return points
    }

    @Test func infoDescribesAStrayScan() throws {
        let (dir, path) = try Self.write(.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: true))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = try CLITests.run(["info", path])
        #expect(text.status == 0, "\(text.stderr)")
        for expected in ["Stray Scanner", "15 columns", "6 with depth and pose", "320×240", "256×192",
                         "gravity-aligned", "OpenCV camera axes", "acceleration in g", "confidence"] {
            #expect(text.stdout.contains(expected), "no \(expected) in \(text.stdout)")
        }
        let json = try CLITests.run(["info", "--json", path])
        #expect(json.status == 0)
        let document = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        let entry = try #require(document?.first)
        #expect(entry["kind"] as? String == "scan" && entry["frames"] as? Int == 6)
        #expect(entry["world"] as? String == "gravity_aligned")
        // The trajectory's length is the true path's (the generator's poses).
        let truth = Self.scan.truth(for: .stray(odometry: .v15, depth: .png, video: .hevc, imuInG: true))
        let length = zip(truth.poses, truth.poses.dropFirst()).reduce(0.0) { sum, pair in
            let d = pair.1.translation - pair.0.translation
            return sum + (d * d).sum().squareRoot()
        }
        let reported = try #require(entry["trajectory_length_m"] as? Double)
        #expect(abs(reported - length) < 1e-4, "\(reported) vs \(length)")
    }

    @Test func infoDescribesARecord3DArchive() throws {
        let (dir, path) = try Self.write(.record3D(.r3d, keys: .old, portrait: true))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try CLITests.run(["info", path])
        #expect(run.status == 0, "\(run.stderr)")
        for expected in ["Record3D", ".r3d archive, old metadata", "the first frame's camera", "OpenGL camera axes", "192×256"] {
            #expect(run.stdout.contains(expected), "no \(expected) in \(run.stdout)")
        }
    }

    /// `rgbd cloud SCAN -o x.ply`: the binary's merged cloud lies on the room's surfaces.
    @Test func cloudOfAScanLiesOnTheTrueSurfaces() throws {
        let layout = SyntheticScan.Layout.record3D(.r3d, keys: .new, portrait: false)
        let (dir, path) = try Self.write(layout)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try CLITests.run(["cloud", path, "-o", dir + "/scene.ply", "--voxel", "0.01"])
        #expect(run.status == 0, "\(run.stderr)")
        let points = try Self.vertices(dir + "/scene.ply")
        #expect(points.count > 5000)
        let truth = Self.scan.truth(for: layout)
        let off = points.filter { truth.distanceToSurface($0) > 0.009 }.count
        #expect(off == 0, "\(off) of \(points.count) points more than 9 mm from a true surface")
        let header = try String(contentsOfFile: dir + "/scene.ply", encoding: .isoLatin1).prefix(800)
        #expect(header.contains("comment world the first frame's camera"))
    }

    /// Hostile scans: one line naming the file (and frame or line), exit 1, no output.
    @Test func hostileScansAreOneLineAndWriteNothing() throws {
        var cases: [(name: String, expect: String, make: (String) throws -> Void)] = []
        cases.append(("odometry-extra-column", "odometry.csv: line 3: 10 fields", { path in
            try Self.edit(path + "/odometry.csv") { lines in lines[2] += ", 7" }
        }))
        cases.append(("odometry-missing-column", "odometry.csv: line 2: 8 fields", { path in
            try Self.edit(path + "/odometry.csv") { lines in lines[1] = lines[1].split(separator: ",").dropLast().joined(separator: ",") }
        }))
        cases.append(("odometry-nan-quaternion", "odometry.csv: line 4: qx is \"nan\"", { path in
            try Self.edit(path + "/odometry.csv") { lines in
                var fields = lines[3].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                fields[5] = " nan"
                lines[3] = fields.joined(separator: ",")
            }
        }))
        cases.append(("odometry-non-unit-quaternion", "odometry.csv: line 5 (frame 3): the quaternion", { path in
            try Self.edit(path + "/odometry.csv") { lines in
                var fields = lines[4].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                fields[8] = " 1.9"
                lines[4] = fields.joined(separator: ",")
            }
        }))
        cases.append(("depth-wrong-size", "depth/000004.png: a 128×96 depth map where the scan's are 256×192", { path in
            let png = try PNGCodec.encodeGray16(width: 128, height: 96, samples: [UInt16](repeating: 1500, count: 128 * 96))
            try Data(png).write(to: URL(fileURLWithPath: path + "/depth/000004.png"))
        }))
        cases.append(("truncated-video", "rgb.mp4", { path in
            let url = URL(fileURLWithPath: path + "/rgb.mp4")
            let data = try Data(contentsOf: url)
            try data.prefix(data.count / 3).write(to: url)
        }))
        for c in cases {
            let (dir, path) = try Self.write(.stray(odometry: .v9, depth: .png, video: .hevc, imuInG: false), name: c.name)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try c.make(path)
            let run = try CLITests.run(["cloud", path, "-o", dir + "/out.ply"])
            #expect(run.status == 1, "\(c.name): exit \(run.status)")
            let errors = run.stderr.split(separator: "\n").filter { $0.hasPrefix("rgbd: error:") }
            #expect(errors.count == 1, "\(c.name): \(run.stderr)")
            #expect(errors.first?.contains(c.expect) == true, "\(c.name): \(run.stderr)")
            #expect(errors.first?.contains(path) == true, "\(c.name): the message names no file of the scan: \(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/out.ply"), "\(c.name): an output was written")
        }
    }

    /// Record3D archives: garbage in a depth entry, a truncated archive, and metadata
    /// claiming 100 000 frames with 6 present (one warning line, not 99 994).
    @Test func hostileArchives() throws {
        let layout = SyntheticScan.Layout.record3D(.r3d, keys: .new, portrait: false)
        // 100 000 poses claimed, 6 frames present: read, with one line about the rest.
        do {
            let (dir, path) = try Self.write(layout)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try Self.rewriteMetadata(path) { json in
                var poses = json["poses"] as? [[Double]] ?? []
                let last = poses.last ?? [0, 0, 0, 1, 0, 0, 0]
                poses += Array(repeating: last, count: 100_000 - poses.count)
                json["poses"] = poses
                json.removeValue(forKey: "frameTimestamps")
                json.removeValue(forKey: "perFrameIntrinsicCoeffs")
            }
            let run = try CLITests.run(["cloud", path, "-o", dir + "/out.ply"])
            #expect(run.status == 0, "\(run.stderr)")
            let warnings = run.stderr.split(separator: "\n").filter { $0.contains("skipped") }
            #expect(warnings.count == 1 && warnings.first?.contains("99994 frames") == true, "\(run.stderr)")
        }
        // A truncated archive: its end record is gone.
        do {
            let (dir, path) = try Self.write(layout)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            try data.prefix(data.count - 300).write(to: URL(fileURLWithPath: path))
            let run = try CLITests.run(["cloud", path, "-o", dir + "/out.ply"])
            #expect(run.status == 1)
            #expect(run.stderr.hasPrefix("rgbd: error: \(path)") && run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/out.ply"))
        }
        // LZFSE garbage in frame 2's depth (its stored bytes overwritten in place).
        do {
            let (dir, path) = try Self.write(layout)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let name = Array("rgbd/2.depth".utf8)
            // The local header: signature, 26 bytes of fields, the name, the extra field.
            func isLocalHeader(_ i: Int) -> Bool {
                guard bytes[i] == 0x50, bytes[i + 1] == 0x4B, bytes[i + 2] == 3, bytes[i + 3] == 4 else { return false }
                return Array(bytes[(i + 30)..<(i + 30 + name.count)]) == name
            }
            let found = (0..<(bytes.count - 30 - name.count)).first(where: isLocalHeader)
            let at = try #require(found)
            let extra = Int(bytes[at + 28]) | Int(bytes[at + 29]) << 8
            let data = at + 30 + name.count + extra
            for i in data..<(data + 64) { bytes[i] = UInt8(truncatingIfNeeded: i &* 37) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let run = try CLITests.run(["cloud", path, "-o", dir + "/out.ply"])
            #expect(run.status == 1)
            #expect(run.stderr.contains("\(path): rgbd/2.depth") && run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/out.ply"))
        }
    }

    static func edit(_ path: String, _ change: (inout [String]) -> Void) throws {
        var lines = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n")
        change(&lines)
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Rewrites a `.r3d`'s `metadata` entry with Python's zipfile (an independent ZIP writer).
    static func rewriteMetadata(_ path: String, _ change: (inout [String: Any]) -> Void) throws {
        let python = try testPython()
        let read = Process()
        read.executableURL = URL(fileURLWithPath: python)
        read.arguments = ["-c", "import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read('metadata'))", path]
        let out = Pipe()
        read.standardOutput = out
        try read.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        read.waitUntilExit()
        var json = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        change(&json)
        let metadata = try JSONSerialization.data(withJSONObject: json)
        let temporary = path + ".metadata"
        try metadata.write(to: URL(fileURLWithPath: temporary))
        let script = """
            import sys, zipfile, shutil
            src, meta = sys.argv[1], sys.argv[2]
            with zipfile.ZipFile(src) as a, zipfile.ZipFile(src + '.new', 'w') as b:
                for info in a.infolist():
                    data = open(meta, 'rb').read() if info.filename == 'metadata' else a.read(info.filename)
                    b.writestr(info, data)
            shutil.move(src + '.new', src)
            """
        let write = Process()
        write.executableURL = URL(fileURLWithPath: python)
        write.arguments = ["-c", script, path, temporary]
        try write.run()
        write.waitUntilExit()
        #expect(write.terminationStatus == 0)
    }
}

/// The test venv's Python (`Scripts/test.sh` exports `RGBD_TEST_PYTHON`).
func testPython() throws -> String {
    if let python = ProcessInfo.processInfo.environment["RGBD_TEST_PYTHON"], !python.isEmpty { return python }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let venv = root.appendingPathComponent(".venv/bin/python").path
    guard FileManager.default.isExecutableFile(atPath: venv) else {
        throw RGBDError(.io, "no test Python: run ./Scripts/test.sh once (it makes .venv/) or set RGBD_TEST_PYTHON")
    }
    return venv
}
