/// Strict, fast reader for the depth map's nested number arrays (`[[0.91, 0.92, …], …]`),
/// flat arrays (`[0.91, 0.92, …]`) and base64 strings of little-endian float32.
///
/// json-c builds a tree node per number, which for a 768×576 map costs more than all the
/// rest of rgbd's work on the capture. This reader goes straight from the bytes to a
/// `DepthMap`, still rejecting anything that is not valid JSON, with the row and column
/// of the problem. Values are kept as written (`null` and `NaN` are NaN, `Infinity` and
/// numbers that overflow a Float are infinite): `DepthDiscards.sanitize` turns the
/// markers of missing depth into NaN afterwards, counting them.
package struct DepthArrayParser {
    let base: UnsafePointer<UInt8>
    let end: Int
    /// The key path used in messages (`depth_data`).
    package let key: String

    /// A parser of the array in the `end` bytes at `base`, the value of `key`.
    package init(base: UnsafePointer<UInt8>, end: Int, key: String) {
        self.base = base
        self.end = end
        self.key = key
    }

    /// A parse failure at a byte offset; the caller turns the offset into a line.
    package struct Failure: Error {
        package var offset: Int
        package var message: String
        /// Whether the data ended where more was due (a string or an array left open):
        /// the document is cut short, not valid JSON.
        package var cutShort = false
    }

    /// How the depth member was written.
    package enum Layout: Sendable {
        /// Rows of numbers: the map's size is its shape.
        case rows
        /// One array of numbers (read as a single row): the size comes from other keys.
        case flat
        /// A base64 string of little-endian float32 (read as a single row).
        case base64
    }

    /// Any of the three layouts at `start` (after whitespace): the map (a single row for
    /// `.flat` and `.base64`), the index just past the value, and the layout.
    package func parseAny(at start: Int) throws(Failure) -> (map: DepthMap, end: Int, layout: Layout) {
        var i = start
        skipSpace(&i)
        if byte(i) == 0x22 {
            var stop = i + 1
            while stop < end && base[stop] != 0x22 { stop += base[stop] == 0x5C ? 2 : 1 }
            guard stop < end else { throw Failure(offset: i, message: "\(key): unterminated string", cutShort: true) }
            let floats: [Float]
            do {
                floats = try Base64.float32LittleEndian(UnsafeBufferPointer(start: base + i + 1, count: stop - i - 1),
                                                        escapedSlashes: true)
            } catch {
                throw Failure(offset: i, message: "\(key): \(error.message)")
            }
            guard !floats.isEmpty else { throw Failure(offset: i, message: "\(key): the depth map is empty") }
            return (DepthMap(width: floats.count, height: 1, channels: 1, samples: floats), stop + 1, .base64)
        }
        if byte(i) == 0x5B {
            var j = i + 1
            skipSpace(&j)
            if byte(j) != 0x5B && byte(j) != 0x5D {
                var values: [Float] = []
                values.reserveCapacity(max(16, (end - start) / 12))
                while true {
                    skipSpace(&j)
                    values.append(try value(at: &j, row: -1, column: values.count))
                    skipSpace(&j)
                    let b = byte(j)
                    if b == 0x2C { j += 1; continue }
                    if b == 0x5D { j += 1; break }
                    throw Failure(offset: j, message: "\(key): expected ',' or ']' after element \(values.count - 1), found \(describe(j))")
                }
                return (DepthMap(width: values.count, height: 1, channels: 1, samples: values), j, .flat)
            }
        }
        let (map, stop) = try parse(at: start)
        return (map, stop, .rows)
    }

    @inline(__always) private func byte(_ i: Int) -> UInt8 { i < end ? base[i] : 0 }

    @inline(__always) private func skipSpace(_ i: inout Int) {
        while i < end {
            let b = base[i]
            if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { i += 1 } else { return }
        }
    }

    /// Parses the array starting at `start` (after whitespace); returns the map and the
    /// index just past its closing bracket.
    package func parse(at start: Int) throws(Failure) -> (map: DepthMap, end: Int) {
        var i = start
        skipSpace(&i)
        guard byte(i) == 0x5B else { throw Failure(offset: i, message: "\(key): expected an array of rows, found \(describe(i))") }
        i += 1
        skipSpace(&i)
        guard byte(i) != 0x5D else { throw Failure(offset: i, message: "\(key): the depth map is empty") }
        var values: [Float] = []
        values.reserveCapacity(max(16, (end - start) / 20))
        var width = -1
        var row = 0
        while true {
            skipSpace(&i)
            guard byte(i) == 0x5B else {
                let what = row == 0 ? "expected an array of rows (each row an array of numbers)" : "row \(row): expected a row (an array of numbers)"
                throw Failure(offset: i, message: "\(key): \(what), found \(describe(i))")
            }
            i += 1
            var count = 0
            skipSpace(&i)
            if byte(i) == 0x5D {
                i += 1
            } else {
                while true {
                    skipSpace(&i)
                    values.append(try value(at: &i, row: row, column: count))
                    count += 1
                    skipSpace(&i)
                    let b = byte(i)
                    if b == 0x2C { i += 1; continue }
                    if b == 0x5D { i += 1; break }
                    throw Failure(offset: i, message: "\(key): row \(row): expected ',' or ']' after value \(count - 1), found \(describe(i))")
                }
            }
            if width < 0 {
                guard count > 0 else { throw Failure(offset: i, message: "\(key): row 0 is empty") }
                width = count
            } else if count != width {
                throw Failure(offset: i, message: "\(key): row \(row) has \(count) values, but row 0 has \(width) (ragged depth rows)")
            }
            row += 1
            skipSpace(&i)
            let b = byte(i)
            if b == 0x2C { i += 1; continue }
            if b == 0x5D { i += 1; break }
            throw Failure(offset: i, message: "\(key): expected ',' or ']' after row \(row - 1), found \(describe(i))")
        }
        return (DepthMap(width: width, height: row, channels: 1, samples: values), i)
    }

    /// One depth value as written (`null`, `NaN` → NaN; `±Infinity` → ±infinity); `row`
    /// −1 is a flat array.
    @inline(__always)
    private func value(at i: inout Int, row: Int, column: Int) throws(Failure) -> Float {
        let b = byte(i)
        if (b >= 0x30 && b <= 0x39) || b == 0x2D {
            if b == 0x2D && byte(i + 1) == 0x49 {  // -Infinity
                if literal("-Infinity", at: i) { i += 9; return -.infinity }
            } else if let scanned = DecimalFloat.scan(base, i, end) {
                i = scanned.end
                return scanned.value
            }
        } else if b == 0x6E, literal("null", at: i) {
            i += 4; return .nan
        } else if b == 0x4E, literal("NaN", at: i) {
            i += 3; return .nan
        } else if b == 0x49, literal("Infinity", at: i) {
            i += 8; return .infinity
        }
        let place = row < 0 ? "element \(column)" : "row \(row), column \(column)"
        throw Failure(offset: i, message: "\(key): \(place): expected a number, found \(describe(i))")
    }

    private func literal(_ word: StaticString, at i: Int) -> Bool {
        let n = word.utf8CodeUnitCount
        guard i + n <= end else { return false }
        let w = word.utf8Start
        for k in 0..<n where base[i + k] != w[k] { return false }
        // The literal must end there (not `nullx`).
        let next = byte(i + n)
        return !((next >= 0x41 && next <= 0x5A) || (next >= 0x61 && next <= 0x7A) || (next >= 0x30 && next <= 0x39))
    }

    /// A short quote of the input at `i` for messages.
    private func describe(_ i: Int) -> String {
        guard i < end else { return "the end of the file" }
        var stop = i
        while stop < end && stop - i < 12 {
            let b = base[stop]
            if b == 0x0A || b == 0x0D || ((b == 0x2C || b == 0x5D) && stop > i) { break }
            stop += 1
        }
        let text = String(decoding: UnsafeBufferPointer(start: base + i, count: stop - i), as: UTF8.self)
        return "'\(text)'"
    }
}
