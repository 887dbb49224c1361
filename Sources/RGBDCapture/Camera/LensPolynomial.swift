/// The lens polynomial of a Portrait photo's depth metadata turned into the lookup table
/// rgbd rectifies with (docs/portrait.md).
///
/// A photo stores 8 coefficients `c0…c7` instead of a table: a distortion in percent as a
/// polynomial in `t = r²`, with `r` the radius on the sensor in millimeters. The table
/// samples it at `count` radii spaced evenly from the distortion center to the farthest
/// corner of the reference image:
///
///     r_max = |farthest corner − center| · pixelSize        (millimeters)
///     r_i = r_max · i / (count − 1),  t = r_i²
///     P = c0 + c1·t + c2·t² + … + c7·t⁷,  s = 1 + P / 100
///     table[i] = s > 0 ? 1/s − 1 : 0
///
/// `LensDistortionCoefficients` give `lens_distortion_lookup_table` (rectified →
/// distorted), `InverseLensDistortionCoefficients` the inverse table.
package enum LensPolynomial {
    /// The number of entries of the tables AVFoundation makes (and of captured tables).
    package static let tableCount = 42

    /// The lookup table of `coefficients` (at most 8; missing ones are 0) for a reference
    /// image of `width × height` pixels of `pixelSize` millimeters with its distortion
    /// center at `center` (reference pixels).
    ///
    /// - Throws: `RGBDError(.invalidArgument)` for a size that is not positive, a pixel
    ///   size that is not positive and finite, a center far outside the image, more than 8
    ///   coefficients, a coefficient that is not finite, or a table that leaves (−1, 10).
    package static func lookupTable(coefficients: [Double], pixelSize: Double, center: SIMD2<Double>,
                                   width: Int, height: Int, count: Int = tableCount) throws -> [Float] {
        guard width > 0, height > 0 else {
            throw RGBDError(.invalidArgument, "the reference size \(width)×\(height) is not positive")
        }
        guard pixelSize.isFinite, pixelSize > 0 else {
            throw RGBDError(.invalidArgument, "the pixel size \(pixelSize) mm is not a positive number")
        }
        guard LensDistortion.isPlausibleCenter(center, width: width, height: height) else {
            throw RGBDError(.invalidArgument, "the distortion center (\(center.x), \(center.y)) is far outside the \(width)×\(height) reference image")
        }
        guard coefficients.count <= 8 else {
            throw RGBDError(.invalidArgument, "a lens polynomial has at most 8 coefficients, found \(coefficients.count)")
        }
        if let bad = coefficients.firstIndex(where: { !$0.isFinite }) {
            throw RGBDError(.invalidArgument, "lens coefficient \(bad) (\(coefficients[bad])) is not a finite number")
        }
        guard count >= LensDistortion.minimumTableCount else {
            throw RGBDError(.invalidArgument, "a table needs at least 2 entries, asked for \(count)")
        }
        let dx = max(center.x, Double(width) - center.x)
        let dy = max(center.y, Double(height) - center.y)
        let maxRadius = (dx * dx + dy * dy).squareRoot() * pixelSize
        var table: [Float] = []
        table.reserveCapacity(count)
        for i in 0..<count {
            let r = maxRadius * Double(i) / Double(count - 1)
            let entry = Float(magnification(coefficients: coefficients, radius: r))
            guard LensDistortion.isPlausibleMagnification(Double(entry)) else {
                throw RGBDError(.invalidArgument, "the lens polynomial gives table entry \(i) = \(entry), out of range (−1, 10)")
            }
            table.append(entry)
        }
        return table
    }

    /// `1/s − 1` (0 where `s ≤ 0`) with `s = 1 + P(r²)/100` at radius `r` millimeters.
    package static func magnification(coefficients: [Double], radius r: Double) -> Double {
        let t = r * r
        var p = 0.0
        for c in coefficients.reversed() { p = p * t + c }
        let s = 1 + p / 100
        guard s > 0, s.isFinite else { return 0 }
        return 1 / s - 1
    }
}
