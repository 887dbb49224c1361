/// What `ScenePreviewSheet.render` draws.
package struct ScenePreviewOptions: Equatable, Sendable {
    /// Sheet width in pixels (`PreviewLayout.minimumWidth ... maximumWidth`).
    package var width: Int = PreviewLayout.defaultWidth
    /// Frames in the strip, spread evenly over the scan (1 ... `ScenePreviewLayout.maximumFrames`;
    /// fewer when the scan has fewer).
    package var frames: Int = 5
    /// Depth at the bottom of the strip's color scale, meters.
    package var minDepth: Float = 0
    /// Depth at the top of the strip's color scale, meters; nil: chosen from the strip's
    /// depth maps (their 99th percentile, rounded up).
    package var maxDepth: Float?
    /// The merged cloud's settings (`SceneCloud`): by default 2 cm cells, high confidence,
    /// and at most `maxCloudFrames` frames.
    package var cloud: SceneCloudOptions = {
        var options = SceneCloudOptions()
        options.voxel = 0.02
        return options
    }()
    /// The most frames merged into the cloud: a longer scan takes every N-th frame
    /// (N the smallest that keeps to this; a larger `cloud.every` wins).
    package var maxCloudFrames = 300

    /// The defaults: 1600 pixels wide, 5 frames, automatic depth scale from 0 m.
    package init() {}

    /// Checks the values.
    package func validate() throws {
        guard width >= PreviewLayout.minimumWidth, width <= PreviewLayout.maximumWidth else {
            throw RGBDError(.invalidArgument, "the sheet width must be between \(PreviewLayout.minimumWidth) and \(PreviewLayout.maximumWidth) pixels, not \(width)")
        }
        guard frames >= 1, frames <= ScenePreviewLayout.maximumFrames else {
            throw RGBDError(.invalidArgument, "the strip shows 1 to \(ScenePreviewLayout.maximumFrames) frames, not \(frames)")
        }
        guard minDepth.isFinite, minDepth >= 0 else { throw RGBDError(.invalidArgument, "the minimum depth must be at least 0") }
        if let maxDepth, !(maxDepth.isFinite && maxDepth > minDepth) {
            throw RGBDError(.invalidArgument, "the maximum depth must be finite and greater than the minimum (\(minDepth) m)")
        }
        guard maxCloudFrames >= 1 else { throw RGBDError(.invalidArgument, "the cloud needs at least one frame") }
        try cloud.validate()
    }

    /// The frame step the cloud uses for a scan of `count` frames.
    package func cloudStep(frames count: Int) -> Int {
        max(cloud.every, (count + maxCloudFrames - 1) / maxCloudFrames)
    }
}

