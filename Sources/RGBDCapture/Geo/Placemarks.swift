#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A named place (`--placemarks places.csv`, docs/geo.md): WGS84 latitude and longitude,
/// and optionally its altitude above mean sea level.
package struct Placemark: Equatable, Sendable {
    /// Its name, as the file gives it.
    package var name: String
    /// Degrees north.
    package var latitude: Double
    /// Degrees east.
    package var longitude: Double
    /// Meters above mean sea level, if given.
    package var altitude: Double?

    /// A place from its parts.
    package init(name: String, latitude: Double, longitude: Double, altitude: Double? = nil) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
    }

    /// The most places one file may list.
    package static let maxCount = 10_000

    /// The places of a CSV file: one per line, `name,latitude,longitude[,altitude]`
    /// (degrees, meters above sea level); a first line whose latitude is not a number is a
    /// header; blank lines and lines starting `#` are skipped. Lines end in `\n` or `\r\n`
    /// (as spreadsheets and Python's `csv` module write them); a UTF-8 byte order mark at
    /// the start is skipped.
    ///
    /// - Throws: `RGBDError` naming `file` and the line: a wrong number of fields, a number
    ///   that is not one, a latitude beyond 90° or a longitude beyond 180°, more than
    ///   `maxCount` places.
    package static func read(csv bytes: [UInt8], file: String) throws -> [Placemark] {
        var places: [Placemark] = []
        var firstLine = true
        for (number, raw) in CSVTable.lines(bytes) {
            let line = raw.trimmingWhitespace
            if line.isEmpty || line.hasPrefix("#") { continue }
            defer { firstLine = false }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingWhitespace }
            let where_ = "line \(number)"
            guard fields.count == 3 || fields.count == 4 else {
                throw RGBDError(.invalidArgument, file: file, location: where_,
                                "has \(fields.count) fields; a place is name,latitude,longitude[,altitude]")
            }
            guard let latitude = Double(fields[1]), let longitude = Double(fields[2]) else {
                if firstLine && Double(fields[1]) == nil { continue }   // a header
                throw RGBDError(.invalidArgument, file: file, location: where_,
                                "latitude and longitude must be numbers (\(RGBDError.shown(fields[1])), \(RGBDError.shown(fields[2])))")
            }
            guard abs(latitude) <= 90, abs(longitude) <= 180 else {
                throw RGBDError(.invalidArgument, file: file, location: where_,
                                "latitude \(latitude) or longitude \(longitude) is out of range (±90°, ±180°)")
            }
            var altitude: Double? = nil
            if fields.count == 4, !fields[3].isEmpty {
                guard let value = Double(fields[3]), value.isFinite else {
                    throw RGBDError(.invalidArgument, file: file, location: where_, "the altitude \(RGBDError.shown(fields[3])) is not a number")
                }
                altitude = value
            }
            guard places.count < maxCount else {
                throw RGBDError(.invalidArgument, file: file, "lists more than \(maxCount) places")
            }
            places.append(Placemark(name: String(fields[0]), latitude: latitude, longitude: longitude, altitude: altitude))
        }
        return places
    }
}

/// Where a place lies as seen from a geotagged photo: its distance and bearing on the
/// ellipsoid, and, with the photo's heading (and gravity), whether it falls in the photo's
/// horizontal field of view, at which column (and row), and whether the depth map shows
/// something nearer in that direction.
package struct PlacemarkSighting: Equatable, Sendable {
    /// The place.
    package var place: Placemark
    /// Meters along the ellipsoid from the camera (nil for nearly antipodal places).
    package var distance: Double?
    /// Degrees clockwise from true north, at the camera.
    package var bearing: Double?
    /// `bearing − heading`, degrees in `(−180, 180]` (nil without a heading).
    package var relativeBearing: Double?
    /// Whether its column lies within the rectified photo (nil without a heading).
    package var inView: Bool?
    /// Its column in the rectified photo (pixel centers at integers), when in front of the camera.
    package var column: Double?
    /// Its row, when both altitudes, gravity and a position in front of the camera allow.
    package var row: Double?
    /// Whether the depth map shows something nearer in its direction (nil when not known:
    /// no row, outside the photo, or no depth there).
    package var occluded: Bool?
    /// The depth (meters along the optical axis) the depth map has there, if any.
    package var depthThere: Double?
    /// The place's own depth along the optical axis, meters (when in front of the camera).
    package var placeDepth: Double?
    /// Whether the camera was taken to be level for lack of gravity.
    package var assumedLevel: Bool
}

extension PlacemarkSighting {
    /// A place's depth counts as behind the depth map's surface when it is more than this
    /// fraction deeper (depth sensors are a few percent off).
    package static let occlusionMargin = 0.05

    /// Where `places` lie as seen from a photo with geotag `geo`, whose rectified photo has
    /// intrinsics `intrinsics`. `depth(u, v)` gives the depth (meters along the optical
    /// axis) the capture's depth map has at rectified photo pixel `(u, v)`, nil for none.
    /// Without a location nothing can be said: every field but the place is nil.
    package static func locate(_ places: [Placemark], geo: GeoTag?, intrinsics k: Intrinsics,
                              depth: (Double, Double) -> Double?) -> [PlacemarkSighting] {
        places.map { place in
            var sighting = PlacemarkSighting(place: place, assumedLevel: geo?.gravity == nil)
            guard let location = geo?.location else { return sighting }
            let camera = GeodeticPosition(latitude: location.latitude, longitude: location.longitude, height: location.altitude ?? 0)
            let target = GeodeticPosition(latitude: place.latitude, longitude: place.longitude, height: place.altitude ?? camera.height)
            let geodesic = Geodesic(from: camera, to: target)
            sighting.distance = geodesic?.distance
            sighting.bearing = geodesic?.initialBearing
            guard let heading = geo?.heading else { return sighting }
            if let bearing = geodesic?.initialBearing {
                var relative = remainder(bearing - heading.degrees, 360)
                if relative == -180 { relative = 180 }
                sighting.relativeBearing = relative
            }
            // The place's direction in ENU at the camera, then in camera axes.
            let enu = ENUFrame(origin: camera).enu(target)
            var tag = geo ?? GeoTag()
            if tag.gravity == nil { tag.gravity = GeoTag.Gravity(acceleration: SIMD3(-1, 0, 0)) }   // level, upright
            guard let frame = try? WorldFrame.forCapture(.enu, geo: tag, file: "") else { return sighting }
            let c = frame.transform.inverse.rotate(enu)
            guard c.z > 0 else {
                sighting.inView = false
                return sighting
            }
            let u = k.fx * c.x / c.z + k.cx
            sighting.column = u
            sighting.inView = u >= -0.5 && u <= Double(k.width) - 0.5
            sighting.placeDepth = c.z
            guard place.altitude != nil, location.altitude != nil, geo?.gravity != nil else { return sighting }
            let v = k.fy * c.y / c.z + k.cy
            sighting.row = v
            guard sighting.inView == true, v >= -0.5, v <= Double(k.height) - 0.5 else { return sighting }
            if let d = depth(u, v) {
                sighting.depthThere = d
                sighting.occluded = d < c.z * (1 - occlusionMargin)
            }
            return sighting
        }
    }
}
