import CKernels
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
        let conversion = YCbCrConversion(items.matrix)
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
                                        conversion: conversion, threads: Host.processorCount)
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
                                            conversion: conversion, threads: 1)
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
    /// rows of `rowBytes`, in bands of row pairs over `threads` threads.
    func convert(into out: UnsafeMutablePointer<UInt8>, rowBytes: Int, x: Int, y top: Int,
                 width: Int, height: Int, conversion: YCbCrConversion, threads: Int) {
        let pairs = (height + 1) / 2
        let bands = max(1, min(threads * 4, pairs))
        nonisolated(unsafe) let picture = self
        nonisolated(unsafe) let destination = out
        let avx2 = VectorKernels.avx2
        let work: @Sendable (Int) -> Void = { band in
            for pair in (band * pairs / bands)..<((band + 1) * pairs / bands) {
                let row = 2 * pair
                let second = row + 1 < height
                conversion.convertRows(y0: picture.y + row * picture.yStride,
                                       y1: second ? picture.y + (row + 1) * picture.yStride : nil,
                                       cb: picture.cb + pair * picture.cbStride, cr: picture.cr + pair * picture.crStride,
                                       out0: destination + (top + row) * rowBytes + x * 3,
                                       out1: second ? destination + (top + row + 1) * rowBytes + x * 3 : nil,
                                       count: width, avx2: avx2)
            }
        }
        if bands == 1 || threads <= 1 {
            for band in 0..<bands { work(band) }
        } else {
            DispatchQueue.concurrentPerform(iterations: bands, execute: work)
        }
    }
}

/// Y′CbCr → R′G′B′ in integers, for 4:2:0 (each chroma sample over 2×2 pixels): a channel
/// is `clamp((lumaScale·Y + lumaOffset + contributions of Cb − 128 and Cr − 128) >> 16)`,
/// the coefficients in 1/2^16 from the matrix and the range (limited range expanded).
/// The AVX2 kernel (`rgbd_ycbcr420_rows_avx2`) computes the same bytes.
struct YCbCrConversion: Sendable {
    /// Luma scale, luma offset (with half a unit, so that >> 16 rounds), red from Cr,
    /// green from Cb, green from Cr, blue from Cb.
    let coefficients: [Int32]

    init(_ matrix: YCbCrMatrix) {
        let one = 65_536.0
        let kg = 1 - matrix.kr - matrix.kb
        let lumaScale = matrix.fullRange ? 1 : 255.0 / 219
        let chromaScale = matrix.fullRange ? 1 : 255.0 / 224
        let lumaOffset = -(matrix.fullRange ? 0 : 16) * lumaScale + 0.5
        coefficients = [lumaScale, lumaOffset, 2 * (1 - matrix.kr) * chromaScale,
                        -2 * matrix.kb * (1 - matrix.kb) / kg * chromaScale,
                        -2 * matrix.kr * (1 - matrix.kr) / kg * chromaScale, 2 * (1 - matrix.kb) * chromaScale]
            .map { Int32(($0 * one).rounded()) }
    }

    /// Two rows sharing a chroma row (`y1`/`out1` nil for a last single row), `count`
    /// pixels each; the AVX2 kernel first where `avx2`, these loops for the rest.
    func convertRows(y0: UnsafePointer<UInt8>, y1: UnsafePointer<UInt8>?, cb: UnsafePointer<UInt8>,
                     cr: UnsafePointer<UInt8>, out0: UnsafeMutablePointer<UInt8>, out1: UnsafeMutablePointer<UInt8>?,
                     count: Int, avx2: Bool) {
        let done = avx2 ? coefficients.withUnsafeBufferPointer {
            rgbd_ycbcr420_rows_avx2(count, y0, y1, cb, cr, out0, out1, $0.baseAddress)
        } : 0
        let lumaScale = coefficients[0], lumaOffset = coefficients[1], redCr = coefficients[2]
        let greenCb = coefficients[3], greenCr = coefficients[4], blueCb = coefficients[5]
        // `done` is even: each chroma sample's contributions once, for its two pixels.
        func row(_ y: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>) {
            var x = done
            while x < count {
                let u = Int32(cb[x >> 1]) - 128, v = Int32(cr[x >> 1]) - 128
                let red = v &* redCr, green = u &* greenCb &+ v &* greenCr, blue = u &* blueCb
                for p in x..<min(x + 2, count) {
                    let l = Int32(y[p]) &* lumaScale &+ lumaOffset
                    out[3 * p] = Self.clamp(l &+ red)
                    out[3 * p + 1] = Self.clamp(l &+ green)
                    out[3 * p + 2] = Self.clamp(l &+ blue)
                }
                x += 2
            }
        }
        row(y0, out0)
        if let y1, let out1 { row(y1, out1) }
    }

    @inline(__always)
    private static func clamp(_ value: Int32) -> UInt8 {
        UInt8(truncatingIfNeeded: min(max(value >> 16, 0), 255))
    }
}