/// `rgbd preview`'s sheet of a scan (a `Scene`): a header (path, app and layout, frames,
/// rate, duration, sizes, world; wrapped on a narrow sheet), the trajectory from above and
/// from the side framed on the camera path and its frustums (camera centres as a path, a
/// frustum per k-th camera, start and end marked, world axes and a 1-2-5 scale bar chosen
/// from the extent shown), the merged cloud (`SceneCloud`) from above framed on the cloud
/// and the path, with the path on it, and a strip of frames spread over the scan: color,
/// depth on one Turbo scale, confidence (no confidence row when the frames have no maps).
/// Frames are read as a stream: memory follows the cloud's occupied cells and the strip,
/// not the scan's length.
package enum ScenePreviewSheet {
    /// The start marker's color (the first camera); its label is lighter.
    package static let startColor: (UInt8, UInt8, UInt8) = (40, 210, 90)
    /// The end marker's color (the last camera); its label is lighter.
    package static let endColor: (UInt8, UInt8, UInt8) = (240, 60, 60)
    /// The camera path's color.
    package static let pathColor: (UInt8, UInt8, UInt8) = (110, 180, 255)
    /// The colors of ARKit's confidence levels 0 (low), 1 (medium) and 2 (high).
    package static let confidenceColors: [(UInt8, UInt8, UInt8)] = [(200, 40, 160), (245, 185, 30), (70, 150, 230)]
    /// Confidence tiles where the frame has no confidence map, and values above 2.
    package static let noConfidenceColor: (UInt8, UInt8, UInt8) = (60, 62, 70)

    static let frustumColor = Canvas.Color(bytes: 230, 230, 236, alpha: 0.55)
    /// The start label's color.
    package static let startLabelColor: (UInt8, UInt8, UInt8) = (160, 240, 180)
    /// The end label's color.
    package static let endLabelColor: (UInt8, UInt8, UInt8) = (255, 165, 165)

    /// The boxes of the "start" and "end" labels (`ScenePreviewPlacement.markerLabels`)
    /// for markers at sheet points `start` and `end` in a panel (top-left corner, size);
    /// `width` measures the labels' bold text.
    package static func markerLabels(start: SIMD2<Double>, end: SIMD2<Double>, textScale t: Double,
                                     panel: (origin: SIMD2<Double>, size: SIMD2<Double>),
                                     width: (String) -> Double) -> (start: ScenePreviewPlacement.Box, end: ScenePreviewPlacement.Box) {
        let height = 0.8 * 11.5 * t
        return ScenePreviewPlacement.markerLabels(
            start: start, end: end, radius: 6 * t, startSize: SIMD2(width("start"), height), endSize: SIMD2(width("end"), height),
            gap: 3 * t, bounds: ScenePreviewPlacement.Box(x: panel.origin.x, y: panel.origin.y, width: panel.size.x,
                                                          height: panel.size.y))
    }

    /// The sheet of `scene`. `progress` is called after each frame merged into the cloud
    /// (frames done, frames to do).
    package static func render(_ scene: Scene, options: ScenePreviewOptions = ScenePreviewOptions(),
                               progress: ((Int, Int) -> Void)? = nil) throws -> ColorImage {
        try options.validate()
        let frames = scene.frames
        let count = min(options.frames, frames.count)
        // The tiles' size; the rows and the header's lines, known once the frames are read,
        // do not change it.
        let tiles = try ScenePreviewLayout(width: options.width, frames: count, depthWidth: scene.depthSize.width,
                                           depthHeight: scene.depthSize.height, color: scene.colorSize != nil)

        // The merged cloud, streamed.
        var cloudOptions = options.cloud
        cloudOptions.every = options.cloudStep(frames: frames.count)
        let cloud = try SceneCloud.build(scene, options: cloudOptions, progress: progress)

        // The strip: small tiles kept, each frame dropped once read.
        let positions = (0..<count).map { count == 1 ? 0 : $0 * (frames.count - 1) / (count - 1) }
        var strip: [StripFrame] = []
        try scene.forEachFrame(positions, color: scene.colorSize != nil) { frame in
            strip.append(StripFrame(
                info: frame.info, depth: frame.depth,
                color: frame.color.map { PreviewSheet.resized($0, width: tiles.tileWidth, height: tiles.tileHeight) },
                confidence: frame.confidence.map { confidenceImage($0, width: tiles.tileWidth, height: tiles.tileHeight) }))
        }
        var all = [Float]()
        all.reserveCapacity(strip.reduce(0) { $0 + $1.depth.samples.count })
        for frame in strip { all += frame.depth.samples }
        let statistics = PreviewDepthRange(DepthMap(width: scene.depthSize.width, height: max(1, all.count / max(1, scene.depthSize.width)),
                                                    channels: 1, samples: all))
        let depthScale = DepthScale(minimum: options.minDepth,
                                    maximum: options.maxDepth ?? statistics.automaticMaximum(above: options.minDepth))

        let axes = SceneAxes(scene)
        let geometry = SceneGeometry(scene: scene, cloud: cloud, axes: axes)
        // A confidence row only when some frame of the strip has a map.
        let confidenceRow = strip.contains { $0.confidence != nil }
        let measure = try Canvas(width: 1, height: 1, background: Canvas.Color(0, 0, 0))
        let header = headerTexts(scene: scene, cloud: cloud, trajectoryLength: geometry.trajectoryLength, width: tiles.width,
                                 margin: tiles.margin, textScale: tiles.textScale) { measure.textWidth($0, size: $1, bold: $2) }
        let layout = try ScenePreviewLayout(width: options.width, frames: count, depthWidth: scene.depthSize.width,
                                            depthHeight: scene.depthSize.height, color: scene.colorSize != nil,
                                            confidence: confidenceRow, headerLines: header.lines)
        let above = geometry.fit(geometry.trajectoryFramed, right: axes.right, down: axes.forwardDown,
                                 width: layout.panelWidth, height: layout.panelHeight)
        let sideRight = geometry.sideAxis
        let side = geometry.fit(geometry.trajectoryFramed, right: sideRight, down: -axes.up,
                                width: layout.panelWidth, height: layout.panelHeight)
        let plan = geometry.fit(geometry.framed, right: axes.right, down: axes.forwardDown,
                                width: layout.panelWidth, height: layout.panelHeight)

        var points: [SIMD3<Float>] = [], packed: [UInt32] = []
        points.reserveCapacity(cloud.count)
        packed.reserveCapacity(cloud.count)
        for i in 0..<cloud.count {
            points.append(SIMD3(cloud.positions[3 * i], cloud.positions[3 * i + 1], cloud.positions[3 * i + 2]))
            let r = UInt32(cloud.colors[3 * i]), g = UInt32(cloud.colors[3 * i + 1]), b = UInt32(cloud.colors[3 * i + 2])
            packed.append(r << 16 | g << 8 | b)
        }
        if scene.colorSize == nil { packed = grayByHeight(points, up: SIMD3<Float>(axes.up)) }
        let pointSide = max(2, Int((cloudOptions.voxel * plan.view.scale).rounded(.up)))
        let cloudView = CloudRenderer(points: points, colors: packed)
            .render(width: layout.panelWidth, height: layout.panelHeight, plan: plan.view, side: pointSide)

        let canvas = try Canvas(width: layout.width, height: layout.height,
                                background: Canvas.Color(bytes: PreviewSheet.background.0, PreviewSheet.background.1,
                                                         PreviewSheet.background.2))
        let (cx, cy) = layout.origin(of: .cloudAbove)
        canvas.blit(cloudView.image, x: cx, y: cy)
        for frame in strip.enumerated() {
            if let color = frame.element.color, case let (x, y)? = layout.tile(column: frame.offset, row: .color) {
                canvas.blit(color, x: x, y: y)
            }
            if case let (x, y)? = layout.tile(column: frame.offset, row: .depth) {
                canvas.blit(PreviewSheet.depthImage(frame.element.depth, scale: depthScale, width: layout.tileWidth,
                                                    height: layout.tileHeight), x: x, y: y)
            }
            if case let (x, y)? = layout.tile(column: frame.offset, row: .confidence) {
                if let confidence = frame.element.confidence {
                    canvas.blit(confidence, x: x, y: y)
                } else {
                    let c = noConfidenceColor
                    canvas.fill(x: Double(x), y: Double(y), width: Double(layout.tileWidth), height: Double(layout.tileHeight),
                                color: Canvas.Color(bytes: c.0, c.1, c.2))
                    let note = ScenePreviewPlacement.fit("no confidence map", size: 11 * layout.textScale,
                                                         room: Double(layout.tileWidth) - 4) { canvas.textWidth($0, size: $1, bold: $2) }
                    canvas.text(note.text, x: Double(x) + Double(layout.tileWidth) / 2,
                                y: Double(y) + Double(layout.tileHeight) / 2, size: note.size,
                                color: PreviewSheet.dimTextColor, alignment: .center)
                }
            }
        }
        for text in header.texts {
            canvas.text(text.text, x: text.x, y: text.y, size: text.size,
                        color: text.dim ? PreviewSheet.dimTextColor : PreviewSheet.textColor, bold: text.bold)
        }
        let t = layout.textScale
        let worldNote = scene.world == .gravityAligned
            ? "gravity-aligned world"
            : scene.world == .originTag ? "not gravity-aligned: up is the origin tag's −y"
            : scene.world == .undetermined ? "not known to be gravity-aligned: up is the first camera's −y"
            : "not gravity-aligned: up is the first camera's −y"
        let k = geometry.frustumStep
        drawPanel(canvas, layout: layout, panel: .trajectoryAbove, view: above.view, extent: above.extent, geometry: geometry,
                  frustums: true,
                  title: "Trajectory from above", note: "\(plural(frames.count, "camera")), frustum every \(k)",
                  caption: "looking down \(axes.upName); \(worldNote)",
                  horizontal: axes.rightName, vertical: axes.forwardDownName)
        drawPanel(canvas, layout: layout, panel: .trajectorySide, view: side.view, extent: side.extent, geometry: geometry,
                  frustums: true,
                  title: "Trajectory from the side", note: "\(PreviewSheet.format(geometry.trajectoryLength, decimals: 2)) m path",
                  caption: "up: \(axes.upName); \(worldNote)",
                  horizontal: sideRight == axes.right ? axes.rightName : axes.forwardDownName, vertical: axes.upName,
                  verticalUp: true)
        drawPanel(canvas, layout: layout, panel: .cloudAbove, view: plan.view, extent: plan.extent, geometry: geometry,
                  frustums: false, title: "Merged cloud from above", note: "\(cloud.count) points",
                  caption: "\(plural(cloud.frames, "frame"))\(cloudOptions.every > 1 ? " (every \(cloudOptions.every))" : ""), \(PreviewSheet.format(cloudOptions.voxel * 100, decimals: 0)) cm cells, \(confidenceNote(cloud, minimum: cloudOptions.minConfidence.rawValue))\(scene.colorSize == nil ? "; gray by height" : "")",
                  horizontal: axes.rightName, vertical: axes.forwardDownName)
        drawStrip(canvas, layout: layout, strip: strip, scene: scene)
        PreviewSheet.drawColorbar(canvas, bar: layout.colorbar, textScale: t, scale: depthScale)
        if layout.rows.contains(.confidence) { drawConfidenceLegend(canvas, layout: layout) }
        return canvas.image()
    }

    /// `rgbd preview` of one scan: renders `scene`'s sheet and writes it as PNG to `path`
    /// (created atomically, its directory too).
    package static func write(_ scene: Scene, to path: String, options: ScenePreviewOptions = ScenePreviewOptions(),
                              progress: ((Int, Int) -> Void)? = nil) throws {
        let sheet = try render(scene, options: options, progress: progress)
        let png = try PNGCodec.encodeRGB(sheet)
        try FileSystem.createDirectory(Path.directory(of: path))
        let files = StagedFiles()
        try files.stage(path, bytes: png)
        try files.commit()
    }

    /// "1 frame", "2 frames".
    static func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

    /// Gray levels for a cloud without color: from 80 at its low end to 255 at its high
    /// end (1st and 99th percentiles of the height along `up`), equal channels.
    static func grayByHeight(_ points: [SIMD3<Float>], up: SIMD3<Float>) -> [UInt32] {
        guard !points.isEmpty else { return [] }
        let step = max(1, points.count / 20_000)
        let sample = Swift.stride(from: 0, to: points.count, by: step).map { (points[$0] * up).sum() }.sorted()
        let low = sample[Int(Double(sample.count - 1) * 0.01)], high = sample[Int(Double(sample.count - 1) * 0.99)]
        let span = max(high - low, 1e-6)
        return points.map { p in
            let t = min(max(((p * up).sum() - low) / span, 0), 1)
            let level = UInt32((80 + 175 * t).rounded())
            return level << 16 | level << 8 | level
        }
    }

    /// A frame of the strip, as small as the sheet needs it.
    struct StripFrame {
        var info: SceneFrameInfo
        package var depth: DepthMap
        package var color: ColorImage?
        var confidence: ColorImage?
    }

    /// A confidence map at `width × height` (nearest), its levels in `confidenceColors`.
    static func confidenceImage(_ confidence: ImageBuffer<UInt8>, width: Int, height: Int) -> ColorImage {
        var out = ColorImage(width: width, height: height, channels: 3, repeating: 0)
        for y in 0..<height {
            let row = PreviewSheet.source(y, confidence.height, over: height) * confidence.width
            for x in 0..<width {
                let level = Int(confidence.samples[row + PreviewSheet.source(x, confidence.width, over: width)])
                let c = level < confidenceColors.count ? confidenceColors[level] : noConfidenceColor
                out[x, y, 0] = c.0; out[x, y, 1] = c.1; out[x, y, 2] = c.2
            }
        }
        return out
    }

    // MARK: - Drawing

    package static func color(_ c: (UInt8, UInt8, UInt8), alpha: Double = 1) -> Canvas.Color {
        Canvas.Color(bytes: c.0, c.1, c.2, alpha: alpha)
    }

    /// What the cloud's caption says of confidence: the filter, or that the frames had no
    /// maps to filter by (every depth kept), or in how many they had.
    static func confidenceNote(_ cloud: SceneCloud, minimum: UInt8) -> String {
        if cloud.framesWithConfidence == 0 { return "no confidence maps: every depth kept" }
        if cloud.framesWithConfidence == cloud.frames { return "confidence ≥ \(minimum)" }
        return "confidence ≥ \(minimum) (\(cloud.framesWithConfidence) of \(cloud.frames) frames have maps)"
    }

    /// The header's texts (`ScenePreviewPlacement.header`) for a sheet `width` pixels wide.
    package static func headerTexts(scene: Scene, cloud: SceneCloud, trajectoryLength: Double, width: Int, margin: Int,
                                    textScale t: Double, measure: ScenePreviewPlacement.TextMeasure)
        -> (texts: [ScenePreviewPlacement.PlacedText], lines: Int) {
        let name = Path.lastComponent(scene.path.hasSuffix("/") ? String(scene.path.dropLast()) : scene.path)
        let frames = scene.frames
        var duration = "unknown"
        if let first = frames.first?.time, let last = frames.last?.time {
            duration = "\(PreviewSheet.format(last - first, decimals: 2)) s"
        }
        let skipped = scene.skipped.isEmpty ? "" : " (\(scene.skipped.count) skipped: no depth)"
        let confidence = cloud.framesWithConfidence == 0 ? "none"
            : cloud.framesWithConfidence == cloud.frames ? "in every frame merged"
            : "in \(cloud.framesWithConfidence) of \(cloud.frames) frames merged"
        let groups: [[(label: String, value: String)]] = [
            [("path", scene.path), ("app", "\(scene.format.app.rawValue), \(scene.format.variant)")],
            [("frames", "\(frames.count)\(skipped)"),
             ("fps", scene.framesPerSecond.map { PreviewSheet.format($0, decimals: 2) } ?? "unknown"),
             ("duration", duration),
             ("color", scene.colorSize.map { "\($0.width)×\($0.height)" } ?? "none (depth-only)"),
             ("depth", "\(scene.depthSize.width)×\(scene.depthSize.height)"),
             ("confidence", confidence)],
            [("world", scene.world.rawValue), ("path length", "\(PreviewSheet.format(trajectoryLength, decimals: 2)) m")],
        ]
        return ScenePreviewPlacement.header(title: "\(name)  ·  rgbd preview of a scan", version: "rgbd \(RGBDVersion.string)",
                                            groups: groups, left: Double(margin), right: Double(width - margin),
                                            top: Double(margin), textScale: t, measure: measure)
    }

    static func drawTitle(_ canvas: Canvas, x: Int, y: Int, width: Int, height: Int, textScale t: Double,
                          title: String, note: String, caption: String) {
        let baseline = Double(y) - 8 * t
        let measure: ScenePreviewPlacement.TextMeasure = { canvas.textWidth($0, size: $1, bold: $2) }
        let fitted = ScenePreviewPlacement.fit(title, size: 14.5 * t, room: Double(width), bold: true, measure: measure)
        canvas.text(fitted.text, x: Double(x), y: baseline, size: fitted.size, color: PreviewSheet.textColor, bold: true)
        if !note.isEmpty {
            let shown = ScenePreviewPlacement.fit(note, size: 12 * t, room: Double(width) - fitted.width - 10 * t, measure: measure)
            canvas.text(shown.text, x: Double(x + width), y: baseline, size: shown.size, color: PreviewSheet.dimTextColor,
                        alignment: .right)
        }
        if !caption.isEmpty {
            let shown = ScenePreviewPlacement.fit(caption, size: 11.5 * t, room: Double(width), measure: measure)
            canvas.text(shown.text, x: Double(x), y: Double(y + height) + 17 * t, size: shown.size, color: PreviewSheet.dimTextColor)
        }
        canvas.stroke(x: Double(x) - 0.5, y: Double(y) - 0.5, width: Double(width) + 1, height: Double(height) + 1,
                      color: Canvas.Color(1, 1, 1, alpha: 0.18), lineWidth: 1)
    }

    /// A top-row panel: the path (and frustums), start and end, axes and scale bar.
    static func drawPanel(_ canvas: Canvas, layout: ScenePreviewLayout, panel: ScenePanel, view: OrthographicView,
                          extent: Double, geometry: SceneGeometry, frustums: Bool, title: String, note: String, caption: String,
                          horizontal: String, vertical: String, verticalUp: Bool = false) {
        let (x0, y0) = layout.origin(of: panel)
        let w = Double(layout.panelWidth), h = Double(layout.panelHeight)
        let origin = SIMD2(Double(x0), Double(y0))
        let t = layout.textScale
        func at(_ p: SIMD3<Double>) -> SIMD2<Double> { origin + view.pixel(p) }
        canvas.clipped(x: Double(x0), y: Double(y0), width: w, height: h) {
            if frustums {
                for frustum in geometry.frustums {
                    let c = at(frustum.centre), corners = frustum.corners.map(at)
                    for corner in corners {
                        canvas.polyline([c, corner], color: frustumColor, lineWidth: max(1, 1 * t))
                    }
                    canvas.polyline(corners + [corners[0]], color: frustumColor, lineWidth: max(1, 1 * t))
                }
            }
            canvas.polyline(geometry.centres.map(at), color: color(pathColor), lineWidth: max(1.5, 2 * t))
            if let first = geometry.centres.first, let last = geometry.centres.last {
                let r = 6 * t
                canvas.disc(center: at(first), radius: r, color: color(startColor))
                canvas.disc(center: at(last), radius: r, color: color(endColor))
                // Labels beside their markers, apart from each other and from the other marker.
                let size = 11.5 * t
                let labels = markerLabels(start: at(first), end: at(last), textScale: t, panel: (origin, SIMD2(w, h))) {
                    canvas.textWidth($0, size: size, bold: true)
                }
                canvas.text("start", x: labels.start.x, y: labels.start.y + 0.75 * size, size: size,
                            color: Canvas.Color(bytes: startLabelColor.0, startLabelColor.1, startLabelColor.2), bold: true)
                canvas.text("end", x: labels.end.x, y: labels.end.y + 0.75 * size, size: size,
                            color: Canvas.Color(bytes: endLabelColor.0, endLabelColor.1, endLabelColor.2), bold: true)
            }
            // Scale bar, bottom left: 1-2-5 meters from the extent shown.
            let bar = ScenePreviewPlacement.scaleBar(extent: extent, pixelsPerMeter: view.scale, room: 0.4 * w)
            let length = bar.pixels
            let bx = Double(x0) + 12 * t, by = Double(y0) + h - 12 * t
            canvas.polyline([SIMD2(bx, by - 4 * t), SIMD2(bx, by), SIMD2(bx + length, by), SIMD2(bx + length, by - 4 * t)],
                            color: PreviewSheet.textColor, lineWidth: max(1, 1.5 * t))
            canvas.text(bar.label, x: bx + length / 2, y: by - 6 * t, size: 11 * t, color: PreviewSheet.textColor,
                        alignment: .center)
            // Axes, bottom right: horizontal to the right, vertical down (or up).
            let arm = 26 * t
            let ax = Double(x0) + w - 16 * t - arm - 30 * t
            let ay = verticalUp ? Double(y0) + h - 14 * t : Double(y0) + h - 14 * t - arm
            let tipY = verticalUp ? ay - arm : ay + arm
            canvas.polyline([SIMD2(ax, ay), SIMD2(ax + arm, ay)], color: PreviewSheet.textColor, lineWidth: max(1, 1.5 * t))
            canvas.polyline([SIMD2(ax + arm - 5 * t, ay - 4 * t), SIMD2(ax + arm, ay), SIMD2(ax + arm - 5 * t, ay + 4 * t)],
                            color: PreviewSheet.textColor, lineWidth: max(1, 1.5 * t))
            canvas.polyline([SIMD2(ax, ay), SIMD2(ax, tipY)], color: PreviewSheet.textColor, lineWidth: max(1, 1.5 * t))
            let s = verticalUp ? 1.0 : -1.0
            canvas.polyline([SIMD2(ax - 4 * t, tipY + s * 5 * t), SIMD2(ax, tipY), SIMD2(ax + 4 * t, tipY + s * 5 * t)],
                            color: PreviewSheet.textColor, lineWidth: max(1, 1.5 * t))
            canvas.text(horizontal, x: ax + arm + 4 * t, y: ay + 4 * t, size: 11 * t, color: PreviewSheet.textColor)
            canvas.text(vertical, x: ax + 6 * t, y: verticalUp ? tipY + 4 * t : tipY, size: 11 * t,
                        color: PreviewSheet.textColor)
        }
        drawTitle(canvas, x: x0, y: y0, width: layout.panelWidth, height: layout.panelHeight, textScale: t,
                  title: title, note: note, caption: caption)
    }

    static func drawStrip(_ canvas: Canvas, layout: ScenePreviewLayout, strip: [StripFrame], scene: Scene) {
        let t = layout.textScale
        let top = Double(layout.stripTop + layout.titleHeight) - 8 * t
        let rows = layout.rows.map { row -> String in
            switch row {
            case .color: return "color"
            case .depth: return "depth (one scale, holes gray)"
            case .confidence: return "confidence"
            }
        }.joined(separator: " · ")
        let measure: ScenePreviewPlacement.TextMeasure = { canvas.textWidth($0, size: $1, bold: $2) }
        let width = canvas.text("Frames", x: Double(layout.margin), y: top, size: 14.5 * t, color: PreviewSheet.textColor,
                                bold: true)
        let note = ScenePreviewPlacement.fit("\(strip.count) of \(scene.frames.count), spread over the scan; rows: \(rows)",
                                             size: 12 * t, room: Double(layout.width - 2 * layout.margin) - width - 12 * t,
                                             measure: measure)
        canvas.text(note.text, x: Double(layout.margin) + width + 12 * t, y: top, size: note.size, color: PreviewSheet.dimTextColor)
        for (column, frame) in strip.enumerated() {
            guard case let (x, y)? = layout.tile(column: column, row: layout.rows[0]) else { continue }
            // The longest label that fits the tile: number and time, the number, or less.
            var labels = ["frame \(frame.info.index)", "\(frame.info.index)"]
            if let time = frame.info.time { labels.insert("frame \(frame.info.index) · \(PreviewSheet.format(time, decimals: 2)) s", at: 0) }
            let room = Double(layout.tileWidth)
            let label = labels.lazy.map { ScenePreviewPlacement.fit($0, size: 12 * t, room: room, measure: measure) }
                .first { !$0.text.contains("…") } ?? ScenePreviewPlacement.fit(labels[labels.count - 1], size: 12 * t, room: room,
                                                                               measure: measure)
            canvas.text(label.text, x: Double(x), y: Double(y) - 7 * t, size: label.size, color: PreviewSheet.textColor)
            for row in layout.rows {
                guard case let (tx, ty)? = layout.tile(column: column, row: row) else { continue }
                canvas.stroke(x: Double(tx) - 0.5, y: Double(ty) - 0.5, width: Double(layout.tileWidth) + 1,
                              height: Double(layout.tileHeight) + 1, color: Canvas.Color(1, 1, 1, alpha: 0.18), lineWidth: 1)
            }
        }
    }

    static func drawConfidenceLegend(_ canvas: Canvas, layout: ScenePreviewLayout) {
        let t = layout.textScale
        let bar = layout.colorbar
        var x = Double(bar.x + bar.width) + 60 * t
        let y = Double(bar.y)
        let box = Double(bar.height)
        x += canvas.text("confidence  ", x: x, y: y + box, size: 11.5 * t, color: PreviewSheet.dimTextColor)
        for (level, name) in ["0 low", "1 medium", "2 high"].enumerated() {
            canvas.fill(x: x, y: y, width: box * 1.6, height: box, color: color(confidenceColors[level]))
            x += box * 1.6 + 5 * t
            x += canvas.text(name, x: x, y: y + box, size: 11.5 * t, color: PreviewSheet.textColor) + 16 * t
        }
    }
}

