import Testing
@testable import RGBDFoundation
@testable import RGBDCapture
@testable import RGBDRectification
@testable import RGBDMarkers
@testable import RGBDScan
@testable import RGBDReconstruction
@testable import RGBDOutput
@testable import RGBDKit

/// Pose conventions checked by geometry, not by reading back what rgbd wrote.
struct PoseTests {
    func close(_ a: SIMD3<Double>, _ b: SIMD3<Double>, _ tolerance: Double = 1e-9) -> Bool {
        let d = a - b
        return (d * d).sum().squareRoot() <= tolerance
    }

    /// Hamilton quaternions: 90° about +z turns +x into +y (right-handed), and the
    /// components are taken by name, whatever order a file lists them in.
    @Test func quaternionRotatesByTheRightHandRule() throws {
        let s = 0.5.squareRoot()
        let pose = try #require(Pose(quaternionX: 0, y: 0, z: s, w: s, translation: SIMD3(1, 2, 3)))
        #expect(close(pose.rotate(SIMD3(1, 0, 0)), SIMD3(0, 1, 0)))
        #expect(close(pose.rotate(SIMD3(0, 1, 0)), SIMD3(-1, 0, 0)))
        #expect(close(pose.apply(.zero), SIMD3(1, 2, 3)))
        // 180° about x: the quaternion (1, 0, 0, 0) in x y z w order.
        let flip = try #require(Pose(quaternionX: 1, y: 0, z: 0, w: 0, translation: .zero))
        #expect(close(flip.rotate(SIMD3(0, 1, 0)), SIMD3(0, -1, 0)))
        #expect(close(flip.rotate(SIMD3(0, 0, 1)), SIMD3(0, 0, -1)))
    }

    /// The quaternion read back from a rotation turns vectors the same way (either sign).
    @Test func quaternionRoundTripsThroughTheMatrix() throws {
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            var q = (0..<4).map { _ in Double.random(in: -1...1, using: &rng) }
            let n = q.map { $0 * $0 }.reduce(0, +).squareRoot()
            q = q.map { $0 / n }
            let pose = try #require(Pose(quaternionX: q[0], y: q[1], z: q[2], w: q[3], translation: .zero))
            let back = pose.quaternion
            let again = try #require(Pose(quaternionX: back.x, y: back.y, z: back.z, w: back.w, translation: .zero))
            for v in [SIMD3<Double>(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0.3, -0.2, 0.9)] {
                #expect(close(pose.rotate(v), again.rotate(v), 1e-9))
            }
        }
    }

    /// Not rotations: NaN, zero, norm 1.5; within float32 rounding of a unit quaternion: accepted.
    @Test func quaternionsThatAreNotRotationsAreRefused() {
        #expect(Pose(quaternionX: .nan, y: 0, z: 0, w: 1, translation: .zero) == nil)
        #expect(Pose(quaternionX: 0, y: 0, z: 0, w: 0, translation: .zero) == nil)
        #expect(Pose(quaternionX: 0, y: 0, z: 0, w: 1.5, translation: .zero) == nil)
        #expect(Pose(quaternionX: 0, y: 0, z: 0, w: 1, translation: SIMD3(.infinity, 0, 0)) == nil)
        #expect(Pose(quaternionX: 0, y: 0, z: 0, w: 1.0000003, translation: .zero) != nil)
    }

    /// An ARKit/OpenGL camera at the identity looks down the world's −z with +y up:
    /// converted, a point 1 m ahead in OpenCV camera axes (+z) is at world −z, and a
    /// point below the image centre (+y in OpenCV) is below (world −y).
    @Test func openGLCameraConversionKeepsTheWorldGeometry() {
        let cv = Pose.identity.fromOpenGLCamera()
        #expect(close(cv.apply(SIMD3(0, 0, 1)), SIMD3(0, 0, -1)))
        #expect(close(cv.apply(SIMD3(0, 1, 0)), SIMD3(0, -1, 0)))
        #expect(close(cv.apply(SIMD3(1, 0, 0)), SIMD3(1, 0, 0)))
        // Its own inverse, and the camera centre stays.
        let pose = Pose(quaternionX: 0.1, y: 0.2, z: 0.3, w: (1 - 0.14).squareRoot(), translation: SIMD3(4, 5, 6))!
        #expect(pose.fromOpenGLCamera().toOpenGLCamera() == pose)
        #expect(pose.fromOpenGLCamera().translation == pose.translation)
    }

    @Test func inverseAndCompositionUndoEachOther() throws {
        let a = try #require(Pose(quaternionX: 0.2, y: -0.1, z: 0.4, w: (1 - 0.21).squareRoot(), translation: SIMD3(1, -2, 0.5)))
        let p = SIMD3(0.3, 0.7, -1.1)
        #expect(close(a.inverse.apply(a.apply(p)), p, 1e-12))
        let b = try #require(Pose(quaternionX: 0, y: 0.6, z: 0, w: 0.8, translation: SIMD3(0, 1, 2)))
        #expect(close(a.composed(with: b).apply(p), a.apply(b.apply(p)), 1e-12))
    }
}

