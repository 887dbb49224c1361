/// Finds the members of a JSON document's top-level object without building a tree,
/// so that one member (the depth map) can be handed to a specialised reader and the
/// rest to json-c.
///
/// It checks only the structure it walks (brackets, strings, commas, colons); json-c
/// validates every byte it does not hand elsewhere.
struct JSONTopLevelScanner {
    let base: UnsafePointer<UInt8>
    let end: Int

    /// The location of a top-level member's value.
    struct Member {
        var key: String
        /// Index of the first byte of the value.
        var valueStart: Int
    }

    @inline(__always) private func byte(_ i: Int) -> UInt8 { i < end ? base[i] : 0 }

    @inline(__always) private func skipSpace(_ i: inout Int) {
        while i < end {
            let b = base[i]
            if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { i += 1 } else { return }
        }
    }

    /// Walks the top-level object; for each member calls `visit`, which either returns
    /// the index just past the value (having read it) or nil to have it skipped.
    /// Returns false if the document is not an object this scanner can walk.
    func walk(_ visit: (Member) throws -> Int?) rethrows -> Bool {
        var i = 0
        // A UTF-8 byte order mark is not JSON; json-c reports it.
        skipSpace(&i)
        guard byte(i) == 0x7B else { return false }
        i += 1
        skipSpace(&i)
        if byte(i) == 0x7D { return true }
        while true {
            skipSpace(&i)
            guard byte(i) == 0x22, let keyEnd = skipString(i) else { return false }
            let key = String(decoding: UnsafeBufferPointer(start: base + i + 1, count: keyEnd - i - 2), as: UTF8.self)
            i = keyEnd
            skipSpace(&i)
            guard byte(i) == 0x3A else { return false }
            i += 1
            skipSpace(&i)
            if let next = try visit(Member(key: key, valueStart: i)) {
                i = next
            } else {
                guard let next = skipValue(i) else { return false }
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
    /// scanner notices.
    func skipValue(_ start: Int) -> Int? {
        var i = start
        var depth = 0
        repeat {
            skipSpace(&i)
            guard i < end else { return nil }
            let b = base[i]
            switch b {
            case 0x22:
                guard let next = skipString(i) else { return nil }
                i = next
            case 0x7B, 0x5B:
                depth += 1
                i += 1
            case 0x7D, 0x5D:
                depth -= 1
                if depth < 0 { return nil }
                i += 1
            case 0x2C, 0x3A:
                if depth == 0 { return i }
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
        } while depth > 0
        return i
    }
}