/// The display axes of a scene's world: `right`, `up` and `forwardDown` (drawn downward
/// in the view from above), right-handed (`right × up = forwardDown`). A gravity-aligned
/// world uses its own axes (+x, +y up, +z); a first-frame world the first camera's x, −y
/// (up) and −z (backward).
struct SceneAxes {
    var right: SIMD3<Double>
    var up: SIMD3<Double>
    var forwardDown: SIMD3<Double>
    var rightName: String
    var upName: String
    var forwardDownName: String

    init(_ scene: Scene) {
        let axes: (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>)
        switch scene.world {
        case .gravityAligned:
            axes = (SIMD3(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1))
        case .originTag:
            // The tag frame: x right, y down the tag, z into it.
            axes = (SIMD3(1, 0, 0), SIMD3(0, -1, 0), SIMD3(0, 0, 1))
        case .firstFrame, .undetermined:
            let pose = scene.frames.first?.pose ?? .identity
            axes = (pose.rotate(SIMD3(1, 0, 0)), -pose.rotate(SIMD3(0, 1, 0)), -pose.rotate(SIMD3(0, 0, 1)))
        }
        (right, up, forwardDown) = axes
        rightName = Self.name(axes.0, fallback: "camera 0 x")
        upName = Self.name(axes.1, fallback: "camera 0 −y")
        forwardDownName = Self.name(axes.2, fallback: "camera 0 −z")
    }

