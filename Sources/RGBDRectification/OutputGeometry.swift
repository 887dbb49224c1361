/// What is done to a rectified capture's images after rectification, on request
/// (`rgbd rectify --upright --crop valid`): by default they stay as the sensor stored them,
/// the whole rectified frame.
package struct OutputGeometry: Equatable, Sendable {
    /// Turn color, depth, matte and intrinsics together as the photo asks to be shown
    /// (its EXIF orientation, or HEIF `irot`): a portrait shot comes out portrait.
    /// Only rotations are applied; a mirroring orientation is left as stored, with a warning.
    package var upright: Bool
    /// Crop each image to the largest axis-aligned rectangle of valid pixels
    /// (`LensDistortion.validRectangle`), removing the black border a lens with pincushion
    /// distortion leaves after rectification; the intrinsics' principal point moves with it.
    package var cropToValid: Bool

    /// Outputs as stored, uncropped.
    package static let asStored = OutputGeometry()

    /// The geometry from its two choices (neither by default).
    package init(upright: Bool = false, cropToValid: Bool = false) {
        self.upright = upright
        self.cropToValid = cropToValid
    }

    /// Whether this changes nothing.
    package var isIdentity: Bool { !upright && !cropToValid }
}

/// A rectangle of whole pixels: columns `x ..< x + width`, rows `y ..< y + height`.
package struct PixelRectangle: Equatable, Sendable {
    /// First column.
    package var x: Int
    /// First row.
    package var y: Int
    /// Columns.
    package var width: Int
    /// Rows.
    package var height: Int

    /// A rectangle from its corner and size.
    package init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The largest-area rectangle of `true` cells in a `width × height` row-major mask
    /// (ties: the first found scanning rows top to bottom); nil when the mask has none.
    /// The classic histogram method: each row's run lengths of `true` above it, and the
    /// largest rectangle under that histogram with a stack, O(width · height).
    package static func largest(in mask: [Bool], width: Int, height: Int) -> PixelRectangle? {
        var heights = [Int](repeating: 0, count: width)
        var best: PixelRectangle?
        var bestArea = 0
        var stack: [Int] = []
        stack.reserveCapacity(width + 1)
        for row in 0..<height {
            for x in 0..<width { heights[x] = mask[row * width + x] ? heights[x] + 1 : 0 }
            stack.removeAll(keepingCapacity: true)
            for x in 0...width {
                let h = x < width ? heights[x] : 0
                while let top = stack.last, heights[top] >= h {
                    stack.removeLast()
                    let left = stack.last.map { $0 + 1 } ?? 0
                    let area = heights[top] * (x - left)
                    if area > bestArea {
                        bestArea = area
                        best = PixelRectangle(x: left, y: row - heights[top] + 1, width: x - left, height: heights[top])
                    }
                }
                stack.append(x)
            }
        }
        return best
    }
}

extension LensDistortion {
    /// Which rectified pixels are valid: those whose source position in the recorded
    /// image lies within its pixel centers, `[0, w − 1] × [0, h − 1]`, so that every
    /// sample interpolated for them comes from the image (none from the black outside).
    /// Row-major, `width × height`.
    package func validMask(scheduler: RowScheduler = .parallel) -> [Bool] {
        let positions = SourcePositions(self)
        let w = width, h = height
        let maxX = Float(w - 1), maxY = Float(h - 1)
        var mask = [Bool](repeating: false, count: w * h)
        mask.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let out = buffer
            scheduler.forEachBand(rows: h) { rows in
                for y in rows {
                    for x in 0..<w {
                        let q = positions.position(x: x, y: y)
                        out[y * w + x] = q.x >= 0 && q.x <= maxX && q.y >= 0 && q.y <= maxY
                    }
                }
            }
        }
        return mask
    }

    /// The largest axis-aligned rectangle of valid pixels (`validMask`) of the rectified
    /// image: what `--crop valid` keeps. The whole image when the lens leaves no border
    /// (a barrel-distorting lens, or none); nil only if no pixel is valid.
    package func validRectangle() -> PixelRectangle? {
        PixelRectangle.largest(in: validMask(), width: width, height: height)
    }
}

