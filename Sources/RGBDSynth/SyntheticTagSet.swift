import RGBDKit

/// A multi-view tag set: tags fixed on one wall of a world, photographed by several cameras
/// at known poses, each capture written in the exporter layout (JPEG, capture JSON with
/// Apple-style lens tables, depth whose noise grows with the square of the distance), and
/// a truth file with every camera's and tag's pose. The input `rgbd register` is tested on.
package struct SyntheticTagSet: Sendable {
    /// The tags, in the world.
    package var scene: SyntheticTagScene
    /// Camera-to-world per capture (OpenCV axes).
    package var cameras: [SynthPose]
    /// Color image size.
    package var colorWidth = 1920
    /// See `colorWidth`.
    package var colorHeight = 1440
    /// Depth map size.
    package var depthWidth = 640
    /// See `depthWidth`.
    package var depthHeight = 480
    /// The calibration written into every capture (reference 4032×3024, lens tables).
    package var calibration = SyntheticCapture.iPhoneCalibration()
    /// Depth noise: Gaussian, σ = this × z² (meters; 0.5 mm at 1 m is 4.5 mm at 3 m).
    package var depthNoiseAtOneMeter = 0.0005
    /// Color noise, 8-bit levels.
    package var colorNoise = 3.0
    /// Seeds the noise (each capture gets its own from it).
    package var seed: UInt64

    /// A set of `scene` seen from `cameras`; noise seeded by `seed`.
    package init(scene: SyntheticTagScene, cameras: [SynthPose], seed: UInt64) {
        self.scene = scene
        self.cameras = cameras
        self.seed = seed
    }

    /// Three (`tags`) tag36h11 tags of `size` meters (IDs 0, 1, 2, …) on one wall, spread
    /// over 2 m across and, alternately above and below, about 0.6 m up and down (a
    /// triangle for three), each turned a little in the wall's plane; `cameras` cameras
    /// 1–4 m from the wall (`distances`), looking at it from up to 25° to either side and
    /// 10° up or down, each aimed at a point of the wall that keeps at least one tag in
    /// view. Deterministic in `seed`. The world: x right along the wall, y down, z into
    /// the wall, origin at the middle of the tags' row (the tags face −z).
    package static func wall(seed: UInt64, tags count: Int = 3, size: Double = 0.16, cameras: Int = 5,
                            distances: ClosedRange<Double> = 1...4) -> SyntheticTagSet {
        var numbers = SplitMix(state: seed &* 0x2545_F491_4F6C_DD1D &+ 0x1234_5678)
        func random() -> Double { numbers.next() }
        var placements: [SyntheticTagScene.Placement] = []
        for i in 0..<count {
            let x = -1 + 2 * Double(i) / Double(max(1, count - 1)) + 0.1 * (random() - 0.5)
            let y = (i % 2 == 0 ? -0.3 : 0.3) + 0.2 * (random() - 0.5)
            let roll = SynthMatrix3.rotation(axis: SIMD3(0, 0, 1), angle: 0.8 * (random() - 0.5))
            placements.append(.init(id: i, size: size, pose: SynthPose(rotation: roll, translation: SIMD3(x, y, 0))))
        }
        let centres = placements.map(\.pose.translation.x)
        let lowest = centres.min() ?? 0, highest = centres.max() ?? 0
        var poses: [SynthPose] = []
        for _ in 0..<cameras {
            let distance = distances.lowerBound + (distances.upperBound - distances.lowerBound) * random()
            // The wall's half-width in view at this distance (horizontal half-angle ~34°),
            // less a tag's margin: aim so that the nearest tag stays inside.
            let reach = max(0, 0.55 * distance - 0.2)
            let target = SIMD3(lowest + (highest - lowest) * random(), 0.2 * (random() - 0.5), 0.0)
            let nearest = centres.min { abs($0 - target.x) < abs($1 - target.x) } ?? 0
            let aim = SIMD3(nearest + max(-reach, min(reach, target.x - nearest)), target.y, 0)
            let yaw = 0.87 * (random() - 0.5), pitch = 0.35 * (random() - 0.5)
            let r = SynthMatrix3.rotation(axis: SIMD3(0, 1, 0), angle: yaw)
                * SynthMatrix3.rotation(axis: SIMD3(1, 0, 0), angle: pitch)
                * SynthMatrix3.rotation(axis: SIMD3(0, 0, 1), angle: 0.2 * (random() - 0.5))
            poses.append(SynthPose(rotation: r, translation: aim - r.column(2) * distance))
        }
        return SyntheticTagSet(scene: SyntheticTagScene(tags: placements), cameras: poses, seed: seed)
    }

    /// Capture `index` (its own noise seed).
    package func capture(_ index: Int) -> SyntheticCapture {
        var capture = scene.capture(camera: cameras[index], colorWidth: colorWidth, colorHeight: colorHeight,
                                    depthWidth: depthWidth, depthHeight: depthHeight, calibration: calibration)
        capture.colorNoise = colorNoise
        capture.depthNoiseAtOneMeter = depthNoiseAtOneMeter
        capture.noiseSeed = seed &* 1_000_003 &+ UInt64(index) &+ 1
        return capture
    }

    /// The lowest tag ID: the origin tag `rgbd register` chooses when two captures see it,
    /// and the frame of the truth file's `camera_to_origin_tag` poses.
    package var originTag: Int { scene.tags.map(\.id).min() ?? 0 }

    /// Camera `index`'s pose in the frame of tag `id` (the world `rgbd register` writes
    /// when `id` is its origin tag); nil when there is no such tag.
    package func camera(_ index: Int, inFrameOfTag id: Int) -> SynthPose? {
        guard let tag = scene.tags.first(where: { $0.id == id }) else { return nil }
        return tag.pose.inverse * cameras[index]
    }

    /// Writes `<stem>0.jpg`, `<stem>0.json`, `<stem>0.truth.json`, … (one capture per
    /// camera, in the exporter layout) and `<stem>.set.truth.json` into `directory`;
    /// returns the capture JSON paths.
    @discardableResult
    package func write(to directory: String, stem: String = "cam", jpegQuality: Int = 92) throws -> [String] {
        var paths: [String] = []
        for index in cameras.indices {
            paths.append(try capture(index).write(to: directory, stem: "\(stem)\(index)", jpegQuality: jpegQuality).json)
        }
        let files = StagedFiles()
        try files.stage(Path.join(directory, "\(stem).set.truth.json"), bytes: Array(truthJSON(stem: stem).utf8))
        try files.commit()
        return paths
    }

    /// The set's truth: tags' tag-to-world and cameras' camera-to-world 4×4 matrices
    /// (row-major, OpenCV camera axes) in the generator's world, and each camera in the
    /// frame of the lowest tag ID (`camera_to_origin_tag`).
    package func truthJSON(stem: String = "cam") -> String {
        func matrix(_ p: SynthPose) -> String {
            let r = p.rotation, t = p.translation
            let values = [r.r0.x, r.r0.y, r.r0.z, t.x, r.r1.x, r.r1.y, r.r1.z, t.y, r.r2.x, r.r2.y, r.r2.z, t.z, 0, 0, 0, 1]
            return "[" + values.map { "\($0)" }.joined(separator: ", ") + "]"
        }
        let tags = scene.tags.map {
            "    {\"family\": \"\($0.family.rawValue)\", \"id\": \($0.id), \"size\": \($0.size), \"tag_to_world\": \(matrix($0.pose))}"
        }.joined(separator: ",\n")
        let cameraEntries = cameras.indices.map { i in
            let inTag = camera(i, inFrameOfTag: originTag).map(matrix) ?? "null"
            return "    {\"capture\": \"\(stem)\(i).json\", \"camera_to_world\": \(matrix(cameras[i])), \"camera_to_origin_tag\": \(inTag)}"
        }.joined(separator: ",\n")
        return """
        {
          "frame": "world: x right along the wall, y down, z into the wall, meters; cameras OpenCV (x right, y down, z forward); matrices row-major 4x4",
          "origin_tag": \(originTag),
          "depth_noise": "Gaussian, sigma = \(depthNoiseAtOneMeter) m times depth squared (m)",
          "tags": [
        \(tags)
          ],
          "cameras": [
        \(cameraEntries)
          ]
        }

        """
    }
}
