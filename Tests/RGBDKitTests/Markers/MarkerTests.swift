import Testing
@testable import RGBDMarkers
@testable import RGBDKit
import RGBDSynth

/// AprilTag detection and tag poses against the synthetic generator's truth: tags painted
/// from the library's own code tables at known poses, rendered through a distorting lens,
/// compressed as JPEG, rectified.
@Suite struct MarkerTests {
    /// A capture of `scene` at 2016×1512 color and 768×576 depth, JPEG-compressed (quality
    /// 92), depth with 2 mm of noise, times `depthScale`; rectified.
    static func rectified(_ scene: SyntheticScene, width: Int = 2016, height: Int = 1512, depthScale: Float = 1,
                          jpeg: Bool = true) throws -> (synthetic: SyntheticCapture, rectified: RectifiedCapture) {
        var synthetic = SyntheticCapture(colorWidth: width, colorHeight: height, depthWidth: 768, depthHeight: 576, scene: scene)
        synthetic.colorNoise = 3
        synthetic.depthNoise = 0.002
        var color = synthetic.renderColor(supersampling: 2)
        if jpeg { color = try JPEGCodec.decodeRGB(JPEGCodec.encode(color, quality: 92)) }
        var depth = synthetic.renderDepth()
        for i in depth.samples.indices { depth.samples[i] *= depthScale }
        let capture = Capture(jsonPath: "tags.json", imagePath: "tags.jpg", calibration: synthetic.calibration,
                              depth: depth, color: color)
        return (synthetic, capture.rectified())
    }

