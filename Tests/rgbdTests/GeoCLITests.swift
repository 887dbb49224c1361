import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// `rgbd info` and `rgbd cloud --frame` on synthetic captures whose photos carry EXIF
/// written by RGBDSynth (position, heading, accelerometer), with the real binary.
@Suite(.serialized) struct GeoCLITests {
    static let pitchDown = 17.0, roll = 6.0

    static func writeTilted(in directory: String, stem: String, exif: ((inout SyntheticEXIF) -> Void)? = nil) throws -> String {
        var capture = SyntheticCapture(colorWidth: 640, colorHeight: 480, depthWidth: 160, depthHeight: 120)
        capture.scene.cameraToScene = SyntheticScene.tilt(pitchDown: pitchDown, roll: roll)
        capture = capture.geotagged(latitude: -33.8567844, longitude: 151.2152967, altitude: 12.5, heading: 300, magnetic: true,
                                    horizontalError: 8)
        if let exif, var written = capture.exif {
            exif(&written)
            capture.exif = written
        }
        return try capture.write(to: directory, stem: stem).json
    }

    @Test func infoShowsLocationHeadingAndGravity() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let json = try Self.writeTilted(in: directory, stem: "tilted")
        let text = try CLITests.run(["info", json])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("33.8567844° S, 151.2152967° E, 12.5 m above sea level, ±8 m (EXIF GPS, 2018-02-05T07:11:43.07Z)"), "\(text.stdout)")
        #expect(text.stdout.contains("300° clockwise from magnetic north"))
        #expect(text.stdout.contains("pitch -17°"), "\(text.stdout)")
        #expect(text.stdout.contains("roll 6°"))
        let run = try CLITests.run(["info", "--json", json])
        #expect(run.status == 0)
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
        let geo = try #require(entries.first?["geo"] as? [String: Any])
        let location = try #require(geo["location"] as? [String: Any])
        #expect(abs((location["latitude"] as? Double ?? 0) - -33.8567844) < 1e-9)
        #expect(location["altitude_msl"] as? Double == 12.5)
        #expect(location["horizontal_error"] as? Double == 8)
        let heading = try #require(geo["heading"] as? [String: Any])
        #expect(heading["reference"] as? String == "magnetic")
        let gravity = try #require(geo["gravity"] as? [String: Any])
        #expect(abs((gravity["pitch"] as? Double ?? 0) + Self.pitchDown) < 1e-4)
        #expect(abs((gravity["roll"] as? Double ?? 0) - Self.roll) < 1e-4)
    }

    /// Hostile EXIF (a latitude of 91°) is a warning naming the photo; the capture is still
    /// described, rectified and clouded, without location.
    @Test func hostileEXIFIsAWarningAndTheCaptureStillWorks() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let json = try Self.writeTilted(in: directory, stem: "bad") { $0.latitude = 91 }
        let info = try CLITests.run(["info", json])
        #expect(info.status == 0)
        #expect(info.stdout.contains("location") && info.stdout.contains("not recorded"))
        #expect(info.stdout.contains("bad.jpg: EXIF GPS: latitude 91° is beyond 90°; location ignored"), "\(info.stdout)")
        let cloud = try CLITests.run(["cloud", json, "-o", directory + "/level.ply", "--frame", "level"])
        #expect(cloud.status == 0, "\(cloud.stderr)")
        #expect(cloud.stderr.contains("beyond 90°"))
        let enu = try CLITests.run(["cloud", json, "-o", directory + "/enu.ply", "--frame", "enu"])
        #expect(enu.status == 1)
        #expect(enu.stderr.contains("bad.jpg") && enu.stderr.contains("the enu frame needs a position") && enu.stderr.contains("(--frame)"), "\(enu.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/enu.ply"))
    }

    /// `rgbd rectify`'s intrinsics sidecar carries the camera's level and ENU frames.
    @Test func rectifySidecarCarriesTheFrames() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let json = try Self.writeTilted(in: directory, stem: "tilted")
        let run = try CLITests.run(["rectify", json, "-o", directory + "/out"])
        #expect(run.status == 0, "\(run.stderr)")
        let sidecar = try #require(try JSONSerialization.jsonObject(
            with: Data(FileSystem.readFile(directory + "/out/tilted.intrinsics.json"))) as? [String: Any])
        let frames = try #require(sidecar["frames"] as? [String: Any])
        let enu = try #require(frames["enu"] as? [String: Any])
        let origin = try #require(enu["origin"] as? [String: Any])
        #expect(abs((origin["latitude"] as? Double ?? 0) - -33.8567844) < 1e-9)
        #expect(origin["height"] as? Double == 12.5)
        let level = try #require(frames["level"] as? [String: Any])
        let m = try #require(level["transform"] as? [Double])
        // Row-major 4×4: the third row is "up" in camera axes, minus the true down.
        let r = SyntheticScene.tilt(pitchDown: Self.pitchDown, roll: Self.roll)
        #expect(abs(m[8] + r.row1.x) < 1e-6 && abs(m[9] + r.row1.y) < 1e-6 && abs(m[10] + r.row1.z) < 1e-6)
    }

    @Test func cloudFrameEnuWritesTheOriginAndWarnsOfMagneticNorth() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let json = try Self.writeTilted(in: directory, stem: "tilted")
        let run = try CLITests.run(["cloud", json, "-o", directory + "/out.ply", "--frame", "enu", "--ascii"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("magnetic"), "\(run.stderr)")
        let text = String(decoding: try FileSystem.readFile(directory + "/out.ply"), as: UTF8.self)
        #expect(text.contains("comment frame enu"))
        #expect(text.contains("comment geodetic origin WGS84 latitude -33.85678"), "\(text.prefix(2000))")
        #expect(text.contains("comment warning: the heading is magnetic"))
        // The floor (1.2 m below the camera) is the lowest surface: the lowest points lie there.
        let body = text.components(separatedBy: "end_header\n")[1]
        let heights = body.split(separator: "\n").compactMap { line in Double(line.split(separator: " ")[2]) }
        let lowest = try #require(heights.min())
        #expect(abs(lowest + 1.2) < 0.02, "\(lowest)")
        // --axes opengl applies to the camera frame only.
        let both = try CLITests.run(["cloud", json, "-o", directory + "/x.ply", "--frame", "level", "--axes", "opengl"])
        #expect(both.status == 64)
    }
}

