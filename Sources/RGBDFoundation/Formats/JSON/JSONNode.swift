import CJSONC

/// A parsed json-c document; owns the root object (released with `json_object_put`).
package final class JSONDocument {
    let root: OpaquePointer

    private init(root: OpaquePointer) { self.root = root }

    deinit { json_object_put(root) }

    /// Parses `bytes` strictly (`JSON_TOKENER_STRICT`), rejecting trailing content.
    ///
    /// - Returns: the document, or the byte offset and description of the first error.
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<JSONDocument, JSONSyntaxError> {
        guard let tokener = json_tokener_new_ex(64) else {
            return .failure(JSONSyntaxError(offset: 0, message: "cannot allocate a JSON parser"))
        }
        defer { json_tokener_free(tokener) }
        json_tokener_set_flags(tokener, JSON_TOKENER_STRICT)
        let object = bytes.withMemoryRebound(to: CChar.self) { chars in
            json_tokener_parse_ex(tokener, chars.baseAddress, Int32(clamping: chars.count))
        }
        let status = json_tokener_get_error(tokener)
        let parsedEnd = Int(json_tokener_get_parse_end(tokener))
        guard let object, status == json_tokener_success else {
            if let object { json_object_put(object) }
            let message = status == json_tokener_continue
                ? "unexpected end of the file"
                : String(cString: json_tokener_error_desc(status))
            return .failure(JSONSyntaxError(offset: parsedEnd, message: message))
        }
        var i = parsedEnd
        while i < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[i]) { i += 1 }
        if i < bytes.count {
            json_object_put(object)
            return .failure(JSONSyntaxError(offset: i, message: "unexpected content after the JSON value"))
        }
        return .success(JSONDocument(root: object))
    }

    /// The bytes of a JSON string (`bytes` is the string with its quotes) as json-c
    /// decodes it, escapes resolved; nil if json-c rejects it.
    static func decodeString(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard case .success(let document) = parse(bytes), json_object_get_type(document.root) == json_type_string,
              let text = json_object_get_string(document.root) else { return nil }
        let count = Int(json_object_get_string_len(document.root))
        return text.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }

    /// The root as a node named `name` in messages.
    package var rootNode: JSONNode { JSONNode(document: self, raw: root, path: "") }
}

/// A syntax error in a JSON file, at a byte offset.
package struct JSONSyntaxError: Error {
    package var offset: Int
    package var message: String
}

/// A borrowed json-c value, kept valid by a reference to its document.
package struct JSONNode {
    let document: JSONDocument
    /// The json-c object; nil for JSON `null` (which json-c stores as NULL).
    let raw: OpaquePointer?
    /// Key path from the root, for messages (`calibration_data.intrinsic_matrix`,
    /// `calibration_data.lens_distortion_lookup_table[3]`).
    package let path: String

    /// The JSON type of this value.
    package var type: json_type {
        guard let raw else { return json_type_null }
        return json_object_get_type(raw)
    }

    /// The member `key` of an object, nil if absent, `null`, or if this is not an object.
    package func member(_ key: String) -> JSONNode? {
        guard let raw, type == json_type_object else { return nil }
        var value: OpaquePointer? = nil
        guard json_object_object_get_ex(raw, key, &value) != 0, value != nil else { return nil }
        return JSONNode(document: document, raw: value, path: path.isEmpty ? key : "\(path).\(key)")
    }

    /// Whether this is a JSON object.
    package var isObject: Bool { type == json_type_object }

    /// Whether this is JSON `null`.
    package var isNull: Bool { raw == nil }

    /// The elements of an array (`null` elements as nodes of type null), nil if this is
    /// not an array.
    package var elements: [JSONNode]? {
        guard let raw, type == json_type_array else { return nil }
        return (0..<json_object_array_length(raw)).map { i in
            JSONNode(document: document, raw: json_object_array_get_idx(raw, i), path: "\(path)[\(i)]")
        }
    }

    /// Element `i` of an array (a node of type null for `null`); nil if this is not an
    /// array or `i` is out of range.
    package func element(at i: Int) -> JSONNode? {
        guard let raw, type == json_type_array, i >= 0, i < json_object_array_length(raw) else { return nil }
        return JSONNode(document: document, raw: json_object_array_get_idx(raw, i), path: "\(path)[\(i)]")
    }

    /// Number of elements, nil if not an array.
    package var count: Int? {
        guard let raw, type == json_type_array else { return nil }
        return json_object_array_length(raw)
    }

    /// The value as a number, nil if it is not a number. A number beyond a double's
    /// range (`1e309`) is infinite, and so is an integer beyond 64 bits (json-c
    /// saturates those to 2^64 − 1 or −2^63, which is not what the file says): callers
    /// that need a finite value refuse both. `typeName` says which it was.
    package var number: Double? {
        guard let raw else { return nil }
        switch type {
        case json_type_double:
            return json_object_get_double(raw)
        case json_type_int:
            if json_object_get_int64(raw) == Int64.min { return -.infinity }
            if json_object_get_uint64(raw) == UInt64.max { return .infinity }
            return json_object_get_double(raw)
        default:
            return nil
        }
    }

    /// A number as the file writes it (json-c keeps a double's text), at most 40
    /// characters; nil if this is not a number.
    var numberText: String? {
        guard let raw, type == json_type_double || type == json_type_int,
              let text = json_object_to_json_string(raw) else { return nil }
        let string = String(cString: text)
        return string.count > 40 ? String(string.prefix(40)) + "…" : string
    }

    /// The value as a string, nil if it is not a string.
    package var string: String? {
        guard type == json_type_string, let chars = json_object_get_string(raw) else { return nil }
        let length = Int(json_object_get_string_len(raw))
        return chars.withMemoryRebound(to: UInt8.self, capacity: max(length, 1)) { bytes in
            String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
        }
    }

    /// A short name of the JSON type, for messages.
    package var typeName: String {
        switch type {
        case json_type_null: return "null"
        case json_type_boolean: return "a boolean"
        case json_type_double, json_type_int:
            guard let value = number, !value.isFinite else { return "a number" }
            if type == json_type_int { return "an integer beyond 64 bits" }
            return "\(numberText ?? "a number"), beyond the range of a double"
        case json_type_object: return "an object"
        case json_type_array: return "an array"
        case json_type_string: return "a string"
        default: return "an unknown value"
        }
    }
}
