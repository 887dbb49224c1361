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
        of(photo: bytes, exif: PhotoDecoder.format(of: bytes) == .jpeg ? EXIFMetadata(photo: bytes) : nil)
    }

    /// The same for a photo whose EXIF (`EXIFMetadata(photo:)`) has been read already:
    /// a JPEG's orientation is its EXIF's, a HEIF's its `irot` and `imir`.
    package static func of(photo bytes: [UInt8], exif: EXIFMetadata?) -> PhotoOrientation {
        switch PhotoDecoder.format(of: bytes) {
        case .jpeg?: return exif?.orientation.flatMap(PhotoOrientation.init(exif:)) ?? .asStored
        case .heif?: return HEIFItems.primaryOrientation(of: bytes) ?? .asStored
        default: return .asStored
        }
    }
}
