import Foundation
import Testing
@testable import RGBDKit
import RGBDSynth

/// Scans read as scenes, checked against the generator's ground truth (its own geometry
/// code, independent of rgbd's): merged points on the true surfaces, poses where the
/// cameras were, colors of the right frame; both apps' pose conventions give the same
/// world geometry, and the wrong convention would not.
@Suite(.serialized) struct SceneTests {
    /// A small scan: 8 frames, 320×240 color, 256×192 depth.
    static let scan = SyntheticScan(frameCount: 8, colorWidth: 320, colorHeight: 240)

    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rgbd-scene-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes `scan` in `layout` and opens it.
    static func written(_ layout: SyntheticScan.Layout, scan: SyntheticScan = scan) throws
        -> (scene: Scene, truth: SyntheticScan.Truth, path: String) {
        let dir = try directory()
        let isArchive: Bool
        if case .record3D(.r3d, _, _, _) = layout { isArchive = true } else { isArchive = false }
        let path = dir + (isArchive ? "/scan.r3d" : "/scan")
        try scan.write(layout: layout, to: path)
        return (try Scene.open(path), scan.truth(for: layout), path)
    }

    static let layouts: [SyntheticScan.Layout] = [
        .stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false),
        .stray(odometry: .v9, depth: .png, video: .h264, imuInG: true),
        .stray(odometry: .legacy, depth: .png, video: .hevc, imuInG: false),
        .stray(odometry: .v9, depth: .npy, video: .hevc, imuInG: false),
        .record3D(.r3d, keys: .new, portrait: false),
        .record3D(.r3d, keys: .old, portrait: false),
        .record3D(.r3d, keys: .new, portrait: true),
        .record3D(.exr, keys: .new, portrait: false),
        .record3D(.exr, keys: .old, portrait: true),
        .record3D(.r3d, keys: .new, portrait: false, world: .arkit),
        .record3D(.exr, keys: .new, portrait: true, world: .arkit),
        .record3D(.r3d, keys: .old, portrait: false, world: .arkit),
    ]

    /// Every merged point lies on a true surface of the room (distances, not snapshots),
    /// in every layout and so in both apps' worlds and pose conventions.
    @Test(arguments: layouts)
    func mergedPointsLieOnTheTrueSurfaces(layout: SyntheticScan.Layout) throws {
        let (scene, truth, path) = try Self.written(layout)
        defer { try? FileManager.default.removeItem(atPath: Path.directory(of: path)) }
        #expect(scene.frames.count == Self.scan.frameCount)
        #expect(scene.world == layout.worldFromTheFile, "\(layout.name): \(scene.worldBasis ?? "")")
        var options = SceneCloudOptions()
        options.voxel = 0
        options.minConfidence = .low
        let cloud = try SceneCloud.build(scene, options: options)
        #expect(cloud.count > 100_000, "\(cloud.count) points")
        var far = 0, worst = 0.0
        for i in stride(from: 0, to: cloud.count, by: 7) {
            let p = SIMD3(Double(cloud.positions[3 * i]), Double(cloud.positions[3 * i + 1]), Double(cloud.positions[3 * i + 2]))
            let d = truth.distanceToSurface(p)
            worst = max(worst, d)
            if d > 0.003 { far += 1 }
        }
        // Millimeter depth files round by 0.5 mm; float32 Record3D depth is exact.
        #expect(far == 0, "\(far) sampled points more than 3 mm off the true surfaces (worst \(worst) m)")
    }

    /// The poses read are the true camera-to-world poses with OpenCV axes, and reading a
    /// file with the other app's convention would put the points far off the surfaces:
    /// the test above can tell the conventions apart.
    @Test(arguments: [SyntheticScan.Layout.stray(odometry: .v9, depth: .png, video: .hevc, imuInG: false),
                      .record3D(.r3d, keys: .new, portrait: false)])
    func posesAreTheTrueOnesAndTheWrongConventionFails(layout: SyntheticScan.Layout) throws {
        let (scene, truth, path) = try Self.written(layout)
        defer { try? FileManager.default.removeItem(atPath: Path.directory(of: path)) }
        for (frame, info) in scene.frames.enumerated() {
            let expected = truth.poses[frame]
            for (r, row) in [info.pose.row0, info.pose.row1, info.pose.row2].enumerated() {
                for c in 0..<3 { #expect(abs(row[c] - expected.rotation[r, c]) < 1e-5) }
            }
            let d = info.pose.translation - expected.translation
            #expect((d * d).sum().squareRoot() < 1e-5)
        }
        // Frame 5's depth back-projected with its pose, and with the pose misread in the
        // other convention (OpenCV axes taken for OpenGL ones).
        let frame = try scene.frame(at: 5, color: false)
        let k = frame.info.depthIntrinsics
        var right = 0.0, wrong = 0.0, n = 0
        for v in stride(from: 0, to: frame.depth.height, by: 8) {
            for u in stride(from: 0, to: frame.depth.width, by: 8) {
                let z = Double(frame.depth[u, v])
                guard z.isFinite else { continue }
                let p = SIMD3((Double(u) - k.cx) * z / k.fx, (Double(v) - k.cy) * z / k.fy, z)
                right += truth.distanceToSurface(frame.pose.apply(p))
                wrong += truth.distanceToSurface(frame.pose.toOpenGLCamera().apply(p))
                n += 1
            }
        }
        #expect(n > 500)
        #expect(right / Double(n) < 0.002, "mean distance \(right / Double(n)) m")
        #expect(wrong / Double(n) > 0.05, "the wrong convention gives \(wrong / Double(n)) m: the check cannot tell")
    }

    /// The same pixel of the same frame, read from a Stray folder (ARKit world) and from a
    /// Record3D archive (first-frame world), is the same point of the room.
    @Test func bothAppsWorldsAreTheSameGeometry() throws {
        let stray = try Self.written(.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false))
        let record3D = try Self.written(.record3D(.r3d, keys: .new, portrait: false))
        defer {
            try? FileManager.default.removeItem(atPath: Path.directory(of: stray.path))
            try? FileManager.default.removeItem(atPath: Path.directory(of: record3D.path))
        }
        let a = try stray.scene.frame(at: 6, color: false), b = try record3D.scene.frame(at: 6, color: false)
        var compared = 0
        for (u, v) in [(40, 30), (128, 96), (200, 150), (250, 10)] {
            func point(_ f: SceneFrame) -> SIMD3<Double>? {
                let z = Double(f.depth[u, v]), k = f.info.depthIntrinsics
                guard z.isFinite else { return nil }
                return f.pose.apply(SIMD3((Double(u) - k.cx) * z / k.fx, (Double(v) - k.cy) * z / k.fy, z))
            }
            guard let p = point(a), let q = point(b) else { continue }
            let d = stray.truth.roomPoint(p) - record3D.truth.roomPoint(q)
            #expect((d * d).sum().squareRoot() < 0.002, "pixel (\(u), \(v)): \(d)")
            compared += 1
        }
        #expect(compared >= 3)
    }

    /// Each frame's color is its own frame's image (not a neighbour's: the camera moves),
    /// within the loss of the video or JPEG coding.
    @Test(arguments: [SyntheticScan.Layout.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false),
                      .record3D(.r3d, keys: .new, portrait: false)])
    func colorsAreTheFramesOwn(layout: SyntheticScan.Layout) throws {
        let (scene, _, path) = try Self.written(layout)
        defer { try? FileManager.default.removeItem(atPath: Path.directory(of: path)) }
        func meanDifference(_ a: ColorImage, _ b: ColorImage) -> Double {
            zip(a.samples, b.samples).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(a.samples.count)
        }
        var positions: [Int] = []
        var errors: [Double] = [], neighbours: [Double] = []
        try scene.forEachFrame([1, 4, 7]) { frame in
            let color = try #require(frame.color)
            let truth = Self.scan.render(frame: frame.info.index).color
            let neighbour = Self.scan.render(frame: frame.info.index - 1).color
            #expect(color.width == truth.width && color.height == truth.height)
            errors.append(meanDifference(color, truth))
            neighbours.append(meanDifference(color, neighbour))
            positions.append(frame.info.index)
        }
        #expect(positions == [1, 4, 7])
        for (e, n) in zip(errors, neighbours) {
            #expect(e < 4, "mean difference to the true frame \(e)")
            #expect(n > e * 1.5, "the neighbouring frame is as close (\(n) vs \(e)): the check cannot tell frames apart")
        }
    }

    /// Thinning keeps one point per occupied cell, the mean of the cell's points: no two
    /// points share a cell, and means stay near the true surfaces (within half a cell's
    /// diagonal where a cell spans an edge).
    @Test func voxelThinningAveragesWithinCells() throws {
        let (scene, truth, path) = try Self.written(.record3D(.r3d, keys: .new, portrait: false))
        defer { try? FileManager.default.removeItem(atPath: Path.directory(of: path)) }
        var options = SceneCloudOptions()
        options.voxel = 0.02
        let cloud = try SceneCloud.build(scene, options: options)
        #expect(cloud.frames == scene.frames.count)
        // One point per cell: no two points share a cell.
        var cells = Set<SIMD3<Int>>()
        for i in 0..<cloud.count {
            let p = SIMD3(cloud.positions[3 * i], cloud.positions[3 * i + 1], cloud.positions[3 * i + 2])
            let cell = SIMD3(Int((p.x / 0.02).rounded(.down)), Int((p.y / 0.02).rounded(.down)), Int((p.z / 0.02).rounded(.down)))
            #expect(cells.insert(cell).inserted)
            // A mean of points on one plane stays on it; at edges within half a cell.
            #expect(truth.distanceToSurface(SIMD3(Double(p.x), Double(p.y), Double(p.z))) < 0.0175)
        }
        #expect(cloud.count > 1000 && cloud.count < cloud.inputPoints / 2)
    }
}

