import Testing
@testable import RGBDKit

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
