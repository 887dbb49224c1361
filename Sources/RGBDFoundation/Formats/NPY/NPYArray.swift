/// A 2-D array in NumPy's `.npy` format (versions 1–3), as older Stray Scanner scans
/// store depth (`uint16` millimetres): the magic `\x93NUMPY`, a version, the header's
/// length, a Python dict literal (`descr`, `fortran_order`, `shape`) and the raw data.
/// Only what depth files use is read: C order, 2 dimensions, `u1`, `u2`, `f4`.
package struct NPYArray: Sendable {
    /// The element types read.
    package enum Element: String, Sendable {
        /// `|u1`
        case uint8 = "u1"
        /// `<u2`
        case uint16 = "u2"
        /// `<f4`
        case float32 = "f4"

        var size: Int {
            switch self {
            case .uint8: 1
            case .uint16: 2
            case .float32: 4
            }
        }
    }

    /// Rows.
    package let height: Int
    /// Columns.
    package let width: Int
    /// The element type.
    package let element: Element
    /// The elements, converted to `Float` (row-major).
    package let values: [Float]

    /// Parses a `.npy` file's bytes; `name` names it in errors. At most `maxElements`
    /// elements, checked against the file's size before any allocation.
    package init(_ bytes: [UInt8], name: String, maxElements: Int) throws {
        func fail(_ message: String) -> RGBDError { RGBDError(.invalidImage, file: name, "not a 2-D .npy array: \(message)") }
        let magic: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]
        guard bytes.count >= 10, Array(bytes[0..<6]) == magic else { throw fail("no \\x93NUMPY magic") }
        let major = bytes[6]
        let headerLength: Int, headerStart: Int
        switch major {
        case 1:
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8
            headerStart = 10
        case 2, 3:
            guard bytes.count >= 12 else { throw fail("truncated header") }
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24
            headerStart = 12
        default:
            throw fail("version \(major)")
        }
        guard headerLength <= 65_536, headerStart + headerLength <= bytes.count else { throw fail("truncated header") }
        let header = String(decoding: bytes[headerStart..<headerStart + headerLength], as: UTF8.self)
        guard let descr = Self.value(of: "descr", in: header), let shape = Self.value(of: "shape", in: header) else {
            throw fail("the header has no descr or shape")
        }
        guard Self.value(of: "fortran_order", in: header)?.hasPrefix("False") == true else {
            throw fail("Fortran order is not read")
        }
        let type = descr.trimmingQuotes
        guard type.first == "<" || type.first == "|", let element = Element(rawValue: String(type.dropFirst())) else {
            throw fail("element type \(RGBDError.shown(type, limit: 12)) (rgbd reads <u2, |u1, <f4)")
        }
        let dims = shape.drop { $0 == "(" }.prefix { $0 != ")" }.split(separator: ",")
            .map { $0.trimmingCharacters(in: " ") }.filter { !$0.isEmpty }
        guard dims.count == 2, let h = Int(dims[0]), let w = Int(dims[1]), h > 0, w > 0,
              h <= maxElements, w <= maxElements, h * w <= maxElements else {
            throw fail("shape \(RGBDError.shown(shape, limit: 40)) (rgbd reads 2-D arrays of at most \(maxElements) elements)")
        }
        let dataStart = headerStart + headerLength
        guard bytes.count - dataStart == h * w * element.size else {
            throw fail("\(bytes.count - dataStart) bytes of data for a \(h)×\(w) array of \(element.rawValue)")
        }
        height = h
        width = w
        self.element = element
        values = bytes.withUnsafeBytes { raw in
            let data = UnsafeRawBufferPointer(rebasing: raw[dataStart...])
            return (0..<h * w).map { i in
                switch element {
                case .uint8: Float(data[i])
                case .uint16: Float(UInt16(littleEndian: data.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self)))
                case .float32: Float(bitPattern: UInt32(littleEndian: data.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)))
                }
            }
        }
    }

    /// The text after `'key':` up to the next top-level comma of the dict literal.
    private static func value(of key: String, in header: String) -> Substring? {
        let needle = Array("'\(key)':")
        let chars = Array(header)
        guard let start = (0...max(0, chars.count - needle.count)).first(where: { i in
            i + needle.count <= chars.count && Array(chars[i..<i + needle.count]) == needle
        }) else { return nil }
        let valueStart = header.index(header.startIndex, offsetBy: start + needle.count)
        var depth = 0
        var end = valueStart
        while end < header.endIndex {
            let c = header[end]
            if c == "(" { depth += 1 }
            if c == ")" { depth -= 1 }
            if (c == "," && depth == 0) || c == "}" { break }
            end = header.index(after: end)
        }
        return header[valueStart..<end].drop { $0 == " " }
    }
}

private extension Substring {
    var trimmingQuotes: Substring { self.filter { $0 != "'" && $0 != "\"" && $0 != " " }[...] }

    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}
