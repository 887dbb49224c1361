import CPNG
import Dispatch

/// PNG encoding and decoding.
///
/// Encoding is rgbd's own and multi-threaded: the rows are cut into strips of a fixed
/// size (so the bytes written do not depend on the number of processors), each strip is
/// filtered and deflated on its own thread into a raw deflate stream ending on a byte
/// boundary (`Z_SYNC_FLUSH`), and the strips are joined pigz-style into one zlib stream
/// (header, strips, Adler-32 combined from the strips' own). libpng writes the file
/// around it: signature, IHDR, one IDAT chunk per strip, IEND. Decoding is libpng's
/// simplified API (`png_image_*`).
public enum PNGCodec {
    /// How hard the encoder works to make the file small.
    public enum Effort: Sendable {
        /// The Paeth filter on every row; photo strips coded Huffman-only (rgbd's own
        /// coder, `HuffmanDeflater`), flat strips and 16-bit images with zlib level 1
        /// and the `Z_RLE` strategy: the command-line default.
        case fast
        /// Per strip of rows, the smaller of two encodings: a filter chosen per row
        /// (least sum of absolute differences, as libpng does) with level 1 and `Z_RLE`,
        /// and no filter with level 6 and the default strategy (which wins on flat or
        /// synthetic content and on depth maps). About 6 times slower than `fast`; on a
        /// noisy photo only 0.6% smaller, on a depth map 18% smaller.
        case small
    }

    /// Encodes an 8-bit RGB image.
    ///
    /// The same image and effort always give the same bytes. Throws if the image is
    /// empty or too large for PNG.
    public static func encodeRGB(_ image: ColorImage, effort: Effort = .fast) throws -> [UInt8] {
        precondition(image.channels == 3, "encodeRGB takes RGB images")
        return try image.samples.withUnsafeBufferPointer { samples in
            try encode(Scanlines(source: .bytes(samples.baseAddress), width: image.width, height: image.height,
                                 bytesPerPixel: 3),
                       rgb: true, effort: effort)
        }
    }

    /// Encodes a 16-bit grayscale image: `samples` (`width * height` values, row by
    /// row) are written as given, most significant byte first as PNG requires.
    ///
    /// The same image and effort always give the same bytes. Throws if the image is
    /// empty or too large for PNG.
    public static func encodeGray16(width: Int, height: Int, samples: [UInt16], effort: Effort = .fast) throws -> [UInt8] {
        precondition(width >= 0 && height >= 0 && samples.count == width * height,
                     "sample count does not match the shape")
        return try samples.withUnsafeBufferPointer { samples in
            try encode(Scanlines(source: .samples16(samples.baseAddress), width: width, height: height,
                                 bytesPerPixel: 2),
                       rgb: false, effort: effort)
        }
    }

    /// Filtered bytes (rows with their filter-type byte) per strip.
    ///
    /// Fixed, not derived from the processor count, so that the output is the same on
    /// every machine (which is also why `RowScheduler`, whose band sizes depend on the
    /// processor count, is not used). From 64 KiB to 512 KiB the time on the 4032×3024
    /// photo was the same within noise (150-220 ms on 2 cores) and the size within 0.1%;
    /// a 4032-pixel RGB row is 12 KB, so its 3024 rows make 144 strips.
    static let stripBytes = 256 * 1024

