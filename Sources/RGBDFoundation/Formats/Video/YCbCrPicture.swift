import CFFmpeg
import CKernels

/// A decoded video frame: its Y′CbCr 4:2:0 planes as the decoder gave them
/// (`VideoDecoder.nextPicture`), or RGB for the pixel formats kept only as RGB.
package enum VideoFrame: Sendable {
    /// 8-bit Y′CbCr 4:2:0 (FFmpeg's `yuv420p` and `yuvj420p`).
    case ycbcr(YCbCrPicture)
    /// Any other pixel format, converted as `VideoDecoder.nextFrame` converts it.
    case rgb(ColorImage)

    /// The frame as RGB: the same pixels `VideoDecoder.nextFrame` gives.
    package func rgb() throws -> ColorImage {
        switch self {
        case .ycbcr(let picture): try picture.rgb()
        case .rgb(let image): image
        }
    }
}

/// An 8-bit Y′CbCr 4:2:0 picture copied out of FFmpeg's buffers, with what its values mean
/// (the matrix and range `PictureConverter` reads them with), so that it can be turned
/// into the same RGB later (`rgb()`) or handed to a JPEG encoder without going through
/// RGB (`convertToJPEGColors`).
package struct YCbCrPicture: Sendable {
    /// Luma size in pixels.
    package let width: Int
    /// See `width`.
    package let height: Int
    /// Luma, `width × height`, rows packed.
    package var luma: [UInt8]
    /// Cb, `chromaWidth × chromaHeight` (each sample covers 2×2 pixels), rows packed.
    package var cb: [UInt8]
    /// Cr, as `cb`.
    package var cr: [UInt8]
    /// FFmpeg's pixel format (`yuv420p` or `yuvj420p`), for libswscale.
    let pixelFormat: Int32
    /// The AVColorSpace value whose matrix reads the values (resolved as
    /// `PictureConverter.colorspace` does for streams that do not say).
    var colorspace: Int32
    /// Full range (Y′ 0–255) rather than limited (Y′ 16–235, Cb and Cr 16–240).
    var fullRange: Bool

    /// Chroma plane width: half the luma's, rounded up.
    package var chromaWidth: Int { (width + 1) / 2 }
    /// Chroma plane height: half the luma's, rounded up.
    package var chromaHeight: Int { (height + 1) / 2 }

    /// The picture as RGB, converted by libswscale exactly as the decoder converts a
    /// frame it gives as RGB.
    package func rgb() throws -> ColorImage {
        guard let image = PictureConverter().convert(self) else {
            throw RGBDError(.invalidImage, "FFmpeg cannot convert a \(width)×\(height) Y′CbCr picture to RGB")
        }
        return image
    }

    /// The matrix the values are read with; nil for matrices other than BT.601 and
    /// BT.709 (no JPEG colours are made from them).
    var matrix: YCbCrMatrix? {
        switch colorspace {
        case Int32(AVCOL_SPC_BT709.rawValue): YCbCrMatrix(kr: 0.2126, kb: 0.0722, fullRange: fullRange)
        case Int32(AVCOL_SPC_BT470BG.rawValue), Int32(AVCOL_SPC_SMPTE170M.rawValue):
            YCbCrMatrix(kr: 0.299, kb: 0.114, fullRange: fullRange)
        default: nil
        }
    }

    /// Whether the values are JPEG's already (JFIF: BT.601, full range).
    var hasJPEGColors: Bool { matrix == JPEGColorConversion.jpeg }

    /// The picture in JPEG's Y′CbCr (BT.601, full range), which JPEG encoders take as
    /// it is: itself when it is so already, else converted into new planes; nil for a
    /// matrix other than BT.601 and BT.709. See `JPEGColorConversion` for how close this
    /// comes to the colours of the RGB the decoder would give.
    package func inJPEGColors(avx2: Bool = VectorKernels.avx2) -> YCbCrPicture? {
        guard let matrix else { return nil }
        guard matrix != JPEGColorConversion.jpeg else { return self }
        let conversion = JPEGColorConversion(from: matrix)
        let width = width, height = height, chromaWidth = chromaWidth, chromaCount = chromaWidth * chromaHeight
        var outCb = [UInt8](), outCr = [UInt8]()
        let outLuma = LargeBuffer.make(count: width * height) { (outY: UnsafeMutableBufferPointer<UInt8>) in
            outCb = LargeBuffer.make(count: chromaCount) { (outCb: UnsafeMutableBufferPointer<UInt8>) in
                outCr = LargeBuffer.make(count: chromaCount) { (outCr: UnsafeMutableBufferPointer<UInt8>) in
                    luma.withUnsafeBufferPointer { y in
                        cb.withUnsafeBufferPointer { cb in
                            cr.withUnsafeBufferPointer { cr in
                                guard let y = y.baseAddress, let cb = cb.baseAddress, let cr = cr.baseAddress,
                                      let outY = outY.baseAddress, let outCb = outCb.baseAddress,
                                      let outCr = outCr.baseAddress else { return }
                                for pair in 0..<((height + 1) / 2) {
                                    let row = 2 * pair, second = row + 1 < height
                                    conversion.convertRows(
                                        y0: y + row * width, y1: second ? y + (row + 1) * width : nil,
                                        cb: cb + pair * chromaWidth, cr: cr + pair * chromaWidth,
                                        outY0: outY + row * width, outY1: second ? outY + (row + 1) * width : nil,
                                        outCb: outCb + pair * chromaWidth, outCr: outCr + pair * chromaWidth,
                                        count: width, avx2: avx2)
                                }
                            }
                        }
                    }
                }
            }
        }
        return YCbCrPicture(width: width, height: height, luma: outLuma, cb: outCb, cr: outCr, pixelFormat: pixelFormat,
                            colorspace: Int32(AVCOL_SPC_SMPTE170M.rawValue), fullRange: true)
    }
}

