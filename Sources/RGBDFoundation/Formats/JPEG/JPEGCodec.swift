import CTurboJPEG

/// JPEG decoding and encoding with TurboJPEG (2.x API).
package enum JPEGCodec {
    /// The largest image decoded (200 megapixels: 600 MB of RGB; iPhones take up to 48).
    package static let maxPixels = 200_000_000

    /// A JPEG must hold at least one compressed byte per this many pixels. The flattest
    /// real photos stay far above: a black 4032×3024 frame takes one byte per 64 pixels
    /// with TurboJPEG's standard tables and one per 170 with optimized ones (4:2:0), one
    /// per 255 in grayscale; a camera's noise takes much more. A header that claims more
    /// pixels is corrupt or forged, and is refused before any pixel memory is allocated.
    package static let maxPixelsPerByte = 1024

    /// Images of more pixels than this (more than any phone camera takes: 150 MB of RGB)
    /// are first decoded at 1/8 scale, which reads the whole compressed stream with 1/64
    /// of the memory: a corrupt one is refused before the full-size buffer exists.
    package static let trialDecodePixels = 50_000_000

    /// Refuses, from the header's numbers alone, a JPEG that cannot be a real photo:
    /// more than `maxPixels` pixels, or fewer than one compressed byte per
    /// `maxPixelsPerByte` pixels.
    package static func checkPlausible(width: Int, height: Int, byteCount: Int, file: String? = nil) throws {
        let pixels = width * height
        guard pixels <= maxPixels else {
            throw RGBDError(.invalidImage, file: file,
                            "the JPEG claims \(width)×\(height) pixels, more than rgbd's limit of \(maxPixels / 1_000_000) megapixels")
        }
        guard byteCount >= pixels / maxPixelsPerByte else {
            throw RGBDError(.invalidImage, file: file,
                            "the JPEG claims \(width)×\(height) pixels in \(byteCount) bytes, less than a real photo of that size takes (at least \(pixels / maxPixelsPerByte)): its header is corrupt")
        }
    }

    /// The stored pixel size of a JPEG, read from its header (`tjDecompressHeader3`).
    package static func size(of jpeg: [UInt8], file: String? = nil) throws -> (width: Int, height: Int) {
        let handle = try Handle(decompress: true, file: file)
        return try handle.header(jpeg)
    }

    /// Decodes a JPEG to 8-bit RGB, pixels as stored (no EXIF rotation), with
    /// `tjDecompress2`.
    ///
    /// A corrupt header can claim any size: before the pixel memory is allocated, the
    /// claim is checked against the file's size (`checkPlausible`), and an image beyond
    /// `trialDecodePixels` is decoded once at 1/8 scale. A rejected JPEG therefore never
    /// costs more than about 150 MB.
    ///
    /// - Throws: `RGBDError(.invalidImage)` for anything TurboJPEG rejects or warns about
    ///   (a truncated file is an error, not a gray bottom half).
    package static func decodeRGB(_ jpeg: [UInt8], file: String? = nil) throws -> ColorImage {
        try decodeRGB(jpeg, file: file, trialDecodeAbove: trialDecodePixels)
    }

    /// `decodeRGB` with the trial decoding from `trialDecodeAbove` pixels on (tests).
    static func decodeRGB(_ jpeg: [UInt8], file: String?, trialDecodeAbove: Int) throws -> ColorImage {
        let handle = try Handle(decompress: true, file: file)
        let (width, height) = try handle.header(jpeg)
        try checkPlausible(width: width, height: height, byteCount: jpeg.count, file: file)
        if width * height > trialDecodeAbove {
            try trialDecode(jpeg, handle: handle, width: width, height: height)
        }
        var status: Int32 = 0
        let samples = LargeBuffer.make(count: width * height * 3) { (dst: UnsafeMutableBufferPointer<UInt8>) in
            status = jpeg.withUnsafeBufferPointer { src in
                tjDecompress2(handle.raw, src.baseAddress, UInt(src.count), dst.baseAddress,
                              Int32(width), Int32(width * 3), Int32(height), Int32(TJPF_RGB.rawValue), 0)
            }
            // A failed decode may leave rows unwritten; they are never read (we throw).
        }
        if status != 0 { throw handle.error("cannot decode JPEG") }
        return ColorImage(width: width, height: height, channels: 3, samples: samples)
    }

    /// Checks a JPEG as `decodeRGB` would, without its full-size pixels: the header, its
    /// plausibility, and the whole compressed stream decoded at 1/8 scale (TurboJPEG
    /// entropy-decodes every block at any scale, so a stream that fails to decode fails
    /// here with the same message). About a third of a full decode's time, 1/64 of its memory.
    package static func validate(_ jpeg: [UInt8], file: String? = nil) throws {
        let handle = try Handle(decompress: true, file: file)
        let (width, height) = try handle.header(jpeg)
        try checkPlausible(width: width, height: height, byteCount: jpeg.count, file: file)
        try trialDecode(jpeg, handle: handle, width: width, height: height)
    }

    /// Decodes the stream at 1/8 scale into a scratch buffer and throws what TurboJPEG
    /// reports (errors and warnings alike).
    private static func trialDecode(_ jpeg: [UInt8], handle: Handle, width: Int, height: Int) throws {
        // TurboJPEG scales by 1/8 when asked for ⌈width/8⌉ × ⌈height/8⌉.
        let (w, h) = ((width + 7) / 8, (height + 7) / 8)
        let small = UnsafeMutablePointer<UInt8>.allocate(capacity: w * h * 3)
        defer { small.deallocate() }
        let status = jpeg.withUnsafeBufferPointer { src in
            tjDecompress2(handle.raw, src.baseAddress, UInt(src.count), small, Int32(w), 0, Int32(h),
                          Int32(TJPF_RGB.rawValue), 0)
        }
        if status != 0 { throw handle.error("cannot decode JPEG") }
    }

    /// Decodes a JPEG to 8-bit gray (one sample per pixel; a color JPEG gives its
    /// luminance), pixels as stored: the depth image of a Portrait JPEG. The same
    /// plausibility checks as `decodeRGB`.
    package static func decodeGray(_ jpeg: [UInt8], file: String? = nil) throws -> ImageBuffer<UInt8> {
        let handle = try Handle(decompress: true, file: file)
        let (width, height) = try handle.header(jpeg)
        try checkPlausible(width: width, height: height, byteCount: jpeg.count, file: file)
        guard width * height <= HEIFCodec.maxAuxiliaryPixels else {
            throw RGBDError(.invalidImage, file: file, "the depth JPEG claims \(width)×\(height) pixels, more than a depth map has")
        }
        var samples = [UInt8](repeating: 0, count: width * height)
        let status = jpeg.withUnsafeBufferPointer { src in
            samples.withUnsafeMutableBufferPointer { dst in
                tjDecompress2(handle.raw, src.baseAddress, UInt(src.count), dst.baseAddress,
                              Int32(width), Int32(width), Int32(height), Int32(TJPF_GRAY.rawValue), 0)
            }
        }
        if status != 0 { throw handle.error("cannot decode JPEG") }
        return ImageBuffer(width: width, height: height, channels: 1, samples: samples)
    }

    /// Encodes an 8-bit RGB image as a baseline JPEG (`tjCompress2`, 4:2:0 below
    /// quality 95, 4:4:4 from 95 on).
    package static func encode(_ image: ColorImage, quality: Int = 92) throws -> [UInt8] {
        precondition(image.channels == 3, "JPEG encoding takes RGB images")
        let handle = try Handle(decompress: false, file: nil)
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        let subsampling = quality >= 95 ? TJSAMP_444 : TJSAMP_420
        let status = image.samples.withUnsafeBufferPointer { src in
            tjCompress2(handle.raw, src.baseAddress, Int32(image.width), Int32(image.rowStride),
                        Int32(image.height), Int32(TJPF_RGB.rawValue), &output, &size,
                        Int32(subsampling.rawValue), Int32(quality), 0)
        }
        defer { if let output { tjFree(output) } }
        guard status == 0, let output else { throw handle.error("cannot encode JPEG") }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// Encodes 4:2:0 Y′CbCr planes (JPEG's colours: BT.601, full range) as a baseline
    /// JPEG with `tjCompressFromYUVPlanes`, without going through RGB: the same file
    /// layout and tables as `encode` below quality 95 (4:2:0), the chroma taken as it is
    /// rather than averaged from RGB. `luma` is `width × height`, `cb` and `cr` half
    /// that, rounded up, rows packed.
    package static func encodeYCbCr420(luma: [UInt8], cb: [UInt8], cr: [UInt8], width: Int, height: Int,
                               quality: Int) throws -> [UInt8] {
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        guard width > 0, height > 0, luma.count == width * height, cb.count == chromaWidth * chromaHeight,
              cr.count == cb.count, width <= Int(Int32.max), height <= Int(Int32.max) else {
            throw RGBDError(.invalidImage, "cannot encode JPEG: Y′CbCr planes of the wrong sizes for \(width)×\(height)")
        }
        let handle = try Handle(decompress: false, file: nil)
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        let status = luma.withUnsafeBufferPointer { y in
            cb.withUnsafeBufferPointer { cb in
                cr.withUnsafeBufferPointer { cr in
                    var planes: [UnsafePointer<UInt8>?] = [y.baseAddress, cb.baseAddress, cr.baseAddress]
                    var strides: [Int32] = [Int32(width), Int32(chromaWidth), Int32(chromaWidth)]
                    return tjCompressFromYUVPlanes(handle.raw, &planes, Int32(width), &strides, Int32(height),
                                                   Int32(TJSAMP_420.rawValue), &output, &size, Int32(quality), 0)
                }
            }
        }
        defer { if let output { tjFree(output) } }
        guard status == 0, let output else { throw handle.error("cannot encode JPEG") }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// A TurboJPEG instance, destroyed with its owner.
    private final class Handle {
        let raw: tjhandle
        let file: String?

        init(decompress: Bool, file: String?) throws {
            guard let raw = decompress ? tjInitDecompress() : tjInitCompress() else {
                throw RGBDError(.invalidImage, file: file, "cannot initialize TurboJPEG")
            }
            self.raw = raw
            self.file = file
        }

        deinit { tjDestroy(raw) }

        func header(_ jpeg: [UInt8]) throws -> (width: Int, height: Int) {
            var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
            let status = jpeg.withUnsafeBufferPointer { src in
                tjDecompressHeader3(raw, src.baseAddress, UInt(src.count), &width, &height, &subsampling, &colorspace)
            }
            if status != 0 { throw error("not a readable JPEG") }
            guard width > 0, height > 0 else {
                throw RGBDError(.invalidImage, file: file, "JPEG has an empty image (\(width)×\(height))")
            }
            return (Int(width), Int(height))
        }

        func error(_ what: String) -> RGBDError {
            let reason = tjGetErrorStr2(raw).map { String(cString: $0) } ?? "unknown TurboJPEG error"
            return RGBDError(.invalidImage, file: file, "\(what): \(reason)")
        }
    }
}
