import CJSONC

/// Reads the calibration values of one `CaptureSchema` from a json-c tree, accepting the
/// value shapes of docs/format.md, and rejecting anything else with the key named.
enum CalibrationReader {
    /// The calibration and where its keys were, or nil if this schema does not apply:
    /// its intrinsic matrix key is absent, or another required key is (then `missing`
    /// gets that error, if it has none yet, naming the schema).
    static func read(_ root: JSONNode, schema: CaptureSchema, file: String,
                     missing: inout RGBDError?) throws -> (Calibration, CalibrationKeys)? {
        for containerKey in schema.calibrationContainers {
            let container = containerKey.isEmpty ? root : root.member(containerKey)
            guard let container, container.isObject else { continue }
            guard let matrixNode = first(schema.intrinsicMatrix, in: container) else { continue }
            let required: [(keys: [String], split: [CaptureSchema.SplitKeys])] = [
                (schema.referenceDimensions, schema.referenceDimensionsSplit),
                (schema.distortionCenter, schema.distortionCenterSplit), (schema.lookupTable, []),
            ]
            if let absent = required.first(where: { first($0.keys, in: container) == nil && split($0.split, in: container) == nil }) {
                if missing == nil {
                    let path = container.path.isEmpty ? absent.keys[0] : "\(container.path).\(absent.keys[0])"
                    let names = absent.keys + absent.split.map { "\($0.first) and \($0.second)" }
                    missing = RGBDError(.invalidCapture, file: file, location: path,
                                        "missing (\(schema.name) schema, whose \(matrixNode.path) is there: looked for \(names.joined(separator: " or ")))")
                }
                continue
            }
            return try read(container: container, matrixNode: matrixNode, schema: schema, file: file)
        }
        return nil
    }

    /// The two nodes of the first split pair present in `container`.
    private static func split(_ keys: [CaptureSchema.SplitKeys], in container: JSONNode) -> (JSONNode, JSONNode)? {
        for pair in keys {
            if let a = container.member(pair.first), let b = container.member(pair.second) { return (a, b) }
        }
        return nil
    }

    private static func read(container: JSONNode, matrixNode: JSONNode, schema: CaptureSchema,
                             file: String) throws -> (Calibration, CalibrationKeys) {
        func fail(_ node: JSONNode, _ message: String) -> RGBDError {
            RGBDError(.invalidCapture, file: file, location: node.path, message)
        }
        func required(_ keys: [String]) throws -> JSONNode {
            if let node = first(keys, in: container) { return node }
            let path = container.path.isEmpty ? keys[0] : "\(container.path).\(keys[0])"
            throw RGBDError(.invalidCapture, file: file, location: path, "missing (\(schema.name) schema)")
        }
        /// A pair from one key, else from two (`…_width`, `…_height`); the node named in messages.
        func pairValue(_ keys: [String], _ splitKeys: [CaptureSchema.SplitKeys],
                       names: (String, String)) throws -> (JSONNode, Double, Double) {
            if first(keys, in: container) == nil, let (a, b) = split(splitKeys, in: container) {
                guard let x = a.number, x.isFinite else { throw fail(a, "expected a number, found \(a.typeName)") }
                guard let y = b.number, y.isFinite else { throw fail(b, "expected a number, found \(b.typeName)") }
                return (a, x, y)
            }
            let node = try required(keys)
            let (x, y) = try pair(node, names: names, fail: fail)
            return (node, x, y)
        }

        let (fx, fy, cx, cy) = try matrix(matrixNode, fail: fail)
        let (sizeNode, width, height) = try pairValue(schema.referenceDimensions, schema.referenceDimensionsSplit,
                                                      names: ("width", "height"))
        guard Calibration.isImageDimension(width), Calibration.isImageDimension(height) else {
            throw fail(sizeNode, "expected positive whole numbers [width, height], found [\(width), \(height)]")
        }
        let (centerNode, ox, oy) = try pairValue(schema.distortionCenter, schema.distortionCenterSplit,
                                                 names: ("x", "y"))
        guard LensDistortion.isPlausibleCenter(SIMD2(ox, oy), width: Int(width), height: Int(height)) else {
            throw fail(centerNode, "(\(ox), \(oy)) is far outside the \(Int(width))×\(Int(height)) reference image")
        }
        let tableNode = try required(schema.lookupTable)
        let table = try lookupTable(tableNode, fail: fail)
        guard table.count >= LensDistortion.minimumTableCount else {
            throw fail(tableNode, "needs at least 2 entries, found \(table.count)")
        }
        var inverse: [Float] = []
        if let inverseNode = first(schema.inverseLookupTable, in: container) {
            inverse = try lookupTable(inverseNode, fail: fail)
            if inverse.count == 1 { throw fail(inverseNode, "needs at least 2 entries (or none), found 1") }
        }
        var pixelSize: Double? = nil
        if let node = first(schema.pixelSize, in: container) {
            guard let value = node.number, value.isFinite, value > 0 else {
                throw fail(node, "expected a positive number of millimeters, found \(node.typeName)")
            }
            pixelSize = value
        }
        let pixelSizeNode = first(schema.pixelSize, in: container)
        if let (value, message) = CalibrationPlausibility.problem(
            fx: fx, fy: fy, cx: cx, cy: cy, width: Int(width), height: Int(height),
            distortionCenter: SIMD2(ox, oy), pixelSize: pixelSize) {
            switch value {
            case .focalLengths, .principalPoint: throw fail(matrixNode, message)
            case .distortionCenter: throw fail(centerNode, message)
            case .pixelSize: throw fail(pixelSizeNode ?? matrixNode, message)
            }
        }
        let intrinsics = Intrinsics(fx: fx, fy: fy, cx: cx, cy: cy, width: Int(width), height: Int(height))
        let calibration = Calibration(intrinsics: intrinsics, pixelSize: pixelSize, distortionCenter: SIMD2(ox, oy),
                                      lookupTable: table, inverseLookupTable: inverse)
        return (calibration, CalibrationKeys(intrinsicMatrix: matrixNode.path, referenceDimensions: sizeNode.path))
    }

