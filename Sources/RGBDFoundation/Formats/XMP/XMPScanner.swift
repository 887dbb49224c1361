/// A forgiving XML scanner for XMP: elements, attributes, namespace declarations (scoped),
/// text and CDATA; entities `&lt; &gt; &amp; &quot; &apos;` and numeric references.
package struct XMPScanner {
    private let bytes: [UInt8]

    /// The deepest nesting followed (a depth packet nests 5 levels).
    static let maxDepth = 64
    /// The most bytes scanned (a depth packet has a few kilobytes).
    static let maxBytes = 1 << 20

    package init(_ bytes: [UInt8]) {
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
    package func scan(namespaces: Set<String>) -> [String: String] {
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
    package var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{FEFF}" || $0 == "\0" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[start...end])
    }
}
