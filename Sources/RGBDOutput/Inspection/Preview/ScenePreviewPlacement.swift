#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a scan sheet's scale bars, marker labels and header text go: pure functions of
/// the scene's geometry and of text widths (measured by the caller's `TextMeasure`, cairo's
/// on the sheet), so that tests can check what is drawn by these values.
package enum ScenePreviewPlacement {
    /// The width in pixels of a text at a font size, bold or not.
    package typealias TextMeasure = (_ text: String, _ size: Double, _ bold: Bool) -> Double

    // MARK: - Scale bars

    /// A scale bar: its length in meters and in pixels, and its label.
    package struct ScaleBar: Equatable, Sendable {
        /// Length, meters: 1, 2 or 5 times a power of ten.
        package var meters: Double
        /// Length on the sheet, pixels.
        package var pixels: Double
        /// "10 cm", "2 m", "5 mm": the length in the unit that makes it a whole number.
        package var label: String
    }

    /// The scale bar of a view at `pixelsPerMeter` showing a scene `extent` meters across:
    /// the largest 1-2-5 step (…, 1 cm, 2 cm, 5 cm, 10 cm, 20 cm, …) no longer than a third
    /// of the extent and than `room` pixels. A close-up 0.4 m across gets 10 cm, a room
    /// 5 m across 1 m.
    package static func scaleBar(extent: Double, pixelsPerMeter: Double, room: Double) -> ScaleBar {
        let limit = min(extent / 3, room / pixelsPerMeter)
        guard limit.isFinite, limit > 0, pixelsPerMeter > 0 else {
            return ScaleBar(meters: 1, pixels: pixelsPerMeter, label: "1 m")
        }
        // Powers of ten from 1 mm·10⁻³ up: the largest 1-2-5 value ≤ limit.
        var exponent = Int((log10(limit)).rounded(.down))
        var meters = 1.0
        while true {
            let power = pow(10, Double(exponent))
            if let step = [5.0, 2, 1].first(where: { $0 * power <= limit * (1 + 1e-12) }) {
                meters = step * power
                break
            }
            exponent -= 1
        }
        return ScaleBar(meters: meters, pixels: meters * pixelsPerMeter, label: lengthLabel(meters))
    }

    /// A 1-2-5 length in the unit that makes it a whole number: "2 m", "50 cm", "5 mm".
    static func lengthLabel(_ meters: Double) -> String {
        if meters >= 1 { return "\(Int(meters.rounded())) m" }
        if meters >= 0.01 { return "\(Int((meters * 100).rounded())) cm" }
        if meters >= 0.001 { return "\(Int((meters * 1000).rounded())) mm" }
        return "\(PreviewSheet.format(meters * 1000, decimals: 3)) mm"
    }

    // MARK: - Start and end labels

    /// A rectangle on the sheet, pixels (y down).
    package struct Box: Equatable, Sendable {
        /// Left edge.
        package var x: Double
        /// Top edge.
        package var y: Double
        /// Width.
        package var width: Double
        /// Height.
        package var height: Double

        /// A box from its edges and size.
        package init(x: Double, y: Double, width: Double, height: Double) {
            (self.x, self.y, self.width, self.height) = (x, y, width, height)
        }

        /// Whether the two boxes share any area.
        package func overlaps(_ other: Box) -> Bool {
            x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
        }

        /// Whether `other` lies wholly inside.
        package func contains(_ other: Box) -> Bool {
            other.x >= x && other.y >= y && other.x + other.width <= x + width && other.y + other.height <= y + height
        }
    }

    /// Where the labels of the start and end markers go: boxes of `startSize` and
    /// `endSize` beside their markers (discs of `radius` at `start` and `end`), `gap`
    /// pixels off, each on a side of its marker (left, right, above, below) so that the
    /// labels do not overlap each other or the other marker, inside `bounds` (the panel)
    /// when they can be. Sides facing away from the other marker are tried first; a long
    /// path gets start on the left, end on the right, as before.
    package static func markerLabels(start: SIMD2<Double>, end: SIMD2<Double>, radius: Double,
                                     startSize: SIMD2<Double>, endSize: SIMD2<Double>, gap: Double,
                                     bounds: Box) -> (start: Box, end: Box) {
        func candidates(_ p: SIMD2<Double>, _ size: SIMD2<Double>, away: SIMD2<Double>) -> [Box] {
            let offset = radius + gap
            let sides: [(box: Box, direction: SIMD2<Double>)] = [
                (Box(x: p.x - offset - size.x, y: p.y - size.y / 2, width: size.x, height: size.y), SIMD2(-1, 0)),
                (Box(x: p.x + offset, y: p.y - size.y / 2, width: size.x, height: size.y), SIMD2(1, 0)),
                (Box(x: p.x - size.x / 2, y: p.y - offset - size.y, width: size.x, height: size.y), SIMD2(0, -1)),
                (Box(x: p.x - size.x / 2, y: p.y + offset, width: size.x, height: size.y), SIMD2(0, 1)),
            ]
            // Away from the other marker first; ties (coinciding markers) keep left, right, above, below.
            return sides.enumerated().sorted { a, b in
                let da = (a.element.direction * away).sum(), db = (b.element.direction * away).sum()
                return da != db ? da > db : a.offset < b.offset
            }.map(\.element.box)
        }
        func disc(_ p: SIMD2<Double>) -> Box { Box(x: p.x - radius, y: p.y - radius, width: 2 * radius, height: 2 * radius) }
        var away = start - end
        if (away * away).sum() == 0 { away = SIMD2(-1, 0) }
        let startBoxes = candidates(start, startSize, away: away)
        let endBoxes = candidates(end, endSize, away: -away)
        var best: (start: Box, end: Box, cost: Int)?
        for (i, s) in startBoxes.enumerated() {
            for (j, e) in endBoxes.enumerated() {
                // Overlaps first, then leaving the panel, then the order of preference.
                var cost = i + j
                if s.overlaps(e) || s.overlaps(disc(end)) || e.overlaps(disc(start)) { cost += 1000 }
                if !bounds.contains(s) { cost += 100 }
                if !bounds.contains(e) { cost += 100 }
                if cost < best?.cost ?? .max { best = (s, e, cost) }
            }
        }
        return best.map { ($0.start, $0.end) } ?? (startBoxes[0], endBoxes[0])
    }

    // MARK: - Text that fits

    /// `text` at `size` if it fits in `room` pixels; else smaller, down to `minimum` of
    /// `size`; else at that size with its end (`.end`) or middle (`.middle`, for paths)
    /// replaced by "…" until it fits. Returns the text, its size and width; an empty text
    /// when not even "…" fits.
    package static func fit(_ text: String, size: Double, room: Double, minimum: Double = 0.7,
                            cut: Cut = .end, bold: Bool = false, measure: TextMeasure) -> (text: String, size: Double, width: Double) {
        let natural = measure(text, size, bold)
        if natural <= room { return (text, size, natural) }
        let smallest = size * minimum
        let shrunk = size * room / natural
        if shrunk >= smallest {
            // Scaled text is about proportionally narrower; measured, and trimmed a little if not.
            var s = shrunk
            var width = measure(text, s, bold)
            while width > room && s > smallest {
                s = max(smallest, s * 0.97)
                width = measure(text, s, bold)
            }
            if width <= room { return (text, s, width) }
        }
        let characters = Array(text)
        var keep = characters.count - 1
        while keep > 0 {
            let shortened: String
            switch cut {
            case .end: shortened = String(characters.prefix(keep)) + "…"
            case .middle: shortened = String(characters.prefix((keep + 1) / 2)) + "…" + String(characters.suffix(keep / 2))
            }
            let width = measure(shortened, smallest, bold)
            if width <= room { return (shortened, smallest, width) }
            keep -= 1
        }
        let width = measure("…", smallest, bold)
        return width <= room ? ("…", smallest, width) : ("", smallest, 0)
    }

    /// Where `fit` shortens a text.
    package enum Cut: Sendable {
        /// "a long capti…"
        case end
        /// "/work/sha…/record3d-door": a path keeps its start and its name.
        case middle
    }

    // MARK: - Header

    /// A text placed on the sheet: left end, baseline, size, width.
    package struct PlacedText: Equatable, Sendable {
        /// The text as drawn (perhaps shortened).
        package var text: String
        /// Left end, pixels.
        package var x: Double
        /// Baseline, pixels.
        package var y: Double
        /// Font size, pixels.
        package var size: Double
        /// Advance width, pixels.
        package var width: Double
        /// Bold (the title).
        package var bold: Bool
        /// A label (dim) rather than a value.
        package var dim: Bool
    }

    /// The header's texts: the title on the left and the version on the right of the first
    /// line, then `groups` of (label, value) entries, a line each, set at 13 × `textScale`
    /// and shrunk to 80 % when a line is too wide; a line still too wide is wrapped between
    /// entries, and an entry wider than the sheet alone has its value shortened in the
    /// middle (a path keeps its start and its name). Everything lies between the margins
    /// (`left` to `right`); `top` is the header band's top. Returns the texts and the number
    /// of value lines (`ScenePreviewLayout`'s `headerLines`).
    package static func header(title: String, version: String, groups: [[(label: String, value: String)]],
                               left: Double, right: Double, top: Double, textScale t: Double,
                               measure: TextMeasure) -> (texts: [PlacedText], lines: Int) {
        var texts: [PlacedText] = []
        let titleY = top + 21 * t
        let versionSize = 12 * t
        let versionWidth = measure(version, versionSize, false)
        let titleRoom = right - left - versionWidth - 12 * t
        if titleRoom > 0 {
            texts.append(PlacedText(text: version, x: right - versionWidth, y: titleY, size: versionSize, width: versionWidth,
                                    bold: false, dim: true))
        }
        let title = fit(title, size: 21 * t, room: titleRoom > 0 ? titleRoom : right - left, minimum: 0.6, bold: true,
                        measure: measure)
        texts.append(PlacedText(text: title.text, x: left, y: titleY, size: title.size, width: title.width, bold: true, dim: false))

        let size = 13 * t, small = 0.8 * size
        let room = right - left
        var y = titleY + 8 * t
        var lines = 0
        for group in groups {
            func natural(_ entries: ArraySlice<(label: String, value: String)>, _ s: Double) -> Double {
                entries.reduce(0.0) { $0 + measure($1.label + "  ", s, false) + measure($1.value, s, false) + 26 * t * s / size }
                    - 26 * t * s / size
            }
            // One line at full size, or at a smaller size down to 80 %, else wrapped at 80 %.
            var s = size
            let whole = natural(group[...], size)
            if whole > room { s = max(small, size * room / whole) }
            var rows: [ArraySlice<(label: String, value: String)>] = []
            if natural(group[...], s) <= room {
                rows = [group[...]]
            } else {
                s = small
                var start = group.startIndex
                while start < group.endIndex {
                    var end = start + 1
                    while end < group.endIndex, natural(group[start...end], s) <= room { end += 1 }
                    rows.append(group[start..<end])
                    start = end
                }
            }
            for row in rows {
                y += 19 * t
                lines += 1
                var cursor = left
                for entry in row {
                    let labelWidth = measure(entry.label + "  ", s, false)
                    let value = fit(entry.value, size: s, room: right - cursor - labelWidth, minimum: 1, cut: .middle,
                                    measure: measure)
                    texts.append(PlacedText(text: entry.label + "  ", x: cursor, y: y, size: s, width: labelWidth,
                                            bold: false, dim: true))
                    texts.append(PlacedText(text: value.text, x: cursor + labelWidth, y: y, size: s, width: value.width,
                                            bold: false, dim: false))
                    cursor += labelWidth + value.width + 26 * t * s / size
                }
            }
        }
        return (texts, lines)
    }
}
