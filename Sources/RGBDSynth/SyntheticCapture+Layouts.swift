import RGBDKit

/// A capture JSON in the key sets and depth encodings of other exporters
/// (docs/format.md), for tests that check every layout reads as the canonical one.
package enum ExporterLayout: String, CaseIterable, Sendable {
    /// Flat snake_case under `camera_intrinsics` (suffixed pairs, 9-number matrix), the
    /// depth map as one flat array with `depth_width` / `depth_height`, and keys other
    /// exporters add.
    case snakeCaseFlat
    /// PascalCase (`IntrinsicMatrix`, `{Width, Height}`, `{X, Y}`), tables and depth map
    /// as base64 little-endian float32 with `/` written `\/`, as Swift's `JSONEncoder` does.
    case pascalCaseBase64
    /// camelCase with `{x, y}` points and a base64 depth map sized by `depthWidth` / `depthHeight`.
    case camelCaseBase64Depth
    /// The canonical calibration with no depth map (it is in an image beside the JSON).
    case canonicalWithoutDepth
}

extension SyntheticCapture {
    /// The capture JSON in `layout` with this capture's calibration and `depth` (NaN is
    /// written as 0 in arrays and as NaN in base64).
    package func captureJSON(depth: DepthMap, layout: ExporterLayout) -> String {
        let k = calibration.intrinsics
        let center = calibration.distortionCenter
        func number(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : "\(v)" }
        func numbers(_ values: [Float]) -> String { "[" + values.map { number(Double($0)) }.joined(separator: ", ") + "]" }
        func depthValues() -> String {
            "[" + depth.samples.map { $0.isFinite ? "\(Double($0))" : "0" }.joined(separator: ", ") + "]"
        }
        let matrix = "[\(number(k.fx)), 0, 0, 0, \(number(k.fy)), 0, \(number(k.cx)), \(number(k.cy)), 1]"
        let pixelSize = number(calibration.pixelSize ?? 0.0014)
        switch layout {
        case .snakeCaseFlat:
            return """
            {
              "session_token": "b0c4a2e1-77f3-4d7e-9a5e-2f6c1d1b8e90",
              "device_attitude": {"roll": 0.01, "pitch": -1.2, "yaw": 3.1},
              "camera_intrinsics": {
                "width": 1920, "height": 1440,
                "intrinsic_matrix": \(matrix),
                "intrinsic_matrix_reference_dimensions_width": \(k.width),
                "intrinsic_matrix_reference_dimensions_height": \(k.height),
                "lens_distortion_center_x": \(number(center.x)),
                "lens_distortion_center_y": \(number(center.y)),
                "lens_distortion_lookup_table": \(numbers(calibration.lookupTable)),
                "inverse_lens_distortion_lookup_table": \(numbers(calibration.inverseLookupTable)),
                "pixel_size_mm": \(pixelSize),
                "extrinsic_matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0]
              },
              "crop_rect": {"x": 0, "y": 0, "width": 1920, "height": 1440},
              "segmentation_mask": [[0, 1], [1, 0]],
              "depth_width": \(depth.width),
              "depth_height": \(depth.height),
              "depth_map": \(depthValues())
            }
            """
        case .pascalCaseBase64:
            return """
            {"CameraCalibrationData":{"IntrinsicMatrix":\(matrix),\
            "IntrinsicMatrixReferenceDimensions":{"Width":\(k.width),"Height":\(k.height)},\
            "LensDistortionCenter":{"X":\(number(center.x)),"Y":\(number(center.y))},\
            "LensDistortionLookupTable":"\(Self.base64JSON(calibration.lookupTable))",\
            "InverseLensDistortionLookupTable":"\(Self.base64JSON(calibration.inverseLookupTable))",\
            "PixelSize":\(pixelSize)},"SessionToken":"x","DepthWidth":\(depth.width),"DepthHeight":\(depth.height),\
            "DepthData":"\(Self.base64JSON(depth.samples))"}
            """
        case .camelCaseBase64Depth:
            return """
            {"calibration": {"intrinsicMatrix": \(matrix),
              "intrinsicMatrixReferenceDimensions": {"width": \(k.width), "height": \(k.height)},
              "lensDistortionCenter": {"x": \(number(center.x)), "y": \(number(center.y))},
              "lensDistortionLookupTable": \(numbers(calibration.lookupTable)),
              "inverseLensDistortionLookupTable": \(numbers(calibration.inverseLookupTable)), "pixelSize": \(pixelSize)},
             "depthWidth": \(depth.width), "depthHeight": \(depth.height),
             "depthData": "\(Self.base64JSON(depth.samples))"}
            """
        case .canonicalWithoutDepth:
            // The canonical document up to its depth member (the last one).
            let full = Array(captureJSON(depth: DepthMap(width: 1, height: 1, channels: 1, repeating: 1)).utf8)
            let marker = Array(",\n  \"depth_data\"".utf8)
            let cut = (0...(full.count - marker.count)).last { Array(full[$0..<($0 + marker.count)]) == marker } ?? full.count
            return String(decoding: full[..<cut], as: UTF8.self) + "\n}"
        }
    }

    /// Base64 of little-endian float32 values, with `/` escaped as `\/` the way
    /// Foundation's `JSONEncoder` writes a `Data` value inside a JSON string.
    package static func base64JSON(_ values: [Float]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(values.count * 4)
        for v in values {
            let bits = v.bitPattern
            bytes += [UInt8(bits & 0xFF), UInt8((bits >> 8) & 0xFF), UInt8((bits >> 16) & 0xFF), UInt8(bits >> 24)]
        }
        var out: [UInt8] = []
        for c in Base64.encode(bytes) {
            if c == 0x2F { out.append(0x5C) }
            out.append(c)
        }
        return String(decoding: out, as: UTF8.self)
    }
}
