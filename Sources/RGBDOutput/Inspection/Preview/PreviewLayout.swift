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
/// given aspect (as shown: a portrait photo turned upright gives tall panels): a header,
/// then two rows of three panels, each with a title band above and a caption band below
/// (the depth panel's holds the colorbar).
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

/// Where the points of an image shown in a panel land on the sheet, the image turned
/// `turns` quarter turns clockwise for display (`rgbd preview --upright`) and scaled to the
/// panel: what the overlays drawn in the image's stored coordinates (the lens grid, tags)
/// need to follow the panel's pixels.
package struct PanelPlacement: Sendable {
    /// The panel's top-left corner on the sheet.
    package let x: Double
    /// See `x`.
    package let y: Double
    /// The panel's size on the sheet (the turned image's aspect).
    package let width: Double
    /// See `width`.
    package let height: Double
    /// Quarter turns clockwise from the stored image to the panel (0…3).
    package let turns: Int
    /// The stored image's size, pixels.
    package let imageWidth: Double
    /// See `imageWidth`.
    package let imageHeight: Double

    /// The sheet point of the stored image's point `p` (pixel edges at integers: `(0, 0)`
    /// is the image's top-left corner, pixel `(i, j)`'s center `(i + ½, j + ½)`).
    package func point(_ p: SIMD2<Double>) -> SIMD2<Double> {
        let odd = turns % 2 == 1
        // The stored image at the size that, turned, is the panel's.
        let (w, h) = odd ? (height, width) : (width, height)
        let q = SIMD2(p.x * w / imageWidth, p.y * h / imageHeight)
        let turned: SIMD2<Double>
        switch turns {
        case 1: turned = SIMD2(h - q.y, q.x)
        case 2: turned = SIMD2(w - q.x, h - q.y)
        case 3: turned = SIMD2(q.y, w - q.x)
        default: turned = q
        }
        return SIMD2(x, y) + turned
    }
}

extension PreviewLayout {
    /// The placement of a `imageWidth × imageHeight` image (as stored) in `panel`, turned
    /// `turns` quarter turns clockwise.
    package func placement(of panel: PreviewPanel, imageWidth: Int, imageHeight: Int, turns: Int) -> PanelPlacement {
        let (x, y) = origin(of: panel)
        return PanelPlacement(x: Double(x), y: Double(y), width: Double(panelWidth), height: Double(panelHeight),
                              turns: ((turns % 4) + 4) % 4, imageWidth: Double(imageWidth),
                              imageHeight: Double(imageHeight))
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
