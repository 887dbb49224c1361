extension ImageBuffer where Sample == UInt8 {
    /// The image averaged over the footprints of a `width × height` grid: output pixel
    /// `(u, v)` is the mean of the input pixels whose centers lie in the box of size
    /// `sx × sy` (`sx = self.width / width`) centered on `(u·sx, v·sy)`, the position
    /// docs/outputs.md gives for depth pixel `(u, v)`. Footprints are contiguous and
    /// disjoint, so no input pixel counts twice; the first is cut by the image edge, and
    /// input pixels beyond the last footprint's half are not used. Along an axis where
    /// the grid is finer than the image (`sx < 1`: a color image smaller than the depth
    /// map), a footprint is the one input pixel nearest to `u·sx` (`footprints`). Any
    /// sizes are accepted: an empty grid gives an empty image, an empty image a black
    /// one. Rows are spread over threads.
    package func areaAverage(toWidth width: Int, height: Int, scheduler: RowScheduler = .parallel) -> ImageBuffer<UInt8> {
        let channels = self.channels, sourceWidth = self.width
        guard width > 0, height > 0, sourceWidth > 0, self.height > 0 else {
            return ImageBuffer(width: max(0, width), height: max(0, height), channels: channels, repeating: 0)
        }
        let averager = FootprintAverager(sourceWidth: sourceWidth, sourceHeight: self.height, width: width,
                                         height: height, channels: channels)
        let output = LargeBuffer.make(count: width * height * channels) { (destination: UnsafeMutableBufferPointer<UInt8>) in
            samples.withUnsafeBufferPointer { source in
                guard let src = source.baseAddress, let dst = destination.baseAddress else { return }
                scheduler.forEachBand(rows: height) { band in
                    let sums = averager.makeSums()
                    defer { sums.deallocate() }
                    for v in band {
                        let (r0, r1) = averager.rows[v]
                        averager.averageRow(v, lines: src + r0 * sourceWidth * channels, count: r1 - r0, sums: sums,
                                            into: dst)
                    }
                }
            }
        }
        return ImageBuffer(width: width, height: height, channels: channels, samples: output)
    }

    /// For each of `count` coarse pixels, the range of fine pixel indices whose centers
    /// lie in `[k·s − s/2, k·s + s/2)`, `s = fine / count`, clipped to the image. When
    /// the coarse grid is not coarser (`count ≥ fine`, so `s ≤ 1` and that box may hold no
    /// center), the one fine pixel nearest to `k·s`, ties to the larger index:
    /// `⌊k·fine/count + 1/2⌋`, computed exactly in integers. Both need `count, fine > 0`.
    package static func footprints(count: Int, over fine: Int) -> [(Int, Int)] {
        if count >= fine {
            return (0..<count).map { k in
                let nearest = min(fine - 1, (2 * k * fine + count) / (2 * count))
                return (nearest, nearest + 1)
            }
        }
        let s = Double(fine) / Double(count)
        func edge(_ k: Int) -> Int { min(fine, max(0, Int((Double(k) * s - s / 2).rounded(.up)))) }
        return (0..<count).map { k in
            let lo = edge(k), hi = edge(k + 1)
            return (lo, max(hi, min(lo + 1, fine)))
        }
    }
}

/// The arithmetic of `areaAverage` for one coarse row at a time, given the fine rows of
/// its footprint (so that callers can produce those rows just before averaging them).
struct FootprintAverager: Sendable {
    let sourceWidth: Int
    let width: Int
    let channels: Int
    /// Fine column range of each coarse column.
    let columns: [(Int, Int)]
    /// Fine row range of each coarse row.
    let rows: [(Int, Int)]

    init(sourceWidth: Int, sourceHeight: Int, width: Int, height: Int, channels: Int) {
        self.sourceWidth = sourceWidth
        self.width = width
        self.channels = channels
        columns = ColorImage.footprints(count: width, over: sourceWidth)
        rows = ColorImage.footprints(count: height, over: sourceHeight)
    }

