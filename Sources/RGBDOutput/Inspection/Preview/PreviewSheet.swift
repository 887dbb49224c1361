/// What `PreviewSheet.render` draws.
package struct PreviewOptions: Equatable, Sendable {
    /// Sheet width in pixels (`PreviewLayout.minimumWidth ... maximumWidth`).
    package var width: Int = PreviewLayout.defaultWidth
    /// Depth at the bottom of the color scale, meters.
    package var minDepth: Float = 0
    /// Depth at the top of the color scale, meters; nil: chosen from the depth map (its
    /// 99th percentile, rounded up to a round number).
    package var maxDepth: Float?
    /// Relative depth jump to a 4-neighbor that marks a point as a flying-pixel candidate
    /// (as `rgbd cloud --flying-pixel-step`).
    package var flyingPixelStep: Float = 0.05
    /// Rectification settings.
    package var rectifier = Rectifier()
    /// The AprilTags to find and draw over the rectified color (outline, ID, axes); nil:
    /// none looked for.
    package var tags: TagOptions? = TagOptions()
    /// Places to label over the rectified color where the photo's geotag puts them in view
    /// and its depth map does not hide them (`PlacemarkSighting`); empty: none.
    package var placemarks: [Placemark] = []
    /// Show every panel turned as the photo asks to be shown (`CaptureMetadata.orientation`;
    /// a mirroring orientation is left as stored), the header's sizes and intrinsics those
    /// of the turned images (`rgbd preview --upright`).
    package var upright = false

    /// The defaults: 1600 pixels wide, automatic scale from 0 m.
    package init() {}

    package static func == (a: PreviewOptions, b: PreviewOptions) -> Bool {
        a.width == b.width && a.minDepth == b.minDepth && a.maxDepth == b.maxDepth
            && a.flyingPixelStep == b.flyingPixelStep
            && a.rectifier.maxRelativeDepthStep == b.rectifier.maxRelativeDepthStep && a.tags == b.tags
            && a.placemarks == b.placemarks && a.upright == b.upright
    }

    /// Checks the values.
    package func validate() throws {
        guard width >= PreviewLayout.minimumWidth, width <= PreviewLayout.maximumWidth else {
            throw RGBDError(.invalidArgument, "the sheet width must be between \(PreviewLayout.minimumWidth) and \(PreviewLayout.maximumWidth) pixels, not \(width)")
        }
        guard minDepth.isFinite, minDepth >= 0 else { throw RGBDError(.invalidArgument, "the minimum depth must be at least 0") }
        if let maxDepth, !(maxDepth.isFinite && maxDepth > minDepth) {
            throw RGBDError(.invalidArgument, "the maximum depth must be finite and greater than the minimum (\(minDepth) m)")
        }
        guard flyingPixelStep > 0, flyingPixelStep.isFinite else {
            throw RGBDError(.invalidArgument, "the flying-pixel step must be positive")
        }
    }
}

