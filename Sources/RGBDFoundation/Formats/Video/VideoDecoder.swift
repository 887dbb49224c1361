import CFFmpeg

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Reads a video file frame by frame, as 8-bit RGB: the `rgb.mp4` of a Stray Scanner
/// scan (HEVC, H.264 in older versions), frame `i` of which is frame `i` of the scan.
///
/// FFmpeg does the work: libavformat reads the container (MP4/QuickTime or Matroska, from
/// a local file only), libavcodec decodes on all cores (frame and slice threads, as many
/// as the machine has processors), and libswscale converts each picture's Y′CbCr to RGB
/// with the stream's own matrix and range (BT.709 for HD and BT.601 for smaller pictures
/// when the stream does not say; limited range unless it says full). `nextPicture` gives
/// 8-bit 4:2:0 pictures as their Y′CbCr planes instead, with that matrix and range
/// (`YCbCrPicture`), for a consumer that takes Y′CbCr (JPEG) or converts later.
///
/// Frames are refused over `maxPixels`. Every failure is an `RGBDError` of one line that
/// names the file (`scan/rgb.mp4: frame 37: truncated or corrupt (decoder said: …)`);
/// FFmpeg's own logging is switched off for the whole process (`av_log_set_level`), so
/// that the user sees that line and nothing else.
///
/// FFmpeg's libraries are not linked but loaded when the first video is opened
/// (`FFmpegLibraries`); without them, opening a video is an error saying what to install. A file cut short ends in such an error
/// (or, where the container lost its index, fails to open with `truncated: …`): at the end
/// of the file, fewer packets than the container listed is an error. (MP4 always lists
/// them; for a container that does not, a cut file gives a shorter sequence, whose length
/// is the number of frames `nextFrame` gave.)
///
/// An instance is not thread-safe: use it from one thread at a time.
package final class VideoDecoder {
    /// The largest frame decoded: 100 megapixels (an 8K frame has 33).
    package static let maxPixels = 100_000_000

    /// The path given, as errors name it.
    package let path: String
    /// Frame width in pixels (of the coded picture, before `rotationDegrees`).
    package let width: Int
    /// Frame height in pixels.
    package let height: Int
    /// The number of frames the container lists for the stream; nil when it does not say.
    package let frameCount: Int?
    /// The stream's average frame rate; nil when the container does not say.
    package let framesPerSecond: Double?
    /// FFmpeg's name of the codec: `hevc`, `h264`, …
    package let codecName: String
    /// The clockwise rotation (0, 90, 180 or 270; other angles rounded to the nearest degree)
    /// that the container's display matrix asks for when showing the frames: reported, not
    /// applied (iPhone videos shot upright say 90).
    package let rotationDegrees: Int

    /// FFmpeg's functions (loaded at first use).
    private let ff: rgbd_ffmpeg
    private let format: UnsafeMutablePointer<AVFormatContext>
    private let codec: UnsafeMutablePointer<AVCodecContext>
    private let packet: UnsafeMutablePointer<AVPacket>
    private let frame: UnsafeMutablePointer<AVFrame>
    private let streamIndex: Int32
    private let timeBase: AVRational
    private let converter = PictureConverter()

    /// The demuxer has reported the end of the file and the decoder has been told.
    private var draining = false
    /// The decoder has given its last frame.
    private var finished = false
    /// Packets of the video stream read since the start (or since the last seek, when
    /// `packetsReadIsAbsolute` is false).
    private var packetsRead = 0
    /// Whether `packetsRead` counts from the start of the file (no seek since).
    private var packetsReadIsAbsolute = true
    /// The index of the frame `nextFrame` gives next.
    private var nextIndex = 0
    /// `frame` holds a decoded frame that `nextFrame` must give before decoding more
    /// (left there by `seek`).
    private var holdingFrame = false
    /// Every frame's presentation timestamp, in order (built on the first seek).
    private var timeline: [Int64]?

    /// Opens the video at `path`, finds its video stream and opens a decoder for it that
    /// decodes on `threads` threads (frame and slice threads; default: as many as
    /// processors). With one thread the decoding of a damaged stream is reproducible:
    /// FFmpeg's frame threads conceal (and flag) errors depending on timing, so a damaged
    /// frame may be refused in one run and concealed in another (the fuzz target decodes
    /// on one thread; a sound stream gives the same frames either way).
    package init(path: String, threads: Int = Host.processorCount) throws {
        let ff = try FFmpegLibraries.load(for: path)
        self.ff = ff
        self.path = path
        // Owned here until the end of the initializer; freed by the defers on failure.
        var openedFormat: UnsafeMutablePointer<AVFormatContext>? = try Self.openContainer(path, ff)
        defer { ff.avformat_close_input(&openedFormat) }
        var openedCodec: UnsafeMutablePointer<AVCodecContext>?
        defer { ff.avcodec_free_context(&openedCodec) }
        var openedPacket: UnsafeMutablePointer<AVPacket>?
        defer { ff.av_packet_free(&openedPacket) }
        var openedFrame: UnsafeMutablePointer<AVFrame>?
        defer { ff.av_frame_free(&openedFrame) }
        guard let format = openedFormat else {
            throw RGBDError(.invalidImage, file: path, "not a video FFmpeg can read")
        }

        let found = ff.avformat_find_stream_info(format, nil)
        guard found >= 0 else {
            throw RGBDError(.invalidImage, file: path, "not a video FFmpeg can read (\(Self.describe(found, ff)))")
        }
        var decoder: UnsafePointer<AVCodec>?
        let best = ff.av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0)
        guard best >= 0, Int(best) < Int(format.pointee.nb_streams),
              let stream = format.pointee.streams[Int(best)], let parameters = stream.pointee.codecpar else {
            throw RGBDError(.invalidImage, file: path, "not a video FFmpeg can read (no video stream)")
        }
        let codecName = ff.avcodec_get_name(parameters.pointee.codec_id).map { String(cString: $0) } ?? "unknown"
        guard let decoder else {
            throw RGBDError(.invalidImage, file: path, "FFmpeg has no decoder for its \(codecName) video")
        }
        let width = Int(parameters.pointee.width), height = Int(parameters.pointee.height)
        guard width > 0, height > 0 else {
            throw RGBDError(.invalidImage, file: path, "not a video FFmpeg can read (no frame size)")
        }
        guard width <= Self.maxPixels, height <= Self.maxPixels, width * height <= Self.maxPixels else {
            throw RGBDError(.invalidImage, file: path,
                            "frames of \(width)×\(height) pixels, over the limit of \(Self.maxPixels / 1_000_000) megapixels")
        }
        // Other streams (audio, metadata) are skipped by the demuxer.
        for index in 0..<Int(format.pointee.nb_streams) where index != Int(best) {
            format.pointee.streams[index]?.pointee.discard = AVDISCARD_ALL
        }

        guard let context = ff.avcodec_alloc_context3(decoder) else {
            throw RGBDError(.io, file: path, "cannot start FFmpeg's \(codecName) decoder (out of memory)")
        }
        openedCodec = context
        var status = ff.avcodec_parameters_to_context(context, parameters)
        if status >= 0 {
            context.pointee.thread_count = Int32(max(1, min(threads, 64)))
            context.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
            context.pointee.max_pixels = Int64(Self.maxPixels)
            context.pointee.pkt_timebase = stream.pointee.time_base
            status = ff.avcodec_open2(context, decoder, nil)
        }
        guard status >= 0 else {
            throw RGBDError(.invalidImage, file: path,
                            "FFmpeg cannot decode its \(codecName) video (\(Self.describe(status, ff)))")
        }
        openedPacket = ff.av_packet_alloc()
        openedFrame = ff.av_frame_alloc()
        guard let packet = openedPacket, let frame = openedFrame else {
            throw RGBDError(.io, file: path, "cannot start FFmpeg's decoder (out of memory)")
        }

        self.format = format
        self.codec = context
        self.packet = packet
        self.frame = frame
        self.codecName = codecName
        self.width = width
        self.height = height
        streamIndex = best
        timeBase = stream.pointee.time_base
        frameCount = stream.pointee.nb_frames > 0 ? Int(stream.pointee.nb_frames) : nil
        let rate = stream.pointee.avg_frame_rate
        framesPerSecond = rate.num > 0 && rate.den > 0 ? Double(rate.num) / Double(rate.den) : nil
        rotationDegrees = Self.rotation(of: stream, ff)
        // Owned by the instance from here on (deinit frees them).
        openedFormat = nil
        openedCodec = nil
        openedPacket = nil
        openedFrame = nil
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        ff.av_frame_free(&frame)
        var packet: UnsafeMutablePointer<AVPacket>? = packet
        ff.av_packet_free(&packet)
        var codec: UnsafeMutablePointer<AVCodecContext>? = codec
        ff.avcodec_free_context(&codec)
        var format: UnsafeMutablePointer<AVFormatContext>? = format
        ff.avformat_close_input(&format)
    }

    /// The next frame as 8-bit RGB (3 channels, rows top to bottom, not rotated) and its
    /// presentation time in seconds, as the container gives it (in MP4 files the first
    /// frame's is usually 0; nil when there is none); nil at the end.
    package func nextFrame() throws -> (image: ColorImage, time: Double?)? {
        try next { try convertFrame() }.map { (image: $0.0, time: $0.1) }
    }

    /// The next frame as `nextFrame` gives it, but an 8-bit Y′CbCr 4:2:0 picture (FFmpeg's
    /// `yuv420p` or `yuvj420p`, what phones record) as its planes, copied out of FFmpeg's
    /// buffers, with the matrix and range its RGB would be made with; nil at the end.
    package func nextPicture() throws -> (frame: VideoFrame, time: Double?)? {
        try next { () throws -> VideoFrame in
            if let picture = try copyPicture() { return .ycbcr(picture) }
            return .rgb(try convertFrame())
        }.map { (frame: $0.0, time: $0.1) }
    }

    /// The next decoded frame made into a `T` by `take`, and its time; nil at the end.
    private func next<T>(_ take: () throws -> T) throws -> (T, Double?)? {
        if holdingFrame {
            holdingFrame = false
        } else {
            guard try decodeFrame() else { return nil }
        }
        defer {
            ff.av_frame_unref(frame)
            nextIndex += 1
        }
        let time = timeBase.den > 0
            ? Self.presentationTime(frame).map { Double($0) * Double(timeBase.num) / Double(timeBase.den) } : nil
        return (try take(), time)
    }

    /// Positions the decoder so that `nextFrame` gives frame `index` (counted from 0, in
    /// presentation order): the demuxer jumps to the nearest earlier keyframe and the
    /// frames in between are decoded and dropped.
    ///
    /// The first call reads the whole file's packets once (without decoding them) to
    /// learn each frame's timestamp, so that the index is exact in variable-frame-rate
    /// videos too.
    package func seek(toFrame index: Int) throws {
        guard index >= 0 else {
            throw RGBDError(.invalidArgument, file: path, "frame \(index): no such frame")
        }
        let times = try presentationTimeline()
        guard index < times.count else {
            throw RGBDError(.invalidArgument, file: path, "frame \(index): no such frame (the video has \(times.count))")
        }
        let target = times[index]
        // Start at the keyframe before the target; if the frames from there do not reach it
        // (open GOPs: leading pictures are dropped after a jump), start further back.
        var back = 0
        while true {
            let from = max(0, index - back)
            try jump(toTimestamp: times[from])
            while try decodeFrame() {
                guard let time = Self.presentationTime(frame) else { break }
                if time == target {
                    holdingFrame = true
                    nextIndex = index
                    return
                }
                ff.av_frame_unref(frame)
                if time > target { break }
            }
            guard from > 0 else {
                throw RGBDError(.invalidImage, file: path, "frame \(index): FFmpeg cannot decode it")
            }
            back = max(1, back * 4)
        }
    }

    // MARK: Decoding

    /// Decodes the next frame into `frame`; false at the end.
    private func decodeFrame() throws -> Bool {
        guard !finished else { return false }
        while true {
            let received = ff.avcodec_receive_frame(codec, frame)
            if received == 0 {
                if frame.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0 || frame.pointee.decode_error_flags != 0 {
                    ff.av_frame_unref(frame)
                    throw corrupt("the decoder marked it damaged")
                }
                return true
            }
            if received == rgbd_averror_eof() {
                finished = true
                if packetsReadIsAbsolute, let frameCount, packetsRead < frameCount {
                    throw RGBDError(.invalidImage, file: path,
                                    "truncated: the file ends after \(packetsRead) of its \(frameCount) frames")
                }
                return false
            }
            guard received == rgbd_averror_again() else {
                throw corrupt("decoder said: \(describe(received))")
            }
            if draining {
                // Unreachable in practice: a draining decoder ends with EOF, not EAGAIN.
                finished = true
                return false
            }
            let read = ff.av_read_frame(format, packet)
            if read == rgbd_averror_eof() {
                draining = true
                _ = ff.avcodec_send_packet(codec, nil)
                continue
            }
            guard read >= 0 else {
                throw corrupt("FFmpeg said: \(describe(read))")
            }
            defer { ff.av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            packetsRead += 1
            if packet.pointee.flags & AV_PKT_FLAG_CORRUPT != 0 {
                throw corrupt("its data is cut short")
            }
            let sent = ff.avcodec_send_packet(codec, packet)
            guard sent >= 0 || sent == rgbd_averror_again() else {
                throw corrupt("decoder said: \(describe(sent))")
            }
        }
    }

    /// The error for a frame the file does not give whole.
    private func corrupt(_ detail: String) -> RGBDError {
        RGBDError(.invalidImage, file: path, location: "frame \(nextIndex)", "truncated or corrupt (\(detail))")
    }

    /// Converts `frame` to RGB.
    private func convertFrame() throws -> ColorImage {
        try checkSize()
        guard let image = converter.convert(frame, defaultHD: defaultHD) else {
            throw RGBDError(.invalidImage, file: path, location: "frame \(nextIndex)",
                            "FFmpeg cannot convert its pixel format to RGB")
        }
        return image
    }

    /// `frame`'s planes, when it is 8-bit Y′CbCr 4:2:0; nil for other pixel formats.
    private func copyPicture() throws -> YCbCrPicture? {
        try checkSize()
        let pixels = frame.pointee
        guard pixels.format == AV_PIX_FMT_YUV420P.rawValue || pixels.format == AV_PIX_FMT_YUVJ420P.rawValue,
              let y = pixels.data.0, let cb = pixels.data.1, let cr = pixels.data.2 else { return nil }
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        guard Int(pixels.linesize.0) >= width, Int(pixels.linesize.1) >= chromaWidth,
              Int(pixels.linesize.2) >= chromaWidth else { return nil }
        let setup = PictureConverter.setup(of: frame, defaultHD: defaultHD)
        func plane(_ source: UnsafeMutablePointer<UInt8>, stride: Int32, width: Int, height: Int) -> [UInt8] {
            LargeBuffer.make(count: width * height) { (out: UnsafeMutableBufferPointer<UInt8>) in
                guard let out = out.baseAddress else { return }
                for row in 0..<height {
                    (out + row * width).update(from: source + row * Int(stride), count: width)
                }
            }
        }
        return YCbCrPicture(width: width, height: height,
                            luma: plane(y, stride: pixels.linesize.0, width: width, height: height),
                            cb: plane(cb, stride: pixels.linesize.1, width: chromaWidth, height: chromaHeight),
                            cr: plane(cr, stride: pixels.linesize.2, width: chromaWidth, height: chromaHeight),
                            pixelFormat: setup.format, colorspace: setup.colorspace, fullRange: setup.fullRange)
    }

    /// Throws unless `frame` has the video's size.
    private func checkSize() throws {
        let pixels = frame.pointee
        guard Int(pixels.width) == width, Int(pixels.height) == height else {
            throw RGBDError(.invalidImage, file: path, location: "frame \(nextIndex)",
                            "\(pixels.width)×\(pixels.height) pixels, unlike the video's \(width)×\(height)")
        }
    }

    /// Whether streams that do not name their matrix are read as BT.709 (HD) rather than
    /// BT.601.
    private var defaultHD: Bool { width >= 1280 || height > 576 }

    /// The frame's presentation timestamp (FFmpeg's best guess), in the stream's time base.
    private static func presentationTime(_ frame: UnsafeMutablePointer<AVFrame>) -> Int64? {
        let time = frame.pointee.best_effort_timestamp
        return time == rgbd_av_nopts() ? nil : time
    }

    // MARK: Seeking

    /// Moves the demuxer to the keyframe at or before `timestamp` and empties the decoder.
    private func jump(toTimestamp timestamp: Int64) throws {
        ff.av_frame_unref(frame)
        holdingFrame = false
        let status = ff.av_seek_frame(format, streamIndex, timestamp, AVSEEK_FLAG_BACKWARD)
        guard status >= 0 else {
            throw RGBDError(.invalidImage, file: path, "cannot seek in the video (\(describe(status)))")
        }
        ff.avcodec_flush_buffers(codec)
        draining = false
        finished = false
        packetsRead = 0
        // (A truncated file was caught when the timeline was read.)
        packetsReadIsAbsolute = false
    }

    /// Every frame's presentation timestamp in increasing order, read once from the
    /// file's packets through a second demuxer (this one's position is untouched).
    private func presentationTimeline() throws -> [Int64] {
        if let timeline { return timeline }
        let scan = try Self.openContainer(path, ff)
        defer {
            var f: UnsafeMutablePointer<AVFormatContext>? = scan
            ff.avformat_close_input(&f)
        }
        guard Int(streamIndex) < Int(scan.pointee.nb_streams) else {
            throw RGBDError(.invalidImage, file: path, "not a video FFmpeg can read (its streams changed)")
        }
        for index in 0..<Int(scan.pointee.nb_streams) where index != Int(streamIndex) {
            scan.pointee.streams[index]?.pointee.discard = AVDISCARD_ALL
        }
        guard let packet = ff.av_packet_alloc() else {
            throw RGBDError(.io, file: path, "cannot read the video (out of memory)")
        }
        defer {
            var p: UnsafeMutablePointer<AVPacket>? = packet
            ff.av_packet_free(&p)
        }
        var times: [Int64] = []
        while true {
            let read = ff.av_read_frame(scan, packet)
            if read == rgbd_averror_eof() { break }
            guard read >= 0 else {
                throw RGBDError(.invalidImage, file: path, location: "frame \(times.count)",
                                "truncated or corrupt (FFmpeg said: \(describe(read)))")
            }
            defer { ff.av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex,
                  packet.pointee.flags & AV_PKT_FLAG_DISCARD == 0 else { continue }
            guard packet.pointee.pts != rgbd_av_nopts() else {
                throw RGBDError(.invalidImage, file: path, location: "frame \(times.count)",
                                "has no timestamp, so frames cannot be found by number")
            }
            times.append(packet.pointee.pts)
        }
        times.sort()
        if let frameCount, times.count < frameCount {
            throw RGBDError(.invalidImage, file: path,
                            "truncated: the file ends after \(times.count) of its \(frameCount) frames")
        }
        timeline = times
        return times
    }

    // MARK: FFmpeg

    /// The demuxers accepted: MP4/QuickTime (iPhone apps write these) and Matroska.
    /// FFmpeg's other readers (playlists, image sequences, network streams) are refused,
    /// so that a file named like a video cannot make FFmpeg open other files or URLs.
    private static let formats = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm"

    /// Opens the container at `path` (a local file, one of `formats`).
    private static func openContainer(_ path: String, _ ff: rgbd_ffmpeg) throws -> UnsafeMutablePointer<AVFormatContext> {
        var options: OpaquePointer?
        _ = ff.av_dict_set(&options, "protocol_whitelist", "file", 0)
        _ = ff.av_dict_set(&options, "format_whitelist", formats, 0)
        defer { ff.av_dict_free(&options) }
        var context: UnsafeMutablePointer<AVFormatContext>?
        // The `file:` prefix keeps a colon in the path from naming another protocol.
        let status = ff.avformat_open_input(&context, "file:" + path, nil, &options)
        guard status >= 0, let context else {
            if status == rgbd_averror_no_entry() {
                throw RGBDError(.io, file: path, "no such file")
            }
            if status == rgbd_averror_access() {
                throw RGBDError(.io, file: path, "cannot open (permission denied)")
            }
            if let truncation = truncation(path) {
                throw RGBDError(.invalidImage, file: path, truncation)
            }
            if status == rgbd_averror_invalid() {
                // What the format whitelist answers for any other kind of file.
                throw RGBDError(.invalidImage, file: path, "not a video FFmpeg can read (not MP4, QuickTime or Matroska)")
            }
            throw RGBDError(.invalidImage, file: path, "not a video FFmpeg can read (\(describe(status, ff)))")
        }
        return context
    }

    /// Why an MP4/QuickTime file is unreadable, when its top-level boxes tell: media data
    /// (`mdat`) without the index (`moov`) that its writer adds when it finishes, as an
    /// app stopped in the middle of recording leaves it, or an index cut short. Reads
    /// only the top-level box headers; nil when neither.
    static func truncation(_ path: String) -> String? {
        guard let (descriptor, size) = try? FileSystem.openRegularFile(path), size > 0 else { return nil }
        defer { FileSystem.closeFile(descriptor) }
        let end = UInt64(size)
        var types: Set<String> = []
        var indexCut = false
        var offset: UInt64 = 0
        var header = [UInt8](repeating: 0, count: 16)
        var boxes = 0
        while offset < end, boxes < 100_000 {
            boxes += 1
            guard offset <= UInt64(Int.max),
                  let count = try? header.withUnsafeMutableBytes({ try FileSystem.readAt(descriptor, offset: Int(offset), into: $0, path: path) }),
                  count >= 8 else { break }
            func number(_ range: Range<Int>) -> UInt64 { header[range].reduce(0) { $0 << 8 | UInt64($1) } }
            let type = String(decoding: header[4..<8], as: UTF8.self)
            types.insert(type)
            var size = number(0..<4)
            if size == 1 {
                guard count >= 16 else { break }
                size = number(8..<16)
            }
            if size == 0 { size = end - offset }  // to the end of the file
            guard size >= 8 else { break }
            let (next, overflow) = offset.addingReportingOverflow(size)
            if type == "moov", overflow || next > end { indexCut = true }
            guard !overflow else { break }
            offset = next
        }
        guard types.contains("ftyp") || types.contains("moov") || types.contains("mdat") else { return nil }
        if indexCut { return "truncated: its index (moov box) is cut short" }
        if types.contains("mdat"), !types.contains("moov") {
            return "truncated: media data without its index (no moov box; the recording was not finished)"
        }
        return nil
    }

    /// FFmpeg's words for an error code.
    private func describe(_ code: Int32) -> String {
        Self.describe(code, ff)
    }

    /// FFmpeg's words for an error code.
    static func describe(_ code: Int32, _ ff: rgbd_ffmpeg) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        guard ff.av_strerror(code, &buffer, buffer.count) == 0 else { return "error \(code)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The clockwise display rotation of the stream's display matrix, in [0, 360).
    private static func rotation(of stream: UnsafeMutablePointer<AVStream>, _ ff: rgbd_ffmpeg) -> Int {
        guard let matrix = rgbd_display_matrix(stream) else { return 0 }
        // av_display_rotation_get gives the counterclockwise angle, in (-180, 180].
        let counterclockwise = ff.av_display_rotation_get(matrix)
        guard counterclockwise.isFinite else { return 0 }
        let degrees = Int((-counterclockwise).rounded())
        return ((degrees % 360) + 360) % 360
    }
}