    /// Per-thread scratch for `averageRow` (UInt32 sums, then UInt16 sums).
    func makeSums() -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer.allocate(byteCount: sourceWidth * channels * 6, alignment: 16)
    }

    /// Averages coarse row `v` from its `count` fine rows, stored one after another at
    /// `lines`, into row `v` of `dst`.
    func averageRow(_ v: Int, lines: UnsafePointer<UInt8>, count: Int, sums raw: UnsafeMutableRawPointer,
                    into dst: UnsafeMutablePointer<UInt8>) {
        let n = sourceWidth * channels
        let sums = raw.bindMemory(to: UInt32.self, capacity: n)
        if count <= 257 {
            // 16 bits hold up to 257 rows of 255: twice the lanes per SIMD add.
            let narrow = (raw + n * 4).bindMemory(to: UInt16.self, capacity: n)
            narrow.initialize(repeating: 0, count: n)
            for r in 0..<count {
                let line = lines + r * n
                for i in 0..<n { narrow[i] &+= UInt16(line[i]) }
            }
            for i in 0..<n { sums[i] = UInt32(narrow[i]) }
        } else {
            sums.initialize(repeating: 0, count: n)
            for r in 0..<count {
                let line = lines + r * n
                for i in 0..<n { sums[i] &+= UInt32(line[i]) }
            }
        }
        columns.withUnsafeBufferPointer { columns in
            let row = dst + v &* width &* channels
            for u in 0..<width {
                let (c0, c1) = columns[u]
                let pixels = UInt32(truncatingIfNeeded: (c1 &- c0) &* count)
                for c in 0..<channels {
                    var total: UInt32 = 0
                    var j = c0 &* channels &+ c
                    let end = c1 &* channels
                    while j < end {
                        total &+= sums[j]
                        j &+= channels
                    }
                    row[u &* channels &+ c] = UInt8(truncatingIfNeeded: (total &+ pixels / 2) / pixels)
                }
            }
        }
    }
}

extension Rectifier {
    /// The rectified color image averaged over the footprints of a `width × height`
    /// grid, as `rectify(image, distortion:).areaAverage(toWidth:height:)` but without
    /// the full-size rectified image: each band of threads rectifies the fine rows of a
    /// coarse row into a small buffer and averages them at once. The result is the same,
    /// bit for bit, for any sizes (a grid finer than the image included).
    ///
    /// - Precondition: `image` is RGB and of the distortion's size (as
    ///   `ImageCalibration` makes it for the image).
    package func rectifyAreaAveraged(_ image: ColorImage, distortion: LensDistortion, toWidth width: Int,
                                    height: Int) -> ColorImage {
        precondition(image.width == distortion.width && image.height == distortion.height && image.channels == 3,
                     "an RGB image of the distortion's size")
        let sourceWidth = image.width, sourceHeight = image.height
        guard width > 0, height > 0, sourceWidth > 0, sourceHeight > 0 else {
            return ColorImage(width: max(0, width), height: max(0, height), channels: 3, repeating: 0)
        }
        let averager = FootprintAverager(sourceWidth: sourceWidth, sourceHeight: sourceHeight, width: width,
                                         height: height, channels: 3)
        let tallest = averager.rows.map { $0.1 - $0.0 }.max() ?? 1
        let evaluator = SourcePositions(distortion)
        let rowBytes = sourceWidth * 3
        let output = LargeBuffer.make(count: width * height * 3) { (destination: UnsafeMutableBufferPointer<UInt8>) in
            image.samples.withUnsafeBufferPointer { source in
                guard let src = source.baseAddress, let dst = destination.baseAddress else { return }
                scheduler.forEachBand(rows: height) { band in
                    let lines = UnsafeMutablePointer<UInt8>.allocate(capacity: tallest * rowBytes)
                    let scratch = PositionChunk.allocate()
                    let sums = averager.makeSums()
                    defer { lines.deallocate(); scratch.deallocate(); sums.deallocate() }
                    for v in band {
                        let (r0, r1) = averager.rows[v]
                        // Fine row r lands at lines[(r − r0)·rowBytes ...]: the kernel
                        // writes row r at dst + r·rowBytes.
                        let base = lines - r0 * rowBytes
                        for r in r0..<r1 {
                            ColorRemap.rectifyRow(r, positions: evaluator, channels: 3, src: src, width: sourceWidth,
                                                  height: sourceHeight, dst: base, scratch: scratch)
                        }
                        averager.averageRow(v, lines: lines, count: r1 - r0, sums: sums, into: dst)
                    }
                }
            }
        }
        return ColorImage(width: width, height: height, channels: 3, samples: output)
    }
}
