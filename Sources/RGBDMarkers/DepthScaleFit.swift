/// What a capture's tags say about its depth's scale, and the correction that makes it
/// metric.
///
/// Depth marked "relative" (Portrait photos) can be off by a scale and, in disparity
/// (1/depth), an offset. Each tag of known size measures the local ratio `k` of the depth's
/// distance to the true one (its edge cut from its depth plane over its printed edge). With
/// tags at clearly different distances (the farthest at least `offsetSpan` times the
/// nearest) both are fitted: `1/z_depth = α/z_true + β` by least squares over the tags;
/// otherwise scale alone (β = 0, α = 1/k, k the samples-weighted mean over the tags).
/// The correction is `z_true = α / (1/z_depth − β)`: with β = 0, depth times α.
package struct DepthScaleFit: Equatable, Sendable {
    /// The depth-to-true scale factor `α`: metric depth = depth × `factor` when `offset` is 0.
    package var factor: Double
    /// The disparity offset `β`, 1/meters (0 when scale alone was fitted).
    package var offset: Double
    /// How many tags the fit used.
    package var tags: Int
    /// The depth's distances over the true ones (1/`factor`): 2 when depth says everything
    /// is twice as far as the tags' size says.
    package var depthScale: Double { 1 / factor }

    /// The correction `factor` and `offset`, fitted over `tags` tags.
    package init(factor: Double, offset: Double, tags: Int) {
        self.factor = factor
        self.offset = offset
        self.tags = tags
    }

    /// The ratio of the nearest and farthest tags' distances above which the offset is fitted too.
    package static let offsetSpan = 1.5

    /// The fit for `tags` (each tag's `depthScale` and distance); nil without tags.
    package static func fit(_ tags: [TagPose]) -> DepthScaleFit? {
        let usable = tags.filter { $0.depthScale.isFinite && $0.depthScale > 0 && !$0.detection.duplicateID }
        guard !usable.isEmpty else { return nil }
        let depthZ = usable.map { $0.depthPose.translation.z }
        let trueZ = zip(usable, depthZ).map { $1 / $0.depthScale }
        if let near = trueZ.min(), let far = trueZ.max(), usable.count >= 2, far >= offsetSpan * near {
            // 1/z_depth = α·(1/z_true) + β, each tag weighted by its samples.
            var sw = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
            for (tag, (zd, zt)) in zip(usable, zip(depthZ, trueZ)) {
                let w = Double(tag.depthSamples), x = 1 / zt, y = 1 / zd
                sw += w; sx += w * x; sy += w * y; sxx += w * x * x; sxy += w * x * y
            }
            let det = sw * sxx - sx * sx
            if det > 0 {
                let alpha = (sw * sxy - sx * sy) / det, beta = (sy - alpha * sx) / sw
                if alpha > 0 { return DepthScaleFit(factor: alpha, offset: beta, tags: usable.count) }
            }
        }
        var sw = 0.0, sk = 0.0
        for tag in usable { sw += Double(tag.depthSamples); sk += Double(tag.depthSamples) * tag.depthScale }
        return DepthScaleFit(factor: sw / sk, offset: 0, tags: usable.count)
    }

    /// `depth` made metric: each finite sample corrected (NaN where the correction has no
    /// positive result).
    package func apply(to depth: DepthMap) -> DepthMap {
        var out = depth
        let a = factor, b = offset
        for i in out.samples.indices {
            let z = Double(out.samples[i])
            guard z.isFinite, z > 0 else { continue }
            if b == 0 {
                out.samples[i] = Float(z * a)
            } else {
                let d = 1 / z - b
                out.samples[i] = d > 0 ? Float(a / d) : .nan
            }
        }
        return out
    }
}
