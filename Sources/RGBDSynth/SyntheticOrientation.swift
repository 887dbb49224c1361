/// Photos that ask to be shown turned: an EXIF `Orientation` written into a JPEG.
package enum SyntheticOrientation {
    /// `jpeg` with an EXIF APP1 segment right after SOI (`SyntheticEXIF`, nothing set but
    /// `Orientation` = `value`, 1…8), big-endian (`MM`, as iPhones write it) or little-endian (`II`).
    package static func tagged(_ jpeg: [UInt8], exif value: Int, bigEndian: Bool = true) -> [UInt8] {
        var exif = SyntheticEXIF()
        exif.orientation = value
        exif.littleEndian = !bigEndian
        return exif.inserted(into: jpeg)
    }
}
