/// What rgbd finds in a capture, without rectifying it (`rgbd info`, docs/info.md): the
/// files and their schema, sizes and formats, the calibration as captured and scaled to
/// each image, the lens tables and how far they move the photo's corners, how well the
/// inverse table undoes the forward one, depth statistics, and the warnings rectifying
/// would give.
///
/// Reading one parses the JSON (depth map included) and only the photo's header: the
/// photo is never decoded.
package struct CaptureInfo: Sendable {
    /// An image (the photo or the depth map) and the calibration scaled to it.
    package struct ImageGeometry: Equatable, Sendable {
        /// Width in pixels.
        package var width: Int
        /// Height in pixels.
        package var height: Int
        /// Per-axis scale from the reference dimensions: `width / W`, `height / H`.
        package var scale: SIMD2<Double>
        /// The intrinsics scaled to this image (those of its rectified version).
        package var intrinsics: Intrinsics
        /// The distortion center scaled to this image.
        package var distortionCenter: SIMD2<Double>
        /// The table's last sample radius in this image's pixels (`LensDistortion.maxRadius`).
        package var maxRadius: Double
        /// Relative difference of this image's aspect ratio from the reference's
        /// (`Calibration.aspectMismatch`); rgbd warns above 0.01.
        package var aspectMismatch: Double

        init(width: Int, height: Int, calibration: Calibration) {
            let (W, H) = calibration.referenceSize
            let scaled = calibration.scaled(toWidth: width, height: height)
            self.width = width
            self.height = height
            scale = SIMD2(Double(width) / Double(W), Double(height) / Double(H))
            intrinsics = scaled.intrinsics
            distortionCenter = scaled.distortion.center
            maxRadius = scaled.distortion.maxRadius
            aspectMismatch = calibration.aspectMismatch(width: width, height: height)
        }
    }

    /// The photo: where it is and what its header says.
    package struct Photo: Equatable, Sendable {
        /// Its path.
        package var path: String
        /// Its format, recognised by content.
        package var format: FileFormat
        /// File size in bytes.
        package var fileBytes: Int
    }

    /// A lens lookup table's values.
    package struct TableSummary: Equatable, Sendable {
        /// Number of entries.
        package var count: Int
        /// The first entry (the magnification at the distortion center).
        package var first: Double
        /// The last entry (at `r_max`, and beyond).
        package var last: Double
        /// The smallest entry.
        package var min: Double
        /// The largest entry.
        package var max: Double
        /// Whether the entries never decrease, or never increase, from one to the next.
        package var monotonic: Bool
        /// Whether the mapped radius `r·(1 + mag(r))` rises strictly from the center to
        /// `r_max` and beyond, so that every point has exactly one preimage. When false,
        /// the model folds and the other direction is ambiguous there.
        package var radiusRises: Bool

        /// The summary of `table` (at least one entry).
        package init(_ table: [Float]) {
            let values = table.map(shortestDouble)
            count = values.count
            first = values.first ?? .nan
            last = values.last ?? .nan
            min = values.min() ?? .nan
            max = values.max() ?? .nan
            monotonic = zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }
                || zip(values, values.dropFirst()).allSatisfy { $0 >= $1 }
            radiusRises = Self.radiusRises(values)
        }

        /// With `t` linear between samples `r_i = i·Δ`, `d/dr [r·(1 + mag(r))]` is linear
        /// on each segment: positive at both ends of every segment (and `1 + t[n−1] > 0`
        /// beyond `r_max`) means the mapped radius rises everywhere. At the ends of
        /// segment `i` the derivative is `1 + t[i] + i·(t[i+1] − t[i])` and
        /// `1 + t[i+1] + (i+1)·(t[i+1] − t[i])`, whatever `Δ`.
        static func radiusRises(_ t: [Double]) -> Bool {
            guard let last = t.last, 1 + last > 0 else { return false }
            for i in 0..<(t.count - 1) {
                let slope = t[i + 1] - t[i]
                if !(1 + t[i] + Double(i) * slope > 0 && 1 + t[i + 1] + Double(i + 1) * slope > 0) { return false }
            }
            return true
        }
    }

    /// How far the forward table moves one corner pixel of the photo.
    package struct CornerDisplacement: Equatable, Sendable {
        /// Which corner: `top-left`, `top-right`, `bottom-right` or `bottom-left`.
        package var name: String
        /// The corner pixel's center in the rectified photo.
        package var pixel: SIMD2<Double>
        /// Where the forward table puts it in the photo as captured.
        package var distorted: SIMD2<Double>
        /// `|distorted − pixel|`, pixels of the photo.
        package var pixels: Double
    }

    /// How well the inverse table undoes the forward table on the photo.
    ///
    /// Only grid points whose forward image `forward(p)` lies within the inverse table's
    /// radius (`LensDistortion.maxRadius`) are measured: beyond it the inverse model holds
    /// its last entry, so the round trip there says nothing about the tables (a
    /// pincushion lens pushes the photo's corners out that far). Those points are
    /// counted in `beyondTable` instead.
    package struct InverseConsistency: Equatable, Sendable {
        /// Grid columns and rows: points evenly spaced from pixel center 0 to `w − 1`
        /// (`h − 1`), ends included.
        package var columns: Int
        /// See `columns`.
        package var rows: Int
        /// Largest `|inverse(forward(p)) − p|` over the measured grid points, pixels (NaN
        /// if none was measured).
        package var maxError: Double
        /// Mean of the same, pixels (NaN if none was measured).
        package var meanError: Double
        /// Grid points not measured because `forward(p)` lies beyond the inverse table's
        /// radius.
        package var beyondTable: Int = 0

        /// Grid points measured: `columns · rows − beyondTable`.
        package var measured: Int { columns * rows - beyondTable }
    }

    /// Statistics of the depth map as captured (`CaptureInfo.depthStatistics`): its
    /// `DepthCoverage`, and the exact extremes, mean and percentiles of its depths.
    package struct DepthStatistics: Equatable, Sendable {
        /// Pixels with a depth (`DepthCoverage.validCount`).
        package var validCount: Int
        /// Pixels without (NaN: 0, negative, `null`, … in the file).
        package var holeCount: Int
        /// `holeCount / (width · height)` (`DepthCoverage.holeFraction`).
        package var holeFraction: Double
        /// Smallest depth, meters, as the shortest decimal of its Float value (nil when
        /// there is no valid pixel, as for the rest).
        package var min: Double?
        /// Largest depth, meters.
        package var max: Double?
        /// Mean depth, meters.
        package var mean: Double?
        /// Percentiles 5, 50 and 95 (empty when there is no valid pixel).
        package var percentiles: [Percentile]
    }

    /// A percentile of the valid depths, interpolated linearly between the sorted values
    /// (`numpy.percentile`'s default): at position `(n − 1)·percent/100`.
    package struct Percentile: Equatable, Sendable {
        /// 5, 50 or 95.
        package var percent: Int
        /// The depth, meters.
        package var meters: Double
    }

    /// The capture JSON's path.
    package var json: String
    /// The JSON file's size in bytes (nil if it could not be read again).
    package var jsonBytes: Int?
    /// The key set that matched (`CaptureSchema.name`).
    package var schema: String
    /// The photo.
    package var photo: Photo
    /// The calibration as captured (at its reference dimensions).
    package var calibration: Calibration
    /// The photo's size and the calibration scaled to it.
    package var color: ImageGeometry
    /// The depth map's size and the calibration scaled to it.
    package var depth: ImageGeometry
    /// Where the depth map came from (a JSON key and its form, or a file); nil only for
    /// values made by hand.
    package var depthSource: String?
    /// How many depth values were discarded as "no depth" markers: negatives and values
    /// beyond the physical maximum (zeros, nulls and NaN are ordinary holes, counted in
    /// `depthStatistics`). Nil only for values made by hand.
    package var discardedSentinels: Int?
    /// The forward table (`lens_distortion_lookup_table`).
    package var table: TableSummary
    /// The inverse table, nil if the capture has none.
    package var inverseTable: TableSummary?
    /// The forward table's displacement of the photo's four corner pixels.
    package var corners: [CornerDisplacement]
    /// Forward then inverse on the photo, nil without an inverse table.
    package var inverseConsistency: InverseConsistency?
    /// Depth statistics.
    package var depthStatistics: DepthStatistics
    /// What rectifying would warn about, and what looks wrong in the tables.
    package var warnings: [String]
    /// For a Portrait photo: what its depth metadata says (kind, accuracy, value range).
    package var portrait: PortraitDepth? = nil
    /// For a Portrait photo: the size of its Portrait Effects Matte, if it has one.
    package var matteSize: (width: Int, height: Int)? = nil
    /// What the photo's EXIF says about place, heading and gravity (nil: no EXIF).
    package var geo: GeoTag? = nil
    /// Where the places given to `read` lie as seen from the photo (docs/geo.md).
    package var placemarks: [PlacemarkSighting] = []
    /// What `rectify`, `cloud` and `preview` refuse this capture for though it can be
    /// described: an image whose aspect ratio no crop or rounding explains
    /// (`Calibration.aspectAgreement`). Empty if none.
    package var errors: [RGBDError] = []

    /// The largest corner displacement, pixels of the photo.
    package var maxCornerDisplacement: Double { corners.map(\.pixels).max() ?? 0 }

    /// Grid size of `InverseConsistency`.
    package static let inverseGrid = (columns: 41, rows: 31)

    /// Reads capture `json` and the header of its photo (`image`, default the photo beside
    /// the JSON as `Capture.imagePath(besideJSON:)` finds it), with the checks rectifying
    /// makes: what would fail to rectify fails here with the same error (a JPEG's stream
    /// is decoded at 1/8 scale for that; a HEIC's HEVC stream is not decoded), except an
    /// image of the wrong shape, which is described and listed in `errors`.
    ///
    /// A Portrait photo given as `json` with no `image` is described from its depth
    /// image and depth metadata (`PortraitReader`); its depth image is decoded.
    ///
    /// `placemarks` are located as seen from the photo (`PlacemarkSighting.locate`, with
    /// the rectified photo's intrinsics and the depth map as captured, looked up through the
    /// lens model).
    package static func read(json: String, image: String? = nil, placemarks: [Placemark] = []) throws -> CaptureInfo {
        let opening = try CaptureOpening(json: json, image: image)
        // The photo checked as decoding it would (on the other processor while the depth
        // side is read), so that info refuses what rectifying refuses.
        let (side, _) = try opening.run(depthSide: { try opening.readDepthSide(collectingShapeErrors: true) },
                                        colorSide: { try PhotoDecoder.validate(opening.photo, file: opening.imagePath) })
        let contents = side.contents
        var warnings = side.warnings
        let (isPortrait, imagePath, width, height, format) = (opening.isPortrait, opening.imagePath, opening.width,
                                                              opening.height, opening.format)
        let photoBytes = opening.photo
        let calibration = contents.calibration
        let photo = Photo(path: imagePath, format: format, fileBytes: photoBytes.count)
        let color = ImageGeometry(width: width, height: height, calibration: calibration)
        let depth = ImageGeometry(width: contents.depth.width, height: contents.depth.height, calibration: calibration)
        let scaled = calibration.scaled(toWidth: width, height: height)

        let table = TableSummary(calibration.lookupTable)
        let inverseTable = calibration.inverseLookupTable.isEmpty ? nil : TableSummary(calibration.inverseLookupTable)
        if !table.radiusRises {
            warnings.append("\(json): the lens distortion lookup table folds (r·(1 + mag(r)) does not rise everywhere): some distorted points have more than one rectified source")
        }
        warnings += calibrationWarnings(calibration, json: json)
        let statistics = depthStatistics(contents.depth)
        if statistics.validCount == 0 {
            warnings.append("\(json): the depth map has no valid pixel")
        }
        var info = CaptureInfo(
            json: json, jsonBytes: isPortrait ? nil : FileSystem.fileSize(json), schema: contents.schemaName, photo: photo,
            calibration: calibration, color: color, depth: depth, depthSource: contents.depthSource.description,
            discardedSentinels: contents.discarded.negative + contents.discarded.beyondMaximum,
            table: table, inverseTable: inverseTable, corners: cornerDisplacements(scaled.distortion),
            inverseConsistency: scaled.inverseDistortion.map { inverseConsistency(forward: scaled.distortion, inverse: $0) },
            depthStatistics: statistics, warnings: warnings)
        info.portrait = contents.metadata.portrait
        info.matteSize = contents.metadata.matte.map { ($0.width, $0.height) }
        info.geo = contents.metadata.geo
        if !placemarks.isEmpty {
            let depthCalibration = calibration.scaled(toWidth: contents.depth.width, height: contents.depth.height)
            let captured = contents.depth
            let sx = Double(captured.width) / Double(width), sy = Double(captured.height) / Double(height)
            info.placemarks = PlacemarkSighting.locate(placemarks, geo: contents.metadata.geo, intrinsics: color.intrinsics) { u, v in
                // The rectified depth pixel under photo pixel (u, v), then where the lens put it.
                let q = depthCalibration.distortion.apply(to: SIMD2(u * sx, v * sy))
                let x = Int(q.x.rounded()), y = Int(q.y.rounded())
                guard x >= 0, y >= 0, x < captured.width, y < captured.height else { return nil }
                let z = captured[x, y]
                return DepthMap.isDepth(z) ? Double(z) : nil
            }
        }
        info.errors = side.shapeErrors
        return info
    }

    /// How far `fx / fy` may be from 1 before `calibrationWarnings` warns (5 %).
    package static let focalRatioTolerance = 0.05
    /// How far the distortion center may be from the principal point, as a fraction of
    /// the reference image's diagonal, before `calibrationWarnings` warns (5 %).
    package static let centerOffsetTolerance = 0.05

    /// Warnings about a calibration that is unusual enough to doubt (rgbd uses it as
    /// given): `fx / fy` more than `focalRatioTolerance` from 1 (iPhone pixels are
    /// square), or a distortion center farther than `centerOffsetTolerance` of the
    /// reference diagonal from the principal point (they are normally a few pixels apart).
    package static func calibrationWarnings(_ calibration: Calibration, json: String) -> [String] {
        let k = calibration.intrinsics
        var warnings: [String] = []
        let ratio = k.fx / k.fy
        if abs(ratio - 1) > focalRatioTolerance {
            warnings.append("\(json): fx/fy is \(DecimalText.fixed(ratio, 3)) (fx \(DecimalText.fixed(k.fx, 3)), fy \(DecimalText.fixed(k.fy, 3))), more than \(Int(focalRatioTolerance * 100)) % from 1: the focal lengths look inconsistent (rgbd uses them as given)")
        }
        let c = calibration.distortionCenter
        let offset = ((c.x - k.cx) * (c.x - k.cx) + (c.y - k.cy) * (c.y - k.cy)).squareRoot()
        let diagonal = (Double(k.width * k.width + k.height * k.height)).squareRoot()
        if offset > centerOffsetTolerance * diagonal {
            warnings.append("\(json): the lens distortion center (\(DecimalText.fixed(c.x, 3)), \(DecimalText.fixed(c.y, 3))) is \(DecimalText.fixed(offset, 1)) px from the principal point (\(DecimalText.fixed(k.cx, 3)), \(DecimalText.fixed(k.cy, 3))), \(DecimalText.fixed(offset / diagonal * 100, 1)) % of the \(k.width)×\(k.height) diagonal (more than \(Int(centerOffsetTolerance * 100)) %): the calibration looks inconsistent (rgbd uses it as given)")
        }
        return warnings
    }

    /// The forward model's displacement of the four corner pixels (centers `(0, 0)`,
    /// `(w − 1, 0)`, `(w − 1, h − 1)`, `(0, h − 1)`).
    package static func cornerDisplacements(_ distortion: LensDistortion) -> [CornerDisplacement] {
        let right = Double(distortion.width - 1), bottom = Double(distortion.height - 1)
        let corners: [(String, SIMD2<Double>)] = [
            ("top-left", SIMD2(0, 0)), ("top-right", SIMD2(right, 0)),
            ("bottom-right", SIMD2(right, bottom)), ("bottom-left", SIMD2(0, bottom)),
        ]
        return corners.map { name, pixel in
            let q = distortion.apply(to: pixel)
            let d = q - pixel
            return CornerDisplacement(name: name, pixel: pixel, distorted: q, pixels: (d * d).sum().squareRoot())
        }
    }

    /// `|inverse(forward(p)) − p|` over an `inverseGrid` of points of the image, for the
    /// points whose `forward(p)` lies within `inverse.maxRadius` of `inverse.center`; the
    /// others are counted in `beyondTable` (see `InverseConsistency`).
    package static func inverseConsistency(forward: LensDistortion, inverse: LensDistortion) -> InverseConsistency {
        let (columns, rows) = inverseGrid
        var worst = 0.0, total = 0.0, beyond = 0
        for j in 0..<rows {
            for i in 0..<columns {
                let p = SIMD2(Double(i) * Double(forward.width - 1) / Double(columns - 1),
                              Double(j) * Double(forward.height - 1) / Double(rows - 1))
                let q = forward.apply(to: p)
                let v = q - inverse.center
                guard (v * v).sum().squareRoot() <= inverse.maxRadius else {
                    beyond += 1
                    continue
                }
                let d = inverse.apply(to: q) - p
                let error = (d * d).sum().squareRoot()
                worst = Swift.max(worst, error)
                total += error
            }
        }
        let measured = columns * rows - beyond
        return InverseConsistency(columns: columns, rows: rows, maxError: measured > 0 ? worst : .nan,
                                  meanError: measured > 0 ? total / Double(measured) : .nan, beyondTable: beyond)
    }

    /// Counts, extremes, mean and percentiles 5, 50, 95 of the valid depths
    /// (`DepthMap.isDepth`; the counts are `depth.coverage`).
    package static func depthStatistics(_ depth: DepthMap) -> DepthStatistics {
        let coverage = depth.coverage
        var values = depth.samples.filter(DepthMap.isDepth)
        let n = values.count
        var statistics = DepthStatistics(validCount: coverage.validCount, holeCount: coverage.holeCount,
                                         holeFraction: coverage.holeFraction,
                                         min: nil, max: nil, mean: nil, percentiles: [])
        guard n > 0 else { return statistics }
        var sum = 0.0, lo = values[0], hi = values[0]
        for v in values {
            sum += Double(v)
            lo = Swift.min(lo, v)
            hi = Swift.max(hi, v)
        }
        statistics.min = shortestDouble(lo)
        statistics.max = shortestDouble(hi)
        statistics.mean = sum / Double(n)
        // Ascending percentiles: each selection works on the part above the previous one.
        var from = 0
        for percent in [5, 50, 95] {
            let position = Double(n - 1) * Double(percent) / 100
            let k = Int(position.rounded(.down))
            let fraction = position - Double(k)
            values.withUnsafeMutableBufferPointer { buffer in
                Selection.select(buffer, k, in: from..<n)
                // The next larger value is the smallest of those after position k.
                var next = buffer[k]
                if k + 1 < n {
                    next = buffer[k + 1]
                    for i in (k + 2)..<n where buffer[i] < next { next = buffer[i] }
                }
                let value = Double(buffer[k]) + fraction * (Double(next) - Double(buffer[k]))
                statistics.percentiles.append(Percentile(percent: percent, meters: value))
            }
            from = k
        }
        return statistics
    }
}

