/// Decodes a capture's photo, JPEG or HEIC/HEIF, recognised by its content (`FileFormat`,
/// never its file name: a HEIC named `.jpg` decodes, and so does a JPEG named `.heic`).
package enum PhotoDecoder {
    /// The photo format of `bytes` (JPEG or HEIF), or nil if it is neither.
    package static func format(of bytes: [UInt8]) -> FileFormat? {
        FileFormat(bytes: bytes).flatMap { $0.isPhoto ? $0 : nil }
    }

    /// The stored pixel size, from the header alone.
    package static func size(of bytes: [UInt8], file: String? = nil) throws -> (width: Int, height: Int) {
        switch try recognise(bytes, file: file) {
        case .heif: return try HEIFCodec.size(of: bytes, file: file)
        default: return try JPEGCodec.size(of: bytes, file: file)
        }
    }

    /// Checks the photo as `decodeRGB` would, without decoding its full-size pixels: a JPEG
    /// is refused here exactly when decoding it fails (`JPEGCodec.validate`); a HEIF when
    /// its container or stated size is (`HEIFCodec.validate`), its HEVC stream only when
    /// decoded.
    package static func validate(_ bytes: [UInt8], file: String? = nil) throws {
        switch try recognise(bytes, file: file) {
        case .heif: try HEIFCodec.validate(bytes, file: file)
        default: try JPEGCodec.validate(bytes, file: file)
        }
    }

    /// Decodes to 8-bit RGB, pixels as stored (no rotation applied).
    package static func decodeRGB(_ bytes: [UInt8], file: String? = nil) throws -> ColorImage {
        switch try recognise(bytes, file: file) {
        case .heif: return try HEIFCodec.decodeRGB(bytes, file: file)
        default: return try JPEGCodec.decodeRGB(bytes, file: file)
        }
    }

    /// The photo format of `bytes`, or an error naming `file` that says why it is not one.
    package static func recognise(_ bytes: [UInt8], file: String?) throws -> FileFormat {
        guard let format = format(of: bytes) else {
            throw RGBDError(.invalidImage, file: file, FileFormat.notAPhoto(bytes))
        }
        return format
    }
}