extension ImageBuffer {
    /// The pixels of `rectangle` (which must lie inside the image).
    package func cropped(to rectangle: PixelRectangle) -> ImageBuffer {
        precondition(rectangle.x >= 0 && rectangle.y >= 0 && rectangle.width >= 0 && rectangle.height >= 0
                         && rectangle.x + rectangle.width <= width && rectangle.y + rectangle.height <= height,
                     "crop rectangle outside the image")
        var out: [Sample] = []
        out.reserveCapacity(rectangle.width * rectangle.height * channels)
        for y in rectangle.y..<(rectangle.y + rectangle.height) {
            let start = (y * width + rectangle.x) * channels
            out.append(contentsOf: samples[start..<(start + rectangle.width * channels)])
        }
        return ImageBuffer(width: rectangle.width, height: rectangle.height, channels: channels, samples: out)
    }

    /// The image turned `turns` quarter turns clockwise (negative: counterclockwise).
    /// Pixel `(x, y)` of a `w × h` image goes to `(h − 1 − y, x)` for one turn,
    /// `(w − 1 − x, h − 1 − y)` for two, `(y, w − 1 − x)` for three.
    package func rotated(clockwiseQuarterTurns turns: Int) -> ImageBuffer {
        let t = ((turns % 4) + 4) % 4
        guard t != 0 else { return self }
        let (w, h, c) = (width, height, channels)
        let (ow, oh) = t == 2 ? (w, h) : (h, w)
        guard let first = samples.first else { return ImageBuffer(width: ow, height: oh, channels: c, samples: []) }
        var out = [Sample](repeating: first, count: samples.count)
        samples.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { destination in
                for y in 0..<h {
                    for x in 0..<w {
                        let (nx, ny): (Int, Int)
                        switch t {
                        case 1: (nx, ny) = (h - 1 - y, x)
                        case 2: (nx, ny) = (w - 1 - x, h - 1 - y)
                        default: (nx, ny) = (y, w - 1 - x)
                        }
                        let from = (y * w + x) * c, to = (ny * ow + nx) * c
                        for k in 0..<c { destination[to + k] = source[from + k] }
                    }
                }
            }
        }
        return ImageBuffer(width: ow, height: oh, channels: c, samples: out)
    }
}

extension Intrinsics {
    /// The intrinsics of the image turned `turns` quarter turns clockwise
    /// (`ImageBuffer.rotated`), pixel centers at integers: for one turn a `w × h` image
    /// becomes `h × w` with `fx' = fy`, `fy' = fx`, `cx' = h − 1 − cy`, `cy' = cx`; the
    /// camera frame turns with it (`X' = −Y`, `Y' = X`, `Z' = Z`), so each 3-D point
    /// projects to the pixel its old pixel went to.
    package func rotated(clockwiseQuarterTurns turns: Int) -> Intrinsics {
        let w = Double(width), h = Double(height)
        switch ((turns % 4) + 4) % 4 {
        case 1: return Intrinsics(fx: fy, fy: fx, cx: h - 1 - cy, cy: cx, width: height, height: width)
        case 2: return Intrinsics(fx: fx, fy: fy, cx: w - 1 - cx, cy: h - 1 - cy, width: width, height: height)
        case 3: return Intrinsics(fx: fy, fy: fx, cx: cy, cy: w - 1 - cx, width: height, height: width)
        default: return self
        }
    }

    /// The rotation taking camera-frame points of the stored image to those of the image
    /// turned `turns` quarter turns clockwise (about the optical axis), as rows.
    package static func cameraRotation(clockwiseQuarterTurns turns: Int) -> [SIMD3<Double>] {
        switch ((turns % 4) + 4) % 4 {
        case 1: return [SIMD3(0, -1, 0), SIMD3(1, 0, 0), SIMD3(0, 0, 1)]
        case 2: return [SIMD3(-1, 0, 0), SIMD3(0, -1, 0), SIMD3(0, 0, 1)]
        case 3: return [SIMD3(0, 1, 0), SIMD3(-1, 0, 0), SIMD3(0, 0, 1)]
        default: return [SIMD3(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1)]
        }
    }

    /// The intrinsics of `rectangle` of this image: the same focal lengths, the principal
    /// point shifted by the rectangle's corner.
    package func cropped(to rectangle: PixelRectangle) -> Intrinsics {
        Intrinsics(fx: fx, fy: fy, cx: cx - Double(rectangle.x), cy: cy - Double(rectangle.y),
                   width: rectangle.width, height: rectangle.height)
    }
}
