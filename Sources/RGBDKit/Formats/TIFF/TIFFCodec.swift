import CTIFF

/// 32-bit float TIFF writing and reading with libtiff.
package enum TIFFCodec {
    /// Writes a single-channel float image as an uncompressed, strip-organized TIFF
    /// (`SAMPLEFORMAT_IEEEFP`, 32 bits, `PHOTOMETRIC_MINISBLACK`) to an open descriptor,
    /// which is closed afterwards (`TIFFFdOpen`, `TIFFWriteEncodedStrip`, `TIFFClose`).
    package static func writeFloat(_ map: DepthMap, fd: Int32, path: String) throws {
        precondition(map.channels == 1, "TIFF writing takes single-channel images")
        rgbd_tiff_silence()
        guard let tif = TIFFFdOpen(fd, path, "w") else {
            FileSystem.closeFile(fd)
            throw RGBDError(.io, file: path, "cannot open for TIFF writing")
        }
        var ok = true
        ok = ok && rgbd_tiff_set_u32(tif, UInt32(TIFFTAG_IMAGEWIDTH), UInt32(map.width)) != 0
        ok = ok && rgbd_tiff_set_u32(tif, UInt32(TIFFTAG_IMAGELENGTH), UInt32(map.height)) != 0
        ok = ok && rgbd_tiff_set_u16(tif, UInt32(TIFFTAG_BITSPERSAMPLE), 32) != 0
        ok = ok && rgbd_tiff_set_u16(tif, UInt32(TIFFTAG_SAMPLESPERPIXEL), 1) != 0
        ok = ok && rgbd_tiff_set_u16(tif, UInt32(TIFFTAG_SAMPLEFORMAT), UInt16(SAMPLEFORMAT_IEEEFP)) != 0
        ok = ok && rgbd_tiff_set_u16(tif, UInt32(TIFFTAG_PHOTOMETRIC), UInt16(PHOTOMETRIC_MINISBLACK)) != 0
        ok = ok && rgbd_tiff_set_u16(tif, UInt32(TIFFTAG_PLANARCONFIG), UInt16(PLANARCONFIG_CONTIG)) != 0
        ok = ok && rgbd_tiff_set_u16(tif, UInt32(TIFFTAG_COMPRESSION), UInt16(COMPRESSION_NONE)) != 0
        let rowsPerStrip = max(1, min(map.height, 65536 / max(1, map.width * 4)))
        ok = ok && rgbd_tiff_set_u32(tif, UInt32(TIFFTAG_ROWSPERSTRIP), UInt32(rowsPerStrip)) != 0
        ok = ok && rgbd_tiff_set_string(tif, UInt32(TIFFTAG_SOFTWARE), "rgbd") != 0
        if ok {
            map.samples.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                var strip: UInt32 = 0
                var row = 0
                while row < map.height && ok {
                    let rows = min(rowsPerStrip, map.height - row)
                    let start = row * map.width * 4
                    let size = rows * map.width * 4
                    if TIFFWriteEncodedStrip(tif, strip, UnsafeMutableRawPointer(mutating: base + start), tmsize_t(size)) < 0 {
                        ok = false
                    }
                    strip += 1
                    row += rows
                }
            }
        }
        if ok { ok = TIFFFlush(tif) == 1 }
        TIFFClose(tif)
        if !ok { throw RGBDError(.io, file: path, "cannot write TIFF (disk full or unwritable?)") }
    }

    /// Reads a single-channel 32-bit float TIFF.
    package static func readFloat(path: String) throws -> DepthMap {
        rgbd_tiff_silence()
        guard let tif = TIFFOpen(path, "r") else { throw RGBDError(.invalidImage, file: path, "not a readable TIFF") }
        defer { TIFFClose(tif) }
        var width: UInt32 = 0, height: UInt32 = 0
        var bits: UInt16 = 0, spp: UInt16 = 0, format: UInt16 = 0
        _ = rgbd_tiff_get_u32(tif, UInt32(TIFFTAG_IMAGEWIDTH), &width)
        _ = rgbd_tiff_get_u32(tif, UInt32(TIFFTAG_IMAGELENGTH), &height)
        _ = rgbd_tiff_get_u16(tif, UInt32(TIFFTAG_BITSPERSAMPLE), &bits)
        _ = rgbd_tiff_get_u16(tif, UInt32(TIFFTAG_SAMPLESPERPIXEL), &spp)
        _ = rgbd_tiff_get_u16(tif, UInt32(TIFFTAG_SAMPLEFORMAT), &format)
        guard bits == 32, spp == 1, format == UInt16(SAMPLEFORMAT_IEEEFP) else {
            throw RGBDError(.invalidImage, file: path, "not a single-channel float32 TIFF (\(bits) bits, \(spp) samples, format \(format))")
        }
        var map = DepthMap(width: Int(width), height: Int(height), channels: 1, repeating: 0)
        let w = Int(width)
        var failed = false
        map.samples.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            for y in 0..<Int(height) where !failed {
                if TIFFReadScanline(tif, base + y * w * 4, UInt32(y), 0) < 0 { failed = true }
            }
        }
        if failed { throw RGBDError(.invalidImage, file: path, "cannot read TIFF rows") }
        return map
    }
}