    /// "+x", "−z", … when `v` is a world axis, else `fallback`.
    static func name(_ v: SIMD3<Double>, fallback: String) -> String {
        for (i, axis) in ["x", "y", "z"].enumerated() {
            if abs(abs(v[i]) - 1) < 1e-6 { return (v[i] > 0 ? "+" : "−") + axis }
        }
        return fallback
    }
}

/// What the top row draws: camera centres, frustums and the extent they and the cloud
/// take, and views fitted to it.
struct SceneGeometry {
    struct Frustum {
        var centre: SIMD3<Double>
        var corners: [SIMD3<Double>]
    }

    let centres: [SIMD3<Double>]
    let frustums: [Frustum]
    let frustumStep: Int
    let trajectoryLength: Double
    /// Points whose extent the cloud's view frames: camera centres, frustum corners and a
    /// robust box of the cloud (its 1st to 99th percentiles along each axis).
    let framed: [SIMD3<Double>]
    /// Points whose extent the trajectory's views frame: camera centres and frustum
    /// corners (a close-up's path is not shrunk to a dot by the room its cloud reaches).
    let trajectoryFramed: [SIMD3<Double>]
    /// The horizontal axis of the side view: the one of `right` and `forwardDown` along
    /// which the framed points spread more.
    let sideAxis: SIMD3<Double>