/// `rgbd preview`'s sheet: one picture of a capture, its lens, its depth and its point
/// cloud (see `PreviewPanel`), with a header of file names, sizes, intrinsics and the
/// lens table. Raster panels are rgbd's own; text, lines and the colorbar are cairo's.
package enum PreviewSheet {
    /// The color of depth pixels without depth (holes).
    package static let holeColor: (UInt8, UInt8, UInt8) = (96, 96, 100)
    /// The color of flying-pixel candidates in the cloud panels.
    package static let flyingPixelColor: (UInt8, UInt8, UInt8) = (255, 0, 220)
    /// The background of the sheet and of the cloud panels.
    package static let background: (UInt8, UInt8, UInt8) = (22, 23, 27)

    static let textColor = Canvas.Color(bytes: 232, 232, 236)
    static let dimTextColor = Canvas.Color(bytes: 160, 162, 172)
    static let gridColor = Canvas.Color(bytes: 255, 212, 0)

    /// Quarter turns clockwise the sheet of `capture` shows its images turned by: the
    /// photo's orientation with `options.upright` (0 for a mirroring one), else 0.
    package static func turns(_ capture: Capture, options: PreviewOptions) -> Int {
        let orientation = options.upright ? capture.metadata.orientation : .asStored
        return orientation.mirrored ? 0 : orientation.clockwiseQuarterTurns
    }

    /// The layout of the sheet of `capture`: its panels have the aspect of the color image
    /// as shown (turned upright with `options.upright`).
    package static func layout(_ capture: Capture, options: PreviewOptions) throws -> PreviewLayout {
        let odd = turns(capture, options: options) % 2 == 1
        let color = capture.color
        return try PreviewLayout(width: options.width, colorWidth: odd ? color.height : color.width,
                                 colorHeight: odd ? color.width : color.height)
    }

    /// The sheet of `capture` (its size is `layout(_:options:)`'s).
    ///
    /// With `options.upright`, everything is computed as stored (where the lens model
    /// lives), each raster panel at the size that turned fills its panel, then turned; the
    /// clouds are the turned depth map's with the turned intrinsics (the stored cloud turned
    /// about the optical axis), and the overlays follow the turned panels.
    package static func render(_ capture: Capture, options: PreviewOptions = PreviewOptions(),
                              timings: StageTimings? = nil) throws -> ColorImage {
        try options.validate()
        let color = capture.color, depth = capture.depth
        let turns = turns(capture, options: options)
        let layout = try layout(capture, options: options)
        // The panels' size as stored: turned, the layout's.
        let (pw, ph) = turns % 2 == 1 ? (layout.panelHeight, layout.panelWidth) : (layout.panelWidth, layout.panelHeight)
        let colorCalibration = capture.calibration.scaled(toWidth: color.width, height: color.height)
        let depthCalibration = capture.calibration.scaled(toWidth: depth.width, height: depth.height)
        let rectifier = options.rectifier

        // The color at about twice the panel's size (averaged), and the lens scaled to it:
        // both color panels come from it at a fraction of the full image's cost.
        let (captured, rectified) = timings.measure("preview color panels") { () -> (ColorImage, ColorImage) in
            let workWidth = min(color.width, 2 * pw), workHeight = min(color.height, 2 * ph)
            guard pw <= workWidth && ph <= workHeight else {
                return (resized(color, width: pw, height: ph),
                        resized(rectifier.rectify(color, distortion: colorCalibration.distortion), width: pw, height: ph))
            }
            let work = workWidth == color.width && workHeight == color.height
                ? color : color.areaAverage(toWidth: workWidth, height: workHeight)
            let lens = capture.calibration.scaled(toWidth: workWidth, height: workHeight).distortion
            return (work.areaAverage(toWidth: pw, height: ph),
                    rectifier.rectifyAreaAveraged(work, distortion: lens, toWidth: pw, height: ph))
        }
        let rectifiedDepth = timings.measure("rectify depth") {
            rectifier.rectify(depth, distortion: depthCalibration.distortion)
        }
        let statistics = timings.measure("preview depth statistics") { PreviewDepthRange(rectifiedDepth) }
        let scale = DepthScale(minimum: options.minDepth,
                               maximum: options.maxDepth ?? statistics.automaticMaximum(above: options.minDepth))
        let depthPanel = timings.measure("preview depth panel") {
            depthImage(rectifiedDepth, scale: scale, width: pw, height: ph)
        }
        let overlay = timings.measure("preview overlay panel") {
            overlayImage(rectified, depthColors: depthPanel, depth: rectifiedDepth, step: options.flyingPixelStep)
        }
        let shownRectified = rectified.rotated(clockwiseQuarterTurns: turns)
        let clouds = timings.measure("preview cloud panels") {
            CloudRenderer(depth: rectifiedDepth.rotated(clockwiseQuarterTurns: turns),
                          intrinsics: depthCalibration.intrinsics.rotated(clockwiseQuarterTurns: turns),
                          colors: shownRectified, flyingPixelStep: options.flyingPixelStep,
                          pivotDepth: statistics.median)
        }
        let front = timings.measure("preview cloud panels") {
            clouds.render(width: layout.panelWidth, height: layout.panelHeight, yawDegrees: 0, pitchDegrees: 0)
        }
        let threeQuarter = timings.measure("preview cloud panels") {
            clouds.render(width: layout.panelWidth, height: layout.panelHeight, yawDegrees: -32, pitchDegrees: 20)
        }
        let lens = LensSummary(colorCalibration.distortion)
        // Tags and placemarks need the full-size rectified capture: made once, when asked for.
        var fullRectified: RectifiedCapture?
        func full() -> RectifiedCapture {
            if let fullRectified { return fullRectified }
            let made = capture.rectified(with: rectifier)
            fullRectified = made
            return made
        }
        let tags = options.tags.map { tagOptions in
            timings.measure("preview tags") { () -> (CaptureTags, Intrinsics) in
                (CaptureTags.find(in: full(), options: tagOptions), full().colorIntrinsics)
            }
        }
        let places = options.placemarks.isEmpty ? nil : timings.measure("preview placemarks") { () -> ([PlacemarkSighting], Intrinsics) in
            // Located in the shown camera (turned intrinsics, depth and gravity), so that a
            // place's column is across the shown panel.
            let rectifiedCapture = full()
            let intrinsics = rectifiedCapture.colorIntrinsics.rotated(clockwiseQuarterTurns: turns)
            return (sightings(options.placemarks, geo: turned(capture.metadata.geo, clockwiseQuarterTurns: turns),
                              intrinsics: intrinsics,
                              depth: rectifiedCapture.depth.rotated(clockwiseQuarterTurns: turns)),
                    intrinsics)
        }

        return try timings.measure("preview draw sheet") {
            let canvas = try Canvas(width: layout.width, height: layout.height,
                                    background: Canvas.Color(bytes: background.0, background.1, background.2))
            for (panel, image) in [(PreviewPanel.captured, captured.rotated(clockwiseQuarterTurns: turns)),
                                   (.rectified, shownRectified), (.depth, depthPanel.rotated(clockwiseQuarterTurns: turns)),
                                   (.overlay, overlay.rotated(clockwiseQuarterTurns: turns)), (.cloudFront, front.image),
                                   (.cloudThreeQuarter, threeQuarter.image)] {
                let (x, y) = layout.origin(of: panel)
                canvas.blit(image, x: x, y: y)
            }
            drawHeader(canvas, layout: layout, capture: capture, lens: lens, turns: turns)
            drawDistortion(canvas, layout: layout, lens: lens, colorWidth: color.width, colorHeight: color.height,
                           turns: turns)
            drawTitles(canvas, layout: layout, capture: capture, statistics: statistics, lens: lens,
                       front: front, threeQuarter: threeQuarter, turns: turns)
            drawColorbar(canvas, layout: layout, scale: scale)
            if let (found, intrinsics) = tags {
                drawTags(canvas, layout: layout, tags: found.tags, intrinsics: intrinsics, turns: turns)
            }
            if let (sightings, intrinsics) = places {
                drawPlacemarks(canvas, layout: layout, sightings: sightings, intrinsics: intrinsics)
            }
            return canvas.image()
        }
    }

    /// The AR overlay on the rectified panel: each tag's outline, its ID, and its axes
    /// projected from its pose (x red, y green, z blue, half the tag's edge long; z points
    /// into the tag, so it is drawn from the centre away from the viewer).
    /// `intrinsics` are the stored rectified color's, which the tags were found in; the
    /// panel shows it turned `turns` quarter turns clockwise.
    static func drawTags(_ canvas: Canvas, layout: PreviewLayout, tags: [TagPose], intrinsics k: Intrinsics,
                         turns: Int = 0) {
        let (ox, oy) = layout.origin(of: .rectified)
        let placement = layout.placement(of: .rectified, imageWidth: k.width, imageHeight: k.height, turns: turns)
        // Pixel centres at integers in the image: the panel point of full-image point p.
        func panel(_ p: SIMD2<Double>) -> SIMD2<Double> { placement.point(p + 0.5) }
        let t = layout.textScale
        canvas.clipped(x: Double(ox), y: Double(oy), width: Double(layout.panelWidth), height: Double(layout.panelHeight)) {
            for tag in tags {
                let outline = tag.detection.corners.map(panel)
                canvas.polyline(outline + [outline[0]], color: Canvas.Color(bytes: 0, 230, 255), lineWidth: 2 * t)
                let centre = tag.pose.apply(.zero)
                for (axis, color) in [(SIMD3(1.0, 0, 0), Canvas.Color(bytes: 255, 60, 50)),
                                      (SIMD3(0.0, 1, 0), Canvas.Color(bytes: 60, 220, 70)),
                                      (SIMD3(0.0, 0, 1), Canvas.Color(bytes: 70, 120, 255))] {
                    let end = tag.pose.apply(axis * (tag.size / 2))
                    guard centre.z > 0, end.z > 0 else { continue }
                    canvas.polyline([panel(k.project(centre)), panel(k.project(end))], color: color, lineWidth: 2.5 * t)
                }
                let label = panel(tag.detection.center) + SIMD2(0, -8 * t)
                canvas.text("\(tag.detection.id)", x: label.x, y: label.y, size: 13 * t, color: Canvas.Color(bytes: 255, 255, 255),
                            bold: true, alignment: .center)
            }
        }
    }

    /// Where `places` lie in the rectified photo of intrinsics `k`, with its rectified depth
    /// (nearest pixel, pixel centres at integers at both sizes) to tell which are hidden.
    static func sightings(_ places: [Placemark], geo: GeoTag?, intrinsics k: Intrinsics, depth: DepthMap)
        -> [PlacemarkSighting] {
        let sx = Double(depth.width) / Double(k.width), sy = Double(depth.height) / Double(k.height)
        return PlacemarkSighting.locate(places, geo: geo, intrinsics: k) { u, v in
            let x = Int(((u + 0.5) * sx - 0.5).rounded()), y = Int(((v + 0.5) * sy - 0.5).rounded())
            guard x >= 0, y >= 0, x < depth.width, y < depth.height else { return nil }
            let z = depth[x, y]
            return DepthMap.isDepth(z) ? Double(z) : nil
        }
    }

    /// `geo` seen from the camera turned `turns` quarter turns clockwise about its optical
    /// axis (`Intrinsics.cameraRotation`): the gravity vector turned with the camera axes
    /// (place and heading do not change).
    static func turned(_ geo: GeoTag?, clockwiseQuarterTurns turns: Int) -> GeoTag? {
        guard var geo, let gravity = geo.gravity, turns % 4 != 0 else { return geo }
        let rows = Intrinsics.cameraRotation(clockwiseQuarterTurns: turns)
        let down = SIMD3((rows[0] * gravity.down).sum(), (rows[1] * gravity.down).sum(), (rows[2] * gravity.down).sum())
        // GeoTag.Gravity's down is normalize(−a_y, −a_x, −a_z) of the reading a.
        geo.gravity = GeoTag.Gravity(acceleration: -SIMD3(down.y, down.x, down.z) * gravity.magnitude)
        return geo
    }

    /// The placemark color: a marker line and the label's box.
    static let placemarkColor = Canvas.Color(bytes: 255, 70, 190)

    /// The geolocation overlay on the rectified panel: each place in view and not hidden by
    /// the depth map gets a vertical line at its image column (down to its row, with a
    /// dot, when its altitude and the photo's gravity give one; the whole panel height
    /// otherwise) and a label at the top: its name and its distance.
    static func drawPlacemarks(_ canvas: Canvas, layout: PreviewLayout, sightings: [PlacemarkSighting], intrinsics k: Intrinsics) {
        let (ox, oy) = layout.origin(of: .rectified)
        let sx = Double(layout.panelWidth) / Double(k.width), sy = Double(layout.panelHeight) / Double(k.height)
        let t = layout.textScale
        let top = Double(oy), bottom = Double(oy + layout.panelHeight)
        canvas.clipped(x: Double(ox), y: top, width: Double(layout.panelWidth), height: Double(layout.panelHeight)) {
            // Nearest last, so that it is drawn over the farther ones; labels step down to
            // stay apart.
            let shown = sightings.filter { $0.inView == true && $0.occluded != true && $0.column != nil }
                .sorted { ($0.distance ?? 0) > ($1.distance ?? 0) }
            for (i, sighting) in shown.enumerated() {
                guard let column = sighting.column else { continue }
                let x = Double(ox) + (column + 0.5) * sx
                let row = sighting.row.map { Double(oy) + ($0 + 0.5) * sy }
                let lineEnd = row.map { min(max($0, top), bottom) } ?? bottom
                canvas.polyline([SIMD2(x, top), SIMD2(x, lineEnd)], color: placemarkColor, lineWidth: 1.5 * t,
                                dash: row == nil ? [4 * t, 3 * t] : [])
                if let row, row >= top, row <= bottom {
                    canvas.disc(center: SIMD2(x, row), radius: 3.5 * t, color: placemarkColor)
                }
                let distance = sighting.distance.map { $0 >= 1000 ? DecimalText.fixed($0 / 1000, 1) + " km" : DecimalText.fixed($0, 0) + " m" }
                let label = sighting.place.name + (distance.map { "  " + $0 } ?? "")
                let size = 12 * t
                let width = canvas.textWidth(label, size: size, bold: true) + 8 * t
                let y = top + (6 + Double(i % 6) * 18) * t
                let left = min(max(x - width / 2, Double(ox)), Double(ox + layout.panelWidth) - width)
                canvas.fill(x: left, y: y, width: width, height: 16 * t, color: placemarkColor)
                canvas.text(label, x: left + width / 2, y: y + 12 * t, size: size, color: Canvas.Color(bytes: 255, 255, 255),
                            bold: true, alignment: .center)
            }
        }
    }

    // MARK: - Raster panels

    /// `image` at `width × height`: averaged over footprints when smaller, bilinear when larger.
    static func resized(_ image: ColorImage, width: Int, height: Int) -> ColorImage {
        if width <= image.width && height <= image.height {
            return image.areaAverage(toWidth: width, height: height)
        }
        var out = ColorImage(width: width, height: height, channels: 3, repeating: 0)
        let sx = Double(image.width) / Double(width), sy = Double(image.height) / Double(height)
        for y in 0..<height {
            let fy = min(max((Double(y) + 0.5) * sy - 0.5, 0), Double(image.height - 1))
            let y0 = Int(fy), y1 = min(y0 + 1, image.height - 1), wy = fy - Double(y0)
            for x in 0..<width {
                let fx = min(max((Double(x) + 0.5) * sx - 0.5, 0), Double(image.width - 1))
                let x0 = Int(fx), x1 = min(x0 + 1, image.width - 1), wx = fx - Double(x0)
                for c in 0..<3 {
                    let top = Double(image[x0, y0, c]) * (1 - wx) + Double(image[x1, y0, c]) * wx
                    let bottom = Double(image[x0, y1, c]) * (1 - wx) + Double(image[x1, y1, c]) * wx
                    out[x, y, c] = UInt8((top * (1 - wy) + bottom * wy).rounded())
                }
            }
        }
        return out
    }

    /// The depth pixel a panel pixel shows (nearest: the one whose footprint holds its center).
    @inline(__always)
    static func source(_ x: Int, _ count: Int, over panel: Int) -> Int {
        min(count - 1, (2 * x + 1) * count / (2 * panel))
    }

    /// The depth map at `width × height` (nearest), in Turbo over `scale`, holes in `holeColor`.
    static func depthImage(_ depth: DepthMap, scale: DepthScale, width: Int, height: Int) -> ColorImage {
        let columns = (0..<width).map { source($0, depth.width, over: width) }
        var samples = [UInt8](repeating: 0, count: width * height * 3)
        samples.withUnsafeMutableBufferPointer { out in
            depth.samples.withUnsafeBufferPointer { d in
                for y in 0..<height {
                    let row = source(y, depth.height, over: height) * depth.width
                    var o = y * width * 3
                    for x in 0..<width {
                        let z = d[row + columns[x]]
                        let (r, g, b) = z.isFinite && z > 0 ? Colormap.turbo(scale.position(z)) : holeColor
                        out[o] = r; out[o + 1] = g; out[o + 2] = b
                        o += 3
                    }
                }
            }
        }
        return ColorImage(width: width, height: height, channels: 3, samples: samples)
    }

    /// Depth over color: the rectified color in gray, the depth colors blended over it
    /// (45 %), and white lines where the depth jumps by more than `step` of itself between
    /// neighboring panel pixels.
    static func overlayImage(_ color: ColorImage, depthColors: ColorImage, depth: DepthMap, step: Float) -> ColorImage {
        let width = color.width, height = color.height
        let columns = (0..<width).map { source($0, depth.width, over: width) }
        var out = ColorImage(width: width, height: height, channels: 3, repeating: 0)
        func z(_ x: Int, _ y: Int) -> Float { depth.samples[source(y, depth.height, over: height) * depth.width + columns[x]] }
        func jump(_ a: Float, _ b: Float) -> Bool {
            a.isFinite && b.isFinite && abs(a - b) > step * min(a, b)
        }
        for y in 0..<height {
            for x in 0..<width {
                let gray = 0.299 * Float(color[x, y, 0]) + 0.587 * Float(color[x, y, 1]) + 0.114 * Float(color[x, y, 2])
                let here = z(x, y)
                // Both sides of a jump: lines two pixels wide.
                let edge = (x + 1 < width && jump(here, z(x + 1, y))) || (y + 1 < height && jump(here, z(x, y + 1)))
                    || (x > 0 && jump(here, z(x - 1, y))) || (y > 0 && jump(here, z(x, y - 1)))
                for c in 0..<3 {
                    let value: Float
                    if edge {
                        value = 255
                    } else if here.isFinite && here > 0 {
                        value = 0.55 * gray + 0.45 * Float(depthColors[x, y, c])
                    } else {
                        value = 0.6 * gray
                    }
                    out[x, y, c] = UInt8(min(255, max(0, value.rounded())))
                }
            }
        }
        return out
    }

    // MARK: - Drawing

    static func format(_ value: Double, decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (abs(value) * scale).rounded()
        let whole = Int(rounded / scale)
        var text = "\(value < 0 && rounded > 0 ? "−" : "")\(whole)"
        if decimals > 0 {
            let fraction = Int(rounded) - whole * Int(scale)
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: decimals - digits.count) + digits
        }
        return text
    }

    /// The header's lines of labelled values: with `turns`, the sizes and intrinsics of the
    /// images as shown (turned) and how they were turned (the reference size and the
    /// distortion center stay the calibration's, as stored).
    package static func headerLines(capture: Capture, lens: LensDistortion, turns: Int = 0) -> [[(String, String)]] {
        let calibration = capture.calibration
        let reference = calibration.referenceSize
        let c = calibration.scaled(toWidth: capture.color.width, height: capture.color.height).intrinsics
            .rotated(clockwiseQuarterTurns: turns)
        let d = calibration.scaled(toWidth: capture.depth.width, height: capture.depth.height).intrinsics
            .rotated(clockwiseQuarterTurns: turns)
        func k(_ i: Intrinsics) -> String {
            "fx \(format(i.fx, decimals: 2))  fy \(format(i.fy, decimals: 2))  cx \(format(i.cx, decimals: 2))  cy \(format(i.cy, decimals: 2))"
        }
        let summary = LensSummary(lens)
        let inverse = calibration.inverseLookupTable.count
        return [
            [("files", "\(Path.lastComponent(capture.jsonPath))  +  \(Path.lastComponent(capture.imagePath))"),
             ("color", "\(c.width)×\(c.height)"),
             ("depth", "\(d.width)×\(d.height)"),
             ("reference", "\(reference.width)×\(reference.height)")]
                + (turns == 0 ? [] : [("upright", "turned \(90 * turns)° clockwise (EXIF \(capture.metadata.orientation.exifValue))")]),
            [("color intrinsics", k(c)), ("depth intrinsics", k(d))],
            [("lens table", "\(summary.tableCount) entries, \(summary.signDescription)"),
             ("inverse table", inverse > 0 ? "\(inverse) entries" : "none"),
             ("distortion center", "(\(format(calibration.distortionCenter.x, decimals: 1)), \(format(calibration.distortionCenter.y, decimals: 1))) px at reference")],
        ]
    }

    static func drawHeader(_ canvas: Canvas, layout: PreviewLayout, capture: Capture, lens: LensSummary, turns: Int = 0) {
        let t = layout.textScale
        let x = Double(layout.margin), right = Double(layout.width - layout.margin)
        var y = Double(layout.margin) + 21 * t
        canvas.text("\(capture.stem)  ·  rgbd preview", x: x, y: y, size: 21 * t, color: textColor, bold: true)
        canvas.text("rgbd \(RGBDVersion.string)", x: right, y: y, size: 12 * t, color: dimTextColor, alignment: .right)
        let lines = headerLines(capture: capture, lens: lens.distortion, turns: turns)
        y += 8 * layout.scale
        let size = 13 * t
        for line in lines {
            y += 19 * t
            var cursor = x
            for (label, value) in line {
                cursor += canvas.text(label + "  ", x: cursor, y: y, size: size, color: dimTextColor)
                cursor += canvas.text(value, x: cursor, y: y, size: size, color: textColor)
                cursor += 26 * t
            }
        }
    }

    /// The grid of straight lines of the rectified image as the lens bends them, over the
    /// captured color, the bending multiplied by `lens.exaggeration`; the distortion
    /// center as a cross.
    ///
    /// The captured panel shows the photo turned `turns` quarter turns clockwise; the grid
    /// is computed as stored and turned with it.
    static func drawDistortion(_ canvas: Canvas, layout: PreviewLayout, lens: LensSummary, colorWidth: Int,
                               colorHeight: Int, turns: Int = 0) {
        let (ox, oy) = layout.origin(of: .captured)
        let placement = layout.placement(of: .captured, imageWidth: colorWidth, imageHeight: colorHeight, turns: turns)
        let w = Double(colorWidth), h = Double(colorHeight)
        let t = layout.textScale
        func panel(_ p: SIMD2<Double>) -> SIMD2<Double> { placement.point(p) }
        func bent(_ p: SIMD2<Double>) -> SIMD2<Double> {
            panel(p + lens.exaggeration * (lens.distortion.apply(to: p) - p))
        }
        canvas.clipped(x: Double(ox), y: Double(oy), width: Double(layout.panelWidth), height: Double(layout.panelHeight)) {
            let columns = 8, rows = 6, samples = 64
            var lines: [[SIMD2<Double>]] = []
            for i in 0...columns {
                let x = w * Double(i) / Double(columns)
                lines.append((0...samples).map { SIMD2(x, h * Double($0) / Double(samples)) })
            }
            for j in 0...rows {
                let y = h * Double(j) / Double(rows)
                lines.append((0...samples).map { SIMD2(w * Double($0) / Double(samples), y) })
            }
            for line in lines {
                canvas.polyline(line.map(panel), color: Canvas.Color(1, 1, 1, alpha: 0.35), lineWidth: max(1, 1 * t),
                                dash: [4 * t, 4 * t])
            }
            for line in lines {
                canvas.polyline(line.map(bent), color: gridColor, lineWidth: max(1.2, 1.6 * t))
            }
            let c = panel(lens.distortion.center)
            let arm = 7 * t
            canvas.polyline([c - SIMD2(arm, 0), c + SIMD2(arm, 0)], color: gridColor, lineWidth: 2 * t)
            canvas.polyline([c - SIMD2(0, arm), c + SIMD2(0, arm)], color: gridColor, lineWidth: 2 * t)
        }
    }

    /// The rectified depth panel's caption: the depth range and the holes the panel
    /// shows in gray, those of the rectified depth map (not the captured one, which
    /// `rgbd info` counts), as a pixel count and a percentage that is never rounded to 0
    /// or 100 when there are holes or depths.
    static func depthCaption(_ statistics: PreviewDepthRange) -> String {
        let coverage = statistics.coverage
        guard coverage.validCount > 0 else { return "no depth at all" }
        let percent = coverage.holeFraction * 100
        var shown = format(percent, decimals: 1)
        if coverage.holeCount > 0 && shown == "0.0" { shown = "< 0.1" }
        if coverage.holeCount > 0 && shown == "100.0" { shown = "> 99.9" }
        let range = "\(format(Double(statistics.minimum), decimals: 2))–\(format(Double(statistics.maximum), decimals: 2)) m"
        return "\(range) · rectified holes (gray) \(coverage.holeCount) px, \(shown) %"
    }

    static func drawTitles(_ canvas: Canvas, layout: PreviewLayout, capture: Capture, statistics: PreviewDepthRange,
                           lens: LensSummary, front: CloudRenderer.View, threeQuarter: CloudRenderer.View,
                           turns: Int = 0) {
        let shown = turns % 2 == 1 ? (capture.color.height, capture.color.width) : (capture.color.width, capture.color.height)
        let t = layout.textScale
        let range = depthCaption(statistics)
        let largest = format(lens.largestDisplacement, decimals: 1)
        let titles: [PreviewPanel: (title: String, note: String, caption: String)] = [
            .captured: ("Captured color + lens distortion", "max \(largest) px",
                        lens.largestDisplacement < 0.05
                            ? "no measurable distortion"
                            : "yellow: straight lines as the lens bends them, ×\(format(lens.exaggeration, decimals: 0)); dashed: straight"),
            .rectified: ("Rectified color", "\(shown.0)×\(shown.1)", "ideal pinhole image (lens removed)"),
            .depth: ("Rectified depth", range, ""),
            .overlay: ("Depth over color", "", "depth colors blended over gray color; white: depth edges"),
            .cloudFront: ("Point cloud, front", "\(front.points) points", ""),
            .cloudThreeQuarter: ("Point cloud, three-quarter", "\(threeQuarter.flying) flying-pixel candidates", ""),
        ]
        for panel in PreviewPanel.allCases {
            guard let entry = titles[panel] else { continue }
            let (x, y) = layout.origin(of: panel)
            let baseline = Double(y) - 8 * t
            let titleWidth = canvas.text(entry.title, x: Double(x), y: baseline, size: 14.5 * t, color: textColor, bold: true)
            if !entry.note.isEmpty {
                let size = fitted(canvas, entry.note, size: 12 * t,
                                  room: Double(layout.panelWidth) - titleWidth - 10 * t)
                canvas.text(entry.note, x: Double(x + layout.panelWidth), y: baseline, size: size,
                            color: dimTextColor, alignment: .right)
            }
            var caption = entry.caption
            if panel == .cloudFront || panel == .cloudThreeQuarter {
                caption = "colored by the rectified color; magenta: flying-pixel candidates"
            }
            if !caption.isEmpty {
                let size = fitted(canvas, caption, size: 11.5 * t, room: Double(layout.panelWidth))
                canvas.text(caption, x: Double(x), y: Double(y + layout.panelHeight) + 17 * t, size: size,
                            color: dimTextColor)
            }
            canvas.stroke(x: Double(x) - 0.5, y: Double(y) - 0.5, width: Double(layout.panelWidth) + 1,
                          height: Double(layout.panelHeight) + 1, color: Canvas.Color(1, 1, 1, alpha: 0.18), lineWidth: 1)
        }
    }

    /// `size`, or smaller so that `text` fits in `room` pixels (down to 70 %).
    static func fitted(_ canvas: Canvas, _ text: String, size: Double, room: Double) -> Double {
        let width = canvas.textWidth(text, size: size)
        guard width > room, room > 0 else { return size }
        return max(size * 0.7, size * room / width)
    }

    static func drawColorbar(_ canvas: Canvas, layout: PreviewLayout, scale: DepthScale) {
        drawColorbar(canvas, bar: layout.colorbar, textScale: layout.textScale, scale: scale)
    }

    /// A Turbo colorbar over `scale` in the rectangle `bar`, with ticks and labels in
    /// meters below it and the unit after it.
    static func drawColorbar(_ canvas: Canvas, bar: (x: Int, y: Int, width: Int, height: Int), textScale t: Double,
                             scale: DepthScale) {
        var strip = ColorImage(width: bar.width, height: bar.height, channels: 3, repeating: 0)
        for x in 0..<bar.width {
            let (r, g, b) = Colormap.turbo(bar.width > 1 ? Float(x) / Float(bar.width - 1) : 0)
            for y in 0..<bar.height { strip[x, y, 0] = r; strip[x, y, 1] = g; strip[x, y, 2] = b }
        }
        canvas.blit(strip, x: bar.x, y: bar.y)
        let span = Double(scale.maximum - scale.minimum)
        let step = niceStep(span / 5)
        var value = (Double(scale.minimum) / step).rounded(.up) * step
        let labelY = Double(bar.y + bar.height) + 13 * t
        while value <= Double(scale.maximum) + step * 1e-6 {
            let x = Double(bar.x) + (value - Double(scale.minimum)) / span * Double(bar.width - 1) + 0.5
            canvas.polyline([SIMD2(x, Double(bar.y + bar.height)), SIMD2(x, Double(bar.y + bar.height) + 3 * t)],
                            color: dimTextColor, lineWidth: 1)
            canvas.text(format(value, decimals: decimals(ofStep: step)), x: x, y: labelY, size: 11 * t, color: textColor,
                        alignment: .center)
            value += step
        }
        canvas.text("m", x: Double(bar.x + bar.width) + 8 * t, y: Double(bar.y + bar.height) - 1, size: 11 * t,
                    color: textColor)
    }

    /// 1, 2, 2.5 or 5 times a power of ten, at least `rough`.
    /// The decimals that show every multiple of `step` exactly (a `niceStep`: 1, 2, 2.5 or
    /// 5 times a power of ten): 0.25 needs 2 ("0.75", not "0.8"), 2.5 needs 1, 5 none.
    static func decimals(ofStep step: Double) -> Int {
        guard step > 0, step.isFinite else { return 0 }
        var decimals = 0
        var scaled = step
        while decimals < 9, abs(scaled - scaled.rounded()) > 1e-9 * max(1, scaled) {
            decimals += 1
            scaled *= 10
        }
        return decimals
    }

    static func niceStep(_ rough: Double) -> Double {
        guard rough > 0, rough.isFinite else { return 1 }
        var power = 1.0
        while power > rough { power /= 10 }
        while power * 10 <= rough { power *= 10 }
        for factor in [1.0, 2, 2.5, 5, 10] where power * factor >= rough { return power * factor }
        return power * 10
    }
}

