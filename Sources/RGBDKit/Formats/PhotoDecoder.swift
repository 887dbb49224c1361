/// Decodes a capture's photo, JPEG or HEIC/HEIF, recognised by its content (never by
/// its file name: a HEIC named `.jpg` decodes, and so does a JPEG named `.heic`).
public enum PhotoDecoder {
    /// The photo formats rgbd reads.
    public enum Format: String, Sendable {
        /// JPEG (TurboJPEG).
        case jpeg = "JPEG"
        /// HEIC / HEIF (libheif).
        case heif = "HEIF"
    }

    /// The format of `bytes`, or nil if it is neither.
    public static func format(of bytes: [UInt8]) -> Format? {
        if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF { return .jpeg }
        if HEIFCodec.isHEIF(bytes) { return .heif }
        return nil
    }

    /// The stored pixel size, from the header alone.
    public static func size(of bytes: [UInt8], file: String? = nil) throws -> (width: Int, height: Int) {
        switch try recognise(bytes, file: file) {
        case .jpeg: return try JPEGCodec.size(of: bytes, file: file)
        case .heif: return try HEIFCodec.size(of: bytes, file: file)
        }
    }

    /// Decodes to 8-bit RGB, pixels as stored (no rotation applied).
    public static func decodeRGB(_ bytes: [UInt8], file: String? = nil) throws -> ColorImage {
        switch try recognise(bytes, file: file) {
        case .jpeg: return try JPEGCodec.decodeRGB(bytes, file: file)
        case .heif: return try HEIFCodec.decodeRGB(bytes, file: file)
        }
    }

    private static func recognise(_ bytes: [UInt8], file: String?) throws -> Format {
        if let format = format(of: bytes) { return format }
        if bytes.isEmpty { throw RGBDError(.invalidImage, file: file, "the file is empty") }
        let start = bytes.prefix(4).map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: " ")
        throw RGBDError(.invalidImage, file: file, "not a JPEG or HEIF image (it starts with bytes \(start))")
    }
}
