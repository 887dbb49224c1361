import Testing
@testable import RGBDCapture
@testable import RGBDMarkers
@testable import RGBDScan
@testable import RGBDKit
import RGBDSynth

/// Registration of single captures by their tags against the generator's true camera
/// poses, on held-out rooms (seeds not used while tuning): the issue's goal, measured side
/// by side with the same detector's corners-alone poses (PnP) through the same pose graph.
@Suite struct MarkerRegistrationTests {
    /// Relative pose errors (meters, degrees) between every pair of registered captures.
    static func pairErrors(_ registration: TagRegistration, truth: [SynthPose]) -> [(Double, Double)] {
        var errors: [(Double, Double)] = []
        let indices = registration.cameras.keys.sorted()
        for (n, a) in indices.enumerated() {
            for b in indices[(n + 1)...] {
                guard let ca = registration.cameras[a], let cb = registration.cameras[b] else { continue }
                let estimated = ca.inverse.composed(with: cb)
                let real = MarkerTests.pose(truth[a]).inverse.composed(with: MarkerTests.pose(truth[b]))
                let d = estimated.translation - real.translation
                errors.append(((d * d).sum().squareRoot(), MarkerTests.degrees(TagMath.angleBetween(estimated, real))))
            }
        }
        return errors
    }

    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return .nan }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// Held-out rooms (4 tags of 16 cm, 3 cameras 1.5–3.5 m away): median relative pose
    /// error ≤ 3 mm and ≤ 0.2°, and below the corners-alone registration's.
    @Test func heldOutRoomsMeetTheGoal() throws {
        var combined: [(Double, Double)] = [], cornersOnly: [(Double, Double)] = []
        for seed in [UInt64(101), 202, 303] {
            let (room, cameras) = SyntheticTagScene.room(seed: seed)
            var found: [CaptureTags] = []
            for camera in cameras {
                let synthetic = room.capture(camera: camera, colorWidth: 2016, colorHeight: 1512, depthWidth: 768, depthHeight: 576)
                let (_, capture) = try MarkerTests.rectified(synthetic.scene)
                found.append(CaptureTags.find(in: capture, options: TagOptions(size: 0.16)))
            }
            let registration = try TagRegistration.solve(found)
            #expect(registration.leftOut.isEmpty, "seed \(seed): \(registration.leftOut)")
            #expect(registration.originTag == 3)
            combined += Self.pairErrors(registration, truth: cameras)
            let pnp = found.map { capture -> CaptureTags in
                var c = capture
                c.tags = c.tags.map { var t = $0; t.pose = t.cornerPose; return t }
                return c
            }
            cornersOnly += Self.pairErrors(try TagRegistration.solve(pnp), truth: cameras)
        }
        let mm = Self.median(combined.map(\.0)) * 1000, deg = Self.median(combined.map(\.1))
        let pnpMM = Self.median(cornersOnly.map(\.0)) * 1000, pnpDeg = Self.median(cornersOnly.map(\.1))
        print("tag registration, median relative pose error over \(combined.count) pairs: "
              + "corners + depth \(mm) mm \(deg)°; corners alone (PnP) \(pnpMM) mm \(pnpDeg)°")
        #expect(mm <= 3 && deg <= 0.2, "\(mm) mm, \(deg)°")
        #expect(mm < pnpMM && deg < pnpDeg, "combined \(mm) mm \(deg)°, PnP \(pnpMM) mm \(pnpDeg)°")
    }

    /// A multi-view set written as the exporter writes it and read back through the real
    /// reader (lens tables, rectification), its tags found and registered.
    static func registerWallSet(_ set: SyntheticTagSet) throws -> TagRegistration {
        let folder = try TemporaryDirectory()
        var found: [CaptureTags] = []
        for path in try set.write(to: folder.path) {
            let capture = try Capture.load(json: path)
            found.append(CaptureTags.find(in: capture.rectified(), options: TagOptions(size: 0.16)))
        }
        return try TagRegistration.solve(found)
    }

    /// Per registered capture, the true error its pose causes over what it sees: the RMS
    /// displacement of the wall points seen through a 5×5 grid of its view (out to the
    /// image's edges), once the estimated world is moved onto the true one by the rigid
    /// transform that best maps the estimated tags' corners onto the true ones (the world
    /// is one tag's frame: a common error of all poses misplaces no cloud).
    static func trueWallErrors(_ registration: TagRegistration, _ set: SyntheticTagSet) throws -> [Int: Double] {
        let origin = try #require(set.scene.tags.first { $0.id == registration.originTag })
        let toOrigin = MarkerTests.pose(origin.pose.inverse)
        var estimated: [SIMD3<Double>] = [], truth: [SIMD3<Double>] = []
        for (id, w) in registration.tags {
            let placement = try #require(set.scene.tags.first { $0.id == id })
            for m in TagDetection.modelCorners(size: placement.size) {
                estimated.append(w.apply(m))
                truth.append(toOrigin.apply(placement.pose.apply(m)))
            }
        }
        let alignment = try #require(TagMath.rigidFit(model: estimated, measured: truth))
        var errors: [Int: Double] = [:]
        for (i, c) in registration.cameras {
            let real = MarkerTests.pose(set.cameras[i]), inOrigin = try #require(set.camera(i, inFrameOfTag: registration.originTag))
            var sum = 0.0, count = 0.0
            for u in stride(from: -0.6, through: 0.6, by: 0.3) {
                for v in stride(from: -0.45, through: 0.45, by: 0.225) {
                    let direction = real.rotate(SIMD3(u, v, 1))
                    let depth = -real.translation.z / direction.z   // the wall: z = 0 in the set's world
                    guard depth > 0 else { continue }
                    let local = SIMD3(u, v, 1) * depth   // in the camera
                    let p = MarkerTests.pose(inOrigin).apply(local)
                    let d = alignment.apply(c.apply(local)) - p
                    sum += (d * d).sum()
                    count += 1
                }
            }
            errors[i] = (sum / max(count, 1)).squareRoot()
        }
        return errors
    }

    /// Held-out multi-view sets (seeds not used while tuning): three 16 cm tags on one wall
    /// spread over 2 m, five cameras 1–4 m away, 1920×1440 color and 640×480 depth with
    /// σ = 0.5 mm × z² noise (4.5 mm at 3 m), written in the exporter layout with lens
    /// tables. The median relative pose error is within 3 mm and 0.2°; each capture's
    /// residual (leave one tag out) is at least a quarter of its true error over what it
    /// sees and typically above it; a capture placed by one tag has none.
    @Test func heldOutWallSetsMeetTheGoal() throws {
        var pairs: [(Double, Double)] = [], ratios: [Double] = []
        for seed in [UInt64(21), 22, 23, 24] {
            let set = SyntheticTagSet.wall(seed: seed)
            let registration = try Self.registerWallSet(set)
            #expect(registration.leftOut.isEmpty, "seed \(seed): \(registration.leftOut)")
            #expect(registration.originTag == 0)
            pairs += Self.pairErrors(registration, truth: set.cameras)
            let wall = try Self.trueWallErrors(registration, set)
            for (i, r) in registration.residuals.sorted(by: { $0.key < $1.key }) {
                let error = try #require(wall[i])
                guard let residual = r.translationRMS else {
                    #expect(r.tags.count == 1 && r.checkedTags == 0 && r.rotationRMS == nil, "seed \(seed) capture \(i)")
                    continue
                }
                #expect(r.checkedTags >= 1 && r.rotationRMS != nil)
                #expect(residual >= 0.25 * error, "seed \(seed) capture \(i): residual \(residual * 1000) mm, true \(error * 1000) mm")
                ratios.append(residual / error)
            }
        }
        let mm = Self.median(pairs.map(\.0)) * 1000, deg = Self.median(pairs.map(\.1))
        print("wall sets, median relative pose error over \(pairs.count) pairs: \(mm) mm \(deg)°; "
              + "worst \((pairs.map(\.0).max() ?? .nan) * 1000) mm \(pairs.map(\.1).max() ?? .nan)°; "
              + "residual / true error over the view: median \(Self.median(ratios)), least \(ratios.min() ?? .nan)")
        #expect(mm <= 3 && deg <= 0.2, "\(mm) mm, \(deg)°")
        #expect(Self.median(ratios) >= 1, "\(ratios)")
    }

    /// A capture that sees none of the others' tags is left out with the reason; the origin
    /// tag can be chosen, and the world is its frame (the tag's pose is the identity, and a
    /// camera's pose is the inverse of its measurement of that tag).
    @Test func captureSharingNoTagIsLeftOut() throws {
        let (room, cameras) = SyntheticTagScene.room(seed: 7, tags: 3, cameras: 2)
        var found: [CaptureTags] = []
        for camera in cameras {
            let synthetic = room.capture(camera: camera, colorWidth: 1344, colorHeight: 1008, depthWidth: 512, depthHeight: 384)
            found.append(CaptureTags.find(in: try MarkerTests.rectified(synthetic.scene, width: 1344, height: 1008).rectified,
                                          options: TagOptions(size: 0.16)))
        }
        var lonely = SyntheticScene()
        lonely.tags = [try MarkerTests.tag(99, at: SIMD3(0, 0, 2))]
        found.append(CaptureTags.find(in: try MarkerTests.rectified(lonely, width: 1344, height: 1008).rectified,
                                      options: TagOptions(size: 0.16)))
        let registration = try TagRegistration.solve(found, originTag: 8)
        #expect(registration.originTag == 8)
        #expect(registration.leftOut.map(\.index) == [2])
        #expect(registration.leftOut.first?.reason.contains("shares no tag") == true)
        let world = try #require(registration.tags[8])
        #expect(TagMath.angleBetween(world, .identity) < 1e-12 && (world.translation * world.translation).sum() < 1e-20)
        // Camera 0 in the world of tag 8: the truth is tag8⁻¹ ∘ camera0 (both in the room's world).
        let tag8 = try #require(room.tags.first { $0.id == 8 })
        let truth = MarkerTests.pose(tag8.pose).inverse.composed(with: MarkerTests.pose(cameras[0]))
        let c0 = try #require(registration.cameras[0])
        let d = c0.translation - truth.translation
        #expect((d * d).sum().squareRoot() < 0.01 && MarkerTests.degrees(TagMath.angleBetween(c0, truth)) < 0.5)
        #expect(throws: RGBDError.self) { try TagRegistration.solve(found, originTag: 1000) }
    }
}