extension SceneTests {
    /// Record3D's world rule on the metadata's numbers: pose 0 the identity (to float32
    /// rounding) is the re-based world whatever `initPose` says; pose 0 turned with
    /// `initPose` the identity is ARKit's world; pose 0 turned without `initPose`, or with
    /// one that is not the identity, is not decided. A turn of 0.01° or a shift of 1 mm is
    /// no identity.
    @Test func record3DWorldRule() {
        let identity: [Double] = [0, 0, 0, 1, 0, 0, 0]
        let rounded: [Double] = [1e-8, -2e-8, 0, -1, 3e-8, 0, -1e-8]   // q and −q are one rotation
        let half = 0.01 * Double.pi / 180 / 2
        let turned: [Double] = [0.2437, 0.7541, 0.3521, -0.4979, 0.2722, -0.0438, 0.9583]   // the real export's pose 0
        let slightlyTurned: [Double] = [sin(half), 0, 0, cos(half), 0, 0, 0]
        let shifted: [Double] = [0, 0, 0, 1, 0, 0.001, 0]
        #expect(Record3DMetadata.world(firstPose: identity, initPose: nil).0 == .firstFrame)
        #expect(Record3DMetadata.world(firstPose: rounded, initPose: turned).0 == .firstFrame)
        #expect(Record3DMetadata.world(firstPose: turned, initPose: identity).0 == .gravityAligned)
        #expect(Record3DMetadata.world(firstPose: turned, initPose: rounded).0 == .gravityAligned)
        #expect(Record3DMetadata.world(firstPose: turned, initPose: nil).0 == .undetermined)
        #expect(Record3DMetadata.world(firstPose: turned, initPose: shifted).0 == .undetermined)
        #expect(Record3DMetadata.world(firstPose: slightlyTurned, initPose: identity).0 == .gravityAligned)
        #expect(Record3DMetadata.world(firstPose: shifted, initPose: identity).0 == .gravityAligned)
    }
}

