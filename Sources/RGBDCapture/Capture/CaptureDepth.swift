/// How a capture's depth is read, beyond the calibration: the reading options.
public struct CaptureReadingOptions: Sendable, Equatable {
    /// The default physical maximum: far beyond any iPhone depth sensor's range (a few
    /// meters for TrueDepth and LiDAR), and below the markers exporters write for "no
    /// depth" (such as 9999).
    public static let defaultMaxValidDepth: Float = 1000

    /// Depths beyond this many meters are no depth (counted and reported as discarded).
    public var maxValidDepth: Float

    /// Options with the given physical maximum (meters).
    public init(maxValidDepth: Float = CaptureReadingOptions.defaultMaxValidDepth) {
        self.maxValidDepth = maxValidDepth
    }
}

/// Where a capture's depth map came from, for messages and `rgbd info`.
package struct DepthSource: Sendable, Equatable, CustomStringConvertible {
    /// The encoding the depth was read from.
    package enum Kind: String, Sendable {
        /// Rows of meters in the JSON (`[[…], […]]`).
        case rows
        /// One flat array of meters in the JSON, with its width and height given by keys.
        case flatArray
        /// A base64 string of little-endian float32 meters in the JSON, with its size by keys.
        case base64Float32
        /// A 16-bit grayscale PNG of millimeters (0 = no depth).
        case png16Millimeters
        /// A single-channel float32 TIFF of meters.
        case tiffFloat32Meters
        /// The depth image of a Portrait HEIC (with Apple's depth XMP).
        case portraitHEIC
        /// The depth image of a Portrait JPEG, listed by its MPF index (with Apple's depth XMP).
        case portraitJPEG
    }

    /// The encoding.
    package var kind: Kind
    /// The JSON key the depth map (or the depth image's name) was found under; nil for an
    /// image found beside the JSON.
    package var key: String?
    /// The depth image's path; nil when the depth map is in the JSON.
    package var path: String?
    /// The keys that gave a flat map's width and height (`depth_width, depth_height`).
    package var sizeKeys: String?

    /// One phrase, such as `shot.depth.png beside the JSON (16-bit PNG, millimeters)`.
    package var description: String {
        switch kind {
        case .rows:
            return "\(key ?? "depth") (rows of meters in the JSON)"
        case .flatArray:
            return "\(key ?? "depth") (flat array of meters in the JSON, size from \(sizeKeys ?? "?"))"
        case .base64Float32:
            return "\(key ?? "depth") (base64 float32 meters in the JSON, size from \(sizeKeys ?? "?"))"
        case .png16Millimeters, .tiffFloat32Meters:
            let what = kind == .png16Millimeters ? "16-bit PNG, millimeters" : "float32 TIFF, meters"
            let whence = key.map { "named by \($0)" } ?? "beside the JSON"
            return "\(path ?? "?") \(whence) (\(what))"
        case .portraitHEIC, .portraitJPEG:
            return "\(key ?? "depth image") of the photo (Portrait XMP)"
        }
    }
}

