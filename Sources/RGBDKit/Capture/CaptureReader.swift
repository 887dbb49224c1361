/// Reads a capture JSON (calibration and depth map) as docs/format.md describes.
///
/// The depth map goes through `DepthArrayParser` straight from the bytes; the rest of
/// the document (the calibration, a few kilobytes) is parsed by json-c with the depth
/// value replaced by `null`. If the quick top-level walk cannot make sense of the file,
/// json-c parses all of it, so its error message is the one reported. Keys mean what
/// json-c reads (escapes decoded) in both, and a key repeated in an object, however it
/// is spelled, is an error (`JSONTopLevelScanner`).
public enum CaptureReader {
    /// What a capture JSON holds.
    public struct Contents: Sendable {
        /// The calibration at its reference dimensions.
        public var calibration: Calibration
        /// The depth map as captured (distorted), meters, NaN = no depth.
        public var depth: DepthMap
        /// The schema that matched.
        public var schemaName: String
        /// Where the calibration's keys were in the file, for messages.
        public var keys = CalibrationKeys()
    }

    /// Reads and parses a capture JSON file.
    public static func read(path: String) throws -> Contents {
        let bytes = try FileSystem.readFile(path)
        return try parse(bytes, file: path)
    }

    /// Parses the bytes of a capture JSON; `file` names it in errors.
    public static func parse(_ bytes: [UInt8], file: String) throws -> Contents {
        try bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else {
                throw RGBDError(.invalidJSON, file: file, "the file is empty")
            }
            return try parse(base: base, count: buffer.count, file: file)
        }
    }

    private static func parse(base: UnsafePointer<UInt8>, count: Int, file: String) throws -> Contents {
        var depth: DepthMap? = nil
        var depthKey = ""
        var depthSpan: Range<Int>? = nil
        let scanner = JSONTopLevelScanner(base: base, end: count)
        let walked: Bool
        do {
            walked = try scanner.walk { member in
                guard CaptureSchema.allDepthKeys.contains(member.key) else { return nil }
                if depthSpan != nil {
                    throw RGBDError(.invalidCapture, file: file, location: member.key, "more than one depth map in the file")
                }
                let parser = DepthArrayParser(base: base, end: count, key: member.key)
                do {
                    let (map, end) = try parser.parse(at: member.valueStart)
                    depth = map
                    depthKey = member.key
                    depthSpan = member.valueStart..<end
                    return end
                } catch let error as DepthArrayParser.Failure {
                    throw RGBDError(.invalidCapture, file: file, location: "line \(line(of: error.offset, base: base, count: count))", error.message)
                }
            }
        } catch let error as JSONTopLevelScanner.KeyError {
            throw RGBDError(.invalidCapture, file: file, location: "line \(line(of: error.offset, base: base, count: count))",
                            error.message)
        }

        // The rest of the document, for json-c.
        let document: JSONDocument
        if walked, let span = depthSpan {
            var rest = [UInt8]()
            rest.reserveCapacity(count - span.count + 4)
            rest.append(contentsOf: UnsafeBufferPointer(start: base, count: span.lowerBound))
            rest.append(contentsOf: "null".utf8)
            rest.append(contentsOf: UnsafeBufferPointer(start: base + span.upperBound, count: count - span.upperBound))
            document = try rest.withUnsafeBufferPointer { buffer in
                switch JSONDocument.parse(buffer) {
                case .success(let d): return d
                case .failure(let e):
                    let offset = e.offset >= span.lowerBound + 4 ? e.offset - 4 + span.count : e.offset
                    throw syntaxError(e.message, offset: offset, base: base, count: count, file: file)
                }
            }
        } else {
            switch JSONDocument.parse(UnsafeBufferPointer(start: base, count: count)) {
            case .success(let d): document = d
            case .failure(let e): throw syntaxError(e.message, offset: e.offset, base: base, count: count, file: file)
            }
        }

        let root = document.rootNode
        guard root.isObject else {
            throw RGBDError(.invalidCapture, file: file, "the top level is \(root.typeName), expected an object")
        }
        for schema in CaptureSchema.all {
            guard let (calibration, keys) = try CalibrationReader.read(root, schema: schema, file: file) else { continue }
            let map: DepthMap
            if let depth, schema.depth.contains(depthKey) {
                map = depth
            } else if depth == nil, let node = schema.depth.lazy.compactMap({ root.member($0) }).first {
                map = try CalibrationReader.depthFromTree(node, file: file)
            } else {
                throw RGBDError(.invalidCapture, file: file, location: schema.depth.first,
                                "missing depth map (expected \(schema.depth.joined(separator: " or ")) as rows of meters)")
            }
            return Contents(calibration: calibration, depth: map, schemaName: schema.name, keys: keys)
        }
        let tried = CaptureSchema.all.map { s in
            s.calibrationContainers.map { $0.isEmpty ? s.intrinsicMatrix[0] : "\($0).\(s.intrinsicMatrix[0])" }
                .joined(separator: ", ")
        }.joined(separator: ", ")
        throw RGBDError(.invalidCapture, file: file, "no calibration found (looked for \(tried))")
    }

    /// 1-based line number of a byte offset (clamped to the `count` bytes there are).
    static func line(of offset: Int, base: UnsafePointer<UInt8>, count: Int) -> Int {
        var line = 1
        for i in 0..<min(max(0, offset), count) where base[i] == 0x0A { line += 1 }
        return line
    }

    private static func syntaxError(_ message: String, offset: Int, base: UnsafePointer<UInt8>, count: Int,
                                    file: String) -> RGBDError {
        RGBDError(.invalidJSON, file: file, location: "line \(line(of: offset, base: base, count: count))",
                  "invalid JSON: \(message)")
    }
}
