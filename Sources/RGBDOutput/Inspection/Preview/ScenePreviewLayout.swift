/// The top row of a scan's preview sheet, in reading order.
package enum ScenePanel: Int, CaseIterable, Sendable {
    /// The camera path and frustums seen from above (down the world's up axis).
    case trajectoryAbove
    /// The camera path and frustums seen from the side (up is up).
    case trajectorySide
    /// The merged cloud from above, over the same extent as `trajectoryAbove`, with the
    /// camera path drawn on it.
    case cloudAbove
}

/// The rows of a scan sheet's strip of frames (a scene without color has no color row, one
/// whose frames have no confidence maps no confidence row).
package enum SceneStripRow: Int, CaseIterable, Sendable {
    /// The color frame (absent in a depth-only scene).
    case color
    /// The depth map in Turbo, one scale for the whole strip, holes gray.
    case depth
    /// The confidence map: 0, 1 and 2 in three colors.
    case confidence
}

/// Where everything lies on a scan's preview sheet: a header; a row of three panels
/// (`ScenePanel`) each with a title band above and a caption band below; then the strip
/// of frames, one column per frame (a label band over it) and a row per `SceneStripRow`,
/// and a band below for the depth colorbar and the confidence legend.
package struct ScenePreviewLayout: Equatable, Sendable {
    /// Sheet width in pixels.
    package let width: Int
    /// Sheet height in pixels.
    package let height: Int
    /// Scale of every length against the 1600-pixel default sheet.
    package let scale: Double
    /// Margin around the sheet, pixels.
    package let margin: Int
    /// Height of the header band (below the top margin).
    package let headerHeight: Int
    /// Space between panels and sections.
    package let gap: Int
    /// Height of the title band above each panel, and of the label band above each frame.
    package let titleHeight: Int
    /// Height of the caption band below each panel and below the strip.
    package let captionHeight: Int
    /// Size of each top-row panel.
    package let panelWidth: Int
    /// Size of each top-row panel.
    package let panelHeight: Int
    /// Frames in the strip (columns).
    package let frames: Int
    /// The strip's rows, in order (no color row for a depth-only scene).
    package let rows: [SceneStripRow]
    /// Size of each frame's tile.
    package let tileWidth: Int
    /// Size of each frame's tile.
    package let tileHeight: Int
    /// Space between the strip's tiles.
    package let tileGap: Int

    /// The most frames a strip shows.
    package static let maximumFrames = 12

    /// Lines of labelled values in the header (below its title line).
    package let headerLines: Int

    /// The layout of a `width`-pixel sheet (`PreviewLayout.minimumWidth ... maximumWidth`)
    /// with `frames` frames (1 ... `maximumFrames`) of `depthWidth × depthHeight` depth maps
    /// in the strip, with a color row when `color` is true and a confidence row when
    /// `confidence` is (a scene whose frames have no confidence maps gets none), and
    /// `headerLines` lines of values in the header (`ScenePreviewPlacement.header`: more
    /// when a narrow sheet wraps them).
    package init(width: Int, frames: Int, depthWidth: Int, depthHeight: Int, color: Bool, confidence: Bool = true,
                 headerLines: Int = 3) throws {
        let bands = try SheetBands(width: width)
        guard frames >= 1, frames <= Self.maximumFrames else {
            throw RGBDError(.invalidArgument, "the strip shows 1 to \(Self.maximumFrames) frames, not \(frames)")
        }
        guard depthWidth > 0, depthHeight > 0 else {
            throw RGBDError(.invalidArgument, "the depth maps are empty (\(depthWidth)×\(depthHeight))")
        }
        self.frames = frames
        (self.width, scale, margin, gap) = (width, bands.scale, bands.margin, bands.gap)
        guard headerLines >= 1, headerLines <= 20 else {
            throw RGBDError(.invalidArgument, "the header has 1 to 20 lines of values, not \(headerLines)")
        }
        self.headerLines = headerLines
        (titleHeight, captionHeight, panelWidth) = (bands.titleHeight, bands.captionHeight, bands.panelWidth)
        // SheetBands' header holds 3 lines of 19 (text-scaled) pixels.
        headerHeight = bands.headerHeight + Int((Double(headerLines - 3) * 19 * PreviewLayout.textScale(bands.scale)).rounded())
        panelHeight = max(1, panelWidth * 3 / 4)
        rows = (color ? [.color] : []) + [.depth] + (confidence ? [.confidence] : [])
        tileGap = max(2, Int((6 * scale).rounded()))
        let widest = max(1, (width - 2 * margin - (frames - 1) * tileGap) / frames)
        // Very tall or wide depth maps are letterboxed into at most 2:1 / 1:2 tiles.
        let aspect = min(2, max(0.5, Double(depthHeight) / Double(depthWidth)))
        // A strip of few frames would be huge: its tiles are at most as tall as a panel.
        tileHeight = max(1, min(Int((Double(widest) * aspect).rounded()), panelHeight))
        tileWidth = min(widest, max(1, Int((Double(tileHeight) / aspect).rounded())))
        let strip = titleHeight + rows.count * tileHeight + (rows.count - 1) * tileGap
        height = 2 * margin + headerHeight + titleHeight + panelHeight + captionHeight + gap + titleHeight + strip
            + captionHeight
    }

    /// Scale of text on this sheet.
    package var textScale: Double { PreviewLayout.textScale(scale) }

    /// The top-left corner of a panel's image.
    package func origin(of panel: ScenePanel) -> (x: Int, y: Int) {
        (margin + panel.rawValue * (panelWidth + gap), margin + headerHeight + titleHeight)
    }

    /// The top of the strip section (its title's band).
    package var stripTop: Int { margin + headerHeight + titleHeight + panelHeight + captionHeight + gap }

    /// The top-left corner of frame `column`'s tile in `row` (nil when the sheet has no such row).
    package func tile(column: Int, row: SceneStripRow) -> (x: Int, y: Int)? {
        guard let r = rows.firstIndex(of: row), column >= 0, column < frames else { return nil }
        let x = margin + column * (tileWidth + tileGap)
        let y = stripTop + 2 * titleHeight + r * (tileHeight + tileGap)
        return (x, y)
    }

    /// The band below the strip: the depth colorbar (left) and the confidence legend (when
    /// there is a confidence row).
    package var colorbar: (x: Int, y: Int, width: Int, height: Int) {
        let bottom = stripTop + 2 * titleHeight + rows.count * tileHeight + (rows.count - 1) * tileGap
        let room = Int((26 * textScale).rounded())
        // Indented by half a tick label, so that the first one ("0.0", centred on the
        // bar's left end) stays off the margin.
        let inset = Int((12 * textScale).rounded())
        let barWidth = max(1, min(panelWidth, width - 2 * margin) - room - inset)
        return (margin + inset, bottom + Int((7 * textScale).rounded()), barWidth, Int((11 * textScale).rounded()))
    }
}
