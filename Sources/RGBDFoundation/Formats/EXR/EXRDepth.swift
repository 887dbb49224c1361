import COpenEXR

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Reads depth maps stored as OpenEXR images: the `depth/N.exr` of Record3D's "EXR + JPG"
/// export (one float32 channel, meters, NaN where there is no depth, typically 256×192).
///
/// **Which channel.** The first of `Z` (OpenEXR's standard name for depth), `Y`, `R`
/// that the image has; failing those, its only channel. An image with several channels
/// and none of those names is refused, naming the channels it has.
///
/// **Pixels.** The channel may be float32 or half (converted exactly to Float); unsigned
/// integer channels and subsampled channels are refused. Values are kept as they are,
/// NaN and infinities included. Scanline and tiled images (the full-resolution level of
/// a mipmapped one) with any compression OpenEXRCore reads are accepted; of a multi-part
/// file, the first part.
///
/// **Windows.** The depth map covers the image's display window; the data window's
/// pixels are put at their place in it, and pixels of the display window outside the
/// data window are NaN (no depth). When the two windows are the same, as in every
/// Record3D file, the map is just the stored pixels.
///
/// **Bounds.** Both windows are checked against `InputLimits.maxDepthPixels` (16
/// megapixels) and the file's chunk table against the file's size before anything is
/// allocated for pixels. Every failure is an `RGBDError` of one line naming the file;
/// OpenEXRCore's own messages are captured, not printed.
package enum EXRDepth {
    /// The channel names taken as depth, in order of preference.
    package static let depthChannelNames = ["Z", "Y", "R"]

    /// The depth map of the EXR image at `path`.
    package static func read(path: String) throws -> DepthMap {
        let file = try EXRReadContext(path: path)
        return try file.readDepth()
    }
}

/// One OpenEXRCore read context: the C library's handle, the messages it reports, and the
/// few queries and decodes `EXRDepth` makes.
private final class EXRReadContext {
    /// The messages OpenEXRCore reports through its error handler (the last one is kept).
    final class Messages {
        var last: String?
    }

    package let path: String
    private var context: exr_context_t?
    /// Kept alive by this instance, which closes the context before it goes.
    private let messages = Messages()

    init(path: String) throws {
        self.path = path
        var initializer = rgbd_exr_default_initializer()
        initializer.user_data = Unmanaged.passUnretained(messages).toOpaque()
        initializer.error_handler_fn = { context, _, message in
            guard let context, let message else { return }
            var user: UnsafeMutableRawPointer?
            guard exr_get_user_data(context, &user) == 0, let user else { return }
            Unmanaged<Messages>.fromOpaque(user).takeUnretainedValue().last = String(cString: message)
        }
        // A file cut short is an error at read time, not patched up from what remains.
        initializer.flags |= Int32(EXR_CONTEXT_FLAG_DISABLE_CHUNK_RECONSTRUCTION)
        var opened: exr_context_t?
        let status = exr_start_read(&opened, path, &initializer)
        context = opened
        // (On a throw below, deinit closes the context.)
        guard status == 0, opened != nil else {
            if status == Self.code(EXR_ERR_FILE_ACCESS) {
                throw RGBDError(.io, file: path, "cannot open the file (\(messages.last == nil ? "no such file or no permission" : detail(status)))")
            }
            throw RGBDError(.invalidImage, file: path, "not an EXR image OpenEXR can read (\(detail(status)))")
        }
    }

    deinit {
        finish()
    }

    /// Closes the file (once).
    private func finish() {
        if context != nil { _ = exr_finish(&context) }
        context = nil
    }

    // MARK: Reading

