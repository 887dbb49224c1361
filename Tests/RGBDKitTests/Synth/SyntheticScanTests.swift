import Foundation
import RGBDKit
import RGBDSynth
import Testing

/// The synthetic LiDAR scan generator (RGBDSynth's `SyntheticScan`): its geometry is
/// checked against the room's exact surfaces and between frames, and the files of every
/// layout are decoded here with the tests' own code (quaternions, ZIP entries, LZFSE raw
/// blocks, EXR, .npy) and by independent tools (Python's zipfile, PyPI lzfse and OpenEXR,
/// ffprobe), not by rgbd's readers.
@Suite struct SyntheticScanTests {
    /// A small scan: 160×120 colour, 256×192 depth.
    static func small(frames: Int = 6, options: SyntheticScan.Options = .init()) -> SyntheticScan {
        SyntheticScan(frameCount: frames, colorWidth: 160, colorHeight: 120, options: options)
    }

    // MARK: Geometry

    @Test func renderedDepthBackProjectsOntoTrueSurfaces() throws {
        let scan = Self.small(frames: 200)
        var medium = 0
        for index in [0, 57, 133, 199] {
            let frame = scan.render(frame: index, color: false)
            let k = frame.depthCamera
            #expect(k.width == 256 && k.height == 192)
            // K scales from the colour size by 256/160 and 192/120.
            #expect(abs(k.fx - frame.colorCamera.fx * 256 / 160) < 1e-9)
            #expect(abs(k.cy - frame.colorCamera.cy * 192 / 120) < 1e-9)
            var worst = 0.0, counts = [0, 0, 0], highBeyondThreeMetres = 0
            for y in 0..<k.height {
                for x in 0..<k.width {
                    let z = Double(frame.depth[x, y])
                    #expect(z.isFinite && z > 0.2)
                    counts[Int(frame.confidence[x, y])] += 1
                    if z > scan.options.highConfidenceRange && frame.confidence[x, y] == 2 { highBeyondThreeMetres += 1 }
                    let world = Self.cameraToWorld(frame.pose, SIMD3((Double(x) - k.cx) / k.fx * z, (Double(y) - k.cy) / k.fy * z, z))
                    worst = max(worst, scan.room.distanceToSurface(world))
                }
            }
            // Float32 depth: about 1e-7 relative.
            #expect(worst < 2e-6, "frame \(index): a back-projected point is \(worst) m off the surfaces")
            // High confidence is the nearer part (within 3 m, off edges and grazing views):
            // a third of the view or more from the room's centre.
            #expect(counts[2] > k.width * k.height / 3, "a third of the pixels or more are high confidence: \(counts)")
            #expect(highBeyondThreeMetres == 0, "no high confidence beyond 3 m (the noise grows with depth²)")
            medium += counts[1]
        }
        #expect(medium > 0, "grazing angles and depth edges have medium confidence")
    }

