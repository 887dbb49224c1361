/// A camera calibration as an iPhone capture records it (`AVCameraCalibrationData`),
/// at its reference dimensions.
public struct Calibration: Equatable, Sendable {
    /// Intrinsics at the reference dimensions (`intrinsic_matrix_reference_dimensions`).
    public var intrinsics: Intrinsics
    /// Millimeters per pixel at the reference dimensions, if recorded (informational).
    public var pixelSize: Double?
    /// Lens distortion center at the reference dimensions.
    public var distortionCenter: SIMD2<Double>
    /// `lens_distortion_lookup_table`: rectified → distorted magnifications.
    public var lookupTable: [Float]
    /// `inverse_lens_distortion_lookup_table`: distorted → rectified; empty if absent.
    public var inverseLookupTable: [Float]

    /// Makes a calibration from its values.
    public init(intrinsics: Intrinsics, pixelSize: Double?, distortionCenter: SIMD2<Double>,
                lookupTable: [Float], inverseLookupTable: [Float]) {
        self.intrinsics = intrinsics
        self.pixelSize = pixelSize
        self.distortionCenter = distortionCenter
        self.lookupTable = lookupTable
        self.inverseLookupTable = inverseLookupTable
    }

    /// Width and height of the pixel grid the intrinsics and distortion center refer to.
    public var referenceSize: (width: Int, height: Int) { (intrinsics.width, intrinsics.height) }

    /// The largest image side rgbd accepts in a calibration or a stated image size.
    package static let maxDimension = 1_000_000.0

    /// Whether `value`, read as an image's width or height (a reference dimension, a
    /// stated depth map size), is a whole number from 1 to `maxDimension`: the one rule
    /// for sizes read from a JSON or a Portrait photo's metadata.
    package static func isImageDimension(_ value: Double) -> Bool {
        value >= 1 && value <= maxDimension && value == value.rounded()
    }

    /// The calibration scaled to an image of `width × height` (docs/lens-model.md): distortion
    /// center and `fx, cx` scaled by `width / W`, `fy, cy` by `height / H`.
    public func scaled(toWidth width: Int, height: Int) -> ImageCalibration {
        let sx = Double(width) / Double(intrinsics.width)
        let sy = Double(height) / Double(intrinsics.height)
        let center = SIMD2(distortionCenter.x * sx, distortionCenter.y * sy)
        return ImageCalibration(
            intrinsics: intrinsics.scaled(toWidth: width, height: height),
            distortion: LensDistortion(center: center, table: lookupTable, width: width, height: height),
            inverseTable: inverseLookupTable)
    }

    /// Relative difference between the aspect ratio of a `width × height` image and the
    /// reference dimensions'.
    package func aspectMismatch(width: Int, height: Int) -> Double {
        let reference = Double(intrinsics.width) / Double(intrinsics.height)
        let image = Double(width) / Double(height)
        return abs(image / reference - 1)
    }

    /// How an image's shape agrees with the reference dimensions (docs/format.md, "Sizes").
    package enum AspectAgreement: Equatable, Sendable {
        /// The same aspect ratio, within `aspectRoundingTolerance` (whole-pixel sizes,
        /// such as a 3088×2320 photo of a 3088×2316 reference).
        case same
        /// A different aspect ratio that a crop of the frame to a camera's shape explains:
        /// square to `widestCropAspect`, in the reference's orientation (a 16:9 or a square
        /// photo of a 4:3 reference). Accepted with a warning; the calibration is scaled
        /// per axis.
        case crop
        /// A shape no crop or rounding explains (an image of the opposite orientation, or
        /// more elongated than 16:9): not an image of this calibration.
        case wrong
    }

    /// How far an image's aspect ratio may be from the reference's (or from the shapes of
    /// `AspectAgreement.crop`) and still count as the same: 1 %.
    package static let aspectRoundingTolerance = 0.01

    /// The most elongated crop cameras write, long side over short side: 16:9.
    package static let widestCropAspect = 16.0 / 9.0

    /// How a `width × height` image's shape agrees with the reference dimensions.
    package func aspectAgreement(width: Int, height: Int) -> AspectAgreement {
        let tolerance = Self.aspectRoundingTolerance
        if aspectMismatch(width: width, height: height) <= tolerance { return .same }
        let (W, H) = referenceSize
        let elongation = Double(max(width, height)) / Double(min(width, height))
        let referenceElongation = Double(max(W, H)) / Double(min(W, H))
        // A nearly square image or reference fits either orientation.
        let keepsOrientation = elongation <= 1 + tolerance || referenceElongation <= 1 + tolerance
            || (width > height) == (W > H)
        return keepsOrientation && elongation <= Self.widestCropAspect * (1 + tolerance) ? .crop : .wrong
    }
}

/// A calibration scaled to one image: the pinhole intrinsics of the rectified image and
/// the lens model that rectifies it.
public struct ImageCalibration: Equatable, Sendable {
    /// Intrinsics of the rectified image (the scaled intrinsic matrix).
    public var intrinsics: Intrinsics
    /// The forward model: rectified point → where it lies in the distorted image.
    public var distortion: LensDistortion
    /// The inverse table, empty if the capture had none.
    public var inverseTable: [Float]

    /// The inverse model (distorted → rectified) from the capture's inverse table, or nil
    /// if it had none. Use `distortion.invert(_:)` where exactness matters.
    public var inverseDistortion: LensDistortion? {
        inverseTable.count >= 2 ? distortion.with(table: inverseTable) : nil
    }
}

/// Where a calibration's values were found in its file (JSON key paths), for messages.
package struct CalibrationKeys: Equatable, Sendable {
    /// Key path of the intrinsic matrix.
    package var intrinsicMatrix: String
    /// Key path of the reference dimensions.
    package var referenceDimensions: String

    /// Key paths; the defaults are the canonical layout's.
    package init(intrinsicMatrix: String = "intrinsic_matrix",
                referenceDimensions: String = "intrinsic_matrix_reference_dimensions") {
        self.intrinsicMatrix = intrinsicMatrix
        self.referenceDimensions = referenceDimensions
    }
}

extension Calibration {
    /// Whether the principal point lies as it would in the reference frame as given
    /// (true) or in its transpose (false): the one nearer the center in units of each
    /// frame's sides. Nil when the reference is square or the point is about as near to
    /// both (within 5 % of a side), so that it tells nothing.
    package var principalPointAgreesWithReference: Bool? {
        let (W, H) = (Double(intrinsics.width), Double(intrinsics.height))
        guard W != H else { return nil }
        let (cx, cy) = (intrinsics.cx, intrinsics.cy)
        let asGiven = abs(cx / W - 0.5) + abs(cy / H - 0.5)
        let transposed = abs(cx / H - 0.5) + abs(cy / W - 0.5)
        guard abs(asGiven - transposed) > 0.05 else { return nil }
        return asGiven < transposed
    }
}
