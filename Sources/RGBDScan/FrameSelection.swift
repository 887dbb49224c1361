/// Which of a scene's frames a command uses (an export keeps, a cloud or a fusion reads).
///
/// - `every`: every N-th frame (positions 0, N, 2N, …);
/// - `maxFrames`: at most that many, spread evenly over the frames `every` left
///   (the first and the last kept, the rest at evenly spaced positions between);
/// - `sharpest`: instead of a fixed position per window, the sharpest frame of each
///   window (`ExportFrameImages.sharpness`): the windows are the runs of `every` frames,
///   or with `maxFrames` that many equal runs over the whole scene.
public struct FrameSelection: Equatable, Sendable {
    /// Take every N-th frame (1 = all).
    public var every: Int = 1
    /// At most this many frames, spread evenly; nil = no limit.
    public var maxFrames: Int? = nil
    /// Keep the sharpest frame of each window instead of a fixed one.
    public var sharpest: Bool = false

    /// All frames.
    public init() {}

    /// A selection from its values.
    public init(every: Int = 1, maxFrames: Int? = nil, sharpest: Bool = false) {
        self.every = every
        self.maxFrames = maxFrames
        self.sharpest = sharpest
    }

    /// Checks `every >= 1` and `maxFrames >= 1`.
    public func validate() throws {
        guard every >= 1 else { throw RGBDError(.invalidArgument, "the frame step must be at least 1 (\(every))", argument: .every) }
        if let maxFrames, maxFrames < 1 {
            throw RGBDError(.invalidArgument, "the largest number of frames must be at least 1 (\(maxFrames))")
        }
    }

    /// The positions kept out of `count` frames without looking at them (not `sharpest`).
    package func positions(count: Int) -> [Int] {
        let stepped = Array(stride(from: 0, to: count, by: every))
        guard let maxFrames, stepped.count > maxFrames else { return stepped }
        if maxFrames == 1 { return [stepped[0]] }
        let n = stepped.count
        return (0..<maxFrames).map { k in stepped[(k * (n - 1) + (maxFrames - 1) / 2) / (maxFrames - 1)] }
    }

    /// The windows `sharpest` picks one frame from: consecutive, covering `0..<count`.
    package func windows(count: Int) -> [Range<Int>] {
        guard count > 0 else { return [] }
        if let maxFrames, (count + every - 1) / every > maxFrames {
            return (0..<maxFrames).map { k in (k * count / maxFrames)..<((k + 1) * count / maxFrames) }
                .filter { !$0.isEmpty }
        }
        return stride(from: 0, to: count, by: every).map { $0..<min(count, $0 + every) }
    }

    /// The sharpest position of each window, given every frame's sharpness (ties: the
    /// earlier frame).
    package func sharpestPositions(scores: [Double]) -> [Int] {
        windows(count: scores.count).map { window in
            var best = window.lowerBound
            for i in window where scores[i] > scores[best] { best = i }
            return best
        }
    }
}
