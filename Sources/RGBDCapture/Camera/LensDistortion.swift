/// Apple's radial lookup-table lens model for one image size (docs/lens-model.md).
///
/// For a point `p`, with `c` the distortion center scaled to the image and a table `t`
/// of `n` relative magnifications spaced evenly from radius 0 to `maxRadius`:
///
///     r_max = sqrt(max(c.x, w − c.x)² + max(c.y, h − c.y)²)
///     v = p − c,  r = |v|
///     mag = r < r_max ? lerp(t[i], t[i+1], f) with i + f = r·(n − 1)/r_max : t[n − 1]
///     q = c + v·(1 + mag)
///
/// With `lens_distortion_lookup_table`, `q` is where the rectified point `p` lies in the
/// distorted image; with the inverse table, the other way round.
public struct LensDistortion: Equatable, Sendable {
    /// The distortion center in this image's pixels.
    public let center: SIMD2<Double>
    /// Relative radial magnifications, at least 2.
    public let table: [Float]
    /// Image width in pixels.
    public let width: Int
    /// Image height in pixels.
    public let height: Int
    /// The radius of the farthest image corner from the center (the table's last sample).
    public let maxRadius: Double

    /// A model for a `width × height` image.
    ///
    /// - Precondition: `table.count >= 2` (calibration reading checks this).
    public init(center: SIMD2<Double>, table: [Float], width: Int, height: Int) {
        precondition(table.count >= Self.minimumTableCount, "a lookup table needs at least two entries")
        self.center = center
        self.table = table
        self.width = width
        self.height = height
        let dx = max(center.x, Double(width) - center.x)
        let dy = max(center.y, Double(height) - center.y)
        self.maxRadius = (dx * dx + dy * dy).squareRoot()
    }

    /// A model with a given `maxRadius` instead of the image's farthest corner: the same
    /// lens sampled on another grid (an NV12 frame's chroma plane, `FrameRectifier`).
    package init(center: SIMD2<Double>, table: [Float], width: Int, height: Int, maxRadius: Double) {
        precondition(table.count >= Self.minimumTableCount, "a lookup table needs at least two entries")
        self.center = center
        self.table = table
        self.width = width
        self.height = height
        self.maxRadius = maxRadius
    }

    /// A model for a `width × height` image from calibration values at reference
    /// dimensions (`referenceWidth × referenceHeight`, where `center` is given), checked
    /// as capture reading checks them: positive sizes, a finite center, at least two
    /// finite table entries in (−1, 10).
    package static func validated(center: SIMD2<Double>, referenceWidth: Int, referenceHeight: Int, table: [Float],
                                 width: Int, height: Int) throws -> LensDistortion {
        guard referenceWidth > 0, referenceHeight > 0, width > 0, height > 0 else {
            throw RGBDError(.invalidArgument, "sizes must be positive (reference \(referenceWidth)×\(referenceHeight), image \(width)×\(height))")
        }
        guard isPlausibleCenter(center, width: referenceWidth, height: referenceHeight) else {
            throw RGBDError(.invalidArgument, "the distortion center (\(center.x), \(center.y)) is far outside the \(referenceWidth)×\(referenceHeight) reference image")
        }
        guard table.count >= minimumTableCount else {
            throw RGBDError(.invalidArgument, "the lookup table needs at least 2 entries, has \(table.count)")
        }
        if let bad = table.firstIndex(where: { !isPlausibleMagnification(Double($0)) }) {
            throw RGBDError(.invalidArgument, "lookup table entry \(bad) (\(table[bad])) is out of range (−1, 10)")
        }
        let sx = Double(width) / Double(referenceWidth), sy = Double(height) / Double(referenceHeight)
        return LensDistortion(center: SIMD2(center.x * sx, center.y * sy), table: table, width: width, height: height)
    }

    /// `validated` for a frame to rectify (`FrameRectifier`, `Rectifier` on caller
    /// buffers), after two checks of the frame: its size is 1 to 2³¹ pixels, and it is
    /// not the reference size transposed (such a frame was rotated; frames are rectified
    /// in sensor orientation, docs/format.md).
    package static func forFrame(center: SIMD2<Double>, referenceWidth: Int, referenceHeight: Int, table: [Float],
                                width: Int, height: Int) throws -> LensDistortion {
        guard width > 0, height > 0, width * height <= 1 << 31 else {
            throw RGBDError(.invalidArgument, "image size \(width)×\(height) is out of range")
        }
        if referenceWidth != referenceHeight && width == referenceHeight && height == referenceWidth {
            throw RGBDError(.invalidArgument, "the image is \(width)×\(height), the reference size transposed (\(referenceWidth)×\(referenceHeight)): it was rotated; rectify frames in sensor orientation")
        }
        return try validated(center: center, referenceWidth: referenceWidth, referenceHeight: referenceHeight,
                             table: table, width: width, height: height)
    }

    /// The fewest entries a lookup table may have (its first sample is at the center, its
    /// last at `maxRadius`).
    package static let minimumTableCount = 2

    /// Whether `value` is a plausible table entry (a relative magnification): finite and
    /// in (−1, 10), the range every reader and generator of tables checks.
    package static func isPlausibleMagnification(_ value: Double) -> Bool {
        value > -1 && value < 10
    }

    /// Whether a distortion center is finite and within one image size of the image
    /// (real centers are near the middle; absurd ones would overflow the arithmetic).
    package static func isPlausibleCenter(_ center: SIMD2<Double>, width: Int, height: Int) -> Bool {
        let w = Double(width), h = Double(height)
        return center.x >= -w && center.x <= 2 * w && center.y >= -h && center.y <= 2 * h
    }

    /// The relative magnification at radius `r` (linear interpolation in the table,
    /// the last entry at and beyond `maxRadius`).
    public func magnification(atRadius r: Double) -> Double {
        let n = table.count
        guard r < maxRadius else { return Double(table[n - 1]) }
        let position = r * Double(n - 1) / maxRadius
        let i = min(Int(position), n - 2)
        let f = position - Double(i)
        return Double(table[i]) * (1 - f) + Double(table[i + 1]) * f
    }

    /// `c + (p − c)·(1 + mag(|p − c|))`: applies the table to a point.
    public func apply(to point: SIMD2<Double>) -> SIMD2<Double> {
        let v = point - center
        let r = (v * v).sum().squareRoot()
        return center + v * (1 + magnification(atRadius: r))
    }

    /// The point `p` with `apply(to: p) == point`, found numerically (the exact inverse
    /// of this model, where the inverse table is only a 42-sample approximation).
    ///
    /// Solves `ρ·(1 + mag(ρ)) = |point − c|` for the radius by fixed-point iteration,
    /// which converges because `mag` changes slowly with the radius.
    public func invert(_ point: SIMD2<Double>) -> SIMD2<Double> {
        let v = point - center
        let target = (v * v).sum().squareRoot()
        guard target > 0 else { return center }
        var rho = target
        for _ in 0..<50 {
            let next = target / (1 + magnification(atRadius: rho))
            if abs(next - rho) < 1e-12 * max(1, target) { rho = next; break }
            rho = next
        }
        return center + v * (rho / target)
    }

    /// The same model with another table (for instance the inverse table).
    package func with(table: [Float]) -> LensDistortion {
        LensDistortion(center: center, table: table, width: width, height: height)
    }
}
