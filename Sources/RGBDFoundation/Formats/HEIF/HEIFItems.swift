/// The boxes of a HEIF file that say how its primary image is coded, read by rgbd
/// itself so that the common case (an HEVC image, or a grid of HEVC tiles, 8-bit 4:2:0,
/// as cameras write) can be decoded tile-parallel (`HEVCImageDecoder`).
///
/// Anything else (other codecs, more than 8 bits, other chroma formats, data by
/// reference, unusual colour matrices, and any structure this reader does not follow)
/// gives `nil`, and the file goes to libheif as before. The reader only looks: every
/// offset and length is checked against the bytes, and nothing it reads is trusted to
/// fit until checked.
struct HEIFItems {
    /// An HEVC-coded image: its decoder configuration and coded data.
    struct CodedImage {
        /// VPS, SPS and PPS NAL units from `hvcC` (without length prefixes).
        var parameterSets: [ArraySlice<UInt8>]
        /// The item's data: NAL units, each after a big-endian length of `lengthSize` bytes.
        var data: ArraySlice<UInt8>
        var lengthSize: Int
        /// Size from `ispe`.
        var width: Int
        var height: Int
    }

    /// The primary image: tiles in raster order, `columns` per row, cropped to `width` ×
    /// `height` (one tile for a plain image).
    var tiles: [CodedImage]
    var columns: Int
    var width: Int
    var height: Int
    /// Colour matrix (`colr` `nclx` matrix_coefficients) and range of the primary image.
    var matrix: YCbCrMatrix

    /// The plan for `bytes`, or nil when the fast path does not apply (see above).
    package static func primary(of bytes: [UInt8]) -> HEIFItems? {
        try? Reader(bytes).primary()
    }

    /// How the primary image asks to be shown: its `irot` (counterclockwise quarter turns)
    /// and `imir` (mirror) properties, composed in the order they are associated; nil
    /// when the boxes cannot be read.
    static func primaryOrientation(of bytes: [UInt8]) -> PhotoOrientation? {
        try? Reader(bytes).primaryOrientation()
    }
}

/// How Y′CbCr becomes R′G′B′ (ITU-T H.273 matrix coefficients and range).
struct YCbCrMatrix: Equatable {
    /// Luma weights of red and blue.
    var kr: Double
    var kb: Double
    /// Full range (Y 0-255) or limited (Y 16-235, chroma 16-240).
    var fullRange: Bool

    /// What libheif assumes for a file without an `nclx` colour box: BT.601, full range.
    static let unspecified = YCbCrMatrix(kr: 0.299, kb: 0.114, fullRange: true)

    init(kr: Double, kb: Double, fullRange: Bool) {
        self.kr = kr
        self.kb = kb
        self.fullRange = fullRange
    }

    /// The matrix for an `nclx` `matrix_coefficients` value rgbd handles: 1 (BT.709),
    /// 2 (unspecified, as libheif: BT.601), 5 and 6 (BT.601), 9 (BT.2020
    /// non-constant); nil for others.
    init?(coefficients: Int, fullRange: Bool) {
        switch coefficients {
        case 1: (kr, kb) = (0.2126, 0.0722)
        case 2, 5, 6: (kr, kb) = (0.299, 0.114)
        case 9: (kr, kb) = (0.2627, 0.0593)
        default: return nil
        }
        self.fullRange = fullRange
    }
}

private struct Box {
    package var type: String
    /// The payload (after the header).
    var body: ArraySlice<UInt8>
}

private struct Malformed: Error {}

/// Reads big-endian integers from a slice, failing (never trapping) at its end.
private struct Cursor {
    let bytes: ArraySlice<UInt8>
    var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    var remaining: Int { bytes.endIndex - position }

    mutating func uint(_ size: Int) throws -> Int {
        guard size >= 0, size <= 8, remaining >= size else { throw Malformed() }
        var value: UInt64 = 0
        for i in 0..<size { value = value << 8 | UInt64(bytes[position + i]) }
        position += size
        guard value <= UInt64(Int.max) else { throw Malformed() }
        return Int(value)
    }

    mutating func u8() throws -> Int { try uint(1) }
    mutating func u16() throws -> Int { try uint(2) }
    mutating func u32() throws -> Int { try uint(4) }

    mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, remaining >= count else { throw Malformed() }
        defer { position += count }
        return bytes[position..<position + count]
    }

    mutating func fourCC() throws -> String {
        String(decoding: try take(4), as: UTF8.self)
    }

    /// Skips a NUL-terminated string.
    mutating func skipString() throws {
        while try u8() != 0 {}
    }

    /// The boxes from here to the end.
    mutating func boxes() throws -> [Box] {
        var result: [Box] = []
        while remaining > 0 {
            let start = position
            var size = try u32()
            let type = try fourCC()
            if size == 1 {
                size = try uint(8)
            } else if size == 0 {
                size = bytes.endIndex - start
            }
            let header = position - start
            guard size >= header, size - header <= remaining else { throw Malformed() }
            result.append(Box(type: type, body: try take(size - header)))
        }
        return result
    }
}

private struct Reader {
    let bytes: [UInt8]
    /// The largest width or height taken (larger goes to libheif, which refuses it): no
    /// camera comes near, and products of two stay far from overflowing.
    static let maxSide = 1 << 18

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// One item's location: extents as (offset, length) in the file or in `idat`.
    struct Location {
        var inIdat: Bool
        var extents: [(offset: Int, length: Int)]
    }

    package func primary() throws -> HEIFItems? {
        var top = Cursor(bytes[...])
        let boxes = try top.boxes()
        guard let meta = boxes.first(where: { $0.type == "meta" }) else { return nil }
        var metaCursor = Cursor(meta.body)
        _ = try metaCursor.u32()  // version and flags
        let children = try metaCursor.boxes()
        func child(_ type: String) -> Box? { children.first { $0.type == type } }
        guard let pitm = child("pitm"), let iinf = child("iinf"), let iloc = child("iloc"),
              let iprp = child("iprp") else { return nil }

        let primaryID = try readPrimary(pitm)
        let types = try readItemTypes(iinf)
        let locations = try readLocations(iloc)
        let references = try child("iref").map(readReferences) ?? [:]
        let (properties, associations) = try readProperties(iprp)
        let idat = child("idat")?.body

        func data(of item: Int) throws -> ArraySlice<UInt8> {
            guard let location = locations[item], !location.extents.isEmpty else { throw Malformed() }
            let source: ArraySlice<UInt8> = location.inIdat ? (idat ?? []) : bytes[...]
            var pieces: [ArraySlice<UInt8>] = []
            for (offset, length) in location.extents {
                guard offset >= 0, length >= 0, offset <= source.count, length <= source.count - offset else {
                    throw Malformed()
                }
                let start = source.startIndex + offset
                pieces.append(source[start..<start + length])
            }
            if pieces.count == 1 { return pieces[0] }
            return ArraySlice(pieces.joined())
        }
        func property(_ type: String, of item: Int) -> Box? {
            for index in associations[item] ?? [] where index >= 1 && index <= properties.count {
                if properties[index - 1].type == type { return properties[index - 1] }
            }
            return nil
        }
        // `tile`: a grid's tile, which must be shown as coded (no crop, rotation or mirror
        // of its own; those of the image itself are display hints rgbd does not apply).
        func coded(_ item: Int, tile: Bool) throws -> HEIFItems.CodedImage? {
            if tile, ["clap", "irot", "imir"].contains(where: { property($0, of: item) != nil }) { return nil }
            guard types[item] == "hvc1", let hvcC = property("hvcC", of: item),
                  let ispe = property("ispe", of: item), locations[item]?.inIdat == false else { return nil }
            var size = Cursor(ispe.body)
            _ = try size.u32()
            let width = try size.u32(), height = try size.u32()
            guard let config = try readDecoderConfiguration(hvcC), (1...Self.maxSide).contains(width),
                  (1...Self.maxSide).contains(height) else { return nil }
            return HEIFItems.CodedImage(parameterSets: config.parameterSets, data: try data(of: item),
                                        lengthSize: config.lengthSize, width: width, height: height)
        }

        // The colour matrix: the primary item's nclx, else the first tile's, else
        // libheif's assumption; nil for a matrix rgbd does not handle.
        func matrix(_ items: [Int]) throws -> YCbCrMatrix? {
            for item in items {
                guard let colr = property("colr", of: item) else { continue }
                var c = Cursor(colr.body)
                guard try c.fourCC() == "nclx" else { continue }
                _ = try c.u16()  // colour primaries
                _ = try c.u16()  // transfer characteristics
                let coefficients = try c.u16()
                let fullRange = try c.u8() & 0x80 != 0
                return YCbCrMatrix(coefficients: coefficients, fullRange: fullRange)
            }
            return .unspecified
        }

        switch types[primaryID] {
        case "hvc1":
            guard let image = try coded(primaryID, tile: false), let matrix = try matrix([primaryID]) else { return nil }
            return HEIFItems(tiles: [image], columns: 1, width: image.width, height: image.height, matrix: matrix)
        case "grid":
            var grid = Cursor(try data(of: primaryID))
            guard try grid.u8() == 0 else { return nil }  // version
            let flags = try grid.u8()
            let rows = try grid.u8() + 1, columns = try grid.u8() + 1
            let fieldSize = flags & 1 == 0 ? 2 : 4
            let width = try grid.uint(fieldSize), height = try grid.uint(fieldSize)
            guard let tileIDs = references[primaryID], tileIDs.count == rows * columns else { return nil }
            var tiles: [HEIFItems.CodedImage] = []
            for id in tileIDs {
                guard let tile = try coded(id, tile: true) else { return nil }
                tiles.append(tile)
            }
            // Tiles of one size that cover the output, and the output inside them.
            guard let first = tiles.first, (1...Self.maxSide).contains(width), (1...Self.maxSide).contains(height),
                  tiles.allSatisfy({ $0.width == first.width && $0.height == first.height }),
                  first.width * columns >= width, first.height * rows >= height,
                  first.width * (columns - 1) < width, first.height * (rows - 1) < height,
                  let matrix = try matrix([primaryID] + tileIDs.prefix(1)) else { return nil }
            return HEIFItems(tiles: tiles, columns: columns, width: width, height: height, matrix: matrix)
        default:
            return nil
        }
    }

