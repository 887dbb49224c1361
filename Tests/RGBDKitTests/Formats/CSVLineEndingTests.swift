import Testing
@testable import RGBDKit

/// Every comma-separated file rgbd reads takes `\n` and `\r\n` line ends and a UTF-8 byte
/// order mark (what spreadsheets and Python's `csv` module with `utf-8-sig` write): the
/// same values as the plain file, checked against the numbers written, one test per reader.
struct CSVLineEndingTests {
    /// `text` as Windows writes it: a byte order mark, then `\r\n` line ends.
    static func windows(_ text: String) -> [UInt8] {
        CSVTable.byteOrderMark + Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8)
    }

    @Test func linesDropTheCarriageReturnAndTheByteOrderMark() {
        let lines = CSVTable.lines(Self.windows("a,b\n\nc\n"))
        #expect(lines.map(\.number) == [1, 2, 3, 4])
        #expect(lines.map { String($0.text) } == ["a,b", "", "c", ""])
        // A mark elsewhere than the start is text (it is no mark there).
        #expect(CSVTable.lines(Array("x\n".utf8) + CSVTable.byteOrderMark).map { String($0.text) } == ["x", "\u{FEFF}"])
    }

    @Test(arguments: [false, true])
    func odometryWithAHeader(windows: Bool) throws {
        let text = "timestamp, frame, x, y, z, qx, qy, qz, qw\n10.0, 000000, 0.1, 0.2, 0.3, 0, 0, 0, 1\n10.5, 000001, 0.1, 0.2, 0.4, 0, 0.7071068, 0, 0.7071068\n"
        let (variant, rows) = try StrayTables.odometry(windows ? Self.windows(text) : Array(text.utf8), name: "o.csv")
        #expect(variant == .nine)
        #expect(rows.map(\.frame) == [0, 1])
        // The first column is "timestamp", not "\u{FEFF}timestamp": the times are read.
        #expect(rows.map(\.timestamp) == [10.0, 10.5])
        #expect(rows[1].pose.translation == SIMD3(0.1, 0.2, 0.4))
        #expect(rows.map(\.line) == [2, 3])
    }

    @Test(arguments: [false, true])
    func odometryWithoutAHeader(windows: Bool) throws {
        let text = "0.1,0.2,0.3,0,0,0,1\n0.1,0.2,0.4,0,0.7071068,0,0.7071068\n"
        let (variant, rows) = try StrayTables.odometry(windows ? Self.windows(text) : Array(text.utf8), name: "o.csv")
        #expect(variant == .legacy)
        #expect(rows.map(\.frame) == [0, 1])
        #expect(rows[0].pose.translation == SIMD3(0.1, 0.2, 0.3))
    }

    @Test(arguments: [false, true])
    func cameraMatrix(windows: Bool) throws {
        let text = "1400.5,0.0,959.5\n0.0,1401.5,719.5\n0.0,0.0,1.0\n"
        let k = try StrayTables.cameraMatrix(windows ? Self.windows(text) : Array(text.utf8), name: "k.csv")
        #expect(k.fx == 1400.5 && k.fy == 1401.5 && k.cx == 959.5 && k.cy == 719.5)
    }

    /// Without a header the first sample must count: a mark read as text made it a header.
    @Test(arguments: [(false, false), (false, true), (true, false), (true, true)])
    func imu(header: Bool, windows: Bool) throws {
        let text = (header ? "timestamp, a_x, a_y, a_z, alpha_x, alpha_y, alpha_z\n" : "")
            + "0.0, 0.1, -9.8, 0.2, 0, 0, 0\n0.01, 0.1, -9.8, 0.2, 0, 0, 0\n0.02, 0.4, -9.5, 0.2, 0, 0, 0\n"
        let imu = try StrayTables.imu(windows ? Self.windows(text) : Array(text.utf8), name: "imu.csv")
        #expect(imu.count == 3)
        #expect(abs((imu.rate ?? 0) - 100) < 1e-6)
        #expect(abs(imu.meanAcceleration.x - 0.2) < 1e-12 && abs(imu.meanAcceleration.y + 9.7) < 1e-12)
    }

    @Test(arguments: [false, true])
    func placemarks(windows: Bool) throws {
        for header in ["", "name,latitude,longitude,altitude\n"] {
            let text = header + "Opera House,-33.8568,151.2153,10\n# a comment\n\nUluru,-25.3444,131.0369\n"
            let places = try Placemark.read(csv: windows ? Self.windows(text) : Array(text.utf8), file: "p.csv")
            #expect(places == [Placemark(name: "Opera House", latitude: -33.8568, longitude: 151.2153, altitude: 10),
                               Placemark(name: "Uluru", latitude: -25.3444, longitude: 131.0369)])
        }
        // Line numbers count the file's lines, whatever their ends.
        do {
            _ = try Placemark.read(csv: Self.windows("A,1,2\nB,95,3\n"), file: "p.csv")
            Issue.record("a latitude of 95° accepted")
        } catch let error as RGBDError {
            #expect(error.description.hasPrefix("p.csv: line 2: latitude 95.0"), "\(error)")
        }
    }
}
