import CDeflate

/// libdeflate for ZIP entries: raw deflate into a buffer of the exact size, and CRC-32.
enum ZIPInflate {
    /// Why a deflate stream did not decode to exactly the buffer's size.
    package enum Failure {
        case badData, wrongSize, noMemory
    }

    /// Decodes the raw deflate stream `input` into all of `output`; returns why not
    /// unless the stream decodes to exactly `output.count` bytes (libdeflate stops at
    /// the end of the stream and never writes beyond the buffer).
    static func decompress(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Failure? {
        guard let decompressor = libdeflate_alloc_decompressor() else { return .noMemory }
        defer { libdeflate_free_decompressor(decompressor) }
        // libdeflate wants non-null pointers even for empty buffers.
        var empty: UInt8 = 0
        let result = withUnsafeMutablePointer(to: &empty) { spare in
            libdeflate_deflate_decompress(decompressor, input.baseAddress ?? UnsafeRawPointer(spare), input.count,
                                          output.baseAddress ?? UnsafeMutableRawPointer(spare), output.count, nil)
        }
        switch result {
        case LIBDEFLATE_SUCCESS: return nil
        case LIBDEFLATE_SHORT_OUTPUT, LIBDEFLATE_INSUFFICIENT_SPACE: return .wrongSize
        default: return .badData
        }
    }

    /// The CRC-32 of `bytes` (ZIP's, as libdeflate computes it).
    static func crc32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress else { return 0 }
        return libdeflate_crc32(0, base, bytes.count)
    }
}
