/// What `rgbd info` says about a scan: its app and layout, frames, timing, sizes,
/// intrinsics, poses and world, trajectory, and depth statistics over a sample of frames.
package struct SceneInfo: Sendable {
    /// The scene described.
    package let scene: Scene
    /// Frames with depth and pose.
    package var frameCount: Int { scene.frames.count }
    /// Seconds from the first to the last frame, when the scan has timestamps.
    package let duration: Double?
    /// Whether the color intrinsics differ between frames (more than 0.01 px).
    package let intrinsicsVary: Bool
    /// The camera centres' path length, meters.
    package let trajectoryLength: Double
    /// The camera centres' bounding box, meters, in the world.
    package let extent: (min: SIMD3<Double>, max: SIMD3<Double>)
    /// Time gaps between consecutive frames longer than 2.5 frame intervals: the frame
    /// after the gap and the gap in seconds.
    package let gaps: [(frame: Int, seconds: Double)]
    /// Depth statistics over the sampled frames.
    package let depth: DepthStatistics
    /// How many frames the statistics sampled.
    package let sampledFrames: Int

    /// Depth and confidence statistics.
    package struct DepthStatistics: Sendable {
        /// Percentiles 5, 50, 95 of valid depth, meters; nil without valid depth.
        package var percentiles: (p5: Double, p50: Double, p95: Double)?
        /// The fraction of pixels without depth.
        package var holes: Double
        /// The fraction of pixels per confidence level (0, 1, 2), nil without confidence maps.
        package var confidence: (low: Double, medium: Double, high: Double)?
    }

    /// How many frames the statistics read at most (spread evenly over the scan).
    package static let maxSampledFrames = 60

    /// Opens and describes the scan at `path`.
    package static func read(_ path: String) throws -> SceneInfo {
        try SceneInfo(scene: Scene.open(path))
    }

    /// Describes an open scene (reads up to `maxSampledFrames` depth maps, no color).
    package init(scene: Scene) throws {
        self.scene = scene
        let frames = scene.frames
        if let first = frames.first?.time, let last = frames.last?.time { duration = last - first } else { duration = nil }
        let k0 = frames[0].colorIntrinsics
        intrinsicsVary = frames.contains { k in
            max(abs(k.colorIntrinsics.fx - k0.fx), abs(k.colorIntrinsics.fy - k0.fy),
                abs(k.colorIntrinsics.cx - k0.cx), abs(k.colorIntrinsics.cy - k0.cy)) > 0.01
        }
        var length = 0.0
        var lo = frames[0].pose.translation, hi = lo
        for (a, b) in zip(frames, frames.dropFirst()) {
            let d = b.pose.translation - a.pose.translation
            length += (d * d).sum().squareRoot()
            lo = pointwiseMin(lo, b.pose.translation)
            hi = pointwiseMax(hi, b.pose.translation)
        }
        trajectoryLength = length
        extent = (lo, hi)
        var gaps: [(frame: Int, seconds: Double)] = []
        if let fps = scene.framesPerSecond, fps > 0 {
            for (a, b) in zip(frames, frames.dropFirst()) {
                guard let ta = a.time, let tb = b.time else { continue }
                if tb - ta > 2.5 / fps { gaps.append((b.index, tb - ta)) }
            }
        }
        self.gaps = gaps

        let count = min(frames.count, Self.maxSampledFrames)
        let positions = (0..<count).map { count == 1 ? 0 : $0 * (frames.count - 1) / (count - 1) }
        var depths: [Float] = []
        var pixels = 0, holes = 0
        var levels = [0, 0, 0], confidencePixels = 0
        try scene.forEachFrame(positions, color: false) { frame in
            // Every 4th pixel of every 4th row keeps the sample small on long scans.
            for y in stride(from: 0, to: frame.depth.height, by: 4) {
                for x in stride(from: 0, to: frame.depth.width, by: 4) {
                    let z = frame.depth[x, y]
                    pixels += 1
                    if z.isNaN { holes += 1 } else { depths.append(z) }
                }
            }
            if let confidence = frame.confidence {
                for value in confidence.samples {
                    levels[min(Int(value), 2)] += 1
                }
                confidencePixels += confidence.samples.count
            }
        }
        depths.sort()
        func percentile(_ p: Double) -> Double { Double(depths[min(depths.count - 1, Int(p * Double(depths.count)))]) }
        depth = DepthStatistics(
            percentiles: depths.isEmpty ? nil : (percentile(0.05), percentile(0.5), percentile(0.95)),
            holes: pixels == 0 ? 1 : Double(holes) / Double(pixels),
            confidence: confidencePixels == 0 ? nil
                : (Double(levels[0]) / Double(confidencePixels), Double(levels[1]) / Double(confidencePixels),
                   Double(levels[2]) / Double(confidencePixels)))
        sampledFrames = count
    }

    /// How the file stores poses, in words.
    package var poseConvention: String {
        switch scene.format.app {
        case .strayScanner: "camera-to-world, OpenCV camera axes (x right, y down, z forward), quaternion x y z w: used as stored"
        case .record3D: "camera-to-world, OpenGL camera axes (x right, y up, z backward), quaternion x y z w: converted to OpenCV axes"
        case .rgbdRegister: "camera-to-world 4×4 matrices, OpenCV camera axes: used as stored"
        }
    }

    /// The human-readable block of `rgbd info` for this scan.
    package var text: String {
        var rows: [(String, String)] = []
        func row(_ label: String, _ value: String) { rows.append((label, value)) }
        func f(_ v: Double, _ d: Int) -> String { DecimalText.fixed(v, d) }
        func vector(_ v: SIMD3<Double>) -> String { "(\(f(v.x, 3)), \(f(v.y, 3)), \(f(v.z, 3)))" }
        row("scan", "\(scene.format.app.rawValue): \(scene.format.variant)")
        var frames = "\(frameCount) with depth and pose"
        if !scene.skipped.isEmpty { frames += "; \(scene.skipped.count) skipped (pose without depth; first: frame \(scene.skipped[0].index))" }
        row("frames", frames)
        var timing: [String] = []
        if let fps = scene.framesPerSecond { timing.append("\(f(fps, 2)) fps") }
        if let duration { timing.append("\(f(duration, 2)) s") }
        if !timing.isEmpty { row("timing", timing.joined(separator: ", ")) }
        if !gaps.isEmpty {
            let shown = gaps.prefix(3).map { "before frame \($0.frame) (\(f($0.seconds, 3)) s)" }.joined(separator: ", ")
            row("gaps", "\(gaps.count): \(shown)" + (gaps.count > 3 ? ", …" : ""))
        }
        row("color", scene.colorSize.map { "\($0.width)×\($0.height)" } ?? "none (a depth-only scene)")
        row("depth", "\(scene.depthSize.width)×\(scene.depthSize.height), meters")
        let k = scene.frames[0].colorIntrinsics
        row("intrinsics", "fx \(f(k.fx, 3))  fy \(f(k.fy, 3))  cx \(f(k.cx, 3))  cy \(f(k.cy, 3)) at \(k.width)×\(k.height)"
            + (intrinsicsVary ? " (frame \(scene.frames[0].index); they vary per frame)" : " (all frames)"))
        row("poses", poseConvention)
        row("world", scene.world.rawValue)
        if let basis = scene.worldBasis { row("world basis", basis) }
        row("trajectory", "\(f(trajectoryLength, 3)) m; camera centres within \(vector(extent.min)) … \(vector(extent.max)) m")
        if let p = depth.percentiles {
            row("depth range", "p5 \(f(p.p5, 3)) m, median \(f(p.p50, 3)) m, p95 \(f(p.p95, 3)) m; holes \(f(100 * depth.holes, 1)) % (\(sampledFrames) frame\(sampledFrames == 1 ? "" : "s") sampled)")
        } else {
            row("depth range", "no valid depth in \(sampledFrames) sampled frames")
        }
        if let c = depth.confidence {
            row("confidence", "high \(f(100 * c.high, 1)) %, medium \(f(100 * c.medium, 1)) %, low \(f(100 * c.low, 1)) %")
        } else {
            row("confidence", "none")
        }
        for (key, value) in scene.details { row(key, value) }
        for warning in scene.warnings { row("warning", warning) }
        let width = rows.map(\.0.count).max() ?? 0
        var text = scene.path + "\n"
        for (label, value) in rows {
            text += "  " + label + String(repeating: " ", count: width - label.count) + "  " + value + "\n"
        }
        return text
    }

    /// The world's name in the JSON form.
    var worldName: String {
        switch scene.world {
        case .gravityAligned: "gravity_aligned"
        case .firstFrame: "first_frame"
        case .undetermined: "undetermined"
        case .originTag: "origin_tag"
        }
    }

    /// The JSON form (`rgbd info --json`, docs/info.md).
    package var jsonValue: JSONValue {
        typealias M = JSONValue.Member
        func vector(_ v: SIMD3<Double>) -> JSONValue { .array([.number(v.x), .number(v.y), .number(v.z)]) }
        let k = scene.frames[0].colorIntrinsics
        var members: [M] = [
            M("info_version", .int(CaptureInfo.jsonVersion)),
            M("input", .string(scene.path)),
            M("status", .string("ok")),
            M("kind", .string("scan")),
            M("app", .string(scene.format.app.rawValue)),
            M("variant", .string(scene.format.variant)),
            M("frames", .int(frameCount)),
            M("skipped_frames", .array(scene.skipped.map { .object([M("frame", .int($0.index)), M("reason", .string($0.reason))]) })),
            M("fps", .number(scene.framesPerSecond)),
            M("duration_s", .number(duration)),
            M("color_size", scene.colorSize.map { .array([.int($0.width), .int($0.height)]) } ?? .null),
            M("depth_size", .array([.int(scene.depthSize.width), .int(scene.depthSize.height)])),
            M("intrinsics", .object([M("fx", .number(k.fx)), M("fy", .number(k.fy)), M("cx", .number(k.cx)),
                                     M("cy", .number(k.cy)), M("width", .int(k.width)), M("height", .int(k.height))])),
            M("intrinsics_vary", .bool(intrinsicsVary)),
            M("pose_convention", .string(poseConvention)),
            M("world", .string(worldName)),
            M("world_basis", scene.worldBasis.map { .string($0) } ?? .null),
            M("trajectory_length_m", .number(trajectoryLength)),
            M("camera_extent_m", .object([M("min", vector(extent.min)), M("max", vector(extent.max))])),
            M("gaps", .array(gaps.map { .object([M("frame", .int($0.frame)), M("seconds", .number($0.seconds))]) })),
        ]
        var depthMembers: [M] = [M("sampled_frames", .int(sampledFrames)), M("holes", .number(depth.holes))]
        if let p = depth.percentiles {
            depthMembers.append(M("percentiles_m", .object([M("p5", .number(p.p5)), M("p50", .number(p.p50)), M("p95", .number(p.p95))])))
        }
        if let c = depth.confidence {
            depthMembers.append(M("confidence", .object([M("low", .number(c.low)), M("medium", .number(c.medium)), M("high", .number(c.high))])))
        }
        members.append(M("depth", .object(depthMembers)))
        members.append(M("details", .object(scene.details.map { M($0.key, .string($0.value)) })))
        members.append(M("warnings", .array(scene.warnings.map { .string($0) })))
        return .object(members)
    }
}
