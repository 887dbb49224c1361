/// The key names one exporter uses for the facts rgbd reads from a capture JSON.
///
/// Each exporter is one small value of this type; `CaptureSchema.all` is the list tried,
/// in order, by `CaptureReader`. A schema applies to a document when its intrinsic
/// matrix key is found in one of its calibration containers. Value shapes are shared:
/// matrices may be column-major, row-major or flat; sizes `[w, h]` or
/// `{"width", "height"}`; points `[x, y]` or `{"x", "y"}` (docs/format.md).
public struct CaptureSchema: Sendable {
    /// Name used in messages.
    public var name: String
    /// Objects that may hold the calibration keys; `""` is the top level.
    public var calibrationContainers: [String]
    /// Keys of the 3×3 intrinsic matrix.
    public var intrinsicMatrix: [String]
    /// Keys of the reference dimensions.
    public var referenceDimensions: [String]
    /// Keys of the lens distortion center.
    public var distortionCenter: [String]
    /// Keys of the forward lookup table (rectified → distorted).
    public var lookupTable: [String]
    /// Keys of the inverse lookup table (distorted → rectified), optional.
    public var inverseLookupTable: [String]
    /// Keys of the pixel size in millimeters, optional.
    public var pixelSize: [String]
    /// Top-level keys of the depth map (rows of meters).
    public var depth: [String]

    /// The layout of the capture tutorial rgbd grew out of, and its variants in the wild.
    public static let canonical = CaptureSchema(
        name: "canonical",
        calibrationContainers: ["calibration_data", ""],
        intrinsicMatrix: ["intrinsic_matrix"],
        referenceDimensions: ["intrinsic_matrix_reference_dimensions"],
        distortionCenter: ["lens_distortion_center"],
        lookupTable: ["lens_distortion_lookup_table"],
        inverseLookupTable: ["inverse_lens_distortion_lookup_table"],
        pixelSize: ["pixel_size", "pixel_size_mm"],
        depth: ["depth_data"])

    /// camelCase exporters (`intrinsicMatrix` as 9 numbers column-major, …).
    public static let camelCase = CaptureSchema(
        name: "camelCase",
        calibrationContainers: ["calibrationData", "calibration", ""],
        intrinsicMatrix: ["intrinsicMatrix"],
        referenceDimensions: ["intrinsicMatrixReferenceDimensions"],
        distortionCenter: ["lensDistortionCenter"],
        lookupTable: ["lensDistortionLookupTable"],
        inverseLookupTable: ["inverseLensDistortionLookupTable"],
        pixelSize: ["pixelSize"],
        depth: ["depthData", "depth_data"])

    /// The schemas `CaptureReader` tries, in order.
    public static let all: [CaptureSchema] = [.canonical, .camelCase]

    /// Every top-level key any schema reads the depth map from.
    static let allDepthKeys: Set<String> = Set(all.flatMap(\.depth))
}