    private static func encode(_ lines: Scanlines, rgb: Bool, effort: Effort) throws -> [UInt8] {
        let limit = Int(Int32.max)  // PNG's 2^31 - 1
        guard lines.width > 0, lines.height > 0, lines.width <= limit, lines.height <= limit else {
            throw RGBDError(.invalidImage, "cannot encode PNG: a \(lines.width)×\(lines.height) image")
        }
        let candidates = Candidate.all(for: effort, photo: rgb)
        // zlib header: deflate with a 32 KiB window; FLEVEL (informative) fastest or
        // default; the check bits make the 16-bit value a multiple of 31.
        let zlibHeader: [UInt8] = effort == .fast ? [0x78, 0x01] : [0x78, 0x9C]
        let rowsPerStrip = max(1, stripBytes / (lines.rowBytes + 1))
        let stripCount = (lines.height + rowsPerStrip - 1) / rowsPerStrip

        let slots = UnsafeMutableBufferPointer<Result<any StripDeflater, any Error>?>.allocate(capacity: stripCount)
        slots.initialize(repeating: nil)
        defer {
            slots.deinitialize()
            slots.deallocate()
        }
        // Each iteration writes only its own slot, and the slots are read only after
        // concurrentPerform has returned; `lines` points into memory that outlives it.
        nonisolated(unsafe) let results = slots
        nonisolated(unsafe) let source = lines
        DispatchQueue.concurrentPerform(iterations: stripCount) { strip in
            let start = strip * rowsPerStrip
            let rows = start..<min(source.height, start + rowsPerStrip)
            results[strip] = Result {
                try encodeStrip(source, rows: rows, candidates: candidates,
                                prefix: strip == 0 ? zlibHeader : [], reserve: strip == stripCount - 1 ? 4 : 0)
            }
        }
        var strips: [any StripDeflater] = []
        strips.reserveCapacity(stripCount)
        for slot in slots {
            guard let slot else { preconditionFailure("concurrentPerform skipped an iteration") }
            strips.append(try slot.get())
        }
        guard let first = strips.first, let last = strips.last else { preconditionFailure("no strips") }

        // zlib trailer: the Adler-32 of all the filtered bytes, most significant byte first.
        var adler = first.adler
        for strip in strips.dropFirst() {
            adler = rgbd_adler32_combine(adler, strip.adler, Int64(strip.inputCount))
        }
        last.appendReserved([UInt8(truncatingIfNeeded: adler >> 24), UInt8(truncatingIfNeeded: adler >> 16),
                             UInt8(truncatingIfNeeded: adler >> 8), UInt8(truncatingIfNeeded: adler)])

        let segments: [UnsafePointer<UInt8>?] = strips.map { UnsafePointer($0.buffer) }
        let sizes: [Int] = strips.map(\.count)
        // Signature 8, IHDR 25, 12 per chunk besides its data; the slack is for any
        // ancillary chunk libpng might add.
        let capacity = 8 + 25 + sizes.reduce(0) { $0 + 12 + $1 } + 12 + 1024
        var message = [CChar](repeating: 0, count: 256)
        var status: Int32 = 0
        let file = [UInt8](unsafeUninitializedCapacity: capacity) { output, count in
            LargeBuffer.adviseHugePages(UnsafeMutableRawBufferPointer(output))
            var written = 0
            status = rgbd_png_write_container(UInt32(lines.width), UInt32(lines.height), rgb ? 8 : 16,
                                              rgb ? 1 : 0, segments, sizes, segments.count,
                                              output.baseAddress, capacity, &written, &message, message.count)
            count = status == 0 ? written : 0
        }
        withExtendedLifetime(strips) {}
        guard status == 0 else {
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw RGBDError(.invalidImage, text.isEmpty ? "cannot encode PNG" : "cannot encode PNG: \(text)")
        }
        return file
    }

    /// Filters and deflates `rows` with every candidate and keeps the smallest output
    /// (the first on a tie). The output starts with `prefix` and has room for `reserve`
    /// more bytes; it ends with `Z_SYNC_FLUSH`, or `Z_FINISH` for the image's last row.
    private static func encodeStrip(_ lines: Scanlines, rows: Range<Int>, candidates: [Candidate],
                                    prefix: [UInt8], reserve: Int) throws -> any StripDeflater {
        let rowBytes = lines.rowBytes
        let filteredBytes = rows.count * (rowBytes + 1)
        // Scratch: a zero row (above the first), two raw rows (16-bit samples are
        // byte-swapped into them), and a filtered row per filter type.
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 3 * rowBytes + 5 * (rowBytes + 1))
        defer { scratch.deallocate() }
        scratch.initialize(repeating: 0, count: 3 * rowBytes + 5 * (rowBytes + 1))
        let zeroRow = UnsafePointer(scratch)
        let rawRows = [scratch + rowBytes, scratch + 2 * rowBytes]
        let filtered = (0..<5).map { scratch + 3 * rowBytes + $0 * (rowBytes + 1) }

