/// The error ARKit's visual-inertial odometry puts into the poses a LiDAR app records, for
/// scans whose written poses are not the truth (tests and benchmarks of `rgbd refine`).
///
/// Recorded pose of frame `i` = true pose with its position moved by a drift `e(t)` and
/// its orientation turned about gravity (world +y) by a heading drift `ψ(t)`, plus a
/// per-frame jitter:
/// - `e` integrates a drift velocity that wanders as an Ornstein–Uhlenbeck process
///   (stationary standard deviation `positionDrift` per horizontal axis, half of it
///   vertically, correlation time `driftTime`): about 1–2 cm of error per second;
/// - `ψ` integrates a heading rate of the same kind (`headingDrift` rad/s);
/// - roll and pitch stay exact apart from the jitter (odometry sees gravity);
/// - at each of `jumps` (seconds) the accumulated `e` and `ψ` snap back to `jumpKeep` of
///   their value: a relocalisation, a step in the recorded relative motion that the
///   depth contradicts.
///
/// Frame 0 is recorded exactly (tracking starts there). Deterministic for a seed.
package struct SyntheticPoseError: Equatable, Sendable {
    /// Standard deviation of the drift velocity per horizontal axis, m/s.
    package var positionDrift: Double = 0.01
    /// Standard deviation of the heading drift rate, rad/s (0.3°/s).
    package var headingDrift: Double = 0.3 * .pi / 180
    /// Correlation time of the drift velocity and heading rate, seconds.
    package var driftTime: Double = 2
    /// Standard deviation of the per-frame position jitter, metres.
    package var jitter: Double = 0.0007
    /// Standard deviation of the per-frame rotation jitter about each axis, radians.
    package var angularJitter: Double = 0.0003
    /// Times of relocalisation jumps, seconds after the first frame.
    package var jumps: [Double] = []
    /// The part of the accumulated drift a jump keeps.
    package var jumpKeep: Double = 0.3
    /// The seed.
    package var seed: UInt64 = 7

    /// ARKit-like drift with the defaults, no jumps.
    package init() {}

    /// No error at all: the recorded poses are the truth (for "perfect input stays
    /// perfect").
    package static var none: SyntheticPoseError {
        var error = SyntheticPoseError()
        error.positionDrift = 0
        error.headingDrift = 0
        error.jitter = 0
        error.angularJitter = 0
        return error
    }

    /// The recorded poses of `truth` (camera-to-world, OpenCV axes, the room's world) at
    /// `fps` frames per second.
    package func recorded(_ truth: [SynthPose], fps: Double) -> [SynthPose] {
        var random = SplitMix(state: seed)
        func normal() -> Double {
            // Box–Muller from two uniforms in (0, 1].
            let a = 1 - random.next(), b = random.next()
            return (-2 * logarithm(a)).squareRoot() * cosine(2 * .pi * b)
        }
        let dt = 1 / fps
        let decay = exponential(-dt / driftTime), spread = (1 - decay * decay).squareRoot()
        let axisScale = SIMD3<Double>(1, 0.5, 1)
        var velocity = SIMD3<Double>(normal(), normal(), normal()) * axisScale * positionDrift
        var rate = normal() * headingDrift
        var drift = SIMD3<Double>.zero, heading = 0.0
        var pendingJumps = jumps.sorted()
        var result: [SynthPose] = []
        result.reserveCapacity(truth.count)
        for (i, pose) in truth.enumerated() {
            if i > 0 {
                velocity = velocity * decay + SIMD3(normal(), normal(), normal()) * axisScale * positionDrift * spread
                rate = rate * decay + normal() * headingDrift * spread
                drift += velocity * dt
                heading += rate * dt
                let t = Double(i) * dt
                while let next = pendingJumps.first, next <= t {
                    pendingJumps.removeFirst()
                    drift *= jumpKeep
                    heading *= jumpKeep
                }
            }
            let jitterRotation = i == 0 ? SynthMatrix3.identity
                : SynthMatrix3.rotation(axis: SIMD3(1, 0, 0), angle: normal() * angularJitter)
                * SynthMatrix3.rotation(axis: SIMD3(0, 1, 0), angle: normal() * angularJitter)
                * SynthMatrix3.rotation(axis: SIMD3(0, 0, 1), angle: normal() * angularJitter)
            let jitterOffset = i == 0 ? SIMD3<Double>.zero : SIMD3(normal(), normal(), normal()) * jitter
            let turn = SynthMatrix3.rotation(axis: SIMD3(0, 1, 0), angle: heading) * jitterRotation
            result.append(SynthPose(rotation: turn * pose.rotation, translation: pose.translation + drift + jitterOffset))
        }
        return result
    }
}