    func primaryOrientation() throws -> PhotoOrientation? {
        var top = Cursor(bytes[...])
        guard let meta = try top.boxes().first(where: { $0.type == "meta" }) else { return nil }
        var metaCursor = Cursor(meta.body)
        _ = try metaCursor.u32()  // version and flags
        let children = try metaCursor.boxes()
        guard let pitm = children.first(where: { $0.type == "pitm" }),
              let iprp = children.first(where: { $0.type == "iprp" }) else { return nil }
        let primaryID = try readPrimary(pitm)
        let (properties, associations) = try readProperties(iprp)
        // The display transform as "turn clockwise, then mirror left-right if `mirrored`".
        var turns = 0, mirrored = false
        for index in associations[primaryID] ?? [] where index >= 1 && index <= properties.count {
            let property = properties[index - 1]
            guard property.type == "irot" || property.type == "imir", let first = property.body.first else { continue }
            if property.type == "irot" {
                // Counterclockwise quarter turns; after a mirror, a turn runs the other way.
                let clockwise = (4 - Int(first & 3)) % 4
                turns += mirrored ? -clockwise : clockwise
            } else if first & 1 == 0 {
                mirrored.toggle()  // about the vertical axis: left-right
            } else {
                // About the horizontal axis: top-bottom, a half turn then left-right.
                turns += mirrored ? -2 : 2
                mirrored.toggle()
            }
        }
        return PhotoOrientation(clockwiseQuarterTurns: turns, mirrored: mirrored)
    }

    private func readPrimary(_ pitm: Box) throws -> Int {
        var c = Cursor(pitm.body)
        let version = try c.u8()
        _ = try c.take(3)
        return version == 0 ? try c.u16() : try c.u32()
    }

    /// Item type per item ID (`infe` version 2 and 3).
    private func readItemTypes(_ iinf: Box) throws -> [Int: String] {
        var c = Cursor(iinf.body)
        let version = try c.u8()
        _ = try c.take(3)
        _ = version == 0 ? try c.u16() : try c.u32()  // entry count
        var types: [Int: String] = [:]
        for infe in try c.boxes() where infe.type == "infe" {
            var e = Cursor(infe.body)
            let infeVersion = try e.u8()
            _ = try e.take(3)
            guard infeVersion >= 2 else { continue }
            let id = infeVersion == 2 ? try e.u16() : try e.u32()
            _ = try e.u16()  // protection index
            types[id] = try e.fourCC()
        }
        return types
    }