    func readDepth() throws -> DepthMap {
        defer { finish() }
        guard let context else { throw failure("not an EXR image OpenEXR can read") }

        var storage = EXR_STORAGE_LAST_TYPE
        try check(exr_get_storage(context, 0, &storage), "cannot read its header")
        guard storage == EXR_STORAGE_SCANLINE || storage == EXR_STORAGE_TILED else {
            throw failure("a deep image, not a depth map")
        }

        var dataWindow = exr_attr_box2i_t(), displayWindow = exr_attr_box2i_t()
        try check(exr_get_data_window(context, 0, &dataWindow), "cannot read its data window")
        try check(exr_get_display_window(context, 0, &displayWindow), "cannot read its display window")
        let data = try Window(dataWindow, name: "data window", file: path)
        let display = try Window(displayWindow, name: "display window", file: path)

        let channel = try depthChannel(context)

        // The chunk offset table (8 bytes a chunk) must fit in the file.
        var chunks: Int32 = 0
        try check(exr_get_chunk_count(context, 0, &chunks), "cannot read its chunk count")
        var status = stat()
        guard stat(path, &status) == 0 else { throw RGBDError(.io, file: path, "cannot read the file's size") }
        guard chunks > 0, Int64(chunks) * 8 <= Int64(status.st_size) else {
            throw failure("truncated or corrupt (\(chunks) chunks claimed in a file of \(status.st_size) bytes)")
        }

        var output = DepthMap(width: display.width, height: display.height, channels: 1, repeating: .nan)
        let place: (Chunk, UnsafeBufferPointer<Float>) -> Void = { chunk, pixels in
            // Rows and columns of the chunk that fall inside the display window.
            let x0 = max(chunk.x, display.x), x1 = min(chunk.x + chunk.width, display.x + display.width)
            let y0 = max(chunk.y, display.y), y1 = min(chunk.y + chunk.height, display.y + display.height)
            guard x0 < x1, y0 < y1 else { return }
            output.samples.withUnsafeMutableBufferPointer { out in
                for y in y0..<y1 {
                    let from = (y - chunk.y) * chunk.width + (x0 - chunk.x)
                    let to = (y - display.y) * display.width + (x0 - display.x)
                    for i in 0..<(x1 - x0) { out[to + i] = pixels[from + i] }
                }
            }
        }
        var decoder = Decoder(context: context, channel: channel, owner: self)
        defer { decoder.destroy() }
        if storage == EXR_STORAGE_SCANLINE {
            var linesPerChunk: Int32 = 0
            try check(exr_get_scanlines_per_chunk(context, 0, &linesPerChunk), "cannot read its chunk size")
            guard linesPerChunk > 0 else { throw failure("corrupt (no lines per chunk)") }
            var y = data.y
            while y < data.y + data.height {
                var info = exr_chunk_info_t()
                try check(exr_read_scanline_chunk_info(context, 0, Int32(y), &info), "line \(y): truncated or corrupt")
                let chunk = Chunk(x: data.x, y: Int(info.start_y), width: Int(info.width), height: Int(info.height))
                try decoder.decode(info, chunk, location: "line \(y)", place)
                y = Int(info.start_y) + max(1, Int(info.height))
            }
        } else {
            var tileWidth: UInt32 = 0, tileHeight: UInt32 = 0
            var levelMode = EXR_TILE_LAST_TYPE, roundMode = EXR_TILE_ROUND_LAST_TYPE
            try check(exr_get_tile_descriptor(context, 0, &tileWidth, &tileHeight, &levelMode, &roundMode),
                      "cannot read its tile description")
            guard tileWidth > 0, tileHeight > 0 else { throw failure("corrupt (empty tiles)") }
            let columns = (data.width + Int(tileWidth) - 1) / Int(tileWidth)
            let rows = (data.height + Int(tileHeight) - 1) / Int(tileHeight)
            for row in 0..<rows {
                for column in 0..<columns {
                    var info = exr_chunk_info_t()
                    try check(exr_read_tile_chunk_info(context, 0, Int32(column), Int32(row), 0, 0, &info),
                              "tile \(column),\(row): truncated or corrupt")
                    let chunk = Chunk(x: data.x + column * Int(tileWidth), y: data.y + row * Int(tileHeight),
                                      width: Int(info.width), height: Int(info.height))
                    try decoder.decode(info, chunk, location: "tile \(column),\(row)", place)
                }
            }
        }
        return output
    }