/// Depth pixels read as "no depth", counted by how the exporter marked them.
package struct DepthDiscards: Sendable, Equatable {
    /// `0` (or `-0`): the usual marker, also of 16-bit PNGs.
    package var zero = 0
    /// Negative values (`-1.0` is one app's NaN), including `-Infinity`.
    package var negative = 0
    /// `null`, `NaN` (or NaN in a TIFF).
    package var notANumber = 0
    /// Values beyond the physical maximum (`9999.0` markers, `Infinity`, overflowing numbers).
    package var beyondMaximum = 0
    /// The physical maximum applied, meters.
    package var maxValidDepth: Float = CaptureReadingOptions.defaultMaxValidDepth
    /// The most negative value discarded, if any.
    package var mostNegative: Float?
    /// The largest value discarded as beyond the maximum, if any.
    package var largest: Float?

    /// Every discarded pixel.
    package var total: Int { zero + negative + notANumber + beyondMaximum }

    /// The warning for the unusual markers (negatives and depths beyond the maximum),
    /// naming `file`; nil when there were none (zeros and NaN are the normal holes).
    package func warning(file: String) -> String? {
        var parts: [String] = []
        if negative > 0 {
            let example = mostNegative.map { " (down to \(DepthDiscards.format($0)) m)" } ?? ""
            parts.append("\(negative) negative depth pixel\(negative == 1 ? "" : "s")\(example)")
        }
        if beyondMaximum > 0 {
            let example = largest.map { " (up to \(DepthDiscards.format($0)) m)" } ?? ""
            parts.append("\(beyondMaximum) depth pixel\(beyondMaximum == 1 ? "" : "s") beyond \(DepthDiscards.format(maxValidDepth)) m\(example)")
        }
        guard !parts.isEmpty else { return nil }
        return "\(file): \(parts.joined(separator: " and ")) discarded as no depth"
    }

    static func format(_ value: Float) -> String {
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        let d = Double(value)
        return d == d.rounded() && abs(d) < 1e15 ? "\(Int(d))" : "\(value)"
    }

    /// Replaces every value that is not a depth in `(0, maxValidDepth]` by NaN, counting
    /// what was replaced.
    static func sanitize(_ samples: inout [Float], maxValidDepth: Float) -> DepthDiscards {
        var discards = DepthDiscards(maxValidDepth: maxValidDepth)
        samples.withUnsafeMutableBufferPointer { values in
            for i in values.indices {
                let v = values[i]
                if v > 0 && v <= maxValidDepth { continue }
                if v.isNaN {
                    discards.notANumber += 1
                } else if v == 0 {
                    discards.zero += 1
                } else if v < 0 {
                    discards.negative += 1
                    discards.mostNegative = min(discards.mostNegative ?? v, v)
                } else {
                    discards.beyondMaximum += 1
                    discards.largest = max(discards.largest ?? v, v)
                }
                values[i] = .nan
            }
        }
        return discards
    }
}

