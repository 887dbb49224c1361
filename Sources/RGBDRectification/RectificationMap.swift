/// Precomputed source positions of every rectified pixel for one (calibration, image
/// size): the backward map, stored compactly as offsets from each pixel (1/256 pixel,
/// `Int16` x and y, 4 bytes per pixel).
///
/// The alternative to computing positions on the fly, for batches that share a
/// calibration. On a whole photo applying a map saves little (nothing in some runs: its
/// 4 bytes per pixel of reads cost nearly what the arithmetic saves) and building one
/// costs several times what it saves on one image (BENCHMARKS.md, "Source positions: on
/// the fly or a cached map"), so `rgbd rectify` does not use maps. `FrameRectifier` does: over many frames of one size a map pays off
/// from the second or third frame (BENCHMARKS.md, "Frames").
package struct RectificationMap: Sendable {
    /// The model the map was computed from.
    package let distortion: LensDistortion
    /// Image width in pixels.
    package var width: Int { distortion.width }
    /// Image height in pixels.
    package var height: Int { distortion.height }
    /// `round(256·q) − 256·p` for the source position `q` of each pixel `p`, x then y.
    let offsets: [Int16]

    /// Bytes the map of a `width × height` image holds (4 per pixel).
    package static func byteCount(width: Int, height: Int) -> Int { width * height * 2 * MemoryLayout<Int16>.size }

    /// Computes the map of `distortion` (for its image size), or nil if a source
    /// position lies more than 127 pixels from its pixel (an extreme lens, for which
    /// positions are computed on the fly instead).
    package init?(_ distortion: LensDistortion, scheduler: RowScheduler = .parallel) {
        let width = distortion.width, height = distortion.height
        let evaluator = SourcePositions(distortion)
        let overflow = Lock()
        nonisolated(unsafe) var fits = true
        let offsets = LargeBuffer.make(count: width * height * 2) { (buffer: UnsafeMutableBufferPointer<Int16>) in
            guard let out = buffer.baseAddress else { return }
            scheduler.forEachBand(rows: height) { rows in
                let scratch = PositionChunk.allocate()
                defer { scratch.deallocate() }
                var bandFits = true
                for y in rows {
                    let row = out + y * width * 2
                    var x0 = 0
                    while x0 < width {
                        let n = min(PositionChunk.capacity, width - x0)
                        evaluator.fixedPointSpan(y: y, from: x0, count: n, xs: scratch.xs, ys: scratch.ys)
                        for i in 0..<n {
                            let dx = scratch.xs[i] &- Int32((x0 + i) &* 256), dy = scratch.ys[i] &- Int32(y &* 256)
                            if dx < Int32(Int16.min) || dx > Int32(Int16.max) || dy < Int32(Int16.min) || dy > Int32(Int16.max) {
                                bandFits = false
                            }
                            row[2 * (x0 + i)] = Int16(truncatingIfNeeded: dx)
                            row[2 * (x0 + i) + 1] = Int16(truncatingIfNeeded: dy)
                        }
                        x0 += n
                    }
                }
                if !bandFits { overflow.withLock { fits = false } }
            }
        }
        guard fits else { return nil }
        self.distortion = distortion
        self.offsets = offsets
    }

    /// The absolute fixed-point positions of pixels `x0 ..< x0 + count` of row `y`,
    /// planar (the layout `SourcePositions.fixedPointSpan` produces).
    @inline(__always)
    func span(y: Int, from x0: Int, count: Int, offsets: UnsafePointer<Int16>, xs: UnsafeMutablePointer<Int32>,
              ys: UnsafeMutablePointer<Int32>) {
        // One 32-bit word per pixel: x offset in the low half, y offset in the high half.
        let words = UnsafeRawPointer(offsets + (y &* width &+ x0) &* 2)
        let yBase = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: y &* 256))
        var i = 0
        while i &+ 4 <= count {
            let v = words.loadUnaligned(fromByteOffset: i &* 4, as: SIMD4<Int32>.self)
            let xBase = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: (x0 &+ i) &* 256)) &+ SIMD4(0, 256, 512, 768)
            UnsafeMutableRawPointer(xs + i).storeBytes(of: ((v &<< 16) &>> 16) &+ xBase, as: SIMD4<Int32>.self)
            UnsafeMutableRawPointer(ys + i).storeBytes(of: (v &>> 16) &+ yBase, as: SIMD4<Int32>.self)
            i &+= 4
        }
        while i < count {
            let o = (y &* width &+ x0 &+ i) &* 2
            xs[i] = Int32(offsets[o]) &+ Int32(truncatingIfNeeded: (x0 &+ i) &* 256)
            ys[i] = Int32(offsets[o &+ 1]) &+ yBase[0]
            i &+= 1
        }
    }
}
