/// The limits on what rgbd reads, beyond each format's own (docs/format.md, "Limits").
///
/// Every size an input's header claims is checked against what its bytes could hold
/// and against these limits before any memory is allocated for it, so a file of a few
/// hundred bytes claiming a huge image is refused at once, within a few megabytes.
/// Files themselves are read through `FileSystem.readFile`, bounded by
/// `FileSystem.maxFileBytes`; photos are bounded by `JPEGCodec.maxPixels` (JPEG and HEIF).
package enum InputLimits {
    /// The largest depth image (or Portrait matte) decoded: 16 megapixels, 64 MB of
    /// float32. Real depth maps have at most about half a megapixel (768×576); one the
    /// size of a 12-megapixel photo still fits.
    package static let maxDepthPixels = 16_000_000

    /// The most bytes deflate (zlib, PNG, TIFF's Deflate) can produce from one
    /// compressed byte: 1032 (a 258-byte match per code of about two bits). An image
    /// whose claimed size exceeds this multiple of its file's size is corrupt or forged.
    package static let maxDeflateExpansion = 1032

    /// Whether `pixels` of `bytesPerPixel` bytes (row overheads included by the caller)
    /// could come out of a file of `fileBytes` bytes whose data expand at most
    /// `expansion` times. Computed without overflow for any claim.
    static func couldHold(fileBytes: Int, expansion: Int, claimedBytes: Double) -> Bool {
        claimedBytes <= Double(max(0, fileBytes)) * Double(expansion)
    }
}