/// Finds a capture's depth map once its schema is known, by the precedence of
/// docs/format.md: a depth map in the JSON (rows, flat array or base64), else a depth
/// image named by a key, else `NAME.depth.tiff`, `.tif` or `.png` beside the JSON.
package enum CaptureDepth {
    /// A depth member the fast reader took from the bytes.
    struct Inline {
        var map: DepthMap
        var key: String
        var layout: DepthArrayParser.Layout
    }

    /// The depth map (sanitized: NaN = no depth), where it came from and what was discarded.
    static func resolve(root: JSONNode, schema: CaptureSchema, inline: Inline?, file: String, jsonPath: String?,
                        options: CaptureReadingOptions) throws -> (DepthMap, DepthSource, DepthDiscards) {
        var (map, source) = try find(root: root, schema: schema, inline: inline, file: file, jsonPath: jsonPath)
        let discards = DepthDiscards.sanitize(&map.samples, maxValidDepth: options.maxValidDepth)
        return (map, source, discards)
    }

    private static func find(root: JSONNode, schema: CaptureSchema, inline: Inline?, file: String,
                             jsonPath: String?) throws -> (DepthMap, DepthSource) {
        if let inline, schema.depth.contains(inline.key) {
            return try shaped(inline.map, layout: inline.layout, key: inline.key, root: root, schema: schema, file: file)
        }
        if inline == nil, let node = schema.depth.lazy.compactMap({ root.member($0) }).first {
            let (map, layout) = try fromTree(node, file: file)
            return try shaped(map, layout: layout, key: node.path, root: root, schema: schema, file: file)
        }
        let depthKeys = schema.depth.joined(separator: " or ")
        if inline == nil, let node = schema.depthFile.lazy.compactMap({ root.member($0) }).first {
            guard let name = node.string, !name.isEmpty else {
                throw RGBDError(.invalidCapture, file: file, location: node.path,
                                "expected the name of a depth image (a string), found \(node.typeName)")
            }
            guard let jsonPath else {
                throw RGBDError(.invalidCapture, file: file, location: node.path,
                                "names the depth image \(name), but the capture was given as bytes, not read from a file")
            }
            let path = name.hasPrefix("/") ? name : Path.join(Path.directory(of: jsonPath), name)
            guard FileSystem.exists(path) else {
                throw RGBDError(.io, file: file, location: node.path, "names the depth image \(path), which does not exist")
            }
            return try readImage(path: path, key: node.path)
        }
        if inline == nil, let jsonPath, let path = besidePath(json: jsonPath) {
            return try readImage(path: path, key: nil)
        }
        let stem = jsonPath.map { Path.stem($0) } ?? "NAME"
        let beside = jsonPath == nil ? "" : ", or \(stem).depth.png / \(stem).depth.tiff beside the JSON"
        throw RGBDError(.invalidCapture, file: file, location: schema.depth.first,
                        "missing depth map (\(schema.name) schema: expected \(depthKeys) in the JSON, a \(schema.depthFile.first ?? "depth_file") key naming a depth image\(beside))")
    }

    /// The depth image beside a capture JSON: `STEM.depth.tiff`, `.tif`, then `.png`
    /// (extensions in any case), nil if there is none.
    static func besidePath(json: String) -> String? {
        let directory = Path.directory(of: json)
        let prefix = Path.stem(json) + ".depth."
        let names = (try? FileSystem.contentsOfDirectory(directory)) ?? []
        for ext in ["tiff", "tif", "png"] {
            if let name = names.first(where: { $0.hasPrefix(prefix) && $0.dropFirst(prefix.count).lowercased() == ext }) {
                return directory == "." && !json.hasPrefix("./") ? name : Path.join(directory, name)
            }
        }
        return nil
    }

    /// A flat map given its width and height from the schema's size keys (top level, then
    /// the calibration's object); rows as they are.
    private static func shaped(_ map: DepthMap, layout: DepthArrayParser.Layout, key: String, root: JSONNode,
                               schema: CaptureSchema, file: String) throws -> (DepthMap, DepthSource) {
        guard layout != .rows else { return (map, DepthSource(kind: .rows, key: key)) }
        let kind: DepthSource.Kind = layout == .flat ? .flatArray : .base64Float32
        let count = map.samples.count
        let containers = [root] + schema.calibrationContainers.compactMap { $0.isEmpty ? nil : root.member($0) }
        for keys in schema.depthSize {
            for container in containers {
                guard let wNode = container.member(keys.first), let hNode = container.member(keys.second) else { continue }
                guard let w = wNode.number, let h = hNode.number, Calibration.isImageDimension(w),
                      Calibration.isImageDimension(h) else {
                    throw RGBDError(.invalidCapture, file: file, location: wNode.path,
                                    "expected positive whole numbers for \(keys.first) and \(keys.second)")
                }
                let (width, height) = (Int(w), Int(h))
                guard width * height == count else {
                    throw RGBDError(.invalidCapture, file: file, location: key,
                                    "holds \(count) depths, but \(wNode.path) × \(hNode.path) is \(width) × \(height) = \(width * height)")
                }
                let sizeKeys = "\(wNode.path), \(hNode.path)"
                return (DepthMap(width: width, height: height, channels: 1, samples: map.samples),
                        DepthSource(kind: kind, key: key, sizeKeys: sizeKeys))
            }
        }
        let names = schema.depthSize.map { "\($0.first) and \($0.second)" }.joined(separator: ", or ")
        let what = layout == .flat ? "a flat array" : "a base64 float32 string"
        throw RGBDError(.invalidCapture, file: file, location: key,
                        "\(what) of \(count) depths needs its width and height in the JSON (\(names))")
    }

    /// A depth member from the json-c tree (used only when the fast reader was not):
    /// rows, a flat array or a base64 string; values as written (not yet sanitized).
    static func fromTree(_ node: JSONNode, file: String) throws -> (DepthMap, DepthArrayParser.Layout) {
        if let text = node.string {
            let floats: [Float]
            do {
                floats = try Base64.float32LittleEndian(Array(text.utf8), escapedSlashes: false)
            } catch {
                throw RGBDError(.invalidCapture, file: file, location: node.path, error.message)
            }
            guard !floats.isEmpty else {
                throw RGBDError(.invalidCapture, file: file, location: node.path, "the depth map is empty")
            }
            return (DepthMap(width: floats.count, height: 1, channels: 1, samples: floats), .base64)
        }
        if let count = node.count, count > 0, node.element(at: 0)?.count == nil {
            var values: [Float] = []
            values.reserveCapacity(count)
            for c in 0..<count {
                guard let e = node.element(at: c), !e.isNull else { values.append(.nan); continue }
                guard let v = e.number else {
                    throw RGBDError(.invalidCapture, file: file, location: e.path, "expected a number, found \(e.typeName)")
                }
                values.append(Float(v))
            }
            return (DepthMap(width: count, height: 1, channels: 1, samples: values), .flat)
        }
        return (try CalibrationReader.depthFromTree(node, file: file), .rows)
    }

    /// A depth image, told by its content: a 16-bit grayscale PNG of millimeters or a
    /// float32 TIFF of meters. Values as stored (not yet sanitized).
    package static func readImage(path: String, key: String?) throws -> (DepthMap, DepthSource) {
        let bytes = try FileSystem.readFile(path)
        let format = FileFormat(bytes: bytes)
        if format == .png {
            guard bytes.count > 26 else { throw RGBDError(.invalidImage, file: path, "truncated PNG") }
            let (bitDepth, colorType) = (bytes[24], bytes[25])
            guard bitDepth == 16, colorType == 0 else {
                let type = [0: "grayscale", 2: "RGB", 3: "palette", 4: "gray+alpha", 6: "RGBA"][Int(colorType)] ?? "type \(colorType)"
                throw RGBDError(.invalidImage, file: path,
                                "a depth PNG must be 16-bit grayscale (millimeters, 0 = no depth); this one is \(bitDepth)-bit \(type)")
            }
            let millimeters = try PNGCodec.decodeGray16(bytes, file: path)
            let meters = millimeters.samples.map { Float($0) / 1000 }
            return (DepthMap(width: millimeters.width, height: millimeters.height, channels: 1, samples: meters),
                    DepthSource(kind: .png16Millimeters, key: key, path: path))
        }
        if format == .tiff {
            let map = try TIFFCodec.readFloat(bytes, file: path)
            return (map, DepthSource(kind: .tiffFloat32Meters, key: key, path: path))
        }
        throw RGBDError(.invalidImage, file: path,
                        "not a depth image: expected a 16-bit PNG of millimeters or a float32 TIFF of meters")
    }
}

