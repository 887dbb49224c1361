/// The panels of a preview sheet, in reading order (two rows of three).
package enum PreviewPanel: Int, CaseIterable, Sendable {
    /// The color image as captured, with the lens distortion drawn over it.
    case captured
    /// The rectified color image.
    case rectified
    /// The rectified depth map in the Turbo colormap.
    case depth
    /// Depth over color: the colormap blended over the gray rectified color, depth edges in white.
    case overlay
    /// The point cloud seen from the capture's camera.
    case cloudFront
    /// The point cloud seen from three quarters (turned and from above).
    case cloudThreeQuarter
}

/// Where everything lies on a preview sheet of a given width, for a color image of a
/// given aspect: a header, then two rows of three panels, each with a title band above
/// and a caption band below (the depth panel's holds the colorbar).
package struct PreviewLayout: Equatable, Sendable {
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
    /// Space between panels.
    package let gap: Int
    /// Height of the title band above each panel.
    package let titleHeight: Int
    /// Height of the caption band below each panel.
    package let captionHeight: Int
    /// Size of every panel's image.
    package let panelWidth: Int
    /// Size of every panel's image.
    package let panelHeight: Int

    /// The narrowest sheet.
    package static let minimumWidth = 480
    /// The widest sheet.
    package static let maximumWidth = 8000
    /// The default width.
    package static let defaultWidth = 1600

    /// The layout of a `width`-pixel sheet for a `colorWidth × colorHeight` color image.
    package init(width: Int, colorWidth: Int, colorHeight: Int) throws {
        let bands = try SheetBands(width: width)
        guard colorWidth > 0, colorHeight > 0 else {
            throw RGBDError(.invalidArgument, "the color image is empty (\(colorWidth)×\(colorHeight))")
        }
        (self.width, scale, margin, gap) = (width, bands.scale, bands.margin, bands.gap)
        (headerHeight, titleHeight, captionHeight, panelWidth)
            = (bands.headerHeight, bands.titleHeight, bands.captionHeight, bands.panelWidth)
        // Very tall or wide images are letterboxed into at most 2:1 / 1:2 panels.
        let aspect = min(2, max(0.5, Double(colorHeight) / Double(colorWidth)))
        panelHeight = max(1, Int((Double(panelWidth) * aspect).rounded()))
        height = 2 * margin + headerHeight + 2 * (titleHeight + panelHeight + captionHeight) + gap
    }

    /// Scale of text against the default sheet: text shrinks more slowly than the sheet,
    /// so that a narrow sheet stays legible.
    static func textScale(_ scale: Double) -> Double {
        scale >= 1 ? scale : 0.55 + 0.45 * scale
    }

    /// Scale of text on this sheet.
    package var textScale: Double { Self.textScale(scale) }

    /// The top-left corner of a panel's image.
    package func origin(of panel: PreviewPanel) -> (x: Int, y: Int) {
        let column = panel.rawValue % 3, row = panel.rawValue / 3
        let x = margin + column * (panelWidth + gap)
        let y = margin + headerHeight + titleHeight + row * (titleHeight + panelHeight + captionHeight + gap)
        return (x, y)
    }

    /// The colorbar below the depth panel: top-left corner and size (its unit follows it
    /// on the right).
    package var colorbar: (x: Int, y: Int, width: Int, height: Int) {
        let (x, y) = origin(of: .depth)
        let room = Int((26 * textScale).rounded())
        return (x, y + panelHeight + Int((7 * textScale).rounded()), max(1, panelWidth - room),
                Int((11 * textScale).rounded()))
    }
}

/// The bands every preview sheet (a capture's, `PreviewLayout`; a scan's,
/// `ScenePreviewLayout`) shares, scaled to its width: margin, gap, header, the title and
/// caption bands around a panel, and the width of three panels across.
package struct SheetBands: Equatable, Sendable {
    /// Scale of every length against the 1600-pixel default sheet.
    package let scale: Double
    /// Margin around the sheet, pixels.
    package let margin: Int
    /// Space between panels.
    package let gap: Int
    /// Height of the header band (below the top margin).
    package let headerHeight: Int
    /// Height of the title band above a panel.
    package let titleHeight: Int
    /// Height of the caption band below a panel.
    package let captionHeight: Int
    /// Width of each of three panels across the sheet.
    package let panelWidth: Int

    /// The bands of a `width`-pixel sheet (`PreviewLayout.minimumWidth ... maximumWidth`).
    package init(width: Int) throws {
        guard width >= PreviewLayout.minimumWidth, width <= PreviewLayout.maximumWidth else {
            throw RGBDError(.invalidArgument, "the sheet width must be between \(PreviewLayout.minimumWidth) and \(PreviewLayout.maximumWidth) pixels, not \(width)")
        }
        scale = Double(width) / Double(PreviewLayout.defaultWidth)
        let text = PreviewLayout.textScale(scale)
        margin = Int((20 * scale).rounded())
        gap = Int((16 * scale).rounded())
        headerHeight = Int((30 * text + 3 * 19 * text + 14 * scale).rounded())
        titleHeight = Int((26 * text).rounded())
        captionHeight = Int((44 * text).rounded())
        panelWidth = (width - 2 * margin - 2 * gap) / 3
    }
}