    init(scene: Scene, cloud: SceneCloud, axes: SceneAxes) {
        let frames = scene.frames
        let centres = frames.map { $0.pose.translation }
        self.centres = centres
        var length = 0.0
        for (a, b) in zip(centres, centres.dropFirst()) { length += ((b - a) * (b - a)).sum().squareRoot() }
        trajectoryLength = length

        // The cloud's robust box (a sample of up to 20 000 points).
        var box: [SIMD3<Double>] = []
        if cloud.count > 0 {
            let step = max(1, cloud.count / 20_000)
            var axesValues: [[Double]] = [[], [], []]
            for i in Swift.stride(from: 0, to: cloud.count, by: step) {
                for a in 0..<3 { axesValues[a].append(Double(cloud.positions[3 * i + a])) }
            }
            var lo = SIMD3<Double>(), hi = SIMD3<Double>()
            for a in 0..<3 {
                let sorted = axesValues[a].sorted()
                lo[a] = sorted[Int(Double(sorted.count - 1) * 0.01)]
                hi[a] = sorted[Int(Double(sorted.count - 1) * 0.99)]
            }
            for i in 0..<8 {
                box.append(SIMD3(i & 1 == 0 ? lo.x : hi.x, i & 2 == 0 ? lo.y : hi.y, i & 4 == 0 ? lo.z : hi.z))
            }
        }
        // Frustum depth: a twentieth of the scene's size (at least 5 cm).
        var lo = centres.first ?? .zero, hi = lo
        for p in centres + box { lo = pointwiseMin(lo, p); hi = pointwiseMax(hi, p) }
        let size = ((hi - lo) * (hi - lo)).sum().squareRoot()
        let depth = max(0.05, size / 20)
        frustumStep = max(1, frames.count / 12)
        var chosen = Array(Swift.stride(from: 0, to: frames.count, by: frustumStep))
        if let last = frames.indices.last, chosen.last != last { chosen.append(last) }
        let w = Double(scene.depthSize.width), h = Double(scene.depthSize.height)
        let shown: [Frustum] = chosen.map { i in
            let frame = frames[i]
            let k = frame.depthIntrinsics
            let corners = [SIMD2(-0.5, -0.5), SIMD2(w - 0.5, -0.5), SIMD2(w - 0.5, h - 0.5), SIMD2(-0.5, h - 0.5)].map { c in
                frame.pose.apply(SIMD3((c.x - k.cx) / k.fx * depth, (c.y - k.cy) / k.fy * depth, depth))
            }
            return Frustum(centre: frame.pose.translation, corners: corners)
        }
        frustums = shown
        trajectoryFramed = centres + shown.flatMap(\.corners)
        let all = trajectoryFramed + box
        framed = all
        func spread(_ axis: SIMD3<Double>) -> Double {
            let values = all.map { ($0 * axis).sum() }
            return (values.max() ?? 0) - (values.min() ?? 0)
        }
        sideAxis = spread(axes.forwardDown) > spread(axes.right) ? axes.forwardDown : axes.right
    }

    /// An orthographic view (`right`, `down`) of a `width × height` panel that frames
    /// `points` with a margin, one scale for both directions, and the extent it frames
    /// (meters, the larger of its two directions; at least 10 cm).
    func fit(_ points: [SIMD3<Double>], right: SIMD3<Double>, down: SIMD3<Double>, width: Int, height: Int)
        -> (view: OrthographicView, extent: Double) {
        var lo = SIMD2(Double.infinity, .infinity), hi = SIMD2(-Double.infinity, -.infinity)
        for p in points {
            let q = SIMD2((p * right).sum(), (p * down).sum())
            lo = pointwiseMin(lo, q); hi = pointwiseMax(hi, q)
        }
        if !(lo.x <= hi.x) { lo = .zero; hi = .zero }
        // At least 10 cm across, so a still camera is not magnified without end.
        let span = pointwiseMax(hi - lo, SIMD2(0.1, 0.1))
        let share = 0.84
        let scale = Swift.min(share * Double(width) / span.x, share * Double(height) / span.y)
        let centre = (lo + hi) / 2
        let offset = SIMD2(Double(width) / 2, Double(height) / 2) - scale * centre
        return (OrthographicView(right: right, down: down, scale: scale, offset: offset), max(span.x, span.y))
    }
}
