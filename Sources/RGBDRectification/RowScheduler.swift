import Dispatch

/// How rows of an output image are spread over threads; kernels know nothing of it.
public enum RowScheduler: Sendable {
    /// All rows on the calling thread, in order.
    case serial
    /// Bands of rows run by `DispatchQueue.concurrentPerform`.
    case parallel

    /// Calls `body` once per band of rows, the bands covering `0..<rows` exactly once.
    ///
    /// Bands are small enough (about 8 per processor) for the load to even out when some
    /// rows cost more than others, and large enough to amortize the dispatch.
    public func forEachBand(rows: Int, _ body: (Range<Int>) -> Void) {
        guard rows > 0 else { return }
        switch self {
        case .serial:
            body(0..<rows)
        case .parallel:
            let bands = min(rows, max(1, Host.processorCount * 8))
            let perBand = (rows + bands - 1) / bands
            let count = (rows + perBand - 1) / perBand
            // Bands are disjoint and `concurrentPerform` returns only when all are done,
            // so the body (which writes the rows of its band) is never used after this
            // call nor by two threads on the same rows.
            nonisolated(unsafe) let body = body
            DispatchQueue.concurrentPerform(iterations: count) { band in
                let start = band * perBand
                body(start..<min(rows, start + perBand))
            }
        }
    }
}
