/// The Multi-Picture Format index of a JPEG (CIPA DC-007): the APP2 `MPF` segment of the
/// first image lists every image of the file with its offset and size.
package enum MPFIndex {
    /// The byte ranges of the images the index lists (the first one is the primary
    /// image, offset 0), those that fit in the file and start with a JPEG SOI; empty if
    /// there is no index.
    package static func images(in bytes: [UInt8]) -> [Range<Int>] {
        for segment in segments(of: bytes) where segment.marker == 0xE2 {
            let payload = segment.payload
            guard payload.count >= 8, Array(bytes[payload.prefix(4)]) == [0x4D, 0x50, 0x46, 0x00] else { continue }
            return parse(bytes, tiff: payload.lowerBound + 4, end: payload.upperBound)
        }
        return []
    }

    /// The APP segments before the first scan: marker and payload range.
    static func segments(of bytes: [UInt8]) -> [(marker: UInt8, payload: Range<Int>)] {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return [] }
        var result: [(UInt8, Range<Int>)] = []
        var i = 2
        while i + 4 <= bytes.count {
            guard bytes[i] == 0xFF else { break }
            let marker = bytes[i + 1]
            if marker == 0xFF { i += 1; continue }
            if marker == 0xD9 || marker == 0xDA { break }
            if (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            guard length >= 2, i + 2 + length <= bytes.count else { break }
            result.append((marker, (i + 4)..<(i + 2 + length)))
            i += 2 + length
        }
        return result
    }

    /// The MP entries of the index IFD at `tiff` (the TIFF header after `MPF\0`).
    private static func parse(_ bytes: [UInt8], tiff: Int, end: Int) -> [Range<Int>] {
        guard tiff + 8 <= end else { return [] }
        let little: Bool
        switch (bytes[tiff], bytes[tiff + 1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return []
        }
        func u16(_ at: Int) -> Int? {
            guard at >= tiff, at + 2 <= end else { return nil }
            return little ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : Int(bytes[at]) << 8 | Int(bytes[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let a = u16(at), let b = u16(at + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        guard let ifdOffset = u32(tiff + 4), ifdOffset <= end - tiff, let count = u16(tiff + ifdOffset) else { return [] }
        var entries: (offset: Int, count: Int)? = nil
        for k in 0..<min(count, 64) {
            let entry = tiff + ifdOffset + 2 + 12 * k
            guard let tag = u16(entry), let type = u16(entry + 2), let n = u32(entry + 4), let value = u32(entry + 8) else { break }
            if tag == 0xB002, type == 7, n % 16 == 0, n > 0 { entries = (value, n / 16) }
        }
        guard let (offset, number) = entries else { return [] }
        var ranges: [Range<Int>] = []
        for k in 0..<min(number, 64) {
            let at = tiff + offset + 16 * k
            guard let size = u32(at + 4), let start = u32(at + 8) else { break }
            // The first image's offset is 0 (it starts the file); the others count from the TIFF header.
            let from = k == 0 ? 0 : tiff + start
            guard size > 0, from >= 0, from <= bytes.count - size, from + 3 <= bytes.count,
                  bytes[from] == 0xFF, bytes[from + 1] == 0xD8 else { continue }
            ranges.append(from..<(from + size))
        }
        return ranges
    }

    /// The XMP packet of a JPEG's APP1 (`http://ns.adobe.com/xap/1.0/\0`), nil if none.
    package static func xmp(in bytes: [UInt8]) -> [UInt8]? {
        let signature = Array("http://ns.adobe.com/xap/1.0/\u{0}".utf8)
        for segment in segments(of: bytes) where segment.marker == 0xE1 {
            let payload = segment.payload
            guard payload.count > signature.count, Array(bytes[payload.prefix(signature.count)]) == signature else { continue }
            return Array(bytes[(payload.lowerBound + signature.count)..<payload.upperBound])
        }
        return nil
    }
}
