import Dispatch

/// A plane of a frame to read: rows `rowBytes` apart (at least a row's bytes; the bytes
/// between rows are never read), as in a `CVPixelBuffer` plane or a strided array.
package struct FramePlane {
    /// The bytes from the first pixel on; at least `(height − 1)·rowBytes` plus one row.
    package var bytes: UnsafeRawBufferPointer
    /// Bytes from the start of one row to the start of the next.
    package var rowBytes: Int

    /// A plane over `bytes` with rows `rowBytes` apart.
    package init(_ bytes: UnsafeRawBufferPointer, rowBytes: Int) {
        self.bytes = bytes
        self.rowBytes = rowBytes
    }
}

/// A plane of a frame to write: rows `rowBytes` apart; the bytes between rows are never
/// written.
package struct MutableFramePlane {
    /// The bytes from the first pixel on; at least `(height − 1)·rowBytes` plus one row.
    package var bytes: UnsafeMutableRawBufferPointer
    /// Bytes from the start of one row to the start of the next.
    package var rowBytes: Int

    /// A plane over `bytes` with rows `rowBytes` apart.
    package init(_ bytes: UnsafeMutableRawBufferPointer, rowBytes: Int) {
        self.bytes = bytes
        self.rowBytes = rowBytes
    }
}

/// Rectifies the frames of one camera at one frame size (video, a camera stream):
/// created once for the lens and size, then applied to any number of frames, from any
/// number of threads at once (it is immutable).
///
/// Frames: 8-bit with 1 to 4 interleaved channels (luminance, CbCr, RGB, BGRA), float32
/// depth (edge-aware, `DepthRemap`), and NV12 (`420v`/`420f`: a full-size luminance
/// plane and a half-size interleaved CbCr plane) in one call. Every result is the one
/// `Rectifier` gives for the same frame, bit for bit: the same fixed-point source
/// positions, weights and rounding. Rows are spread over the cores with
/// `DispatchQueue.concurrentPerform` (`scheduler`).
///
/// **Chroma siting.** An NV12 chroma sample `(i, j)` stands for the luminance-grid point
/// `(2i, 2j + ½)`: horizontally on the left luminance sample of its pair, vertically
/// half-way between its two rows (`kCVImageBufferChromaLocation_Left`, the siting of
/// H.264/HEVC video and of iPhone camera buffers). The chroma plane is rectified with the
/// same lens seen on its grid, `chromaDistortion`: center `(c.x/2, c.y/2 − ¼)`, and the
/// table's radii halved.
///
/// **What it keeps.** The source positions of every pixel, as `RectificationMap`s (4 bytes
/// per pixel, 5 per luminance pixel with the chroma plane's), while they fit
/// `mapByteLimit`; beyond it (or for a lens moving pixels by more than 127 px) positions are
/// computed on the fly, with the same result. `bytesHeld` says how much is kept. With maps
/// every kind of frame is faster than with positions computed per frame, and building
/// the maps once pays off from the second or third frame (measured at 1920×1440:
/// BENCHMARKS.md, "Frames", and docs/performance.md).
package final class FrameRectifier: Sendable {
    /// The lens at the frame's size (luminance plane of NV12 frames).
    package let distortion: LensDistortion
    /// The lens on an NV12 frame's chroma plane (`(width + 1)/2 × (height + 1)/2`).
    package let chromaDistortion: LensDistortion
    /// How rows are spread over threads.
    package let scheduler: RowScheduler
    /// Depth only: the largest relative depth step still blended (`Rectifier`).
    package let maxRelativeDepthStep: Float
    let luma: PlanePositions
    let chroma: PlanePositions

    /// Frame width in pixels.
    package var width: Int { distortion.width }
    /// Frame height in pixels.
    package var height: Int { distortion.height }
    /// Width of an NV12 frame's chroma plane, `(width + 1) / 2`.
    package var chromaWidth: Int { chromaDistortion.width }
    /// Height of an NV12 frame's chroma plane, `(height + 1) / 2`.
    package var chromaHeight: Int { chromaDistortion.height }

    /// Bytes the rectifier keeps: the maps it holds (if any) and the lens tables.
    package var bytesHeld: Int { luma.bytesHeld + chroma.bytesHeld }
    /// Whether source positions come from precomputed maps (false: computed per frame).
    package var usesMaps: Bool { luma.map != nil }

    /// The default bound of the maps' memory: 64 MiB (a 12-megapixel frame's).
    package static let defaultMapByteLimit = 64 << 20

    /// A rectifier for frames of `distortion.width × distortion.height` pixels.
    ///
    /// - Parameters:
    ///   - mapByteLimit: the most memory spent on precomputed positions; 0 computes them
    ///     for every frame.
    /// - Throws: `RGBDError` (`.invalidArgument`) for an empty size, a size beyond 2³¹
    ///   pixels, or a depth step that is not a positive number.
    package init(distortion: LensDistortion, scheduler: RowScheduler = .parallel, maxRelativeDepthStep: Float = Rectifier.defaultMaxRelativeDepthStep,
                mapByteLimit: Int = FrameRectifier.defaultMapByteLimit) throws {
        let width = distortion.width, height = distortion.height
        guard width > 0, height > 0, width <= 1 << 30, height <= 1 << 30, width * height <= 1 << 31 else {
            throw RGBDError(.invalidArgument, "frame size \(width)×\(height) is out of range (1 to 2³¹ pixels)")
        }
        guard Rectifier.isValidDepthStep(maxRelativeDepthStep) else {
            throw RGBDError(.invalidArgument, "the maximum relative depth step must be a positive number, not \(maxRelativeDepthStep)")
        }
        let chromaDistortion = LensDistortion(
            center: SIMD2(distortion.center.x / 2, distortion.center.y / 2 - 0.25), table: distortion.table,
            width: (width + 1) / 2, height: (height + 1) / 2, maxRadius: distortion.maxRadius / 2)
        self.distortion = distortion
        self.chromaDistortion = chromaDistortion
        self.scheduler = scheduler
        self.maxRelativeDepthStep = maxRelativeDepthStep
        let lumaBytes = RectificationMap.byteCount(width: width, height: height)
        let chromaBytes = RectificationMap.byteCount(width: chromaDistortion.width, height: chromaDistortion.height)
        let budget = max(0, mapByteLimit)
        luma = PlanePositions(distortion, map: lumaBytes <= budget, scheduler: scheduler)
        chroma = PlanePositions(chromaDistortion, map: luma.map != nil && lumaBytes + chromaBytes <= budget,
                                scheduler: scheduler)
    }

    // MARK: Frames

    /// Rectifies an 8-bit frame of `channels` (1 to 4) interleaved samples per pixel into
    /// `destination` (which must not overlap the source). Bytes between rows are neither
    /// read nor written.
    ///
    /// - Throws: `RGBDError` (`.invalidArgument`) for a channel count outside 1...4, a row
    ///   stride shorter than a row, a buffer too small for the frame, or overlapping buffers.
    package func rectify(_ source: FramePlane, channels: Int, into destination: MutableFramePlane) throws {
        guard (1...4).contains(channels) else {
            throw RGBDError(.invalidArgument, "channels must be 1, 2, 3 or 4, not \(channels)")
        }
        let src = try Self.extent(of: source.bytes.baseAddress, count: source.bytes.count, rowBytes: source.rowBytes,
                                  width: width, height: height, pixelBytes: channels, "the source")
        let dst = try Self.extent(of: destination.bytes.baseAddress, count: destination.bytes.count,
                                  rowBytes: destination.rowBytes, width: width, height: height, pixelBytes: channels,
                                  "the destination")
        try Self.checkDisjoint([src], [dst])
        let job = PlaneJob(positions: luma, width: width, height: height, channels: channels, src: src.start,
                           srcRowBytes: source.rowBytes, dst: dst.start, dstRowBytes: destination.rowBytes)
        run([job])
    }

    /// Rectifies an NV12 frame (`420v`/`420f`): the luminance plane (`width × height`, one
    /// byte per pixel) and the chroma plane (`chromaWidth × chromaHeight` pairs of bytes,
    /// Cb Cr) into the two destination planes, in one pass over the cores. No buffer may
    /// overlap another.
    package func rectifyNV12(luma lumaSource: FramePlane, chroma chromaSource: FramePlane,
                            intoLuma lumaDestination: MutableFramePlane,
                            chroma chromaDestination: MutableFramePlane) throws {
        let ys = try Self.extent(of: lumaSource.bytes.baseAddress, count: lumaSource.bytes.count,
                                 rowBytes: lumaSource.rowBytes, width: width, height: height, pixelBytes: 1,
                                 "the luminance source")
        let cs = try Self.extent(of: chromaSource.bytes.baseAddress, count: chromaSource.bytes.count,
                                 rowBytes: chromaSource.rowBytes, width: chromaWidth, height: chromaHeight,
                                 pixelBytes: 2, "the chroma source")
        let yd = try Self.extent(of: lumaDestination.bytes.baseAddress, count: lumaDestination.bytes.count,
                                 rowBytes: lumaDestination.rowBytes, width: width, height: height, pixelBytes: 1,
                                 "the luminance destination")
        let cd = try Self.extent(of: chromaDestination.bytes.baseAddress, count: chromaDestination.bytes.count,
                                 rowBytes: chromaDestination.rowBytes, width: chromaWidth, height: chromaHeight,
                                 pixelBytes: 2, "the chroma destination")
        try Self.checkDisjoint([ys, cs], [yd, cd])
        run([PlaneJob(positions: luma, width: width, height: height, channels: 1, src: ys.start,
                      srcRowBytes: lumaSource.rowBytes, dst: yd.start, dstRowBytes: lumaDestination.rowBytes),
             PlaneJob(positions: chroma, width: chromaWidth, height: chromaHeight, channels: 2, src: cs.start,
                      srcRowBytes: chromaSource.rowBytes, dst: cd.start, dstRowBytes: chromaDestination.rowBytes)])
    }

    /// Rectifies a float32 depth map (meters, NaN = no depth) as `Rectifier` does:
    /// bilinear among neighbors within `maxRelativeDepthStep` of the nearest one, holes
    /// stay holes. Row strides are in bytes and must be multiples of 4, the buffers
    /// 4-byte aligned.
    package func rectifyDepth(_ source: FramePlane, into destination: MutableFramePlane) throws {
        let size = MemoryLayout<Float>.size
        let src = try Self.extent(of: source.bytes.baseAddress, count: source.bytes.count, rowBytes: source.rowBytes,
                                  width: width, height: height, pixelBytes: size, "the source")
        let dst = try Self.extent(of: destination.bytes.baseAddress, count: destination.bytes.count,
                                  rowBytes: destination.rowBytes, width: width, height: height, pixelBytes: size,
                                  "the destination")
        for (plane, rowBytes, name) in [(src, source.rowBytes, "source"), (dst, destination.rowBytes, "destination")] {
            guard Int(bitPattern: plane.start) % size == 0, rowBytes % size == 0 else {
                throw RGBDError(.invalidArgument, "the depth \(name) must be 4-byte aligned with a row stride that is a multiple of 4, not \(rowBytes)")
            }
        }
        try Self.checkDisjoint([src], [dst])
        let width = self.width, height = self.height, step = maxRelativeDepthStep
        let srcStride = source.rowBytes / size, dstRowBytes = destination.rowBytes
        nonisolated(unsafe) let from = UnsafeRawPointer(src.start).assumingMemoryBound(to: Float.self)
        nonisolated(unsafe) let to = dst.start
        let evaluator = luma.evaluator
        evaluator.withTables { table, slopes in
            scheduler.forEachBand(rows: height) { rows in
                for y in rows {
                    let row = (to + y &* dstRowBytes).assumingMemoryBound(to: Float.self)
                    DepthRemap.rectifyRow(y, positions: evaluator, table: table, slopes: slopes, src: from, width: width,
                                          height: height, srcStride: srcStride, maxRelativeStep: step, dstRow: row)
                }
            }
        }
    }

    /// Rectifies an 8-bit image of the rectifier's size into a new one.
    package func rectify(_ image: ImageBuffer<UInt8>) throws -> ImageBuffer<UInt8> {
        try checkSize(image.width, image.height)
        let rowBytes = image.width * image.channels
        var failure: (any Error)?
        let samples = LargeBuffer.make(count: image.samples.count) { (out: UnsafeMutableBufferPointer<UInt8>) in
            do {
                try image.samples.withUnsafeBytes { source in
                    try rectify(FramePlane(source, rowBytes: rowBytes), channels: image.channels,
                                into: MutableFramePlane(UnsafeMutableRawBufferPointer(out), rowBytes: rowBytes))
                }
            } catch {
                failure = error
                out.initialize(repeating: 0)
            }
        }
        if let failure { throw failure }
        return ImageBuffer(width: image.width, height: image.height, channels: image.channels, samples: samples)
    }

    /// Rectifies a depth map of the rectifier's size into a new one.
    package func rectify(_ depth: DepthMap) throws -> DepthMap {
        try checkSize(depth.width, depth.height)
        guard depth.channels == 1 else { throw RGBDError(.invalidArgument, "a depth map has one channel, not \(depth.channels)") }
        let rowBytes = depth.width * MemoryLayout<Float>.size
        var failure: (any Error)?
        let samples = LargeBuffer.make(count: depth.samples.count) { (out: UnsafeMutableBufferPointer<Float>) in
            do {
                try depth.samples.withUnsafeBytes { source in
                    try rectifyDepth(FramePlane(source, rowBytes: rowBytes),
                                     into: MutableFramePlane(UnsafeMutableRawBufferPointer(out), rowBytes: rowBytes))
                }
            } catch {
                failure = error
                out.initialize(repeating: .nan)
            }
        }
        if let failure { throw failure }
        return DepthMap(width: depth.width, height: depth.height, channels: 1, samples: samples)
    }

    private func checkSize(_ w: Int, _ h: Int) throws {
        guard w == width, h == height else {
            throw RGBDError(.invalidArgument, "the frame is \(w)×\(h), the rectifier is for \(width)×\(height)")
        }
    }

    // MARK: Work

    /// Runs the planes' rows over the threads: one list of rows, the planes' one after the
    /// other, split into bands (a band may end one plane and start the next).
    private func run(_ jobs: [PlaneJob]) {
        let total = jobs.reduce(0) { $0 + $1.height }
        scheduler.forEachBand(rows: total) { band in
            let scratch = PositionChunk.allocate()
            defer { scratch.deallocate() }
            var first = 0
            for job in jobs {
                let start = max(band.lowerBound, first), end = min(band.upperBound, first + job.height)
                if start < end { job.run(rows: (start - first)..<(end - first), scratch: scratch) }
                first += job.height
            }
        }
    }

    /// A plane's first byte and extent, checked: not NULL, a row stride of at least a row,
    /// and room for `(height − 1)` strides and one row.
    static func extent(of base: UnsafeRawPointer?, count: Int, rowBytes: Int, width: Int, height: Int, pixelBytes: Int,
                       _ name: String) throws -> (start: UnsafeMutableRawPointer, end: UnsafeRawPointer) {
        let row = width * pixelBytes
        guard let base else { throw RGBDError(.invalidArgument, "\(name) is NULL") }
        guard rowBytes >= row else {
            throw RGBDError(.invalidArgument, "\(name)'s row stride is \(rowBytes) bytes, less than a row's \(row) (\(width) pixels of \(pixelBytes) bytes)")
        }
        let (strides, overflow) = (height - 1).multipliedReportingOverflow(by: rowBytes)
        let needed = overflow ? Int.max : strides.addingReportingOverflow(row).overflow ? Int.max : strides + row
        guard count >= needed else {
            throw RGBDError(.invalidArgument, "\(name) holds \(count) bytes, \(needed) are needed (\(height) rows \(rowBytes) bytes apart, \(row) bytes each)")
        }
        return (UnsafeMutableRawPointer(mutating: base), base + needed)
    }

    /// Throws if a destination shares memory with a source or with another destination.
    static func checkDisjoint(_ reads: [(start: UnsafeMutableRawPointer, end: UnsafeRawPointer)],
                              _ writes: [(start: UnsafeMutableRawPointer, end: UnsafeRawPointer)]) throws {
        func overlap(_ a: (start: UnsafeMutableRawPointer, end: UnsafeRawPointer),
                     _ b: (start: UnsafeMutableRawPointer, end: UnsafeRawPointer)) -> Bool {
            UnsafeRawPointer(a.start) < b.end && UnsafeRawPointer(b.start) < a.end
        }
        for (i, w) in writes.enumerated() {
            if reads.contains(where: { overlap(w, $0) }) || writes[(i + 1)...].contains(where: { overlap(w, $0) }) {
                throw RGBDError(.invalidArgument, "the buffers overlap: a destination must not share memory with a source or another destination")
            }
        }
    }
}

