import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// `rgbd cloud` of scans: every option either does what it says for a scan or is refused.
@Suite(.serialized) struct SceneCloudCLITests {
    /// Binary PLY vertices with normals: x y z, red green blue, nx ny nz.
    static func verticesWithNormals(_ ply: String) throws -> [(position: SIMD3<Double>, normal: SIMD3<Double>)] {
        let data = try Data(contentsOf: URL(fileURLWithPath: ply))
        let bytes = [UInt8](data)
        guard let end = data.range(of: Data("end_header\n".utf8)) else { throw CocoaError(.fileReadCorruptFile) }
        let header = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
        #expect(header.contains("property float nx\nproperty float ny\nproperty float nz"))
        let count = Int(header.split(separator: "\n").first { $0.hasPrefix("element vertex") }?.split(separator: " ").last ?? "0") ?? 0
        func float(_ o: Int) -> Double {
            Double(Float(bitPattern: UInt32(bytes[o]) | UInt32(bytes[o + 1]) << 8 | UInt32(bytes[o + 2]) << 16 | UInt32(bytes[o + 3]) << 24))
        }
        var out: [(SIMD3<Double>, SIMD3<Double>)] = []
        var o = end.upperBound
        for _ in 0..<count {
            out.append((SIMD3(float(o), float(o + 4), float(o + 8)), SIMD3(float(o + 15), float(o + 19), float(o + 23))))
            o += 27
        }
        return out
    }

    /// `--normals` on a scan: each point's normal is the true surface's (the room's face
    /// under it, toward the inside where the camera is): median angle under 3°, 90 % under
    /// 15° (cells at the room's edges and box corners average two faces); fewer than 0.1 %
    /// of the points without one.
    @Test func normalsOfAScanAreTheTrueSurfaces() throws {
        let layout = SyntheticScan.Layout.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false)
        let (dir, path) = try SceneCLITests.write(layout)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try CLITests.run(["cloud", path, "-o", dir + "/n.ply", "--normals", "-q"])
        #expect(run.status == 0, "\(run.stderr)")
        let points = try Self.verticesWithNormals(dir + "/n.ply")
        #expect(points.count > 5000)
        let truth = SceneCLITests.scan.truth(for: layout)
        var angles: [Double] = []
        var zero = 0
        for (p, n) in points {
            // Unit, or zero where no frame's depth grid gave one (a lone depth pixel), as
            // for captures.
            let length = (n * n).sum().squareRoot()
            if length == 0 { zero += 1; continue }
            #expect(abs(length - 1) < 1e-3)
            // The true face: a ray from 3 cm in front of the point, back along the normal.
            let origin = truth.roomPoint(p + n * 0.03)
            let direction = truth.roomPoint(p) - origin
            guard let hit = truth.room.cast(origin: origin, direction: direction / 0.03), abs(hit.t - 0.03) < 0.01 else {
                angles.append(180)
                continue
            }
            let roomNormal = truth.roomPoint(p + n) - truth.roomPoint(p)
            angles.append(acos(max(-1, min(1, (roomNormal * hit.normal).sum()))) * 180 / .pi)
        }
        #expect(zero * 1000 < points.count, "\(zero) of \(points.count) points without a normal")
        angles.sort()
        let median = angles[angles.count / 2], p90 = angles[angles.count * 9 / 10]
        #expect(median < 3 && p90 < 15, "median \(median)°, p90 \(p90)°")
    }

    /// Options that apply to single captures only are refused for scans, not ignored.
    @Test func captureOnlyOptionsAreRefusedForScans() throws {
        let (dir, path) = try SceneCLITests.write(.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for extra in [["--axes", "opengl"], ["--upright"]] {
            let run = try CLITests.run(["cloud", path, "-o", dir + "/x.ply"] + extra)
            #expect(run.status == 1, "\(extra): exit \(run.status)")
            #expect(run.stderr.contains(extra[0]) && run.stderr.contains("not to scans"), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/x.ply"))
        }
    }
}
