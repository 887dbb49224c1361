import CCairo

/// An RGB drawing surface for the preview sheet: rgbd's own raster images are copied in
/// (`blit`), and cairo draws text, lines and shapes over them. The only place cairo's C
/// API is called.
package final class Canvas {
    /// An sRGB color, components in [0, 1].
    package struct Color {
        var r: Double, g: Double, b: Double, a: Double = 1

        init(_ r: Double, _ g: Double, _ b: Double, alpha: Double = 1) {
            self.r = r; self.g = g; self.b = b; self.a = alpha
        }

        /// A color from 8-bit components.
        init(bytes r: UInt8, _ g: UInt8, _ b: UInt8, alpha: Double = 1) {
            self.init(Double(r) / 255, Double(g) / 255, Double(b) / 255, alpha: alpha)
        }
    }

    /// Where a text's anchor lies along its width.
    enum Alignment { case left, center, right }

    let width: Int
    let height: Int
    private let surface: OpaquePointer
    private let context: OpaquePointer
    /// The font family of all text (fontconfig finds it: `fonts-dejavu-core`).
    private let family = "DejaVu Sans"

    /// A `width × height` surface filled with `background`.
    init(width: Int, height: Int, background: Color) throws {
        guard width > 0, height > 0, width <= 32767, height <= 32767 else {
            throw RGBDError(.invalidArgument, "a sheet of \(width)×\(height) pixels is out of range")
        }
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height)) else {
            throw RGBDError(.invalidArgument, "cairo cannot make a \(width)×\(height) surface")
        }
        guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS, let context = cairo_create(surface) else {
            cairo_surface_destroy(surface)
            throw RGBDError(.invalidArgument, "cairo cannot make a \(width)×\(height) surface")
        }
        self.width = width
        self.height = height
        self.surface = surface
        self.context = context
        fill(x: 0, y: 0, width: Double(width), height: Double(height), color: background)
    }

    deinit {
        cairo_destroy(context)
        cairo_surface_destroy(surface)
    }

    private func source(_ color: Color) {
        cairo_set_source_rgba(context, color.r, color.g, color.b, color.a)
    }

    /// Fills a rectangle.
    func fill(x: Double, y: Double, width: Double, height: Double, color: Color) {
        source(color)
        cairo_rectangle(context, x, y, width, height)
        cairo_fill(context)
    }

    /// Outlines a rectangle.
    func stroke(x: Double, y: Double, width: Double, height: Double, color: Color, lineWidth: Double) {
        source(color)
        cairo_set_line_width(context, lineWidth)
        cairo_rectangle(context, x, y, width, height)
        cairo_stroke(context)
    }

    /// Strokes a polyline through `points`; `dash` gives on/off lengths.
    func polyline(_ points: [SIMD2<Double>], color: Color, lineWidth: Double, dash: [Double] = []) {
        guard let first = points.first else { return }
        source(color)
        cairo_set_line_width(context, lineWidth)
        cairo_set_line_join(context, CAIRO_LINE_JOIN_ROUND)
        dash.withUnsafeBufferPointer { cairo_set_dash(context, $0.baseAddress, Int32($0.count), 0) }
        cairo_move_to(context, first.x, first.y)
        for p in points.dropFirst() { cairo_line_to(context, p.x, p.y) }
        cairo_stroke(context)
        cairo_set_dash(context, nil, 0, 0)
    }

    /// Fills a circle.
    func disc(center: SIMD2<Double>, radius: Double, color: Color) {
        source(color)
        cairo_new_sub_path(context)
        cairo_arc(context, center.x, center.y, radius, 0, 2 * Double.pi)
        cairo_fill(context)
    }

    /// Runs `body` with drawing limited to a rectangle.
    func clipped(x: Double, y: Double, width: Double, height: Double, _ body: () -> Void) {
        cairo_save(context)
        cairo_rectangle(context, x, y, width, height)
        cairo_clip(context)
        body()
        cairo_restore(context)
    }

    private func font(size: Double, bold: Bool) {
        cairo_select_font_face(context, family, CAIRO_FONT_SLANT_NORMAL,
                               bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(context, size)
    }

    /// The advance width of `text` in pixels.
    func textWidth(_ text: String, size: Double, bold: Bool = false) -> Double {
        font(size: size, bold: bold)
        var extents = cairo_text_extents_t()
        cairo_text_extents(context, text, &extents)
        return extents.x_advance
    }

    /// Draws `text` with its baseline at `y`, anchored at `x` as `alignment` says.
    /// Returns the advance width.
    @discardableResult
    func text(_ text: String, x: Double, y: Double, size: Double, color: Color, bold: Bool = false,
              alignment: Alignment = .left) -> Double {
        let advance = textWidth(text, size: size, bold: bold)
        let start: Double
        switch alignment {
        case .left: start = x
        case .center: start = x - advance / 2
        case .right: start = x - advance
        }
        source(color)
        cairo_move_to(context, start, y)
        cairo_show_text(context, text)
        return advance
    }

    /// Copies an RGB image into the surface with its top-left corner at `(x, y)`
    /// (clipped to the surface).
    func blit(_ image: ColorImage, x: Int, y: Int) {
        precondition(image.channels == 3, "blit takes RGB images")
        cairo_surface_flush(surface)
        guard let data = cairo_image_surface_get_data(surface) else { return }
        let stride = Int(cairo_image_surface_get_stride(surface))
        let x0 = max(0, x), x1 = min(width, x + image.width)
        let y0 = max(0, y), y1 = min(height, y + image.height)
        guard x0 < x1, y0 < y1 else { return }
        image.samples.withUnsafeBufferPointer { samples in
            for row in y0..<y1 {
                let line = UnsafeMutableRawPointer(data + row * stride).assumingMemoryBound(to: UInt32.self)
                var s = ((row - y) * image.width + (x0 - x)) * 3
                for column in x0..<x1 {
                    line[column] = UInt32(samples[s]) << 16 | UInt32(samples[s + 1]) << 8 | UInt32(samples[s + 2])
                    s += 3
                }
            }
        }
        cairo_surface_mark_dirty(surface)
    }

    /// The surface's pixels as an RGB image.
    func image() -> ColorImage {
        cairo_surface_flush(surface)
        var samples = [UInt8](repeating: 0, count: width * height * 3)
        guard let data = cairo_image_surface_get_data(surface) else {
            return ColorImage(width: width, height: height, channels: 3, samples: samples)
        }
        let stride = Int(cairo_image_surface_get_stride(surface))
        samples.withUnsafeMutableBufferPointer { out in
            for row in 0..<height {
                let line = UnsafeRawPointer(data + row * stride).assumingMemoryBound(to: UInt32.self)
                var o = row * width * 3
                for column in 0..<width {
                    let pixel = line[column]
                    out[o] = UInt8(truncatingIfNeeded: pixel >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: pixel >> 8)
                    out[o + 2] = UInt8(truncatingIfNeeded: pixel)
                    o += 3
                }
            }
        }
        return ColorImage(width: width, height: height, channels: 3, samples: samples)
    }
}
