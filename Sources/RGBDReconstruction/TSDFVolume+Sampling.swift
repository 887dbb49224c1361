extension TSDFVolume {
    /// The block last looked up by `distance(at:cache:)`: consecutive samples mostly fall
    /// in one block, so most need no hash lookup.
    struct BlockCache {
        var key: UInt64 = .max
        var voxels: UnsafeMutablePointer<TSDFVoxel>?
    }

    /// The largest stored |tsdf| counted as a distance rather than the truncation.
    static let untruncated: Int16 = 32_000

    /// The signed distance at world point `p`, meters (positive in front of the surface),
    /// trilinear over the eight voxel centres around it, and its gradient (meters per
    /// meter: about the surface normal, toward the observed side); nil where one of the
    /// eight is unobserved (weight under `minWeight` units) or at the truncation (no surface near enough to say where).
    @inline(__always)
    func distance(at p: SIMD3<Float>, minWeight: UInt16 = 1, cache: inout BlockCache) -> (value: Float, gradient: SIMD3<Float>)? {
        let g = p / voxel
        let f = g.rounded(.down)
        guard f.x.magnitude < 1e8, f.y.magnitude < 1e8, f.z.magnitude < 1e8 else { return nil }
        let base = SIMD3<Int32>(f)
        let t = g - f
        var values = SIMD8<Float>()
        for corner in 0..<8 {
            let c = base &+ SIMD3<Int32>(Int32(corner & 1), Int32((corner >> 1) & 1), Int32(corner >> 2))
            let b = c &>> 3
            guard let key = SparseKeyIndex.cellKey(Int(b.x), Int(b.y), Int(b.z)) else { return nil }
            if key != cache.key {
                guard let number = index.index(of: key) else { return nil }
                cache.key = key
                cache.voxels = storage.block(number)
            }
            guard let voxels = cache.voxels else { return nil }
            let v = voxels[Int(c.x & 7) + 8 * Int(c.y & 7) + 64 * Int(c.z & 7)]
            guard v.weight >= minWeight, v.tsdf > -Self.untruncated, v.tsdf < Self.untruncated else { return nil }
            values[corner] = Float(v.tsdf)
        }
        // Corner n = x + 2y + 4z.
        let tx = t.x, ty = t.y, tz = t.z
        let dx00 = values[1] - values[0], dx10 = values[3] - values[2]
        let dx01 = values[5] - values[4], dx11 = values[7] - values[6]
        let x00 = values[0] + tx * dx00, x10 = values[2] + tx * dx10
        let x01 = values[4] + tx * dx01, x11 = values[6] + tx * dx11
        let y0 = x00 + ty * (x10 - x00), y1 = x01 + ty * (x11 - x01)
        let value = y0 + tz * (y1 - y0)
        let gx = (1 - tz) * ((1 - ty) * dx00 + ty * dx10) + tz * ((1 - ty) * dx01 + ty * dx11)
        let gy = (1 - tz) * (x10 - x00) + tz * (x11 - x01)
        let gz = y1 - y0
        let scale = range / 32_767
        return (value * scale, SIMD3(gx, gy, gz) * (scale / voxel))
    }
}
