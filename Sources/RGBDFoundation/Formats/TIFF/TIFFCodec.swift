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

    /// Reads a single-channel 32-bit float TIFF file (through `FileSystem.readFile`).
    package static func readFloat(path: String) throws -> DepthMap {
        try readFloat(try FileSystem.readFile(path), file: path)
    }

    /// Decodes the bytes of a single-channel 32-bit float TIFF (a depth image: at most
    /// `InputLimits.maxDepthPixels` pixels); `file` names it in errors.
    ///
    /// Before the pixels are allocated, the header's size is checked against the limit
    /// and against what the file's bytes could hold (`checkPlausible`), and libtiff's own
    /// allocations are bounded (libtiff 4.5 or later).
    ///
    /// - Throws: `RGBDError(.invalidImage)` naming `file`.
    package static func readFloat(_ bytes: [UInt8], file: String) throws -> DepthMap {
        rgbd_tiff_silence()
        let state = UnsafeMutablePointer<rgbd_tiff_memory>.allocate(capacity: 1)
        defer { state.deallocate() }
        return try bytes.withUnsafeBufferPointer { buffer in
            let maxAllocation = Int64(buffer.count) + Int64(InputLimits.maxDepthPixels) * 4
            guard let tif = rgbd_tiff_open_memory(state, buffer.baseAddress, buffer.count, file, maxAllocation) else {
                throw RGBDError(.invalidImage, file: file, "not a readable TIFF")
            }
            defer { TIFFClose(tif) }
            return try read(tif, byteCount: buffer.count, file: file)
        }
    }

    /// How many bytes a compressed byte can become, at most, by TIFF compression scheme;
    /// nil for schemes without a known bound (the pixel limit still applies).
    static func maxExpansion(compression: UInt16) -> Int? {
        switch Int32(compression) {
        case COMPRESSION_NONE: return 1
        case COMPRESSION_ADOBE_DEFLATE, COMPRESSION_DEFLATE: return InputLimits.maxDeflateExpansion
        case COMPRESSION_PACKBITS: return 64  // a 2-byte run stands for at most 128 bytes
        case COMPRESSION_LZW: return 4096  // a code of 9 bits or more, a string of at most 4096 bytes
        default: return nil
        }
    }

    /// Refuses, from the header's numbers alone, a float TIFF that cannot be what it
    /// claims: no pixels, more than `InputLimits.maxDepthPixels`, or more bytes of
    /// samples than its `byteCount` bytes could hold with its compression.
    static func checkPlausible(width: Int, height: Int, compression: UInt16, byteCount: Int, file: String) throws {
        guard width > 0, height > 0 else {
            throw RGBDError(.invalidImage, file: file, "the depth TIFF is empty (\(width)×\(height))")
        }
        // In floating point: a header's two 32-bit sizes multiplied may overflow an Int.
        guard Double(width) * Double(height) <= Double(InputLimits.maxDepthPixels) else {
            throw RGBDError(.invalidImage, file: file,
                            "the depth TIFF claims \(width)×\(height) pixels, more than rgbd's limit for a depth image (\(InputLimits.maxDepthPixels / 1_000_000) megapixels)")
        }
        if let expansion = maxExpansion(compression: compression),
           !InputLimits.couldHold(fileBytes: byteCount, expansion: expansion, claimedBytes: Double(width * height * 4)) {
            throw RGBDError(.invalidImage, file: file,
                            "the depth TIFF claims \(width)×\(height) float pixels (\(width * height * 4) bytes) in a file of \(byteCount) bytes, more than its compression (scheme \(compression)) can hold: its header is corrupt")
        }
    }

    private static func read(_ tif: OpaquePointer, byteCount: Int, file: String) throws -> DepthMap {
        var width: UInt32 = 0, height: UInt32 = 0
        var bits: UInt16 = 0, spp: UInt16 = 0, format: UInt16 = 0, compression: UInt16 = 0
        _ = rgbd_tiff_get_u32(tif, UInt32(TIFFTAG_IMAGEWIDTH), &width)
        _ = rgbd_tiff_get_u32(tif, UInt32(TIFFTAG_IMAGELENGTH), &height)
        _ = rgbd_tiff_get_u16(tif, UInt32(TIFFTAG_BITSPERSAMPLE), &bits)
        _ = rgbd_tiff_get_u16(tif, UInt32(TIFFTAG_SAMPLESPERPIXEL), &spp)
        _ = rgbd_tiff_get_u16(tif, UInt32(TIFFTAG_SAMPLEFORMAT), &format)
        _ = rgbd_tiff_get_u16(tif, UInt32(TIFFTAG_COMPRESSION), &compression)
        guard bits == 32, spp == 1, format == UInt16(SAMPLEFORMAT_IEEEFP) else {
            throw RGBDError(.invalidImage, file: file, "not a single-channel float32 TIFF (\(bits) bits, \(spp) samples, format \(format))")
        }
        let w = Int(width), h = Int(height)
        try checkPlausible(width: w, height: h, compression: compression, byteCount: byteCount, file: file)
        // A scanline is one row of floats (no padding for 32-bit samples); a TIFF whose
        // libtiff says otherwise (tiled, say) is refused rather than overrun.
        guard TIFFScanlineSize64(tif) == UInt64(w * 4) else {
            throw RGBDError(.invalidImage, file: file, "cannot read TIFF rows (tiled or unusual layout)")
        }
        var map = DepthMap(width: w, height: h, channels: 1, repeating: 0)
        var failed = false
        map.samples.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            for y in 0..<h where !failed {
                if TIFFReadScanline(tif, base + y * w * 4, UInt32(y), 0) < 0 { failed = true }
            }
        }
        if failed { throw RGBDError(.invalidImage, file: file, "cannot read TIFF rows") }
        return map
    }
}
