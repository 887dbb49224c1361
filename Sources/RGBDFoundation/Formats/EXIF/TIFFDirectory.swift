/// A bounds-checked walker over the image file directories (IFDs) of a TIFF structure, as
/// EXIF stores its tags: every offset, count and size is checked against the bytes before
/// it is used, and a problem is a `TIFFDirectory.Problem` (a message), never a trap.
///
/// Offsets count from `base` (the TIFF header for EXIF; an Apple MakerNote's own start for
/// its IFD); nothing is read outside `base..<end`.
struct TIFFDirectory {
    /// The bytes (the whole file or block; only `base..<end` is read).
    let bytes: [UInt8]
    /// Where offsets count from.
    let base: Int
    /// One past the last byte that may be read.
    let end: Int
    /// Byte order: `II` (little-endian) or `MM` (big-endian).
    let littleEndian: Bool

    /// What went wrong, in words for a warning.
    struct Problem: Error, Equatable {
        package let message: String
        init(_ message: String) { self.message = message }
    }

    /// The most entries one IFD may have (real EXIF IFDs have a few dozen).
    static let maxEntries = 1024

    /// One entry: its tag, field type, value count and where its value's bytes are (nil
    /// for a type whose size is unknown).
    struct Entry: Equatable {
        let tag: Int
        package let type: Int
        package let count: Int
        let value: Range<Int>?
    }

    /// The size in bytes of one value of a TIFF field type, nil for an unknown type.
    static func typeSize(_ type: Int) -> Int? {
        switch type {
        case 1, 2, 6, 7: 1          // BYTE, ASCII, SBYTE, UNDEFINED
        case 3, 8: 2                // SHORT, SSHORT
        case 4, 9, 11, 13: 4        // LONG, SLONG, FLOAT, IFD
        case 5, 10, 12: 8           // RATIONAL, SRATIONAL, DOUBLE
        default: nil
        }
    }

