/// Depth resampling that never blends across a depth edge, one output row at a time.
///
/// For a source position `q`, the nearest source pixel decides: if it is a hole (or
/// outside), the output is a hole. Otherwise the output interpolates bilinearly among
/// those of the four neighbors of `q` that hold a depth within `maxRelativeStep` of the
/// nearest one's, with their weights renormalized. Between a 1 m foreground and a 3 m
/// background the result is therefore 1 m or 3 m, never 2 m.
enum DepthRemap {
    @inline(__always)
    static func sample(_ sx: Float, _ sy: Float, src: UnsafePointer<Float>, width: Int, height: Int,
                       maxRelativeStep: Float) -> Float {
        guard sx >= -1, sy >= -1, sx < Float(width), sy < Float(height) else { return .nan }
        // Truncation is the floor for non-negative values, and cheaper than floorf.
        let fxFloor = sx >= 0 ? Float(Int(sx)) : sx.rounded(.down)
        let fyFloor = sy >= 0 ? Float(Int(sy)) : sy.rounded(.down)
        let x0 = Int(fxFloor), y0 = Int(fyFloor)
        let ax = sx - fxFloor, ay = sy - fyFloor
        let nx = ax < 0.5 ? x0 : x0 + 1
        let ny = ay < 0.5 ? y0 : y0 + 1
        guard nx >= 0, ny >= 0, nx < width, ny < height else { return .nan }
        let reference = src[ny * width + nx]
        guard reference.isFinite else { return .nan }
        let tolerance = maxRelativeStep * reference
        var sum: Float = 0, weightSum: Float = 0
        @inline(__always) func add(_ x: Int, _ y: Int, _ w: Float) {
            guard x >= 0, y >= 0, x < width, y < height, w > 0 else { return }
            let d = src[y * width + x]
            if d.isFinite && abs(d - reference) <= tolerance {
                sum += w * d
                weightSum += w
            }
        }
        add(x0, y0, (1 - ax) * (1 - ay))
        add(x0 + 1, y0, ax * (1 - ay))
        add(x0, y0 + 1, (1 - ax) * ay)
        add(x0 + 1, y0 + 1, ax * ay)
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
                            maxRelativeStep: maxRelativeStep)
        }
    }
}
