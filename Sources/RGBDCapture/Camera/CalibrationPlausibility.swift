/// The one plausibility check of calibration values, made by every reader (the capture
/// JSON's `CalibrationReader`, the Portrait XMP's `PortraitReader.calibration`) before a
/// `Calibration` exists, so that no output ever holds a NaN or an infinity born of a
/// value such as a focal length of 5e-324 or a principal point at 1e308
/// (docs/format.md, "Limits").
///
/// - Focal lengths: finite, between `1/maxFocalMultiple` and `maxFocalMultiple` times
///   the reference image's larger side (iPhone lenses are about 0.35 to 4 times it).
/// - Principal point and distortion center: finite, within one image size of the
///   reference image (`LensDistortion.isPlausibleCenter`; real ones are near its middle).
/// - Pixel size, when given: finite, positive and at most `maxPixelSize` millimeters
///   (iPhone sensors' pixels are about 0.001 mm).
package enum CalibrationPlausibility {
    /// The factor focal lengths may be away from the reference image's larger side.
    package static let maxFocalMultiple: Double = 100

    /// The largest pixel size accepted, millimeters.
    package static let maxPixelSize: Double = 1

    /// The calibration value a problem is about; each reader names it by its own key.
    package enum Value: Sendable, Equatable {
        /// `fx`, `fy` (the intrinsic matrix).
        case focalLengths
        /// `cx`, `cy` (the intrinsic matrix).
        case principalPoint
        /// The lens distortion center.
        case distortionCenter
        /// The pixel size.
        case pixelSize
    }

    /// The first implausible value among these (at reference dimensions `width ×
    /// height`) and what is wrong with it, in words; nil if all are plausible.
    package static func problem(fx: Double, fy: Double, cx: Double, cy: Double, width: Int, height: Int,
                               distortionCenter: SIMD2<Double>?, pixelSize: Double?) -> (value: Value, message: String)? {
        let side = Double(max(width, height))
        let (low, high) = (side / maxFocalMultiple, side * maxFocalMultiple)
        for f in [fx, fy] where !(f >= low && f <= high) {
            return (.focalLengths, "the focal lengths (fx \(show(fx)), fy \(show(fy))) must lie between \(show(low)) and \(show(high)) pixels (1/\(Int(maxFocalMultiple)) to \(Int(maxFocalMultiple)) times the \(width)×\(height) reference image's larger side)")
        }
        if !LensDistortion.isPlausibleCenter(SIMD2(cx, cy), width: width, height: height) {
            return (.principalPoint, "the principal point (\(show(cx)), \(show(cy))) is far outside the \(width)×\(height) reference image")
        }
        if let center = distortionCenter, !LensDistortion.isPlausibleCenter(center, width: width, height: height) {
            return (.distortionCenter, "(\(show(center.x)), \(show(center.y))) is far outside the \(width)×\(height) reference image")
        }
        if let p = pixelSize, !(p > 0 && p <= maxPixelSize) {
            return (.pixelSize, "the pixel size \(show(p)) mm is not plausible (expected a positive number of millimeters, at most \(show(maxPixelSize)))")
        }
        return nil
    }

    /// The first implausible value of a calibration, nil if it is plausible (what every
    /// reader has checked of the calibrations it returns).
    package static func problem(of calibration: Calibration) -> (value: Value, message: String)? {
        let k = calibration.intrinsics
        return problem(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: k.width, height: k.height,
                       distortionCenter: calibration.distortionCenter, pixelSize: calibration.pixelSize)
    }

    /// A value for messages (`2900`, `5e-324`, `nan`).
    static func show(_ value: Double) -> String {
        value.isFinite && value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))" : "\(value)"
    }
}