    private func readLocations(_ iloc: Box) throws -> [Int: Location] {
        var c = Cursor(iloc.body)
        let version = try c.u8()
        _ = try c.take(3)
        guard version <= 2 else { throw Malformed() }
        let sizes = try c.u8(), more = try c.u8()
        let offsetSize = sizes >> 4, lengthSize = sizes & 15
        let baseOffsetSize = more >> 4, indexSize = version >= 1 ? more & 15 : 0
        let count = version < 2 ? try c.u16() : try c.u32()
        var locations: [Int: Location] = [:]
        for _ in 0..<count {
            let id = version < 2 ? try c.u16() : try c.u32()
            let method = version >= 1 ? try c.u16() & 15 : 0
            let dataReference = try c.u16()
            let base = try c.uint(baseOffsetSize)
            let extentCount = try c.u16()
            var extents: [(Int, Int)] = []
            for _ in 0..<extentCount {
                _ = try c.uint(indexSize)
                let offset = try c.uint(offsetSize), length = try c.uint(lengthSize)
                let (start, overflow) = base.addingReportingOverflow(offset)
                guard !overflow, length > 0 else { throw Malformed() }  // length 0: "to the end", not handled
                extents.append((start, length))
            }
            // Only data in this file (reference 0) at file offsets (0) or in idat (1).
            guard dataReference == 0, method <= 1 else { continue }
            locations[id] = Location(inIdat: method == 1, extents: extents)
        }
        return locations
    }

    /// `dimg` references: the tiles of each grid, in order.
    private func readReferences(_ iref: Box) throws -> [Int: [Int]] {
        var c = Cursor(iref.body)
        let version = try c.u8()
        _ = try c.take(3)
        let idSize = version == 0 ? 2 : 4
        var result: [Int: [Int]] = [:]
        for reference in try c.boxes() where reference.type == "dimg" {
            var r = Cursor(reference.body)
            let from = try r.uint(idSize)
            let count = try r.u16()
            var to: [Int] = []
            for _ in 0..<count { to.append(try r.uint(idSize)) }
            guard result[from] == nil else { throw Malformed() }
            result[from] = to
        }
        return result
    }

    /// The properties (`ipco`, in order) and each item's property indexes (`ipma`, 1-based).
    private func readProperties(_ iprp: Box) throws -> ([Box], [Int: [Int]]) {
        var c = Cursor(iprp.body)
        let children = try c.boxes()
        guard let ipco = children.first(where: { $0.type == "ipco" }) else { throw Malformed() }
        var p = Cursor(ipco.body)
        let properties = try p.boxes()
        var associations: [Int: [Int]] = [:]
        for ipma in children where ipma.type == "ipma" {
            var m = Cursor(ipma.body)
            let version = try m.u8()
            let flags = try m.uint(3)
            let count = try m.u32()
            for _ in 0..<count {
                let id = version < 1 ? try m.u16() : try m.u32()
                let n = try m.u8()
                for _ in 0..<n {
                    let index = flags & 1 != 0 ? try m.u16() & 0x7FFF : try m.u8() & 0x7F
                    associations[id, default: []].append(index)
                }
            }
        }
        return (properties, associations)
    }

    /// The parameter sets and NAL length size of an `hvcC`, or nil unless 8-bit 4:2:0.
    private func readDecoderConfiguration(_ hvcC: Box) throws -> (parameterSets: [ArraySlice<UInt8>], lengthSize: Int)? {
        var c = Cursor(hvcC.body)
        _ = try c.take(16)  // version, profile, compatibility, constraints, level, segmentation, parallelism
        let chromaFormat = try c.u8() & 3
        let lumaBits = (try c.u8() & 7) + 8
        let chromaBits = (try c.u8() & 7) + 8
        _ = try c.u16()  // average frame rate
        let lengthSize = (try c.u8() & 3) + 1
        guard chromaFormat == 1, lumaBits == 8, chromaBits == 8, lengthSize != 3 else { return nil }
        var sets: [ArraySlice<UInt8>] = []
        for _ in 0..<(try c.u8()) {
            _ = try c.u8()  // NAL unit type
            for _ in 0..<(try c.u16()) {
                sets.append(try c.take(try c.u16()))
            }
        }
        return (sets, lengthSize)
    }
}