extension GeoCLITests {
    /// `rgbd info --placemarks`: the places in the text and JSON; a malformed file is a
    /// usage error naming the file and line.
    @Test func infoPlacemarks() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let json = try Self.writeTilted(in: directory, stem: "tilted")
        let places = directory + "/places.csv"
        try Data("name,latitude,longitude,altitude\nOpera House,-33.8568,151.2153,10\nUluru,-25.3444,131.0369\n".utf8)
            .write(to: URL(fileURLWithPath: places))
        let run = try CLITests.run(["info", json, "--placemarks", places])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("placemarks     Opera House:"), "\(run.stdout)")
        #expect(run.stdout.contains("Uluru:"))
        let document = try CLITests.run(["info", "--json", json, "--placemarks", places])
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(document.stdout.utf8)) as? [[String: Any]])
        let listed = try #require(entries.first?["placemarks"] as? [[String: Any]])
        #expect(listed.count == 2)
        // GeographicLib (Geodesic.WGS84.Inverse from the photo's position): 2165071.844 m,
        // initial azimuth 290.4769819°.
        let uluru = listed[1]
        #expect(abs((uluru["distance"] as? Double ?? 0) - 2_165_071.844) < 1e-3)
        #expect(abs((uluru["bearing"] as? Double ?? 0) - 290.4769819) < 1e-6)
        try Data("A,95,3\n".utf8).write(to: URL(fileURLWithPath: places))
        let bad = try CLITests.run(["info", json, "--placemarks", places])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("places.csv") && bad.stderr.contains("line 1"), "\(bad.stderr)")
    }
}

extension GeoCLITests {
    /// `--frame level` on a Stray scan: every point of the world cloud turned so that the
    /// ARKit world's +y (up) is +z, `(x, y, z) → (x, −z, y)`; a Record3D world re-based on
    /// the first camera is refused with a message naming the scan.
    @Test func scanLevelFrameTurnsTheGravityAlignedWorld() throws {
        let scan = SyntheticScan(frameCount: 3, colorWidth: 160, colorHeight: 120)
        let (dir, path) = try SceneCLITests.write(.stray(), scan: scan)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let world = try CLITests.run(["cloud", path, "-o", dir + "/world.ply", "--voxel", "0", "-q"])
        let level = try CLITests.run(["cloud", path, "-o", dir + "/level.ply", "--voxel", "0", "-q", "--frame", "level"])
        #expect(world.status == 0 && level.status == 0, "\(world.stderr) \(level.stderr)")
        let a = try SceneCLITests.vertices(dir + "/world.ply"), b = try SceneCLITests.vertices(dir + "/level.ply")
        #expect(a.count == b.count && a.count > 1000)
        var worst = 0.0
        for (p, q) in zip(a, b) {
            let d = q - SIMD3(p.x, -p.z, p.y)
            worst = max(worst, (d * d).sum().squareRoot())
        }
        #expect(worst < 1e-5, "\(worst)")
        let r3d = try SceneCLITests.write(.record3D(), scan: scan)
        defer { try? FileManager.default.removeItem(atPath: r3d.dir) }
        let refused = try CLITests.run(["cloud", r3d.path, "-o", r3d.dir + "/level.ply", "--frame", "level"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("scan.r3d") && refused.stderr.contains("gravity-aligned"), "\(refused.stderr)")
    }
}

extension GeoCLITests {
    /// The point `distance` meters from (`latitude`, `longitude`) at azimuth `bearing`
    /// (degrees), on the WGS84 ellipsoid's local radii of curvature: good to far below a
    /// pixel's angle at a few hundred meters.
    static func destination(latitude: Double, longitude: Double, bearing: Double, distance: Double) -> (Double, Double) {
        let a = 6_378_137.0, e2 = 0.006_694_379_990_14
        let phi = latitude * .pi / 180, b = bearing * .pi / 180
        let w = 1 - e2 * sin(phi) * sin(phi)
        let m = a * (1 - e2) / (w * w.squareRoot()), n = a / w.squareRoot()
        return (latitude + distance * cos(b) / m * 180 / .pi, longitude + distance * sin(b) / (n * cos(phi)) * 180 / .pi)
    }

