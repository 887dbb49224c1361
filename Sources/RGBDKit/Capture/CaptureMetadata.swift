/// What only some sources of a capture carry, beside the calibration, the depth map and
/// the color that every capture has: one value on the capture and on what is made from it
/// (`RectifiedCapture`, pipeline results), so that a new kind of metadata is one new field
/// here rather than an optional field on each type.
public struct CaptureMetadata: Sendable {
    /// For a Portrait photo: what its depth metadata says (kind, accuracy, value range).
    public var portrait: PortraitDepth?
    /// For a Portrait photo: its Portrait Effects Matte as stored (8-bit), if it has one.
    public var matte: ImageBuffer<UInt8>?

    /// Metadata from its parts (none by default).
    public init(portrait: PortraitDepth? = nil, matte: ImageBuffer<UInt8>? = nil) {
        self.portrait = portrait
        self.matte = matte
    }
}
