import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// Comma-separated files with Windows line ends (`\r\n`) and a UTF-8 byte order mark, as
/// spreadsheets and Python's `csv` module write them, through the real binary: a
/// `--placemarks` file, and a Stray Scanner scan whose `odometry.csv`, `camera_matrix.csv`
/// and `imu.csv` were saved so. What rgbd reads must be what was written.
@Suite(.serialized) struct CSVLineEndingCLITests {
    /// Rewrites a text file with a byte order mark and `\r\n` line ends.
    static func windows(_ path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!text.contains("\r") && !text.hasPrefix("\u{FEFF}"))
        let bytes = CSVTable.byteOrderMark + Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func placemarksFromASpreadsheet() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let json = try GeoCLITests.writeTilted(in: directory, stem: "tilted")
        let places = directory + "/places.csv"
        try "name,latitude,longitude,altitude\nOpera House,-33.8568,151.2153,10\nUluru,-25.3444,131.0369\n"
            .write(toFile: places, atomically: true, encoding: .utf8)
        try Self.windows(places)
        let run = try CLITests.run(["info", "--json", json, "--placemarks", places])
        #expect(run.status == 0, "\(run.stderr)")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
        let listed = try #require(entries.first?["placemarks"] as? [[String: Any]])
        #expect(listed.count == 2)
        #expect(listed.compactMap { $0["name"] as? String } == ["Opera House", "Uluru"], "\(listed)")
        // GeographicLib (Geodesic.WGS84.Inverse from the photo's position): 2165071.844 m,
        // initial azimuth 290.4769819°.
        #expect(abs((listed[1]["distance"] as? Double ?? 0) - 2_165_071.844) < 1e-3)
        #expect(abs((listed[1]["bearing"] as? Double ?? 0) - 290.4769819) < 1e-6)
        // Without a header the first place's name has no mark in it either.
        try "Opera House,-33.8568,151.2153,10\n".write(toFile: places, atomically: true, encoding: .utf8)
        try Self.windows(places)
        let bare = try CLITests.run(["info", "--json", json, "--placemarks", places])
        #expect(bare.status == 0, "\(bare.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(bare.stdout.utf8)) as? [[String: Any]])
        let only = try #require(document.first?["placemarks"] as? [[String: Any]])
        #expect(only.compactMap { $0["name"] as? String } == ["Opera House"], "\(only)")
    }

    @Test func strayTablesFromASpreadsheet() throws {
        let layout = SyntheticScan.Layout.stray(odometry: .v9, depth: .png, video: .hevc, imuInG: false)
        var options = SyntheticScan.Options()
        options.videoPreset = "ultrafast"
        let scan = SyntheticScan(frameCount: 6, colorWidth: 320, colorHeight: 240, options: options)
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/scan"
        try scan.write(layout: layout, to: path)
        let imuLines = try String(contentsOfFile: path + "/imu.csv", encoding: .utf8).split(separator: "\n").count
        for table in ["odometry.csv", "camera_matrix.csv", "imu.csv"] { try Self.windows(path + "/" + table) }

        let run = try CLITests.run(["info", "--json", path])
        #expect(run.status == 0, "\(run.stderr)")
        let entry = try #require((try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])?.first)
        let truth = scan.truth(for: layout)
        #expect(entry["frames"] as? Int == 6)
        #expect(entry["variant"] as? String == "folder, odometry.csv with 9 columns with timestamps and frame numbers")
        // The timestamps (the header's first column) were read: the true duration.
        let duration = try #require(entry["duration_s"] as? Double, "no duration: \(entry)")
        #expect(abs(duration - (truth.timestamps[5] - truth.timestamps[0])) < 1e-6)
        // camera_matrix.csv's K at the video's size.
        let k = try #require(entry["intrinsics"] as? [String: Any])
        let truthK = truth.colorCamera
        for (key, value) in [("fx", truthK.fx), ("fy", truthK.fy), ("cx", truthK.cx), ("cy", truthK.cy)] {
            #expect(abs((k[key] as? Double ?? .nan) - value) < 1e-6, "\(key): \(String(describing: k[key])) vs \(value)")
        }
        let length = zip(truth.poses, truth.poses.dropFirst()).reduce(0.0) { sum, pair in
            let d = pair.1.translation - pair.0.translation
            return sum + (d * d).sum().squareRoot()
        }
        #expect(abs((entry["trajectory_length_m"] as? Double ?? 0) - length) < 1e-4)
        // imu.csv: every sample below its header.
        let details = try #require(entry["details"] as? [String: Any])
        #expect((details["imu"] as? String)?.hasPrefix("\(imuLines - 1) samples, 100 Hz, acceleration in m/s²") == true,
                "\(String(describing: details["imu"]))")

        // The cloud lies on the room's surfaces: poses and K were read right.
        let cloud = try CLITests.run(["cloud", path, "-o", directory + "/scene.ply", "--voxel", "0.01", "-q"])
        #expect(cloud.status == 0, "\(cloud.stderr)")
        let points = try SceneCLITests.vertices(directory + "/scene.ply")
        #expect(points.count > 3000)
        let off = points.filter { truth.distanceToSurface($0) > 0.009 }.count
        #expect(off == 0, "\(off) of \(points.count) points more than 9 mm from a true surface")
    }
}