        // The first row of a strip is filtered against the image row above it, as in
        // a single stream; row y is converted into rawRows[y & 1].
        var previous = rows.lowerBound == 0
            ? zeroRow : lines.row(rows.lowerBound - 1, scratch: rawRows[(rows.lowerBound - 1) & 1])
        // `huffmanUnlessFlat`: if most of the strip's first Paeth-filtered row is zero
        // (flat or synthetic content), Z_RLE; otherwise (photographs) Z_HUFFMAN_ONLY.
        var flat = false
        if candidates.contains(where: { $0.strategy == Candidate.huffmanUnlessFlat }) {
            let first = lines.row(rows.lowerBound, scratch: rawRows[rows.lowerBound & 1])
            let probe = filtered[Int(RowFilter.paeth.rawValue)] + 1
            RowFilter.apply(.paeth, first, previous, probe, rowBytes, lines.bytesPerPixel)
            var zeros = 0
            for i in 0..<rowBytes where probe[i] == 0 { zeros += 1 }
            flat = 2 * zeros > rowBytes
        }
        let deflaters = try candidates.map { candidate -> any StripDeflater in
            let strategy = candidate.strategy != Candidate.huffmanUnlessFlat ? candidate.strategy
                : flat ? Z_RLE : Z_HUFFMAN_ONLY
            // zlib's Huffman-only coding, done by rgbd's own coder (the same kind of
            // stream, several times faster).
            if strategy == Z_HUFFMAN_ONLY {
                return HuffmanDeflater(expectedInput: filteredBytes, prefix: prefix, reserve: reserve)
            }
            return try Deflater(level: candidate.level, strategy: strategy, expectedInput: filteredBytes,
                                prefix: prefix, reserve: reserve)
        }
        for y in rows {
            let current = lines.row(y, scratch: rawRows[y & 1])
            for (candidate, deflater) in zip(candidates, deflaters) {
                let type: RowFilter
                switch candidate.filter {
                case .fixed(let fixed):
                    type = fixed
                    RowFilter.apply(fixed, current, previous, filtered[Int(fixed.rawValue)] + 1, rowBytes, lines.bytesPerPixel)
                case .adaptive:
                    type = RowFilter.adaptive(current, previous, filtered, rowBytes, lines.bytesPerPixel)
                }
                let row = filtered[Int(type.rawValue)]
                row[0] = type.rawValue
                try deflater.write(row, count: rowBytes + 1)
            }
            previous = current
        }
        var best = 0
        for (index, deflater) in deflaters.enumerated() {
            try deflater.finish(last: rows.upperBound == lines.height)
            if deflater.count < deflaters[best].count { best = index }
        }
        return deflaters[best]
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

/// The PNG scanlines of an image, as bytes: 8-bit samples as stored, 16-bit ones
/// most significant byte first.
private struct Scanlines {
    enum Source {
        case bytes(UnsafePointer<UInt8>?)
        case samples16(UnsafePointer<UInt16>?)
    }

    let source: Source
    let width: Int
    let height: Int
    let bytesPerPixel: Int
    var rowBytes: Int { width * bytesPerPixel }

    /// Row `y`'s bytes: in the image itself, or converted into `scratch` (`rowBytes`).
    func row(_ y: Int, scratch: UnsafeMutablePointer<UInt8>) -> UnsafePointer<UInt8> {
        switch source {
        case .bytes(let base):
            guard let base else { return UnsafePointer(scratch) }
            return base + y * rowBytes
        case .samples16(let base):
            guard let base else { return UnsafePointer(scratch) }
            let samples = base + y * width
            for x in 0..<width {
                let value = samples[x]
                scratch[2 * x] = UInt8(truncatingIfNeeded: value >> 8)
                scratch[2 * x + 1] = UInt8(truncatingIfNeeded: value)
            }
            return UnsafePointer(scratch)
        }
    }
}

/// One way to encode a strip: how rows are filtered and how they are deflated (zlib,
/// or `HuffmanDeflater` for `Z_HUFFMAN_ONLY`).
private struct Candidate {
    enum Filter {
        case fixed(RowFilter)
        /// Per row, the filter whose output has the least sum of absolute values.
        case adaptive
    }

    let filter: Filter
    let level: Int32
    /// A zlib strategy, or `huffmanUnlessFlat`.
    let strategy: Int32

    /// Not a zlib strategy: chosen per strip between `Z_HUFFMAN_ONLY` and `Z_RLE`.
    static let huffmanUnlessFlat: Int32 = -1

