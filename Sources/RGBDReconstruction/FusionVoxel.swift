/// The voxel of a fusion and why: given by the caller, or chosen from the scan's depth
/// (`SceneFusion.automaticVoxel`).
public struct SceneFusionVoxel: Equatable, Sendable {
    /// The voxel edge, meters.
    public var voxel: Double
    /// The median depth of the sampled frames' usable pixels, meters; nil when the voxel
    /// was given or no sampled frame had usable depth.
    public var medianDepth: Double?
    /// The width of one depth pixel at `medianDepth` (the median of depth / focal length
    /// over those pixels), meters; nil as `medianDepth`.
    public var pixelFootprint: Double?
    /// Frames sampled (0 when given).
    public var framesSampled: Int
    /// Why this voxel, in words without any front's option names: "given", or the depth
    /// and footprint it was chosen from.
    public var reason: String

    /// A voxel the caller gave.
    package init(given voxel: Double) {
        self.voxel = voxel
        medianDepth = nil
        pixelFootprint = nil
        framesSampled = 0
        reason = "given"
    }

    /// A voxel chosen from the scan's depth (the fields as above).
    package init(voxel: Double, medianDepth: Double?, pixelFootprint: Double?, framesSampled: Int, reason: String) {
        self.voxel = voxel
        self.medianDepth = medianDepth
        self.pixelFootprint = pixelFootprint
        self.framesSampled = framesSampled
        self.reason = reason
    }
}

extension SceneFusion {
    /// The range the automatic voxel is clamped to, meters: 2 mm (a close-range scan: at
    /// 20–40 cm a depth pixel spans 1–2 mm) to 2 cm (a room at 3–4 m).
    package static let automaticVoxelRange: ClosedRange<Double> = 0.002...0.02
    /// The voxel used when a scan has no usable depth in its sampled frames, meters.
    package static let fallbackVoxel = 0.01
    /// Frames sampled (evenly over the frames fused) to choose the voxel.
    package static let automaticVoxelFrames = 16

    /// The voxel for `scene` when none is given: the footprint of one depth pixel at the
    /// scan's median depth, so that a frame puts about one depth sample on each voxel of
    /// the surface it sees at the typical distance (finer voxels see gaps and noise, coarser
    /// ones lose detail the depth has). The median is over the pixels that fusion would use
    /// (`options`: confidence, depth range, flying-pixel filter) of up to
    /// `automaticVoxelFrames` frames spread over the frames fused; the footprint is depth /
    /// focal length (depth intrinsics, mean of fx and fy) per pixel. Rounded to 0.5 mm and
    /// clamped to `automaticVoxelRange`; `fallbackVoxel` when no sampled frame has usable
    /// depth. On the real scans (docs/fuse.md): Record3D's door at about 0.3 m gets 2 mm,
    /// the Stray Scanner room about 1 cm.
    /// - Throws: `RGBDError` when a sampled frame cannot be read.
    package static func automaticVoxel(_ scene: Scene, options: SceneFusionOptions) throws -> SceneFusionVoxel {
        let used = FrameSelection(every: max(1, options.every)).positions(count: scene.frames.count)
        let count = min(used.count, automaticVoxelFrames)
        // Evenly spread, increasing positions (the reader reads them in one pass).
        var positions: [Int] = []
        for n in 0..<count {
            let p = used[(2 * n + 1) * used.count / (2 * count)]
            if positions.last != p { positions.append(p) }
        }
        var footprints: [Float] = []
        var depths: [Float] = []
        try scene.forEachFrame(positions, color: false) { frame in
            let kept = usablePixels(frame.depth, confidence: frame.confidence, options: options)
            let k = frame.info.depthIntrinsics
            let focal = Float((k.fx + k.fy) / 2)
            guard focal > 0 else { return }
            // Every 3rd pixel is plenty for a median.
            for i in Swift.stride(from: 0, to: kept.count, by: 3) where kept[i] {
                let z = frame.depth.samples[i]
                depths.append(z)
                footprints.append(z / focal)
            }
        }
        let range = automaticVoxelRange
        // n / 10 and n / 100 print as their shortest decimals.
        func mm(_ m: Double) -> String { "\((m * 10_000).rounded() / 10) mm" }
        guard !footprints.isEmpty else {
            return SceneFusionVoxel(voxel: fallbackVoxel, medianDepth: nil, pixelFootprint: nil, framesSampled: positions.count,
                                    reason: "automatic: no usable depth in \(positions.count) sampled frames, \(mm(fallbackVoxel))")
        }
        let depth = Double(SmallMatrix.median(depths) ?? 0), footprint = Double(SmallMatrix.median(footprints) ?? 0)
        let voxel = min(range.upperBound, max(range.lowerBound, (footprint * 2000).rounded() / 2000))
        let reason = "automatic: a depth pixel's footprint at the median depth \((depth * 100).rounded() / 100) m "
            + "of \(positions.count) sampled frames is \(mm(footprint)); rounded to 0.5 mm, within \(mm(range.lowerBound)) to \(mm(range.upperBound))"
        return SceneFusionVoxel(voxel: voxel, medianDepth: depth, pixelFootprint: footprint, framesSampled: positions.count,
                                reason: reason)
    }
}
