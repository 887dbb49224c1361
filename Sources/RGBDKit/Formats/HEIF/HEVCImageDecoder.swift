import Dispatch

/// Decodes the primary image `HEIFItems` describes, to 8-bit RGB.
///
/// The tiles of a grid (a 12 MP iPhone photo has 48) are spread over the cores, each
/// worker with its own decoder, and each tile's Y′CbCr 4:2:0 is converted straight into
/// its place in the output. A single-image file is decoded with the decoder's own threads
/// (slices or wavefront rows, where the encoder allowed them) and converted in bands of
/// rows on all cores. Chroma is upsampled by repeating each sample over its 2×2 block, as
/// libheif does for 4:2:0.
///
/// The HEVC decoder is FFmpeg's (`HEVCCodedImageDecoder`), or libde265 where FFmpeg's
/// cannot be started; both give the same pixels.
enum HEVCImageDecoder {
    /// Which HEVC decoder decodes the coded images.
    enum Backend: Sendable, CaseIterable {
        /// FFmpeg's libavcodec, falling back to libde265 when it cannot be started.
        case ffmpeg
        /// libde265.
        case libde265
    }

    static func decodeRGB(_ items: HEIFItems, file: String?, backend: Backend = .ffmpeg) throws -> ColorImage {
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
                    try makeDecoder(backend, threads: Host.processorCount).decode(items.tiles[0]) { picture in
                        picture.convert(into: out, rowBytes: width * 3, x: 0, y: 0, width: width, height: height,
                                        tables: tables, threads: Host.processorCount)
                    }
                } catch {
                    errors[0] = error
                }
                return
            }
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                let decoder: any HEVCCodedImageDecoder
                do {
                    decoder = try makeDecoder(backend, threads: 1)
                } catch {
                    errors[worker] = error
                    return
                }
                for index in stride(from: worker, to: tileCount, by: workers) {
                    let tile = items.tiles[index]
                    let x = (index % items.columns) * tile.width, y = (index / items.columns) * tile.height
                    guard x < width, y < height else { continue }
                    do {
                        try decoder.decode(tile) { picture in
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

    /// A decoder of `backend` (libde265 when FFmpeg's cannot be started).
    private static func makeDecoder(_ backend: Backend, threads: Int) throws -> any HEVCCodedImageDecoder {
        if backend == .ffmpeg, let decoder = try? FFmpegHEVCDecoder(threads: threads) { return decoder }
        return LibDE265Decoder(threads: threads)
    }
}

extension HEVCPicture {
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
                    tables.convertRow(y: picture.y + row * picture.yStride, cb: picture.cb + pair * picture.cbStride,
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