    /// What each effort tries.
    ///
    /// Measured with Python's zlib on one thread, on the scanlines (36.6 MB) of a
    /// rectified 4032×3024 noisy synthetic photo, level 1 with `Z_RLE`:
    ///
    ///     filter    time     size
    ///     none      410 ms   28.61 MB
    ///     sub       381 ms   18.00 MB
    ///     up        288 ms   17.14 MB
    ///     average   309 ms   17.00 MB
    ///     paeth     313 ms   16.54 MB
    ///     adaptive  354 ms   16.44 MB
    ///
    /// The default strategy at level 1 is larger (Paeth 19.83 MB) and slower; at level 6
    /// Paeth takes 3.4 s for 18.67 MB: on noisy photographs LZ77 matches cost more than
    /// they save, and `Z_FILTERED` at level 6 (16.95 MB, 4.8 s) only about breaks even.
    /// `Z_HUFFMAN_ONLY` is slightly smaller on noise (16.51 MB) but cannot shrink
    /// flat areas below 1 bit per byte; `Z_RLE` can. On a small real photo (720×477,
    /// decoded from JPEG) Paeth is 13% smaller than UP. In this encoder (2 threads)
    /// UP takes about 159 ms and the vectorized Paeth about 170 ms, so `fast` uses Paeth.
    /// On the 768×576 16-bit depth map, no filter at level 6 (158 KB) beats every filter
    /// with `Z_RLE` (Paeth 192 KB, adaptive 191 KB), hence the second candidate of `small`.
    ///
    /// In `rgbd rectify` (2 threads), `Z_HUFFMAN_ONLY` encodes the photo in 140 ms
    /// against 177 ms for `Z_RLE`, and 0.2 % smaller, but it cannot go below 1 bit per
    /// byte where the image is flat. So `fast` color picks per strip
    /// (`huffmanUnlessFlat`): Huffman-only unless most of the strip's first filtered row
    /// is zero. Depth maps keep `Z_RLE`: their flat areas and holes shrink far better
    /// (1.7 KB against 12.8 KB for the sample's 256×192 map). zlib's Huffman-only coding
    /// was later replaced by `HuffmanDeflater` (the same kind of stream, 0.1 % smaller
    /// with its 60 KiB blocks): the 4032×3024 benchmark photo's PNG went from about
    /// 180 ms to about 60 ms in interleaved runs, the vectorized Paeth filter included
    /// (it had been calling the standard library's generic SIMD conversions).
    static func all(for effort: PNGCodec.Effort, photo: Bool) -> [Candidate] {
        switch effort {
        case .fast:
            [Candidate(filter: .fixed(.paeth), level: 1, strategy: photo ? huffmanUnlessFlat : Z_RLE)]
        case .small:
            [Candidate(filter: .adaptive, level: 1, strategy: Z_RLE),
             Candidate(filter: .fixed(.none), level: 6, strategy: Z_DEFAULT_STRATEGY)]
        }
    }
}

/// PNG filter types (filter method 0). Each predicts a byte from the byte `bpp` to the
/// left (`a`), the byte above (`b`) and the byte above-left (`c`), zero outside the
/// image, and stores the difference modulo 256.
private enum RowFilter: UInt8, CaseIterable {
    case none = 0, sub, up, average, paeth

    /// Filters `count` bytes of `row` (the row above is `above`) into `out`.
    static func apply(_ filter: RowFilter, _ row: UnsafePointer<UInt8>, _ above: UnsafePointer<UInt8>,
                      _ out: UnsafeMutablePointer<UInt8>, _ count: Int, _ bpp: Int) {
        let head = min(bpp, count)
        switch filter {
        case .none:
            out.update(from: row, count: count)
        case .sub:
            out.update(from: row, count: head)
            for i in head..<count { out[i] = row[i] &- row[i - bpp] }
        case .up:
            for i in 0..<count { out[i] = row[i] &- above[i] }
        case .average:
            for i in 0..<head { out[i] = row[i] &- above[i] >> 1 }
            for i in head..<count {
                out[i] = row[i] &- UInt8(truncatingIfNeeded: (UInt16(row[i - bpp]) &+ UInt16(above[i])) >> 1)
            }
        case .paeth:
            // With a = c = 0 the predictor is b.
            for i in 0..<head { out[i] = row[i] &- above[i] }
            // 16 bytes at a time: the scalar loop does not vectorize (2.5 ns a byte).
            var i = head
            while i + 16 <= count {
                paeth16(row + i, above + i, bpp, out + i)
                i += 16
            }
            while i < count {
                out[i] = row[i] &- paethPredictor(row[i - bpp], above[i], above[i - bpp])
                i += 1
            }
        }
    }

