/// `rgbd info`'s rows and JSON for what the photo's EXIF says about place, heading and
/// gravity (docs/info.md, docs/geo.md).
extension CaptureInfo {
    /// The text rows: location, heading and gravity (each "not recorded" when the EXIF
    /// lacks it), or one row saying the photo has no EXIF.
    var geoRows: [(String, String)] {
        let rows = geo?.textRows ?? [("location", "none (the photo has no EXIF)")]
        return rows + placemarks.enumerated().map { i, p in (i == 0 ? "placemarks" : "", p.text) }
    }
}

extension PlacemarkSighting {
    /// One line: distance, bearing, where in the photo, occlusion.
    var text: String {
        var parts = [place.name + ":"]
        guard let distance, let bearing else { return place.name + ": not located (the photo has no usable GPS position)" }
        parts.append("\(DecimalText.fixed(distance, 1)) m, bearing \(DecimalText.fixed(bearing, 2))°")
        if let relative = relativeBearing { parts.append("(\(relative >= 0 ? "+" : "")\(DecimalText.fixed(relative, 2))° from the heading)") }
        switch inView {
        case true?:
            var at = "in view at column \(DecimalText.fixed(column ?? .nan, 1))"
            if let row { at += ", row \(DecimalText.fixed(row, 1))" }
            parts.append(at + (assumedLevel ? " (camera taken as level: no gravity)" : ""))
            if let occluded, let depthThere {
                parts.append(occluded ? "occluded: the depth map shows \(DecimalText.fixed(depthThere, 2)) m there" : "not occluded (depth \(DecimalText.fixed(depthThere, 2)) m there)")
            }
        case false?: parts.append("not in view")
        case nil: parts.append("in view: unknown (no heading)")
        }
        return parts.joined(separator: " ")
    }

    /// The entry of `rgbd info --json`'s `placemarks`.
    package var jsonValue: JSONValue {
        typealias M = JSONValue.Member
        return .object([M("name", .string(place.name)), M("latitude", .number(place.latitude)),
                        M("longitude", .number(place.longitude)), M("altitude", .number(place.altitude)),
                        M("distance", .number(distance)), M("bearing", .number(bearing)),
                        M("relative_bearing", .number(relativeBearing)), M("in_view", inView.map { .bool($0) } ?? .null),
                        M("column", .number(column)), M("row", .number(row)), M("occluded", occluded.map { .bool($0) } ?? .null),
                        M("depth_there", .number(depthThere)), M("place_depth", .number(placeDepth)),
                        M("assumed_level", .bool(assumedLevel))])
    }
}

extension GeoTag {
    /// `rgbd info`'s rows for this geotag.
    var textRows: [(String, String)] {
        var rows: [(String, String)] = []
        if let l = location {
            var text = "\(DecimalText.fixed(abs(l.latitude), 7))° \(l.latitude < 0 ? "S" : "N"), \(DecimalText.fixed(abs(l.longitude), 7))° \(l.longitude < 0 ? "W" : "E")"
            if let altitude = l.altitude { text += ", \(DecimalText.fixed(altitude, 2)) m above sea level" }
            text += l.horizontalError.map { ", ±\(DecimalText.fixed($0, 1)) m" } ?? ", uncertainty not recorded"
            text += " (\(l.source)\(l.time.map { ", \($0)" } ?? ""))"
            rows.append(("location", text))
        } else {
            rows.append(("location", "not recorded"))
        }
        if let h = heading {
            rows.append(("heading", "\(DecimalText.fixed(h.degrees, 2))° clockwise from \(h.isMagnetic ? "magnetic" : "true") north (\(h.source); no uncertainty stored)"))
        } else {
            rows.append(("heading", "not recorded"))
        }
        if let g = gravity {
            let pitch = g.pitch >= 0 ? "above" : "below"
            rows.append(("gravity", "pitch \(DecimalText.fixed(g.pitch, 2))° (optical axis \(pitch) the horizon), roll \(DecimalText.fixed(g.roll, 2))° (\(g.source), |a| \(DecimalText.fixed(g.magnitude, 3)) g)"))
        } else {
            rows.append(("gravity", "not recorded"))
        }
        return rows
    }

    /// The `geo` member of `rgbd info --json`.
    package var jsonValue: JSONValue {
        typealias M = JSONValue.Member
        let locationValue: JSONValue = location.map { l in
            .object([M("latitude", .number(l.latitude)), M("longitude", .number(l.longitude)),
                     M("altitude_msl", .number(l.altitude)), M("horizontal_error", .number(l.horizontalError)),
                     M("time", l.time.map { .string($0) } ?? .null), M("source", .string(l.source))])
        } ?? .null
        let headingValue: JSONValue = heading.map { h in
            .object([M("degrees", .number(h.degrees)), M("reference", .string(h.isMagnetic ? "magnetic" : "true")),
                     M("source", .string(h.source))])
        } ?? .null
        let gravityValue: JSONValue = gravity.map { g in
            .object([M("down", .array([.number(g.down.x), .number(g.down.y), .number(g.down.z)])),
                     M("pitch", .number(g.pitch)), M("roll", .number(g.roll)), M("magnitude_g", .number(g.magnitude)),
                     M("acceleration", .array([.number(g.acceleration.x), .number(g.acceleration.y), .number(g.acceleration.z)])),
                     M("source", .string(g.source))])
        } ?? .null
        return .object([M("location", locationValue), M("heading", headingValue), M("gravity", gravityValue),
                        M("warnings", .array(warnings.map { .string($0) }))])
    }
}
