/// Correctly rounded decimal → `Float` conversion for JSON numbers, fast for the
/// numbers depth maps are made of.
///
/// The fast path accumulates up to 19 significant digits `w` and a decimal exponent
/// `e`, and computes `d = w·10^e` in `Double` with one or two roundings (relative error
/// below 2⁻⁵²), so `d` is within two `Double` ulps of the exact value. Rounding `d` to
/// `Float` is then exact unless `d` lies within those two ulps of a point halfway
/// between two `Float`s; those rare cases, and anything outside the fast path's range
/// (more digits, large exponents, subnormal or overflowing results), go to the C
/// library's correctly rounded `strtof`.
enum DecimalFloat {
    /// Exact powers of ten representable in `Double` (10^0 ... 10^22).
    static let powersOfTen: [Double] = (0...22).map { e in
        var p = 1.0
        for _ in 0..<e { p *= 10 }
        return p
    }

    /// The result of scanning one JSON number.
    struct Scanned {
        /// The correctly rounded value.
        var value: Float
        /// Index just past the number.
        var end: Int
    }

    /// Scans a JSON number (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`) starting at
    /// `start`; nil if the bytes there are not one.
    @inline(__always)
    package static func scan(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> Scanned? {
        @inline(__always) func byte(_ i: Int) -> UInt8 { i < end ? base[i] : 0 }
        @inline(__always) func digit(_ b: UInt8) -> UInt64? {
            let d = b &- 0x30
            return d < 10 ? UInt64(d) : nil
        }
        var p = start
        var negative = false
        if byte(p) == 0x2D { negative = true; p += 1 }
        var w: UInt64 = 0
        var significant = 0
        var exponent = 0
        var dropped = false

        // Integer part: "0" or a non-zero digit followed by digits.
        guard let first = digit(byte(p)) else { return nil }
        p += 1
        if first != 0 {
            w = first
            significant = 1
            while let d = digit(byte(p)) {
                if significant < 19 {
                    w = w &* 10 &+ d
                    significant += 1
                } else {
                    exponent += 1
                    if d != 0 { dropped = true }
                }
                p += 1
            }
        }
        // Fraction.
        if byte(p) == 0x2E {
            p += 1
            guard digit(byte(p)) != nil else { return nil }
            while let d = digit(byte(p)) {
                if significant < 19 {
                    w = w &* 10 &+ d
                    exponent -= 1
                    if w != 0 { significant += 1 }
                } else if d != 0 {
                    dropped = true
                }
                p += 1
            }
        }
        // Exponent.
        let e = byte(p)
        if e == 0x65 || e == 0x45 {
            p += 1
            var sign = 1
            let s = byte(p)
            if s == 0x2B { p += 1 } else if s == 0x2D { sign = -1; p += 1 }
            guard digit(byte(p)) != nil else { return nil }
            var value = 0
            while let d = digit(byte(p)) {
                if value < 100_000 { value = value * 10 + Int(d) }
                p += 1
            }
            exponent += sign * value
        }

        if w == 0 { return Scanned(value: negative ? -0.0 : 0.0, end: p) }
        if !dropped && exponent >= -22 && exponent <= 22 {
            let d = exponent < 0 ? Double(w) / powersOfTen[-exponent] : Double(w) * powersOfTen[exponent]
            if d >= Double(Float.leastNormalMagnitude) && d <= Double(Float.greatestFiniteMagnitude) {
                // The 29 low bits of a Double's significand are those a Float drops;
                // 1 << 28 is a halfway point.
                let low = Int(truncatingIfNeeded: d.bitPattern & ((1 << 29) - 1))
                if abs(low - (1 << 28)) > 4 {
                    let f = Float(d)
                    return Scanned(value: negative ? -f : f, end: p)
                }
            }
        }
        guard let exact = FileSystem.strtofExact(UnsafeBufferPointer(start: base + start, count: p - start)) else {
            return nil
        }
        return Scanned(value: exact, end: p)
    }
}
