/// A JSON value whose objects keep their keys in the order given: rgbd's one JSON
/// writer. Everything rgbd writes as JSON (`rgbd info --json`, the `*.intrinsics.json`
/// sidecar) is a `JSONValue` turned into text by `text(indent:)`, its numbers and
/// strings formatted by `JSONText`.
package indirect enum JSONValue: Equatable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer.
    case int(Int)
    /// A number (non-finite values are written as `null`).
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, keys in this order.
    case object([Member])

    /// One key and value of an object.
    package struct Member: Equatable, Sendable {
        /// The key.
        package var key: String
        /// The value.
        package var value: JSONValue

        /// A member.
        package init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The value or `null`.
    package static func number(_ value: Double?) -> JSONValue { value.map { .number($0) } ?? .null }

    /// `[x, y]`.
    package static func point(_ p: SIMD2<Double>) -> JSONValue { .array([.number(p.x), .number(p.y)]) }

    /// The text, indented by two spaces per level; arrays of scalars stay on one line.
    package func text(indent: String = "") -> String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .number(let v): return JSONText.number(v)
        case .string(let s): return JSONText.string(s)
        case .array(let items):
            if items.isEmpty { return "[]" }
            let scalars = items.allSatisfy { item in
                switch item {
                case .array, .object: return false
                default: return true
                }
            }
            if scalars { return "[" + items.map { $0.text() }.joined(separator: ", ") + "]" }
            let inner = indent + "  "
            return "[\n" + items.map { inner + $0.text(indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        case .object(let members):
            if members.isEmpty { return "{}" }
            let inner = indent + "  "
            return "{\n" + members.map { inner + JSONText.string($0.key) + ": " + $0.value.text(indent: inner) }
                .joined(separator: ",\n") + "\n" + indent + "}"
        }
    }
}

/// Minimal JSON text formatting for the files rgbd writes.
package enum JSONText {
    /// A finite number in the shortest form that reads back exactly (`2742.0`, `1e-05`).
    package static func number(_ v: Double) -> String {
        v.isFinite ? "\(v)" : "null"
    }

    /// A quoted, escaped JSON string.
    package static func string(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