    /// `rgbd preview --placemarks`: a level camera facing 300° (true); a place 400 m away
    /// 10° right of the heading is drawn as a line at the column `cx + fx·tan 10°` of the
    /// rectified photo (found as the centre of the pixels the overlay changes in the
    /// panel's lower part); a place behind the camera changes nothing else.
    @Test func previewPlacemarksAreDrawnAtTheirColumn() throws {
        let directory = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (lat, lon) = (-33.8567844, 151.2152967)
        let capture = SyntheticCapture(colorWidth: 640, colorHeight: 480, depthWidth: 160, depthHeight: 120)
            .geotagged(latitude: lat, longitude: lon, altitude: 12.5, heading: 300)
        let json = try capture.write(to: directory, stem: "level").json
        let ahead = Self.destination(latitude: lat, longitude: lon, bearing: 310, distance: 400)
        let behind = Self.destination(latitude: lat, longitude: lon, bearing: 120, distance: 400)
        let places = directory + "/places.csv"
        try Data("Ahead,\(ahead.0),\(ahead.1)\nBehind,\(behind.0),\(behind.1)\n".utf8).write(to: URL(fileURLWithPath: places))
        let plain = try CLITests.run(["preview", json, "-o", directory + "/plain", "--no-tags", "--quiet"])
        let marked = try CLITests.run(["preview", json, "-o", directory + "/marked", "--no-tags", "--quiet", "--placemarks", places])
        #expect(plain.status == 0 && marked.status == 0, "\(plain.stderr) \(marked.stderr)")
        let a = try PNGCodec.decodeRGB(FileSystem.readFile(directory + "/plain/level.preview.png"))
        let b = try PNGCodec.decodeRGB(FileSystem.readFile(directory + "/marked/level.preview.png"))
        #expect(a.width == b.width && a.height == b.height)
        let layout = try PreviewLayout(width: PreviewLayout.defaultWidth, colorWidth: 640, colorHeight: 480)
        let (ox, oy) = layout.origin(of: .rectified)
        let k = capture.colorIntrinsics
        let u = k.cx + k.fx * tan(10 * Double.pi / 180)
        let expected = Double(ox) + (u + 0.5) * Double(layout.panelWidth) / Double(k.width)
        var changed: [Int] = [], elsewhere = 0
        for y in 0..<a.height {
            for x in 0..<a.width where (0..<3).contains(where: { a[x, y, $0] != b[x, y, $0] }) {
                let inPanel = x >= ox && x < ox + layout.panelWidth && y >= oy && y < oy + layout.panelHeight
                if !inPanel { elsewhere += 1 } else if y > oy + layout.panelHeight / 2 { changed.append(x) }
            }
        }
        #expect(elsewhere == 0, "\(elsewhere) pixels changed outside the rectified panel")
        #expect(changed.count > 20, "\(changed.count) pixels changed in the panel's lower half")
        let centre = Double(changed.reduce(0, +)) / Double(max(changed.count, 1))
        #expect(abs(centre - expected) < 1, "line at x = \(centre), expected \(expected)")
        #expect(changed.allSatisfy { abs(Double($0) - expected) < 4 }, "one line only")
    }
}

extension GeoCLITests {
    /// Record3D's two worlds told apart from the file, through the real binary, against
    /// the generator's truth: the gravity-aligned one (poses as ARKit tracks them, the new
    /// keys' `initPose` the identity) is said so by `info` and `--frame level` puts every
    /// point of the cloud on the room's true surfaces after the level turn, the floor at
    /// the room's floor height (constant z) and the walls on their vertical planes; the
    /// re-based one (pose 0 the identity) and one the file cannot decide (old keys, pose 0
    /// not the identity) are refused in one line that says why.
    @Test(arguments: [SyntheticScan.Layout.record3D(.r3d, keys: .new, portrait: false, world: .arkit),
                      .record3D(.exr, keys: .new, portrait: true, world: .arkit)])
    func record3DGravityAlignedWorldTakesTheLevelFrame(layout: SyntheticScan.Layout) throws {
        let scan = SyntheticScan(frameCount: 4, colorWidth: 160, colorHeight: 120)
        let (dir, path) = try SceneCLITests.write(layout, scan: scan)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let truth = scan.truth(for: layout)
        // The truth's world is the room's own (gravity-aligned, +y up).
        #expect(truth.worldFromRoom.rotation == SynthMatrix3.identity && truth.worldFromRoom.translation == .zero)
        let info = try CLITests.run(["info", "--json", path])
        #expect(info.status == 0, "\(info.stderr)")
        let object = (try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [[String: Any]])?.first
        #expect(object?["world"] as? String == "gravity_aligned")
        #expect((object?["world_basis"] as? String)?.contains("initPose is the identity") == true)

        let level = try CLITests.run(["cloud", path, "-o", dir + "/level.ply", "--voxel", "0", "--min-confidence", "0", "-q",
                                      "--frame", "level"])
        #expect(level.status == 0, "\(level.stderr)")
        let points = try SceneCLITests.vertices(dir + "/level.ply")
        #expect(points.count > 1000)
        let room = truth.room
        // Open floor: 10 cm clear of the walls and of the boxes' footprints (in the room's
        // x and z, which the level frame's x and −y are).
        func openFloor(_ q: SIMD3<Double>) -> Bool {
            let x = q.x, z = -q.y
            guard x > room.minCorner.x + 0.1, x < room.maxCorner.x - 0.1, z > room.minCorner.z + 0.1, z < room.maxCorner.z - 0.1
            else { return false }
            return room.boxes.allSatisfy { box in
                let dx = x - box.center.x, dz = z - box.center.z
                return (dx * dx + dz * dz).squareRoot() > (box.halfSize.x * box.halfSize.x + box.halfSize.z * box.halfSize.z).squareRoot() + 0.1
            }
        }
        var worst = 0.0, floor = 0, floorWorst = 0.0
        for q in points {
            // The level frame of ARKit's world: (x, y, z)_level = (x, −z, y)_world.
            worst = max(worst, room.distanceToSurface(SIMD3(q.x, q.z, -q.y)))
            if q.z < room.minCorner.y + 0.5 && openFloor(q) {
                floor += 1
                floorWorst = max(floorWorst, abs(q.z - room.minCorner.y))
            }
        }
        #expect(worst < 0.003, "a point \(worst) m off the room's surfaces")
        #expect(floor > 100 && floorWorst < 0.003, "\(floor) floor points, up to \(floorWorst) m off the floor's height")
    }