    @Test func confidenceIsLowBeyondFourMetres() {
        let scan = Self.small(frames: 1500)
        var sawFar = false
        for index in stride(from: 0, to: 1500, by: 50) {
            let frame = scan.render(frame: index, color: false)
            for (z, c) in zip(frame.depth.samples, frame.confidence.samples) {
                if z > 4 { #expect(c == 0); sawFar = true } else { #expect(c > 0) }
            }
        }
        #expect(sawFar, "the path sees beyond 4 m somewhere")
    }

    @Test func consecutiveFramesAgree() {
        let scan = Self.small(frames: 40)
        for (i, j) in [(0, 1), (10, 11), (20, 35)] {
            let a = scan.render(frame: i, color: false), b = scan.render(frame: j, color: false)
            let k = b.depthCamera
            var checked = 0, agreeing = 0
            for y in stride(from: 0, to: 192, by: 3) {
                for x in stride(from: 0, to: 256, by: 3) where a.confidence[x, y] == 2 {
                    let z = Double(a.depth[x, y])
                    let world = Self.cameraToWorld(a.pose, SIMD3((Double(x) - k.cx) / k.fx * z, (Double(y) - k.cy) / k.fy * z, z))
                    let p = Self.worldToCamera(b.pose, world)
                    let u = k.fx * p.x / p.z + k.cx, v = k.fy * p.y / p.z + k.cy
                    let u0 = Int(u.rounded(.down)), v0 = Int(v.rounded(.down))
                    guard p.z > 0, u0 >= 0, v0 >= 0, u0 + 1 < k.width, v0 + 1 < k.height else { continue }
                    let corners = [(u0, v0), (u0 + 1, v0), (u0, v0 + 1), (u0 + 1, v0 + 1)]
                    guard corners.allSatisfy({ b.confidence[$0.0, $0.1] == 2 }) else { continue }
                    // Inverse depth is affine across a plane: interpolate it bilinearly.
                    let fu = u - Double(u0), fv = v - Double(v0)
                    let inv = corners.map { 1 / Double(b.depth[$0.0, $0.1]) }
                    let top = inv[0] + (inv[1] - inv[0]) * fu, bottom = inv[2] + (inv[3] - inv[2]) * fu
                    let rendered = 1 / (top + (bottom - top) * fv)
                    checked += 1
                    if abs(rendered - p.z) < 1e-3 { agreeing += 1 }
                }
            }
            #expect(checked > 2000, "frames \(i)→\(j): \(checked) points")
            // Occlusions and the creases between planes account for the rest.
            #expect(Double(agreeing) > 0.97 * Double(checked), "frames \(i)→\(j): \(agreeing) of \(checked) agree within 1 mm")
        }
    }

    @Test func distanceToSurfaceIsExact() {
        let room = SyntheticRoom()
        #expect(room.distanceToSurface(SIMD3(0, 0, 0)) == 0)              // on the floor
        #expect(abs(room.distanceToSurface(SIMD3(0, 1.5, 0.5)) - 1.5) < 1e-12)   // 1.5 to floor and ceiling
        #expect(abs(room.distanceToSurface(SIMD3(2.4, 2, 0.5)) - 0.1) < 1e-12)   // 0.1 from the wall x = 2.5
        #expect(abs(room.distanceToSurface(SIMD3(2.6, 2, 0.5)) - 0.1) < 1e-12)   // outside, too
        let box = room.boxes[0]   // yaw 0
        let top = box.center + SIMD3(0, box.halfSize.y + 0.05, 0)
        #expect(abs(room.distanceToSurface(top) - 0.05) < 1e-12)
    }

    @Test func framesDiffer() {
        let scan = Self.small(frames: 30)
        let a = scan.render(frame: 0).color, b = scan.render(frame: 29).color
        #expect(a.width == 160 && a.height == 120 && a.samples.count == 160 * 120 * 3)
        let changed = zip(a.samples, b.samples).filter { abs(Int($0) - Int($1)) > 10 }.count
        #expect(changed > a.samples.count / 4)
        var distinct = Set<Int>()
        for i in stride(from: 0, to: a.samples.count, by: 3) {
            let r = Int(a.samples[i]), g = Int(a.samples[i + 1]), b = Int(a.samples[i + 2])
            distinct.insert(r << 16 | g << 8 | b)
        }
        #expect(distinct.count > 500, "textured, not flat: \(distinct.count) colours")
    }

    @Test func noiseAndHolesAreSeeded() {
        var options = SyntheticScan.Options()
        options.depthNoise = 0.005
        options.holes = true
        let a = Self.small(options: options).render(frame: 2, color: false)
        let b = Self.small(options: options).render(frame: 2, color: false)
        #expect(identicalBits(a.depth.samples, b.depth.samples))
        let exact = Self.small().render(frame: 2, color: false)
        let holes = a.depth.samples.filter { $0.isNaN }.count
        #expect(holes > 50 && holes < 256 * 192 / 10)
        #expect(zip(a.depth.samples, a.confidence.samples).allSatisfy { $0.isFinite || $1 == 0 })
        #expect(!identicalBits(a.depth.samples.filter(\.isFinite), exact.depth.samples.filter(\.isFinite)))
        options.seed = 2
        let c = Self.small(options: options).render(frame: 2, color: false)
        #expect(!identicalBits(a.depth.samples, c.depth.samples))
    }

    // MARK: Stray Scanner

    @Test func strayFolderDecodes() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = SyntheticScan.Options()
        options.framesWithoutDepth = [3]
        options.framesWithOtherDepthSize = [4]
        options.videoPreset = "ultrafast"
        let scan = Self.small(frames: 6, options: options)
        let path = directory + "/scan"
        let written = try scan.write(layout: .stray(odometry: .v15), to: path)
        #expect(written.truth == directory + "/scan.truth.json")
        let truth = scan.truth(for: .stray())
        #expect(truth.worldFromRoom == .identity)

        // odometry.csv, v15: header, ", " separators, per-frame K, empty distortion centre.
        let lines = try Self.lines(path + "/odometry.csv")
        #expect(lines.first == "timestamp, frame, x, y, z, qx, qy, qz, qw, fx, fy, cx, cy, distortion_center_x, distortion_center_y")
        #expect(lines.count == 7)
        for (i, line) in lines.dropFirst().enumerated() {
            let fields = line.components(separatedBy: ", ")
            #expect(fields.count == 15)
            #expect(fields[1] == String(format: "%06d", i))
            #expect(fields[13] == "" && fields[14] == "")
            let values = fields[2..<13].compactMap(Double.init)
            #expect(values.count == 11)
            try Self.expectPose(position: Array(values[0..<3]), xyzw: Array(values[3..<7]), equals: truth.poses[i])
            let timestamp = try #require(Double(fields[0]))
            #expect(abs(timestamp - truth.timestamps[i]) < 1e-9)
            #expect(abs(values[7] - truth.colorCamera.fx) < 1e-9 && abs(values[10] - truth.colorCamera.cy) < 1e-9)
        }
        #expect(abs(truth.timestamps[1] - truth.timestamps[0] - 1.0 / 60) < 1e-9)

        // camera_matrix.csv: K at the RGB size, row by row.
        let k = try Self.lines(path + "/camera_matrix.csv").map { $0.split(separator: ",").compactMap { Double($0) } }
        #expect(k.count == 3 && k.allSatisfy { $0.count == 3 })
        #expect(k[0][0] == truth.colorCamera.fx && k[0][2] == truth.colorCamera.cx && k[1][1] == truth.colorCamera.fy
                && k[1][2] == truth.colorCamera.cy && k[2] == [0, 0, 1] && k[0][1] == 0 && k[1][0] == 0)

