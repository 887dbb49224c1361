import Dispatch
import RGBDKit

/// A synthetic iPhone capture: `SyntheticScene` seen through a pinhole camera with
/// realistic calibration, rendered and then distorted with a realistic lookup table
/// exactly as a lens would, so rectification must give back the pinhole images.
///
/// Distorted pixel `q` shows the scene at the rectified point `p` with
/// `LensDistortion.apply(to: p) = q`, found with the model's exact numerical inverse.
/// Color is area-sampled (supersampled over the distorted pixel, as a sensor
/// integrates light); depth is sampled at the pixel center.
package struct SyntheticCapture: Sendable {
    /// The scene.
    package var scene: SyntheticScene
    /// The calibration written to the capture JSON.
    package var calibration: Calibration
    /// Color image size.
    package var colorWidth: Int
    /// See `colorWidth`.
    package var colorHeight: Int
    /// Depth map size.
    package var depthWidth: Int
    /// See `depthWidth`.
    package var depthHeight: Int
    /// Amplitude of deterministic sensor-like noise added to color, in 8-bit levels
    /// (0 = none). Real photos compress and decode like noisy images, not flat ones.
    package var colorNoise: Double = 0
    /// Amplitude of deterministic noise added to depth, in meters (0 = none). Makes the
    /// JSON look like a real export (17 significant digits per value).
    package var depthNoise: Double = 0
    /// Standard deviation of Gaussian depth noise one meter away, meters; it grows with the
    /// square of the depth (σ(z) = this × z², as LiDAR's and TrueDepth's does), added to
    /// `depthNoise` (0 = none).
    package var depthNoiseAtOneMeter: Double = 0
    /// Mixed into the color and depth noise so that captures with different seeds have
    /// different noise (0: the noise of earlier versions, the same for every capture).
    package var noiseSeed: UInt64 = 0
    /// EXIF written into the JPEG (`write`), nil for none. `geotagged` fills it from the
    /// scene's tilt.
    package var exif: SyntheticEXIF? = nil
    /// What the depth map is off by: the true depth times this is written (1 = metric; a
    /// Portrait photo's "relative" depth can be off by a scale).
    package var depthScale: Double = 1

    /// A capture of the default scene with an iPhone-like calibration at reference
    /// dimensions 4032×3024, images of the given sizes.
    package init(colorWidth: Int = 4032, colorHeight: Int = 3024, depthWidth: Int = 768, depthHeight: Int = 576,
                scene: SyntheticScene = SyntheticScene(), calibration: Calibration = SyntheticCapture.iPhoneCalibration()) {
        self.scene = scene
        self.calibration = calibration
        self.colorWidth = colorWidth
        self.colorHeight = colorHeight
        self.depthWidth = depthWidth
        self.depthHeight = depthHeight
    }

    /// An iPhone-like calibration: 4032×3024 reference, fx = fy = 2900, principal point
    /// and distortion center near (but not at) the image center, and a 42-entry barrel
    /// table `mag(s) = −0.028·s² − 0.012·s⁴` of the normalized radius `s` (−4 % at the
    /// corner) with an inverse table consistent with it.
    package static func iPhoneCalibration(tableSize: Int = 42, cornerMagnification: Double = -0.04) -> Calibration {
        let k2 = cornerMagnification * 0.7, k4 = cornerMagnification * 0.3
        let table: [Float] = (0..<tableSize).map { i in
            let s = Double(i) / Double(tableSize - 1)
            return Float(k2 * s * s + k4 * s * s * s * s)
        }
        return calibration(lookupTable: table)
    }

    /// The iPhone-like camera of `iPhoneCalibration` with another lens table and
    /// reference size: focal length, principal point and distortion center are scaled
    /// from the 4032×3024 ones per axis (`fx = 2900·W/4032`, `cy = 1511.6·H/3024`, …),
    /// and the inverse table is computed from `lookupTable` (`inverseTable(of:)`).
    ///
    /// - Precondition: `lookupTable.count >= 2`, positive reference sizes (test input).
    package static func calibration(lookupTable: [Float], referenceWidth: Int = 4032,
                                   referenceHeight: Int = 3024) -> Calibration {
        let sx = Double(referenceWidth) / 4032, sy = Double(referenceHeight) / 3024
        let center = SIMD2(2015.53 * sx, 1511.21 * sy)
        let forward = LensDistortion(center: center, table: lookupTable, width: referenceWidth, height: referenceHeight)
        return Calibration(
            intrinsics: Intrinsics(fx: 2900 * sx, fy: 2900 * sy, cx: 2016.3 * sx, cy: 1511.6 * sy,
                                   width: referenceWidth, height: referenceHeight),
            pixelSize: 0.0014, distortionCenter: center, lookupTable: lookupTable,
            inverseLookupTable: inverseTable(of: forward))
    }

    /// A lens table shaped like real ones rather than like the smooth barrel of
    /// `iPhoneCalibration`: positive (pincushion, so the corners of a rectified image
    /// have no source), not monotonic (it dips twice on the way out), with a first entry
    /// that is not 0, and +3 % at the corner. 42 entries, made up for the tests.
    package static let realisticPincushionTable: [Float] = [
        0.004, 0.006, 0.009, 0.012, 0.011, 0.015, 0.0155, 0.0158, 0.016, 0.0157,
        0.0152, 0.0150, 0.0153, 0.0158, 0.0164, 0.0171, 0.0178, 0.0184, 0.0189, 0.0192,
        0.0193, 0.0191, 0.0188, 0.0186, 0.0187, 0.0190, 0.0195, 0.0201, 0.0208, 0.0215,
        0.0222, 0.0229, 0.0236, 0.0243, 0.0250, 0.0257, 0.0264, 0.0271, 0.0279, 0.0287,
        0.0294, 0.0300,
    ]

    /// The inverse table of `forward`: at distorted radius `r_d = i·r_max/(n − 1)`,
    /// `ρ/r_d − 1` where `ρ·(1 + mag(ρ)) = r_d`.
    package static func inverseTable(of forward: LensDistortion) -> [Float] {
        let n = forward.table.count
        return (0..<n).map { i in
            if i == 0 { return Float(-Double(forward.table[0]) / (1 + Double(forward.table[0]))) }
            let rd = Double(i) * forward.maxRadius / Double(n - 1)
            let p = forward.invert(forward.center + SIMD2(rd, 0))
            return Float((p.x - forward.center.x) / rd - 1)
        }
    }

    /// Intrinsics of the rectified (pinhole) color image.
    package var colorIntrinsics: Intrinsics { calibration.intrinsics.scaled(toWidth: colorWidth, height: colorHeight) }
    /// Intrinsics of the rectified (pinhole) depth map.
    package var depthIntrinsics: Intrinsics { calibration.intrinsics.scaled(toWidth: depthWidth, height: depthHeight) }

    /// Gravity in the camera's axes (unit, OpenCV, pointing down): the scene's +y seen
    /// from the camera (`cameraToScene`'s second row).
    package var trueDown: SIMD3<Double> { scene.cameraToScene?.row1 ?? SIMD3(0, 1, 0) }

    /// This capture with EXIF saying where it was taken (`latitude`, `longitude`,
    /// `altitude` above sea level), that the scene's +z faces `heading` degrees clockwise
    /// from north, and the accelerometer reading of the scene's gravity (`trueDown`).
    package func geotagged(latitude: Double, longitude: Double, altitude: Double, heading: Double,
                          magnetic: Bool = false, horizontalError: Double = 5) -> SyntheticCapture {
        var copy = self
        var exif = SyntheticEXIF()
        exif.latitude = latitude
        exif.longitude = longitude
        exif.altitude = altitude
        exif.horizontalError = horizontalError
        exif.direction = (heading, magnetic ? "M" : "T")
        exif.acceleration = SyntheticEXIF.acceleration(down: trueDown)
        copy.exif = exif
        return copy
    }

    /// The true depth at rectified pixel `(u, v)` of an image with intrinsics `k`.
    package func trueDepth(u: Double, v: Double, intrinsics k: Intrinsics) -> Double {
        scene.hit((u - k.cx) / k.fx, (v - k.cy) / k.fy).z
    }

    /// The distorted color image, each pixel the mean over `supersampling²` points
    /// (checker edges are already area-correct; supersampling smooths the box's).
    package func renderColor(supersampling n: Int = 2) -> ColorImage {
        let k = colorIntrinsics
        let distortion = calibration.scaled(toWidth: colorWidth, height: colorHeight).distortion
        let width = colorWidth
        var samples = [UInt8](repeating: 0, count: colorWidth * colorHeight * 3)
        samples.withUnsafeMutableBufferPointer { buffer in
            guard let out = buffer.baseAddress else { return }
            RowScheduler.parallel.forEachBand(rows: colorHeight) { rows in
                for y in rows {
                    for x in 0..<width {
                        var sum = SIMD3<Double>.zero
                        for j in 0..<n {
                            for i in 0..<n {
                                let q = SIMD2(Double(x) + (Double(i) + 0.5) / Double(n) - 0.5,
                                              Double(y) + (Double(j) + 0.5) / Double(n) - 0.5)
                                let p = distortion.invert(q)
                                sum += scene.color((p.x - k.cx) / k.fx, (p.y - k.cy) / k.fy, pixelAngle: 1 / k.fx)
                            }
                        }
                        let mean = sum / Double(n * n)
                        let o = (y * width + x) * 3
                        for c in 0..<3 {
                            let noise = colorNoise * SyntheticCapture.noise(x, y, c, seed: noiseSeed)
                            out[o + c] = UInt8(max(0, min(255, (mean[c] + noise).rounded())))
                        }
                    }
                }
            }
        }
        return ColorImage(width: colorWidth, height: colorHeight, channels: 3, samples: samples)
    }

    /// Deterministic noise in [−1, 1) from a hash of pixel, channel and seed (seed 0: the
    /// hash of earlier versions).
    static func noise(_ x: Int, _ y: Int, _ c: Int, seed: UInt64 = 0) -> Double {
        var h = UInt64(truncatingIfNeeded: x) &* 0x9E37_79B9_7F4A_7C15
        h ^= UInt64(truncatingIfNeeded: y) &* 0xC2B2_AE3D_27D4_EB4F
        h ^= UInt64(truncatingIfNeeded: c) &* 0x1656_67B1_9E37_79F9
        h ^= seed &* 0xD6E8_FEB8_6659_FD93
        h ^= h >> 31
        h &*= 0xBF58_476D_1CE4_E5B9
        h ^= h >> 29
        return Double(h >> 11) / Double(1 << 52) - 1
    }

    /// Deterministic standard normal noise (Box–Muller over two hashed uniforms).
    static func gaussian(_ x: Int, _ y: Int, seed: UInt64) -> Double {
        let u1 = max((noise(x, y, 11, seed: seed) + 1) / 2, 1e-300), u2 = (noise(x, y, 12, seed: seed) + 1) / 2
        return (-2 * logarithm(u1)).squareRoot() * cosine(2 * Double.pi * u2)
    }

    /// The distorted depth map (meters), sampled at pixel centers.
    package func renderDepth() -> DepthMap {
        let k = depthIntrinsics
        let distortion = calibration.scaled(toWidth: depthWidth, height: depthHeight).distortion
        let width = depthWidth
        var samples = [Float](repeating: 0, count: depthWidth * depthHeight)
        samples.withUnsafeMutableBufferPointer { buffer in
            guard let out = buffer.baseAddress else { return }
            RowScheduler.parallel.forEachBand(rows: depthHeight) { rows in
                for y in rows {
                    for x in 0..<width {
                        let p = distortion.invert(SIMD2(Double(x), Double(y)))
                        let h = scene.hit((p.x - k.cx) / k.fx, (p.y - k.cy) / k.fy)
                        let hole = h.surface == .tag && scene.tags[h.face].depthMissing
                        var z = h.z + depthNoise * SyntheticCapture.noise(x, y, 7, seed: noiseSeed)
                        if depthNoiseAtOneMeter > 0, h.z.isFinite {
                            z += depthNoiseAtOneMeter * h.z * h.z * SyntheticCapture.gaussian(x, y, seed: noiseSeed)
                        }
                        out[y * width + x] = hole ? .nan : Float(z * depthScale)
                    }
                }
            }
        }
        return DepthMap(width: depthWidth, height: depthHeight, channels: 1, samples: samples)
    }
}
