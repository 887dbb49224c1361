import Foundation
import Testing
@testable import RGBDKit
@testable import RGBDSynth

/// `--frame level` and `--frame enu` on a synthetic capture whose camera is tilted in a
/// level scene, with EXIF (GPS, heading, accelerometer) written by RGBDSynth: the floor
/// must come out level and known surfaces where they truly are.
struct GeoCloudTests {
    static let pitchDown = 23.0, roll = -11.0, heading = 131.0

    /// The capture's files (written once per process) and its synthetic description.
    static let capture: (json: String, synthetic: SyntheticCapture)? = {
        var synthetic = SyntheticCapture(colorWidth: 1008, colorHeight: 756, depthWidth: 256, depthHeight: 192)
        synthetic.scene.cameraToScene = SyntheticScene.tilt(pitchDown: pitchDown, roll: roll)
        synthetic = synthetic.geotagged(latitude: 46.5197, longitude: 6.6323, altitude: 372, heading: heading)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rgbd-geo-\(UUID().uuidString)").path
        guard let written = try? synthetic.write(to: directory, stem: "tilted") else { return nil }
        return (written.json, synthetic)
    }()

    static func points(_ frame: WorldFrame.Kind) throws -> (RectifyPipeline.Result<PointCloud>, [SIMD3<Double>]) {
        let (json, _) = try #require(capture)
        var options = PointCloudOptions()
        options.dropEdges = true
        let result = try RectifyPipeline.pointCloud(json: json, image: nil, options: options, frame: frame)
        var points: [SIMD3<Double>] = []
        result.output.forEachPoint { points.append(SIMD3<Double>($0.position)) }
        return (result, points)
    }

    /// Points whose true surface (found from the camera-frame point and the true tilt) is
    /// `surface`, away from its edges: indices into the cloud.
    static func indices(of surface: SyntheticScene.Surface, camera: [SIMD3<Double>], synthetic: SyntheticCapture) -> [Int] {
        let r = synthetic.scene.cameraToScene ?? .identity
        let scene = synthetic.scene
        return camera.indices.filter { i in
            let p = r.rotate(camera[i])
            let clearOfBox = p.x > scene.boxMax.x + 0.15 || p.x < scene.boxMin.x - 0.15 || p.z > scene.boxMax.z + 0.15
            switch surface {
            case .floor: return abs(p.y - scene.floorY) < 0.03 && p.z < scene.wallZ - 0.2 && clearOfBox
            case .wall: return abs(p.z - scene.wallZ) < 0.03 && p.y < scene.floorY - 0.2
            case .box, .tag: return false
            }
        }
    }

    @Test func levelPutsTheFloorNormalAlongPlusZ() throws {
        let (_, synthetic) = try #require(Self.capture)
        let (_, camera) = try Self.points(.camera)
        let (result, level) = try Self.points(.level)
        #expect(level.count == camera.count)
        let floor = Self.indices(of: .floor, camera: camera, synthetic: synthetic)
        #expect(floor.count > 500)
        // Least squares z = a x + b y + c over the floor points (in the level frame).
        var m = [[Double]](repeating: [0, 0, 0], count: 3), v = [0.0, 0, 0]
        for i in floor {
            let p = level[i], row = [p.x, p.y, 1]
            for j in 0..<3 { for k in 0..<3 { m[j][k] += row[j] * row[k] }; v[j] += row[j] * p.z }
        }
        let (a, b, c) = try #require(Self.solve(m, v))
        let normal = SIMD3(-a, -b, 1) / (a * a + b * b + 1).squareRoot()
        let degrees = acos(normal.z) * 180 / .pi
        #expect(degrees < 0.2, "floor normal \(degrees)° from +z")
        // The floor is floorY below the camera.
        #expect(abs(c + synthetic.scene.floorY) < 0.01, "\(c)")
        #expect(result.output.options.frame.kind == .level)
    }

    @Test func enuPutsKnownSurfacesWhereTheyAre() throws {
        let (_, synthetic) = try #require(Self.capture)
        let (_, camera) = try Self.points(.camera)
        let (result, enu) = try Self.points(.enu)
        let r = try #require(synthetic.scene.cameraToScene)
        let h = Self.heading * .pi / 180
        // Each point where the true tilt and heading put its camera-frame point: the
        // scene's right (x), forward (z) and up (−y) turned to east, north, up.
        var worst = 0.0
        for i in camera.indices {
            let p = r.rotate(camera[i])
            let truth = SIMD3(cos(h) * p.x + sin(h) * p.z, -sin(h) * p.x + cos(h) * p.z, -p.y)
            let d = enu[i] - truth
            worst = max(worst, (d * d).sum().squareRoot())
        }
        #expect(worst < 0.01, "\(worst) m")
        // Known surfaces: the wall lies wallZ ahead along the heading, the floor floorY down.
        for i in Self.indices(of: .wall, camera: camera, synthetic: synthetic) {
            let ahead = sin(h) * enu[i].x + cos(h) * enu[i].y
            #expect(abs(ahead - synthetic.scene.wallZ) < 0.01)
        }
        for i in Self.indices(of: .floor, camera: camera, synthetic: synthetic) {
            #expect(abs(enu[i].z + synthetic.scene.floorY) < 0.01)
        }
        let origin = try #require(result.output.options.frame.origin)
        #expect(abs(origin.latitude - 46.5197) < 1e-9 && abs(origin.longitude - 6.6323) < 1e-9 && origin.height == 372)
    }

    /// The PLY header names the frame, the transform and the geodetic origin in full.
    @Test func plyHeaderCarriesTheFrame() throws {
        let (result, _) = try Self.points(.enu)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rgbd-geo-\(UUID().uuidString).ply").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try result.output.write(to: path, source: "tilted.json")
        let text = String(decoding: try FileSystem.readFile(path).prefix(4096), as: UTF8.self)
        #expect(text.contains("comment frame enu"))
        // PLY headers are ASCII (plyfile refuses anything else).
        let header = try #require(text.components(separatedBy: "end_header").first)
        let ascii = header.unicodeScalars.allSatisfy { $0.isASCII }
        #expect(ascii)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("comment geodetic origin WGS84 latitude ") })
        let words = line.split(separator: " ")
        #expect(words.count == 10)
        #expect(abs((Double(words[5]) ?? 0) - 46.5197) < 1e-9 && abs((Double(words[7]) ?? 0) - 6.6323) < 1e-9, "\(line)")
        #expect(Double(words[9]) == 372)
        #expect(text.contains("comment transform from the source frame (row-major 4x4)"))
    }

    /// Gaussian elimination of a 3×3 system.
    static func solve(_ m: [[Double]], _ v: [Double]) -> (Double, Double, Double)? {
        var a = m, b = v
        for col in 0..<3 {
            guard let pivot = (col..<3).max(by: { abs(a[$0][col]) < abs(a[$1][col]) }), abs(a[pivot][col]) > 1e-12 else { return nil }
            a.swapAt(col, pivot); b.swapAt(col, pivot)
            for row in 0..<3 where row != col {
                let f = a[row][col] / a[col][col]
                for k in 0..<3 { a[row][k] -= f * a[col][k] }
                b[row] -= f * b[col]
            }
        }
        return (b[0] / a[0][0], b[1] / a[1][1], b[2] / a[2][2])
    }
}
