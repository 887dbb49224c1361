/// Writes point clouds as LAS 1.4 (ASPRS R15), point data record format 7 (coordinates,
/// RGB): integer coordinates with a per-file scale (0.1 mm) and offset (the points' minimum,
/// rounded down to a meter), colors as 16-bit (8-bit values × 257), one return per point,
/// and, when given, the coordinate system as OGC WKT in a `LASF_Projection` VLR (record
/// 2112) with the header's WKT bit set. laspy, PDAL, QGIS and CloudCompare read it.
package enum LASWriter {
    /// Coordinate resolution, meters.
    package static let scale = 0.0001

    /// The file's bytes for `count` points (`positions`: 3 doubles each, meters in the file's
    /// frame; `colors`: 3 bytes each, or nil for white) and an optional WKT coordinate
    /// system.
    ///
    /// - Throws: `RGBDError` when a coordinate lies beyond what 32-bit integers at this scale
    ///   hold around the offset (±214 km).
    package static func bytes(positions: [Double], colors: [UInt8]?, wkt: String?) throws -> [UInt8] {
        let count = positions.count / 3
        guard positions.count == count * 3, colors.map({ $0.count == count * 3 }) ?? true else {
            throw RGBDError(.invalidArgument, "positions and colors must hold 3 values per point")
        }
        var low = SIMD3<Double>(repeating: .infinity), high = SIMD3<Double>(repeating: -.infinity)
        for i in 0..<count {
            let p = SIMD3(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2])
            guard p.x.isFinite, p.y.isFinite, p.z.isFinite else {
                throw RGBDError(.invalidArgument, "point \(i) is not finite")
            }
            low = pointwiseMin(low, p)
            high = pointwiseMax(high, p)
        }
        if count == 0 { low = .zero; high = .zero }
        let offset = low.rounded(.down)
        let limit = Double(Int32.max) * scale
        guard (high - offset).max() < limit else {
            throw RGBDError(.invalidArgument, "the points span more than \(Int(limit)) m from their minimum; LAS's 32-bit coordinates at \(scale) m cannot hold them")
        }

        var out = ByteWriter()
        let vlr: [UInt8]? = wkt.map { Array($0.utf8) + [0] }
        let vlrSize = vlr.map { 54 + $0.count } ?? 0
        // The public header block (375 bytes).
        out.bytes(Array("LASF".utf8))
        out.u16(0)                                   // file source ID
        out.u16(1 << 4)                              // global encoding: the CRS is WKT
        out.bytes([UInt8](repeating: 0, count: 16))  // project GUID
        out.u8(1); out.u8(4)                         // version 1.4
        out.text("rgbd", 32)                         // system identifier
        out.text("rgbd \(RGBDVersion.string)", 32)   // generating software
        out.u16(1); out.u16(2026)                    // creation day of year, year (fixed: reproducible files)
        out.u16(375)                                 // header size
        out.u32(UInt32(375 + vlrSize))               // offset to point data
        out.u32(vlr == nil ? 0 : 1)                  // number of VLRs
        out.u8(7)                                    // point data record format
        out.u16(36)                                  // point data record length
        out.u32(0)                                   // legacy point count (0 for formats 6–10)
        for _ in 0..<5 { out.u32(0) }                // legacy points by return
        for _ in 0..<3 { out.f64(scale) }
        out.f64(offset.x); out.f64(offset.y); out.f64(offset.z)
        out.f64(high.x); out.f64(low.x); out.f64(high.y); out.f64(low.y); out.f64(high.z); out.f64(low.z)
        out.u64(0)                                   // start of waveform data
        out.u64(0)                                   // start of the first EVLR
        out.u32(0)                                   // number of EVLRs
        out.u64(UInt64(count))                       // number of point records
        out.u64(UInt64(count))                       // points by return: all first returns
        for _ in 1..<15 { out.u64(0) }
        if let vlr {
            out.u16(0)
            out.text("LASF_Projection", 16)
            out.u16(2112)
            out.u16(UInt16(clamping: vlr.count))
            out.text("OGC coordinate system WKT", 32)
            out.bytes(vlr)
        }
        for i in 0..<count {
            for axis in 0..<3 {
                out.i32(Int32(((positions[3 * i + axis] - offset[axis]) / scale).rounded()))
            }
            out.u16(0)        // intensity
            out.u8(0x11)      // return 1 of 1
            out.u8(0)         // classification flags, scanner channel, scan direction, edge
            out.u8(0)         // classification: never classified
            out.u8(0)         // user data
            out.u16(0)        // scan angle
            out.u16(0)        // point source ID
            out.f64(0)        // GPS time
            for c in 0..<3 { out.u16(UInt16(colors?[3 * i + c] ?? 255) * 257) }
        }
        return out.data
    }

    /// Writes `bytes(...)` to `path` atomically (temporary name, then rename).
    package static func write(path: String, positions: [Double], colors: [UInt8]?, wkt: String?) throws {
        let data = try bytes(positions: positions, colors: colors, wkt: wkt)
        try FileSystem.createDirectory(Path.directory(of: path))
        let files = StagedFiles()
        try files.stage(path, bytes: data)
        try files.commit()
    }

    /// Little-endian fields.
    struct ByteWriter {
        var data: [UInt8] = []
        mutating func u8(_ v: UInt8) { data.append(v) }
        mutating func u16(_ v: UInt16) { data += [UInt8(v & 0xFF), UInt8(v >> 8)] }
        mutating func u32(_ v: UInt32) { for k in 0..<4 { data.append(UInt8(truncatingIfNeeded: v >> (8 * k))) } }
        mutating func i32(_ v: Int32) { u32(UInt32(bitPattern: v)) }
        mutating func u64(_ v: UInt64) { for k in 0..<8 { data.append(UInt8(truncatingIfNeeded: v >> (8 * k))) } }
        mutating func f64(_ v: Double) { u64(v.bitPattern) }
        mutating func bytes(_ b: [UInt8]) { data += b }
        /// ASCII, NUL-padded (or cut) to `width` bytes.
        mutating func text(_ s: String, _ width: Int) {
            let b = Array(s.utf8.prefix(width))
            data += b + [UInt8](repeating: 0, count: width - b.count)
        }
    }
}

extension PointCloud {
    /// The cloud's positions (meters, in its frame) and colors, in the order `forEachPoint`
    /// gives them.
    package func positionsAndColors() -> (positions: [Double], colors: [UInt8]) {
        var positions: [Double] = [], colors: [UInt8] = []
        positions.reserveCapacity(3 * count)
        colors.reserveCapacity(3 * count)
        forEachPoint { p in
            positions += [Double(p.position.x), Double(p.position.y), Double(p.position.z)]
            colors += [p.color.x, p.color.y, p.color.z]
        }
        return (positions, colors)
    }
}
