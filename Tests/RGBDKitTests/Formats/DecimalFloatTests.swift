import Testing
@testable import RGBDFoundation
@testable import RGBDKit

/// The depth reader's number parsing rounds exactly as a correct parser (`strtof`,
/// which Swift's `Float(String)` uses) does.
@Suite struct DecimalFloatTests {
    static func scan(_ text: String) -> Float? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer -> Float? in
            guard let base = buffer.baseAddress, let scanned = DecimalFloat.scan(base, 0, buffer.count),
                  scanned.end == buffer.count else { return nil }
            return scanned.value
        }
    }

    @Test func depthLikeValuesRoundExactly() throws {
        var rng = SeededGenerator(seed: 42)
        for _ in 0..<300_000 {
            // Random Float depths printed the way exporters do (Double of a Float).
            let f = Float.random(in: 0.05...80, using: &rng)
            let text = "\(Double(f))"
            let expected = try #require(Float(text))
            #expect(Self.scan(text)?.bitPattern == expected.bitPattern, "\(text)")
            if Self.scan(text)?.bitPattern != expected.bitPattern { return }
        }
    }

    @Test func arbitraryDecimalsRoundExactly() throws {
        var rng = SeededGenerator(seed: 9)
        for _ in 0..<300_000 {
            let digits = Int.random(in: 1...24, using: &rng)
            var mantissa = String(Int.random(in: 1...9, using: &rng))
            for _ in 1..<digits { mantissa.append(Character(String(Int.random(in: 0...9, using: &rng)))) }
            let point = Int.random(in: 0...digits, using: &rng)
            var text = point == digits ? mantissa : String(mantissa.prefix(point == 0 ? 0 : point)) + "." + mantissa.dropFirst(point)
            if text.hasPrefix(".") { text = "0" + text }
            if Bool.random(using: &rng) { text += "e\(Int.random(in: -40...35, using: &rng))" }
            let expected = try #require(Float(text))
            #expect(Self.scan(text)?.bitPattern == expected.bitPattern, "\(text)")
            if Self.scan(text)?.bitPattern != expected.bitPattern { return }
        }
    }

    @Test func halfwayCasesRoundToEven() {
        // 1 + 2⁻²⁴ is exactly halfway between 1 and the next Float: ties to even (1).
        #expect(Self.scan("1.000000059604644775390625") == 1)
        #expect(Self.scan("1.0000000596046447753906251") == Float(1).nextUp)
        #expect(Self.scan("1.0000000596046447753906249") == 1)
        // 1 + 3·2⁻²⁴ is halfway between 1 + 2⁻²³ and 1 + 2⁻²²: ties to even (the latter).
        #expect(Self.scan("1.000000178813934326171875") == Float(1).nextUp.nextUp)
        #expect(Self.scan("3.4028235677973366e38") == Float("3.4028235677973366e38"))
        #expect(Self.scan("3.40282356779733661637539395458142568448e38") == .infinity)
        #expect(Self.scan("1e-50") == 0)
        #expect(Self.scan("-2.5") == -2.5)
        #expect(Self.scan("0") == 0)
        #expect(Self.scan("12345678901234567890123") == Float("12345678901234567890123"))
    }

    @Test(arguments: ["", "-", "+1", "01", "1.", ".5", "1e", "1e+", "--1", "0x10", "1.e5"])
    func notJSONNumbers(text: String) {
        #expect(Self.scan(text) == nil)
    }
}
