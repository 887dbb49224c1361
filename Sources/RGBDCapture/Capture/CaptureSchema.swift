/// The key names one exporter uses for the facts rgbd reads from a capture JSON.
///
/// Each exporter is one small value of this type; `CaptureSchema.all` is the list tried,
/// in order, by `CaptureReader`. A schema applies to a document when its intrinsic
/// matrix key is found in one of its calibration containers together with its other
/// required keys (reference dimensions, distortion center, lookup table). Value shapes
/// are shared: matrices may be column-major, row-major or flat; sizes `[w, h]`,
/// `{"width", "height"}` or `{"Width", "Height"}`; points `[x, y]`, `{"x", "y"}` or
/// `{"X", "Y"}`; lookup tables arrays of numbers or base64 little-endian float32
/// (docs/format.md).
package struct CaptureSchema: Sendable {
    /// Two keys that together give a pair (`…_width` and `…_height`).
    package struct SplitKeys: Sendable {
        /// The key of the first number (width, x).
        package var first: String
        /// The key of the second number (height, y).
        package var second: String

        /// The two keys.
        package init(_ first: String, _ second: String) {
            self.first = first
            self.second = second
        }
    }

    /// Name used in messages.
    package var name: String
    /// Objects that may hold the calibration keys; `""` is the top level.
    package var calibrationContainers: [String]
    /// Keys of the 3×3 intrinsic matrix.
    package var intrinsicMatrix: [String]
    /// Keys of the reference dimensions (one value holding both numbers).
    package var referenceDimensions: [String]
    /// Keys of the reference dimensions given as two numbers, tried after `referenceDimensions`.
    package var referenceDimensionsSplit: [SplitKeys] = []
    /// Keys of the lens distortion center (one value holding both numbers).
    package var distortionCenter: [String]
    /// Keys of the distortion center given as two numbers, tried after `distortionCenter`.
    package var distortionCenterSplit: [SplitKeys] = []
    /// Keys of the forward lookup table (rectified → distorted).
    package var lookupTable: [String]
    /// Keys of the inverse lookup table (distorted → rectified), optional.
    package var inverseLookupTable: [String]
    /// Keys of the pixel size in millimeters, optional.
    package var pixelSize: [String]
    /// Top-level keys of the depth map: rows of meters, a flat array of meters or a base64
    /// string of little-endian float32 meters.
    package var depth: [String]
    /// Keys (top level, then the calibration's object) of the width and height of a flat
    /// or base64 depth map.
    package var depthSize: [SplitKeys] = []
    /// Top-level keys naming a depth image (16-bit PNG in millimeters or float32 TIFF in
    /// meters), relative to the JSON's directory; used when the document has no depth map.
    package var depthFile: [String] = []

    /// The layout of the capture tutorial rgbd grew out of, and its variants in the wild.
    package static let canonical = CaptureSchema(
        name: "canonical",
        calibrationContainers: ["calibration_data", ""],
        intrinsicMatrix: ["intrinsic_matrix"],
        referenceDimensions: ["intrinsic_matrix_reference_dimensions"],
        distortionCenter: ["lens_distortion_center"],
        lookupTable: ["lens_distortion_lookup_table"],
        inverseLookupTable: ["inverse_lens_distortion_lookup_table"],
        pixelSize: ["pixel_size", "pixel_size_mm"],
        depth: ["depth_data"],
        depthSize: [SplitKeys("depth_width", "depth_height"), SplitKeys("depth_data_width", "depth_data_height")],
        depthFile: ["depth_file", "depth_image"])

    /// Flat snake_case with suffixed pairs, calibration under `camera_intrinsics`:
    /// `intrinsic_matrix_reference_dimensions_width` / `_height`,
    /// `lens_distortion_center_x` / `_y`, `pixel_size_mm`. That object's own `width` and
    /// `height` (of the image it was exported with) are not read.
    package static let snakeCaseFlat = CaptureSchema(
        name: "snake_case (camera_intrinsics)",
        calibrationContainers: ["camera_intrinsics", ""],
        intrinsicMatrix: ["intrinsic_matrix"],
        referenceDimensions: ["intrinsic_matrix_reference_dimensions"],
        referenceDimensionsSplit: [SplitKeys("intrinsic_matrix_reference_dimensions_width",
                                             "intrinsic_matrix_reference_dimensions_height")],
        distortionCenter: ["lens_distortion_center"],
        distortionCenterSplit: [SplitKeys("lens_distortion_center_x", "lens_distortion_center_y")],
        lookupTable: ["lens_distortion_lookup_table"],
        inverseLookupTable: ["inverse_lens_distortion_lookup_table"],
        pixelSize: ["pixel_size_mm", "pixel_size"],
        depth: ["depth_data", "depth_map"],
        depthSize: [SplitKeys("depth_width", "depth_height"), SplitKeys("depth_map_width", "depth_map_height")],
        depthFile: ["depth_file", "depth_image"])

    /// camelCase exporters (`intrinsicMatrix` as 9 numbers column-major, …).
    package static let camelCase = CaptureSchema(
        name: "camelCase",
        calibrationContainers: ["calibrationData", "calibration", ""],
        intrinsicMatrix: ["intrinsicMatrix"],
        referenceDimensions: ["intrinsicMatrixReferenceDimensions"],
        distortionCenter: ["lensDistortionCenter"],
        lookupTable: ["lensDistortionLookupTable"],
        inverseLookupTable: ["inverseLensDistortionLookupTable"],
        pixelSize: ["pixelSize"],
        depth: ["depthData", "depth_data"],
        depthSize: [SplitKeys("depthWidth", "depthHeight"), SplitKeys("depthDataWidth", "depthDataHeight")],
        depthFile: ["depthFile", "depthImage"])

    /// PascalCase, as face-capture apps write (`IntrinsicMatrix` as 9 numbers
    /// column-major, `IntrinsicMatrixReferenceDimensions` as `{Width, Height}`,
    /// `LensDistortionCenter` as `{X, Y}`, tables often base64 float32).
    package static let pascalCase = CaptureSchema(
        name: "PascalCase",
        calibrationContainers: ["CalibrationData", "CameraCalibrationData", "Calibration", ""],
        intrinsicMatrix: ["IntrinsicMatrix"],
        referenceDimensions: ["IntrinsicMatrixReferenceDimensions"],
        distortionCenter: ["LensDistortionCenter"],
        lookupTable: ["LensDistortionLookupTable"],
        inverseLookupTable: ["InverseLensDistortionLookupTable"],
        pixelSize: ["PixelSize"],
        depth: ["DepthData", "DepthMap"],
        depthSize: [SplitKeys("DepthWidth", "DepthHeight"), SplitKeys("DepthDataWidth", "DepthDataHeight")],
        depthFile: ["DepthFile", "DepthImage"])

    /// The schemas `CaptureReader` tries, in order.
    package static let all: [CaptureSchema] = [.canonical, .snakeCaseFlat, .camelCase, .pascalCase]

    /// Every top-level key that marks a document as a capture JSON: a schema's
    /// calibration container, intrinsic matrix (for a calibration at the top level),
    /// depth map or depth image key.
    package static let captureKeys: Set<String> = Set(all.flatMap { schema in
        schema.calibrationContainers.filter { !$0.isEmpty } + schema.intrinsicMatrix + schema.depth + schema.depthFile
    })

    /// Every top-level key any schema reads the depth map from.
    static let allDepthKeys: Set<String> = Set(all.flatMap(\.depth))

    /// Every top-level key any schema reads the name of a depth image from.
    static let allDepthFileKeys: Set<String> = Set(all.flatMap(\.depthFile))
}