extension SyntheticScan.Layout {
    var isRecord3D: Bool { if case .record3D = self { return true } else { return false } }

    /// The world rgbd must find in the layout's file: Stray's is ARKit's; Record3D's
    /// re-based world has pose 0 the identity; its ARKit world is recognised by `initPose`
    /// the identity, which the old keys lack (then the file cannot say).
    var worldFromTheFile: SceneWorld {
        switch self {
        case .stray: .gravityAligned
        case .record3D(_, _, _, .firstFrame): .firstFrame
        case .record3D(_, .new, _, .arkit): .gravityAligned
        case .record3D(_, .old, _, .arkit): .undetermined
        }
    }
}

/// Stray scans with lens tables (`distortion/NNNNNN.bin` and the odometry's distortion
/// centre): frames are rectified with Apple's model, as captures are.
@Suite(.serialized) struct StrayLensTableTests {
    /// A forward table (rectified → distorted) `0.04·(r/r_max)²` and its inverse, by bisection.
    static let forward: [Float] = (0..<42).map { i in Float(0.04 * pow(Double(i) / 41, 2)) }
    static func inverse(_ table: [Float]) -> [Float] {
        (0..<42).map { i -> Float in
            let rq = Double(i) / 41          // as a fraction of r_max
            guard rq > 0 else { return 0 }
            var lo = 0.0, hi = rq
            for _ in 0..<60 {
                let mid = (lo + hi) / 2
                if mid * (1 + 0.04 * mid * mid) < rq { lo = mid } else { hi = mid }
            }
            return Float(lo / rq - 1)
        }
    }

