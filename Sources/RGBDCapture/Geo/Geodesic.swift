#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The shortest path between two places on the WGS84 ellipsoid (the inverse geodesic
/// problem), by Vincenty's iteration (1975): distance in meters and the bearing at each
/// end, degrees clockwise from true north. Agrees with Karney's algorithm (GeographicLib)
/// to well under a millimeter except for nearly antipodal places, where the iteration does
/// not converge and `init` returns nil.
package struct Geodesic: Equatable, Sendable {
    /// Meters along the ellipsoid.
    package var distance: Double
    /// The bearing at the start toward the end, degrees in `[0, 360)`.
    package var initialBearing: Double
    /// The bearing of the path where it arrives, degrees in `[0, 360)`.
    package var finalBearing: Double

    /// The geodesic from `start` to `end` (heights ignored); nil when the iteration does
    /// not converge (nearly antipodal places).
    package init?(from start: GeodeticPosition, to end: GeodeticPosition) {
        let a = WGS84.semiMajorAxis, b = WGS84.semiMinorAxis, f = WGS84.flattening
        let degrees = Double.pi / 180
        let u1 = atan((1 - f) * tan(start.latitude * degrees))
        let u2 = atan((1 - f) * tan(end.latitude * degrees))
        var l = (end.longitude - start.longitude) * degrees
        l = remainder(l, 2 * .pi)
        let sinU1 = sin(u1), cosU1 = cos(u1), sinU2 = sin(u2), cosU2 = cos(u2)
        var lambda = l
        var sinSigma = 0.0, cosSigma = 1.0, sigma = 0.0, cosSqAlpha = 1.0, cos2SigmaM = 0.0
        var sinLambda = 0.0, cosLambda = 1.0
        var converged = false
        for _ in 0..<200 {
            sinLambda = sin(lambda)
            cosLambda = cos(lambda)
            let t1 = cosU2 * sinLambda, t2 = cosU1 * sinU2 - sinU1 * cosU2 * cosLambda
            sinSigma = (t1 * t1 + t2 * t2).squareRoot()
            if sinSigma == 0 {
                // The same place.
                self.init(distance: 0, initialBearing: 0, finalBearing: 0)
                return
            }
            cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda
            sigma = atan2(sinSigma, cosSigma)
            let sinAlpha = cosU1 * cosU2 * sinLambda / sinSigma
            cosSqAlpha = 1 - sinAlpha * sinAlpha
            cos2SigmaM = cosSqAlpha != 0 ? cosSigma - 2 * sinU1 * sinU2 / cosSqAlpha : 0   // on the equator
            let c = f / 16 * cosSqAlpha * (4 + f * (4 - 3 * cosSqAlpha))
            let previous = lambda
            lambda = l + (1 - c) * f * sinAlpha
                * (sigma + c * sinSigma * (cos2SigmaM + c * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
            if abs(lambda - previous) < 1e-13 { converged = true; break }
            if abs(lambda) > .pi { return nil }
        }
        guard converged else { return nil }
        let uSq = cosSqAlpha * (a * a - b * b) / (b * b)
        let bigA = 1 + uSq / 16384 * (4096 + uSq * (-768 + uSq * (320 - 175 * uSq)))
        let bigB = uSq / 1024 * (256 + uSq * (-128 + uSq * (74 - 47 * uSq)))
        let deltaSigma = bigB * sinSigma * (cos2SigmaM + bigB / 4 * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)
            - bigB / 6 * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
        let distance = b * bigA * (sigma - deltaSigma)
        let alpha1 = atan2(cosU2 * sinLambda, cosU1 * sinU2 - sinU1 * cosU2 * cosLambda)
        let alpha2 = atan2(cosU1 * sinLambda, -sinU1 * cosU2 + cosU1 * sinU2 * cosLambda)
        self.init(distance: distance, initialBearing: Self.bearing(alpha1 / degrees), finalBearing: Self.bearing(alpha2 / degrees))
    }

    /// A geodesic from its parts.
    package init(distance: Double, initialBearing: Double, finalBearing: Double) {
        self.distance = distance
        self.initialBearing = initialBearing
        self.finalBearing = finalBearing
    }

    /// An angle in degrees brought into `[0, 360)`.
    static func bearing(_ degrees: Double) -> Double {
        let r = degrees.truncatingRemainder(dividingBy: 360)
        let wrapped = r < 0 ? r + 360 : r
        return wrapped >= 360 ? 0 : wrapped
    }
}
