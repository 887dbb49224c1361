import Dispatch
import RGBDKit

/// A deterministic synthetic LiDAR scan with ground truth: `SyntheticRoom` seen along
/// `SyntheticTrajectory`, rendered per frame as an iPhone LiDAR app records it (a colour
/// image, a 256×192 depth map with the same field of view, ARKit confidence), and written
/// in the folder or archive layouts of Stray Scanner and Record3D (`write(layout:to:)`)
/// with a `truth.json` beside.
///
/// Rendering is exact ray casting (depth is the camera-frame z of the surface hit at each
/// depth pixel's centre); noise and holes, when enabled, come from a seeded hash, so every
/// run gives the same frames and files.
package struct SyntheticScan: Sendable {
    /// What to add to the exact depth, and the hostile variations of the written files.
    package struct Options: Equatable, Sendable {
        /// Standard deviation of depth noise at 1 m, metres (it grows with the square of
        /// the depth, as LiDAR's does); 0 = exact depth.
        package var depthNoise: Double = 0
        /// Cut a few small holes (no depth, confidence 0) into every depth map, and drop
        /// isolated pixels.
        package var holes: Bool = false
        /// The seed of the noise and holes.
        package var seed: UInt64 = 1
        /// Beyond this depth (metres) confidence is 0, as ARKit's is.
        package var confidenceRange: Double = 4
        /// Beyond this depth (metres) confidence is at most 1 (medium): where the noise,
        /// growing with depth², is above 9 times its value at 1 m, as ARKit lowers its
        /// confidence for far, weak returns.
        package var highConfidenceRange: Double = 3
        /// Frames written with an odometry row (or a pose) but no depth or confidence file
        /// (Stray: "scene depth missing").
        package var framesWithoutDepth: Set<Int> = []
        /// Frames whose depth and confidence maps are written at `otherDepthSize` instead of
        /// the scan's depth size (same field of view), for hostile reader tests.
        package var framesWithOtherDepthSize: Set<Int> = []
        /// See `framesWithOtherDepthSize`.
        package var otherDepthSize: SIMD2<Int> = SIMD2(320, 240)
        /// JPEG quality of Record3D's images.
        package var jpegQuality: Int = 90
        /// The video encoder's constant rate factor (lower = better; 18 ≈ visually lossless).
        package var videoQuality: Int = 18
        /// The video encoder's preset (x264/x265 names, `ultrafast` … `veryslow`).
        package var videoPreset: String = "fast"
        /// The `ffmpeg` executable (looked up on PATH when it has no slash).
        package var ffmpeg: String = "ffmpeg"
        /// How Record3D's `.depth` and `.conf` entries are LZFSE-wrapped.
        package var lzfse: LZFSEWriter = .raw
        /// The odometry error written into the scan's poses (the truth keeps the true
        /// poses); nil: the poses written are the truth.
        package var poseError: SyntheticPoseError? = nil

        /// The defaults: exact depth, no holes, every frame complete.
        package init() {}
    }

    /// The room.
    package var room: SyntheticRoom
    /// The camera path.
    package var trajectory: SyntheticTrajectory
    /// Number of frames.
    package var frameCount: Int
    /// Colour image size in the sensor's (landscape) orientation.
    package var colorWidth: Int
    /// See `colorWidth`.
    package var colorHeight: Int
    /// Depth map size (landscape).
    package var depthWidth: Int
    /// See `depthWidth`.
    package var depthHeight: Int
    /// Focal length as a fraction of the image's long side (0.7527: an iPhone wide camera,
    /// fx ≈ 1445 px at 1920×1440, about 67° across).
    package var focalRatio: Double = 0.7527
    /// Noise, holes and the hostile variations.
    package var options: Options

    /// A scan of the default room along the default path.
    package init(frameCount: Int, colorWidth: Int = 1920, colorHeight: Int = 1440, depthWidth: Int = 256,
                depthHeight: Int = 192, fps: Double = 60, room: SyntheticRoom = SyntheticRoom(),
                options: Options = Options()) {
        self.room = room
        var path = SyntheticTrajectory()
        path.fps = fps
        trajectory = path
        self.frameCount = frameCount
        self.colorWidth = colorWidth
        self.colorHeight = colorHeight
        self.depthWidth = depthWidth
        self.depthHeight = depthHeight
        self.options = options
    }

    /// The camera-to-world poses (OpenCV camera axes, the room's world) the scan records:
    /// the trajectory's, with `options.poseError` when set.
    package func recordedPoses() -> [SynthPose] {
        let truth = (0..<frameCount).map { trajectory.pose(frame: $0) }
        guard let error = options.poseError else { return truth }
        return error.recorded(truth, fps: trajectory.fps)
    }

    /// The colour camera (K at the colour size). `portrait`: the phone held upright, images
    /// stored `colorHeight × colorWidth` (taller than wide), as Record3D stores portrait scans.
    package func colorCamera(portrait: Bool = false) -> SynthPinhole {
        let w = portrait ? colorHeight : colorWidth, h = portrait ? colorWidth : colorHeight
        let f = focalRatio * Double(max(w, h))
        // The principal point a little off centre, as in real calibrations.
        let unit = Double(max(w, h)) / 1920
        return SynthPinhole(fx: f, fy: f, cx: Double(w) / 2 + 0.8 * unit, cy: Double(h) / 2 - 1.3 * unit, width: w, height: h)
    }

    /// The depth camera: the colour camera's field of view on the depth grid (K scaled by
    /// `depthWidth / colorWidth` and `depthHeight / colorHeight`).
    package func depthCamera(portrait: Bool = false) -> SynthPinhole {
        portrait ? colorCamera(portrait: true).resized(width: depthHeight, height: depthWidth)
            : colorCamera().resized(width: depthWidth, height: depthHeight)
    }

    /// One rendered frame.
    package struct Frame: Sendable {
        /// Frame number, from 0.
        package var index: Int
        /// Timestamp, seconds.
        package var timestamp: Double
        /// Camera-to-world pose, OpenCV camera axes, in the room's world.
        package var pose: SynthPose
        /// The colour camera.
        package var colorCamera: SynthPinhole
        /// The depth camera.
        package var depthCamera: SynthPinhole
        /// RGB, 8 bits per channel (empty when not rendered).
        package var color: ColorImage
        /// Depth, metres, camera-frame z; NaN = no depth (a hole).
        package var depth: DepthMap
        /// ARKit confidence per depth pixel: 2 high, 1 medium (grazing angles, depth
        /// edges, beyond `Options.highConfidenceRange`), 0 low (beyond
        /// `Options.confidenceRange`, holes).
        package var confidence: ImageBuffer<UInt8>
    }

    /// Renders frame `index`: colour (unless `color` is false) and depth with confidence.
    /// `portrait`: the portrait camera of `colorCamera(portrait:)`. `depthSize` overrides the
    /// depth grid (same field of view).
    package func render(frame index: Int, portrait: Bool = false, color: Bool = true,
                       depthSize: SIMD2<Int>? = nil) -> Frame {
        let pose = trajectory.pose(frame: index)
        let colorK = colorCamera(portrait: portrait)
        var depthK = depthCamera(portrait: portrait)
        if let size = depthSize { depthK = colorK.resized(width: size.x, height: size.y) }
        let (depth, confidence) = renderDepth(pose: pose, camera: depthK, frame: index)
        let image = color ? renderColor(pose: pose, camera: colorK)
            : ColorImage(width: 0, height: 0, channels: 3, samples: [])
        return Frame(index: index, timestamp: trajectory.timestamp(frame: index), pose: pose, colorCamera: colorK,
                     depthCamera: depthK, color: image, depth: depth, confidence: confidence)
    }

    /// The exact depth (camera-frame z, metres) seen at pixel `(u, v)` of `camera` from
    /// `pose`, or nil when the ray leaves the room (it cannot from inside).
    package func trueDepth(u: Double, v: Double, camera: SynthPinhole, pose: SynthPose) -> Double? {
        // The ray's direction has camera z = 1, so the ray parameter is the depth.
        room.cast(origin: pose.translation, direction: pose.rotation * camera.ray(u, v))?.t
    }

    /// Colour: one exact ray per pixel centre, the room's texture lit by a soft head lamp
    /// (brighter where the surface faces the camera).
    func renderColor(pose: SynthPose, camera k: SynthPinhole) -> ColorImage {
        let width = k.width, height = k.height
        var samples = [UInt8](repeating: 0, count: width * height * 3)
        let room = self.room
        samples.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            // Each iteration writes its own rows, and concurrentPerform returns when all are done.
            nonisolated(unsafe) let out = base
            let band = 8
            DispatchQueue.concurrentPerform(iterations: (height + band - 1) / band) { b in
                for y in (b * band)..<min(height, b * band + band) {
                    for x in 0..<width {
                        let d = pose.rotation * k.ray(Double(x), Double(y))
                        var rgb = SIMD3<Double>(0, 0, 0)
                        if let hit = room.cast(origin: pose.translation, direction: d) {
                            rgb = Self.shade(room, hit, direction: d)
                        }
                        let o = (y * width + x) * 3
                        out[o] = UInt8(max(0, min(255, rgb.x.rounded())))
                        out[o + 1] = UInt8(max(0, min(255, rgb.y.rounded())))
                        out[o + 2] = UInt8(max(0, min(255, rgb.z.rounded())))
                    }
                }
            }
        }
        return ColorImage(width: width, height: height, channels: 3, samples: samples)
    }

    /// The colour the renderer gives a surface point seen along `d`: the room's texture
    /// lit by a soft head lamp (brighter where the surface faces the camera), unrounded.
    static func shade(_ room: SyntheticRoom, _ hit: SyntheticRoom.Hit, direction d: SIMD3<Double>) -> SIMD3<Double> {
        let facing = abs(dot(hit.normal, d)) / (d * d).sum().squareRoot()
        return room.color(of: hit) * (0.7 + 0.3 * facing)
    }

    /// Depth and confidence at each depth pixel's centre.
    func renderDepth(pose: SynthPose, camera k: SynthPinhole, frame: Int) -> (DepthMap, ImageBuffer<UInt8>) {
        let width = k.width, height = k.height, count = width * height
        var depth = [Float](repeating: .nan, count: count)
        var grazing = [Bool](repeating: false, count: count)
        let room = self.room
        depth.withUnsafeMutableBufferPointer { depthBuffer in
            grazing.withUnsafeMutableBufferPointer { grazingBuffer in
                guard let dBase = depthBuffer.baseAddress, let gBase = grazingBuffer.baseAddress else { return }
                // Each iteration writes its own row, and concurrentPerform returns when all are done.
                nonisolated(unsafe) let dOut = dBase, gOut = gBase
                DispatchQueue.concurrentPerform(iterations: height) { y in
                    for x in 0..<width {
                        let d = pose.rotation * k.ray(Double(x), Double(y))
                        guard let hit = room.cast(origin: pose.translation, direction: d) else { continue }
                        dOut[y * width + x] = Float(hit.t)
                        gOut[y * width + x] = abs(dot(hit.normal, d)) / (d * d).sum().squareRoot() < 0.25
                    }
                }
            }
        }
        var confidence = [UInt8](repeating: 0, count: count)
        for y in 0..<height {
            for x in 0..<width {
                let i = y * width + x
                let z = depth[i]
                guard z.isFinite else { continue }
                var level: UInt8 = Double(z) > options.confidenceRange ? 0 : Double(z) > options.highConfidenceRange ? 1 : 2
                if level == 2 && grazing[i] { level = 1 }
                if level == 2 {
                    // A depth edge: a 4-neighbour more than 5 % nearer or farther.
                    for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)]
                    where nx >= 0 && ny >= 0 && nx < width && ny < height {
                        let n = depth[ny * width + nx]
                        if !n.isFinite || abs(n - z) > 0.05 * z { level = 1; break }
                    }
                }
                confidence[i] = level
            }
        }
        if options.holes { cutHoles(&depth, &confidence, width: width, height: height, frame: frame) }
        if options.depthNoise > 0 {
            for i in 0..<count where depth[i].isFinite {
                let z = Double(depth[i])
                let g = gaussian(i, frame, 5)
                depth[i] = Float(z + options.depthNoise * z * z * g)
            }
        }
        return (DepthMap(width: width, height: height, channels: 1, samples: depth),
                ImageBuffer<UInt8>(width: width, height: height, channels: 1, samples: confidence))
    }

    /// Three small discs (radius 1.5–3.5 % of the width) and about 0.2 % isolated pixels
    /// per frame, at hashed places: depth NaN, confidence 0.
    func cutHoles(_ depth: inout [Float], _ confidence: inout [UInt8], width: Int, height: Int, frame: Int) {
        for disc in 0..<3 {
            let cx = uniform(disc, frame, 1) * Double(width), cy = uniform(disc, frame, 2) * Double(height)
            let r = (0.015 + 0.02 * uniform(disc, frame, 3)) * Double(width)
            for y in max(0, Int(cy - r))...min(height - 1, Int(cy + r)) {
                for x in max(0, Int(cx - r))...min(width - 1, Int(cx + r)) {
                    let dx = Double(x) - cx, dy = Double(y) - cy
                    if dx * dx + dy * dy <= r * r { depth[y * width + x] = .nan; confidence[y * width + x] = 0 }
                }
            }
        }
        for i in 0..<(width * height) where uniform(i, frame, 4) < 0.002 {
            depth[i] = .nan
            confidence[i] = 0
        }
    }

    /// A seeded uniform number in [0, 1) of three integers.
    func uniform(_ a: Int, _ b: Int, _ c: Int) -> Double {
        SyntheticRoom.hash(a, b &* 1_000_003 &+ c, Int(truncatingIfNeeded: options.seed) &* 7919 &+ 17)
    }

    /// A seeded standard normal number (Box–Muller) of three integers.
    func gaussian(_ a: Int, _ b: Int, _ c: Int) -> Double {
        let u1 = max(uniform(a, b, c), 1e-300), u2 = uniform(a, b, c &+ 1_000)
        return (-2 * logarithm(u1)).squareRoot() * cosine(2 * Double.pi * u2)
    }
}