    /// 16 bytes from `bytes`, widened.
    /// Paeth-filters 16 bytes (the previous pixel's bytes are `row − bpp`), as two
    /// halves of eight 16-bit lanes.
    ///
    /// Out of line on purpose: compiled on its own, the SIMD conversions and
    /// comparisons become a few instructions; inlined into the filter's switch, the
    /// optimizer left them as generic calls (so did 16-lane conversions).
    @inline(never)
    private static func paeth16(_ row: UnsafePointer<UInt8>, _ above: UnsafePointer<UInt8>, _ bpp: Int,
                                _ out: UnsafeMutablePointer<UInt8>) {
        paeth8(row, above, bpp, out)
        paeth8(row + 8, above + 8, bpp, out + 8)
    }

    @inline(__always)
    private static func paeth8(_ row: UnsafePointer<UInt8>, _ above: UnsafePointer<UInt8>, _ bpp: Int,
                               _ out: UnsafeMutablePointer<UInt8>) {
        let a = load8(row - bpp), b = load8(above), c = load8(above - bpp)
        let toA = b &- c, toB = a &- c  // p - a, p - b
        let toC = toA &+ toB  // p - c
        let zero = SIMD8<Int16>()
        let pa = toA.replacing(with: 0 &- toA, where: toA .< zero)
        let pb = toB.replacing(with: 0 &- toB, where: toB .< zero)
        let pc = toC.replacing(with: 0 &- toC, where: toC .< zero)
        var predictor = c
        predictor.replace(with: b, where: pb .<= pc)
        predictor.replace(with: a, where: (pa .<= pb) .& (pa .<= pc))
        // The low byte of each lane (lane-by-lane initializers compile to shuffles where
        // the stdlib's conversions stayed calls).
        let w = unsafeBitCast(load8(row) &- predictor, to: SIMD16<UInt8>.self)
        let difference = SIMD8<UInt8>(w[0], w[2], w[4], w[6], w[8], w[10], w[12], w[14])
        UnsafeMutableRawPointer(out).storeBytes(of: difference, as: SIMD8<UInt8>.self)
    }

    /// Eight bytes zero-extended to 16-bit lanes.
    @inline(__always)
    private static func load8(_ bytes: UnsafePointer<UInt8>) -> SIMD8<Int16> {
        let v = UnsafeRawPointer(bytes).loadUnaligned(as: SIMD8<UInt8>.self)
        return unsafeBitCast(SIMD16<UInt8>(v[0], 0, v[1], 0, v[2], 0, v[3], 0, v[4], 0, v[5], 0, v[6], 0, v[7], 0),
                             to: SIMD8<Int16>.self)
    }

