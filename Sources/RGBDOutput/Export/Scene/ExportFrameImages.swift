import CKernels

/// The images of one exported frame: the color frame brought to the exported camera
/// (as recorded, shrunk by a whole factor, or cropped and shifted so the principal point
/// is the image's centre) and the depth map resampled onto the same pixel grid, in the
/// integer units a layout stores. The shared core of every `SceneExport` layout.
///
/// Pixel convention: rgbd's, integer coordinates are pixel centres (docs/scans.md). Each
/// layout's writer converts the intrinsics to its tool's convention once.
package struct ExportCamera: Equatable, Sendable {
    /// The exported image's intrinsics (rgbd's convention) and size.
    package var intrinsics: Intrinsics
    /// The whole factor the color frame is shrunk by (each output pixel the mean of an
    /// `n × n` block).
    var downscale: Int
    /// After shrinking, output pixel `(x, y)` is the shrunk image at `(x + shift.x, y + shift.y)`
    /// (bilinear when fractional): a crop, with a sub-pixel shift when the principal point
    /// must land on the centre.
    var shift: SIMD2<Double>

    /// Each stored property given.
    package init(intrinsics: Intrinsics, downscale: Int, shift: SIMD2<Double>) {
        self.intrinsics = intrinsics
        self.downscale = downscale
        self.shift = shift
    }

    /// Whether a `width × height` color frame is exported as it is (no shrinking, no
    /// crop or shift): what `ExportFrameImages.color` returns unchanged.
    package func keeps(width: Int, height: Int) -> Bool {
        downscale == 1 && shift == .zero && intrinsics.width == width && intrinsics.height == height
    }

    /// The camera of a color frame shrunk by `factor`: block `n` covers source pixels
    /// `n·f … n·f + f − 1`, whose centre is `n·f + (f − 1)/2`, so `c' = (c − (f − 1)/2)/f`
    /// (`= (c + ½)/f − ½`: pixel-centre aware) and `f' = f/factor`; the size is rounded down.
    package static func shrunk(_ k: Intrinsics, by factor: Int) -> Intrinsics {
        let f = Double(factor), half = Double(factor - 1) / 2
        return Intrinsics(fx: k.fx / f, fy: k.fy / f, cx: (k.cx - half) / f, cy: (k.cy - half) / f,
                          width: k.width / factor, height: k.height / factor)
    }

    /// The camera of a `width × height` image whose pixel `i` stands for the pixels of
    /// `k`'s image that a nearest-neighbour resize to `k`'s size gives it (OpenCV's, as
    /// nerfstudio loads depth: image pixel `x` takes pixel `⌊x·width/k.width⌋`). Those are
    /// the pixels whose centres lie in `[i·r, (i + 1)·r)`, `r = k.width/width` (rgbd's
    /// convention, centres at integers); pixel `i`'s ray is through the middle,
    /// `(i + ½)·r`, so `f' = f/r` and `c' = c/r − ½` (per axis).
    package static func footprints(of k: Intrinsics, width: Int, height: Int) -> Intrinsics {
        var footprints = k.scaled(toWidth: width, height: height)
        footprints.cx -= 0.5
        footprints.cy -= 0.5
        return footprints
    }

    /// Half the widest window centred on the principal point `c` (rgbd convention) of an
    /// axis of `size` pixels: the window `[c + ½ − h, c + ½ + h)` in pixel edges fits.
    package static func centredHalfSize(principal c: Double, size: Int) -> Int {
        let edge = c + 0.5
        return max(0, Int(min(edge, Double(size) - edge).rounded(.down)))
    }

    /// The camera that crops `k` (already shrunk) to `width × height` centred on its
    /// principal point: the new principal point is exactly the image's centre,
    /// `((width − 1)/2, (height − 1)/2)` in rgbd's convention.
    package static func centred(_ k: Intrinsics, downscale: Int, width: Int, height: Int) -> ExportCamera {
        let cx = Double(width - 1) / 2, cy = Double(height - 1) / 2
        return ExportCamera(intrinsics: Intrinsics(fx: k.fx, fy: k.fy, cx: cx, cy: cy, width: width, height: height),
                            downscale: downscale, shift: SIMD2(k.cx - cx, k.cy - cy))
    }
}

