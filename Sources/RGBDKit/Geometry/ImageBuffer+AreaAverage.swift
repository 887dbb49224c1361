extension ImageBuffer where Sample == UInt8 {
    /// The image averaged over the footprints of a coarser `width × height` grid:
    /// output pixel `(u, v)` is the mean of the input pixels whose centers lie in the box
    /// of size `sx × sy` (`sx = self.width / width`) centered on `(u·sx, v·sy)`, the
    /// position FORMAT.md §5 gives for depth pixel `(u, v)`. Footprints are contiguous
    /// and disjoint, so no input pixel counts twice; the first is cut by the image edge,
    /// and input pixels beyond the last footprint's half are not used. Rows are spread
    /// over threads.
    public func areaAverage(toWidth width: Int, height: Int, scheduler: RowScheduler = .parallel) -> ImageBuffer<UInt8> {
        precondition(width > 0 && height > 0 && width <= self.width && height <= self.height,
                     "area averaging reduces the size")
        let channels = self.channels, sourceWidth = self.width
        let columns = Self.footprints(count: width, over: self.width)
        let rows = Self.footprints(count: height, over: self.height)
        let output = LargeBuffer.make(count: width * height * channels) { (destination: UnsafeMutableBufferPointer<UInt8>) in
            samples.withUnsafeBufferPointer { source in
                guard let src = source.baseAddress, let dst = destination.baseAddress else { return }
                scheduler.forEachBand(rows: height) { band in
                    // Per input column, the sum over the footprint's input rows: 16 bits
                    // hold up to 257 rows of 255 (twice as many lanes per SIMD add as 32).
                    let sums = UnsafeMutablePointer<UInt32>.allocate(capacity: sourceWidth * channels)
                    let narrow = UnsafeMutablePointer<UInt16>.allocate(capacity: sourceWidth * channels)
                    defer { sums.deallocate(); narrow.deallocate() }
                    let n = sourceWidth * channels
                    for v in band {
                        let (r0, r1) = rows[v]
                        if r1 - r0 <= 257 {
                            narrow.initialize(repeating: 0, count: n)
                            for r in r0..<r1 {
                                let line = src + r * n
                                for i in 0..<n { narrow[i] &+= UInt16(line[i]) }
                            }
                            for i in 0..<n { sums[i] = UInt32(narrow[i]) }
                        } else {
                            sums.initialize(repeating: 0, count: n)
                            for r in r0..<r1 {
                                let line = src + r * n
                                for i in 0..<n { sums[i] &+= UInt32(line[i]) }
                            }
                        }
                        for u in 0..<width {
                            let (c0, c1) = columns[u]
                            let count = UInt32((c1 - c0) * (r1 - r0))
                            for c in 0..<channels {
                                var total: UInt32 = 0
                                for j in c0..<c1 { total &+= sums[j * channels + c] }
                                dst[(v * width + u) * channels + c] = UInt8(truncatingIfNeeded: (total + count / 2) / count)
                            }
                        }
                    }
                }
            }
        }
        return ImageBuffer(width: width, height: height, channels: channels, samples: output)
    }

    /// For each of `count` coarse pixels, the range of fine pixel indices whose centers
    /// lie in `[k·s − s/2, k·s + s/2)`, `s = fine / count`, clipped to the image.
    static func footprints(count: Int, over fine: Int) -> [(Int, Int)] {
        let s = Double(fine) / Double(count)
        func edge(_ k: Int) -> Int { min(fine, max(0, Int((Double(k) * s - s / 2).rounded(.up)))) }
        return (0..<count).map { k in
            let lo = edge(k), hi = edge(k + 1)
            return (lo, max(hi, min(lo + 1, fine)))
        }
    }
}
