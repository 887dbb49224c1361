import CDE265
import Dispatch

/// Decodes the primary image `HEIFItems` describes with libde265, to 8-bit RGB.
///
/// The tiles of a grid (a 12 MP iPhone photo has 48) are spread over the cores, each
/// worker with its own decoder, and each tile's Y′CbCr 4:2:0 is converted straight into
/// its place in the output. A single-image file is decoded with libde265's own worker
/// threads (wavefront rows, where the encoder allowed them) and converted in bands of
/// rows on all cores. Chroma is upsampled by repeating each sample over its 2×2 block, as
/// libheif does for 4:2:0.
enum HEVCImageDecoder {
    static func decodeRGB(_ items: HEIFItems, file: String?) throws -> ColorImage {
        let width = items.width, height = items.height
        let tables = ConversionTables(items.matrix)
        let tileCount = items.tiles.count
        let workers = max(1, min(Host.processorCount, tileCount))
        let slots = UnsafeMutableBufferPointer<(any Error)?>.allocate(capacity: tileCount)
        slots.initialize(repeating: nil)
        defer {
            slots.deinitialize()
            slots.deallocate()
        }
        nonisolated(unsafe) let errors = slots
        let samples = LargeBuffer.make(count: width * height * 3) { (output: UnsafeMutableBufferPointer<UInt8>) in
            guard let base = output.baseAddress else { return }
            nonisolated(unsafe) let out = base
            if tileCount == 1 {
                do {
                    try decode(items.tiles[0], threads: Host.processorCount) { picture in
                        picture.convert(into: out, rowBytes: width * 3, x: 0, y: 0, width: width, height: height,
                                        tables: tables, threads: Host.processorCount)
                    }
                } catch {
                    errors[0] = error
                }
                return
            }
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                for index in stride(from: worker, to: tileCount, by: workers) {
                    let tile = items.tiles[index]
                    let x = (index % items.columns) * tile.width, y = (index / items.columns) * tile.height
                    guard x < width, y < height else { continue }
                    do {
                        try decode(tile, threads: 0) { picture in
                            picture.convert(into: out, rowBytes: width * 3, x: x, y: y,
                                            width: min(tile.width, width - x), height: min(tile.height, height - y),
                                            tables: tables, threads: 1)
                        }
                    } catch {
                        errors[index] = error
                    }
                }
            }
        }
        if let error = slots.lazy.compactMap({ $0 }).first {
            throw RGBDError(.invalidImage, file: file, "cannot decode HEIF image: \(error)")
        }
        return ColorImage(width: width, height: height, channels: 3, samples: samples)
    }

    private struct DecodeError: Error, CustomStringConvertible {
        var description: String
    }

    /// Decodes one coded image with a new decoder (`threads` > 0: libde265's worker
    /// threads) and hands its picture to `use` while the decoder is alive.
    private static func decode(_ image: HEIFItems.CodedImage, threads: Int,
                               _ use: (Picture) throws -> Void) throws {
        guard let decoder = de265_new_decoder() else { throw DecodeError(description: "cannot start libde265") }
        defer { de265_free_decoder(decoder) }
        if threads > 1 { _ = de265_start_worker_threads(decoder, Int32(threads)) }
        func check(_ status: de265_error) throws {
            guard de265_isOK(status) != 0 else {
                throw DecodeError(description: de265_get_error_text(status).map { String(cString: $0) } ?? "libde265 error")
            }
        }
        func push(_ nal: ArraySlice<UInt8>) throws {
            guard nal.count <= Int(Int32.max) else { throw DecodeError(description: "a NAL unit too large") }
            try nal.withUnsafeBytes { try check(de265_push_NAL(decoder, $0.baseAddress, Int32($0.count), 0, nil)) }
        }
        for set in image.parameterSets { try push(set) }
        var c = image.data.startIndex
        let end = image.data.endIndex
        while c < end {
            guard end - c >= image.lengthSize else { throw DecodeError(description: "truncated NAL length") }
            var length = 0
            for i in 0..<image.lengthSize { length = length << 8 | Int(image.data[c + i]) }
            c += image.lengthSize
            guard length <= end - c else { throw DecodeError(description: "a NAL unit runs past the item's data") }
            try push(image.data[c..<c + length])
            c += length
        }
        try check(de265_flush_data(decoder))
        var more: Int32 = 1
        while more != 0 {
            let status = de265_decode(decoder, &more)
            if status == DE265_ERROR_WAITING_FOR_INPUT_DATA { break }
            try check(status)
            if de265_peek_next_picture(decoder) != nil { break }
        }
        guard let picture = de265_get_next_picture(decoder) else {
            throw DecodeError(description: "libde265 decoded no picture")
        }
        defer { de265_release_next_picture(decoder) }
        guard de265_get_chroma_format(picture) == de265_chroma_420,
              de265_get_bits_per_pixel(picture, 0) == 8, de265_get_bits_per_pixel(picture, 1) == 8,
              Int(de265_get_image_width(picture, 0)) == image.width,
              Int(de265_get_image_height(picture, 0)) == image.height else {
            throw DecodeError(description: "libde265 decoded a picture unlike the item's header")
        }
        var strides: [Int32] = [0, 0, 0]
        guard let y = de265_get_image_plane(picture, 0, &strides[0]),
              let cb = de265_get_image_plane(picture, 1, &strides[1]),
              let cr = de265_get_image_plane(picture, 2, &strides[2]) else {
            throw DecodeError(description: "libde265 returned no planes")
        }
        try use(Picture(y: y, cb: cb, cr: cr, yStride: Int(strides[0]), cStride: Int(strides[1]),
                        crStride: Int(strides[2])))
    }

    /// A decoded 4:2:0 picture's planes (owned by the decoder).
    struct Picture {
        let y: UnsafePointer<UInt8>
        let cb: UnsafePointer<UInt8>
        let cr: UnsafePointer<UInt8>
        let yStride: Int
        let cStride: Int
        let crStride: Int

        /// Converts the picture's top-left `width` × `height` pixels into `out` at (x, y),
        /// rows of `rowBytes`, in bands over `threads` threads.
        func convert(into out: UnsafeMutablePointer<UInt8>, rowBytes: Int, x: Int, y top: Int,
                     width: Int, height: Int, tables: ConversionTables, threads: Int) {
            let pairs = (height + 1) / 2
            let bands = max(1, min(threads * 4, pairs))
            nonisolated(unsafe) let picture = self
            nonisolated(unsafe) let destination = out
            let work: @Sendable (Int) -> Void = { band in
                for pair in (band * pairs / bands)..<((band + 1) * pairs / bands) {
                    for row in (2 * pair)..<min(height, 2 * pair + 2) {
                        tables.convertRow(y: picture.y + row * picture.yStride, cb: picture.cb + pair * picture.cStride,
                                          cr: picture.cr + pair * picture.crStride,
                                          out: destination + (top + row) * rowBytes + x * 3, count: width)
                    }
                }
            }
            if bands == 1 || threads <= 1 {
                for band in 0..<bands { work(band) }
            } else {
                DispatchQueue.concurrentPerform(iterations: bands, execute: work)
            }
        }
    }
}