/// Stray Scanner's tables: the three odometry layouts, and what is refused.
struct StrayTablesTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func theThreeOdometryLayoutsGiveTheSamePoses() throws {
        let legacy = "0.1,0.2,0.3,0,0,0,1\n0.1,0.2,0.4,0,0.7071068,0,0.7071068\n"
        let nine = "timestamp, frame, x, y, z, qx, qy, qz, qw\n10.0, 000000, 0.1, 0.2, 0.3, 0, 0, 0, 1\n10.5, 000001, 0.1, 0.2, 0.4, 0, 0.7071068, 0, 0.7071068\n"
        let fifteen = "timestamp, frame, x, y, z, qx, qy, qz, qw, fx, fy, cx, cy, distortion_center_x, distortion_center_y\n10.0, 000000, 0.1, 0.2, 0.3, 0, 0, 0, 1, 1400, 1401, 959.5, 719.5, , \r\n10.5, 000001, 0.1, 0.2, 0.4, 0, 0.7071068, 0, 0.7071068, 1400, 1401, 960, 720, 961.2, 722.3\r\n"
        let a = try StrayTables.odometry(bytes(legacy), name: "o.csv")
        let b = try StrayTables.odometry(bytes(nine), name: "o.csv")
        let c = try StrayTables.odometry(bytes(fifteen), name: "o.csv")
        #expect(a.variant == .legacy && b.variant == .nine && c.variant == .fifteen)
        for rows in [a.rows, b.rows, c.rows] {
            #expect(rows.map(\.frame) == [0, 1])
            // 90° about +y turns the camera's +z (forward) into world +x.
            let forward = rows[1].pose.rotate(SIMD3(0, 0, 1))
            #expect(abs(forward.x - 1) < 1e-6 && abs(forward.z) < 1e-6)
            #expect(rows[1].pose.translation == SIMD3(0.1, 0.2, 0.4))
        }
        #expect(b.rows[1].timestamp == 10.5 && a.rows[1].timestamp == nil)
        #expect(c.rows[0].intrinsics?.fy == 1401 && c.rows[0].distortionCenter == nil)
        #expect(c.rows[1].distortionCenter == SIMD2(961.2, 722.3))
    }

    @Test(arguments: [
        ("timestamp, frame, x, y, z, qx, qy, qz, qw\n1, 000000, 0, 0, 0, 0, 0, 0, 1, 7\n", "o.csv: line 2: 10 fields where the header has 9"),
        ("timestamp, frame, x, y, z, qx, qy, qz\n", "o.csv: line 1: the header has no column \"qw\""),
        ("timestamp, frame, x, y, z, qx, qy, qz, qw\n1, 000000, 0, 0, 0, nan, 0, 0, 1\n", "o.csv: line 2: qx is \"nan\", not a finite number"),
        ("timestamp, frame, x, y, z, qx, qy, qz, qw\n1, 000003, 0, 0, 0, 0, 0, 0.6, 1.2\n", "o.csv: line 2 (frame 3): the quaternion (qx, qy, qz, qw) has norm 1.3416, not a rotation"),
        ("timestamp, frame, x, y, z, qx, qy, qz, qw\n1, 000002, 0, 0, 0, 0, 0, 0, 1\n2, 000001, 0, 0, 0, 0, 0, 0, 1\n", "o.csv: line 3: frame 1 follows frame 2"),
        ("", "o.csv: no poses (the file is empty)"),
        ("0,0,0,0,0,1\n", "o.csv: line 1: 6 fields where the 7-column layout has 7"),
    ])
    func malformedOdometryIsOneLineNamingFileAndLine(text: String, message: String) {
        do {
            _ = try StrayTables.odometry(bytes(text), name: "o.csv")
            Issue.record("accepted: \(text)")
        } catch let error as RGBDError {
            #expect(error.description.hasPrefix(message), "\(error)")
            #expect(error.kind == .invalidScene && !error.description.contains("\n"))
        } catch {
            Issue.record("not an RGBDError: \(error)")
        }
    }

    @Test func cameraMatrixAndIMU() throws {
        let k = try StrayTables.cameraMatrix(bytes("1400.5,0.0,959.5\n0.0,1401.5,719.5\n0.0,0.0,1.0\n"), name: "k.csv")
        #expect(k.fx == 1400.5 && k.fy == 1401.5 && k.cx == 959.5 && k.cy == 719.5)
        #expect(throws: RGBDError.self) { try StrayTables.cameraMatrix(bytes("1,0,0\n0,1,0\n"), name: "k.csv") }
        let header = "timestamp, a_x, a_y, a_z, alpha_x, alpha_y, alpha_z\n"
        let ms2 = try StrayTables.imu(bytes(header + "0.0, 0.1, -9.8, 0.2, 0, 0, 0\n0.01, 0.1, -9.8, 0.2, 0, 0, 0\n"), name: "imu.csv")
        let g = try StrayTables.imu(bytes(header + "0.0, 0.01, -1.0, 0.02, 0, 0, 0\n0.01, 0.01, -1.0, 0.02, 0, 0, 0\n"), name: "imu.csv")
        #expect(!ms2.inG && g.inG)
        #expect(abs(ms2.meanAcceleration.y + 9.8) < 1e-9 && abs(g.meanAcceleration.y + 9.80665) < 1e-9)
        #expect(abs((ms2.rate ?? 0) - 100) < 1e-6)
    }
}