/// The color scale of depth: `minimum` at the bottom of the colormap, `maximum` at the top.
package struct DepthScale: Equatable, Sendable {
    /// Meters at colormap position 0.
    package var minimum: Float
    /// Meters at colormap position 1.
    package var maximum: Float

    /// The colormap position of `z` (not clamped).
    @inline(__always)
    package func position(_ z: Float) -> Float { (z - minimum) / (maximum - minimum) }
}

/// What the sheet's depth colors start from: a depth map's holes (`DepthCoverage`),
/// range, and median and 99th percentile from a histogram (approximate, unlike `rgbd
/// info`'s exact `CaptureInfo.DepthStatistics`).
struct PreviewDepthRange {
    let coverage: DepthCoverage
    var minimum: Float = .infinity
    var maximum: Float = -.infinity
    /// Median and 99th percentile (within a 1/1024 of the range).
    var median: Float = 1
    var p99: Float = 1

    init(_ depth: DepthMap) {
        coverage = depth.coverage
        for z in depth.samples where DepthMap.isDepth(z) {
            minimum = min(minimum, z)
            maximum = max(maximum, z)
        }
        let count = coverage.validCount
        guard count > 0 else { return }
        let bins = 1024
        var histogram = [Int](repeating: 0, count: bins)
        let span = max(maximum - minimum, 1e-6)
        for z in depth.samples where DepthMap.isDepth(z) {
            histogram[min(bins - 1, Int((z - minimum) / span * Float(bins)))] += 1
        }
        func percentile(_ q: Double) -> Float {
            let target = Int((Double(count) * q).rounded(.up))
            var seen = 0
            for (i, n) in histogram.enumerated() {
                seen += n
                if seen >= target { return minimum + span * (Float(i) + 1) / Float(bins) }
            }
            return maximum
        }
        median = min(maximum, percentile(0.5))
        p99 = min(maximum, percentile(0.99))
    }