/// Y′CbCr of one matrix and range → JPEG's (JFIF: BT.601, full range), on the planes, in
/// integers (1/2^16): each output is a linear function of the input's Y′, Cb and Cr,
/// rounded and clamped to 0–255. Luma takes the chroma of its 2×2 block, as the RGB the
/// decoder gives does (libswscale repeats each chroma sample over its block), and the
/// chroma of JPEG's 4:2:0, the mean of a block's four, is then the same sample
/// converted: only the RGB path's rounding and clamping of R′G′B′ to 0–255 are missing
/// (colours outside RGB, which limited-range video can hold, stay as they are).
///
/// The AVX2 kernel (`rgbd_ycbcr420_recode_rows_avx2`) computes the same bytes.
struct JPEGColorConversion: Sendable {
    /// JPEG's own matrix and range.
    static let jpeg = YCbCrMatrix(kr: 0.299, kb: 0.114, fullRange: true)

    /// Luma from Y′, Cb − 128, Cr − 128, and its offset (with half a unit); Cb from
    /// Cb − 128 and Cr − 128, Cr from them, and the chroma offset (128 and a half).
    let coefficients: [Int32]

    init(from source: YCbCrMatrix) {
        // Source code values to normalized Y′ (0…1) and Cb, Cr (−½…½).
        let lumaScale = source.fullRange ? 1 / 255.0 : 1 / 219.0
        let lumaZero = source.fullRange ? 0.0 : 16
        let chromaScale = source.fullRange ? 1 / 255.0 : 1 / 224.0
        // Normalized source Y′CbCr → R′G′B′ → JPEG's normalized Y′CbCr.
        func jpeg(_ y: Double, _ cb: Double, _ cr: Double) -> SIMD3<Double> {
            let kr = source.kr, kb = source.kb, kg = 1 - kr - kb
            let r = y + 2 * (1 - kr) * cr, b = y + 2 * (1 - kb) * cb
            let g = (y - kr * r - kb * b) / kg
            let target = Self.jpeg
            let luma = target.kr * r + (1 - target.kr - target.kb) * g + target.kb * b
            return SIMD3(luma, (b - luma) / (2 * (1 - target.kb)), (r - luma) / (2 * (1 - target.kr)))
        }
        let fromY = jpeg(1, 0, 0), fromCb = jpeg(0, 1, 0), fromCr = jpeg(0, 0, 1)
        let one = 65_536.0
        func fixed(_ value: Double) -> Int32 { Int32((value * one).rounded()) }
        coefficients = [
            fixed(255 * fromY.x * lumaScale), fixed(255 * fromCb.x * chromaScale), fixed(255 * fromCr.x * chromaScale),
            fixed(-255 * fromY.x * lumaScale * lumaZero + 0.5),
            fixed(255 * fromCb.y * chromaScale), fixed(255 * fromCr.y * chromaScale),
            fixed(255 * fromCb.z * chromaScale), fixed(255 * fromCr.z * chromaScale),
            fixed(128.5),
        ]
    }

    /// Two luma rows sharing a chroma row (`y1` and `outY1` nil for a last single row),
    /// `count` pixels each, and the chroma row (`(count + 1) / 2` samples), into the
    /// `out` rows (which may be the inputs); the AVX2 kernel first where `avx2`, these
    /// loops for the rest.
    func convertRows(y0: UnsafePointer<UInt8>, y1: UnsafePointer<UInt8>?, cb: UnsafePointer<UInt8>,
                     cr: UnsafePointer<UInt8>, outY0: UnsafeMutablePointer<UInt8>, outY1: UnsafeMutablePointer<UInt8>?,
                     outCb: UnsafeMutablePointer<UInt8>, outCr: UnsafeMutablePointer<UInt8>, count: Int, avx2: Bool) {
        let done = avx2 ? coefficients.withUnsafeBufferPointer {
            rgbd_ycbcr420_recode_rows_avx2(count, y0, y1, cb, cr, outY0, outY1, outCb, outCr, $0.baseAddress)
        } : 0
        let ly = coefficients[0], lcb = coefficients[1], lcr = coefficients[2], lOffset = coefficients[3]
        let cbb = coefficients[4], cbr = coefficients[5], crb = coefficients[6], crr = coefficients[7]
        let cOffset = coefficients[8]
        // `done` is even: each chroma sample once, for its two pixels of each row.
        var x = done
        while x < count {
            let u = Int32(cb[x >> 1]) - 128, v = Int32(cr[x >> 1]) - 128
            let term = u &* lcb &+ v &* lcr &+ lOffset
            for p in x..<min(x + 2, count) {
                outY0[p] = Self.clamp(Int32(y0[p]) &* ly &+ term)
                if let y1, let outY1 { outY1[p] = Self.clamp(Int32(y1[p]) &* ly &+ term) }
            }
            outCb[x >> 1] = Self.clamp(u &* cbb &+ v &* cbr &+ cOffset)
            outCr[x >> 1] = Self.clamp(u &* crb &+ v &* crr &+ cOffset)
            x += 2
        }
    }

    @inline(__always)
    private static func clamp(_ value: Int32) -> UInt8 {
        UInt8(truncatingIfNeeded: min(max(value >> 16, 0), 255))
    }
}
