/// How a photo asks to be shown: its pixels are stored as the sensor saw them, and a
/// viewer turns (and, rarely, mirrors) them for display. From a JPEG's EXIF `Orientation`
/// tag, or from a HEIF's `irot` and `imir` properties of the primary image (which the
/// format makes normative; its EXIF copy is informational).
public struct PhotoOrientation: Equatable, Sendable {
    /// Quarter turns clockwise that show the stored pixels upright (0…3): EXIF 6 is 1,
    /// EXIF 3 is 2, EXIF 8 is 3.
    public var clockwiseQuarterTurns: Int
    /// Whether showing the photo also mirrors it (EXIF 2, 4, 5, 7; HEIF `imir`).
    public var mirrored: Bool

    /// Pixels shown as stored (EXIF 1).
    public static let asStored = PhotoOrientation(clockwiseQuarterTurns: 0, mirrored: false)

    /// An orientation from its parts.
    public init(clockwiseQuarterTurns: Int, mirrored: Bool = false) {
        self.clockwiseQuarterTurns = ((clockwiseQuarterTurns % 4) + 4) % 4
        self.mirrored = mirrored
    }

    /// EXIF/TIFF's value (1…8); nil for others.
    public init?(exif value: Int) {
        switch value {
        case 1: self.init(clockwiseQuarterTurns: 0)
        case 6: self.init(clockwiseQuarterTurns: 1)
        case 3: self.init(clockwiseQuarterTurns: 2)
        case 8: self.init(clockwiseQuarterTurns: 3)
        case 2: self.init(clockwiseQuarterTurns: 0, mirrored: true)
        case 4: self.init(clockwiseQuarterTurns: 2, mirrored: true)
        case 5: self.init(clockwiseQuarterTurns: 1, mirrored: true)
        case 7: self.init(clockwiseQuarterTurns: 3, mirrored: true)
        default: return nil
        }
    }

    /// EXIF's value for this orientation (1…8).
    public var exifValue: Int {
        mirrored ? [2, 5, 4, 7][clockwiseQuarterTurns] : [1, 6, 3, 8][clockwiseQuarterTurns]
    }

    /// The orientation a photo (JPEG or HEIF, by content) asks for; `.asStored` when it
    /// says nothing (or says it in a way that cannot be read: a display hint is never an error).
    package static func of(photo bytes: [UInt8]) -> PhotoOrientation {
        switch PhotoDecoder.format(of: bytes) {
        case .jpeg?: return exifOrientation(jpeg: bytes) ?? .asStored
        case .heif?: return HEIFItems.primaryOrientation(of: bytes) ?? .asStored
        default: return .asStored
        }
    }

    /// The `Orientation` tag (0x0112) of IFD0 in a JPEG's APP1 `Exif` segment.
    static func exifOrientation(jpeg bytes: [UInt8]) -> PhotoOrientation? {
        let signature = Array("Exif\u{0}\u{0}".utf8)
        for segment in MPFIndex.segments(of: bytes) where segment.marker == 0xE1 {
            let payload = segment.payload
            guard payload.count >= signature.count + 8,
                  bytes[payload.prefix(signature.count)].elementsEqual(signature) else { continue }
            let tiff = payload.lowerBound + signature.count, end = payload.upperBound
            let little: Bool
            switch (bytes[tiff], bytes[tiff + 1]) {
            case (0x49, 0x49): little = true
            case (0x4D, 0x4D): little = false
            default: return nil
            }
            func u16(_ at: Int) -> Int? {
                guard at >= tiff, at <= end - 2 else { return nil }
                return little ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : Int(bytes[at]) << 8 | Int(bytes[at + 1])
            }
            func u32(_ at: Int) -> Int? {
                guard let a = u16(at), let b = u16(at + 2) else { return nil }
                return little ? a | b << 16 : a << 16 | b
            }
            guard let ifd = u32(tiff + 4), ifd <= end - tiff, let count = u16(tiff + ifd) else { return nil }
            for k in 0..<min(count, 256) {
                let entry = tiff + ifd + 2 + 12 * k
                guard let tag = u16(entry), let type = u16(entry + 2) else { return nil }
                // SHORT (3), one value, left-justified in the value field.
                if tag == 0x0112 { return type == 3 ? u16(entry + 8).flatMap(PhotoOrientation.init(exif:)) : nil }
            }
            return nil
        }
        return nil
    }
}