    /// The name of the depth channel (the rule is `EXRDepth`'s), checked to hold float
    /// or half samples at full resolution.
    private func depthChannel(_ context: exr_context_t) throws -> String {
        var list: UnsafePointer<exr_attr_chlist_t>?
        try check(exr_get_channels(context, 0, &list), "cannot read its channel list")
        guard let list, list.pointee.num_channels > 0, let entries = list.pointee.entries else {
            throw failure("no channels")
        }
        let channels = (0..<Int(list.pointee.num_channels)).map { entries[$0] }
        func name(_ entry: exr_attr_chlist_entry_t) -> String {
            guard let text = entry.name.str, entry.name.length >= 0 else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: text, count: Int(entry.name.length)), as: UTF8.self)
        }
        let names = channels.map(name)
        let chosen: Int
        if let index = EXRDepth.depthChannelNames.lazy.compactMap({ names.firstIndex(of: $0) }).first {
            chosen = index
        } else if channels.count == 1 {
            chosen = 0
        } else {
            // Names come from the file: shown cleaned (no control characters, 24 at most)
            // and at most eight of them, so the message stays one short line.
            let listed = names.prefix(8).map { RGBDError.shown($0) }.joined(separator: ", ")
            let more = names.count > 8 ? " and \(names.count - 8) more" : ""
            throw failure("no depth channel (Z, Y, R or a single channel) among its channels \(listed)\(more)")
        }
        let entry = channels[chosen]
        guard entry.pixel_type == EXR_PIXEL_FLOAT || entry.pixel_type == EXR_PIXEL_HALF else {
            throw failure("channel \(RGBDError.shown(names[chosen])) holds integers, not float depth")
        }
        guard entry.x_sampling == 1, entry.y_sampling == 1 else {
            throw failure("channel \(RGBDError.shown(names[chosen])) is subsampled (\(entry.x_sampling)×\(entry.y_sampling))")
        }
        return names[chosen]
    }

    /// A rectangle of pixels in the image's coordinates.
    struct Chunk {
        var x: Int
        var y: Int
        var width: Int
        var height: Int
    }

    /// A header window, checked.
    struct Window {
        var x: Int
        var y: Int
        var width: Int
        var height: Int

        init(_ box: exr_attr_box2i_t, name: String, file: String) throws {
            let width = Int64(box.max.x) - Int64(box.min.x) + 1, height = Int64(box.max.y) - Int64(box.min.y) + 1
            guard width > 0, height > 0 else {
                throw RGBDError(.invalidImage, file: file, "corrupt (an empty \(name))")
            }
            guard width * height <= Int64(InputLimits.maxDepthPixels) else {
                throw RGBDError(.invalidImage, file: file,
                                "a \(name) of \(width)×\(height) pixels, over the depth limit of \(InputLimits.maxDepthPixels / 1_000_000) megapixels")
            }
            x = Int(box.min.x)
            y = Int(box.min.y)
            self.width = Int(width)
            self.height = Int(height)
        }
    }

    /// OpenEXRCore's decoding pipeline, kept over the chunks (its buffers are reused).
    struct Decoder {
        let context: exr_context_t
        let channel: String
        unowned let owner: EXRReadContext
        var pipeline = exr_decode_pipeline_t()
        var started = false
        /// The chunk's pixels as Float.
        var scratch: [Float] = []

        init(context: exr_context_t, channel: String, owner: EXRReadContext) {
            self.context = context
            self.channel = channel
            self.owner = owner
        }

        /// Decodes the chunk `info` describes and hands its pixels to `place`.
        mutating func decode(_ info: exr_chunk_info_t, _ chunk: Chunk, location: String,
                             _ place: (Chunk, UnsafeBufferPointer<Float>) -> Void) throws {
            guard chunk.width > 0, chunk.height > 0, chunk.width * chunk.height <= InputLimits.maxDepthPixels else {
                throw owner.failure("\(location): corrupt (a chunk of \(chunk.width)×\(chunk.height) pixels)")
            }
            var info = info
            if started {
                try owner.check(exr_decoding_update(context, 0, &info, &pipeline), "\(location): truncated or corrupt")
            } else {
                try owner.check(exr_decoding_initialize(context, 0, &info, &pipeline), "\(location): truncated or corrupt")
                started = true
            }
            let count = chunk.width * chunk.height
            if scratch.count < count { scratch = [Float](repeating: .nan, count: count) }
            try scratch.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                var found = false
                for index in 0..<Int(pipeline.channel_count) {
                    let name = pipeline.channels[index].channel_name.map { String(cString: $0) }
                    if name == channel, !found {
                        guard Int(pipeline.channels[index].width) == chunk.width,
                              Int(pipeline.channels[index].height) == chunk.height else {
                            throw owner.failure("\(location): corrupt (its size differs from the header's)")
                        }
                        pipeline.channels[index].decode_to_ptr = UnsafeMutableRawPointer(base)
                            .assumingMemoryBound(to: UInt8.self)
                        pipeline.channels[index].user_pixel_stride = 4
                        pipeline.channels[index].user_line_stride = Int32(chunk.width * 4)
                        pipeline.channels[index].user_bytes_per_element = 4
                        pipeline.channels[index].user_data_type = UInt16(EXR_PIXEL_FLOAT.rawValue)
                        found = true
                    } else {
                        pipeline.channels[index].decode_to_ptr = nil
                    }
                }
                guard found else { throw owner.failure("\(location): corrupt (channel \(RGBDError.shown(channel)) missing)") }
                try owner.check(exr_decoding_choose_default_routines(context, 0, &pipeline),
                                "\(location): cannot decode its compression")
                try owner.check(exr_decoding_run(context, 0, &pipeline), "\(location): truncated or corrupt")
                place(chunk, UnsafeBufferPointer(start: base, count: count))
            }
        }

        /// Frees the pipeline's buffers.
        mutating func destroy() {
            if started { _ = exr_decoding_destroy(context, &pipeline) }
            started = false
        }
    }

    // MARK: Errors

    /// Throws `what` (with OpenEXRCore's message) unless `status` is success.
    func check(_ status: exr_result_t, _ what: String) throws {
        guard status != 0 else { return }
        throw failure("\(what) (\(detail(status)))")
    }

    /// A one-line error about the file.
    func failure(_ message: String) -> RGBDError {
        RGBDError(.invalidImage, file: path, message)
    }

    /// OpenEXRCore's last message, else its words for `status`, on one line.
    private func detail(_ status: exr_result_t) -> String {
        let text = messages.last ?? exr_get_default_error_message(status).map { String(cString: $0) } ?? "error \(status)"
        messages.last = nil
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    private static func code(_ error: exr_error_code_t) -> exr_result_t {
        exr_result_t(error.rawValue)
    }
}
