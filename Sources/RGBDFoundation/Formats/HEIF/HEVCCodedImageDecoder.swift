import CDE265
import CFFmpeg

/// One HEVC decoder that turns coded HEIF images (a tile, or a whole plain image) into
/// 4:2:0 pictures, one image at a time. An instance is used by one thread at a time; the
/// tiles of a grid are spread over several instances (`HEVCImageDecoder`).
///
/// Two implementations decode the same standard, and a conforming HEVC decoder's output
/// is exact, so they give the same pixels (tested): FFmpeg's libavcodec, which runs far
/// fewer instructions than libde265 on iPhone photos (its x86 assembly for the
/// transforms, prediction and loop filters; BENCHMARKS.md, "Real iPhone photos"), and libde265, used where FFmpeg's decoder
/// cannot be started.
protocol HEVCCodedImageDecoder: AnyObject {
    /// Decodes `image` and hands its picture to `use` while the picture is valid.
    func decode(_ image: HEIFItems.CodedImage, _ use: (HEVCPicture) throws -> Void) throws
}

/// A decoded 8-bit 4:2:0 picture's planes (owned by the decoder that made it).
struct HEVCPicture {
    let y: UnsafePointer<UInt8>
    let cb: UnsafePointer<UInt8>
    let cr: UnsafePointer<UInt8>
    let yStride: Int
    let cbStride: Int
    let crStride: Int
}

/// Why a coded image could not be decoded (wrapped into an `RGBDError` by the caller).
struct HEVCDecodeError: Error, CustomStringConvertible {
    var description: String
}

extension HEIFItems.CodedImage {
    /// Calls `nal` with each NAL unit of the item's data (length-prefixed).
    func forEachNAL(_ nal: (ArraySlice<UInt8>) throws -> Void) throws {
        var c = data.startIndex
        let end = data.endIndex
        while c < end {
            guard end - c >= lengthSize else { throw HEVCDecodeError(description: "truncated NAL length") }
            var length = 0
            for i in 0..<lengthSize { length = length << 8 | Int(data[c + i]) }
            c += lengthSize
            guard length <= end - c else { throw HEVCDecodeError(description: "a NAL unit runs past the item's data") }
            try nal(data[c..<c + length])
            c += length
        }
    }
}

/// libavcodec's HEVC decoder, reused from image to image (drained and flushed between
/// them). Each image goes in as one Annex B packet: its parameter sets, then its NAL units,
/// each after a start code (the NAL units keep their emulation-prevention bytes, so this
/// is the same stream).
final class FFmpegHEVCDecoder: HEVCCodedImageDecoder {
    private let ff: rgbd_ffmpeg
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?

    /// A decoder with `threads` slice threads (for a single image coded in slices or
    /// wavefronts; 1 for tiles, which are spread over the cores instead).
    init(threads: Int) throws {
        guard let table = rgbd_ffmpeg_load() else {
            throw HEVCDecodeError(description: "FFmpeg's libraries cannot be loaded: \(String(cString: rgbd_ffmpeg_failure()))")
        }
        let ff = table.pointee
        self.ff = ff
        guard let codec = ff.avcodec_find_decoder(AV_CODEC_ID_HEVC) else {
            throw HEVCDecodeError(description: "FFmpeg has no HEVC decoder")
        }
        guard let context = ff.avcodec_alloc_context3(codec), let packet = ff.av_packet_alloc(),
              let frame = ff.av_frame_alloc() else {
            throw HEVCDecodeError(description: "cannot start FFmpeg's HEVC decoder (out of memory)")
        }
        self.context = context
        self.packet = packet
        self.frame = frame
        context.pointee.thread_count = Int32(max(1, threads))
        context.pointee.thread_type = FF_THREAD_SLICE
        context.pointee.max_pixels = Int64(JPEGCodec.trialDecodePixels)
        // A damaged stream is an error (the file then goes to libheif, which says what
        // is wrong), not a picture with the damage concealed.
        context.pointee.err_recognition |= AV_EF_EXPLODE | AV_EF_CRCCHECK
        guard ff.avcodec_open2(context, codec, nil) >= 0 else {
            throw HEVCDecodeError(description: "cannot open FFmpeg's HEVC decoder")
        }
    }

    deinit {
        ff.av_frame_free(&frame)
        ff.av_packet_free(&packet)
        ff.avcodec_free_context(&context)
    }

