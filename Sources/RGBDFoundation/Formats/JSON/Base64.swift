/// Base64 (RFC 4648, with or without `=` padding) as JSON encoders write `Data`.
package enum Base64 {
    /// Why a string is not the base64 expected.
    package struct Failure: Error {
        package var message: String
    }

    /// The bytes encoded in `text`; with `escapedSlashes`, `\/` (as JSON writes `/`) is
    /// read as `/`.
    static func decode(_ text: UnsafeBufferPointer<UInt8>, escapedSlashes: Bool) throws(Failure) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3)
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        var i = 0
        while i < text.count {
            var c = text[i]
            if c == 0x5C && escapedSlashes && i + 1 < text.count && text[i + 1] == 0x2F { i += 1; c = 0x2F }
            i += 1
            let value: UInt32
            switch c {
            case 0x41...0x5A: value = UInt32(c - 0x41)
            case 0x61...0x7A: value = UInt32(c - 0x61 + 26)
            case 0x30...0x39: value = UInt32(c - 0x30 + 52)
            case 0x2B: value = 62
            case 0x2F: value = 63
            case 0x3D:
                padding += 1
                continue
            default:
                let shown = c >= 0x20 && c < 0x7F ? "'\(Character(UnicodeScalar(c)))'" : "byte \(c)"
                throw Failure(message: "not base64: \(shown) at character \(i - 1)")
            }
            if padding > 0 { throw Failure(message: "not base64: data after '=' padding") }
            accumulator = (accumulator << 6) | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        if bits >= 6 || padding > 2 { throw Failure(message: "not base64: its length is not a whole number of bytes") }
        return out
    }

    /// Little-endian float32 values encoded in base64 `text`.
    package static func float32LittleEndian(_ text: [UInt8], escapedSlashes: Bool) throws(Failure) -> [Float] {
        try text.withUnsafeBufferPointer { (buffer) throws(Failure) -> [Float] in
            try float32LittleEndian(buffer, escapedSlashes: escapedSlashes)
        }
    }

    /// Little-endian float32 values encoded in base64 `text`.
    package static func float32LittleEndian(_ text: UnsafeBufferPointer<UInt8>, escapedSlashes: Bool) throws(Failure) -> [Float] {
        let bytes = try decode(text, escapedSlashes: escapedSlashes)
        guard bytes.count % 4 == 0 else {
            throw Failure(message: "\(bytes.count) bytes of base64 data are not a whole number of float32 values (4 bytes each)")
        }
        return (0..<(bytes.count / 4)).map { k -> Float in
            let bitPattern = UInt32(bytes[4 * k]) | UInt32(bytes[4 * k + 1]) << 8 | UInt32(bytes[4 * k + 2]) << 16
                | UInt32(bytes[4 * k + 3]) << 24
            return Float(bitPattern: bitPattern)
        }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// `bytes` as base64 with `=` padding; with `lineLength`, a line break after every
    /// `lineLength` characters and after the last line.
    package static func encode(_ bytes: [UInt8], lineLength: Int? = nil) -> [UInt8] {
        let groups = (bytes.count + 2) / 3
        var out = [UInt8]()
        out.reserveCapacity(groups * 4 + groups * 4 / max(lineLength ?? Int.max, 4) + 1)
        var column = 0
        func put(_ c: UInt8) {
            out.append(c)
            column += 1
            if column == lineLength { out.append(0x0A); column = 0 }
        }
        var i = 0
        while i < bytes.count {
            let b0 = UInt32(bytes[i])
            let b1 = i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0
            let b2 = i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0
            let v = b0 << 16 | b1 << 8 | b2
            put(alphabet[Int(v >> 18 & 63)])
            put(alphabet[Int(v >> 12 & 63)])
            put(i + 1 < bytes.count ? alphabet[Int(v >> 6 & 63)] : 0x3D)
            put(i + 2 < bytes.count ? alphabet[Int(v & 63)] : 0x3D)
            i += 3
        }
        if column != 0 && lineLength != nil { out.append(0x0A) }
        return out
    }
}
