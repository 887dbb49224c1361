import RGBDKit

/// Writing a synthetic capture as the iPhone exporter does, plus its ground truth.
extension SyntheticCapture {
    /// The capture JSON, laid out as `JSONSerialization(.prettyPrinted)` writes it: the
    /// intrinsic matrix as three columns, depth rows of `Double(Float)` values.
    /// Pixels of `depth` that are NaN are written as `0` (a hole).
    package func captureJSON(depth: DepthMap) -> String {
        var out = ""
        out.reserveCapacity(depth.samples.count * 26 + 4096)
        func array(_ values: [String], indent: String) -> String {
            "[\n" + values.map { "\(indent)  \($0)" }.joined(separator: ",\n") + "\n\(indent)]"
        }
        func number(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : "\(v)" }
        let k = calibration.intrinsics
        let columns = [[k.fx, 0, 0], [0, k.fy, 0], [k.cx, k.cy, 1]].map { column in
            array(column.map(number), indent: "      ")
        }
        out += "{\n  \"calibration_data\" : {\n"
        out += "    \"intrinsic_matrix\" : " + array(columns, indent: "    ") + ",\n"
        out += "    \"pixel_size\" : \(number(calibration.pixelSize ?? 0.0014)),\n"
        out += "    \"intrinsic_matrix_reference_dimensions\" : "
            + array([String(k.width), String(k.height)], indent: "    ") + ",\n"
        out += "    \"lens_distortion_center\" : "
            + array([number(calibration.distortionCenter.x), number(calibration.distortionCenter.y)], indent: "    ") + ",\n"
        out += "    \"lens_distortion_lookup_table\" : "
            + array(calibration.lookupTable.map { number(Double($0)) }, indent: "    ") + ",\n"
        out += "    \"inverse_lens_distortion_lookup_table\" : "
            + array(calibration.inverseLookupTable.map { number(Double($0)) }, indent: "    ") + "\n"
        out += "  },\n  \"depth_data\" : [\n"
        for y in 0..<depth.height {
            out += "    [\n"
            for x in 0..<depth.width {
                let d = depth[x, y]
                out += "      "
                out += d.isFinite ? "\(Double(d))" : "0"
                out += x + 1 < depth.width ? ",\n" : "\n"
            }
            out += y + 1 < depth.height ? "    ],\n" : "    ]\n"
        }
        out += "  ]\n}"
        return out
    }

    /// The ground truth the tests (and curious users) compare against.
    package func truthJSON() -> String {
        let c = colorIntrinsics, d = depthIntrinsics
        func v3(_ p: SIMD3<Double>) -> String { "[\(p.x), \(p.y), \(p.z)]" }
        let corners = scene.boxFrontCorners.map(v3).joined(separator: ", ")
        // Tags: family, ID, black-square edge, tag-to-camera 4×4 (row-major; tag frame x
        // right, y down, z into the tag) and the corners in the detector's order.
        let tags = scene.tags.map { tag in
            let m = tag.pose.rows.flatMap { $0 }
            return "{\"family\": \"\(tag.family.rawValue)\", \"id\": \(tag.id), \"size\": \(tag.size), "
                + "\"tag_to_camera\": [\(m.map { "\($0)" }.joined(separator: ", "))], "
                + "\"corners_camera\": [\(tag.cornersInCamera.map(v3).joined(separator: ", "))]}"
        }.joined(separator: ", ")
        return """
        {
          "frame": "OpenCV camera frame: x right, y down, z forward; meters",
          "color_intrinsics": {"width": \(c.width), "height": \(c.height), "fx": \(c.fx), "fy": \(c.fy), "cx": \(c.cx), "cy": \(c.cy)},
          "depth_intrinsics": {"width": \(d.width), "height": \(d.height), "fx": \(d.fx), "fy": \(d.fy), "cx": \(d.cx), "cy": \(d.cy)},
          "wall": {"plane": "z = \(scene.wallZ)", "checker_size": \(scene.checkerSize), "checker_origin": [\(scene.checkerOrigin.x), \(scene.checkerOrigin.y)]},
          "floor": {"plane": "y = \(scene.floorY)"},
          "box": {"min": \(v3(scene.boxMin)), "max": \(v3(scene.boxMax)), "front_corners": [\(corners)]},
          "scene_axes": "the wall, floor and box are given in the scene's axes: the camera's axes, or with camera_to_scene those rotated (p_scene = R p_camera); gravity along the scene's +y",
          "camera_to_scene": \(scene.cameraToScene.map { "[\(v3($0.row0)), \(v3($0.row1)), \(v3($0.row2))]" } ?? "null"),
          "gravity_down_camera": \(v3(trueDown)),
          "tags": [\(tags)],
          "lens": "the capture's lens_distortion_lookup_table applied exactly (the synthetic images were distorted with its numerical inverse); rectifying with it gives the pinhole images these intrinsics describe"
        }

        """
    }

    /// Renders and writes `<stem>.jpg`, `<stem>.json` and `<stem>.truth.json` into
    /// `directory`. `holes` rectangles (in depth pixels) are written as 0 (no depth).
    @discardableResult
    package func write(to directory: String, stem: String, jpegQuality: Int = 95, supersampling: Int = 2,
                      holes: [(x: Range<Int>, y: Range<Int>)] = []) throws -> (json: String, image: String) {
        try FileSystem.createDirectory(directory)
        var depth = renderDepth()
        for hole in holes {
            for y in hole.y where y < depth.height {
                for x in hole.x where x < depth.width { depth[x, y] = .nan }
            }
        }
        let encoded = try JPEGCodec.encode(renderColor(supersampling: supersampling), quality: jpegQuality)
        let jpeg = exif.map { $0.inserted(into: encoded) } ?? encoded
        let jsonPath = Path.join(directory, "\(stem).json")
        let imagePath = Path.join(directory, "\(stem).jpg")
        let files = StagedFiles()
        try files.stage(imagePath, bytes: jpeg)
        try files.stage(jsonPath, bytes: Array(captureJSON(depth: depth).utf8))
        try files.stage(Path.join(directory, "\(stem).truth.json"), bytes: Array(truthJSON().utf8))
        try files.commit()
        return (jsonPath, imagePath)
    }
}
