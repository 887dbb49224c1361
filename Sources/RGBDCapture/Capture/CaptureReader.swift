/// Reads a capture JSON (calibration and depth map) as docs/format.md describes.
///
/// The depth map goes through `DepthArrayParser` straight from the bytes; the rest of
/// the document (the calibration, a few kilobytes) is parsed by json-c with the depth
/// value replaced by `null`. If the quick top-level walk cannot make sense of the file,
/// json-c parses all of it, so its error message is the one reported. Keys mean what
/// json-c reads (escapes decoded) in both, and a key repeated in an object, however it
/// is spelled, is an error (`JSONTopLevelScanner`).
package enum CaptureReader {
    /// What a capture JSON holds.
    package struct Contents: Sendable {
        /// The calibration at its reference dimensions.
        package var calibration: Calibration
        /// The depth map as captured (distorted), meters, NaN = no depth.
        package var depth: DepthMap
        /// The schema that matched.
        package var schemaName: String
        /// Where the calibration's keys were in the file, for messages.
        package var keys = CalibrationKeys()
        /// Where the depth map came from (a key of the JSON, or a depth image).
        package var depthSource = DepthSource(kind: .rows)
        /// The depth pixels read as no depth, by marker (they are NaN in `depth`).
        package var discarded = DepthDiscards()
        /// What only some sources carry (a Portrait photo's depth metadata and matte).
        package var metadata = CaptureMetadata()

        /// The warning about unusual no-depth markers (negatives, depths beyond the
        /// maximum), naming the file they were in; nil if there were none.
        package func discardWarning(json: String) -> String? {
            discarded.warning(file: depthSource.path ?? json)
        }
    }

    /// Reads and parses a capture JSON file; a JSON without a depth map takes its depth
    /// from the image it names or the one beside it (docs/format.md).
    package static func read(path: String, options: CaptureReadingOptions = CaptureReadingOptions()) throws -> Contents {
        let bytes = try FileSystem.readFile(path)
        return try parse(bytes, file: path, jsonPath: path, options: options)
    }

    /// Parses the bytes of a capture JSON; `file` names it in errors. The depth map must
    /// be in the JSON (no file is read).
    package static func parse(_ bytes: [UInt8], file: String, options: CaptureReadingOptions = CaptureReadingOptions()) throws -> Contents {
        try parse(bytes, file: file, jsonPath: nil, options: options)
    }

    private static func parse(_ bytes: [UInt8], file: String, jsonPath: String?, options: CaptureReadingOptions) throws -> Contents {
        try bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else {
                throw RGBDError(.invalidJSON, file: file, "the file is empty")
            }
            return try parse(base: base, count: buffer.count, file: file, jsonPath: jsonPath, options: options)
        }
    }

    private static func parse(base: UnsafePointer<UInt8>, count: Int, file: String, jsonPath: String?,
                              options: CaptureReadingOptions) throws -> Contents {
        var depth: DepthMap? = nil
        var depthLayout = DepthArrayParser.Layout.rows
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
                    let (map, end, layout) = try parser.parseAny(at: member.valueStart)
                    depth = map
                    depthLayout = layout
                    depthKey = member.key
                    depthSpan = member.valueStart..<end
                    return end
                } catch let error as DepthArrayParser.Failure {
                    let location = "line \(line(of: error.offset, base: base, count: count))"
                    // A file cut short in its depth map (the data ends, or no ']' follows to
                    // close the array) is not valid JSON, as one cut anywhere else is.
                    let rest = UnsafeBufferPointer(start: base + min(error.offset, count), count: count - min(error.offset, count))
                    if error.cutShort || !rest.contains(0x5D) {
                        throw RGBDError(.invalidJSON, file: file, location: location, "invalid JSON, cut short: \(error.message)")
                    }
                    throw RGBDError(.invalidCapture, file: file, location: location, error.message)
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
        var missing: RGBDError? = nil
        for schema in CaptureSchema.all {
            guard let (calibration, keys) = try CalibrationReader.read(root, schema: schema, file: file,
                                                                      missing: &missing) else { continue }
            let inline = depth.map { CaptureDepth.Inline(map: $0, key: depthKey, layout: depthLayout) }
            let (map, source, discarded) = try CaptureDepth.resolve(root: root, schema: schema, inline: inline, file: file,
                                                                    jsonPath: jsonPath, options: options)
            return Contents(calibration: calibration, depth: map, schemaName: schema.name, keys: keys,
                            depthSource: source, discarded: discarded)
        }
        if let missing { throw missing }
        var tried: [String] = []
        for s in CaptureSchema.all {
            for container in s.calibrationContainers {
                let key = container.isEmpty ? s.intrinsicMatrix[0] : "\(container).\(s.intrinsicMatrix[0])"
                if !tried.contains(key) { tried.append(key) }
            }
        }
        throw RGBDError(.invalidCapture, file: file, "no calibration found (looked for \(tried.joined(separator: ", ")))")
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
