/// A smooth, hand-held-like camera path through `SyntheticRoom`: a walk around an ellipse
/// at chest height, the gaze sweeping from the nearby walls and boxes to across the room,
/// slightly down, with a gentle bob, sway, roll and pitch (sums of sines at unrelated frequencies, so the path
/// never repeats exactly within a loop).
///
/// Poses are camera-to-world in **OpenCV camera axes** (x right, y down, z forward) in the
/// room's ARKit-like world (gravity-aligned, +y up, metres). Frame `i` is at
/// `startTime + i / fps` seconds.
package struct SyntheticTrajectory: Equatable, Sendable {
    /// Frames per second.
    package var fps: Double = 60
    /// The first frame's timestamp, seconds (ARKit counts from the device's boot).
    package var startTime: Double = 1250.125
    /// Seconds for one loop around the ellipse.
    package var loopSeconds: Double = 24
    /// The ellipse's centre (x, z) and half-axes (x, z), metres.
    package var center: SIMD2<Double> = SIMD2(0.4, 0.2)
    /// See `center`.
    package var radii: SIMD2<Double> = SIMD2(1.2, 0.8)
    /// Camera height above the floor, metres.
    package var height: Double = 1.45
    /// The gaze's angle from straight outward (toward the nearest wall) toward the walking
    /// direction, radians: `x + y·sin(2π·t/15 s)` (so it sweeps from the walls to across the room).
    package var gazeSweep: SIMD2<Double> = SIMD2(1.4, 1.7)
    /// Seconds for one sweep of the gaze (`gazeSweep`).
    package var gazePeriod: Double = 15
    /// Mean downward pitch, radians.
    package var pitch: Double = 0.2
    /// Amplitude of the hand-held roll, radians.
    package var rollAmplitude: Double = 0.06
    /// Seconds during which the camera looks head-on (level) at the room's wall in +z,
    /// turning to it and back over `plainWallRamp` seconds at each end: with the path near
    /// that wall, the frames see one plane and nothing else (degenerate for ICP: sliding
    /// along the wall changes nothing the depth sees). Nil: no such stretch.
    package var plainWall: ClosedRange<Double>? = nil
    /// See `plainWall`.
    package var plainWallRamp: Double = 0.4

    /// The default path (60 fps).
    package init() {}

    /// A path at `fps` frames per second.
    package init(fps: Double) { self.fps = fps }

    /// The timestamp of frame `i`, seconds.
    package func timestamp(frame i: Int) -> Double { startTime + Double(i) / fps }

    /// The camera-to-world pose (OpenCV camera axes) of frame `i`.
    package func pose(frame i: Int) -> SynthPose { pose(at: Double(i) / fps) }

    /// The camera-to-world pose (OpenCV camera axes) `seconds` after the first frame.
    package func pose(at seconds: Double) -> SynthPose {
        let s = seconds
        let phase = 2 * Double.pi * s / loopSeconds + 0.4
        let position = SIMD3(center.x + radii.x * cosine(phase) + 0.04 * sine(1.7 * s + 0.3),
                             height + 0.01 * sine(2 * Double.pi * 1.6 * s) + 0.02 * sine(0.45 * s),
                             center.y + radii.y * sine(phase) + 0.03 * sine(1.3 * s + 1.1))
        // The gaze sweeps from the nearest wall (outward) to along the path and across the
        // room, and back, with a little sway.
        let sweep = gazeSweep.x + gazeSweep.y * sine(2 * Double.pi * s / gazePeriod + 0.3)
        var heading = phase + sweep + 0.08 * sine(0.7 * s + 0.2) + 0.03 * sine(2.3 * s)
        var tilt = pitch + 0.15 * sine(0.53 * s + 1.0) + 0.02 * sine(3.1 * s)
        let wall = wallWeight(at: s)
        if wall > 0 {
            // Toward +z (heading π/2), level.
            var turn = (Double.pi / 2 - heading).truncatingRemainder(dividingBy: 2 * Double.pi)
            if turn > Double.pi { turn -= 2 * Double.pi } else if turn < -Double.pi { turn += 2 * Double.pi }
            heading += wall * turn
            tilt *= 1 - wall
        }
        let forward = SIMD3(cosine(heading) * cosine(tilt), -sine(tilt), sine(heading) * cosine(tilt))
        let up = SIMD3<Double>(0, 1, 0)
        let right0 = normalized(cross(forward, up))
        let down0 = cross(forward, right0)
        let roll = rollAmplitude * sine(0.9 * s + 0.5) + 0.015 * sine(4.1 * s)
        let c = cosine(roll), sn = sine(roll)
        let right = right0 * c + down0 * sn
        let down = down0 * c - right0 * sn
        return SynthPose(rotation: SynthMatrix3(columns: right, down, forward), translation: position)
    }

    /// How far the gaze is turned to the plain wall at `seconds`: 0 … 1 (smooth ramps).
    func wallWeight(at seconds: Double) -> Double {
        guard let wall = plainWall else { return 0 }
        let ramp = max(plainWallRamp, 1e-9)
        let x = min((seconds - (wall.lowerBound - ramp)) / ramp, ((wall.upperBound + ramp) - seconds) / ramp)
        let w = min(1, max(0, x))
        return w * w * (3 - 2 * w)
    }

    /// The frames of `count` whose gaze is fully on the plain wall (`plainWall`).
    package func plainWallFrames(count: Int) -> [Int] {
        (0..<count).filter { wallWeight(at: Double($0) / fps) >= 1 }
    }

    /// A path for pose refinement: `frames` frames at `fps` making one whole loop (it ends
    /// where it started, looking where it started), with a stretch of `wallSeconds` facing the plain wall in +z where
    /// the path passes nearest to it (nil: none).
    package static func loop(frames: Int, fps: Double = 60, wallSeconds: Double? = 1.2) -> SyntheticTrajectory {
        var path = SyntheticTrajectory(fps: fps)
        path.loopSeconds = Double(frames) / fps
        // The gaze sweeps once per loop: the end looks where the start did (a loop closure
        // can see it).
        path.gazePeriod = path.loopSeconds
        if let wallSeconds {
            // The ellipse is nearest the +z wall at phase π/2 (phase = 2π·s/loop + 0.4).
            let nearest = (Double.pi / 2 - 0.4) / (2 * Double.pi) * path.loopSeconds
            path.plainWall = (nearest - wallSeconds / 2)...(nearest + wallSeconds / 2)
        }
        return path
    }
}
