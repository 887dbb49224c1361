extension CaptureInfo {
    /// Version of the JSON form (`info_version`); docs/info.md describes it. Fields are
    /// only ever added within a version.
    package static let jsonVersion = 1

    /// The capture as one entry of `rgbd info --json` (docs/info.md).
    package var jsonValue: JSONValue {
        typealias M = JSONValue.Member
        func intrinsics(_ k: Intrinsics) -> JSONValue {
            .object([M("fx", .number(k.fx)), M("fy", .number(k.fy)), M("cx", .number(k.cx)), M("cy", .number(k.cy))])
        }
        func geometry(_ g: ImageGeometry) -> [M] {
            [M("width", .int(g.width)), M("height", .int(g.height)),
             M("scale", .array([.number(g.scale.x), .number(g.scale.y)])),
             M("aspect_mismatch", .number(g.aspectMismatch)),
             M("intrinsics", intrinsics(g.intrinsics)),
             M("distortion_center", .point(g.distortionCenter)),
             M("max_radius", .number(g.maxRadius))]
        }
        func table(_ t: TableSummary) -> JSONValue {
            .object([M("count", .int(t.count)), M("first", .number(t.first)), M("last", .number(t.last)),
                     M("min", .number(t.min)), M("max", .number(t.max)), M("monotonic", .bool(t.monotonic)),
                     M("radius_rises", .bool(t.radiusRises))])
        }
        let stats = depthStatistics
        var meters: [M] = [M("min", .number(stats.min)), M("max", .number(stats.max)), M("mean", .number(stats.mean))]
        for percent in [5, 50, 95] {
            meters.append(M("p\(percent)", .number(stats.percentiles.first { $0.percent == percent }?.meters)))
        }
        var depthMembers = geometry(depth) + [
            M("valid_pixels", .int(stats.validCount)), M("holes", .int(stats.holeCount)),
            M("hole_fraction", .number(stats.holeFraction)), M("meters", .object(meters)),
        ]
        // Present when the reader reports them (docs/info.md).
        if let depthSource { depthMembers.append(M("source", .string(depthSource))) }
        if let discardedSentinels { depthMembers.append(M("discarded_sentinels", .int(discardedSentinels))) }
        // What the depth values are, how accurate, and from where (JSON, depth image, Portrait XMP).
        depthMembers.append(M("kind", .string(portrait?.kind.rawValue ?? "depth")))
        depthMembers.append(M("accuracy", portrait?.accuracy.map { .string($0) } ?? .null))
        depthMembers.append(M("origin", .string(depthOrigin)))
        if let portrait {
            depthMembers.append(M("portrait", .object([
                M("container", .string(portrait.container)),
                M("stored_format", portrait.storedFormat.map { .string($0) } ?? .null),
                M("native_format", portrait.nativeFormat.map { .string($0) } ?? .null),
                M("bits", .int(portrait.bits)),
                M("int_range", .array([.number(portrait.intRange.x), .number(portrait.intRange.y)])),
                M("float_range", .array([.number(portrait.floatRange.x), .number(portrait.floatRange.y)])),
                M("quality", portrait.quality.map { .string($0) } ?? .null),
                M("filtered", portrait.filtered.map { .bool($0) } ?? .null),
                M("relative_note", portrait.isRelative ? .string(PortraitDepth.relativeNote) : .null),
                M("matte", matteSize.map { .object([M("width", .int($0.width)), M("height", .int($0.height))]) } ?? .null),
                M("extrinsic_matrix", portrait.extrinsicMatrix.map { .array($0.map { .number($0) }) } ?? .null),
            ])))
        }

        let k = calibration.intrinsics
        return .object([
            M("info_version", .int(Self.jsonVersion)),
            M("input", .string(json)),
            M("status", .string("ok")),
            M("schema", .string(schema)),
            M("json", .object([M("path", .string(json)), M("bytes", jsonBytes.map { .int($0) } ?? .null)])),
            M("reference", .object([M("width", .int(k.width)), M("height", .int(k.height))])),
            M("calibration", .object([
                M("intrinsics", intrinsics(k)),
                M("distortion_center", .point(calibration.distortionCenter)),
                M("pixel_size_mm", .number(calibration.pixelSize)),
            ])),
            M("photo", .object([M("path", .string(photo.path)), M("format", .string(photo.format.rawValue)),
                                M("bytes", .int(photo.fileBytes))] + geometry(color))),
            M("depth", .object(depthMembers)),
            M("lookup_table", table(self.table)),
            M("inverse_lookup_table", inverseTable.map(table) ?? .null),
            M("corner_displacement", .object([
                M("max", .number(maxCornerDisplacement)),
                M("corners", .array(corners.map { c in
                    .object([M("corner", .string(c.name)), M("pixel", .point(c.pixel)),
                             M("distorted", .point(c.distorted)), M("pixels", .number(c.pixels))])
                })),
            ])),
            M("lens_distortion_lookup_table", .array(calibration.lookupTable.map { .number(shortestDouble($0)) })),
            M("inverse_lens_distortion_lookup_table",
              calibration.inverseLookupTable.isEmpty ? .null
                : .array(calibration.inverseLookupTable.map { .number(shortestDouble($0)) })),
            M("inverse_round_trip", inverseConsistency.map { c in
                .object([M("grid", .array([.int(c.columns), .int(c.rows)])), M("max", .number(c.maxError)),
                         M("mean", .number(c.meanError)), M("beyond_table", .int(c.beyondTable))])
            } ?? .null),
            M("geo", geo?.jsonValue ?? .null),
            M("placemarks", .array(placemarks.map(\.jsonValue))),
            M("warnings", .array(warnings.map { .string($0) })),
            M("errors", .array(errors.map { .string($0.description) })),
        ])
    }

    /// Where the depth map came from, in one word: `json` (in the capture JSON),
    /// `depth_image` (a PNG or TIFF beside it or named by it) or `portrait_xmp` (a
    /// Portrait photo's depth image and XMP).
    package var depthOrigin: String {
        if portrait != nil { return "portrait_xmp" }
        if let source = depthSource, source.contains("in the JSON") { return "json" }
        return depthSource == nil ? "json" : "depth_image"
    }

    /// The `rgbd info --json` entry of an input that failed: `error` is the one-line
    /// message also printed on stderr.
    package static func failureJSON(input: String, error: any Error) -> JSONValue {
        .object([
            JSONValue.Member("info_version", .int(jsonVersion)),
            JSONValue.Member("input", .string(input)),
            JSONValue.Member("status", .string("failed")),
            JSONValue.Member("error", .string("\(error)")),
        ])
    }
}
