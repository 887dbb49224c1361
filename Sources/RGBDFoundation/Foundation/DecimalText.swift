/// Numbers as short decimal text for messages and reports.
package enum DecimalText {
    /// `v` rounded to `decimals` places, trailing zeros dropped (`2900`, `1511.6`, `-0.04`);
    /// values too large for exact rounding, infinities and NaN as Swift prints them.
    package static func fixed(_ v: Double, _ decimals: Int) -> String {
        guard v.isFinite else { return "\(v)" }
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(v) * Double(scale)).rounded()
        guard scaled < 9e15 else { return "\(v)" }
        let n = Int64(scaled)
        var text = String(n / scale)
        var fraction = String(n % scale)
        if decimals > 0 {
            fraction = String(repeating: "0", count: decimals - fraction.count) + fraction
            while fraction.last == "0" { fraction.removeLast() }
            if !fraction.isEmpty { text += "." + fraction }
        }
        return (v < 0 && n != 0 ? "-" : "") + text
    }
}
