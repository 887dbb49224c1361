/// What rgbd reads from a photo's EXIF (docs/geo.md): camera names, the orientation tag,
/// the GPS tags (position, altitude, positioning error, time, image direction) and Apple's
/// MakerNote acceleration vector, as stored (no interpretation beyond signs and units).
///
/// Read by rgbd's own bounds-checked IFD walker (`TIFFDirectory`), both byte orders.
/// Reading never fails: what is missing is nil and what is broken is one line in
/// `warnings` (a loop between IFDs, an offset past the end, a count that overflows, a
/// rational with a zero denominator, a latitude beyond 90°), the rest still read.
package struct EXIFMetadata: Equatable, Sendable {
    /// `Make` (IFD0 0x010F).
    package var make: String?
    /// `Model` (IFD0 0x0110).
    package var model: String?
    /// `LensModel` (EXIF 0xA434).
    package var lensModel: String?
    /// `Orientation` (IFD0 0x0112): 1 = pixels as displayed, 6 = rotate 90° clockwise to
    /// display, … (TIFF's eight values).
    package var orientation: Int?
    /// The GPS IFD's tags, if it has any of those rgbd reads.
    package var gps: GPS?
    /// Apple MakerNote tag 0x0008 (`AccelerationVector`): three signed rationals, in g,
    /// in the phone's accelerometer axes (`GeoTag.Gravity` turns it into gravity).
    package var accelerationVector: SIMD3<Double>?
    /// What could not be read, one line each (no file name: the caller adds it).
    package var warnings: [String] = []

    /// The GPS tags, signs applied.
    package struct GPS: Equatable, Sendable {
        /// Degrees north (negative: south), from `GPSLatitude` and `GPSLatitudeRef`.
        package var latitude: Double?
        /// Degrees east (negative: west), from `GPSLongitude` and `GPSLongitudeRef`.
        package var longitude: Double?
        /// Meters above mean sea level (negative: below, `GPSAltitudeRef` 1).
        package var altitude: Double?
        /// `GPSHPositioningError`, meters.
        package var horizontalError: Double?
        /// `GPSImgDirection`: the direction the camera faced, degrees clockwise from north.
        package var imageDirection: Double?
        /// `GPSImgDirectionRef`: `T` (true north) or `M` (magnetic north).
        package var imageDirectionReference: String?
        /// `GPSDateStamp` and `GPSTimeStamp` as ISO 8601 UTC (`2018-02-05T07:11:43.07Z`),
        /// or the time alone (`07:11:43.07Z`) without a date.
        package var time: String?

        /// No tags.
        package init() {}
    }

    /// Nothing read.
    package init() {}
}

/// The tags rgbd reads, by IFD.
enum EXIFTag {
    static let make = 0x010F, model = 0x0110, orientation = 0x0112
    static let exifIFD = 0x8769, gpsIFD = 0x8825
    static let lensModel = 0xA434, makerNote = 0x927C
    static let latitudeRef = 0x01, latitude = 0x02, longitudeRef = 0x03, longitude = 0x04
    static let altitudeRef = 0x05, altitude = 0x06, timeStamp = 0x07
    static let imageDirectionRef = 0x10, imageDirection = 0x11, dateStamp = 0x1D, horizontalError = 0x1F
    static let appleAccelerationVector = 0x0008
}

extension EXIFMetadata {
    /// The most IFDs one EXIF block may lead to (IFD0, IFD1, EXIF, GPS, interoperability,
    /// MakerNote: a handful); a chain longer than this is a loop or an attack.
    static let maxDirectories = 16