    /// Mean and worst distance of sampled merged points to the true surfaces.
    static func distances(_ scene: Scene, _ truth: SyntheticScan.Truth) throws -> (mean: Double, far: Int) {
        var options = SceneCloudOptions()
        options.voxel = 0
        options.minConfidence = .low
        let cloud = try SceneCloud.build(scene, options: options)
        var sum = 0.0, n = 0, far = 0
        for i in stride(from: 0, to: cloud.count, by: 5) {
            let d = truth.distanceToSurface(SIMD3(Double(cloud.positions[3 * i]), Double(cloud.positions[3 * i + 1]),
                                                  Double(cloud.positions[3 * i + 2])))
            sum += d
            n += 1
            if d > 0.01 { far += 1 }
        }
        return (sum / Double(max(n, 1)), far)
    }

    @Test func framesWithLensTablesAreRectified() throws {
        let scan = SyntheticScan(frameCount: 4, colorWidth: 320, colorHeight: 240)
        let layout = SyntheticScan.Layout.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false)
        let dir = try SceneTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/scan"
        try scan.write(layout: layout, to: path)
        let truth = scan.truth(for: layout)
        // Depth only (the video would need re-encoding): its depth maps distorted through the
        // lens, i.e. resampled with the inverse table, a table file per frame and the
        // distortion centre (at the color size) in each odometry row.
        try FileManager.default.removeItem(atPath: path + "/rgb.mp4")
        let center = SIMD2(171.3, 115.8)
        try FileManager.default.createDirectory(atPath: path + "/distortion", withIntermediateDirectories: true)
        let inverse = Self.inverse(Self.forward)
        for frame in 0..<4 {
            let name = String(format: "%06d", frame)
            let depthPath = "\(path)/depth/\(name).png"
            let stored = try PNGCodec.decodeGray16(FileSystem.readFile(depthPath))
            let meters = DepthMap(width: stored.width, height: stored.height, channels: 1,
                                  samples: stored.samples.map { $0 == 0 ? .nan : Float($0) / 1000 })
            let lens = LensDistortion(center: center * SIMD2(256.0 / 320, 192.0 / 240), table: inverse, width: 256, height: 192)
            let distorted = Rectifier().rectify(meters, distortion: lens)
            let millimeters = distorted.samples.map { $0.isFinite ? UInt16(($0 * 1000).rounded()) : 0 }
            try Data(PNGCodec.encodeGray16(width: 256, height: 192, samples: millimeters)).write(to: URL(fileURLWithPath: depthPath))
            let table = Self.forward.flatMap { withUnsafeBytes(of: $0.bitPattern.littleEndian) { Array($0) } }
            try Data(table).write(to: URL(fileURLWithPath: "\(path)/distortion/\(name).bin"))
        }
        var lines = try String(contentsOfFile: path + "/odometry.csv", encoding: .utf8).components(separatedBy: "\n")
        for i in 1..<lines.count where !lines[i].isEmpty {
            var fields = lines[i].components(separatedBy: ",")
            fields[13] = " \(center.x)"
            fields[14] = " \(center.y)"
            lines[i] = fields.joined(separator: ",")
        }
        try lines.joined(separator: "\n").write(toFile: path + "/odometry.csv", atomically: true, encoding: .utf8)

        let rectified = try Self.distances(Scene.open(path), truth)
        #expect(rectified.mean < 0.004, "mean distance \(rectified.mean) m with the tables applied")
        // The same frames used as recorded (tables removed) are measurably off: the test
        // can tell rectified from not.
        try FileManager.default.removeItem(atPath: path + "/distortion")
        let recorded = try Self.distances(Scene.open(path), truth)
        #expect(recorded.mean > 2 * rectified.mean && recorded.far > rectified.far,
                "as recorded \(recorded) vs rectified \(rectified)")
    }
}

/// The one rule for confidence levels every scene command and front goes through.
@Suite struct ConfidenceLevelTests {
    @Test func levelsAreZeroToTwoByNumberOrName() throws {
        for level in ConfidenceLevel.allCases {
            #expect(try ConfidenceLevel(validating: Int(level.rawValue)) == level)
            #expect(try ConfidenceLevel(validating: "\(level.rawValue)") == level)
            #expect(try ConfidenceLevel(validating: level.name) == level)
        }
        #expect(ConfidenceLevel.low < .medium && ConfidenceLevel.medium < .high)
        for bad in [-1, 3, 256, Int.min] {
            #expect(throws: RGBDError.self) { try ConfidenceLevel(validating: bad) }
            do { _ = try ConfidenceLevel(validating: bad) } catch let error as RGBDError {
                #expect(error.kind == .invalidArgument && error.argument == .minConfidence)
                #expect(error.message == "the confidence levels are 0 (low), 1 (medium) and 2 (high), not \(bad)")
            }
        }
        #expect(throws: RGBDError.self) { try ConfidenceLevel(validating: "High") }
        #expect(throws: RGBDError.self) { try ConfidenceLevel(validating: "") }
    }
}
