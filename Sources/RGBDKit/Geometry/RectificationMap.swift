/// Precomputed source positions of every rectified pixel for one (calibration, image
/// size): the backward map, in fixed point (1/256 pixel), `x` and `y` interleaved.
///
/// Worth keeping when many images share a calibration and size (a video, a batch from
/// one phone); `BENCHMARKS.md` records how it compares with computing positions on the
/// fly. It takes 8 bytes per pixel.
public struct RectificationMap: Sendable {
    /// Image width in pixels.
    public let width: Int
    /// Image height in pixels.
    public let height: Int
    /// `round(256·x), round(256·y)` of the source position of each pixel, row by row.
    public let positions: [Int32]

    /// Computes the map of `distortion` (for its image size).
    public init(_ distortion: LensDistortion, scheduler: RowScheduler = .parallel) {
        let width = distortion.width, height = distortion.height
        let evaluator = SourcePositions(distortion)
        let positions = LargeBuffer.make(count: width * height * 2) { (buffer: UnsafeMutableBufferPointer<Int32>) in
            guard let out = buffer.baseAddress else { return }
            let base = out
            evaluator.withTables { table, slopes in
                scheduler.forEachBand(rows: height) { rows in
                    for y in rows {
                        evaluator.fixedPointRow(y, width: width, table: table, slopes: slopes, into: base + y * width * 2)
                    }
                }
            }
        }
        self.width = width
        self.height = height
        self.positions = positions
    }
}