    /// Reads the EXIF of a TIFF structure: `bytes[start..<end]` begins with its `II`/`MM`
    /// header (a JPEG's APP1 after `Exif\0\0`, a HEIC's `Exif` item after its offset).
    package init(tiff bytes: [UInt8], start: Int = 0, end: Int? = nil) {
        self.init()
        let end = min(end ?? bytes.count, bytes.count)
        let tiff: TIFFDirectory, first: Int
        do {
            (tiff, first) = try TIFFDirectory.header(bytes, start: start, end: end)
        } catch {
            warnings.append("EXIF: \(error.message)")
            return
        }
        var visited: Set<Int> = []
        // IFD0, then the EXIF and GPS IFDs it points to; IFD0's link to IFD1 (the
        // thumbnail) is followed only to detect loops.
        func directory(_ offset: Int, _ name: String) -> [TIFFDirectory.Entry]? {
            guard visited.count < Self.maxDirectories else {
                warnings.append("EXIF: more than \(Self.maxDirectories) IFDs; the rest ignored")
                return nil
            }
            guard visited.insert(offset).inserted else {
                warnings.append("EXIF: the \(name) IFD's offset \(offset) is that of an IFD already read (a loop); ignored")
                return nil
            }
            do {
                let read = try tiff.entries(at: offset)
                warnings += read.problems.map { "EXIF \(name) IFD: \($0.message)" }
                return read.entries
            } catch {
                warnings.append("EXIF \(name) IFD: \(error.message)")
                return nil
            }
        }
        guard let ifd0 = directory(first, "first") else { return }
        if let next = try? tiff.entries(at: first).next, next != 0, visited.contains(next) {
            warnings.append("EXIF: the first IFD links to an IFD already read (a loop); ignored")
        }
        readIFD0(ifd0, tiff)
        if let entry = ifd0.first(where: { $0.tag == EXIFTag.exifIFD }), let offset = tiff.integers(entry)?.first,
           let exif = directory(offset, "EXIF") {
            readEXIFIFD(exif, tiff)
        }
        if let entry = ifd0.first(where: { $0.tag == EXIFTag.gpsIFD }), let offset = tiff.integers(entry)?.first,
           let gpsEntries = directory(offset, "GPS") {
            readGPS(gpsEntries, tiff)
        }
    }

    private mutating func readIFD0(_ entries: [TIFFDirectory.Entry], _ tiff: TIFFDirectory) {
        for entry in entries {
            switch entry.tag {
            case EXIFTag.make: make = tiff.text(entry)
            case EXIFTag.model: model = tiff.text(entry)
            case EXIFTag.orientation:
                if let value = tiff.integers(entry)?.first {
                    if (1...8).contains(value) { orientation = value } else {
                        warnings.append("EXIF: Orientation \(value) is not one of 1 to 8; ignored")
                    }
                }
            default: break
            }
        }
    }

    private mutating func readEXIFIFD(_ entries: [TIFFDirectory.Entry], _ tiff: TIFFDirectory) {
        for entry in entries {
            switch entry.tag {
            case EXIFTag.lensModel: lensModel = tiff.text(entry)
            case EXIFTag.makerNote: readMakerNote(entry, tiff)
            default: break
            }
        }
    }

    /// Apple's MakerNote: `Apple iOS\0`, a 2-byte version, `MM`, then an IFD 14 bytes in
    /// whose offsets count from the MakerNote's start. Other makers' notes are ignored.
    private mutating func readMakerNote(_ entry: TIFFDirectory.Entry, _ tiff: TIFFDirectory) {
        guard let range = entry.value else { return }
        let signature = Array("Apple iOS\u{0}".utf8)
        guard range.count >= 16, Array(tiff.bytes[range.prefix(signature.count)]) == signature else { return }
        let little: Bool
        switch (tiff.bytes[range.lowerBound + 12], tiff.bytes[range.lowerBound + 13]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default:
            warnings.append("EXIF: the Apple MakerNote has no byte-order mark; ignored")
            return
        }
        let note = TIFFDirectory(bytes: tiff.bytes, base: range.lowerBound, end: range.upperBound, littleEndian: little)
        do {
            let read = try note.entries(at: 14)
            warnings += read.problems.map { "EXIF Apple MakerNote: \($0.message)" }
            for inner in read.entries where inner.tag == EXIFTag.appleAccelerationVector {
                guard let values = try note.rationals(inner), values.count == 3, inner.type == 10 else {
                    warnings.append("EXIF: the Apple MakerNote's AccelerationVector is not three signed rationals; ignored")
                    continue
                }
                let vector = SIMD3(values[0], values[1], values[2])
                let length = (vector * vector).sum().squareRoot()
                // A phone at rest measures 1 g; far from it the phone was moving (or the tag lies).
                guard length > 0.05, length < 20 else {
                    warnings.append("EXIF: the Apple MakerNote's AccelerationVector has length \(DecimalText.fixed(length, 3)) g; ignored")
                    continue
                }
                accelerationVector = vector
            }
        } catch {
            warnings.append("EXIF Apple MakerNote: \(error.message)")
        }
    }