    /// A TIFF structure starting at `start` (its `II`/`MM` header) and ending at `end`;
    /// returns it with the offset of its first IFD.
    static func header(_ bytes: [UInt8], start: Int, end: Int) throws(Problem) -> (TIFFDirectory, firstIFD: Int) {
        guard start >= 0, end <= bytes.count, start <= end, end - start >= 8 else {
            throw Problem("the TIFF header is cut short")
        }
        let little: Bool
        switch (bytes[start], bytes[start + 1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: throw Problem("no TIFF byte-order mark (II or MM)")
        }
        let tiff = TIFFDirectory(bytes: bytes, base: start, end: end, littleEndian: little)
        guard tiff.u16(start + 2) == 42, let first = tiff.u32(start + 4) else {
            throw Problem("the TIFF header's magic number is not 42")
        }
        return (tiff, first)
    }

    /// The 16-bit value at absolute position `at`, nil outside `base..<end`.
    func u16(_ at: Int) -> Int? {
        guard at >= base, at <= end - 2 else { return nil }
        let a = Int(bytes[at]), b = Int(bytes[at + 1])
        return littleEndian ? a | b << 8 : a << 8 | b
    }

    /// The 32-bit value at absolute position `at`, nil outside `base..<end`.
    func u32(_ at: Int) -> Int? {
        guard let a = u16(at), let b = u16(at + 2) else { return nil }
        return littleEndian ? a | b << 16 : a << 16 | b
    }

    /// The entries of the IFD at `offset` (from `base`), the offset of the next IFD (0 if
    /// none or if the link is missing), and what was wrong with single entries (whose
    /// value is then nil; the others are still read).
    func entries(at offset: Int) throws(Problem) -> (entries: [Entry], next: Int, problems: [Problem]) {
        guard offset >= 0, offset <= end - base - 2, let count = u16(base + offset) else {
            throw Problem("an IFD offset (\(offset)) points past the end (\(end - base) bytes)")
        }
        guard count <= Self.maxEntries else { throw Problem("an IFD claims \(count) entries, more than \(Self.maxEntries)") }
        let first = base + offset + 2
        guard first + 12 * count <= end else {
            throw Problem("an IFD of \(count) entries at offset \(offset) runs past the end (\(end - base) bytes)")
        }
        var entries: [Entry] = []
        var problems: [Problem] = []
        entries.reserveCapacity(count)
        for k in 0..<count {
            let at = first + 12 * k
            guard let tag = u16(at), let type = u16(at + 2), let n = u32(at + 4) else { break }
            do {
                entries.append(Entry(tag: tag, type: type, count: n, value: try valueRange(type: type, count: n, field: at + 8)))
            } catch {
                problems.append(Problem("tag 0x\(String(tag, radix: 16, uppercase: true)): \(error.message)"))
                entries.append(Entry(tag: tag, type: type, count: n, value: nil))
            }
        }
        return (entries, u32(first + 12 * count) ?? 0, problems)
    }

    /// Where the value of an entry is: inline in the 4-byte field at `field` when it fits,
    /// else at the offset stored there. nil for an unknown type.
    private func valueRange(type: Int, count: Int, field: Int) throws(Problem) -> Range<Int>? {
        guard let size = Self.typeSize(type) else { return nil }
        let (total, overflow) = count.multipliedReportingOverflow(by: size)
        guard !overflow, total <= end - base else {
            throw Problem("an entry's \(count) values of \(size) bytes are more than the \(end - base) bytes there are")
        }
        if total <= 4 { return field..<(field + total) }
        guard let offset = u32(field) else { throw Problem("an entry is cut short") }
        guard offset <= end - base - total else {
            throw Problem("an entry's value (\(total) bytes at offset \(offset)) lies past the end (\(end - base) bytes)")
        }
        return (base + offset)..<(base + offset + total)
    }

    /// The entry's unsigned integers (BYTE, SHORT, LONG), nil for another type.
    func integers(_ entry: Entry) -> [Int]? {
        guard let range = entry.value else { return nil }
        switch entry.type {
        case 1, 7: return bytes[range].map(Int.init)
        case 3: return stride(from: range.lowerBound, to: range.upperBound, by: 2).compactMap(u16)
        case 4: return stride(from: range.lowerBound, to: range.upperBound, by: 4).compactMap(u32)
        default: return nil
        }
    }

    /// The entry's rationals (RATIONAL, or SRATIONAL when signed) as numbers; a zero
    /// denominator is a problem. nil for another type.
    func rationals(_ entry: Entry) throws(Problem) -> [Double]? {
        guard let range = entry.value, entry.type == 5 || entry.type == 10 else { return nil }
        var values: [Double] = []
        for at in stride(from: range.lowerBound, to: range.upperBound, by: 8) {
            guard let n = u32(at), let d = u32(at + 4) else { break }
            let (numerator, denominator) = entry.type == 10 ? (Int(Int32(truncatingIfNeeded: n)), Int(Int32(truncatingIfNeeded: d))) : (n, d)
            guard denominator != 0 else { throw Problem("a rational with a zero denominator (\(numerator)/0)") }
            values.append(Double(numerator) / Double(denominator))
        }
        return values
    }

    /// The entry's text (ASCII or UNDEFINED), up to its first NUL, without control
    /// characters and surrounding spaces; at most 256 characters.
    func text(_ entry: Entry) -> String? {
        guard let range = entry.value, entry.type == 2 || entry.type == 7 else { return nil }
        let chars = bytes[range].prefix { $0 != 0 }.prefix(256).map { $0 >= 0x20 && $0 < 0x7F ? Character(UnicodeScalar($0)) : "?" }
        return String(chars).trimmingWhitespace
    }

    /// The raw bytes of the entry's value.
    func raw(_ entry: Entry) -> ArraySlice<UInt8>? {
        entry.value.map { bytes[$0] }
    }
}
