/// Finds the members of a JSON document's top-level object without building a tree,
/// so that one member (the depth map) can be handed to a specialised reader and the
/// rest to json-c.
///
/// It checks only the structure it walks (brackets, strings, commas, colons); json-c
/// validates every byte it does not hand elsewhere. Keys are compared as json-c reads
/// them, escapes decoded (`"depth\u005fdata"` is `depth_data`), and a key that appears
/// twice in any object it walks, however it is spelled, is an error: json-c would keep
/// one of them silently.
package struct JSONTopLevelScanner {
    let base: UnsafePointer<UInt8>
    let end: Int

    /// A scanner of the `end` bytes at `base`.
    package init(base: UnsafePointer<UInt8>, end: Int) {
        self.base = base
        self.end = end
    }

    /// The location of a top-level member's value.
    package struct Member {
        /// The key, escapes decoded.
        package var key: String
        /// Index of the first byte of the value.
        package var valueStart: Int
    }

    /// A key that cannot be told apart from another in the same object, or that json-c
    /// would read as another one (it cuts keys at a NUL character).
    package struct KeyError: Error {
        /// Byte offset of the offending key's opening quote.
        package var offset: Int
        /// What is wrong, naming the key.
        package var message: String
    }

    @inline(__always) private func byte(_ i: Int) -> UInt8 { i < end ? base[i] : 0 }

    @inline(__always) private func skipSpace(_ i: inout Int) {
        while i < end {
            let b = base[i]
            if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { i += 1 } else { return }
        }
    }

    /// The keys seen in one object.
    private struct KeySet {
        var keys: Set<[UInt8]> = []

        /// Records the key of the string `start ..< stringEnd` (quotes included).
        mutating func insert(_ scanner: JSONTopLevelScanner, start: Int, stringEnd: Int) throws(KeyError) -> [UInt8]? {
            guard let key = scanner.decodedKey(start: start, stringEnd: stringEnd) else { return nil }
            let raw = UnsafeBufferPointer(start: scanner.base + start + 1, count: stringEnd - start - 2)
            if key.contains(0) {
                throw KeyError(offset: start,
                               message: "the key \"\(JSONTopLevelScanner.display(raw, source: true))\" contains a NUL character")
            }
            guard keys.insert(key).inserted else {
                let name = JSONTopLevelScanner.display(key), spelled = JSONTopLevelScanner.display(raw, source: true)
                let how = raw.elementsEqual(key) ? "" : " (spelled \"\(spelled)\" here)"
                throw KeyError(offset: start, message: "the key \"\(name)\" appears twice in the same object\(how)")
            }
            return key
        }
    }

    /// A key for a one-line message, cut after 60 characters: control characters
    /// escaped as in JSON, invalid UTF-8 replaced; quotes and backslashes escaped too for
    /// a decoded key (`source: false`), left as written for a key's source text.
    static func display(_ bytes: some Collection<UInt8>, source: Bool = false) -> String {
        var out = ""
        for (n, scalar) in String(decoding: bytes, as: UTF8.self).unicodeScalars.enumerated() {
            if n == 60 { out += "…"; break }
            switch scalar {
            case "\"" where !source: out += "\\\""
            case "\\" where !source: out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028
                || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The bytes json-c reads for the string `start ..< stringEnd` (quotes included):
    /// the raw bytes when there is no escape, json-c's own decoding otherwise (nil if it
    /// rejects the string).
    private func decodedKey(start: Int, stringEnd: Int) -> [UInt8]? {
        let content = UnsafeBufferPointer(start: base + start + 1, count: stringEnd - start - 2)
        guard content.contains(0x5C) else { return Array(content) }
        return JSONDocument.decodeString(UnsafeBufferPointer(start: base + start, count: stringEnd - start))
    }

    /// Walks the top-level object; for each member calls `visit`, which either returns
    /// the index just past the value (having read it) or nil to have it skipped.
    /// Returns false if the document is not an object this scanner can walk.
    ///
    /// - Throws: `KeyError` for a key that appears twice in an object (or contains a
    ///   NUL character), and whatever `visit` throws.
    package func walk(_ visit: (Member) throws -> Int?) throws -> Bool {
        var i = 0
        // A UTF-8 byte order mark is not JSON; json-c reports it.
        skipSpace(&i)
        guard byte(i) == 0x7B else { return false }
        i += 1
        skipSpace(&i)
        if byte(i) == 0x7D { return true }
        var keys = KeySet()
        while true {
            skipSpace(&i)
            guard byte(i) == 0x22, let keyEnd = skipString(i) else { return false }
            guard let key = try keys.insert(self, start: i, stringEnd: keyEnd) else { return false }
            i = keyEnd
            skipSpace(&i)
            guard byte(i) == 0x3A else { return false }
            i += 1
            skipSpace(&i)
            if let next = try visit(Member(key: String(decoding: key, as: UTF8.self), valueStart: i)) {
                i = next
            } else {
                guard let next = try skipValue(i) else { return false }
                i = next
            }
            skipSpace(&i)
            let b = byte(i)
            if b == 0x2C { i += 1; continue }
            if b == 0x7D { return true }
            return false
        }
    }

    /// Index just past the string starting at `i` (which is a quote), nil if unterminated.
    private func skipString(_ start: Int) -> Int? {
        var i = start + 1
        while i < end {
            let b = base[i]
            if b == 0x5C { i += 2; continue }
            if b == 0x22 { return i + 1 }
            i += 1
        }
        return nil
    }

    /// Index just past the value starting at `i`, nil if it is malformed in a way this
    /// scanner notices. The keys of the objects inside are checked as `walk` checks the
    /// top level's.
    func skipValue(_ start: Int) throws(KeyError) -> Int? {
        var i = start
        // One entry per open bracket: the keys so far for an object, nil for an array;
        // and whether the next string of the innermost object is a key.
        var open: [KeySet?] = []
        var expectingKey = false
        repeat {
            skipSpace(&i)
            guard i < end else { return nil }
            let b = base[i]
            switch b {
            case 0x22:
                guard let next = skipString(i) else { return nil }
                if expectingKey, let last = open.indices.last, open[last] != nil {
                    guard try open[last]?.insert(self, start: i, stringEnd: next) != nil else { return nil }
                    expectingKey = false
                }
                i = next
            case 0x7B:
                open.append(KeySet())
                expectingKey = true
                i += 1
            case 0x5B:
                open.append(nil)
                expectingKey = false
                i += 1
            case 0x7D, 0x5D:
                guard !open.isEmpty else { return nil }
                open.removeLast()
                expectingKey = false
                i += 1
            case 0x2C:
                if open.isEmpty { return i }
                expectingKey = open[open.count - 1] != nil
                i += 1
            case 0x3A:
                if open.isEmpty { return i }
                i += 1
            default:
                // A number or literal: up to the next delimiter.
                i += 1
                while i < end {
                    let c = base[i]
                    if c == 0x2C || c == 0x5D || c == 0x7D || c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 || c == 0x3A { break }
                    i += 1
                }
            }
        } while !open.isEmpty
        return i
    }
}
