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
public struct PortraitXMP: Equatable, Sendable {
    /// The fields found, by local name (the last value if a field appears twice).
    public var fields: [String: String] = [:]

    /// The Apple namespaces the fields are read from.
    public static let namespaces: Set<String> = [
        "http://ns.apple.com/pixeldatainfo/1.0/", "http://ns.apple.com/depthData/1.0/",
    ]

    /// An empty packet (for tests and hand-made values).
    public init(fields: [String: String] = [:]) {
        self.fields = fields
    }

    /// Reads the fields of an XMP packet (UTF-8 bytes; a leading BOM or padding is fine).
    public init(_ bytes: [UInt8]) {
        fields = XMPScanner(bytes).scan(namespaces: Self.namespaces)
    }

    /// The text of a field on one line: control characters and line breaks become
    /// spaces, runs of spaces one, ends trimmed; nil if absent or empty.
    public func string(_ name: String) -> String? {
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
    public func number(_ name: String) -> Double? {
        guard let text = string(name) else { return nil }
        let values = Self.numbers(text)
        return values?.count == 1 ? values?.first : nil
    }

    /// A field as a list of numbers; nil if absent or if an item is not a number.
    public func numbers(_ name: String) -> [Double]? {
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

    /// A four-character code field (`hdis`, `L008`), written as the four characters or as
    /// their big-endian 32-bit number (`1751411059` for `hdis`); nil if neither.
    public func fourCC(_ name: String) -> String? {
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
    public var describesMatte: Bool {
        if let subtype = string("AuxiliaryImageSubType"), !subtype.isEmpty { return true }
        return string("AuxiliaryImageType")?.lowercased().contains("matte") == true
    }

    /// Whether the packet holds Apple's depth fields and is not a matte's.
    public var describesDepth: Bool {
        guard !describesMatte else { return false }
        return ["IntrinsicMatrix", "LensDistortionCoefficients", "FloatMinValue", "Accuracy"].contains { fields[$0] != nil }
            || ["disparity", "depth"].contains(string("AuxiliaryImageType")?.lowercased() ?? "")
    }
}

/// A forgiving XML scanner for XMP: elements, attributes, namespace declarations (scoped),
/// text and CDATA; entities `&lt; &gt; &amp; &quot; &apos;` and numeric references.
struct XMPScanner {
    private let bytes: [UInt8]

    /// The deepest nesting followed (a depth packet nests 5 levels).
    static let maxDepth = 64
    /// The most bytes scanned (a depth packet has a few kilobytes).
    static let maxBytes = 1 << 20

    init(_ bytes: [UInt8]) {
        self.bytes = bytes.count > Self.maxBytes ? Array(bytes.prefix(Self.maxBytes)) : bytes
    }

    private struct Open {
        var name: String
        var declarations: [String: String]
        /// The local name of the wanted field this element is, nil if none.
        var field: String?
        var text: [String]
    }

    /// The text of every attribute and element of the given namespaces, by local name.
    /// An element's value is its text and that of its descendants, items separated by spaces.
    func scan(namespaces: Set<String>) -> [String: String] {
        var fields: [String: String] = [:]
        var stack: [Open] = []
        var i = 0
        let n = bytes.count

        func resolve(_ qualified: String, attribute: Bool) -> (namespace: String?, local: String) {
            guard let colon = qualified.firstIndex(of: ":") else {
                if attribute { return (nil, qualified) }
                for open in stack.reversed() { if let uri = open.declarations[""] { return (uri, qualified) } }
                return (nil, qualified)
            }
            let prefix = String(qualified[..<colon]), local = String(qualified[qualified.index(after: colon)...])
            for open in stack.reversed() { if let uri = open.declarations[prefix] { return (uri, local) } }
            return (nil, local)
        }
        func appendText(_ text: String) {
            guard let index = stack.lastIndex(where: { $0.field != nil }) else { return }
            stack[index].text.append(text)
        }

        while i < n {
            if bytes[i] != UInt8(ascii: "<") {
                var j = i
                while j < n && bytes[j] != UInt8(ascii: "<") { j += 1 }
                appendText(Self.unescape(bytes[i..<j]))
                i = j
                continue
            }
            // Comments, CDATA, processing instructions, declarations.
            if starts(at: i, "<!--") {
                i = find("-->", from: i + 4).map { $0 + 3 } ?? n
                continue
            }
            if starts(at: i, "<![CDATA[") {
                let end = find("]]>", from: i + 9) ?? n
                appendText(String(decoding: bytes[(i + 9)..<end], as: UTF8.self))
                i = min(n, end + 3)
                continue
            }
            if starts(at: i, "<?") || starts(at: i, "<!") {
                i = find(">", from: i + 2).map { $0 + 1 } ?? n
                continue
            }
            if starts(at: i, "</") {
                let end = find(">", from: i + 2) ?? n
                let name = String(decoding: bytes[(i + 2)..<end], as: UTF8.self).trimmingWhitespace
                // Close up to the matching element (tolerating unclosed ones in between).
                if let index = stack.lastIndex(where: { $0.name == name }) {
                    while stack.count > index {
                        let open = stack.removeLast()
                        if let field = open.field {
                            let value = open.text.map(\.trimmingWhitespace).filter { !$0.isEmpty }.joined(separator: " ")
                            if !value.isEmpty { fields[field] = value }
                            if stack.contains(where: { $0.field != nil }) { appendText(" " + value + " ") }
                        }
                    }
                }
                i = min(n, end + 1)
                continue
            }
            // A start tag: name, attributes, maybe self-closing.
            var j = i + 1
            let nameStart = j
            while j < n && !Self.isSpace(bytes[j]) && bytes[j] != UInt8(ascii: ">") && bytes[j] != UInt8(ascii: "/")
                && bytes[j] != UInt8(ascii: "<") { j += 1 }
            let name = String(decoding: bytes[nameStart..<j], as: UTF8.self)
            var attributes: [(String, String)] = []
            var selfClosing = false
            while j < n {
                while j < n && Self.isSpace(bytes[j]) { j += 1 }
                guard j < n else { break }
                if bytes[j] == UInt8(ascii: ">") { j += 1; break }
                if bytes[j] == UInt8(ascii: "/") {
                    selfClosing = true
                    j += 1
                    continue
                }
                let keyStart = j
                while j < n && !Self.isSpace(bytes[j]) && bytes[j] != UInt8(ascii: "=") && bytes[j] != UInt8(ascii: ">")
                    && bytes[j] != UInt8(ascii: "/") && bytes[j] != UInt8(ascii: "<") { j += 1 }
                let key = String(decoding: bytes[keyStart..<j], as: UTF8.self)
                while j < n && Self.isSpace(bytes[j]) { j += 1 }
                guard j < n, bytes[j] == UInt8(ascii: "=") else {
                    if j == keyStart { j += 1 }  // a stray byte: skip it
                    continue
                }
                j += 1
                while j < n && Self.isSpace(bytes[j]) { j += 1 }
                guard j < n else { break }
                let quote = bytes[j]
                var value = ""
                if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                    let end = bytes[(j + 1)...].firstIndex(of: quote) ?? n
                    value = Self.unescape(bytes[(j + 1)..<end])
                    j = min(n, end + 1)
                } else {
                    let valueStart = j
                    while j < n && !Self.isSpace(bytes[j]) && bytes[j] != UInt8(ascii: ">") { j += 1 }
                    value = Self.unescape(bytes[valueStart..<j])
                }
                selfClosing = false
                attributes.append((key, value))
            }
            var declarations: [String: String] = [:]
            for (key, value) in attributes {
                if key == "xmlns" { declarations[""] = value }
                if key.hasPrefix("xmlns:") { declarations[String(key.dropFirst(6))] = value }
            }
            // Nesting deeper than any XMP packet's is ignored (it would make the scan quadratic).
            guard stack.count < Self.maxDepth else {
                i = j
                continue
            }
            stack.append(Open(name: name, declarations: declarations, field: nil, text: []))
            let (namespace, local) = resolve(name, attribute: false)
            if let namespace, namespaces.contains(namespace) { stack[stack.count - 1].field = local }
            for (key, value) in attributes where key != "xmlns" && !key.hasPrefix("xmlns:") {
                let (namespace, local) = resolve(key, attribute: true)
                if let namespace, namespaces.contains(namespace) { fields[local] = value }
            }
            if selfClosing {
                let open = stack.removeLast()
                if let field = open.field, fields[field] == nil { fields[field] = "" }
            }
            i = j
        }
        // Elements left open at the end of a truncated packet still give their text.
        while let open = stack.popLast() {
            if let field = open.field, fields[field] == nil {
                let value = open.text.map(\.trimmingWhitespace).filter { !$0.isEmpty }.joined(separator: " ")
                if !value.isEmpty { fields[field] = value }
            }
        }
        return fields
    }

    private func starts(at index: Int, _ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        return text.withUTF8Buffer { prefix in
            for k in 0..<count where bytes[index + k] != prefix[k] { return false }
            return true
        }
    }

    private func find(_ text: StaticString, from start: Int) -> Int? {
        var index = start
        while index < bytes.count {
            if starts(at: index, text) { return index }
            index += 1
        }
        return nil
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// Text with XML's entities and character references replaced (unknown ones kept).
    static func unescape(_ slice: ArraySlice<UInt8>) -> String {
        let text = String(decoding: slice, as: UTF8.self)
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semi) <= 12 else {
                out += "&"
                rest = rest[rest.index(after: amp)...]
                continue
            }
            let entity = rest[rest.index(after: amp)..<semi]
            let named = ["lt": "<", "gt": ">", "amp": "&", "quot": "\"", "apos": "'"]
            if let value = named[String(entity)] {
                out += value
            } else if entity.hasPrefix("#x") || entity.hasPrefix("#X"), let code = UInt32(entity.dropFirst(2), radix: 16),
                      let scalar = Unicode.Scalar(code) {
                out.unicodeScalars.append(scalar)
            } else if entity.hasPrefix("#"), let code = UInt32(entity.dropFirst()), let scalar = Unicode.Scalar(code) {
                out.unicodeScalars.append(scalar)
            } else {
                out += rest[amp...semi]
            }
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and line breaks.
    var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{FEFF}" || $0 == "\0" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[start...end])
    }
}