    private static func first(_ keys: [String], in container: JSONNode) -> JSONNode? {
        for key in keys { if let node = container.member(key) { return node } }
        return nil
    }

    /// `fx, fy, cx, cy` from a 3×3 matrix given as 3 arrays of 3 (columns or rows) or as 9
    /// numbers. The layout is told by where `0, 0, 1` is: the last inner array (rows) or
    /// the last element of every inner array (columns, simd's `[column][row]`).
    static func matrix(_ node: JSONNode, fail: (JSONNode, String) -> RGBDError) throws -> (Double, Double, Double, Double) {
        guard let elements = node.elements else { throw fail(node, "expected a 3×3 matrix, found \(node.typeName)") }
        var m = [[Double]]()
        if elements.count == 9 {
            let flat = try elements.map { try finiteNumber($0, fail: fail) }
            m = [Array(flat[0..<3]), Array(flat[3..<6]), Array(flat[6..<9])]
        } else if elements.count == 3 {
            m = try elements.map { inner in
                guard let values = inner.elements, values.count == 3 else {
                    throw fail(inner, "expected 3 numbers (a matrix row or column)")
                }
                return try values.map { try finiteNumber($0, fail: fail) }
            }
        } else {
            throw fail(node, "expected a 3×3 matrix (3 arrays of 3, or 9 numbers), found \(elements.count == 1 ? "1 element" : "\(elements.count) elements")")
        }
        guard let entries = Intrinsics.matrixEntries(m.flatMap { $0 }) else {
            throw fail(node, "not an intrinsic matrix: no 0, 0, 1 row or column")
        }
        let (fx, fy, cx, cy, skew, lower) = (entries.fx, entries.fy, entries.cx, entries.cy, entries.skew, entries.lower)
        guard fx > 0, fy > 0 else { throw fail(node, "focal lengths must be positive (fx = \(fx), fy = \(fy))") }
        guard lower == 0 else { throw fail(node, "not an upper-triangular intrinsic matrix") }
        guard skew == 0 else { throw fail(node, "skewed intrinsic matrices (skew = \(skew)) are not supported") }
        return (fx, fy, cx, cy)
    }

