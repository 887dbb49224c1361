import CHEIF

/// HEIC / HEIF decoding with libheif (HEVC through libde265).
///
/// Same contract as `JPEGCodec`: pixels as stored, 8-bit RGB. The file's
/// transformations (rotation `irot`, mirror `imir`, crop `clap`) are display hints like
/// EXIF orientation and are not applied; images of more than 8 bits are converted to 8;
/// grid (tiled) images, as iPhones write them, are decoded whole, their tiles on all
/// processors. Files in the common form (HEVC, 8-bit 4:2:0) are decoded by rgbd itself
/// (`HEIFItems`, `HEVCImageDecoder`: FFmpeg's HEVC decoder), the rest by libheif.
package enum HEIFCodec {
    /// The stored pixel size of the primary image (its `ispe`, before any
    /// transformation), read without decoding.
    package static func size(of bytes: [UInt8], file: String? = nil) throws -> (width: Int, height: Int) {
        try File(bytes, file: file).primary().storedSize()
    }

    /// Checks a HEIF as `decodeRGB` does before it decodes: libheif opens the file, its
    /// primary image's stored size is within `JPEGCodec.maxPixels` and plausible for the
    /// file's size. The HEVC stream itself is checked only by decoding it.
    package static func validate(_ bytes: [UInt8], file: String? = nil) throws {
        _ = try File(bytes, file: file).primary().plausibleSize()
    }

    /// Decodes the primary image to 8-bit RGB, pixels as stored.
    ///
    /// - Throws: `RGBDError(.invalidImage)` for anything libheif rejects, and for sizes
    ///   over `JPEGCodec.maxPixels`.
    package static func decodeRGB(_ bytes: [UInt8], file: String? = nil) throws -> ColorImage {
        // The common case (HEVC, 8-bit 4:2:0, a grid or one image) through FFmpeg's decoder
        // directly, tiles in parallel; libheif for everything else, and for anything the
        // fast path fails on (libheif then says what is wrong).
        if let items = HEIFItems.primary(of: bytes), items.width * items.height <= JPEGCodec.trialDecodePixels,
           let image = try? HEVCImageDecoder.decodeRGB(items, file: file) {
            return image
        }
        return try File(bytes, file: file).primary().decodeRGB()
    }

    /// An opened HEIF file (a libheif context over the caller's bytes, which it keeps
    /// alive).
    package final class File {
        private let context: OpaquePointer
        private let bytes: [UInt8]
        let file: String?

        package init(_ bytes: [UInt8], file: String?) throws {
            Library.initialize()
            guard let context = heif_context_alloc() else {
                throw RGBDError(.invalidImage, file: file, "cannot initialize libheif")
            }
            self.context = context
            self.bytes = bytes
            self.file = file
            heif_context_set_max_decoding_threads(context, Int32(max(1, Host.processorCount)))
            let status = self.bytes.withUnsafeBytes { raw in
                heif_context_read_from_memory_without_copy(context, raw.baseAddress, raw.count, nil)
            }
            try check(status, "not a readable HEIF image")
        }

        deinit { heif_context_free(context) }

        /// The size of the file in bytes.
        var byteCount: Int { bytes.count }

        /// The primary image.
        package func primary() throws -> Image {
            var handle: OpaquePointer? = nil
            try check(heif_context_get_primary_image_handle(context, &handle), "no primary image")
            guard let handle else { throw RGBDError(.invalidImage, file: file, "no primary image") }
            return Image(handle: handle, file: self)
        }

        func check(_ error: heif_error, _ what: String) throws {
            guard error.code != heif_error_Ok else { return }
            let reason = error.message.map { String(cString: $0) } ?? "unknown libheif error"
            // libheif's messages may span lines; rgbd's errors are one line each.
            let oneLine = reason.split(whereSeparator: { $0 == "\n" || $0 == "\r" })
                .map { $0.trimmingWhitespace }.filter { !$0.isEmpty }.joined(separator: ": ")
            throw RGBDError(.invalidImage, file: file, "\(what): \(oneLine)")
        }
    }

    /// An image of an opened file (a libheif image handle).
    package final class Image {
        let handle: OpaquePointer
        /// The file, kept alive as long as the handle.
        let owner: File

        package init(handle: OpaquePointer, file: File) {
            self.handle = handle
            self.owner = file
        }

        deinit { heif_image_handle_release(handle) }

        /// Width and height as stored (the `ispe` box), before transformations.
        func storedSize() throws -> (width: Int, height: Int) {
            var width = Int(heif_image_handle_get_ispe_width(handle))
            var height = Int(heif_image_handle_get_ispe_height(handle))
            if width <= 0 || height <= 0 {
                width = Int(heif_image_handle_get_width(handle))
                height = Int(heif_image_handle_get_height(handle))
            }
            guard width > 0, height > 0 else {
                throw RGBDError(.invalidImage, file: owner.file, "HEIF image has an empty size (\(width)×\(height))")
            }
            guard width * height <= JPEGCodec.maxPixels else {
                throw RGBDError(.invalidImage, file: owner.file,
                                "the HEIF image claims \(width)×\(height) pixels, more than rgbd's limit of \(JPEGCodec.maxPixels / 1_000_000) megapixels")
            }
            return (width, height)
        }

        /// `storedSize`, refused when beyond any camera's size (`JPEGCodec.trialDecodePixels`)
        /// with fewer than one byte per `JPEGCodec.maxPixelsPerByte` pixels in the file.
        func plausibleSize() throws -> (width: Int, height: Int) {
            let (width, height) = try storedSize()
            if width * height > JPEGCodec.trialDecodePixels, owner.byteCount < width * height / JPEGCodec.maxPixelsPerByte {
                throw RGBDError(.invalidImage, file: owner.file,
                                "the HEIF image claims \(width)×\(height) pixels in \(owner.byteCount) bytes, less than a real photo of that size takes (at least \(width * height / JPEGCodec.maxPixelsPerByte)): its size is corrupt")
            }
            return (width, height)
        }

        /// Decodes to 8-bit interleaved RGB, transformations not applied.
        ///
        /// An image beyond any camera's size (`JPEGCodec.trialDecodePixels`) whose file
        /// holds fewer than one byte per `JPEGCodec.maxPixelsPerByte` pixels is refused
        /// before libheif allocates its planes: its size is forged or corrupt.
        func decodeRGB() throws -> ColorImage {
            let (width, height) = try plausibleSize()
            guard let options = heif_decoding_options_alloc() else {
                throw RGBDError(.invalidImage, file: owner.file, "cannot allocate libheif decoding options")
            }
            defer { heif_decoding_options_free(options) }
            options.pointee.ignore_transformations = 1
            options.pointee.convert_hdr_to_8bit = 1
            var decoded: OpaquePointer? = nil
            try owner.check(heif_decode_image(handle, &decoded, heif_colorspace_RGB, heif_chroma_interleaved_RGB, options),
                            "cannot decode HEIF image")
            guard let decoded else { throw RGBDError(.invalidImage, file: owner.file, "cannot decode HEIF image") }
            defer { heif_image_release(decoded) }
            let planeWidth = Int(heif_image_get_width(decoded, heif_channel_interleaved))
            let planeHeight = Int(heif_image_get_height(decoded, heif_channel_interleaved))
            let bits = Int(heif_image_get_bits_per_pixel_range(decoded, heif_channel_interleaved))
            var stride: Int32 = 0
            guard let plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride),
                  planeWidth == width, planeHeight == height, bits == 8, Int(stride) >= width * 3 else {
                throw RGBDError(.invalidImage, file: owner.file,
                                "libheif decoded a \(planeWidth)×\(planeHeight) \(bits)-bit image where the file says \(width)×\(height)")
            }
            let rowBytes = width * 3
            let source = Int(stride)
            let samples = LargeBuffer.make(count: width * height * 3) { (dst: UnsafeMutableBufferPointer<UInt8>) in
                guard let out = dst.baseAddress else { return }
                for y in 0..<height {
                    (out + y * rowBytes).update(from: plane + y * source, count: rowBytes)
                }
            }
            return ColorImage(width: width, height: height, channels: 3, samples: samples)
        }
    }

    /// libheif's global initialization (plugins), done once per process.
    enum Library {
        private static let initialized: Bool = {
            heif_init(nil).code == heif_error_Ok
        }()

        static func initialize() { _ = initialized }
    }
}
