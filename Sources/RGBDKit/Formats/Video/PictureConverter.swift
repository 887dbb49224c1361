import CFFmpeg

/// Converts FFmpeg's decoded pictures (any Y′CbCr layout and depth) to packed 8-bit RGB
/// with libswscale, honouring each picture's colour matrix and range.
///
/// The matrix is the picture's own (BT.709, BT.601, BT.2020, SMPTE 240M, FCC); when the
/// stream does not say, BT.709 for HD pictures and BT.601 for smaller ones (FFmpeg's
/// players assume the same). The range is limited (Y′ 16–235) unless the stream says
/// full, or uses one of the old full-range `yuvj` formats. The libswscale context is
/// kept while the pictures' format, size, matrix and range stay the same.
final class PictureConverter {
    struct Setup: Equatable {
        var format: Int32
        var width: Int32
        var height: Int32
        var colorspace: Int32
        var fullRange: Bool
    }

    /// The libswscale context (behind the shim's `void *`).
    private var context: UnsafeMutableRawPointer?
    private var setup: Setup?

    deinit {
        rgbd_sws_free(context)
    }

    /// The picture in `frame` as RGB; nil when libswscale cannot convert its format.
    /// `defaultHD` chooses the matrix for streams that do not name theirs.
    func convert(_ frame: UnsafeMutablePointer<AVFrame>, defaultHD: Bool) -> ColorImage? {
        let picture = frame.pointee
        let width = Int(picture.width), height = Int(picture.height)
        guard width > 0, height > 0, let context = context(for: Self.setup(of: frame, defaultHD: defaultHD)) else {
            return nil
        }
        return rgb(width: width, height: height) { rgb in
            rgbd_sws_rgb_convert(context, frame, rgb, Int32(width * 3)) == picture.height
        }
    }

    /// A picture copied out of a frame, as RGB: the same pixels `convert(frame)` gives
    /// for the frame; nil when libswscale cannot convert it.
    func convert(_ picture: YCbCrPicture) -> ColorImage? {
        let width = picture.width, height = picture.height
        guard width > 0, height > 0,
              let context = context(for: Setup(format: picture.pixelFormat, width: Int32(width), height: Int32(height),
                                               colorspace: picture.colorspace, fullRange: picture.fullRange)) else {
            return nil
        }
        return picture.luma.withUnsafeBufferPointer { y in
            picture.cb.withUnsafeBufferPointer { cb in
                picture.cr.withUnsafeBufferPointer { cr in
                    guard let y = y.baseAddress, let cb = cb.baseAddress, let cr = cr.baseAddress else { return nil }
                    let planes = [y, cb, cr]
                    let strides = [Int32(width), Int32(picture.chromaWidth), Int32(picture.chromaWidth)]
                    return rgb(width: width, height: height) { rgb in
                        rgbd_sws_rgb_convert_planes(context, planes, strides, Int32(height), rgb, Int32(width * 3))
                            == Int32(height)
                    }
                }
            }
        }
    }

    /// What libswscale is set up for to read `frame`: its format and size, its matrix
    /// (`colorspace`) and its range (limited unless the stream says full or the format
    /// is a `yuvj` one).
    static func setup(of frame: UnsafeMutablePointer<AVFrame>, defaultHD: Bool) -> Setup {
        let picture = frame.pointee
        return Setup(format: picture.format, width: picture.width, height: picture.height,
                     colorspace: colorspace(picture.colorspace, defaultHD: defaultHD),
                     fullRange: picture.color_range == AVCOL_RANGE_JPEG
                         || (picture.color_range == AVCOL_RANGE_UNSPECIFIED && rgbd_pix_fmt_is_full_range(picture.format) != 0))
    }

    /// The libswscale context for `wanted`, kept while it stays the same.
    private func context(for wanted: Setup) -> UnsafeMutableRawPointer? {
        if setup != wanted {
            rgbd_sws_free(context)
            setup = nil
            context = rgbd_sws_rgb_context(wanted.width, wanted.height, wanted.format, wanted.colorspace,
                                           wanted.fullRange ? 1 : 0)
            guard context != nil else { return nil }
            setup = wanted
        }
        return context
    }

    /// A `width × height` RGB image that `convert` fills; nil when it fails.
    private func rgb(width: Int, height: Int, _ convert: (UnsafeMutablePointer<UInt8>) -> Bool) -> ColorImage? {
        var converted = true
        let samples = LargeBuffer.make(count: width * height * 3) { (output: UnsafeMutableBufferPointer<UInt8>) in
            guard let rgb = output.baseAddress, convert(rgb) else {
                converted = false
                output.update(repeating: 0)
                return
            }
        }
        return converted ? ColorImage(width: width, height: height, channels: 3, samples: samples) : nil
    }

    /// The colour space whose coefficients libswscale uses for a stream's: its own where
    /// libswscale has them, else BT.709 for HD and BT.601 for smaller pictures.
    static func colorspace(_ space: AVColorSpace, defaultHD: Bool) -> Int32 {
        switch space {
        case AVCOL_SPC_BT709, AVCOL_SPC_FCC, AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M, AVCOL_SPC_SMPTE240M,
             AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL:
            Int32(space.rawValue)
        default:
            Int32((defaultHD ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M).rawValue)
        }
    }
}