/// The Double nearest the shortest decimal that reads back as `value` (`0.004` for the
/// Float 0.004, not 0.004000000189989805): what the file most likely said.
func shortestDouble(_ value: Float) -> Double {
    Double("\(value)") ?? Double(value)
}

/// In-place selection (`nth_element`): Hoare partitioning around a median of three,
/// iterative, O(n) on average; runs of equal values split evenly.
enum Selection {
    /// Reorders `buffer[range]` so that `buffer[k]` is the value sorted order would put
    /// there, everything before it in the range no larger and everything after no smaller.
    static func select(_ buffer: UnsafeMutableBufferPointer<Float>, _ k: Int, in range: Range<Int>) {
        var lo = range.lowerBound, hi = range.upperBound - 1
        while hi > lo {
            let mid = lo + (hi - lo) / 2
            // Median of three into buffer[mid].
            if buffer[mid] < buffer[lo] { buffer.swapAt(mid, lo) }
            if buffer[hi] < buffer[lo] { buffer.swapAt(hi, lo) }
            if buffer[hi] < buffer[mid] { buffer.swapAt(hi, mid) }
            let pivot = buffer[mid]
            var i = lo, j = hi
            while i <= j {
                while buffer[i] < pivot { i += 1 }
                while buffer[j] > pivot { j -= 1 }
                if i <= j {
                    buffer.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            // Now buffer[lo...j] <= pivot <= buffer[i...hi], and j < i.
            if k <= j {
                hi = j
            } else if k >= i {
                lo = i
            } else {
                return
            }
        }
    }
}