        // Depth: 16-bit PNG millimetres; confidence: 8-bit PNG 0/1/2.
        for i in 0..<6 {
            let name = String(format: "%06d", i)
            let depthFile = path + "/depth/\(name).png", confidenceFile = path + "/confidence/\(name).png"
            if i == 3 {
                #expect(!FileManager.default.fileExists(atPath: depthFile) && !FileManager.default.fileExists(atPath: confidenceFile))
                continue
            }
            let frame = scan.render(frame: i, color: false, depthSize: i == 4 ? SIMD2(320, 240) : nil)
            let png = try PNGCodec.decodeGray16(Array(try Data(contentsOf: URL(fileURLWithPath: depthFile))))
            #expect(png.width == (i == 4 ? 320 : 256) && png.height == (i == 4 ? 240 : 192))
            #expect(png.samples == frame.depth.samples.map { UInt16((Double($0) * 1000).rounded()) })
            let confidence = try PNGCodec.decodeRGB(Array(try Data(contentsOf: URL(fileURLWithPath: confidenceFile))))
            #expect(stride(from: 0, to: confidence.samples.count, by: 3).map { confidence.samples[$0] } == frame.confidence.samples)
        }

        // imu.csv at 100 Hz, m/s²: |a| near g (walking adds up to about 1.5 m/s²).
        let imu = try Self.lines(path + "/imu.csv")
        #expect(imu.first == "timestamp, a_x, a_y, a_z, alpha_x, alpha_y, alpha_z")
        #expect(imu.count == 1 + 9)
        for line in imu.dropFirst() {
            let v = line.components(separatedBy: ", ").compactMap(Double.init)
            #expect(v.count == 7)
            let a = (v[1] * v[1] + v[2] * v[2] + v[3] * v[3]).squareRoot()
            #expect(a > 8 && a < 11.5)
        }

