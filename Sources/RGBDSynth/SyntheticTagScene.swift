import RGBDKit

/// Printed tags placed in a world, seen by cameras at known poses: the ground truth for
/// registering single captures by their tags.
///
/// Each capture is a `SyntheticCapture` whose scene holds the tags moved into that
/// camera's frame; its wall, floor and box stay in the camera's frame (they are background
/// only: the tags are the one thing the captures share).
package struct SyntheticTagScene: Sendable {
    /// A tag in the world.
    package struct Placement: Sendable {
        /// The family.
        package var family: TagFamily
        /// The ID.
        package var id: Int
        /// Black-square edge, meters.
        package var size: Double
        /// Tag-to-world (tag frame x right, y down, z into the tag).
        package var pose: SynthPose

        /// A tag at `pose` in the world.
        package init(family: TagFamily = .tag36h11, id: Int, size: Double, pose: SynthPose) {
            self.family = family
            self.id = id
            self.size = size
            self.pose = pose
        }
    }

    /// The tags.
    package var tags: [Placement]
    /// The background wall's distance from each camera, meters (behind every tag).
    package var wallZ = 8.0

    /// A scene of `tags`.
    package init(tags: [Placement]) { self.tags = tags }

    /// The capture seen by a camera at `camera` (camera-to-world, OpenCV axes): every tag in
    /// front of the camera moved into its frame; image sizes and the calibration as given.
    package func capture(camera: SynthPose, colorWidth: Int, colorHeight: Int, depthWidth: Int, depthHeight: Int,
                        calibration: Calibration = SyntheticCapture.iPhoneCalibration()) -> SyntheticCapture {
        var scene = SyntheticScene()
        scene.wallZ = wallZ
        scene.floorY = 50
        scene.boxMin = SIMD3(100, 100, 100)
        scene.boxMax = SIMD3(101, 101, 101)
        let worldToCamera = camera.inverse
        scene.tags = tags.compactMap { placement in
            let pose = worldToCamera * placement.pose
            guard pose.translation.z > 0.1 else { return nil }
            return SyntheticTag(family: placement.family, id: placement.id, size: placement.size, pose: pose)
        }
        return SyntheticCapture(colorWidth: colorWidth, colorHeight: colorHeight, depthWidth: depthWidth,
                                depthHeight: depthHeight, scene: scene, calibration: calibration)
    }

    /// A held-out test room: `count` tags of `size` meters on two walls and the floor's
    /// edge, and `cameras` camera poses 1.5–3.5 m from the tags, looking at them from
    /// different sides, drawn from `seed` (deterministic). The world is the first tag's
    /// frame turned so that world y is down the wall (OpenCV-like: x right, y down, z into
    /// the first wall).
    package static func room(seed: UInt64, tags count: Int = 4, size: Double = 0.16, cameras: Int = 3)
        -> (scene: SyntheticTagScene, cameras: [SynthPose]) {
        var numbers = SplitMix(state: seed)
        func random() -> Double { numbers.next() }
        // Tags on a wall z = 0 (facing −z), spread over 1.2 m, each turned a little.
        var placements: [Placement] = []
        for i in 0..<count {
            let x = -0.6 + 1.2 * Double(i) / Double(max(1, count - 1)) + 0.1 * (random() - 0.5)
            let y = 0.25 * (random() - 0.5)
            let turn = SynthMatrix3.rotation(axis: SIMD3(0, 1, 0), angle: 0.35 * (random() - 0.5))
                * SynthMatrix3.rotation(axis: SIMD3(0, 0, 1), angle: 0.6 * (random() - 0.5))
            placements.append(Placement(id: 3 + 5 * i, size: size, pose: SynthPose(rotation: turn, translation: SIMD3(x, y, 0))))
        }
        var poses: [SynthPose] = []
        for _ in 0..<cameras {
            let distance = 1.8 + 1.4 * random()
            let yaw = 0.5 * (random() - 0.5), pitch = 0.25 * (random() - 0.5)
            let target = SIMD3(0.4 * (random() - 0.5), 0.1 * (random() - 0.5), 0.0)
            // Camera looking along +z (toward the wall) turned by yaw and pitch, placed
            // `distance` before its target.
            let r = SynthMatrix3.rotation(axis: SIMD3(0, 1, 0), angle: yaw)
                * SynthMatrix3.rotation(axis: SIMD3(1, 0, 0), angle: pitch)
                * SynthMatrix3.rotation(axis: SIMD3(0, 0, 1), angle: 0.2 * (random() - 0.5))
            let forward = r.column(2)
            poses.append(SynthPose(rotation: r, translation: target - forward * distance))
        }
        return (SyntheticTagScene(tags: placements), poses)
    }
}
