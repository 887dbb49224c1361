import CFFmpeg

/// Converts FFmpeg's decoded pictures (any Y′CbCr layout and depth) to packed 8-bit RGB
/// with libswscale, honouring each picture's colour matrix and range.
///
/// The matrix is the picture's own (BT.709, BT.601, BT.2020, SMPTE 240M, FCC); when the
/// stream does not say, BT.709 for HD pictures and BT.601 for smaller ones (FFmpeg's
/// players assume the same). The range is limited (Y′ 16–235) unless the stream says
/// full, or uses one of the old full-range `yuvj` formats. The libswscale context is
/// kept while the pictures' format, size, matrix and range stay the same.
///
/// **Widths that are not a multiple of 16.** libswscale's fast x86 conversion of 4:2:0
/// and 4:2:2 pictures works in blocks of pixels and expects FFmpeg's padded buffers: into
/// a packed RGB image of such a width it writes past the rows' end (past the buffer on the
/// last row: heap corruption at 24 or 28 pixels across) or leaves the last pixels of each
/// row unwritten (18, 20, 36 across), with FFmpeg 5.1 (found by `Fuzz/FuzzVideo`). Those
/// pictures are converted into a padded scratch image whose rows are copied out, from
/// padded copies of a `YCbCrPicture`'s planes (one more copy of the frame, not
/// measured); widths that are multiples of 16 (Stray Scanner's
/// 1920 × 1440) are converted in place as before.
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
        return rgb(width: width, height: height) { rgb, stride in
            rgbd_sws_rgb_convert(context, frame, rgb, stride) == picture.height
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
        // Packed planes read as they are where the rows are whole blocks; else padded copies
        // (libswscale reads whole blocks, past a packed row's end).
        let padded = Self.needsPadding(width: width)
        let lumaStride = padded ? Self.paddedStride(width) : width
        let chromaStride = padded ? Self.paddedStride(picture.chromaWidth) : picture.chromaWidth
        let luma = padded ? Self.padded(picture.luma, width: width, height: height, stride: lumaStride) : picture.luma
        let cbPlane = padded ? Self.padded(picture.cb, width: picture.chromaWidth, height: picture.chromaHeight, stride: chromaStride) : picture.cb
        let crPlane = padded ? Self.padded(picture.cr, width: picture.chromaWidth, height: picture.chromaHeight, stride: chromaStride) : picture.cr
        return luma.withUnsafeBufferPointer { y in
            cbPlane.withUnsafeBufferPointer { cb in
                crPlane.withUnsafeBufferPointer { cr in
                    guard let y = y.baseAddress, let cb = cb.baseAddress, let cr = cr.baseAddress else { return nil }
                    let planes = [y, cb, cr]
                    let strides = [Int32(lumaStride), Int32(chromaStride), Int32(chromaStride)]
                    return rgb(width: width, height: height) { rgb, stride in
                        rgbd_sws_rgb_convert_planes(context, planes, strides, Int32(height), rgb, stride) == Int32(height)
                    }
                }
            }
        }
    }

    /// Whether rows of `width` pixels are converted through padded buffers (see the type).
    static func needsPadding(width: Int) -> Bool { width % 16 != 0 }

    /// A padded row of `count` samples: room for a whole block of 32 more, a multiple of 64.
    static func paddedStride(_ count: Int) -> Int { (count + 32 + 63) & ~63 }

    /// `plane` (`width × height`, packed) copied into rows of `stride`, with two rows of
    /// slack after the last (zeros).
    static func padded(_ plane: [UInt8], width: Int, height: Int, stride: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: stride * (height + 2))
        plane.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { destination in
                guard let from = source.baseAddress, let to = destination.baseAddress else { return }
                for row in 0..<height { (to + row * stride).update(from: from + row * width, count: width) }
            }
        }
        return out
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

    /// A `width × height` RGB image that `convert` fills, given where and the row stride in
    /// bytes: the image itself, or a padded scratch image copied out after (widths that
    /// are not a multiple of 16); nil when it fails.
    private func rgb(width: Int, height: Int, _ convert: (UnsafeMutablePointer<UInt8>, Int32) -> Bool) -> ColorImage? {
        var converted = true
        let row = width * 3
        let samples = LargeBuffer.make(count: row * height) { (output: UnsafeMutableBufferPointer<UInt8>) in
            guard let rgb = output.baseAddress else {
                converted = false
                return
            }
            if Self.needsPadding(width: width) {
                let stride = Self.paddedStride(row)
                var scratch = [UInt8](repeating: 0, count: stride * (height + 2))
                scratch.withUnsafeMutableBufferPointer { padded in
                    guard let base = padded.baseAddress, convert(base, Int32(stride)) else {
                        converted = false
                        return
                    }
                    for y in 0..<height { (rgb + y * row).update(from: base + y * stride, count: row) }
                }
            } else {
                converted = convert(rgb, Int32(row))
            }
            if !converted { output.update(repeating: 0) }
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
