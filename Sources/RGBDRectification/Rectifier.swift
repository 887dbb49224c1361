/// Rectifies images with Apple's lookup-table model (docs/lens-model.md): every output pixel
/// `p` takes the distorted input's value at `LensDistortion.apply(to: p)`.
///
/// Color is sampled bilinearly (black outside the input); depth with `DepthRemap`
/// (no value invented across an edge, holes stay holes, no depth outside the input).
/// Rows are independent; `scheduler` decides how they are spread over threads, and the
/// result is the same bit for bit either way.
public struct Rectifier: Sendable {
    /// How rows are spread over threads.
    public var scheduler: RowScheduler
    /// Largest relative depth difference to the nearest neighbor that depth
    /// interpolation still blends (0.05 = 5 %); larger steps are treated as edges.
    public var maxRelativeDepthStep: Float

    /// A rectifier; by default parallel, blending depths within 5 % of each other.
    public init(scheduler: RowScheduler = .parallel, maxRelativeDepthStep: Float = Rectifier.defaultMaxRelativeDepthStep) {
        self.scheduler = scheduler
        self.maxRelativeDepthStep = maxRelativeDepthStep
    }

    /// The depth step blended by default: 0.05 (5 %).
    public static let defaultMaxRelativeDepthStep: Float = 0.05

    /// Whether `step` can be a `maxRelativeDepthStep`: a positive finite number.
    package static func isValidDepthStep(_ step: Float) -> Bool { step > 0 && step.isFinite }

    /// Rectifies an 8-bit image (any number of channels) whose size is the
    /// distortion's, computing source positions on the fly.
    public func rectify(_ image: ImageBuffer<UInt8>, distortion: LensDistortion) -> ImageBuffer<UInt8> {
        precondition(image.width == distortion.width && image.height == distortion.height,
                     "the distortion model is for another image size")
        let output = LargeBuffer.make(count: image.samples.count) { (destination: UnsafeMutableBufferPointer<UInt8>) in
            image.samples.withUnsafeBufferPointer { source in
                rectify(source, channels: image.channels, distortion: distortion, into: destination)
            }
        }
        return ImageBuffer(width: image.width, height: image.height, channels: image.channels, samples: output)
    }

    /// Rectifies 8-bit samples (`distortion.width × distortion.height` pixels of
    /// `channels` interleaved samples) into a caller buffer of the same size, which must
    /// not overlap the source.
    package func rectify(_ source: UnsafeBufferPointer<UInt8>, channels: Int, distortion: LensDistortion,
                        into destination: UnsafeMutableBufferPointer<UInt8>) {
        let width = distortion.width, height = distortion.height
        precondition(channels > 0 && source.count == width * height * channels && destination.count == source.count,
                     "buffer sizes do not match the image")
        guard let src = source.baseAddress, let dst = destination.baseAddress else { return }
        let evaluator = SourcePositions(distortion)
        scheduler.forEachBand(rows: height) { rows in
            let scratch = PositionChunk.allocate()
            defer { scratch.deallocate() }
            Self.forEachTile(rows: rows, width: width) { y, x0, n in
                ColorRemap.rectifyChunk(y, from: x0, count: n, positions: evaluator, channels: channels, src: src,
                                        width: width, height: height, dst: dst, scratch: scratch)
            }
        }
    }

    /// Visits a band of rows in tiles of up to 64 rows, column chunk by column chunk
    /// (`PositionChunk` wide) and row by row within each: the source pixels a tile reads
    /// (its rows plus the lens's curvature, a chunk wide) stay in the second-level cache,
    /// where whole rows of a curved source band would not.
    @inline(__always)
    static func forEachTile(rows: Range<Int>, width: Int, _ body: (_ y: Int, _ x0: Int, _ count: Int) -> Void) {
        let tileRows = 64
        var top = rows.lowerBound
        while top < rows.upperBound {
            let bottom = min(rows.upperBound, top + tileRows)
            var x0 = 0
            while x0 < width {
                let n = min(PositionChunk.capacity, width - x0)
                for y in top..<bottom { body(y, x0, n) }
                x0 += n
            }
            top = bottom
        }
    }

    /// Rectifies an 8-bit image with a precomputed map of its size; the result is the
    /// same, bit for bit, as computing the positions on the fly.
    package func rectify(_ image: ImageBuffer<UInt8>, map: RectificationMap) -> ImageBuffer<UInt8> {
        precondition(image.width == map.width && image.height == map.height, "the map is for another image size")
        let width = image.width, height = image.height, channels = image.channels
        let output = LargeBuffer.make(count: image.samples.count) { (destination: UnsafeMutableBufferPointer<UInt8>) in
            image.samples.withUnsafeBufferPointer { source in
                map.offsets.withUnsafeBufferPointer { offsets in
                    guard let src = source.baseAddress, let dst = destination.baseAddress,
                          let off = offsets.baseAddress else { return }
                    scheduler.forEachBand(rows: height) { rows in
                        let scratch = PositionChunk.allocate()
                        defer { scratch.deallocate() }
                        Self.forEachTile(rows: rows, width: width) { y, x0, n in
                            ColorRemap.rectifyChunk(y, from: x0, count: n, map: map, offsets: off, channels: channels,
                                                    src: src, width: width, height: height, dst: dst, scratch: scratch)
                        }
                    }
                }
            }
        }
        return ImageBuffer(width: width, height: height, channels: channels, samples: output)
    }

    /// Rectifies a depth map whose size is the distortion's.
    public func rectify(_ depth: DepthMap, distortion: LensDistortion) -> DepthMap {
        precondition(depth.width == distortion.width && depth.height == distortion.height,
                     "the distortion model is for another image size")
        precondition(depth.channels == 1, "depth maps have one channel")
        let output = LargeBuffer.make(count: depth.samples.count) { (destination: UnsafeMutableBufferPointer<Float>) in
            depth.samples.withUnsafeBufferPointer { source in
                rectify(source, distortion: distortion, into: destination)
            }
        }
        return DepthMap(width: depth.width, height: depth.height, channels: 1, samples: output)
    }

    /// Rectifies depth samples (`distortion.width × distortion.height`, meters, NaN = no
    /// depth) into a caller buffer of the same size, which must not overlap the source.
    package func rectify(_ source: UnsafeBufferPointer<Float>, distortion: LensDistortion,
                        into destination: UnsafeMutableBufferPointer<Float>) {
        let width = distortion.width, height = distortion.height
        precondition(source.count == width * height && destination.count == source.count,
                     "buffer sizes do not match the depth map")
        guard let src = source.baseAddress, let dst = destination.baseAddress else { return }
        let evaluator = SourcePositions(distortion)
        let step = maxRelativeDepthStep
        evaluator.withTables { table, slopes in
            scheduler.forEachBand(rows: height) { rows in
                for y in rows {
                    DepthRemap.rectifyRow(y, positions: evaluator, table: table, slopes: slopes, src: src,
                                          width: width, height: height, maxRelativeStep: step, dst: dst)
                }
            }
        }
    }
}