        // The video: as many frames as the scan, HEVC tagged hvc1, at the colour size.
        let probe = try Self.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                             "stream=codec_name,codec_tag_string,width,height,pix_fmt,nb_read_frames",
                                             "-of", "default=noprint_wrappers=1", path + "/rgb.mp4"])
        #expect(probe.contains("codec_name=hevc") && probe.contains("codec_tag_string=hvc1"))
        #expect(probe.contains("width=160") && probe.contains("height=120") && probe.contains("pix_fmt=yuv420p"))
        #expect(probe.contains("nb_read_frames=6"), "ffprobe: \(probe)")

        // The truth file is JSON with the poses.
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: written.truth))) as? [String: Any])
        let frames = try #require(json["frames"] as? [[String: Any]])
        #expect(frames.count == 6 && (frames[3]["depth_size"] is NSNull))
        let c2w = try #require(frames[5]["camera_to_world"] as? [[Double]])
        #expect(abs(c2w[1][3] - truth.poses[5].translation.y) < 1e-12)
    }

    @Test func strayOdometryVariantsAndNpy() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = SyntheticScan.Options()
        options.videoPreset = "ultrafast"
        let scan = Self.small(frames: 3, options: options)
        let truth = scan.truth(for: .stray())

        try scan.write(layout: .stray(odometry: .legacy, depth: .npy, video: .h264, imuInG: true), to: directory + "/legacy")
        let legacy = try Self.lines(directory + "/legacy/odometry.csv")
        #expect(legacy.count == 3)
        for (i, line) in legacy.enumerated() {
            let v = line.components(separatedBy: ", ").compactMap(Double.init)
            #expect(v.count == 7)
            try Self.expectPose(position: Array(v[0..<3]), xyzw: Array(v[3..<7]), equals: truth.poses[i])
        }
        let imu = try Self.lines(directory + "/legacy/imu.csv").dropFirst().map { $0.components(separatedBy: ", ").compactMap(Double.init) }
        #expect(imu.allSatisfy { abs(($0[1] * $0[1] + $0[2] * $0[2] + $0[3] * $0[3]).squareRoot() - 1) < 0.18 })
        let probe = try Self.run("ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=codec_name,nb_read_frames",
                                             "-of", "default=noprint_wrappers=1", directory + "/legacy/rgb.mp4"])
        #expect(probe.contains("codec_name=h264") && probe.contains("nb_read_frames=3"))

        // .npy, read with the test's own parser: v1 header, '<u2', shape (192, 256).
        let npy = Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/legacy/depth/000001.npy")))
        #expect(Array(npy[0..<8]) == [0x93] + Array("NUMPY".utf8) + [1, 0])
        let headerLength = Int(npy[8]) | Int(npy[9]) << 8
        #expect((10 + headerLength) % 64 == 0)
        let header = String(decoding: npy[10..<(10 + headerLength)], as: UTF8.self)
        #expect(header.contains("'descr': '<u2'") && header.contains("'shape': (192, 256)") && header.hasSuffix("\n"))
        let values = stride(from: 10 + headerLength, to: npy.count, by: 2).map { UInt16(npy[$0]) | UInt16(npy[$0 + 1]) << 8 }
        #expect(values == scan.render(frame: 1, color: false).depth.samples.map { UInt16((Double($0) * 1000).rounded()) })
        // numpy agrees.
        let python = try testPython()
        let shape = try Self.run(python, ["-c", "import numpy, sys; a = numpy.load(sys.argv[1]); print(a.dtype, a.shape, int(a[100, 128]))",
                                          directory + "/legacy/depth/000001.npy"])
        #expect(shape.trimmingCharacters(in: .whitespacesAndNewlines) == "uint16 (192, 256) \(values[100 * 256 + 128])")

        try scan.write(layout: .stray(odometry: .v9), to: directory + "/v9")
        let v9 = try Self.lines(directory + "/v9/odometry.csv")
        #expect(v9.first == "timestamp, frame, x, y, z, qx, qy, qz, qw" && v9.count == 4)
        #expect(v9.dropFirst().allSatisfy { $0.components(separatedBy: ", ").count == 9 })
    }

    // MARK: Record3D

    @Test func record3DArchiveDecodes() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = SyntheticScan.Options()
        options.holes = true
        options.framesWithoutDepth = [2]
        let scan = SyntheticScan(frameCount: 5, colorWidth: 192, colorHeight: 144, options: options)
        let path = directory + "/scan.r3d"
        let written = try scan.write(layout: .record3D(.r3d, keys: .new), to: path)
        #expect(written.truth == directory + "/scan.truth.json")

        // Python's zipfile reads it, every CRC checks, in the expected order.
        let listing = try Self.run(try testPython(), ["-c", """
            import sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            assert z.testzip() is None
            print(' '.join(i.filename + ':' + str(i.file_size) + ':' + str(i.compress_type) for i in z.infolist()))
            """, path])
        let entries = listing.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map { $0.split(separator: ":").map(String.init) }
        let names = entries.map { $0[0] }
        #expect(names == ["metadata", "rgbd/0.jpg", "rgbd/0.depth", "rgbd/0.conf", "rgbd/1.jpg", "rgbd/1.depth", "rgbd/1.conf",
                          "rgbd/2.jpg", "rgbd/3.jpg", "rgbd/3.depth", "rgbd/3.conf", "rgbd/4.jpg", "rgbd/4.depth", "rgbd/4.conf", "icon"])
        #expect(entries.allSatisfy { $0[2] == "0" })

        // The entries, read with the test's own ZIP walk.
        let zip = try Self.zipEntries(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let metadataBytes = try #require(zip["metadata"])
        let metadata = try #require(try JSONSerialization.jsonObject(with: Data(metadataBytes)) as? [String: Any])
        try Self.checkRecord3DMetadata(metadata, scan: scan, portrait: false, newKeys: true)

        // Depth: LZFSE raw block of float32 metres, NaN holes; confidence likewise.
        let frame = scan.render(frame: 1, color: false)
        let depth = try Self.unwrapLZFSE(try #require(zip["rgbd/1.depth"]))
        #expect(depth.count == 256 * 192 * 4)
        let floats = stride(from: 0, to: depth.count, by: 4).map {
            Float(bitPattern: UInt32(depth[$0]) | UInt32(depth[$0 + 1]) << 8 | UInt32(depth[$0 + 2]) << 16 | UInt32(depth[$0 + 3]) << 24)
        }
        #expect(identicalBits(floats, frame.depth.samples))
        #expect(floats.contains { $0.isNaN })
        let conf = try Self.unwrapLZFSE(try #require(zip["rgbd/1.conf"]))
        #expect(conf == frame.confidence.samples)
        let jpeg = try JPEGCodec.decodeRGB(try #require(zip["rgbd/1.jpg"]))
        #expect(jpeg.width == 192 && jpeg.height == 144)

        // The truth's transform re-bases the room on frame 0 (OpenGL axes).
        let truth = scan.truth(for: .record3D())
        let first = SyntheticTrajectory().pose(frame: 0)
        let rebased = Self.worldToCamera(first, first.translation + SIMD3(0.3, -0.2, 0.9))
        let mapped = truth.worldFromRoom.apply(first.translation + SIMD3(0.3, -0.2, 0.9))
        #expect(abs(mapped.x - rebased.x) < 1e-12 && abs(mapped.y + rebased.y) < 1e-12 && abs(mapped.z + rebased.z) < 1e-12)
        #expect(abs(truth.distanceToSurface(mapped) - scan.room.distanceToSurface(first.translation + SIMD3(0.3, -0.2, 0.9))) < 1e-12)
    }

    @Test func record3DPortraitOldKeys() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scan = SyntheticScan(frameCount: 3, colorWidth: 192, colorHeight: 144)
        try scan.write(layout: .record3D(.r3d, keys: .old, portrait: true), to: directory + "/p.r3d")
        let zip = try Self.zipEntries(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/p.r3d"))))
        let metadataBytes = try #require(zip["metadata"])
        let metadata = try #require(try JSONSerialization.jsonObject(with: Data(metadataBytes)) as? [String: Any])
        #expect(Set(metadata.keys) == ["h", "w", "fps", "K", "poses"])
        try Self.checkRecord3DMetadata(metadata, scan: scan, portrait: true, newKeys: false)
        let jpeg = try JPEGCodec.decodeRGB(try #require(zip["rgbd/0.jpg"]))
        #expect(jpeg.width == 144 && jpeg.height == 192)
        let portraitDepth = try Self.unwrapLZFSE(try #require(zip["rgbd/0.depth"]))
        #expect(portraitDepth.count == 192 * 256 * 4)
        // Portrait depth lands on true surfaces too.
        let frame = scan.render(frame: 2, portrait: true, color: false)
        let k = frame.depthCamera
        #expect(k.width == 192 && k.height == 256 && k.fx == k.fy)
        for (x, y) in [(10, 10), (96, 128), (180, 250)] {
            let z = Double(frame.depth[x, y])
            let p = Self.cameraToWorld(frame.pose, SIMD3((Double(x) - k.cx) / k.fx * z, (Double(y) - k.cy) / k.fy * z, z))
            #expect(scan.room.distanceToSurface(p) < 2e-6)
        }
    }

    @Test func record3DExrFolder() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = SyntheticScan.Options()
        options.holes = true
        let scan = SyntheticScan(frameCount: 2, colorWidth: 192, colorHeight: 144, options: options)
        let path = directory + "/exr"
        try scan.write(layout: .record3D(.exr, keys: .new), to: path)
        let metadata = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path + "/metadata.json"))) as? [String: Any])
        try Self.checkRecord3DMetadata(metadata, scan: scan, portrait: false, newKeys: true)
        #expect(FileManager.default.fileExists(atPath: path + "/rgb/1.jpg"))
        let frame = scan.render(frame: 1, color: false)
        // The PyPI OpenEXR package reads the one float channel Z (NaN kept).
        let script = """
            import sys, OpenEXR, numpy
            f = OpenEXR.File(sys.argv[1])
            ch = f.channels()
            z = ch['Z'].pixels
            assert list(ch.keys()) == ['Z'] and z.dtype == numpy.float32, (list(ch.keys()), z.dtype)
            h = f.header()
            print(z.shape[0], z.shape[1], int(numpy.isnan(z).sum()), repr(float(z[100, 128])), h['compression'])
            """
        let out = try Self.run(try testPython(), ["-c", script, path + "/depth/1.exr"]).split(separator: " ")
        #expect(out.count >= 5)
        #expect(out[0] == "192" && out[1] == "256")
        #expect(Int(out[2]) == frame.depth.samples.filter(\.isNaN).count)
        let centre = frame.depth[128, 100]
        #expect(centre.isNaN ? out[3] == "nan" : Float(Double(out[3]) ?? 0) == centre)
        #expect(out[4].contains("NO_COMPRESSION"))
    }

    @Test func pythonLZFSECompressesAndRoundTrips() throws {
        let python = try testPython()
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = SyntheticScan.Options()
        options.lzfse = .python(python)
        let scan = SyntheticScan(frameCount: 2, colorWidth: 192, colorHeight: 144, options: options)
        try scan.write(layout: .record3D(.r3d), to: directory + "/c.r3d")
        let zip = try Self.zipEntries(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/c.r3d"))))
        let depth = try #require(zip["rgbd/1.depth"])
        #expect(depth.count < 256 * 192 * 4, "compressed")
        #expect(Array(depth.prefix(3)) == Array("bvx".utf8))
        // Decompressed by the same package, it is the raw depth.
        let raw = directory + "/raw"
        try Data(depth).write(to: URL(fileURLWithPath: raw))
        let digest = try Self.run(python, ["-c", "import sys, lzfse, hashlib; print(hashlib.sha256(lzfse.decompress(open(sys.argv[1], 'rb').read())).hexdigest())", raw])
        var expected: [UInt8] = []
        for v in scan.render(frame: 1, color: false).depth.samples { withUnsafeBytes(of: v.bitPattern.littleEndian) { expected += $0 } }
        try Data(expected).write(to: URL(fileURLWithPath: raw))
        let plain = try Self.run(python, ["-c", "import sys, hashlib; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())", raw])
        #expect(digest == plain)
    }

    @Test func videoEncoderFailuresAreErrors() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = SyntheticScan.Options()
        options.ffmpeg = "rgbd-no-such-ffmpeg"
        #expect(throws: RGBDError.self) { try Self.small(frames: 2, options: options).write(layout: .stray(), to: directory + "/a") }
        options.ffmpeg = "ffmpeg"
        options.videoPreset = "no-such-preset"
        #expect(throws: RGBDError.self) { try Self.small(frames: 40, options: options).write(layout: .stray(), to: directory + "/b") }
        #expect(throws: RGBDError.self) {
            try SyntheticScan(frameCount: 2, colorWidth: 161, colorHeight: 120).write(layout: .stray(), to: directory + "/c")
        }
    }

    @Test func imuIsPlausible() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = SyntheticScan.Options()
        options.videoPreset = "ultrafast"
        let scan = Self.small(frames: 120, options: options)
        try scan.write(layout: .stray(odometry: .v9, imuInG: true), to: directory + "/s")
        let rows = try Self.lines(directory + "/s/imu.csv").dropFirst().map { $0.components(separatedBy: ", ").compactMap(Double.init) }
        #expect(rows.count == 199)
        // The phone is held up, screen toward the user, landscape: gravity mostly along the
        // device's x axis (the image's up), turning at most a few radians per second.
        let meanX = rows.map { $0[1] }.reduce(0, +) / Double(rows.count)
        #expect(abs(meanX) > 0.7)
        #expect(rows.allSatisfy { ($0[4] * $0[4] + $0[5] * $0[5] + $0[6] * $0[6]).squareRoot() < 3 })
        #expect(rows.contains { ($0[4] * $0[4] + $0[5] * $0[5] + $0[6] * $0[6]).squareRoot() > 0.05 })
        #expect(zip(rows, rows.dropFirst()).allSatisfy { abs($1[0] - $0[0] - 0.01) < 1e-9 })
    }

    // MARK: Determinism

    @Test func writingTwiceGivesTheSameBytes() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = SyntheticScan.Options()
        options.holes = true
        options.depthNoise = 0.003
        options.videoPreset = "ultrafast"
        let scan = Self.small(frames: 4, options: options)
        for layout: SyntheticScan.Layout in [.stray(), .record3D(.r3d), .record3D(.exr, keys: .old, portrait: true)] {
            let suffix = layout == .record3D(.r3d) ? ".r3d" : ""
            let a = try scan.write(layout: layout, to: directory + "/a-\(layout.name)" + suffix)
            let b = try scan.write(layout: layout, to: directory + "/b-\(layout.name)" + suffix)
            #expect(try Self.contents(a.truth) == Self.contents(b.truth))
            for file in try Self.files(a.scan) where !file.hasSuffix("rgb.mp4") {
                #expect(try Self.contents(a.scan + file) == Self.contents(b.scan + file), "\(layout.name): \(file)")
            }
        }
    }

    // MARK: Helpers (the tests' own geometry and decoders)

    /// `R·p + t` from the pose's rows.
    static func cameraToWorld(_ pose: SynthPose, _ p: SIMD3<Double>) -> SIMD3<Double> {
        let r = pose.rows
        let world = (0..<3).map { i in r[i][0] * p.x + r[i][1] * p.y + r[i][2] * p.z + r[i][3] }
        return SIMD3(world[0], world[1], world[2])
    }

    /// `Rᵀ·(p − t)` from the pose's rows.
    static func worldToCamera(_ pose: SynthPose, _ p: SIMD3<Double>) -> SIMD3<Double> {
        let r = pose.rows
        let d = [p.x - r[0][3], p.y - r[1][3], p.z - r[2][3]]
        return SIMD3(r[0][0] * d[0] + r[1][0] * d[1] + r[2][0] * d[2],
                     r[0][1] * d[0] + r[1][1] * d[1] + r[2][1] * d[2],
                     r[0][2] * d[0] + r[1][2] * d[1] + r[2][2] * d[2])
    }

    /// The rotation matrix (rows) of a Hamilton quaternion given `x, y, z, w`.
    static func matrix(xyzw q: [Double]) -> [[Double]] {
        let (x, y, z, w) = (q[0], q[1], q[2], q[3])
        return [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    }

    /// A written pose (position, unit quaternion xyzw) equals `pose`.
    static func expectPose(position: [Double], xyzw: [Double], equals pose: SynthPose, flipYZ: Bool = false) throws {
        let norm = xyzw.map { $0 * $0 }.reduce(0, +).squareRoot()
        #expect(abs(norm - 1) < 1e-9, "quaternion norm \(norm)")
        var m = matrix(xyzw: xyzw)
        if flipYZ { m = m.map { [$0[0], -$0[1], -$0[2]] } }   // R_cv = R_gl · diag(1, −1, −1)
        let rows = pose.rows
        for i in 0..<3 {
            #expect(abs(position[i] - rows[i][3]) < 1e-9)
            for j in 0..<3 { #expect(abs(m[i][j] - rows[i][j]) < 1e-9, "R[\(i)][\(j)] \(m[i][j]) vs \(rows[i][j])") }
        }
    }

    /// Checks Record3D metadata against the scan, decoding poses with the tests' own code:
    /// OpenGL axes, re-based on frame 0 (computed here from the trajectory directly).
    static func checkRecord3DMetadata(_ metadata: [String: Any], scan: SyntheticScan, portrait: Bool, newKeys: Bool) throws {
        let w = try #require(metadata["w"] as? Int), h = try #require(metadata["h"] as? Int)
        #expect(portrait ? (w, h) == (scan.colorHeight, scan.colorWidth) : (w, h) == (scan.colorWidth, scan.colorHeight))
        #expect(metadata["fps"] as? Int == 60)
        let k = try #require(metadata["K"] as? [Double])
        let camera = scan.colorCamera(portrait: portrait)
        // Column-major: fx, 0, 0, 0, fy, 0, cx, cy, 1.
        #expect(k == [camera.fx, 0, 0, 0, camera.fy, 0, camera.cx, camera.cy, 1])
        #expect(camera.cx > Double(w) / 2 - 3 && camera.cx < Double(w) / 2 + 3)
        let poses = try #require(metadata["poses"] as? [[Double]])
        #expect(poses.count == scan.frameCount)
        // Pose 0 is the identity.
        #expect(abs(poses[0][3] - 1) < 1e-12 && poses[0].enumerated().allSatisfy { $0.offset == 3 || abs($0.element) < 1e-12 })
        let first = scan.trajectory.pose(frame: 0).rows
        for (i, entry) in poses.enumerated() {
            #expect(entry.count == 7)
            // Expected, from the room poses: R = R0ᵀ·R_i in OpenGL axes, t = R0_glᵀ·(t_i − t_0).
            let room = scan.trajectory.pose(frame: i).rows
            let flip = [1.0, -1, -1]
            var rotation = [[Double]](repeating: [0, 0, 0], count: 3), position = [0.0, 0, 0]
            for a in 0..<3 {
                for b in 0..<3 {
                    // (R0·F)ᵀ·(Ri·F) = F·R0ᵀ·Ri·F
                    rotation[a][b] = flip[a] * flip[b] * (0..<3).map { first[$0][a] * room[$0][b] }.reduce(0, +)
                }
                position[a] = flip[a] * (0..<3).map { first[$0][a] * (room[$0][3] - first[$0][3]) }.reduce(0, +)
            }
            let expected = SynthPose(rotation: SynthMatrix3(rows: SIMD3(rotation[0][0], rotation[0][1], rotation[0][2]),
                                                            SIMD3(rotation[1][0], rotation[1][1], rotation[1][2]),
                                                            SIMD3(rotation[2][0], rotation[2][1], rotation[2][2])),
                                     translation: SIMD3(position[0], position[1], position[2]))
            try expectPose(position: Array(entry[4..<7]), xyzw: Array(entry[0..<4]), equals: expected)
            // The truth (OpenCV axes) is the same pose with the axes flipped.
            let truth = scan.truth(for: .record3D(.r3d, keys: .new, portrait: portrait))
            try expectPose(position: Array(entry[4..<7]), xyzw: Array(entry[0..<4]), equals: truth.poses[i], flipYZ: true)
        }
        guard newKeys else { return }
        let depth = scan.depthCamera(portrait: portrait)
        #expect(metadata["dw"] as? Int == depth.width && metadata["dh"] as? Int == depth.height)
        #expect((metadata["frameTimestamps"] as? [Double])?.count == scan.frameCount)
        let perFrame = try #require(metadata["perFrameIntrinsicCoeffs"] as? [[Double]])
        #expect(perFrame.count == scan.frameCount && perFrame[0] == [camera.fx, camera.fy, camera.cx, camera.cy])
        let initPose = try #require(metadata["initPose"] as? [Double])
        try expectPose(position: Array(initPose[4..<7]), xyzw: Array(initPose[0..<4]), equals: scan.trajectory.pose(frame: 0), flipYZ: true)
        #expect(metadata["cameraType"] as? Int == 0)
    }

    /// The stored entries of a ZIP, found through its central directory.
    static func zipEntries(_ bytes: [UInt8]) throws -> [String: [UInt8]] {
        func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
        func u32(_ o: Int) -> Int { u16(o) | u16(o + 2) << 16 }
        let end = try #require((0...(bytes.count - 22)).reversed().first { u32($0) == 0x0605_4B50 })
        var offset = u32(end + 16)
        var entries: [String: [UInt8]] = [:]
        for _ in 0..<u16(end + 10) {
            #expect(u32(offset) == 0x0201_4B50)
            let size = u32(offset + 20), nameLength = u16(offset + 28), local = u32(offset + 42)
            let name = String(decoding: bytes[(offset + 46)..<(offset + 46 + nameLength)], as: UTF8.self)
            #expect(u32(local) == 0x0403_4B50 && u16(local + 8) == 0)
            let data = local + 30 + u16(local + 26) + u16(local + 28)
            entries[name] = Array(bytes[data..<(data + size)])
            offset += 46 + nameLength + u16(offset + 30) + u16(offset + 32)
        }
        return entries
    }

    /// The bytes of an LZFSE stream made of raw (`bvx-`) blocks.
    static func unwrapLZFSE(_ bytes: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = [], o = 0
        while true {
            let magic = String(decoding: bytes[o..<(o + 4)], as: UTF8.self)
            if magic == "bvx$" { #expect(o + 4 == bytes.count); return out }
            #expect(magic == "bvx-")
            let n = Int(bytes[o + 4]) | Int(bytes[o + 5]) << 8 | Int(bytes[o + 6]) << 16 | Int(bytes[o + 7]) << 24
            out += bytes[(o + 8)..<(o + 8 + n)]
            o += 8 + n
        }
    }

    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rgbd-scan-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init).filter { !$0.isEmpty }
    }

    static func contents(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    /// The files under `root` (a folder or a file), as paths relative to it ("" for a file).
    static func files(_ root: String) throws -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else { return [""] }
        return try FileManager.default.subpathsOfDirectory(atPath: root).sorted().compactMap { sub in
            var d: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root + "/" + sub, isDirectory: &d)
            return d.boolValue ? nil : "/" + sub
        }
    }

    /// Runs a tool found on PATH (or at a path); its standard output; throws on failure.
    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let pipe = Pipe(), errors = Pipe()
        process.standardOutput = pipe
        process.standardError = errors
        try process.run()
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ToolFailed(description: "\(tool) failed: \(String(decoding: err, as: UTF8.self))")
        }
        return String(decoding: out, as: UTF8.self)
    }

    struct ToolFailed: Error, CustomStringConvertible { var description: String }
}
