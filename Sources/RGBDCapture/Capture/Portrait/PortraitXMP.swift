/// The depth metadata of a Portrait photo: the XMP packet of its depth image, in Apple's
/// namespaces `http://ns.apple.com/pixeldatainfo/1.0/` and
/// `http://ns.apple.com/depthData/1.0/` (docs/portrait.md).
///
/// The reader is small and tolerant: a field may be an attribute (`depthData:Accuracy="relative"`)
/// or an element (`<depthData:Accuracy>relative</depthData:Accuracy>`), a list may be an
/// `rdf:Seq` of `rdf:li` or numbers separated by spaces or commas, the prefixes are
/// whatever the packet declares, and a field is taken from either Apple namespace. Unknown
/// fields and other namespaces are ignored. Malformed XML never crashes it: it reads what
/// it can and the caller checks that the fields it needs are there.
package struct PortraitXMP: Equatable, Sendable {
    /// The fields found, by local name (the last value if a field appears twice).
    package var fields: [String: String] = [:]

    /// The Apple namespaces the fields are read from.
    package static let namespaces: Set<String> = [
        "http://ns.apple.com/pixeldatainfo/1.0/", "http://ns.apple.com/depthData/1.0/",
    ]

    /// An empty packet (for tests and hand-made values).
    package init(fields: [String: String] = [:]) {
        self.fields = fields
    }

    /// Reads the fields of an XMP packet (UTF-8 bytes; a leading BOM or padding is fine).
    package init(_ bytes: [UInt8]) {
        fields = XMPScanner(bytes).scan(namespaces: Self.namespaces)
    }

    /// The text of a field on one line: control characters and line breaks become
    /// spaces, runs of spaces one, ends trimmed; nil if absent or empty.
    package func string(_ name: String) -> String? {
        guard let raw = fields[name] else { return nil }
        var line = ""
        var space = false
        for scalar in raw.unicodeScalars {
            let category = scalar.properties.generalCategory
            if scalar == " " || category == .control || category == .lineSeparator || category == .paragraphSeparator
                || category == .format {
                space = true
                continue
            }
            if space, !line.isEmpty { line.append(" ") }
            space = false
            line.unicodeScalars.append(scalar)
        }
        return line.isEmpty ? nil : line
    }

    /// A field's text for a message: `string(name)` cut to 40 characters, or `missing`.
    func shown(_ name: String) -> String {
        guard let text = string(name) else { return "missing" }
        return text.count > 40 ? String(text.prefix(40)) + "…" : text
    }

    /// A field as one number; nil if absent or not a number.
    package func number(_ name: String) -> Double? {
        guard let text = string(name) else { return nil }
        let values = Self.numbers(text)
        return values?.count == 1 ? values?.first : nil
    }

    /// A field as a list of numbers; nil if absent or if an item is not a number.
    package func numbers(_ name: String) -> [Double]? {
        string(name).flatMap(Self.numbers)
    }

    /// The numbers of a text separated by whitespace or commas; nil if one is not a number.
    static func numbers(_ text: String) -> [Double]? {
        let items = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\n" || $0 == "\t" || $0 == "\r" })
        var values: [Double] = []
        for item in items {
            guard let value = Double(item), value.isFinite else { return nil }
            values.append(value)
        }
        return values.isEmpty ? nil : values
    }

    /// A field as numbers, telling an absent field (nil) from one that is there but is
    /// not a list of finite numbers (an error naming the field and the offending item,
    /// such as `NaN` or `abc`); `count` asks for exactly that many numbers.
    func checkedNumbers(_ name: String, count: Int? = nil, file: String) throws -> [Double]? {
        guard let text = string(name) else { return nil }
        let items = text.split(whereSeparator: { $0 == " " || $0 == "," })
        var values: [Double] = []
        for item in items {
            let shown = item.count > 40 ? String(item.prefix(40)) + "…" : String(item)
            guard let value = Double(item) else {
                throw RGBDError(.invalidCapture, file: file, location: name, "expected a number, found \"\(shown)\"")
            }
            guard value.isFinite else {
                throw RGBDError(.invalidCapture, file: file, location: name, "expected a finite number, found \(shown)")
            }
            values.append(value)
        }
        if let count, values.count != count {
            throw RGBDError(.invalidCapture, file: file, location: name,
                            "expected \(count == 1 ? "one number" : "\(count) numbers"), found \(values.count)")
        }
        return values
    }

    /// `checkedNumbers` of a field that holds one number.
    func checkedNumber(_ name: String, file: String) throws -> Double? {
        try checkedNumbers(name, count: 1, file: file)?.first
    }

    /// A four-character code field (`hdis`, `L008`), written as the four characters or as
    /// their big-endian 32-bit number (`1751411059` for `hdis`); nil if neither.
    package func fourCC(_ name: String) -> String? {
        guard let text = string(name) else { return nil }
        if text.count == 4, text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 }) { return text }
        guard let value = UInt32(text) else { return nil }
        let bytes = [value >> 24, value >> 16, value >> 8, value].map { UInt8(truncatingIfNeeded: $0) }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether the packet describes a matte (a Portrait Effects Matte or a semantic
    /// segmentation matte): an `AuxiliaryImageSubType`, or an `AuxiliaryImageType` that
    /// names a matte. (Apple marks mattes `AuxiliaryImageType` `depth` with a subtype.)
    package var describesMatte: Bool {
        if let subtype = string("AuxiliaryImageSubType"), !subtype.isEmpty { return true }
        return string("AuxiliaryImageType")?.lowercased().contains("matte") == true
    }

    /// Whether the packet holds Apple's depth fields and is not a matte's.
    package var describesDepth: Bool {
        guard !describesMatte else { return false }
        return ["IntrinsicMatrix", "LensDistortionCoefficients", "FloatMinValue", "Accuracy"].contains { fields[$0] != nil }
            || ["disparity", "depth"].contains(string("AuxiliaryImageType")?.lowercased() ?? "")
    }
}
