#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A place on the WGS84 ellipsoid: latitude and longitude in degrees, height in meters
/// above the ellipsoid (docs/geo.md). Double precision throughout.
public struct GeodeticPosition: Equatable, Sendable {
    /// Degrees north (−90 to 90).
    public var latitude: Double
    /// Degrees east (−180 to 180).
    public var longitude: Double
    /// Meters above the ellipsoid.
    public var height: Double

    /// A position from its parts.
    public init(latitude: Double, longitude: Double, height: Double = 0) {
        self.latitude = latitude
        self.longitude = longitude
        self.height = height
    }

    /// Earth-centred, Earth-fixed coordinates, meters: `N = a/√(1 − e² sin²φ)`,
    /// `X = (N + h) cos φ cos λ`, `Y = (N + h) cos φ sin λ`, `Z = (N (1 − e²) + h) sin φ`.
    package var ecef: SIMD3<Double> {
        let phi = latitude * .pi / 180, lambda = longitude * .pi / 180
        let e2 = WGS84.eccentricitySquared
        let n = WGS84.semiMajorAxis / (1 - e2 * sin(phi) * sin(phi)).squareRoot()
        return SIMD3((n + height) * cos(phi) * cos(lambda), (n + height) * cos(phi) * sin(lambda),
                     (n * (1 - e2) + height) * sin(phi))
    }
}

extension GeodeticPosition {
    /// The geodetic position of an ECEF point (meters), by fixed-point iteration on the
    /// latitude (well under a millimeter after a few steps away from the Earth's centre).
    package init(ecef q: SIMD3<Double>) {
        let a = WGS84.semiMajorAxis, e2 = WGS84.eccentricitySquared
        let p = (q.x * q.x + q.y * q.y).squareRoot()
        let lambda = atan2(q.y, q.x)
        var phi = atan2(q.z, p * (1 - e2))
        var h = 0.0
        for _ in 0..<12 {
            let n = a / (1 - e2 * sin(phi) * sin(phi)).squareRoot()
            h = abs(cos(phi)) > 1e-9 ? p / cos(phi) - n : abs(q.z) / abs(sin(phi)) - n * (1 - e2)
            phi = atan2(q.z, p * (1 - e2 * n / (n + h)))
        }
        self.init(latitude: phi * 180 / .pi, longitude: lambda * 180 / .pi, height: h)
    }
}

/// The WGS84 ellipsoid.
package enum WGS84 {
    /// Semi-major axis a, meters.
    package static let semiMajorAxis = 6_378_137.0
    /// Flattening f = 1/298.257223563.
    package static let flattening = 1 / 298.257_223_563
    /// Semi-minor axis b = a (1 − f).
    package static let semiMinorAxis = semiMajorAxis * (1 - flattening)
    /// First eccentricity squared e² = f (2 − f).
    package static let eccentricitySquared = flattening * (2 - flattening)
}

/// A local East-North-Up frame at a geodetic origin: meters east, north and up (along the
/// ellipsoid's normal) from the origin, a right-handed frame.
package struct ENUFrame: Equatable, Sendable {
    /// The origin.
    package let origin: GeodeticPosition
    /// The origin in ECEF.
    let originECEF: SIMD3<Double>
    /// Rows of the ECEF-to-ENU rotation: east, north, up.
    let east: SIMD3<Double>, north: SIMD3<Double>, up: SIMD3<Double>

    /// The frame at `origin`.
    package init(origin: GeodeticPosition) {
        self.origin = origin
        originECEF = origin.ecef
        let phi = origin.latitude * .pi / 180, lambda = origin.longitude * .pi / 180
        east = SIMD3(-sin(lambda), cos(lambda), 0)
        north = SIMD3(-sin(phi) * cos(lambda), -sin(phi) * sin(lambda), cos(phi))
        up = SIMD3(cos(phi) * cos(lambda), cos(phi) * sin(lambda), sin(phi))
    }

    /// The ENU coordinates of an ECEF point, meters.
    package func enu(ecef p: SIMD3<Double>) -> SIMD3<Double> {
        let d = p - originECEF
        return SIMD3((east * d).sum(), (north * d).sum(), (up * d).sum())
    }

    /// The ENU coordinates of a geodetic position, meters.
    package func enu(_ position: GeodeticPosition) -> SIMD3<Double> { enu(ecef: position.ecef) }

    /// The geodetic position of ENU coordinates (through ECEF).
    package func geodetic(enu p: SIMD3<Double>) -> GeodeticPosition { GeodeticPosition(ecef: ecef(enu: p)) }

    /// The ECEF point of ENU coordinates (the inverse of `enu(ecef:)`).
    package func ecef(enu p: SIMD3<Double>) -> SIMD3<Double> {
        originECEF + east * p.x + north * p.y + up * p.z
    }
}