    static func tag(_ id: Int, size: Double = 0.16, at center: SIMD3<Double>, yaw: Double = 0, pitch: Double = 0,
                    roll: Double = 0, family: TagFamily = .tag36h11) throws -> SyntheticTag {
        try #require(SyntheticTag(family: family, id: id, size: size,
                                  pose: SyntheticTag.pose(center: center, yaw: yaw, pitch: pitch, roll: roll)))
    }

    static func pose(_ p: SynthPose) -> Pose {
        Pose(row0: p.rotation.r0, row1: p.rotation.r1, row2: p.rotation.r2, translation: p.translation)
    }

    static func degrees(_ radians: Double) -> Double { radians * 180 / .pi }

    /// Three tags at 1.5–3.5 m, turned differently: every one found with its ID, its corners
    /// within a fraction of a pixel of the true corners' projections, in the documented order.
    /// The mean signed corner error is near zero in both axes: with the library's
    /// pixel-corner convention left unconverted it would be +0.5 px in x and y.
    @Test func cornersAreTheTrueCornersInRGBDPixelConvention() throws {
        var scene = SyntheticScene()
        scene.wallZ = 6
        scene.tags = [try Self.tag(0, at: SIMD3(-0.5, -0.2, 1.5), yaw: 0.5, roll: 0.3),
                      try Self.tag(7, at: SIMD3(0.3, 0.1, 2.4), pitch: -0.4, roll: -1.2),
                      try Self.tag(42, at: SIMD3(0.2, -0.4, 3.5), yaw: -0.2, roll: 2.5)]
        let (synthetic, capture) = try Self.rectified(scene)
        let (tags, rejected) = TagDetector().detect(capture.color)
        #expect(rejected.isEmpty)
        #expect(tags.map(\.id) == [0, 7, 42])
        // The library's worker threads change nothing: one thread finds the same tags.
        let single = TagDetector(threads: 1).detect(capture.color)
        #expect(single.tags == tags && single.rejected == rejected)
        var sum = SIMD2<Double>.zero, worst = 0.0, count = 0.0
        for tag in tags {
            let truth = try #require(scene.tags.first { $0.id == tag.id })
            let projected = truth.cornersInCamera.map { synthetic.colorIntrinsics.project($0) }
            for (found, expected) in zip(tag.corners, projected) {
                let d = found - expected
                sum += d
                count += 1
                worst = max(worst, (d * d).sum().squareRoot())
            }
            #expect(!tag.duplicateID)
        }
        let mean = sum / count
        #expect(worst < 0.35, "worst corner error \(worst) px")
        #expect(abs(mean.x) < 0.12 && abs(mean.y) < 0.12, "mean corner offset \(mean) px")
    }

    /// tagStandard41h12 (data bits outside its border) is read with its own detector, and a
    /// tag36h11 detector does not read it.
    @Test func tagStandard41h12() throws {
        var scene = SyntheticScene()
        scene.tags = [try Self.tag(1234, at: SIMD3(0.1, 0, 2), yaw: 0.3, family: .tagStandard41h12)]
        let (synthetic, capture) = try Self.rectified(scene)
        let found = TagDetector(family: .tagStandard41h12).detect(capture.color).tags
        #expect(found.map(\.id) == [1234])
        let projected = scene.tags[0].cornersInCamera.map { synthetic.colorIntrinsics.project($0) }
        for (a, b) in zip(found.first?.corners ?? [], projected) { #expect(((a - b) * (a - b)).sum().squareRoot() < 0.4) }
        #expect(TagDetector(family: .tag36h11).detect(capture.color).tags.isEmpty)
    }

    /// A capture without tags has none, and nothing rejected.
    @Test func noTags() throws {
        let (_, capture) = try Self.rectified(SyntheticScene(), width: 1008, height: 756)
        let found = CaptureTags.find(in: capture, options: TagOptions(size: 0.16))
        #expect(found.tags.isEmpty && found.rejected.isEmpty && found.scale == nil && found.warnings.isEmpty)
    }

    /// A tag whose outer ring runs off the image is left out as cut by the border; the same
    /// tag fully inside is kept. A tag 1 cm wide at 3 m (about 8 pixels) is not decoded.
    @Test func borderAndTooSmall() throws {
        let synthetic = SyntheticCapture(colorWidth: 2016, colorHeight: 1512)
        let k = synthetic.colorIntrinsics
        // Centre so that the black square's left edge is 4 px inside the image: the white
        // ring (one cell, 14.5 px at 2 m) is cut.
        let z = 2.0, size = 0.16
        let halfPixels = size / 2 * k.fx / z
        let u = halfPixels + 4, x = (u - k.cx) * z / k.fx
        var scene = SyntheticScene()
        scene.tags = [try Self.tag(3, at: SIMD3(x, 0, z)), try Self.tag(4, at: SIMD3(0.2, -0.3, z)),
                      try Self.tag(5, size: 0.01, at: SIMD3(-0.3, 0.3, 3))]
        let (_, capture) = try Self.rectified(scene)
        let (tags, rejected) = TagDetector().detect(capture.color)
        #expect(tags.map(\.id) == [4])
        #expect(rejected.contains { $0.id == 3 && $0.reason.contains("border") }, "\(rejected)")
        #expect(!rejected.contains { $0.id == 5 })
    }

    /// Two tags with the same ID are both reported and both marked; a tag over a hole in
    /// the depth is left out with the reason.
    @Test func duplicateIDsAndDepthHoles() throws {
        var scene = SyntheticScene()
        var hole = try Self.tag(9, at: SIMD3(0.5, 0.3, 2.2))
        hole.depthMissing = true
        scene.tags = [try Self.tag(5, at: SIMD3(-0.5, -0.2, 2)), try Self.tag(5, at: SIMD3(0.1, -0.2, 2.5)), hole]
        let (_, capture) = try Self.rectified(scene)
        let found = CaptureTags.find(in: capture, options: TagOptions(size: 0.16))
        #expect(found.tags.map(\.detection.id) == [5, 5])
        #expect(found.tags.allSatisfy { $0.detection.duplicateID })
        #expect(found.rejected.contains { $0.id == 9 && $0.reason.contains("no depth") }, "\(found.rejected)")
    }

    /// Poses of tags from 1.5 to 3.5 m, frontal and turned: the combined pose is within
    /// 3 mm and 0.3° of the truth for each; the depth plane resolves the tilt of frontal
    /// far tags that corners alone get wrong by more.
    @Test func posesAgainstTruth() throws {
        var scene = SyntheticScene()
        scene.wallZ = 6
        scene.tags = [try Self.tag(1, at: SIMD3(-0.6, -0.3, 1.5)),
                      try Self.tag(2, at: SIMD3(0.5, -0.3, 2.5), yaw: 0.02),
                      try Self.tag(3, at: SIMD3(-0.2, 0.25, 3.5)),
                      try Self.tag(4, at: SIMD3(0.6, 0.4, 3.0), yaw: 0.6, pitch: 0.3, roll: 0.8)]
        let (_, capture) = try Self.rectified(scene)
        let found = CaptureTags.find(in: capture, options: TagOptions(size: 0.16))
        #expect(found.tags.map(\.detection.id) == [1, 2, 3, 4])
        var cornerWorst = 0.0, combinedWorst = 0.0
        for tag in found.tags {
            let truth = Self.pose(try #require(scene.tags.first { $0.id == tag.detection.id }).pose)
            let d = tag.pose.translation - truth.translation
            let angle = Self.degrees(TagMath.angleBetween(tag.pose, truth))
            #expect((d * d).sum().squareRoot() < 0.003, "tag \(tag.detection.id): \(d) m")
            #expect(angle < 0.3, "tag \(tag.detection.id): \(angle)°")
            #expect(tag.cornerRMS < 0.5 && tag.depthRMS < 0.003 && abs(tag.depthScale - 1) < 0.01)
            combinedWorst = max(combinedWorst, angle)
            cornerWorst = max(cornerWorst, Self.degrees(TagMath.angleBetween(tag.cornerPose, truth)))
        }
        #expect(combinedWorst < cornerWorst, "combined \(combinedWorst)°, corners alone \(cornerWorst)°")
        #expect(found.scale.map { abs($0.factor - 1) < 0.005 } == true)
    }

    /// Depth off by k (0.8 and 1.25): the tags' fit recovers 1/k within 0.5 %; the size
    /// given in centimeters instead of meters (16 for 0.16) warns.
    @Test(arguments: [Float(0.8), 1.25]) func depthScaleRecovered(k: Float) throws {
        var scene = SyntheticScene()
        scene.wallZ = 6
        scene.tags = [try Self.tag(11, at: SIMD3(-0.3, 0, 2.0), yaw: 0.2)]
        let (_, capture) = try Self.rectified(scene, depthScale: k)
        let found = CaptureTags.find(in: capture, options: TagOptions(size: 0.16))
        let fit = try #require(found.scale)
        #expect(abs(fit.factor * Double(k) - 1) < 0.005, "factor \(fit.factor) for k = \(k)")
        #expect(found.warnings.isEmpty)
        let wrongUnits = CaptureTags.find(in: capture, options: TagOptions(size: 16))
        #expect(wrongUnits.warnings.count == 1 && wrongUnits.warnings[0].contains("meters"))
    }

    /// Rigid fit, plane fit and rotation vectors on exact data.
    @Test func geometryHelpers() throws {
        let truth = Pose(rotationVector: SIMD3(0.3, -0.2, 0.9)).composed(
            with: Pose(row0: SIMD3(1, 0, 0), row1: SIMD3(0, 1, 0), row2: SIMD3(0, 0, 1), translation: .zero))
        var moved = truth
        moved.translation = SIMD3(0.1, -0.4, 2)
        let model = [SIMD3(0.0, 0, 0), SIMD3(1, 0, 0), SIMD3(0, 2, 0), SIMD3(0.5, 0.5, 1)]
        let fit = try #require(TagMath.rigidFit(model: model, measured: model.map(moved.apply)))
        #expect(TagMath.angleBetween(fit, moved) < 1e-9)
        #expect(abs(truth.rotationVector.x - 0.3) < 1e-12)
        let plane = try #require(TagMath.plane([SIMD3(0, 0, 2), SIMD3(1, 0, 3), SIMD3(0, 1, 2), SIMD3(1, 1, 3)]))
        let expected = SIMD3(1.0, 0, -1) / 2.0.squareRoot()
        #expect(abs(abs((plane.normal * expected).sum()) - 1) < 1e-12 && plane.normal.z < 0)
    }
}
