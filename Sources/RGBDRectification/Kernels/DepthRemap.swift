/// Depth resampling that never blends across a depth edge, one output row at a time.
///
/// For a source position `q`, the nearest source pixel decides: if it is a hole (or
/// outside), the output is a hole. Otherwise the output interpolates bilinearly among
/// those of the four neighbors of `q` that hold a depth within `maxRelativeStep` of the
/// nearest one's, with their weights renormalized. Between a 1 m foreground and a 3 m
/// background the result is therefore 1 m or 3 m, never 2 m.
enum DepthRemap {
    /// The bilinear weights `(w00, w10, w01, w11)` of the fractions `(ax, ay)` of a
    /// source position. (Computed where each path of `sample` needs them: hoisted above
    /// the branch, the depth stages ran more instructions: docs/performance.md.)
    @inline(__always)
    static func weights(_ ax: Float, _ ay: Float) -> (Float, Float, Float, Float) {
        ((1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay)
    }

    /// The depth at source position `(sx, sy)` of a map whose rows start `rowStride`
    /// samples apart.
    @inline(__always)
    static func sample(_ sx: Float, _ sy: Float, src: UnsafePointer<Float>, width: Int, height: Int,
                       rowStride: Int, maxRelativeStep: Float) -> Float {
        guard sx >= -1, sy >= -1, sx < Float(width), sy < Float(height) else { return .nan }
        // Truncation is the floor for non-negative values, and cheaper than floorf.
        let fxFloor = sx >= 0 ? Float(Int(sx)) : sx.rounded(.down)
        let fyFloor = sy >= 0 ? Float(Int(sy)) : sy.rounded(.down)
        let x0 = Int(fxFloor), y0 = Int(fyFloor)
        let ax = sx - fxFloor, ay = sy - fyFloor
        let nx = ax < 0.5 ? x0 : x0 + 1
        let ny = ay < 0.5 ? y0 : y0 + 1
        guard nx >= 0, ny >= 0, nx < width, ny < height else { return .nan }
        let reference = src[ny * rowStride + nx]
        guard reference.isFinite else { return .nan }
        let tolerance = maxRelativeStep * reference
        if x0 >= 0 && y0 >= 0 && x0 &+ 1 < width && y0 &+ 1 < height {
            // All four neighbors inside: the same sums as below without the bounds checks
            // (the same neighbors, weights and order of additions).
            let top = src + (y0 &* rowStride &+ x0), bottom = top + rowStride
            let d00 = top[0], d10 = top[1], d01 = bottom[0], d11 = bottom[1]
            let (w00, w10, w01, w11) = weights(ax, ay)
            var sum: Float = 0, weightSum: Float = 0
            if d00.isFinite && abs(d00 - reference) <= tolerance && w00 > 0 { sum += w00 * d00; weightSum += w00 }
            if d10.isFinite && abs(d10 - reference) <= tolerance && w10 > 0 { sum += w10 * d10; weightSum += w10 }
            if d01.isFinite && abs(d01 - reference) <= tolerance && w01 > 0 { sum += w01 * d01; weightSum += w01 }
            if d11.isFinite && abs(d11 - reference) <= tolerance && w11 > 0 { sum += w11 * d11; weightSum += w11 }
            return weightSum > 0 ? sum / weightSum : reference
        }
        var sum: Float = 0, weightSum: Float = 0
        @inline(__always) func add(_ x: Int, _ y: Int, _ w: Float) {
            guard x >= 0, y >= 0, x < width, y < height, w > 0 else { return }
            let d = src[y * rowStride + x]
            if d.isFinite && abs(d - reference) <= tolerance {
                sum += w * d
                weightSum += w
            }
        }
        let (w00, w10, w01, w11) = weights(ax, ay)
        add(x0, y0, w00)
        add(x0 + 1, y0, w10)
        add(x0, y0 + 1, w01)
        add(x0 + 1, y0 + 1, w11)
        return weightSum > 0 ? sum / weightSum : reference
    }

    /// Rectifies output row `y` of a depth map.
    @inline(__always)
    static func rectifyRow(_ y: Int, positions: SourcePositions, table: UnsafePointer<Float>, slopes: UnsafePointer<Float>,
                           src: UnsafePointer<Float>, width: Int, height: Int, maxRelativeStep: Float,
                           dst: UnsafeMutablePointer<Float>) {
        let dy = Float(y) - positions.cy
        let dy2 = dy * dy
        let row = dst + y * width
        for x in 0..<width {
            let dx = Float(x) - positions.cx
            let k = positions.scale(radiusSquared: dx * dx + dy2, table: table, slopes: slopes)
            row[x] = sample(positions.cx + dx * k, positions.cy + dy * k, src: src, width: width, height: height,
                            rowStride: width, maxRelativeStep: maxRelativeStep)
        }
    }
}

extension DepthRemap {
    /// Rectifies output row `y` of a depth map whose rows start `srcStride` samples apart
    /// into `dstRow` (`rectifyRow` with row strides, bit for bit).
    @inline(__always)
    static func rectifyRow(_ y: Int, positions: SourcePositions, table: UnsafePointer<Float>, slopes: UnsafePointer<Float>,
                           src: UnsafePointer<Float>, width: Int, height: Int, srcStride: Int, maxRelativeStep: Float,
                           dstRow row: UnsafeMutablePointer<Float>) {
        let dy = Float(y) - positions.cy
        let dy2 = dy * dy
        for x in 0..<width {
            let dx = Float(x) - positions.cx
            let k = positions.scale(radiusSquared: dx * dx + dy2, table: table, slopes: slopes)
            row[x] = sample(positions.cx + dx * k, positions.cy + dy * k, src: src, width: width, height: height,
                            rowStride: srcStride, maxRelativeStep: maxRelativeStep)
        }
    }

    /// Rectifies output row `y` of a grid `outputWidth` pixels wide of the same camera at
    /// another resolution: output pixel `(x, y)` is the rectified depth map's point
    /// `(x·ratio.x, y·ratio.y)` (`ratio` = depth map size / grid size, docs/lens-model.md), whose
    /// source position comes from the same lens model. `dxs[x]` is `Float(x·ratio.x) − c.x`
    /// (the same for every row). With `ratio` 1 this is `rectifyRow` bit for bit.
    @inline(__always)
    static func rectifyRow(_ y: Int, outputWidth: Int, ratio: SIMD2<Double>, dxs: UnsafePointer<Float>,
                           positions: SourcePositions, table: UnsafePointer<Float>, slopes: UnsafePointer<Float>,
                           src: UnsafePointer<Float>, width: Int, height: Int, maxRelativeStep: Float,
                           dst: UnsafeMutablePointer<Float>) {
        let dy = Float(Double(y) * ratio.y) - positions.cy
        let dy2 = dy * dy
        let row = dst + y * outputWidth
        for x in 0..<outputWidth {
            let dx = dxs[x]
            let k = positions.scale(radiusSquared: dx * dx + dy2, table: table, slopes: slopes)
            row[x] = sample(positions.cx + dx * k, positions.cy + dy * k, src: src, width: width, height: height,
                            rowStride: width, maxRelativeStep: maxRelativeStep)
        }
    }
}