    /// The top of the automatic color scale: the 99th percentile rounded up to a step of
    /// a tenth of it (at least `minimum` plus a step).
    func automaticMaximum(above minimum: Float) -> Float {
        guard coverage.validCount > 0 else { return minimum + 1 }
        let step = Float(PreviewSheet.niceStep(Double(max(p99, 1e-3)) / 10))
        let top = (p99 / step).rounded(.up) * step
        return max(top, minimum + step)
    }
}

/// What the sheet says about the lens: the table's length and sign, and the largest
/// displacement between where a rectified pixel is and where the lens puts it.
struct LensSummary {
    let distortion: LensDistortion
    let tableCount: Int
    let signDescription: String
    /// Pixels of the captured color image.
    let largestDisplacement: Double
    /// How much the grid's bending is multiplied by to be visible.
    let exaggeration: Double

    init(_ distortion: LensDistortion) {
        self.distortion = distortion
        tableCount = distortion.table.count
        let low = distortion.table.min() ?? 0, high = distortion.table.max() ?? 0
        let range = "\(PreviewSheet.format(Double(low), decimals: 4)) to \(PreviewSheet.format(Double(high), decimals: 4))"
        if low >= 0 && high > 0 {
            signDescription = "≥ 0 (\(range)): points move outward, pincushion"
        } else if high <= 0 && low < 0 {
            signDescription = "≤ 0 (\(range)): points move inward, barrel"
        } else if low == 0 && high == 0 {
            signDescription = "all 0: no distortion"
        } else {
            signDescription = "mixed signs (\(range))"
        }
        var largest = 0.0
        let w = Double(distortion.width), h = Double(distortion.height)
        for j in 0...30 {
            for i in 0...40 {
                let p = SIMD2(w * Double(i) / 40, h * Double(j) / 30)
                let d = distortion.apply(to: p) - p
                largest = max(largest, (d * d).sum().squareRoot())
            }
        }
        largestDisplacement = largest
        // Bend the grid so that the largest displacement shows as about 4 % of the width.
        let wanted = 0.04 * w
        exaggeration = largest > 0.05 && largest < wanted
            ? max(1, PreviewSheet.niceStep(wanted / largest / 2.5)) : 1
    }
}