/// Where the source positions of one plane come from: a precomputed map, or the lens
/// evaluated per frame.
struct PlanePositions: Sendable {
    let evaluator: SourcePositions
    let map: RectificationMap?

    init(_ distortion: LensDistortion, map wanted: Bool, scheduler: RowScheduler) {
        evaluator = SourcePositions(distortion)
        map = wanted ? RectificationMap(distortion, scheduler: scheduler) : nil
    }

    var bytesHeld: Int {
        (map.map { RectificationMap.byteCount(width: $0.width, height: $0.height) } ?? 0)
            + (evaluator.table.count + evaluator.slopes.count + evaluator.scaledTables.count) * MemoryLayout<Float>.size
    }
}

/// One plane of one frame to rectify.
struct PlaneJob {
    let positions: PlanePositions
    let width: Int
    let height: Int
    let channels: Int
    let src: UnsafeMutableRawPointer
    let srcRowBytes: Int
    let dst: UnsafeMutableRawPointer
    let dstRowBytes: Int

    /// Rectifies `rows` of the plane, in tiles (`Rectifier.forEachTile`).
    package func run(rows: Range<Int>, scratch: PositionChunk) {
        let width = self.width, height = self.height, channels = self.channels
        let src = UnsafeRawPointer(self.src), srcRowBytes = self.srcRowBytes
        let dst = self.dst.assumingMemoryBound(to: UInt8.self), dstRowBytes = self.dstRowBytes
        // Byte offsets of neighborhoods are 32-bit in the vector paths.
        let vector = (height &- 1).multipliedReportingOverflow(by: srcRowBytes).partialValue &+ width &* channels &+ 8
            <= Int(Int32.max) && srcRowBytes <= Int(Int32.max)
        if let map = positions.map {
            map.offsets.withUnsafeBufferPointer { offsets in
                guard let base = offsets.baseAddress else { return }
                let direct = channels != 2 && FrameRemap.directFits(width: width, height: height, rowBytes: srcRowBytes)
                Rectifier.forEachTile(rows: rows, width: width) { y, x0, n in
                    let out = dst + (y &* dstRowBytes &+ x0 &* channels)
                    if direct {
                        let words = UnsafeRawPointer(base + (y &* width &+ x0) &* 2)
                        if channels == 1 {
                            FrameRemap.sample1Direct(count: n, words: words, y: y, from: x0, src: src, width: width,
                                                     height: height, rowBytes: srcRowBytes, out: out)
                        } else {
                            FrameRemap.sampleColorDirect(count: n, words: words, y: y, from: x0, src: src, width: width,
                                                         height: height, rowBytes: srcRowBytes, out: out,
                                                         fourChannels: channels == 4, spill: x0 &+ n < width)
                        }
                        return
                    }
                    if vector {
                        FrameRemap.prepareFromMap(count: n, chunk: scratch, offsets: base, mapWidth: width, y: y, from: x0,
                                                  width: width, height: height, rowBytes: srcRowBytes, pixelBytes: channels)
                        FrameRemap.samplePrepared(count: n, chunk: scratch, channels: channels, src: src, width: width,
                                                  height: height, rowBytes: srcRowBytes, out: out, spill: x0 &+ n < width)
                        return
                    }
                    map.span(y: y, from: x0, count: n, offsets: base, xs: scratch.xs, ys: scratch.ys)
                    FrameRemap.sampleSpan(count: n, chunk: scratch, channels: channels, src: src, width: width,
                                          height: height, rowBytes: srcRowBytes,
                                          out: dst + (y &* dstRowBytes &+ x0 &* channels), vector: vector,
                                          spill: x0 &+ n < width)
                }
            }
        } else {
            let evaluator = positions.evaluator
            Rectifier.forEachTile(rows: rows, width: width) { y, x0, n in
                evaluator.fixedPointSpan(y: y, from: x0, count: n, xs: scratch.xs, ys: scratch.ys)
                FrameRemap.sampleSpan(count: n, chunk: scratch, channels: channels, src: src, width: width,
                                      height: height, rowBytes: srcRowBytes,
                                      out: dst + (y &* dstRowBytes &+ x0 &* channels), vector: vector,
                                      spill: x0 &+ n < width)
            }
        }
    }
}