    private mutating func readGPS(_ entries: [TIFFDirectory.Entry], _ tiff: TIFFDirectory) {
        var gps = GPS()
        func entry(_ tag: Int) -> TIFFDirectory.Entry? { entries.first { $0.tag == tag } }
        func rationals(_ tag: Int, _ name: String) -> [Double]? {
            guard let e = entry(tag) else { return nil }
            do {
                guard let values = try tiff.rationals(e), !values.isEmpty, values.allSatisfy(\.isFinite) else {
                    warnings.append("EXIF GPS: \(name) is not a rational; ignored")
                    return nil
                }
                return values
            } catch {
                warnings.append("EXIF GPS: \(name): \(error.message); ignored")
                return nil
            }
        }
        func reference(_ tag: Int) -> String? { entry(tag).flatMap { tiff.text($0) }?.uppercased() }
        /// Degrees, minutes, seconds to signed degrees.
        func angle(_ tag: Int, _ refTag: Int, _ name: String, limit: Double, positive: String, negative: String) -> Double? {
            guard let dms = rationals(tag, name) else { return nil }
            // Seconds of exactly 60 occur where a writer rounded 59.9999…″.
            guard dms.count == 3, dms.allSatisfy({ $0 >= 0 }), dms[1] < 60, dms[2] <= 60 else {
                warnings.append("EXIF GPS: \(name) is not three non-negative degrees, minutes (< 60) and seconds (≤ 60); location ignored")
                return nil
            }
            let degrees = dms[0] + dms[1] / 60 + dms[2] / 3600
            guard degrees <= limit else {
                warnings.append("EXIF GPS: \(name) \(DecimalText.fixed(degrees, 6))° is beyond \(Int(limit))°; location ignored")
                return nil
            }
            switch reference(refTag) {
            case positive: return degrees
            case negative: return -degrees
            case let other:
                warnings.append("EXIF GPS: \(name) reference is \(other.map { "'\($0)'" } ?? "missing"), not \(positive) or \(negative); location ignored")
                return nil
            }
        }
        let latitude = angle(EXIFTag.latitude, EXIFTag.latitudeRef, "latitude", limit: 90, positive: "N", negative: "S")
        let longitude = angle(EXIFTag.longitude, EXIFTag.longitudeRef, "longitude", limit: 180, positive: "E", negative: "W")
        if let latitude, let longitude {
            gps.latitude = latitude
            gps.longitude = longitude
        }
        if let altitude = rationals(EXIFTag.altitude, "altitude")?.first {
            let below = entry(EXIFTag.altitudeRef).flatMap { tiff.integers($0)?.first } == 1
            gps.altitude = below ? -altitude : altitude
        }
        if let error = rationals(EXIFTag.horizontalError, "horizontal positioning error")?.first {
            if error >= 0 { gps.horizontalError = error } else {
                warnings.append("EXIF GPS: a negative horizontal positioning error; ignored")
            }
        }
        if let direction = rationals(EXIFTag.imageDirection, "image direction")?.first {
            let ref = reference(EXIFTag.imageDirectionRef)
            if !(0...360).contains(direction) {
                warnings.append("EXIF GPS: image direction \(DecimalText.fixed(direction, 2))° is outside 0 to 360°; ignored")
            } else if ref == "T" || ref == "M" {
                gps.imageDirection = direction.truncatingRemainder(dividingBy: 360)
                gps.imageDirectionReference = ref
            } else {
                warnings.append("EXIF GPS: image direction reference is \(ref.map { "'\($0)'" } ?? "missing"), not T or M; heading ignored")
            }
        }
        gps.time = Self.timeText(date: entry(EXIFTag.dateStamp).flatMap { tiff.text($0) },
                                 time: rationals(EXIFTag.timeStamp, "time stamp"))
        if gps != GPS() { self.gps = gps }
    }

    /// `GPSDateStamp` (`YYYY:MM:DD`) and `GPSTimeStamp` (hours, minutes, seconds) as ISO 8601 UTC.
    static func timeText(date: String?, time: [Double]?) -> String? {
        guard let time, time.count == 3, (0..<24).contains(time[0]), (0..<60).contains(time[1]), (0..<61).contains(time[2]),
              time[0] == time[0].rounded(), time[1] == time[1].rounded() else { return nil }
        let seconds = time[2]
        let whole = Int(seconds.rounded(.down))
        var fraction = DecimalText.fixed(seconds - Double(whole), 3)
        fraction = fraction.hasPrefix("0.") ? String(fraction.dropFirst(1)) : ""
        while fraction.hasSuffix("0") { fraction.removeLast() }
        if fraction == "." { fraction = "" }
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let clock = "\(two(Int(time[0]))):\(two(Int(time[1]))):\(two(whole))\(fraction)Z"
        guard let date else { return clock }
        let parts = date.split(separator: ":")
        guard parts.map(\.count) == [4, 2, 2], parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else {
            return clock
        }
        return "\(parts[0])-\(parts[1])-\(parts[2])T\(clock)"
    }
}
