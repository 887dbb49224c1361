import CPNG

/// PNG encoding and decoding with libpng's simplified API (`png_image_*`).
public enum PNGCodec {
    /// How hard zlib works. `.fast` is what the command-line tool uses by default: the
    /// file is larger but written several times faster.
    public enum Effort: Sendable {
        case fast, small
    }

    /// Encodes an 8-bit RGB image (`png_image_write_to_memory`, format `PNG_FORMAT_RGB`).
    public static func encodeRGB(_ image: ColorImage, effort: Effort = .fast) throws -> [UInt8] {
        precondition(image.channels == 3, "encodeRGB takes RGB images")
        return try encode(width: image.width, height: image.height, format: rgbd_png_format_rgb(),
                          effort: effort, rowStrideSamples: image.rowStride, samples: image.samples)
    }

    /// Encodes a 16-bit grayscale image (`PNG_FORMAT_LINEAR_Y`: values are written as
    /// given, most significant byte first as PNG requires).
    public static func encodeGray16(width: Int, height: Int, samples: [UInt16], effort: Effort = .fast) throws -> [UInt8] {
        try encode(width: width, height: height, format: rgbd_png_format_linear_y(),
                   effort: effort, rowStrideSamples: width, samples: samples)
    }

    private static func encode<T>(width: Int, height: Int, format: UInt32, effort: Effort,
                                  rowStrideSamples: Int, samples: [T]) throws -> [UInt8] {
        var image = png_image()
        image.version = rgbd_png_image_version()
        image.width = UInt32(width)
        image.height = UInt32(height)
        image.format = format
        image.flags = effort == .fast ? UInt32(PNG_IMAGE_FLAG_FAST) : 0
        // First call sizes the output, second call writes it.
        var size = 0
        let sized = samples.withUnsafeBytes { src in
            png_image_write_to_memory(&image, nil, &size, 0, src.baseAddress, Int32(rowStrideSamples), nil)
        }
        guard sized != 0 else { throw failure(&image, "cannot encode PNG") }
        var output = [UInt8](repeating: 0, count: size)
        let written = samples.withUnsafeBytes { src in
            output.withUnsafeMutableBytes { dst in
                png_image_write_to_memory(&image, dst.baseAddress, &size, 0, src.baseAddress, Int32(rowStrideSamples), nil)
            }
        }
        guard written != 0 else { throw failure(&image, "cannot encode PNG") }
        output.removeLast(output.count - size)
        return output
    }

    /// Decodes a PNG file to 8-bit RGB.
    public static func decodeRGB(_ bytes: [UInt8], file: String? = nil) throws -> ColorImage {
        let (w, h, samples): (Int, Int, [UInt8]) = try decode(bytes, format: rgbd_png_format_rgb(), channels: 3, file: file)
        return ColorImage(width: w, height: h, channels: 3, samples: samples)
    }

    /// Decodes a 16-bit (or 8-bit) grayscale PNG file to 16-bit values as stored.
    public static func decodeGray16(_ bytes: [UInt8], file: String? = nil) throws -> ImageBuffer<UInt16> {
        let (w, h, samples): (Int, Int, [UInt16]) = try decode(bytes, format: rgbd_png_format_linear_y(), channels: 1, file: file)
        return ImageBuffer(width: w, height: h, channels: 1, samples: samples)
    }

    private static func decode<T: BitwiseCopyable>(_ bytes: [UInt8], format: UInt32, channels: Int,
                                                   file: String?) throws -> (Int, Int, [T]) {
        var image = png_image()
        image.version = rgbd_png_image_version()
        let begun = bytes.withUnsafeBytes { png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }
        guard begun != 0 else { throw failure(&image, "not a readable PNG", file: file) }
        defer { png_image_free(&image) }
        image.format = format
        let width = Int(image.width), height = Int(image.height)
        var samples = [T](unsafeUninitializedCapacity: width * height * channels) { _, count in
            count = width * height * channels
        }
        let done = samples.withUnsafeMutableBytes { dst in
            png_image_finish_read(&image, nil, dst.baseAddress, Int32(width * channels), nil)
        }
        guard done != 0 else { throw failure(&image, "cannot decode PNG", file: file) }
        return (width, height, samples)
    }

    private static func failure(_ image: inout png_image, _ what: String, file: String? = nil) -> RGBDError {
        let message = withUnsafeBytes(of: &image.message) { raw -> String in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
        return RGBDError(.invalidImage, file: file, message.isEmpty ? what : "\(what): \(message)")
    }
}
