/// The images of one exported frame: the color frame brought to the exported camera
/// (as recorded, shrunk by a whole factor, or cropped and shifted so the principal point
/// is the image's centre) and the depth map resampled onto the same pixel grid, in the
/// integer units a layout stores. The shared core of every `SceneExport` layout.
///
/// Pixel convention: rgbd's, integer coordinates are pixel centres (docs/scans.md). Each
/// layout's writer converts the intrinsics to its tool's convention once.
struct ExportCamera: Equatable, Sendable {
    /// The exported image's intrinsics (rgbd's convention) and size.
    var intrinsics: Intrinsics
    /// The whole factor the color frame is shrunk by (each output pixel the mean of an
    /// `n × n` block).
    var downscale: Int
    /// After shrinking, output pixel `(x, y)` is the shrunk image at `(x + shift.x, y + shift.y)`
    /// (bilinear when fractional): a crop, with a sub-pixel shift when the principal point
    /// must land on the centre.
    var shift: SIMD2<Double>

    /// The camera of a color frame shrunk by `factor`: block `n` covers source pixels
    /// `n·f … n·f + f − 1`, whose centre is `n·f + (f − 1)/2`, so `c' = (c − (f − 1)/2)/f`
    /// (`= (c + ½)/f − ½`: pixel-centre aware) and `f' = f/factor`; the size is rounded down.
    static func shrunk(_ k: Intrinsics, by factor: Int) -> Intrinsics {
        let f = Double(factor), half = Double(factor - 1) / 2
        return Intrinsics(fx: k.fx / f, fy: k.fy / f, cx: (k.cx - half) / f, cy: (k.cy - half) / f,
                          width: k.width / factor, height: k.height / factor)
    }

    /// Half the widest window centred on the principal point `c` (rgbd convention) of an
    /// axis of `size` pixels: the window `[c + ½ − h, c + ½ + h)` in pixel edges fits.
    static func centredHalfSize(principal c: Double, size: Int) -> Int {
        let edge = c + 0.5
        return max(0, Int(min(edge, Double(size) - edge).rounded(.down)))
    }

    /// The camera that crops `k` (already shrunk) to `width × height` centred on its
    /// principal point: the new principal point is exactly the image's centre,
    /// `((width − 1)/2, (height − 1)/2)` in rgbd's convention.
    static func centred(_ k: Intrinsics, downscale: Int, width: Int, height: Int) -> ExportCamera {
        let cx = Double(width - 1) / 2, cy = Double(height - 1) / 2
        return ExportCamera(intrinsics: Intrinsics(fx: k.fx, fy: k.fy, cx: cx, cy: cy, width: width, height: height),
                            downscale: downscale, shift: SIMD2(k.cx - cx, k.cy - cy))
    }
}

enum ExportFrameImages {
    /// The color frame on the exported camera's grid.
    static func color(_ image: ColorImage, camera: ExportCamera) -> ColorImage {
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
    static func depth(_ depth: DepthMap, confidence: ImageBuffer<UInt8>?, minConfidence: UInt8,
                      from source: Intrinsics, to camera: Intrinsics, scale: Double, maxStep: Float = 0.05) -> [UInt16] {
        let dw = depth.width, dh = depth.height
        let width = camera.width, height = camera.height
        // Inverse depth per pixel, 0 where there is none.
        var inverse = [Float](repeating: 0, count: dw * dh)
        for i in 0..<(dw * dh) {
            let z = depth.samples[i]
            guard z.isFinite, z > 0 else { continue }
            if let confidence, confidence.samples[i] < minConfidence { continue }
            inverse[i] = 1 / z
        }
        let sx = source.fx / camera.fx, sy = source.fy / camera.fy
        let columns = (0..<width).map { x in (Double(x) - camera.cx) * sx + source.cx }
        var out = [UInt16](repeating: 0, count: width * height)
        let ratio = 1 + maxStep
        inverse.withUnsafeBufferPointer { inv in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<height {
                    let v = (Double(y) - camera.cy) * sy + source.cy
                    guard v >= -0.5, v < Double(dh) - 0.5 else { continue }
                    let v0 = min(max(Int(v.rounded(.down)), 0), dh - 1), v1 = min(v0 + 1, dh - 1)
                    let b = Float(min(max(v - Double(v0), 0), 1))
                    let vn = min(max(Int(v.rounded()), 0), dh - 1)
                    for x in 0..<width {
                        let u = columns[x]
                        guard u >= -0.5, u < Double(dw) - 0.5 else { continue }
                        let u0 = min(max(Int(u.rounded(.down)), 0), dw - 1), u1 = min(u0 + 1, dw - 1)
                        let a = Float(min(max(u - Double(u0), 0), 1))
                        let q00 = inv[v0 * dw + u0], q01 = inv[v0 * dw + u1], q10 = inv[v1 * dw + u0], q11 = inv[v1 * dw + u1]
                        let lo = min(min(q00, q01), min(q10, q11)), hi = max(max(q00, q01), max(q10, q11))
                        var q: Float
                        if lo > 0 && hi <= lo * ratio {
                            q = (q00 * (1 - a) + q01 * a) * (1 - b) + (q10 * (1 - a) + q11 * a) * b
                        } else {
                            q = inv[vn * dw + min(max(Int(u.rounded()), 0), dw - 1)]
                        }
                        guard q > 0 else { continue }
                        let units = (Double(1 / q) * scale).rounded()
                        if units >= 1 && units <= 65535 { dst[y * width + x] = UInt16(units) }
                    }
                }
            }
        }
        return out
    }

    /// How sharp a frame is: the variance of the 4-neighbour Laplacian of its gray image,
    /// shrunk first to at most 640 pixels across (so the measure is about the scene's
    /// detail, not the sensor's noise, and cheap). Higher is sharper.
    static func sharpness(_ image: ColorImage) -> Double {
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