    /// Two numbers given as `[a, b]` or `{"<first>": a, "<second>": b}` (the names may
    /// also be capitalized: `{"Width", "Height"}`, `{"X", "Y"}`).
    static func pair(_ node: JSONNode, names: (String, String), fail: (JSONNode, String) -> RGBDError) throws -> (Double, Double) {
        if let elements = node.elements {
            guard elements.count == 2 else {
                throw fail(node, "expected [\(names.0), \(names.1)] as 2 numbers, found \(elements.count == 1 ? "1 element" : "\(elements.count) elements")")
            }
            return (try finiteNumber(elements[0], fail: fail), try finiteNumber(elements[1], fail: fail))
        }
        if node.isObject {
            func capitalized(_ name: String) -> String { name.prefix(1).uppercased() + name.dropFirst() }
            let a = (node.member(names.0) ?? node.member(capitalized(names.0)))?.number
            let b = (node.member(names.1) ?? node.member(capitalized(names.1)))?.number
            guard let a, let b, a.isFinite, b.isFinite else {
                throw fail(node, "expected {\"\(names.0)\": number, \"\(names.1)\": number}")
            }
            return (a, b)
        }
        throw fail(node, "expected [\(names.0), \(names.1)], found \(node.typeName)")
    }

    /// The value of an array element that must be a finite number; the error names the
    /// element by its path (`lens_distortion_center[0]`) and says what it is instead.
    static func finiteNumber(_ e: JSONNode, fail: (JSONNode, String) -> RGBDError) throws -> Double {
        guard let v = e.number else { throw fail(e, "expected a number, found \(e.typeName)") }
        guard v.isFinite else { throw fail(e, "expected a finite number, found \(e.typeName)") }
        return v
    }

    /// A lookup table: finite magnifications greater than −1 (an empty array is allowed
    /// here; callers check the length), as an array of numbers or a base64 string of
    /// little-endian float32 (as Swift's `JSONEncoder` writes `Data`). A bad entry is
    /// named by its index (`lens_distortion_lookup_table[3]: expected a number, found null`).
    static func lookupTable(_ node: JSONNode, fail: (JSONNode, String) -> RGBDError) throws -> [Float] {
        if let text = node.string {
            let values: [Float]
            do {
                values = try Base64.float32LittleEndian(Array(text.utf8), escapedSlashes: false)
            } catch {
                throw fail(node, "expected an array of numbers or base64 float32: \(error.message)")
            }
            for (i, v) in values.enumerated() where !LensDistortion.isPlausibleMagnification(Double(v)) {
                throw fail(node, "magnification \(v) (float \(i) of the base64 data) is out of range (−1, 10)")
            }
            return values
        }
        guard let elements = node.elements else { throw fail(node, "expected an array of numbers, found \(node.typeName)") }
        return try elements.map { e in
            guard let v = e.number else { throw fail(e, "expected a number, found \(e.typeName)") }
            guard v.isFinite else { throw fail(e, "expected a finite number, found \(e.typeName)") }
            guard LensDistortion.isPlausibleMagnification(v) else { throw fail(e, "magnification \(v) is out of range (−1, 10)") }
            return Float(v)
        }
    }

    /// A depth map from the json-c tree (used only when the fast reader was not); values
    /// as written (`DepthDiscards.sanitize` turns the markers of missing depth into NaN).
    static func depthFromTree(_ node: JSONNode, file: String) throws -> DepthMap {
        func fail(_ n: JSONNode, _ message: String) -> RGBDError {
            RGBDError(.invalidCapture, file: file, location: n.path, message)
        }
        guard let rows = node.elements else { throw fail(node, "expected an array of rows, found \(node.typeName)") }
        guard !rows.isEmpty else { throw fail(node, "the depth map is empty") }
        var values: [Float] = []
        var width = -1
        for (r, rowNode) in rows.enumerated() {
            guard let count = rowNode.count else { throw fail(rowNode, "row \(r): expected an array of numbers") }
            if width < 0 {
                guard count > 0 else { throw fail(rowNode, "row 0 is empty") }
                width = count
                values.reserveCapacity(width * rows.count)
            } else if count != width {
                throw fail(node, "row \(r) has \(count) values, but row 0 has \(width) (ragged depth rows)")
            }
            for c in 0..<count {
                guard let e = rowNode.element(at: c), e.type != json_type_null else { values.append(.nan); continue }
                guard let v = e.number else { throw fail(e, "row \(r), column \(c): expected a number, found \(e.typeName)") }
                values.append(Float(v))
            }
        }
        return DepthMap(width: width, height: rows.count, channels: 1, samples: values)
    }
}