package enum ExportFrameImages {
    /// The color frame on the exported camera's grid.
    package static func color(_ image: ColorImage, camera: ExportCamera) -> ColorImage {
        if camera.keeps(width: image.width, height: image.height) { return image }
        let shrunk = camera.downscale > 1 ? shrink(image, by: camera.downscale) : image
        let k = camera.intrinsics
        if camera.shift == .zero && shrunk.width == k.width && shrunk.height == k.height { return shrunk }
        return shifted(shrunk, by: camera.shift, width: k.width, height: k.height)
    }

    /// Each output pixel the mean of an `f × f` block (rounded half up); the last partial
    /// blocks are dropped.
    static func shrink(_ image: ColorImage, by f: Int) -> ColorImage {
        let w = image.width / f, h = image.height / f, c = image.channels
        var out = [UInt8](repeating: 0, count: w * h * c)
        let area = UInt32(f * f)
        image.samples.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                var sums = [UInt32](repeating: 0, count: w * c)
                for y in 0..<h {
                    for i in sums.indices { sums[i] = 0 }
                    for row in (y * f)..<(y * f + f) {
                        let base = row * image.width * c
                        for x in 0..<w {
                            for dx in 0..<f {
                                let s = base + (x * f + dx) * c
                                for ch in 0..<c { sums[x * c + ch] &+= UInt32(src[s + ch]) }
                            }
                        }
                    }
                    for i in 0..<(w * c) { dst[y * w * c + i] = UInt8((sums[i] + area / 2) / area) }
                }
            }
        }
        return ColorImage(width: w, height: h, channels: c, samples: out)
    }

    /// The window `width × height` of `image` starting at `shift` (bilinear weights,
    /// the same for every pixel since the shift is constant; a whole shift copies).
    static func shifted(_ image: ColorImage, by shift: SIMD2<Double>, width: Int, height: Int) -> ColorImage {
        let c = image.channels
        let ix = Int(shift.x.rounded(.down)), iy = Int(shift.y.rounded(.down))
        let ax = shift.x - Double(ix), ay = shift.y - Double(iy)
        // Weights in 1/256ths: exact for whole shifts, within half a level otherwise.
        let wx = UInt32((ax * 256).rounded()), wy = UInt32((ay * 256).rounded())
        var out = [UInt8](repeating: 0, count: width * height * c)
        let lastX = image.width - 1, lastY = image.height - 1
        image.samples.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<height {
                    let y0 = min(max(y + iy, 0), lastY), y1 = min(y0 + 1, lastY)
                    for x in 0..<width {
                        let x0 = min(max(x + ix, 0), lastX), x1 = min(x0 + 1, lastX)
                        for ch in 0..<c {
                            let p00 = UInt32(src[(y0 * image.width + x0) * c + ch])
                            let p01 = UInt32(src[(y0 * image.width + x1) * c + ch])
                            let p10 = UInt32(src[(y1 * image.width + x0) * c + ch])
                            let p11 = UInt32(src[(y1 * image.width + x1) * c + ch])
                            let top = p00 * (256 - wx) + p01 * wx, bottom = p10 * (256 - wx) + p11 * wx
                            dst[(y * width + x) * c + ch] = UInt8((top * (256 - wy) + bottom * wy + 32768) >> 16)
                        }
                    }
                }
            }
        }
        return ColorImage(width: width, height: height, channels: c, samples: out)
    }

    /// The depth map (meters, NaN = none; pixels below `minConfidence` dropped) on the
    /// exported camera's grid, as `round(depth·scale)` in 16 bits, 0 = unknown.
    ///
    /// Both cameras are pinholes at the same centre, so output pixel `(x, y)` sees the
    /// depth map at `u = (x − cx')·fx/fx' + cx` (and likewise `v`). Where the four depth
    /// pixels around it are valid and within `maxStep` of each other (relative), inverse
    /// depth is interpolated bilinearly, which is exact on planes; at depth edges the
    /// nearest depth pixel is used, never a blend of two surfaces; outside the map (more
    /// than half a pixel) there is no depth.
    ///
    /// The work is arranged for an upsampling (the color grid has about 7.5 times the
    /// depth map's pixels across): each output column's and row's source pixels and
    /// weights are worked out once (`DepthSampling`), whether the 2×2 neighbourhood is
    /// one surface once per depth pixel, and the horizontal interpolation once per pair
    /// of depth rows rather than per output row; what is left per output pixel (the
    /// vertical interpolation or the nearest pixel, the division, the rounding) runs
    /// eight pixels at a time with AVX2 (`rgbd_depth_units_avx2`, when `avx2`). The
    /// arithmetic per output pixel is the same, in the same order, as a direct
    /// evaluation's (`SceneExportTests` compares the two, with and without AVX2).
    package static func depth(_ depth: DepthMap, confidence: ImageBuffer<UInt8>?, minConfidence: UInt8,
                      from source: Intrinsics, to camera: Intrinsics, scale: Double, maxStep: Float = 0.05,
                      avx2: Bool = VectorKernels.avx2) -> [UInt16] {
        let dw = depth.width, dh = depth.height
        let width = camera.width, height = camera.height
        var out = [UInt16](repeating: 0, count: width * height)
        guard dw > 0, dh > 0, width > 0, height > 0 else { return out }
        // Inverse depth per pixel, 0 where there is none.
        var inverse = [Float](repeating: 0, count: dw * dh)
        inverse.withUnsafeMutableBufferPointer { inv in
            depth.samples.withUnsafeBufferPointer { z in
                for i in 0..<(dw * dh) {
                    let value = z[i]
                    guard value.isFinite, value > 0 else { continue }
                    if let confidence, confidence.samples[i] < minConfidence { continue }
                    inv[i] = 1 / value
                }
            }
        }
        // Per depth pixel (u0, v0): whether it and its right, lower and lower-right
        // neighbours (clamped at the map's last column and row) are all valid and within
        // `maxStep` of each other: one surface, interpolated.
        let ratio = 1 + maxStep
        var smooth = [Bool](repeating: false, count: dw * dh)
        inverse.withUnsafeBufferPointer { inv in
            smooth.withUnsafeMutableBufferPointer { smooth in
                for v0 in 0..<dh {
                    let v1 = min(v0 + 1, dh - 1)
                    for u0 in 0..<dw {
                        let u1 = min(u0 + 1, dw - 1)
                        let q00 = inv[v0 * dw + u0], q01 = inv[v0 * dw + u1]
                        let q10 = inv[v1 * dw + u0], q11 = inv[v1 * dw + u1]
                        let lo = min(min(q00, q01), min(q10, q11)), hi = max(max(q00, q01), max(q10, q11))
                        smooth[v0 * dw + u0] = lo > 0 && hi <= lo * ratio
                    }
                }
            }
        }
        let columns = DepthSampling(count: width, principal: camera.cx, scale: source.fx / camera.fx,
                                    sourcePrincipal: source.cx, sourceCount: dw)
        let rows = DepthSampling(count: height, principal: camera.cy, scale: source.fy / camera.fy,
                                 sourcePrincipal: source.cy, sourceCount: dh)
        let avx2 = avx2 && columns.allInside
        // Per pair of depth rows (v0, v1), for every output column: the horizontal
        // interpolations of the two rows, whether the neighbourhood is one surface, and
        // the nearest depth pixel of a depth row (cached for the last two rows asked).
        // Scratch rows: top, bottom, two nearest rows (floats); the flags (bytes).
        let floats = UnsafeMutableBufferPointer<Float>.allocate(capacity: 4 * width)
        floats.initialize(repeating: 0)
        let flags = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: width)
        flags.initialize(repeating: 0)
        defer {
            floats.deallocate()
            flags.deallocate()
        }
        guard let top = floats.baseAddress, let flag = flags.baseAddress else { return out }
        let bottom = top + width
        let nearest = [top + 2 * width, top + 3 * width]
        var nearestRows = [-1, -1]
        var pair = -1
        inverse.withUnsafeBufferPointer { inv in
            smooth.withUnsafeBufferPointer { smooth in
                out.withUnsafeMutableBufferPointer { dst in
                    columns.withTables { c0, c1, cn, ca, cia in
                        for y in rows.inside where rows.allInside || rows.isInside[y] {
                            let v0 = Int(rows.first[y]), v1 = Int(rows.second[y])
                            if v0 != pair {
                                let upper = v0 * dw, lower = v1 * dw
                                for x in columns.inside where columns.allInside || columns.isInside[x] {
                                    let u0 = Int(c0[x]), u1 = Int(c1[x]), a = ca[x], ia = cia[x]
                                    top[x] = inv[upper + u0] * ia + inv[upper + u1] * a
                                    bottom[x] = inv[lower + u0] * ia + inv[lower + u1] * a
                                    flag[x] = smooth[upper + u0] ? 1 : 0
                                }
                                pair = v0
                            }
                            let vn = Int(rows.nearest[y])
                            var slot = nearestRows[0] == vn ? 0 : nearestRows[1] == vn ? 1 : -1
                            if slot < 0 {
                                // Replace the row that is not one of this pair's.
                                slot = nearestRows[0] == v0 || nearestRows[0] == v1 ? 1 : 0
                                let base = vn * dw, row = nearest[slot]
                                for x in columns.inside where columns.allInside || columns.isInside[x] {
                                    row[x] = inv[base + Int(cn[x])]
                                }
                                nearestRows[slot] = vn
                            }
                            let near = nearest[slot]
                            let b = rows.weight[y], ib = rows.weightBefore[y]
                            guard let line = dst.baseAddress.map({ $0 + y * width }) else { return }
                            var x = columns.inside.lowerBound
                            if avx2 {
                                x += rgbd_depth_units_avx2(columns.inside.count, flag + x, top + x, bottom + x, near + x,
                                                           b, ib, scale, line + x)
                            }
                            while x < columns.inside.upperBound {
                                defer { x += 1 }
                                guard columns.allInside || columns.isInside[x] else { continue }
                                let q = flag[x] != 0 ? top[x] * ib + bottom[x] * b : near[x]
                                guard q > 0 else { continue }
                                // round(depth·scale) (half away from zero), kept when 1…65535.
                                let units = Double(1 / q) * scale
                                guard units >= 0.5, units < 65535.5 else { continue }
                                let whole = Int(units)
                                line[x] = UInt16(units - Double(whole) >= 0.5 ? whole + 1 : whole)
                            }
                        }
                    }
                }
            }
        }
        return out
    }

    /// How sharp a frame is: the variance of the 4-neighbour Laplacian of its gray image,
    /// shrunk first to at most 640 pixels across (so the measure is about the scene's
    /// detail, not the sensor's noise, and cheap). Higher is sharper.
    package static func sharpness(_ image: ColorImage) -> Double {
        let f = max(1, image.width / 640)
        let w = image.width / f, h = image.height / f
        guard w >= 3, h >= 3, image.channels >= 3 else { return 0 }
        var gray = [Float](repeating: 0, count: w * h)
        image.samples.withUnsafeBufferPointer { src in
            for y in 0..<(h * f) {
                for x in 0..<(w * f) {
                    let s = (y * image.width + x) * image.channels
                    let g = 0.299 * Float(src[s]) + 0.587 * Float(src[s + 1]) + 0.114 * Float(src[s + 2])
                    gray[(y / f) * w + x / f] += g
                }
            }
        }
        var sum = 0.0, sumSquares = 0.0
        for y in 1..<(h - 1) {
            for x in 1..<(w - 1) {
                let i = y * w + x
                let l = Double(gray[i - 1] + gray[i + 1] + gray[i - w] + gray[i + w] - 4 * gray[i]) / Double(f * f)
                sum += l
                sumSquares += l * l
            }
        }
        let n = Double((w - 2) * (h - 2))
        return sumSquares / n - (sum / n) * (sum / n)
    }
}