/// The `scene.json` reader on files a user edited or a tool damaged: every defect is one
/// line naming the file and the key, and relative paths are taken from the scene's folder.
@Suite struct RegisteredSceneFileTests {
    static func document(originTag: String = "3", capture: String = "captures/a.json") -> String {
        let k = #"{"width": 64, "height": 48, "fx": 50, "fy": 50, "cx": 32, "cy": 24}"#
        return """
        {"rgbd_scene": "registered captures", "version": 1, "origin_tag": \(originTag), "tag_family": "tag36h11",
         "frames": [{"capture": "\(capture)", "image": "/photos/a.jpg",
                     "camera_to_world": [0, -1, 0, 0.5, 1, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 1],
                     "color_intrinsics": \(k), "depth_intrinsics": \(k)}]}
        """
    }

    @Test func originTagsThatAreNoIdAreErrorsNotTraps() throws {
        for bad in ["1e300", "-1", "2.5", "\"3\""] {
            do {
                _ = try RegisteredScene.parse(Array(Self.document(originTag: bad).utf8), file: "s/scene.json")
                Issue.record("origin_tag \(bad) accepted")
            } catch let error as RGBDError {
                #expect(error.description.hasPrefix("s/scene.json: "))
                #expect(error.description.contains("origin_tag"))
                #expect(!error.description.contains("\n"))
            }
        }
        #expect(try RegisteredScene.parse(Array(Self.document().utf8), file: "s/scene.json").originTag == 3)
    }

    @Test func relativePathsAreTakenFromTheSceneFolder() throws {
        let folder = try TemporaryDirectory()
        let files = StagedFiles()
        try files.stage(Path.join(folder.path, "scene.json"), bytes: Array(Self.document().utf8))
        try files.commit()
        let scene = try Scene.open(folder.path)
        let storage = try #require(scene.storage as? RegisteredStorage)
        #expect(storage.sources[0]?.capture == Path.join(folder.path, "captures/a.json"))
        #expect(storage.sources[0]?.image == "/photos/a.jpg")
        // The pose as written: a quarter turn about z, camera at (0.5, 0, 2).
        #expect(scene.frames[0].pose.translation == SIMD3(0.5, 0, 2))
        #expect(scene.frames[0].pose.row0 == SIMD3(0, -1, 0))
    }
}
