/// Photos that ask to be shown turned: an EXIF `Orientation` tag put into a JPEG, as a
/// phone held upright or upside down writes it (the pixels stay as the sensor stored them).
public enum SyntheticOrientation {
    /// `jpeg` with an EXIF APP1 segment right after SOI whose IFD0 holds only `Orientation`
    /// = `value` (1…8), little-endian (`II`) or big-endian (`MM`) as iPhones write it.
    public static func tagged(_ jpeg: [UInt8], exif value: Int, bigEndian: Bool = true) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 255)] : [UInt8(v & 255), UInt8(v >> 8)] }
        func u32(_ v: Int) -> [UInt8] { bigEndian ? u16(v >> 16) + u16(v & 0xFFFF) : u16(v & 0xFFFF) + u16(v >> 16) }
        // TIFF header, then IFD0 at offset 8: one entry (tag, SHORT, count 1, value), no next IFD.
        let tiff: [UInt8] = Array((bigEndian ? "MM" : "II").utf8) + u16(42) + u32(8)
            + u16(1) + u16(0x0112) + u16(3) + u32(1) + u16(value) + u16(0) + u32(0)
        let payload = Array("Exif\u{0}\u{0}".utf8) + tiff
        let segment: [UInt8] = [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 255)] + payload
        return Array(jpeg.prefix(2)) + segment + Array(jpeg.dropFirst(2))
    }
}
