/// What only some sources of a capture carry, beside the calibration, the depth map and
/// the color that every capture has: one value on the capture and on what is made from it
/// (`RectifiedCapture`, pipeline results), so that a new kind of metadata is one new field
/// here rather than an optional field on each type.
public struct CaptureMetadata: Sendable {
    /// For a Portrait photo: what its depth metadata says (kind, accuracy, value range).
    package var portrait: PortraitDepth?
    /// For a Portrait photo: its Portrait Effects Matte as stored (8-bit), if it has one.
    package var matte: ImageBuffer<UInt8>?
    /// What the photo's EXIF says about where it was taken, which way the camera faced and
    /// which way was down (docs/geo.md); nil when the photo has no EXIF.
    package var geo: GeoTag?
    /// How the photo asks to be shown (its EXIF orientation, or HEIF `irot` and `imir`);
    /// `.asStored` when it says nothing. The images stay as stored; `--upright` turns them.
    public var orientation: PhotoOrientation = .asStored

    /// Metadata from its parts (none by default).
    package init(portrait: PortraitDepth? = nil, matte: ImageBuffer<UInt8>? = nil) {
        self.portrait = portrait
        self.matte = matte
    }
}