    @Test func record3DWorldsThatAreNotGravityAlignedRefuseTheLevelFrame() throws {
        let scan = SyntheticScan(frameCount: 3, colorWidth: 160, colorHeight: 120)
        let cases: [(SyntheticScan.Layout, String, String)] = [
            (.record3D(.r3d, keys: .new, portrait: false, world: .firstFrame), "first_frame", "pose 0 is the identity"),
            (.record3D(.r3d, keys: .old, portrait: false, world: .firstFrame), "first_frame", "pose 0 is the identity"),
            (.record3D(.r3d, keys: .old, portrait: false, world: .arkit), "undetermined", "no initPose"),
        ]
        for (layout, world, basis) in cases {
            let (dir, path) = try SceneCLITests.write(layout, scan: scan)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let info = try CLITests.run(["info", "--json", path])
            let object = (try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [[String: Any]])?.first
            #expect(object?["world"] as? String == world, "\(layout.name)")
            #expect((object?["world_basis"] as? String)?.contains(basis) == true, "\(layout.name): \(object?["world_basis"] ?? "")")
            for command in [["cloud"], ["fuse"], ["export", "--format", "nerfstudio"]] {
                let refused = try CLITests.run(command + [path, "-o", dir + "/out", "--frame", "level"])
                #expect(refused.status == 1, "\(layout.name) \(command[0])")
                let lines = refused.stderr.split(separator: "\n")
                #expect(lines.count == 1 && lines[0].contains("scan.r3d") && lines[0].contains("gravity-aligned")
                        && lines[0].contains(basis), "\(layout.name) \(command[0]): \(refused.stderr)")
                #expect(!FileManager.default.fileExists(atPath: dir + "/out"))
            }
        }
    }
}