/// Where the output pixels of one axis (columns or rows) sample a depth map's axis:
/// output pixel `i` sees source coordinate `s = (i − c')·scale + c`, inside the map when
/// `−½ ≤ s < n − ½`; its neighbours are `⌊s⌋` and the next (both clamped to the map), its
/// weight toward the second `s − ⌊s⌋` (clamped to 0…1), its nearest pixel `round(s)`.
struct DepthSampling {
    /// From the first output pixel whose coordinate is inside the map to the last.
    let inside: Range<Int>
    /// Whether every pixel of `inside` is inside (always, since the coordinate grows
    /// with the pixel; `isInside` says which are otherwise).
    let allInside: Bool
    var isInside: [Bool]
    var first: [Int32]
    var second: [Int32]
    var nearest: [Int32]
    /// The weight of `second`.
    var weight: [Float]
    /// `1 − weight`, as the bilinear formula uses it.
    var weightBefore: [Float]

    package init(count: Int, principal: Double, scale: Double, sourcePrincipal: Double, sourceCount: Int) {
        first = [Int32](repeating: 0, count: count)
        second = first
        nearest = first
        weight = [Float](repeating: 0, count: count)
        weightBefore = weight
        isInside = [Bool](repeating: false, count: count)
        var lower = count, upper = 0
        for i in 0..<count {
            let s = (Double(i) - principal) * scale + sourcePrincipal
            guard s >= -0.5, s < Double(sourceCount) - 0.5 else { continue }
            isInside[i] = true
            lower = min(lower, i)
            upper = max(upper, i + 1)
            let s0 = min(max(Int(s.rounded(.down)), 0), sourceCount - 1)
            first[i] = Int32(s0)
            second[i] = Int32(min(s0 + 1, sourceCount - 1))
            nearest[i] = Int32(min(max(Int(s.rounded()), 0), sourceCount - 1))
            let a = Float(min(max(s - Double(s0), 0), 1))
            weight[i] = a
            weightBefore[i] = 1 - a
        }
        inside = lower < upper ? lower..<upper : 0..<0
        allInside = !isInside[inside].contains(false)
    }

    /// The tables as buffers (first, second, nearest, weight, 1 − weight).
    func withTables<R>(_ body: (UnsafeBufferPointer<Int32>, UnsafeBufferPointer<Int32>, UnsafeBufferPointer<Int32>,
                                UnsafeBufferPointer<Float>, UnsafeBufferPointer<Float>) throws -> R) rethrows -> R {
        try first.withUnsafeBufferPointer { a in
            try second.withUnsafeBufferPointer { b in
                try nearest.withUnsafeBufferPointer { c in
                    try weight.withUnsafeBufferPointer { d in
                        try weightBefore.withUnsafeBufferPointer { e in try body(a, b, c, d, e) }
                    }
                }
            }
        }
    }
}
