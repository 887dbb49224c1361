/// EXIF for synthetic photos, written by its own small TIFF writer (not rgbd's reader run
/// backwards, so that a convention mistake in the reader cannot be mirrored here): camera
/// names, Orientation, the GPS tags (position, altitude, positioning error, time, image
/// direction) and an Apple MakerNote with an `AccelerationVector`, in either byte order.
package struct SyntheticEXIF: Sendable {
    /// Degrees north (negative: south).
    package var latitude: Double?
    /// Degrees east (negative: west).
    package var longitude: Double?
    /// Meters above mean sea level (negative: below; written with GPSAltitudeRef 1).
    package var altitude: Double?
    /// `GPSHPositioningError`, meters.
    package var horizontalError: Double?
    /// `GPSImgDirection`, degrees clockwise from north, and its reference `T` or `M`.
    package var direction: (degrees: Double, reference: String)?
    /// The accelerometer reading in g, phone axes (Apple's MakerNote tag 0x0008).
    package var acceleration: SIMD3<Double>?
    /// `Orientation`.
    package var orientation: Int = 1
    /// `Make`, `Model`, `LensModel`.
    package var make = "Apple", model = "iPhone (synthetic)", lensModel = "synthetic back camera"
    /// The TIFF byte order (`II`); iPhones write big-endian (`MM`).
    package var littleEndian = false

    /// No GPS, no MakerNote.
    package init() {}

    /// The accelerometer reading (1 g) of a phone whose camera sees gravity along `down`
    /// (unit, OpenCV camera axes, sensor orientation): the phone's axes are the camera's
    /// with x and y swapped and every sign turned, `a = (−down_y, −down_x, −down_z)`.
    package static func acceleration(down: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(-down.y, -down.x, -down.z)
    }

    /// A value of an entry: field type, count and bytes (in the writer's order).
    struct Field {
        var tag: Int
        var type: Int
        var count: Int
        var bytes: [UInt8]
        /// An IFD pointer to be filled in: the index of the IFD it points to.
        var pointsTo: Int? = nil
    }

    /// The TIFF structure (from its `II`/`MM` header).
    package func tiff() -> [UInt8] {
        let w = Writer(littleEndian: littleEndian)
        var ifd0 = [w.ascii(0x010F, make), w.ascii(0x0110, model), w.shorts(0x0112, [orientation]),
                    Field(tag: 0x8769, type: 4, count: 1, bytes: w.u32(0), pointsTo: 1)]
        let exif = [w.ascii(0xA434, lensModel)] + (acceleration.map { [makerNote($0)] } ?? [])
        var gps: [Field] = []
        if let latitude, let longitude {
            gps += [w.ascii(0x01, latitude >= 0 ? "N" : "S"), w.rationals(0x02, Self.dms(abs(latitude))),
                    w.ascii(0x03, longitude >= 0 ? "E" : "W"), w.rationals(0x04, Self.dms(abs(longitude)))]
        }
        if let altitude {
            gps += [Field(tag: 0x05, type: 1, count: 1, bytes: [altitude < 0 ? 1 : 0]), w.rationals(0x06, [(abs(altitude), 10_000)])]
        }
        gps += [w.rationals(0x07, [(7, 1), (11, 1), (43.07, 100)])]
        if let direction {
            gps += [w.ascii(0x10, direction.reference), w.rationals(0x11, [(direction.degrees, 1_000_000)])]
        }
        gps += [w.ascii(0x1D, "2018:02:05")]
        if let horizontalError { gps += [w.rationals(0x1F, [(horizontalError, 100)])] }
        if !gps.isEmpty { ifd0.append(Field(tag: 0x8825, type: 4, count: 1, bytes: w.u32(0), pointsTo: 2)) }
        return w.file([ifd0, exif] + (gps.isEmpty ? [] : [gps]))
    }

    /// A JPEG APP1 segment holding the EXIF (`FF E1`, length, `Exif\0\0`, TIFF).
    package func app1() -> [UInt8] {
        let payload = Array("Exif\u{0}\u{0}".utf8) + tiff()
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// `jpeg` with this EXIF inserted right after its SOI marker.
    package func inserted(into jpeg: [UInt8]) -> [UInt8] {
        Array(jpeg.prefix(2)) + app1() + jpeg.dropFirst(2)
    }

    /// Degrees as whole degrees, whole minutes and seconds (to 1e-6 seconds), split from
    /// one whole number of micro-arcseconds so that seconds stay below 60.
    static func dms(_ degrees: Double) -> [(Double, Int)] {
        let micro = Int((degrees * 3_600_000_000).rounded())
        let whole = micro / 3_600_000_000, minutes = micro % 3_600_000_000 / 60_000_000
        let seconds = micro % 60_000_000
        return [(Double(whole), 1), (Double(minutes), 1), (Double(seconds) / 1_000_000, 1_000_000)]
    }

    /// Apple's MakerNote: `Apple iOS\0`, version 1, `MM`, then a big-endian IFD at 14 whose
    /// offsets count from the note's start, holding tag 0x0008 (three signed rationals).
    func makerNote(_ a: SIMD3<Double>) -> Field {
        let w = Writer(littleEndian: false)
        let values = [a.x, a.y, a.z].map { ($0, 1_000_000) }
        var note = Array("Apple iOS\u{0}".utf8) + [0, 1] + Array("MM".utf8)
        // Two entries (tag 1, a LONG as Apple writes one, and tag 8), then the vector, whose
        // 24 bytes follow the IFD.
        let ifdSize = 2 + 12 * 2 + 4
        let vectorOffset = note.count + ifdSize
        note += w.u16(2)
        note += w.u16(0x0001) + w.u16(9) + w.u32(1) + w.u32(11)
        note += w.u16(0x0008) + w.u16(10) + w.u32(3) + w.u32(vectorOffset)
        note += w.u32(0)
        note += values.flatMap { w.signedRational($0.0, $0.1) }
        return Field(tag: 0x927C, type: 7, count: note.count, bytes: note)
    }

    /// Byte-order-aware encoding and the file layout.
    struct Writer {
        let littleEndian: Bool
        func u16(_ v: Int) -> [UInt8] {
            let b = [UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
            return littleEndian ? b.reversed() : b
        }
        func u32(_ v: Int) -> [UInt8] {
            let b = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) }
            return littleEndian ? b.reversed() : b
        }
        func ascii(_ tag: Int, _ text: String) -> Field {
            let bytes = Array(text.utf8) + [0]
            return Field(tag: tag, type: 2, count: bytes.count, bytes: bytes)
        }
        func shorts(_ tag: Int, _ values: [Int]) -> Field {
            Field(tag: tag, type: 3, count: values.count, bytes: values.flatMap(u16))
        }
        func rationals(_ tag: Int, _ values: [(Double, Int)]) -> Field {
            Field(tag: tag, type: 5, count: values.count,
                  bytes: values.flatMap { u32(Int(($0.0 * Double($0.1)).rounded())) + u32($0.1) })
        }
        func signedRational(_ value: Double, _ denominator: Int) -> [UInt8] {
            u32(Int(Int32((value * Double(denominator)).rounded()))) + u32(denominator)
        }

        /// The header and the IFDs one after the other, each followed by its values;
        /// pointer fields get their IFD's offset.
        func file(_ ifds: [[Field]]) -> [UInt8] {
            func size(_ fields: [Field]) -> Int {
                2 + 12 * fields.count + 4 + fields.reduce(0) { $0 + ($1.bytes.count > 4 ? ($1.bytes.count + 1) & ~1 : 0) }
            }
            var offsets: [Int] = []
            var at = 8
            for fields in ifds { offsets.append(at); at += size(fields) }
            var out = (littleEndian ? Array("II".utf8) : Array("MM".utf8)) + u16(42) + u32(8)
            for (index, fields) in ifds.enumerated() {
                let sorted = fields.sorted { $0.tag < $1.tag }
                var values: [UInt8] = []
                var valueAt = offsets[index] + 2 + 12 * sorted.count + 4
                out += u16(sorted.count)
                for field in sorted {
                    out += u16(field.tag) + u16(field.type) + u32(field.count)
                    if let target = field.pointsTo {
                        out += u32(offsets[target])
                    } else if field.bytes.count <= 4 {
                        out += field.bytes + [UInt8](repeating: 0, count: 4 - field.bytes.count)
                    } else {
                        out += u32(valueAt)
                        var bytes = field.bytes
                        if bytes.count % 2 == 1 { bytes.append(0) }
                        values += bytes
                        valueAt += bytes.count
                    }
                }
                out += u32(0)
                out += values
            }
            return out
        }
    }
}
