// libFuzzer target: the text and metadata parsers of scans, on any bytes. The first byte
// picks the parser (mod 8), the rest is the file: Stray Scanner's `odometry.csv`,
// `camera_matrix.csv` and `imu.csv` (`StrayTables`), a `.npy` depth array (`NPYArray`),
// Record3D's `metadata` JSON (`Record3DMetadata`), the `scene.json` of a scene
// `rgbd register` wrote (`RegisteredScene`), a `--placemarks` CSV (`Placemark`) and a
// `--poses` trajectory (`PoseTrajectory`, TUM text). A
// finding is a crash, a sanitizer report, an error that is not an RGBDError of one line
// naming the file, or an accepted file that breaks what the readers promise (poses that
// are rotations, frame numbers that increase, positive focal lengths, array sizes that
// match, places within ±90° and ±180°, and a CSV file read alike when saved with a byte
// order mark and `\r\n` line ends). Fuzz/README.md.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFuzzDriver
import RGBDKit

// SwiftPM names this module's entry point FuzzScanTables_main and links it as `main`, so
// libFuzzer's own main is not used: its driver is called from here.
exit(rgbd_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzzOne($0, $1) })

/// Stops the fuzzer with a finding (a trap, which libFuzzer reports with the input).
func fail(_ message: String) -> Never {
    fatalError("FuzzScanTables finding: \(message)")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// A rotation: rows of unit length, orthogonal, determinant +1 (to `tolerance`; float
/// precision by default, looser for files that carry a matrix as written, which the reader
/// accepts to 1e-6 per dot product).
func isRotation(_ pose: Pose, tolerance: Double = 1e-6) -> Bool {
    let rows = [pose.row0, pose.row1, pose.row2]
    for (i, a) in rows.enumerated() {
        guard abs((a * a).sum() - 1) < tolerance else { return false }
        for b in rows[(i + 1)...] where abs((a * b).sum()) > tolerance { return false }
    }
    let (a, b, c) = (pose.row0, pose.row1, pose.row2)
    let det = a.x * (b.y * c.z - b.z * c.y) - a.y * (b.x * c.z - b.z * c.x) + a.z * (b.x * c.y - b.y * c.x)
    return abs(det - 1) < tolerance && [pose.translation.x, pose.translation.y, pose.translation.z].allSatisfy(\.isFinite)
}

/// The file saved with a byte order mark and CRLF, parsed: refused there where the file
/// itself was read is a finding.
func reread<T>(_ windows: [UInt8], _ parse: ([UInt8]) throws -> T) -> T {
    do {
        return try parse(windows)
    } catch {
        fail("read with LF, refused with a byte order mark and CRLF: \(error)")
    }
}

/// One input: a selector byte, then the file's bytes.
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let selector = data[0] % 8
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let names = ["scan/odometry.csv", "scan/camera_matrix.csv", "scan/imu.csv", "scan/depth/000000.npy", "scan.r3d: metadata",
                 "registered/scene.json", "places.csv", "poses.txt"]
    let name = names[Int(selector)]
    // A CSV file as a spreadsheet saves it: a byte order mark, `\r\n` line ends (nil when
    // the file has a `\r` or a mark of its own, which would not come back alike).
    let windows: [UInt8]? = bytes.contains(0x0D) || bytes.starts(with: CSVTable.byteOrderMark) ? nil
        : CSVTable.byteOrderMark + bytes.flatMap { $0 == 0x0A ? [0x0D, 0x0A] : [$0] }
    do {
        switch selector {
        case 0:
            let (variant, rows) = try StrayTables.odometry(bytes, name: name)
            check(!rows.isEmpty, "odometry accepted without rows")
            if let windows {
                let (other, same) = reread(windows) { try StrayTables.odometry($0, name: name) }
                check(other == variant && same.map(\.frame) == rows.map(\.frame) && same.map(\.timestamp) == rows.map(\.timestamp)
                      && same.map(\.pose.translation) == rows.map(\.pose.translation) && same.map(\.line) == rows.map(\.line),
                      "odometry read differently with a byte order mark and CRLF")
            }
            for (a, b) in zip(rows, rows.dropFirst()) { check(b.frame > a.frame, "frame numbers do not increase") }
            for row in rows {
                check(isRotation(row.pose), "line \(row.line): not a rotation: \(row.pose)")
                if let k = row.intrinsics { check(k.fx > 0 && k.fy > 0 && k.cx.isFinite && k.cy.isFinite, "intrinsics \(k)") }
            }
        case 1:
            let k = try StrayTables.cameraMatrix(bytes, name: name)
            check(k.fx > 0 && k.fy > 0 && k.cx.isFinite && k.cy.isFinite, "camera matrix \(k)")
            if let windows {
                let same = reread(windows) { try StrayTables.cameraMatrix($0, name: name) }
                check(same == k, "camera matrix read differently with a byte order mark and CRLF")
            }
        case 2:
            let imu = try StrayTables.imu(bytes, name: name)
            check(imu.count > 0, "imu accepted without samples")
            check(imu.rate.map { $0 > 0 && $0.isFinite } ?? true, "imu rate \(String(describing: imu.rate))")
            if let windows {
                let same = reread(windows) { try StrayTables.imu($0, name: name) }
                check(same.count == imu.count && same.rate == imu.rate && same.inG == imu.inG
                      && same.meanAcceleration == imu.meanAcceleration, "imu read differently with a byte order mark and CRLF")
            }
        case 3:
            let array = try NPYArray(bytes, name: name, maxElements: InputLimits.maxDepthPixels)
            check(array.width > 0 && array.height > 0 && array.values.count == array.width * array.height,
                  "npy \(array.width)×\(array.height) with \(array.values.count) values")
        case 5:
            let scene = try RegisteredScene.parse(bytes, file: name)
            check(!scene.frames.isEmpty && scene.frames.count == scene.sources.count, "frames and sources")
            let first = scene.frames[0]
            for (frame, source) in zip(scene.frames, scene.sources) {
                check(isRotation(frame.pose, tolerance: 1e-5), "\(frame.index): not a rotation: \(frame.pose)")
                for k in [frame.colorIntrinsics, frame.depthIntrinsics] {
                    check(k.fx > 0 && k.fy > 0 && k.cx.isFinite && k.cy.isFinite && k.width > 0 && k.height > 0, "intrinsics \(k)")
                }
                check(frame.colorIntrinsics.width == first.colorIntrinsics.width
                      && frame.depthIntrinsics.height == first.depthIntrinsics.height, "sizes differ")
                check(source.factor > 0 && source.factor.isFinite && source.offset.isFinite, "depth correction")
            }
            check(scene.originTag.map { $0 >= 0 } ?? true, "origin tag")
        case 6:
            let places = try Placemark.read(csv: bytes, file: name)
            check(places.count <= Placemark.maxCount, "more places than the limit")
            for place in places {
                check(abs(place.latitude) <= 90 && abs(place.longitude) <= 180 && (place.altitude?.isFinite ?? true),
                      "place \(place)")
            }
            if let windows {
                check(reread(windows) { try Placemark.read(csv: $0, file: name) } == places,
                      "places read differently with a byte order mark and CRLF")
            }
        case 7:
            let trajectory = try PoseTrajectory.parse(bytes, file: name)
            check(!trajectory.poses.isEmpty, "a trajectory accepted without poses")
            for (a, b) in zip(trajectory.poses, trajectory.poses.dropFirst()) { check(b.seconds > a.seconds, "times do not increase") }
            for (i, entry) in trajectory.poses.enumerated() {
                check(entry.seconds.isFinite && isRotation(entry.pose), "pose \(i): not a rotation at a finite time")
                check(trajectory.pose(at: entry.seconds) != nil, "pose \(i) not found at its own time")
            }
        default:
            let metadata = try Record3DMetadata.parse(bytes, name: name)
            check(metadata.width > 0 && metadata.height > 0 && !metadata.poses.isEmpty, "metadata sizes or poses")
            check(metadata.k.fx > 0 && metadata.k.fy > 0, "metadata K")
            for (i, pose) in metadata.poses.enumerated() { check(isRotation(pose), "poses[\(i)]: not a rotation") }
            check(metadata.poses.count <= Record3DMetadata.maxFrames, "more poses than the limit")
        }
    } catch let error as RGBDError {
        check(!error.description.contains("\n"), "a message of more than one line: \(error)")
        check(error.description.hasPrefix(name + ": "), "an error that does not name the file: \(error)")
    } catch {
        fail("not an RGBDError: \(error)")
    }
    return 0
}
