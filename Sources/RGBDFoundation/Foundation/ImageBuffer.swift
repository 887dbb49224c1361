/// An image in memory: `height` rows of `width` pixels, each pixel `channels`
/// interleaved samples, rows stored one after another without padding.
///
/// The layout is that of TurboJPEG's and libpng's packed buffers: sample `c` of pixel
/// `(x, y)` is at `samples[y * rowStride + x * channels + c]`.
public struct ImageBuffer<Sample: BitwiseCopyable & Sendable>: Sendable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Interleaved samples per pixel (3 for RGB, 1 for depth).
    public let channels: Int
    /// The samples, row by row.
    public var samples: [Sample]

    /// Samples between the starts of two consecutive rows (`width * channels`).
    public var rowStride: Int { width * channels }

    /// Number of bytes a buffer for an image of this shape needs.
    package static func byteCount(width: Int, height: Int, channels: Int) -> Int {
        width * height * channels * MemoryLayout<Sample>.stride
    }

    /// Wraps existing samples; `samples.count` must be `width * height * channels`.
    public init(width: Int, height: Int, channels: Int, samples: [Sample]) {
        precondition(width >= 0 && height >= 0 && channels > 0, "invalid image shape")
        precondition(samples.count == width * height * channels, "sample count does not match the shape")
        self.width = width
        self.height = height
        self.channels = channels
        self.samples = samples
    }

    /// An image of the given shape with every sample set to `value`.
    public init(width: Int, height: Int, channels: Int, repeating value: Sample) {
        self.init(width: width, height: height, channels: channels,
                  samples: [Sample](repeating: value, count: width * height * channels))
    }

    /// Sample `c` of pixel `(x, y)`.
    @inlinable
    public subscript(x: Int, y: Int, c: Int = 0) -> Sample {
        get { samples[y * width * channels + x * channels + c] }
        set { samples[y * width * channels + x * channels + c] = newValue }
    }
}

/// An 8-bit RGB color image.
public typealias ColorImage = ImageBuffer<UInt8>

/// A depth map: one `Float` per pixel, meters along the optical axis (Z), `NaN` where
/// there is no depth.
public typealias DepthMap = ImageBuffer<Float>