extension Capture {
    /// The depth image beside a capture JSON that is read when the JSON holds no depth
    /// map: `NAME.depth.tiff`, `NAME.depth.tif`, then `NAME.depth.png` (extensions in any
    /// case); nil if there is none.
    package static func depthImagePath(besideJSON json: String) -> String? {
        CaptureDepth.besidePath(json: json)
    }

    /// The depth image capture `json` reads, decided from the JSON's top-level keys
    /// without parsing its depth map: none when the JSON holds a depth map (a
    /// `NAME.depth.tiff` beside it is then not an input, but maybe rgbd's own output of
    /// an earlier run), the one a depth-file key (`depth_file`, ...) names, else the one
    /// beside it (`depthImagePath(besideJSON:)`). A Portrait photo (a photo by content or
    /// name) holds its depth image and reads none. A JSON that cannot be read or scanned
    /// is taken to read the one beside it, if any.
    package static func depthImageRead(byJSON json: String) -> String? {
        if FileFormat(path: json)?.isPhoto ?? FileFormat.isNamedLikePhoto(json) { return nil }
        guard let bytes = try? FileSystem.readFile(json) else { return depthImagePath(besideJSON: json) }
        var holdsDepth = false
        var namesFile = false
        let scanned: Bool = bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return false }
            let scanner = JSONTopLevelScanner(base: base, end: buffer.count)
            return (try? scanner.walk { member in
                if CaptureSchema.allDepthKeys.contains(member.key) { holdsDepth = true }
                if CaptureSchema.allDepthFileKeys.contains(member.key) { namesFile = true }
                return nil
            }) ?? false
        }
        guard scanned else { return depthImagePath(besideJSON: json) }
        if holdsDepth { return nil }
        if namesFile {
            // A JSON that names its depth image holds no depth map: small, parsed whole.
            let name: String? = bytes.withUnsafeBufferPointer { buffer in
                guard case .success(let document) = JSONDocument.parse(buffer) else { return nil }
                return CaptureSchema.allDepthFileKeys.sorted().lazy.compactMap { document.rootNode.member($0)?.string }.first
            }
            if let name, !name.isEmpty {
                return name.hasPrefix("/") ? name : Path.join(Path.directory(of: json), name)
            }
        }
        return depthImagePath(besideJSON: json)
    }
}
