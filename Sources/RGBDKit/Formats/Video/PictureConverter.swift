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
    private struct Setup: Equatable {
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
        guard width > 0, height > 0 else { return nil }
        let wanted = Setup(format: picture.format, width: picture.width, height: picture.height,
                           colorspace: Self.colorspace(picture.colorspace, defaultHD: defaultHD),
                           fullRange: picture.color_range == AVCOL_RANGE_JPEG
                               || (picture.color_range == AVCOL_RANGE_UNSPECIFIED && rgbd_pix_fmt_is_full_range(picture.format) != 0))
        if setup != wanted {
            rgbd_sws_free(context)
            setup = nil
            context = rgbd_sws_rgb_context(picture.width, picture.height, picture.format, wanted.colorspace,
                                           wanted.fullRange ? 1 : 0)
            guard context != nil else { return nil }
            setup = wanted
        }
        guard let context else { return nil }
        var converted = true
        let samples = LargeBuffer.make(count: width * height * 3) { (output: UnsafeMutableBufferPointer<UInt8>) in
            guard let rgb = output.baseAddress,
                  rgbd_sws_rgb_convert(context, frame, rgb, Int32(width * 3)) == picture.height else {
                converted = false
                output.update(repeating: 0)
                return
            }
        }
        return converted ? ColorImage(width: width, height: height, channels: 3, samples: samples) : nil
    }

    /// The colour space whose coefficients libswscale uses for a stream's: its own where
    /// libswscale has them, else BT.709 for HD and BT.601 for smaller pictures.
    private static func colorspace(_ space: AVColorSpace, defaultHD: Bool) -> Int32 {
        switch space {
        case AVCOL_SPC_BT709, AVCOL_SPC_FCC, AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M, AVCOL_SPC_SMPTE240M,
             AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL:
            Int32(space.rawValue)
        default:
            Int32((defaultHD ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M).rawValue)
        }
    }
}