    func decode(_ image: HEIFItems.CodedImage, _ use: (HEVCPicture) throws -> Void) throws {
        guard let context, let packet, let frame else { throw HEVCDecodeError(description: "decoder closed") }
        var size = 0
        for set in image.parameterSets { size += 4 + set.count }
        try image.forEachNAL { size += 4 + $0.count }
        guard size <= Int(Int32.max) - 64 else { throw HEVCDecodeError(description: "an image too large") }
        guard ff.av_new_packet(packet, Int32(size)) >= 0, let bytes = packet.pointee.data else {
            throw HEVCDecodeError(description: "out of memory")
        }
        var c = bytes
        func append(_ nal: ArraySlice<UInt8>) {
            c[0] = 0; c[1] = 0; c[2] = 0; c[3] = 1
            c += 4
            nal.withUnsafeBufferPointer { nal in
                if let base = nal.baseAddress { c.update(from: base, count: nal.count) }
            }
            c += nal.count
        }
        for set in image.parameterSets { append(set) }
        try image.forEachNAL(append)
        defer {
            ff.av_frame_unref(frame)
            ff.avcodec_flush_buffers(context)
        }
        var status = ff.avcodec_send_packet(context, packet)
        ff.av_packet_unref(packet)
        if status >= 0 { status = ff.avcodec_send_packet(context, nil) }
        if status >= 0 { status = ff.avcodec_receive_frame(context, frame) }
        guard status >= 0 else {
            throw HEVCDecodeError(description: status == rgbd_averror_eof() ? "FFmpeg decoded no picture"
                                                                             : VideoDecoder.describe(status, ff))
        }
        let format = frame.pointee.format
        guard format == AV_PIX_FMT_YUV420P.rawValue || format == AV_PIX_FMT_YUVJ420P.rawValue,
              frame.pointee.decode_error_flags == 0, frame.pointee.flags & AV_FRAME_FLAG_CORRUPT == 0,
              Int(frame.pointee.width) == image.width, Int(frame.pointee.height) == image.height,
              let y = frame.pointee.data.0, let cb = frame.pointee.data.1, let cr = frame.pointee.data.2 else {
            throw HEVCDecodeError(description: "FFmpeg decoded a picture unlike the item's header")
        }
        try use(HEVCPicture(y: y, cb: cb, cr: cr, yStride: Int(frame.pointee.linesize.0),
                            cbStride: Int(frame.pointee.linesize.1), crStride: Int(frame.pointee.linesize.2)))
    }
}

/// libde265, a new decoder per image (`threads` > 1: its worker threads, for wavefronts).
final class LibDE265Decoder: HEVCCodedImageDecoder {
    private let threads: Int

    init(threads: Int) {
        self.threads = threads
    }

    func decode(_ image: HEIFItems.CodedImage, _ use: (HEVCPicture) throws -> Void) throws {
        guard let decoder = de265_new_decoder() else { throw HEVCDecodeError(description: "cannot start libde265") }
        defer { de265_free_decoder(decoder) }
        if threads > 1 { _ = de265_start_worker_threads(decoder, Int32(threads)) }
        func check(_ status: de265_error) throws {
            guard de265_isOK(status) != 0 else {
                throw HEVCDecodeError(description: de265_get_error_text(status).map { String(cString: $0) } ?? "libde265 error")
            }
        }
        func push(_ nal: ArraySlice<UInt8>) throws {
            guard nal.count <= Int(Int32.max) else { throw HEVCDecodeError(description: "a NAL unit too large") }
            try nal.withUnsafeBytes { try check(de265_push_NAL(decoder, $0.baseAddress, Int32($0.count), 0, nil)) }
        }
        for set in image.parameterSets { try push(set) }
        try image.forEachNAL(push)
        try check(de265_flush_data(decoder))
        var more: Int32 = 1
        while more != 0 {
            let status = de265_decode(decoder, &more)
            if status == DE265_ERROR_WAITING_FOR_INPUT_DATA { break }
            try check(status)
            if de265_peek_next_picture(decoder) != nil { break }
        }
        guard let picture = de265_get_next_picture(decoder) else {
            throw HEVCDecodeError(description: "libde265 decoded no picture")
        }
        defer { de265_release_next_picture(decoder) }
        guard de265_get_chroma_format(picture) == de265_chroma_420,
              de265_get_bits_per_pixel(picture, 0) == 8, de265_get_bits_per_pixel(picture, 1) == 8,
              Int(de265_get_image_width(picture, 0)) == image.width,
              Int(de265_get_image_height(picture, 0)) == image.height else {
            throw HEVCDecodeError(description: "libde265 decoded a picture unlike the item's header")
        }
        var strides: [Int32] = [0, 0, 0]
        guard let y = de265_get_image_plane(picture, 0, &strides[0]),
              let cb = de265_get_image_plane(picture, 1, &strides[1]),
              let cr = de265_get_image_plane(picture, 2, &strides[2]) else {
            throw HEVCDecodeError(description: "libde265 returned no planes")
        }
        try use(HEVCPicture(y: y, cb: cb, cr: cr, yStride: Int(strides[0]), cbStride: Int(strides[1]),
                            crStride: Int(strides[2])))
    }
}