    @inline(__always)
    static func paethPredictor(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt8 {
        let toA = Int16(b) &- Int16(c)  // p - a
        let toB = Int16(a) &- Int16(c)  // p - b
        let toC = toA &+ toB  // p - c
        let pa = toA < 0 ? 0 &- toA : toA
        let pb = toB < 0 ? 0 &- toB : toB
        let pc = toC < 0 ? 0 &- toC : toC
        let bc = pb <= pc ? b : c
        return pa <= min(pb, pc) ? a : bc
    }

    /// Filters the row with every filter into `outs[type] + 1` and returns the type whose
    /// bytes, read as signed, have the least sum of absolute values (libpng's heuristic).
    static func adaptive(_ row: UnsafePointer<UInt8>, _ above: UnsafePointer<UInt8>,
                         _ outs: [UnsafeMutablePointer<UInt8>], _ count: Int, _ bpp: Int) -> RowFilter {
        var best = RowFilter.none
        var bestSum = Int.max
        for type in allCases {
            let out = outs[Int(type.rawValue)] + 1
            apply(type, row, above, out, count, bpp)
            var sum = 0
            for i in 0..<count {
                sum &+= Int(Int8(bitPattern: out[i]).magnitude)
            }
            if sum < bestSum {
                best = type
                bestSum = sum
            }
        }
        return best
    }
}

/// A raw deflate stream (no zlib header or trailer) into a buffer of its own, with the
/// Adler-32 of what went in.
/// A raw deflate stream for one strip of filtered rows: its bytes (`buffer[0..<count]`),
/// the Adler-32 and length of its input.
protocol StripDeflater: AnyObject {
    var buffer: UnsafeMutablePointer<UInt8> { get }
    var count: Int { get }
    var adler: UInt { get }
    var inputCount: Int { get }
    /// Adds input bytes.
    func write(_ bytes: UnsafePointer<UInt8>, count: Int) throws
    /// Ends the output on a byte boundary: with the final block if `last`, else so
    /// that another stream can follow (`Z_SYNC_FLUSH`).
    func finish(last: Bool) throws
    /// Appends bytes into the room kept at the end.
    func appendReserved(_ bytes: [UInt8])
}

private final class Deflater: StripDeflater {
    /// zlib's state points back at the stream, so the stream must not move.
    private let stream: UnsafeMutablePointer<z_stream>
    private var initialized = false
    /// The output so far: `count` bytes.
    private(set) var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0
    private let reserve: Int
    /// Adler-32 of the input.
    private(set) var adler: UInt = 1
    /// Bytes of input.
    private(set) var inputCount = 0

    /// A stream whose output starts with `prefix` and keeps room for `reserve` bytes
    /// after the compressed data.
    init(level: Int32, strategy: Int32, expectedInput: Int, prefix: [UInt8], reserve: Int) throws {
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        capacity = prefix.count + reserve + 64
        buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        self.reserve = reserve
        guard rgbd_deflate_init_raw(stream, level, strategy) == Z_OK else {
            throw RGBDError(.invalidImage, "cannot encode PNG: zlib cannot start a stream")
        }
        initialized = true
        // Room for all of the output (deflateBound assumes Z_FINISH; a sync flush adds
        // an empty stored block, covered by the 64 bytes).
        grow(to: prefix.count + Int(deflateBound(stream, UInt(expectedInput))) + reserve + 64)
        buffer.update(from: prefix, count: prefix.count)
        count = prefix.count
    }

    deinit {
        if initialized { deflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
        buffer.deallocate()
    }

    /// Compresses `count` bytes (they need not be complete until `finish`).
    func write(_ bytes: UnsafePointer<UInt8>, count: Int) throws {
        adler = adler32_z(adler, bytes, count)
        inputCount += count
        var offset = 0
        while offset < count {
            let piece = min(count - offset, 1 << 30)
            stream.pointee.next_in = UnsafeMutablePointer(mutating: bytes + offset)
            stream.pointee.avail_in = UInt32(piece)
            try run(Z_NO_FLUSH)
            offset += piece
        }
    }

    /// Ends the output on a byte boundary: with the final block if `last`, else with an
    /// empty stored block (`Z_SYNC_FLUSH`) so that another stream can follow.
    func finish(last: Bool) throws {
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        try run(last ? Z_FINISH : Z_SYNC_FLUSH)
    }

    /// Appends bytes into the room kept by `reserve`.
    func appendReserved(_ bytes: [UInt8]) {
        precondition(bytes.count <= reserve && count + bytes.count <= capacity, "no room reserved")
        (buffer + count).update(from: bytes, count: bytes.count)
        count += bytes.count
    }

    private func run(_ flush: Int32) throws {
        while true {
            if capacity - reserve - count == 0 { grow(to: 2 * capacity) }
            let room = min(capacity - reserve - count, Int(UInt32.max))
            stream.pointee.next_out = buffer + count
            stream.pointee.avail_out = UInt32(room)
            let status = deflate(stream, flush)
            count += room - Int(stream.pointee.avail_out)
            guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                throw RGBDError(.invalidImage, "cannot encode PNG: zlib error \(status)")
            }
            if flush == Z_FINISH {
                if status == Z_STREAM_END { return }
            } else if stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 {
                return
            }
        }
    }

    private func grow(to newCapacity: Int) {
        guard newCapacity > capacity else { return }
        let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        larger.update(from: buffer, count: count)
        buffer.deallocate()
        buffer = larger
        capacity = newCapacity
    }
}
