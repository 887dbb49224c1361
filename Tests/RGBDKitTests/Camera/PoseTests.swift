import Testing
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
