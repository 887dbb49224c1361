import CDeflate
import CKernels
import CISAL
import CPNG
import Dispatch

/// PNG encoding and decoding.
///
/// Encoding is rgbd's own and multi-threaded: the rows are cut into strips of a fixed
/// size (so the bytes written do not depend on the number of processors or threads),
/// each strip is filtered and deflated on its own into a raw deflate stream ending on a
/// byte boundary (a sync flush), and the strips are joined pigz-style into one zlib
/// stream (header, strips, Adler-32 combined from the strips' own). Deflate is Intel's
/// ISA-L (igzip), or libdeflate for `Effort.small`'s slower candidates. libpng writes the file
/// around it: signature, IHDR, one IDAT chunk per strip, IEND. Decoding is libpng's
/// simplified API (`png_image_*`).
package enum PNGCodec {
    /// How hard the encoder works to make the file small.
    package enum Effort: Sendable {
        /// The Paeth filter on every row, each strip deflated by ISA-L at level 1 with
        /// matches at most 4 bytes back (8 for 16-bit images): the command-line default.
        case fast
        /// Per strip of rows, the smallest of `fast`'s coding and the up and average
        /// filters with libdeflate's near-optimal level 10 (16-bit images try a few
        /// more): 2-12 % smaller than `fast` on photographs (the least on fine,
        /// noise-like texture), 9-25 % on depth maps, and far slower (near-optimal parsing;
        /// the times are in BENCHMARKS.md, "PNG writing through ISA-L").
        case small
    }

    /// Encodes an 8-bit RGB image.
    ///
    /// The same image and effort always give the same bytes. Throws if the image is
    /// empty or too large for PNG.
    package static func encodeRGB(_ image: ColorImage, effort: Effort = .fast) throws -> [UInt8] {
        try encodeRGB(image, effort: effort, threads: Host.processorCount)
    }

    /// `encodeRGB` on at most `threads` threads (the bytes are the same for any number).
    package static func encodeRGB(_ image: ColorImage, effort: Effort, threads: Int) throws -> [UInt8] {
        precondition(image.channels == 3, "encodeRGB takes RGB images")
        return try image.samples.withUnsafeBufferPointer { samples in
            try encode(Scanlines(source: .bytes(samples.baseAddress), width: image.width, height: image.height,
                                 bytesPerPixel: 3),
                       rgb: true, effort: effort, threads: threads)
        }
    }

    /// Encodes a 16-bit grayscale image: `samples` (`width * height` values, row by
    /// row) are written as given, most significant byte first as PNG requires.
    ///
    /// The same image and effort always give the same bytes. Throws if the image is
    /// empty or too large for PNG.
    package static func encodeGray16(width: Int, height: Int, samples: [UInt16], effort: Effort = .fast) throws -> [UInt8] {
        try encodeGray16(width: width, height: height, samples: samples, effort: effort,
                         threads: Host.processorCount)
    }

    /// `encodeGray16` on at most `threads` threads (the bytes are the same for any number).
    package static func encodeGray16(width: Int, height: Int, samples: [UInt16], effort: Effort, threads: Int) throws -> [UInt8] {
        precondition(width >= 0 && height >= 0 && samples.count == width * height,
                     "sample count does not match the shape")
        return try samples.withUnsafeBufferPointer { samples in
            try encode(Scanlines(source: .samples16(samples.baseAddress), width: width, height: height,
                                 bytesPerPixel: 2),
                       rgb: false, effort: effort, threads: threads)
        }
    }

    /// For benchmarks: the image's PNG scanlines as `Effort.fast` filters them (each row
    /// its filter-type byte, then the Paeth-filtered bytes), in one buffer.
    package static func filteredScanlines(_ image: ColorImage) -> [UInt8] {
        precondition(image.channels == 3, "filteredScanlines takes RGB images")
        let rowBytes = image.width * 3
        let filter = Candidate.all(for: .fast, rgb: true)[0].filter
        return image.samples.withUnsafeBufferPointer { samples in
            let lines = Scanlines(source: .bytes(samples.baseAddress), width: image.width, height: image.height,
                                  bytesPerPixel: 3)
            return [UInt8](unsafeUninitializedCapacity: image.height * (rowBytes + 1)) { output, count in
                if let base = output.baseAddress {
                    filterRows(lines, rows: 0..<image.height, filter: filter, into: base)
                }
                count = image.height * (rowBytes + 1)
            }
        }
    }

    /// For benchmarks: `bytes` deflated by ISA-L at `level` (0 to 3) with its default
    /// 32 KiB window as one zlib stream, on the calling thread.
    package static func zlibStreamISAL(_ bytes: [UInt8], level: Int) throws -> [UInt8] {
        let coder = try ISALCoder(level: level, historyBits: 15)
        let strip = try bytes.withUnsafeBufferPointer { input in
            try coder.code(input, last: true, prefix: [0x78, 0x01], reserve: 4)
        }
        strip.appendReserved(bigEndian(strip.adler))
        return Array(UnsafeBufferPointer(start: strip.buffer, count: strip.count))
    }

    /// Filtered bytes (rows with their filter-type byte) per strip.
    ///
    /// Fixed, not derived from the processor count, so that the output is the same on
    /// every machine (which is also why `RowScheduler`, whose band sizes depend on the
    /// processor count, is not used). A 4032-pixel RGB row is 12 KB, so its 3024 rows
    /// make 144 strips. Each strip starts a new deflate stream without history, which
    /// costs ISA-L level 1 (default window) 0.07 % on the 5312×2988 benchmark photo
    /// against one stream.
    static let stripBytes = 256 * 1024

    private static func encode(_ lines: Scanlines, rgb: Bool, effort: Effort, threads: Int) throws -> [UInt8] {
        let limit = Int(Int32.max)  // PNG's 2^31 - 1
        guard lines.width > 0, lines.height > 0, lines.width <= limit, lines.height <= limit else {
            throw RGBDError(.invalidImage, "cannot encode PNG: a \(lines.width)×\(lines.height) image")
        }
        let candidates = Candidate.all(for: effort, rgb: rgb)
        // zlib header: deflate with a 32 KiB window; FLEVEL (informative) fastest or
        // default; the check bits make the 16-bit value a multiple of 31.
        let zlibHeader: [UInt8] = effort == .fast ? [0x78, 0x01] : [0x78, 0x9C]
        let rowsPerStrip = max(1, stripBytes / (lines.rowBytes + 1))
        let stripCount = (lines.height + rowsPerStrip - 1) / rowsPerStrip

        let slots = UnsafeMutableBufferPointer<Result<CodedStrip, any Error>?>.allocate(capacity: stripCount)
        slots.initialize(repeating: nil)
        defer {
            slots.deinitialize()
            slots.deallocate()
        }
        // Worker w codes strips w, w + workers, ... (they are all about the same size),
        // with coders and a filter buffer of its own, reused from strip to strip. Each
        // strip's bytes depend only on the strip, not on the worker or on the strips
        // coded before it. Each worker writes only its own slots, and the slots are read
        // only after concurrentPerform has returned; `lines` points into memory that
        // outlives it.
        let workers = max(1, min(threads, stripCount))
        nonisolated(unsafe) let results = slots
        nonisolated(unsafe) let source = lines
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let coders: Result<[any StripCoder], any Error> = Result { try candidates.map { try $0.makeCoder() } }
            let filtered = UnsafeMutablePointer<UInt8>.allocate(capacity: min(source.height, rowsPerStrip) * (source.rowBytes + 1))
            defer { filtered.deallocate() }
            for strip in stride(from: worker, to: stripCount, by: workers) {
                let start = strip * rowsPerStrip
                let rows = start..<min(source.height, start + rowsPerStrip)
                results[strip] = Result {
                    try encodeStrip(source, rows: rows, candidates: candidates, coders: try coders.get(),
                                    filtered: filtered, prefix: strip == 0 ? zlibHeader : [],
                                    reserve: strip == stripCount - 1 ? 4 : 0)
                }
            }
        }
        var strips: [CodedStrip] = []
        strips.reserveCapacity(stripCount)
        for slot in slots {
            guard let slot else { preconditionFailure("a strip was not coded") }
            strips.append(try slot.get())
        }
        guard let first = strips.first, let last = strips.last else { preconditionFailure("no strips") }

        // zlib trailer: the Adler-32 of all the filtered bytes, most significant byte first.
        var adler = first.adler
        for strip in strips.dropFirst() {
            adler = rgbd_adler32_combine(adler, strip.adler, Int64(strip.inputCount))
        }
        last.appendReserved(bigEndian(adler))

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

    /// A 32-bit value's four bytes, most significant first.
    private static func bigEndian(_ value: UInt) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
         UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    /// Filters `rows` into `output` (`rows.count * (rowBytes + 1)` bytes), each row
    /// its filter-type byte and then its filtered bytes. The first row is filtered
    /// against the image row above it, as in a single stream.
    private static func filterRows(_ lines: Scanlines, rows: Range<Int>, filter: Candidate.Filter,
                                   into output: UnsafeMutablePointer<UInt8>) {
        let rowBytes = lines.rowBytes
        // Scratch: a zero row (above the first), two raw rows (16-bit samples are
        // byte-swapped into them; row y goes into rawRows[y & 1]), and a filtered row
        // per filter type for the adaptive choice.
        let scratchCount = 3 * rowBytes + 5 * (rowBytes + 1)
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: scratchCount)
        defer { scratch.deallocate() }
        scratch.initialize(repeating: 0, count: scratchCount)
        let zeroRow = UnsafePointer(scratch)
        let rawRows = [scratch + rowBytes, scratch + 2 * rowBytes]
        let candidates = (0..<5).map { scratch + 3 * rowBytes + $0 * (rowBytes + 1) }
        var previous = rows.lowerBound == 0
            ? zeroRow : lines.row(rows.lowerBound - 1, scratch: rawRows[(rows.lowerBound - 1) & 1])
        var out = output
        for y in rows {
            let current = lines.row(y, scratch: rawRows[y & 1])
            switch filter {
            case .fixed(let type):
                out[0] = type.rawValue
                RowFilter.apply(type, current, previous, out + 1, rowBytes, lines.bytesPerPixel)
            case .adaptive:
                let type = RowFilter.adaptive(current, previous, candidates, rowBytes, lines.bytesPerPixel)
                out.update(from: candidates[Int(type.rawValue)], count: rowBytes + 1)
                out[0] = type.rawValue
            }
            out += rowBytes + 1
            previous = current
        }
    }

    /// Filters and deflates `rows` with every candidate (its coder in `coders`, the
    /// filtered bytes in `filtered`) and keeps the smallest output (the first on a
    /// tie). The output starts with `prefix` and has room for `reserve` more bytes; it
    /// ends with a sync flush, or with the final block for the image's last row.
    private static func encodeStrip(_ lines: Scanlines, rows: Range<Int>, candidates: [Candidate],
                                    coders: [any StripCoder], filtered: UnsafeMutablePointer<UInt8>,
                                    prefix: [UInt8], reserve: Int) throws -> CodedStrip {
        let input = UnsafeBufferPointer(start: filtered, count: rows.count * (lines.rowBytes + 1))
        let last = rows.upperBound == lines.height
        if let first = candidates.first, candidates.count > 1,
           candidates.allSatisfy({ $0.filter == first.filter && $0.trial }) {
            // One filter, coders chosen by trial: each codes the strip's first rows
            // (`Candidate.trialShare` of them, at least one), and the smallest codes it all.
            filterRows(lines, rows: rows, filter: first.filter, into: filtered)
            let trialRows = max(1, (rows.count + Candidate.trialShare - 1) / Candidate.trialShare)
            let head = UnsafeBufferPointer(rebasing: input[..<(trialRows * (lines.rowBytes + 1))])
            var chosen = coders[0], smallest = Int.max
            for coder in coders {
                let count = try coder.code(head, last: false, prefix: [], reserve: 0).count
                if count < smallest { (chosen, smallest) = (coder, count) }
            }
            return try chosen.code(input, last: last, prefix: prefix, reserve: reserve)
        }
        var best: CodedStrip?
        var filteredWith: Candidate.Filter?
        for (candidate, coder) in zip(candidates, coders) {
            if filteredWith != candidate.filter {
                filterRows(lines, rows: rows, filter: candidate.filter, into: filtered)
                filteredWith = candidate.filter
            }
            let strip = try coder.code(input, last: last, prefix: prefix, reserve: reserve)
            if best.map({ strip.count < $0.count }) ?? true { best = strip }
        }
        guard let best else { preconditionFailure("no candidates") }
        return best
    }

    /// Decodes a PNG file to 8-bit RGB (at most `JPEGCodec.maxPixels` pixels).
    ///
    /// - Throws: `RGBDError(.invalidImage)` naming `file` for anything libpng rejects, and,
    ///   before any pixel memory is allocated, for a header claiming more pixels than the
    ///   limit or than its compressed bytes could hold (`checkPlausible`).
    package static func decodeRGB(_ bytes: [UInt8], file: String? = nil) throws -> ColorImage {
        let (w, h, samples): (Int, Int, [UInt8]) = try decode(bytes, format: rgbd_png_format_rgb(), channels: 3,
                                                               maxPixels: JPEGCodec.maxPixels, file: file)
        return ColorImage(width: w, height: h, channels: 3, samples: samples)
    }

    /// Decodes a 16-bit (or 8-bit) grayscale PNG file to 16-bit values as stored: a
    /// depth image, so at most `InputLimits.maxDepthPixels` pixels. The same checks as
    /// `decodeRGB` before any pixel memory is allocated.
    package static func decodeGray16(_ bytes: [UInt8], file: String? = nil) throws -> ImageBuffer<UInt16> {
        let (w, h, samples): (Int, Int, [UInt16]) = try decode(bytes, format: rgbd_png_format_linear_y(), channels: 1,
                                                                maxPixels: InputLimits.maxDepthPixels, file: file)
        return ImageBuffer(width: w, height: h, channels: 1, samples: samples)
    }

    /// Decodes an 8-bit grayscale PNG to its values as stored (a confidence map: 0, 1, 2),
    /// at most `InputLimits.maxDepthPixels` pixels, with `decodeRGB`'s checks. An 8-bit file
    /// is not gamma-converted; a 16-bit one is reduced to 8 bits.
    package static func decodeGray8(_ bytes: [UInt8], file: String? = nil) throws -> ImageBuffer<UInt8> {
        let (w, h, samples): (Int, Int, [UInt8]) = try decode(bytes, format: rgbd_png_format_gray(), channels: 1,
                                                               maxPixels: InputLimits.maxDepthPixels, file: file)
        return ImageBuffer(width: w, height: h, channels: 1, samples: samples)
    }

    /// Refuses, from the header's numbers alone, a PNG that cannot be what it claims:
    /// more than `maxPixels` pixels, or more filtered bytes (each row its filter byte and
    /// `width` pixels of `bitsPerPixel` bits) than deflate can make of the file's
    /// `byteCount` bytes (`InputLimits.maxDeflateExpansion`).
    static func checkPlausible(width: Int, height: Int, bitsPerPixel: Int, byteCount: Int, maxPixels: Int,
                               file: String?) throws {
        let pixels = Double(width) * Double(height)
        guard width > 0, height > 0, pixels <= Double(maxPixels) else {
            let limit = maxPixels == InputLimits.maxDepthPixels ? "rgbd's limit for a depth image" : "rgbd's limit"
            throw RGBDError(.invalidImage, file: file,
                            "the PNG claims \(width)×\(height) pixels, more than \(limit) (\(maxPixels / 1_000_000) megapixels)")
        }
        let filtered = Double(height) * (1 + (Double(width) * Double(bitsPerPixel) / 8).rounded(.up))
        guard InputLimits.couldHold(fileBytes: byteCount, expansion: InputLimits.maxDeflateExpansion,
                                    claimedBytes: filtered) else {
            throw RGBDError(.invalidImage, file: file,
                            "the PNG claims \(width)×\(height) pixels in \(byteCount) bytes, more than deflate can expand them to (at most \(InputLimits.maxDeflateExpansion) bytes per byte): its header is corrupt")
        }
    }

    private static func decode<T: BitwiseCopyable>(_ bytes: [UInt8], format: UInt32, channels: Int, maxPixels: Int,
                                                   file: String?) throws -> (Int, Int, [T]) {
        var image = png_image()
        image.version = rgbd_png_image_version()
        let begun = bytes.withUnsafeBytes { png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }
        guard begun != 0 else { throw failure(&image, "not a readable PNG", file: file) }
        defer { png_image_free(&image) }
        let width = Int(image.width), height = Int(image.height)
        // The file's own pixel format (IHDR: bit depth at byte 24, color type at 25) gives
        // the filtered bytes its deflate stream must expand to.
        let bitDepth = bytes.count > 25 ? Int(bytes[24]) : 16
        let samplesPerPixel = bytes.count > 25 ? ([0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(bytes[25])] ?? 1) : 1
        try checkPlausible(width: width, height: height, bitsPerPixel: max(1, bitDepth) * samplesPerPixel,
                           byteCount: bytes.count, maxPixels: maxPixels, file: file)
        image.format = format
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

/// One way to encode a strip: how its rows are filtered and what deflates them.
private struct Candidate {
    enum Filter: Equatable {
        case fixed(RowFilter)
        /// Per row, the filter whose output has the least sum of absolute values.
        case adaptive
    }

    enum Coder {
        /// ISA-L (`isal_deflate`) at level 0 to 3, matches at most 2^`historyBits`
        /// bytes back (1 to 15).
        case isal(level: Int, historyBits: Int)
        /// libdeflate at a level (1 to 12).
        case libdeflate(level: Int32)
    }

    let filter: Filter
    let coder: Coder
    /// Whether this candidate is chosen per strip by trial on the strip's first rows
    /// (with the others of its effort, which must share its filter) rather than by
    /// coding the whole strip with each and keeping the smallest.
    var trial = false

    /// The share of a strip's rows (1 in this many) that a trial codes.
    static let trialShare = 32

    /// A coder for this candidate, to be reused from strip to strip on one thread.
    func makeCoder() throws -> any StripCoder {
        switch coder {
        case .isal(let level, let bits): try ISALCoder(level: level, historyBits: bits)
        case .libdeflate(let level): try LibdeflateCoder(level: level)
        }
    }

    /// What each effort tries on color (`rgb`) or 16-bit gray images.
    ///
    /// Photos as phones write them (denoised, smooth, blurred backgrounds) are another
    /// matter than the sharp photographs below: there far matches pay. Rectified whole
    /// photos, bytes as a fraction of ISA-L level 1 with its full window on the same Paeth
    /// rows in one stream (issue 21's baseline):
    ///
    ///                          4-byte history  full window  per strip, better of both
    ///     iPhone 8 HEIC        1.150           1.002        0.992
    ///     iPhone XR HEIC       1.015           1.001        0.994
    ///     iPhone 6 JPEG        0.941           1.001        0.939
    ///     seeding landscape    0.874           1.000        0.874
    ///
    /// So `fast` codes each strip with whichever of the two codes its first rows (1 in
    /// `trialShare`, one row of a 12 MP photo) smaller: within 0.1 % of coding every strip
    /// both ways, for a little more time than the 4-byte history alone (docs/performance.md,
    /// "PNG coding").
    ///
    /// Measured on rectified 8-bit RGB images (bytes of the whole PNG): a real photograph
    /// (Benchmarks/photo, 5312×2988: grass and dandelions, fine texture), two more from
    /// Debian's lomiri-wallpapers-16.04 and -20.04 (4272×2848 sunset sky; 6028×3391 bird
    /// on a bark with a blurred background) and the synthetic 4032×3024 captures:
    ///
    ///     Paeth, ISA-L level 1     seeding     sunset     bird       synthetic smooth
    ///     history 2^15 (default)   15.29 MB    10.35 MB   26.57 MB   2.63 MB
    ///     history 2^8              14.61 MB     9.77 MB   24.44 MB
    ///     history 2^3              13.54 MB     9.03 MB   23.37 MB   2.01 MB
    ///     history 2^2              13.35 MB     8.84 MB   23.20 MB   2.08 MB
    ///     history 2^1              13.36 MB
    ///
    /// On filtered photo rows, matches far back are short and cost more bits than the
    /// literals they replace; a history of 4 bytes keeps the run-like matches (a pixel
    /// repeated, zero runs) and codes the rest as literals: 13 % smaller than ISA-L's
    /// default window at the same speed, and smaller than zlib's `Z_RLE` (13.51 MB on
    /// the seeding photo) or zlib level 9 with its full window (13.03 MB, but far slower;
    /// BENCHMARKS.md). The filter with ISA-L level 1, history 2^2, on the seeding photo:
    /// Paeth 13.35 MB, up 13.94 MB, average 13.56 MB, sub and none much larger, the
    /// adaptive choice per row (least sum of absolute differences, as libpng does)
    /// 13.32 MB at several times the time. On the smoother photographs: sunset Paeth
    /// 8.84 MB, average 9.46, up 9.84, sub 10.15, adaptive 8.84; bird average 23.09 MB,
    /// Paeth 23.20, adaptive 23.18, up 25.02; synthetic smooth Paeth 2.08 MB, up 3.11,
    /// average 4.62: Paeth. Levels 2 and 3 were no smaller (level 3: 13.80 MB). 16-bit depth maps (the synthetic captures' 768×576) prefer a
    /// history of 2^3: 3.3 KB against 5.3 KB with 2^2 and 6.7 KB with 2^15.
    ///
    /// `small` keeps, per strip, the smallest of a few codings. Only near-optimal parsing
    /// (libdeflate level 10 and up) gains much on photographs; with it the long matches
    /// of the up filter, or the average filter's, pay more than Paeth's small residuals,
    /// depending on the photograph. Whole PNG of the rectified photographs, smallest per
    /// 256 KiB strip of the codings listed, as a fraction of `fast` (libdeflate level
    /// 10 or 12, filter named), modelled in Python with pip's libdeflate (bench-png.sh
    /// measured rgbd's own files with the chosen set at 0.880, 0.923 and 0.982):
    ///
    ///                                    seeding    sunset    bird
    ///     fast (13.35 / 8.84 / 23.20 MB) 1          1         1
    ///     fast, up 10                    0.889      0.945     1.000
    ///     fast, average 10               0.901      0.943     0.977
    ///     fast, up 10, average 10        0.880      0.923     0.977
    ///     + Paeth 10                     0.880      0.911     0.976
    ///     fast, up 10, average 12        0.878      0.922     0.973
    ///     all three filters at 12        0.876      0.905     0.973
    ///
    /// The bird's bark is at the floor of PNG's filters and deflate: the byte entropy of
    /// its filtered strips is 0.99 of `fast`, larger strips (1 and 4 MiB) gain under
    /// 0.1 %, a per-row filter chosen by trial compression 0.973, zopfli more than
    /// libdeflate 12. Near-optimal parsing is slow (level 12 slower still than 10), so
    /// `small` on photographs is `fast`, up 10 and average 10, far slower than `fast`
    /// alone; a third filter at level 10 would cost half as much again for 1 % on one
    /// photograph. 16-bit depth maps are small: they try more codings, libdeflate's
    /// strongest level 12 with two filters, which on the noisy synthetic 768×576 map is
    /// both smaller and faster than the previous set (no filter and zlib level 9,
    /// pathologically slow on noisy 16-bit rows). The speeds and sizes measured are in
    /// docs/performance.md, "PNG coding".
    static func all(for effort: PNGCodec.Effort, rgb: Bool) -> [Candidate] {
        let fast = Candidate(filter: .fixed(.paeth), coder: .isal(level: 1, historyBits: rgb ? 2 : 3))
        let far = Candidate(filter: .fixed(.paeth), coder: .isal(level: 1, historyBits: 15))
        switch effort {
        case .fast where rgb:
            return [Candidate(filter: fast.filter, coder: fast.coder, trial: true),
                    Candidate(filter: far.filter, coder: far.coder, trial: true)]
        case .fast:
            return [fast]
        case .small where rgb:
            return [fast, far, Candidate(filter: .fixed(.up), coder: .libdeflate(level: 10)),
                    Candidate(filter: .fixed(.average), coder: .libdeflate(level: 10))]
        case .small:
            return [fast,
                    Candidate(filter: .adaptive, coder: .isal(level: 1, historyBits: 3)),
                    Candidate(filter: .adaptive, coder: .libdeflate(level: 12)),
                    Candidate(filter: .fixed(.paeth), coder: .libdeflate(level: 12))]
        }
    }
}

/// PNG filter types (filter method 0). Each predicts a byte from the byte `bpp` to the
/// left (`a`), the byte above (`b`) and the byte above-left (`c`), zero outside the
/// image, and stores the difference modulo 256.
enum RowFilter: UInt8, CaseIterable {
    case none = 0, sub, up, average, paeth

    /// Filters `count` bytes of `row` (the row above is `above`) into `out`.
    ///
    /// `paethAVX2`: whether the Paeth filter may use `rgbd_paeth_filter_avx2` (the same
    /// bytes as the Swift loops).
    static func apply(_ filter: RowFilter, _ row: UnsafePointer<UInt8>, _ above: UnsafePointer<UInt8>,
                      _ out: UnsafeMutablePointer<UInt8>, _ count: Int, _ bpp: Int,
                      paethAVX2: Bool = VectorKernels.avx2) {
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
            // 32 bytes at a time with AVX2, then 16 in Swift: the scalar loop does not
            // vectorize (docs/performance.md, "PNG coding").
            var i = paethAVX2 ? rgbd_paeth_filter_avx2(row, above, bpp, out, head, count) : head
            i = paethVectors(row, above, bpp, out, from: i, count: count)
            while i < count {
                out[i] = row[i] &- paethPredictor(row[i - bpp], above[i], above[i - bpp])
                i += 1
            }
        }
    }

    /// Paeth-filters bytes `start..<count` 16 at a time while 16 remain; returns where
    /// it stopped.
    ///
    /// Out of line on purpose: compiled on its own, the SIMD operations become a few
    /// instructions; inlined into the filter's switch, the optimizer left some of them
    /// as generic calls. (So does the stdlib's `pointwiseMin`/`pointwiseMax` anywhere:
    /// absolute differences are written with comparisons instead.)
    @inline(never)
    private static func paethVectors(_ row: UnsafePointer<UInt8>, _ above: UnsafePointer<UInt8>, _ bpp: Int,
                                     _ out: UnsafeMutablePointer<UInt8>, from start: Int, count: Int) -> Int {
        var i = start
        while i + 16 <= count {
            paeth16(row + i, above + i, bpp, out + i)
            i += 16
        }
        return i
    }

    /// Paeth-filters 16 bytes (the previous pixel's bytes are `row − bpp`) in 8-bit
    /// lanes. With p = a + b − c: |p − a| = |b − c| and |p − b| = |a − c|, and
    /// |p − c| = |(b − c) + (a − c)| is their sum when b − c and a − c have the same
    /// sign, else their difference. The sum may pass 255; saturated there it still
    /// compares as it should, since it is then at least as large as both.
    @inline(__always)
    static func paeth16(_ row: UnsafePointer<UInt8>, _ above: UnsafePointer<UInt8>, _ bpp: Int,
                        _ out: UnsafeMutablePointer<UInt8>) {
        let a = load16(row - bpp), b = load16(above), c = load16(above - bpp)
        let bBelowC = b .< c, aBelowC = a .< c
        let pa = (b &- c).replacing(with: c &- b, where: bBelowC)
        let pb = (a &- c).replacing(with: c &- a, where: aBelowC)
        var sum = pa &+ pb
        sum.replace(with: UInt8.max, where: sum .< pa)
        let difference = (pa &- pb).replacing(with: pb &- pa, where: pa .< pb)
        let pc = sum.replacing(with: difference, where: bBelowC .^ aBelowC)
        var predictor = c
        predictor.replace(with: b, where: pb .<= pc)
        predictor.replace(with: a, where: (pa .<= pb) .& (pa .<= pc))
        UnsafeMutableRawPointer(out).storeBytes(of: load16(row) &- predictor, as: SIMD16<UInt8>.self)
    }

    @inline(__always)
    private static func load16(_ bytes: UnsafePointer<UInt8>) -> SIMD16<UInt8> {
        UnsafeRawPointer(bytes).loadUnaligned(as: SIMD16<UInt8>.self)
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

/// One strip's raw deflate stream: its bytes (`buffer[0..<count]`, after the prefix it
/// was asked to start with), with room kept for `reserve` more, and the Adler-32 and
/// length of the filtered bytes it codes.
final class CodedStrip {
    private(set) var buffer: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    private(set) var count: Int
    private var reserve: Int
    private(set) var adler: UInt
    private(set) var inputCount: Int

    /// An empty output holding `prefix`, with room for `expected` bytes of deflate
    /// stream (it grows when needed) and `reserve` after them.
    init(prefix: [UInt8], expected: Int, reserve: Int, adler: UInt, inputCount: Int) {
        capacity = prefix.count + expected + reserve
        buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        buffer.update(from: prefix, count: prefix.count)
        count = prefix.count
        self.reserve = reserve
        self.adler = adler
        self.inputCount = inputCount
    }

    deinit { buffer.deallocate() }

    /// Empties the buffer (keeping its capacity) to hold `prefix` and a new stream.
    func reset(prefix: [UInt8], reserve: Int, adler: UInt, inputCount: Int) {
        precondition(prefix.count + reserve <= capacity, "buffer too small")
        buffer.update(from: prefix, count: prefix.count)
        count = prefix.count
        self.reserve = reserve
        self.adler = adler
        self.inputCount = inputCount
    }

    /// A copy holding just the bytes so far and the room kept by `reserve`.
    func copy() -> CodedStrip {
        let copy = CodedStrip(prefix: [], expected: count, reserve: reserve, adler: adler, inputCount: inputCount)
        copy.buffer.update(from: buffer, count: count)
        copy.count = count
        return copy
    }

    /// Where the deflate stream goes on, and how many bytes fit there (at least one:
    /// the buffer grows when full).
    func room() -> (UnsafeMutablePointer<UInt8>, Int) {
        if capacity - reserve - count == 0 { grow(to: 2 * capacity) }
        return (buffer + count, capacity - reserve - count)
    }

    /// Records `written` bytes written at `room()`.
    func advance(by written: Int) { count += written }

    /// Appends bytes into the room kept by `reserve`.
    func appendReserved(_ bytes: [UInt8]) {
        precondition(bytes.count <= reserve && count + bytes.count <= capacity, "no room reserved")
        (buffer + count).update(from: bytes, count: bytes.count)
        count += bytes.count
    }

    private func grow(to newCapacity: Int) {
        let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        larger.update(from: buffer, count: count)
        buffer.deallocate()
        buffer = larger
        capacity = newCapacity
    }
}

/// Deflates strips into raw deflate streams, one strip after the other on one thread.
protocol StripCoder: AnyObject {
    /// `input` as a raw deflate stream after `prefix`, with room for `reserve` bytes
    /// after it, ending on a byte boundary: with the final block if `last`, else with a
    /// sync flush (an empty stored block) so that another stream can follow. Each call
    /// starts a new stream: the output depends only on the arguments.
    func code(_ input: UnsafeBufferPointer<UInt8>, last: Bool, prefix: [UInt8], reserve: Int) throws -> CodedStrip
}

/// ISA-L's deflate (`isal_deflate`).
final class ISALCoder: StripCoder {
    /// ISA-L's state (82 KB) refers to itself, so it must not move.
    private let stream: UnsafeMutablePointer<isal_zstream>
    private let level: Int
    private let historyBits: Int
    private let levelBuffer: UnsafeMutableRawBufferPointer
    /// Where strips are coded before being copied out.
    private var scratch: CodedStrip?

    /// A coder at `level` (0 to 3) whose matches reach at most 2^`historyBits` bytes
    /// back (1 to 15).
    init(level: Int, historyBits: Int) throws {
        guard (0...3).contains(level), (1...15).contains(historyBits) else {
            throw RGBDError(.invalidArgument,
                            "cannot encode PNG: no ISA-L deflate level \(level) with \(historyBits) bits of history")
        }
        self.level = level
        self.historyBits = historyBits
        stream = UnsafeMutablePointer<isal_zstream>.allocate(capacity: 1)
        stream.initialize(to: isal_zstream())
        levelBuffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: max(1, Int(rgbd_isal_level_buffer_size(Int32(level)))), alignment: 64)
        // ISA-L does not clear all of its level buffer when a stream starts: left as
        // allocated, what the allocator happened to leave there now and then changed the
        // coded bytes (never the decoded ones) of otherwise identical runs.
        levelBuffer.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit {
        stream.deinitialize(count: 1)
        stream.deallocate()
        levelBuffer.deallocate()
    }

    func code(_ input: UnsafeBufferPointer<UInt8>, last: Bool, prefix: [UInt8], reserve: Int) throws -> CodedStrip {
        let adler = UInt(isal_adler32(1, input.baseAddress, UInt64(input.count)))
        // Coded into this coder's own buffer (warm in cache from the previous strip, where
        // fresh pages for every strip cost more than the copy), then copied out at its
        // size. Photographs shrink; the slack covers block headers on incompressible input.
        let expected = input.count + input.count / 16 + 1024
        if scratch.map({ $0.capacity < prefix.count + expected + reserve }) ?? true {
            scratch = CodedStrip(prefix: [], expected: prefix.count + expected + reserve, reserve: 0, adler: 1, inputCount: 0)
        }
        guard let output = scratch else { preconditionFailure("no scratch buffer") }
        output.reset(prefix: prefix, reserve: reserve, adler: adler, inputCount: input.count)
        isal_deflate_init(stream)
        stream.pointee.level = UInt32(level)
        if level > 0 {
            stream.pointee.level_buf = levelBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
            stream.pointee.level_buf_size = UInt32(levelBuffer.count)
        }
        stream.pointee.gzip_flag = rgbd_isal_raw_deflate()
        stream.pointee.hist_bits = UInt16(historyBits)
        stream.pointee.flush = last ? rgbd_isal_no_flush() : rgbd_isal_sync_flush()
        // avail_in is 32 bits: pieces of at most 1 GiB, the stream's end after the last.
        var offset = 0
        repeat {
            let piece = min(input.count - offset, 1 << 30)
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress.map { $0 + offset })
            stream.pointee.avail_in = UInt32(piece)
            offset += piece
            let final = offset == input.count
            stream.pointee.end_of_stream = last && final ? 1 : 0
            while true {
                let (next, room) = output.room()
                let available = min(room, Int(UInt32.max))
                stream.pointee.next_out = next
                stream.pointee.avail_out = UInt32(available)
                let status = isal_deflate(stream)
                output.advance(by: available - Int(stream.pointee.avail_out))
                guard status == rgbd_isal_comp_ok() else {
                    throw RGBDError(.invalidImage, "cannot encode PNG: ISA-L deflate error \(status)")
                }
                guard stream.pointee.avail_in == 0 else { continue }
                if !final { break }
                // All input taken; done once the stream has ended, or the sync flush is
                // written (the state is back to a new block header).
                let state = stream.pointee.internal_state.state
                if last ? state == ZSTATE_END : state == ZSTATE_NEW_HDR { break }
            }
        } while offset < input.count
        return output.copy()
    }
}

/// libdeflate's compressor, which codes a whole buffer at once into a complete raw
/// deflate stream: it cannot stop with a sync flush, so a strip that is not the image's
/// last is reopened afterwards (`DeflateReopener`).
final class LibdeflateCoder: StripCoder {
    private let compressor: OpaquePointer
    private let reopener: DeflateReopener

    /// A coder at `level` (1 to 12; 10 to 12 parse near-optimally, far slower than
    /// level 1: docs/performance.md, "PNG coding").
    init(level: Int32) throws {
        guard (1...12).contains(level), let compressor = libdeflate_alloc_compressor(level) else {
            throw RGBDError(.invalidArgument, "cannot encode PNG: no libdeflate compressor at level \(level)")
        }
        self.compressor = compressor
        do {
            reopener = try DeflateReopener()
        } catch {
            libdeflate_free_compressor(compressor)
            throw error
        }
    }

    deinit { libdeflate_free_compressor(compressor) }

    func code(_ input: UnsafeBufferPointer<UInt8>, last: Bool, prefix: [UInt8], reserve: Int) throws -> CodedStrip {
        let adler = UInt(libdeflate_adler32(1, input.baseAddress, input.count))
        let bound = libdeflate_deflate_compress_bound(compressor, input.count)
        // The bound, and the 5 bytes of the empty stored block a reopened stream ends with.
        let output = CodedStrip(prefix: prefix, expected: bound + DeflateReopener.maximumAppended,
                                reserve: reserve, adler: adler, inputCount: input.count)
        let (start, room) = output.room()
        let written = libdeflate_deflate_compress(compressor, input.baseAddress, input.count, start, room)
        guard written > 0 else { throw RGBDError(.invalidImage, "cannot encode PNG: libdeflate found no room") }
        output.advance(by: last ? written : try reopener.reopen(start, count: written, room: room, coding: input))
        return output
    }
}

/// Turns a complete raw deflate stream into one that another stream can follow, as a
/// sync flush would have ended it: the final-block bit of its last block is cleared
/// and an empty stored block (`00 00 FF FF` after a byte boundary) is appended.
///
/// Where the last block starts is found by inflating the stream with zlib, which stops
/// at each block's end (`Z_BLOCK`) and says how many bits of the last byte it read are
/// unused; the inflated bytes are checked against what was coded.
final class DeflateReopener {
    /// The most bytes `reopen` appends: a byte for the stored block's header bits when
    /// they do not fit in the last byte, then LEN and NLEN.
    static let maximumAppended = 5

    /// zlib's state points back at the stream, so the stream must not move.
    private let stream: UnsafeMutablePointer<z_stream>
    private var inflated: [UInt8] = []

    init() throws {
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard rgbd_inflate_init_raw(stream) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw RGBDError(.invalidImage, "cannot encode PNG: zlib cannot start inflating")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Reopens the `count`-byte stream at `bytes` (`room` bytes writable there), which
    /// must code exactly `coding`, and returns its new length.
    func reopen(_ bytes: UnsafeMutablePointer<UInt8>, count: Int, room: Int,
                coding: UnsafeBufferPointer<UInt8>) throws -> Int {
        func broken(_ what: String) -> RGBDError {
            RGBDError(.invalidImage, "cannot encode PNG: the compressed strip \(what)")
        }
        guard count <= Int(UInt32.max), coding.count < Int(UInt32.max), room >= count + Self.maximumAppended else {
            throw broken("does not fit")
        }
        if inflated.count < coding.count + 1 { inflated = [UInt8](repeating: 0, count: coding.count + 1) }
        guard inflateReset(stream) == Z_OK else { throw broken("cannot be inflated") }
        // The first block's header starts at bit 0 of byte 0.
        var header = (byte: 0, mask: UInt8(1))
        // Unused bits of the last byte read when the final block ended (nil until then).
        var unusedBits: Int?
        let total = try inflated.withUnsafeMutableBufferPointer { out -> Int in
            stream.pointee.next_in = bytes
            stream.pointee.avail_in = UInt32(count)
            stream.pointee.next_out = out.baseAddress
            stream.pointee.avail_out = UInt32(out.count)
            while true {
                let before = (stream.pointee.avail_in, stream.pointee.avail_out)
                let status = inflate(stream, Z_BLOCK)
                if status == Z_STREAM_END { break }
                guard status == Z_OK, before != (stream.pointee.avail_in, stream.pointee.avail_out) else {
                    throw broken("cannot be inflated (zlib status \(status))")
                }
                // At a block's end (128; 64: it was the final block), the bits of the last
                // byte read that are unused (the low 3 bits): the next block's header
                // starts there if some are, else in the next byte.
                let state = Int(stream.pointee.data_type)
                guard state & 128 != 0 else { continue }
                if state & 64 != 0 {
                    unusedBits = state & 7
                } else {
                    let used = count - Int(stream.pointee.avail_in)
                    header = state & 7 > 0 ? (used - 1, UInt8(1) << (8 - (state & 7))) : (used, 1)
                }
            }
            return out.count - Int(stream.pointee.avail_out)
        }
        let same = inflated.withUnsafeBytes { out in
            guard let expected = coding.baseAddress, let got = out.baseAddress else { return coding.isEmpty }
            return memcmp(got, expected, coding.count) == 0
        }
        guard stream.pointee.avail_in == 0, total == coding.count, same else {
            throw broken("does not inflate to its rows")
        }
        guard let unusedBits, header.byte < count, bytes[header.byte] & header.mask != 0 else {
            throw broken("has no final block where expected")
        }
        bytes[header.byte] &= ~header.mask
        var end = count
        // The bits after the last block's end are padding: zero them. The stored block's
        // 3 header bits (not final, type 00) go there if they fit, else into a new byte,
        // whose rest is the padding up to the byte boundary.
        if unusedBits > 0 { bytes[end - 1] &= UInt8(truncatingIfNeeded: (1 << (8 - unusedBits)) - 1) }
        if unusedBits < 3 {
            bytes[end] = 0
            end += 1
        }
        for byte: UInt8 in [0x00, 0x00, 0xFF, 0xFF] {
            bytes[end] = byte
            end += 1
        }
        return end
    }
}