/// Y′CbCr → R′G′B′ in integers: per chroma value its contribution to each channel, in
/// 1/2^16, from the matrix (and the range expansion for limited range).
struct ConversionTables: Sendable {
    private var luma: [Int32]
    private var redFromCr: [Int32]
    private var greenFromCb: [Int32]
    private var greenFromCr: [Int32]
    private var blueFromCb: [Int32]

    init(_ matrix: YCbCrMatrix) {
        let one = 65_536.0
        let kg = 1 - matrix.kr - matrix.kb
        let lumaScale = matrix.fullRange ? 1 : 255.0 / 219
        let chromaScale = matrix.fullRange ? 1 : 255.0 / 224
        func table(_ f: (Double) -> Double) -> [Int32] { (0..<256).map { Int32((f(Double($0)) * one).rounded()) } }
        // Half a unit is added to the luma term, so that the sum's >> 16 rounds.
        luma = table { (($0 - (matrix.fullRange ? 0 : 16)) * lumaScale) + 0.5 }
        redFromCr = table { 2 * (1 - matrix.kr) * ($0 - 128) * chromaScale }
        blueFromCb = table { 2 * (1 - matrix.kb) * ($0 - 128) * chromaScale }
        greenFromCb = table { -2 * matrix.kb * (1 - matrix.kb) / kg * ($0 - 128) * chromaScale }
        greenFromCr = table { -2 * matrix.kr * (1 - matrix.kr) / kg * ($0 - 128) * chromaScale }
    }

    /// One row of `count` pixels; chroma at half horizontal resolution.
    @inline(__always)
    func convertRow(y: UnsafePointer<UInt8>, cb: UnsafePointer<UInt8>, cr: UnsafePointer<UInt8>,
                    out: UnsafeMutablePointer<UInt8>, count: Int) {
        luma.withUnsafeBufferPointer { luma in
            redFromCr.withUnsafeBufferPointer { rCr in
                greenFromCb.withUnsafeBufferPointer { gCb in
                    greenFromCr.withUnsafeBufferPointer { gCr in
                        blueFromCb.withUnsafeBufferPointer { bCb in
                            // Two pixels per chroma sample: its three contributions looked up once.
                            var o = out
                            let pairs = count >> 1
                            for pair in 0..<pairs {
                                let u = Int(cb[pair]), v = Int(cr[pair])
                                let red = rCr[v], green = gCb[u] &+ gCr[v], blue = bCb[u]
                                let l0 = luma[Int(y[2 * pair])], l1 = luma[Int(y[2 * pair + 1])]
                                o[0] = Self.clamp(l0 &+ red)
                                o[1] = Self.clamp(l0 &+ green)
                                o[2] = Self.clamp(l0 &+ blue)
                                o[3] = Self.clamp(l1 &+ red)
                                o[4] = Self.clamp(l1 &+ green)
                                o[5] = Self.clamp(l1 &+ blue)
                                o += 6
                            }
                            if count & 1 == 1 {
                                let u = Int(cb[pairs]), v = Int(cr[pairs])
                                let l = luma[Int(y[count - 1])]
                                o[0] = Self.clamp(l &+ rCr[v])
                                o[1] = Self.clamp(l &+ gCb[u] &+ gCr[v])
                                o[2] = Self.clamp(l &+ bCb[u])
                            }
                        }
                    }
                }
            }
        }
    }

    @inline(__always)
    private static func clamp(_ value: Int32) -> UInt8 {
        UInt8(truncatingIfNeeded: min(max(value >> 16, 0), 255))
    }
}
