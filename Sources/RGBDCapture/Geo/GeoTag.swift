#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a photo was taken, which way its camera faced and which way was down, read from
/// its EXIF (docs/geo.md), with where each came from and how uncertain it is.
package struct GeoTag: Equatable, Sendable {
    /// The camera's position from the EXIF GPS tags.
    package struct Location: Equatable, Sendable {
        /// Degrees north.
        package var latitude: Double
        /// Degrees east.
        package var longitude: Double
        /// Meters above mean sea level (EXIF's reference; not the ellipsoid), if recorded.
        package var altitude: Double?
        /// The horizontal positioning error the phone recorded (`GPSHPositioningError`),
        /// meters, if it did.
        package var horizontalError: Double?
        /// When the fix was taken, ISO 8601 UTC, if recorded.
        package var time: String?
        /// Where it came from.
        package var source: String { "EXIF GPS" }
    }

    /// The direction the camera faced (`GPSImgDirection`).
    package struct Heading: Equatable, Sendable {
        /// Degrees clockwise from north, `[0, 360)`.
        package var degrees: Double
        /// Whether north is true north (`T`) or magnetic north (`M`; the declination is not
        /// applied anywhere in rgbd).
        package var isMagnetic: Bool
        /// Where it came from.
        package var source: String { "EXIF GPSImgDirection (\(isMagnetic ? "magnetic" : "true") north)" }
        /// What is known of its uncertainty: EXIF stores none.
        package static let uncertaintyNote = "EXIF stores no heading uncertainty; phone compasses are typically off by a few degrees, sometimes 10 to 25 degrees"
    }

    /// Gravity measured by the phone's accelerometer at the moment of the photo (Apple's
    /// MakerNote `AccelerationVector`), in the photo's OpenCV camera axes (x right, y down,
    /// z forward; pixels as stored, sensor orientation; back camera).
    package struct Gravity: Equatable, Sendable {
        /// The accelerometer's reading as stored, in g (phone axes).
        package var acceleration: SIMD3<Double>
        /// The unit vector pointing down, camera axes: `normalize(−a_y, −a_x, −a_z)`.
        package var down: SIMD3<Double>
        /// Degrees the optical axis (+z) points above the horizon (negative: below):
        /// `asin(−down_z)`.
        package var pitch: Double
        /// Degrees from the image's downward axis (+y) to gravity's direction in the image
        /// plane, positive toward the image's right (+x): `atan2(down_x, down_y)`. 0 when
        /// the stored image's rows are level; ±90° for a phone held in portrait.
        package var roll: Double
        /// `|a|` in g: near 1 when the phone was still; far from it, it was accelerating
        /// and `down` is less certain.
        package var magnitude: Double
        /// Where it came from.
        package var source: String { "Apple MakerNote AccelerationVector" }

        /// Gravity from an accelerometer reading `a` (g, the phone's axes).
        package init?(acceleration a: SIMD3<Double>) {
            let m = (a * a).sum().squareRoot()
            guard m > 0, m.isFinite else { return nil }
            acceleration = a
            magnitude = m
            down = SIMD3(-a.y, -a.x, -a.z) / m
            pitch = asin(max(-1, min(1, -down.z))) * 180 / .pi
            roll = atan2(down.x, down.y) * 180 / .pi
        }
    }

    /// The camera's position, if the EXIF has a usable one.
    package var location: Location?
    /// The camera's heading, if recorded.
    package var heading: Heading?
    /// Gravity in camera axes, if recorded and usable for these pixels.
    package var gravity: Gravity?
    /// What the EXIF says that cannot be used, one line each (no file name).
    package var warnings: [String] = []

    /// Nothing known.
    package init() {}

    /// What `exif` says, for a photo whose pixels are `width × height` as stored. The
    /// MakerNote's vector is in the phone's sensor axes: pixels not in the sensor's
    /// (landscape) orientation, or an EXIF Orientation other than 1 to 8 for the raw sensor
    /// rows, are said in `warnings` and their gravity is not used.
    package init(exif: EXIFMetadata, width: Int, height: Int) {
        warnings = exif.warnings
        if let gps = exif.gps, let latitude = gps.latitude, let longitude = gps.longitude {
            location = Location(latitude: latitude, longitude: longitude, altitude: gps.altitude,
                                horizontalError: gps.horizontalError, time: gps.time)
        }
        if let direction = exif.gps?.imageDirection, let reference = exif.gps?.imageDirectionReference {
            heading = Heading(degrees: direction, isMagnetic: reference == "M")
        }
        if let a = exif.accelerationVector, let g = Gravity(acceleration: a) {
            if height > width {
                warnings.append("the pixels are portrait (\(width)×\(height)), not in the camera sensor's landscape orientation, but the MakerNote's acceleration vector is in the sensor's axes (the photo was rotated after capture): gravity not used")
            } else {
                gravity = g
            }
        }
    }

    /// Whether nothing is known.
    package var isEmpty: Bool { location == nil && heading == nil && gravity == nil }
}

extension GeoTag {
    /// The geotag of a photo's bytes (JPEG or HEIF) whose stored size is `width × height`;
    /// nil when the photo has no EXIF.
    package init?(photo: [UInt8], width: Int, height: Int) {
        guard let exif = EXIFMetadata(photo: photo) else { return nil }
        self.init(exif: exif, width: width, height: height)
    }
}
