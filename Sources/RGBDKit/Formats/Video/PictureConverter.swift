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
        var matrix: Int32
        var fullRange: Bool
    }

    private var context: OpaquePointer?
    private var setup: Setup?

    deinit {
        sws_freeContext(context)
    }

    /// The picture in `frame` as RGB; nil when libswscale cannot convert its format.
    /// `defaultHD` chooses the matrix for streams that do not name theirs.
    func convert(_ frame: UnsafeMutablePointer<AVFrame>, defaultHD: Bool) -> ColorImage? {
        let picture = frame.pointee
        let width = Int(picture.width), height = Int(picture.height)
        guard width > 0, height > 0 else { return nil }
        let format = AVPixelFormat(rawValue: picture.format)
        let wanted = Setup(format: picture.format, width: picture.width, height: picture.height,
                           matrix: Self.matrix(picture.colorspace, defaultHD: defaultHD),
                           fullRange: picture.color_range == AVCOL_RANGE_JPEG
                               || (picture.color_range == AVCOL_RANGE_UNSPECIFIED && Self.isFullRangeFormat(format)))
        if setup != wanted {
            sws_freeContext(context)
            setup = nil
            context = sws_getContext(picture.width, picture.height, format, picture.width, picture.height,
                                     AV_PIX_FMT_RGB24, SWS_BILINEAR, nil, nil, nil)
            guard let context else { return nil }
            // Source: the picture's matrix and range; destination: full-range RGB.
            _ = sws_setColorspaceDetails(context, sws_getCoefficients(wanted.matrix), wanted.fullRange ? 1 : 0,
                                         sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16)
            setup = wanted
        }
        guard let context else { return nil }
        var converted = true
        let samples = LargeBuffer.make(count: width * height * 3) { (output: UnsafeMutableBufferPointer<UInt8>) in
            let sources: [UnsafePointer<UInt8>?] = [
                UnsafePointer(picture.data.0), UnsafePointer(picture.data.1),
                UnsafePointer(picture.data.2), UnsafePointer(picture.data.3),
            ]
            let sourceStrides: [Int32] = [picture.linesize.0, picture.linesize.1, picture.linesize.2, picture.linesize.3]
            let destinations: [UnsafeMutablePointer<UInt8>?] = [output.baseAddress, nil, nil, nil]
            let destinationStrides: [Int32] = [Int32(width * 3), 0, 0, 0]
            let rows = sws_scale(context, sources, sourceStrides, 0, picture.height, destinations, destinationStrides)
            if rows != picture.height {
                converted = false
                output.update(repeating: 0)
            }
        }
        return converted ? ColorImage(width: width, height: height, channels: 3, samples: samples) : nil
    }

    /// libswscale's coefficient set for a stream's matrix.
    private static func matrix(_ space: AVColorSpace, defaultHD: Bool) -> Int32 {
        switch space {
        case AVCOL_SPC_BT709: SWS_CS_ITU709
        case AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M: SWS_CS_ITU601
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: SWS_CS_BT2020
        case AVCOL_SPC_SMPTE240M: SWS_CS_SMPTE240M
        case AVCOL_SPC_FCC: SWS_CS_FCC
        default: defaultHD ? SWS_CS_ITU709 : SWS_CS_ITU601
        }
    }

    /// The deprecated `yuvj` formats, full range by definition.
    private static func isFullRangeFormat(_ format: AVPixelFormat) -> Bool {
        [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUVJ440P, AV_PIX_FMT_YUVJ411P]
            .contains(format)
    }
}
