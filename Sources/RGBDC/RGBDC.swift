// The C interface declared in Sources/CRGBD/include/rgbd.h, implemented over RGBDKit.
// Each function validates its arguments, catches every error, records the message for
// rgbd_last_error() and returns a status: nothing Swift throws or traps on crosses the
// boundary for bad input.
import CRGBD
import RGBDKit

// MARK: - Errors

/// Status code of an error (rgbd.h's RGBD_ERROR_*), recording its message.
private func fail(_ error: any Error) -> Int32 {
    guard let error = error as? RGBDError else {
        ThreadMessage.set("\(error)")
        return RGBD_ERROR_INVALID_ARGUMENT
    }
    // Arguments as rgbd.h (and Python) name them.
    ThreadMessage.set(error.description { argument in
        switch argument {
        case .image: "image_path"
        case .depthRange: "min_depth, max_depth"
        case .stride: "stride"
        case .edgeThreshold: "edge_threshold"
        case .overwrite: "pass overwrite to replace it"
        case .frame: "frame"
        case .crs: "crs"
        case .minConfidence: "min_confidence"
        case .every: "every"
        case .triangles: "triangles"
        case .maxError: "max_error"
        case .textureSize: "texture_size"
        case .memoryBudget: "max_memory_mb"
        }
    })
    switch error.kind {
    case .io: return RGBD_ERROR_IO
    case .invalidJSON: return RGBD_ERROR_INVALID_JSON
    case .invalidCapture: return RGBD_ERROR_INVALID_CAPTURE
    case .invalidImage: return RGBD_ERROR_INVALID_IMAGE
    case .invalidArgument: return RGBD_ERROR_INVALID_ARGUMENT
    case .invalidScene: return RGBD_ERROR_INVALID_SCENE
    }
}

/// Runs `body`, turning a thrown error into its status.
private func guarded(_ body: () throws -> Void) -> Int32 {
    do {
        try body()
        return RGBD_OK
    } catch {
        return fail(error)
    }
}

private func argument(_ message: String) -> RGBDError { RGBDError(.invalidArgument, message) }

private func string(_ pointer: UnsafePointer<CChar>?, _ name: String) throws -> String {
    guard let pointer else { throw argument("\(name) is NULL") }
    return String(cString: pointer)
}

/// Checks a caller buffer: not NULL and at least `needed` elements.
private func buffer<T>(_ pointer: UnsafeMutablePointer<T>?, _ size: Int, needed: Int, _ name: String) throws
    -> UnsafeMutableBufferPointer<T> {
    guard let pointer else { throw argument("\(name) is NULL") }
    guard size >= needed else { throw argument("\(name) holds \(size) elements, \(needed) are needed") }
    return UnsafeMutableBufferPointer(start: pointer, count: needed)
}

// MARK: - Handles

/// What a `rgbd_capture *` points to: the capture and what has been computed from it.
private final class CaptureHandle: @unchecked Sendable {
    let capture: Capture
    private let lock = Lock()
    private var rectifiedCache: RectifiedCapture?
    private var cloudCache: (options: PointCloudOptions, cloud: PointCloud)?
    private var alignedCache: (alignment: PixelAlignment, pair: RectifiedCapture)?

    init(_ capture: Capture) { self.capture = capture }

    /// The rectified capture, computed once.
    var rectified: RectifiedCapture {
        lock.withLock {
            if let rectifiedCache { return rectifiedCache }
            let rectified = capture.rectified()
            rectifiedCache = rectified
            return rectified
        }
    }

    /// The pixel-aligned pair for `alignment`; the last one is kept (one call per buffer).
    func aligned(_ alignment: PixelAlignment) throws -> RectifiedCapture {
        try lock.withLock {
            if let alignedCache, alignedCache.alignment == alignment { return alignedCache.pair }
            let pair = try capture.rectified(alignedTo: alignment)
            alignedCache = (alignment, pair)
            return pair
        }
    }

    /// The point cloud for `options`; the last one is kept (count, then points).
    func cloud(_ options: PointCloudOptions) -> PointCloud {
        let rectified = self.rectified
        return lock.withLock {
            if let cloudCache, cloudCache.options == options { return cloudCache.cloud }
            let cloud = PointCloud(rectified, options: options)
            cloudCache = (options, cloud)
            return cloud
        }
    }
}

/// The object behind a handle the library handed out (`retained`), not consumed;
/// `name` is the parameter's for the error when it is NULL.
private func object<T: AnyObject>(_ pointer: OpaquePointer?, _ name: String) throws -> T {
    guard let pointer else { throw argument("\(name) is NULL") }
    return Unmanaged<T>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue()
}

/// A handle for the caller owning one reference to `object` (released by `release`).
private func retained(_ object: AnyObject) -> OpaquePointer {
    OpaquePointer(Unmanaged.passRetained(object).toOpaque())
}

/// Releases the caller's reference a handle of `type` holds; NULL is accepted.
private func release<T: AnyObject>(_ pointer: OpaquePointer?, as type: T.Type) {
    guard let pointer else { return }
    Unmanaged<T>.fromOpaque(UnsafeRawPointer(pointer)).release()
}

private func handle(_ pointer: OpaquePointer?) throws -> CaptureHandle {
    try object(pointer, "capture")
}

private func store(_ capture: Capture, _ out: UnsafeMutablePointer<OpaquePointer?>) {
    out.pointee = retained(CaptureHandle(capture))
}

// MARK: - Library

@c @implementation
public func rgbd_version() -> UnsafePointer<CChar>! {
    UnsafeRawPointer(RGBDVersion.staticString.utf8Start).assumingMemoryBound(to: CChar.self)
}

@c @implementation
public func rgbd_last_error() -> UnsafePointer<CChar>! {
    ThreadMessage.current
}

// MARK: - Captures

@c @implementation
public func rgbd_capture_load(_ jsonPath: UnsafePointer<CChar>!, _ imagePath: UnsafePointer<CChar>!,
                              _ out: UnsafeMutablePointer<OpaquePointer?>!) -> Int32 {
    guarded {
        guard let out else { throw argument("out is NULL") }
        let json = try string(jsonPath, "json_path")
        let image = imagePath.map { String(cString: $0) }
        store(try Capture.load(json: json, image: image), out)
    }
}

@c @implementation
public func rgbd_capture_load_memory(_ json: UnsafePointer<UInt8>!, _ jsonSize: Int, _ jpeg: UnsafePointer<UInt8>!,
                                     _ jpegSize: Int, _ name: UnsafePointer<CChar>!,
                                     _ out: UnsafeMutablePointer<OpaquePointer?>!) -> Int32 {
    guarded {
        guard let out else { throw argument("out is NULL") }
        guard let json, let jpeg else { throw argument("json and jpeg must not be NULL") }
        // size_t beyond Int.max arrives negative; no buffer is that large.
        guard jsonSize >= 0, jpegSize >= 0 else {
            throw argument("json_size and jpeg_size must be sizes of buffers, not \(UInt(bitPattern: jsonSize)) and \(UInt(bitPattern: jpegSize))")
        }
        let label = name.map { String(cString: $0) } ?? "memory"
        let capture = try Capture.load(jsonBytes: Array(UnsafeBufferPointer(start: json, count: jsonSize)),
                                       jpegBytes: Array(UnsafeBufferPointer(start: jpeg, count: jpegSize)), name: label)
        store(capture, out)
    }
}

@c @implementation
public func rgbd_capture_load_photo_memory(_ photo: UnsafePointer<UInt8>!, _ photoSize: Int, _ name: UnsafePointer<CChar>!,
                                           _ out: UnsafeMutablePointer<OpaquePointer?>!) -> Int32 {
    guarded {
        guard let out else { throw argument("out is NULL") }
        guard let photo else { throw argument("photo must not be NULL") }
        guard photoSize >= 0 else { throw argument("photo_size must be the size of a buffer, not \(UInt(bitPattern: photoSize))") }
        let label = name.map { String(cString: $0) } ?? "memory"
        store(try Capture.load(photoBytes: Array(UnsafeBufferPointer(start: photo, count: photoSize)), name: label), out)
    }
}

@c @implementation
public func rgbd_capture_destroy(_ capture: OpaquePointer!) {
    release(capture, as: CaptureHandle.self)
}

private func size(_ width: Int, _ height: Int, _ w: UnsafeMutablePointer<Int32>?, _ h: UnsafeMutablePointer<Int32>?) {
    w?.pointee = Int32(clamping: width)
    h?.pointee = Int32(clamping: height)
}

@c @implementation
public func rgbd_capture_color_size(_ capture: OpaquePointer!, _ width: UnsafeMutablePointer<Int32>!,
                                    _ height: UnsafeMutablePointer<Int32>!) -> Int32 {
    guarded {
        let c = try handle(capture).capture.color
        size(c.width, c.height, width, height)
    }
}

@c @implementation
public func rgbd_capture_depth_size(_ capture: OpaquePointer!, _ width: UnsafeMutablePointer<Int32>!,
                                    _ height: UnsafeMutablePointer<Int32>!) -> Int32 {
    guarded {
        let d = try handle(capture).capture.depth
        size(d.width, d.height, width, height)
    }
}

@c @implementation
public func rgbd_capture_reference_size(_ capture: OpaquePointer!, _ width: UnsafeMutablePointer<Int32>!,
                                        _ height: UnsafeMutablePointer<Int32>!) -> Int32 {
    guarded {
        let r = try handle(capture).capture.calibration.referenceSize
        size(r.width, r.height, width, height)
    }
}

@c @implementation
public func rgbd_capture_intrinsics(_ capture: OpaquePointer!, _ which: Int32,
                                    _ out: UnsafeMutablePointer<rgbd_intrinsics>!) -> Int32 {
    guarded {
        guard let out else { throw argument("out is NULL") }
        let capture = try handle(capture).capture
        let k: Intrinsics
        switch which {
        case RGBD_INTRINSICS_REFERENCE: k = capture.calibration.intrinsics
        case RGBD_INTRINSICS_COLOR: k = capture.calibration.intrinsics.scaled(toWidth: capture.color.width, height: capture.color.height)
        case RGBD_INTRINSICS_DEPTH: k = capture.calibration.intrinsics.scaled(toWidth: capture.depth.width, height: capture.depth.height)
        default: throw argument("which must be RGBD_INTRINSICS_REFERENCE, _COLOR or _DEPTH, not \(which)")
        }
        out.pointee = rgbd_intrinsics(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy,
                                      width: Int32(clamping: k.width), height: Int32(clamping: k.height))
    }
}

@c @implementation
public func rgbd_capture_distortion_center(_ capture: OpaquePointer!, _ x: UnsafeMutablePointer<Double>!,
                                           _ y: UnsafeMutablePointer<Double>!) -> Int32 {
    guarded {
        let center = try handle(capture).capture.calibration.distortionCenter
        x?.pointee = center.x
        y?.pointee = center.y
    }
}

@c @implementation
public func rgbd_capture_lookup_table(_ capture: OpaquePointer!, _ inverse: Int32, _ values: UnsafeMutablePointer<Float>!,
                                      _ capacity: Int, _ count: UnsafeMutablePointer<Int>!) -> Int32 {
    guarded {
        let calibration = try handle(capture).capture.calibration
        let table = inverse != 0 ? calibration.inverseLookupTable : calibration.lookupTable
        if values != nil {
            let out = try buffer(values, capacity, needed: table.count, "values")
            for (i, v) in table.enumerated() { out[i] = v }
        }
        count?.pointee = table.count
    }
}

@c @implementation
public func rgbd_capture_color(_ capture: OpaquePointer!, _ rgb: UnsafeMutablePointer<UInt8>!, _ size: Int) -> Int32 {
    guarded {
        let color = try handle(capture).capture.color
        let out = try buffer(rgb, size, needed: color.samples.count, "rgb")
        _ = out.initialize(from: color.samples)
    }
}

@c @implementation
public func rgbd_capture_depth(_ capture: OpaquePointer!, _ depth: UnsafeMutablePointer<Float>!, _ count: Int) -> Int32 {
    guarded {
        let map = try handle(capture).capture.depth
        let out = try buffer(depth, count, needed: map.samples.count, "depth")
        _ = out.initialize(from: map.samples)
    }
}

@c @implementation
public func rgbd_capture_rectified_color(_ capture: OpaquePointer!, _ rgb: UnsafeMutablePointer<UInt8>!,
                                         _ size: Int) -> Int32 {
    guarded {
        let h = try handle(capture)
        let out = try buffer(rgb, size, needed: h.capture.color.samples.count, "rgb")
        _ = out.initialize(from: h.rectified.color.samples)
    }
}

@c @implementation
public func rgbd_capture_rectified_depth(_ capture: OpaquePointer!, _ depth: UnsafeMutablePointer<Float>!,
                                         _ count: Int) -> Int32 {
    guarded {
        let h = try handle(capture)
        let out = try buffer(depth, count, needed: h.capture.depth.samples.count, "depth")
        _ = out.initialize(from: h.rectified.depth.samples)
    }
}

/// The `RGBD_ALIGN_*` value `value` of a call that needs a shared grid.
private func pixelAlignment(_ value: Int32) throws -> PixelAlignment {
    switch value {
    case RGBD_ALIGN_DEPTH: .depth
    case RGBD_ALIGN_COLOR: .color
    default: throw argument("align_to must be RGBD_ALIGN_DEPTH or RGBD_ALIGN_COLOR, not \(value)")
    }
}

@c @implementation
public func rgbd_capture_aligned(_ capture: OpaquePointer!, _ alignTo: Int32, _ rgb: UnsafeMutablePointer<UInt8>!,
                                 _ rgbSize: Int, _ depth: UnsafeMutablePointer<Float>!, _ depthCount: Int,
                                 _ intrinsics: UnsafeMutablePointer<rgbd_intrinsics>!) -> Int32 {
    guarded {
        let h = try handle(capture)
        let alignment = try pixelAlignment(alignTo)
        var k = try h.capture.alignedIntrinsics(alignment)
        // Check every buffer before computing anything.
        let rgbOut = try rgb.map { try buffer($0, rgbSize, needed: k.width * k.height * 3, "rgb") }
        let depthOut = try depth.map { try buffer($0, depthCount, needed: k.width * k.height, "depth") }
        if rgbOut != nil || depthOut != nil {
            let pair = try h.aligned(alignment)
            if let rgbOut { _ = rgbOut.update(fromContentsOf: pair.color.samples) }
            if let depthOut { _ = depthOut.update(fromContentsOf: pair.depth.samples) }
            k = pair.depthIntrinsics
        }
        intrinsics?.pointee = rgbd_intrinsics(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy,
                                              width: Int32(clamping: k.width), height: Int32(clamping: k.height))
    }
}

// MARK: - Geotag

@c @implementation
public func rgbd_capture_geo(_ capture: OpaquePointer!, _ out: UnsafeMutablePointer<rgbd_geo>!) -> Int32 {
    guarded {
        guard let out else { throw argument("out is NULL") }
        let geo = try handle(capture).capture.metadata.geo
        let l = geo?.location, h = geo?.heading, g = geo?.gravity
        out.pointee = rgbd_geo(
            has_location: l == nil ? 0 : 1, latitude: l?.latitude ?? .nan, longitude: l?.longitude ?? .nan,
            altitude: l?.altitude ?? .nan, horizontal_error: l?.horizontalError ?? .nan,
            has_heading: h == nil ? 0 : 1, heading: h?.degrees ?? .nan, heading_magnetic: h?.isMagnetic == true ? 1 : 0,
            has_gravity: g == nil ? 0 : 1, down: (g?.down.x ?? .nan, g?.down.y ?? .nan, g?.down.z ?? .nan),
            pitch: g?.pitch ?? .nan, roll: g?.roll ?? .nan, gravity_g: g?.magnitude ?? .nan)
    }
}

// MARK: - Point clouds

@c @implementation
public func rgbd_cloud_options_default(_ options: UnsafeMutablePointer<rgbd_cloud_options>!) {
    guard let options else { return }
    options.pointee = cOptions(PointCloudOptions())
}

private func cOptions(_ o: PointCloudOptions) -> rgbd_cloud_options {
    rgbd_cloud_options(min_depth: o.minDepth, max_depth: o.maxDepth, stride: Int32(clamping: o.stride),
                       keep_edges: o.dropEdges ? 0 : 1, edge_threshold: o.edgeThreshold,
                       normals: o.normals ? 1 : 0, axes: o.axes == .opengl ? RGBD_AXES_OPENGL : RGBD_AXES_OPENCV,
                       frame: RGBD_FRAME_CAMERA)
}

/// The options of `pointer` for `capture` (whose photo's EXIF places a level or ENU frame).
private func swiftOptions(_ pointer: UnsafePointer<rgbd_cloud_options>?, for capture: Capture) throws -> PointCloudOptions {
    var o = try swiftOptions(pointer)
    guard let c = pointer?.pointee else { return o }
    o.frame = try WorldFrame.forCapture(try frameKind(c.frame), capture: capture)
    try o.validate()
    return o
}

/// The `RGBD_FRAME_*` value `value`.
private func frameKind(_ value: Int32) throws -> WorldFrame.Kind {
    switch value {
    case RGBD_FRAME_CAMERA: .camera
    case RGBD_FRAME_LEVEL: .level
    case RGBD_FRAME_ENU: .enu
    default: throw argument("frame must be RGBD_FRAME_CAMERA, RGBD_FRAME_LEVEL or RGBD_FRAME_ENU (\(value))")
    }
}

private func swiftOptions(_ pointer: UnsafePointer<rgbd_cloud_options>?) throws -> PointCloudOptions {
    var o = PointCloudOptions()
    guard let c = pointer?.pointee else { return o }
    o.minDepth = c.min_depth
    o.maxDepth = c.max_depth
    o.stride = Int(c.stride)
    o.dropEdges = c.keep_edges == 0
    o.edgeThreshold = c.edge_threshold
    o.normals = c.normals != 0
    try o.validate()
    switch c.axes {
    case RGBD_AXES_OPENCV: o.axes = .opencv
    case RGBD_AXES_OPENGL: o.axes = .opengl
    default: throw argument("axes must be RGBD_AXES_OPENCV or RGBD_AXES_OPENGL")
    }
    return o
}

@c @implementation
public func rgbd_capture_point_cloud_count(_ capture: OpaquePointer!, _ options: UnsafePointer<rgbd_cloud_options>!,
                                           _ count: UnsafeMutablePointer<Int>!) -> Int32 {
    guarded {
        guard let count else { throw argument("count is NULL") }
        let h = try handle(capture)
        count.pointee = try h.cloud(swiftOptions(options, for: h.capture)).count
    }
}

@c @implementation
public func rgbd_capture_point_cloud(_ capture: OpaquePointer!, _ options: UnsafePointer<rgbd_cloud_options>!,
                                     _ points: UnsafeMutablePointer<Float>!, _ colors: UnsafeMutablePointer<UInt8>!,
                                     _ normals: UnsafeMutablePointer<Float>!, _ capacity: Int,
                                     _ written: UnsafeMutablePointer<Int>!) -> Int32 {
    guarded {
        let h = try handle(capture)
        let settings = try swiftOptions(options, for: h.capture)
        let cloud = h.cloud(settings)
        let n = cloud.count
        guard capacity >= 0, capacity <= Int.max / 3 else { throw argument("capacity \(capacity) is out of range") }
        let p = try buffer(points, capacity * 3, needed: n * 3, "points")
        let c = try buffer(colors, capacity * 3, needed: n * 3, "colors")
        // Normals are written only when asked for in the options and given a buffer.
        let normalsOut = normals == nil || !settings.normals ? nil : try buffer(normals, capacity * 3, needed: n * 3, "normals")
        guard let pointsBase = p.baseAddress else { written?.pointee = 0; return }
        written?.pointee = cloud.fill(rows: 0..<cloud.depth.height, points: pointsBase, colors: c.baseAddress,
                                      normals: normalsOut?.baseAddress)
    }
}

@c @implementation
public func rgbd_capture_write_ply(_ capture: OpaquePointer!, _ options: UnsafePointer<rgbd_cloud_options>!,
                                   _ path: UnsafePointer<CChar>!, _ ascii: Int32) -> Int32 {
    guarded {
        let h = try handle(capture)
        let destination = try string(path, "path")
        try h.rectified.writeCloud(to: destination, options: swiftOptions(options, for: h.capture),
                                   encoding: ascii != 0 ? .ascii : .binaryLittleEndian)
    }
}

@c @implementation
public func rgbd_write_ply(_ path: UnsafePointer<CChar>!, _ points: UnsafePointer<Float>!, _ colors: UnsafePointer<UInt8>!,
                           _ normals: UnsafePointer<Float>!, _ count: Int, _ ascii: Int32) -> Int32 {
    guarded {
        let destination = try string(path, "path")
        guard let points else { throw argument("points is NULL") }
        guard count >= 0, count <= Int.max / 4 else { throw argument("count \(count) is out of range") }
        try PLYWriter.write(path: destination, points: UnsafeBufferPointer(start: points, count: 3 * count),
                            colors: colors.map { UnsafeBufferPointer(start: $0, count: 3 * count) },
                            normals: normals.map { UnsafeBufferPointer(start: $0, count: 3 * count) },
                            encoding: ascii != 0 ? .ascii : .binaryLittleEndian,
                            comments: ["generated by rgbd \(RGBDVersion.string)", "units meters"])
    }
}

// MARK: - Preview

@c @implementation
public func rgbd_capture_preview(_ capture: OpaquePointer!, _ sheetWidth: Int32, _ minDepth: Float, _ maxDepth: Float,
                                 _ rgb: UnsafeMutablePointer<UInt8>!, _ size: Int, _ width: UnsafeMutablePointer<Int32>!,
                                 _ height: UnsafeMutablePointer<Int32>!) -> Int32 {
    preview(capture, sheetWidth, minDepth, maxDepth, upright: false, rgb, size, width, height)
}

@c @implementation
public func rgbd_capture_preview_upright(_ capture: OpaquePointer!, _ sheetWidth: Int32, _ minDepth: Float,
                                         _ maxDepth: Float, _ upright: Int32, _ rgb: UnsafeMutablePointer<UInt8>!,
                                         _ size: Int, _ width: UnsafeMutablePointer<Int32>!,
                                         _ height: UnsafeMutablePointer<Int32>!) -> Int32 {
    preview(capture, sheetWidth, minDepth, maxDepth, upright: upright != 0, rgb, size, width, height)
}

/// The two preview calls: the sheet's size, then (with `rgb`) the sheet.
private func preview(_ capture: OpaquePointer?, _ sheetWidth: Int32, _ minDepth: Float, _ maxDepth: Float, upright: Bool,
                     _ rgb: UnsafeMutablePointer<UInt8>?, _ size: Int, _ width: UnsafeMutablePointer<Int32>?,
                     _ height: UnsafeMutablePointer<Int32>?) -> Int32 {
    guarded {
        let capture = try handle(capture).capture
        var options = PreviewOptions()
        options.width = sheetWidth == 0 ? PreviewLayout.defaultWidth : Int(sheetWidth)
        options.minDepth = minDepth
        options.maxDepth = maxDepth == 0 ? nil : maxDepth
        options.upright = upright
        try options.validate()
        let layout = try PreviewSheet.layout(capture, options: options)
        width?.pointee = Int32(clamping: layout.width)
        height?.pointee = Int32(clamping: layout.height)
        guard rgb != nil else { return }
        let out = try buffer(rgb, size, needed: layout.width * layout.height * 3, "rgb")
        let sheet = try PreviewSheet.render(capture, options: options)
        _ = out.initialize(from: sheet.samples)
    }
}

// MARK: - Rectifying frames

private func lens(_ pointer: UnsafePointer<rgbd_lens>?, width: Int32, height: Int32) throws -> LensDistortion {
    guard let l = pointer?.pointee else { throw argument("lens is NULL") }
    guard let table = l.table else { throw argument("lens.table is NULL") }
    guard l.table_count >= 2, l.table_count <= 1 << 20 else { throw argument("lens.table_count must be at least 2") }
    return try LensDistortion.forFrame(
        center: SIMD2(l.center_x, l.center_y), referenceWidth: Int(l.reference_width),
        referenceHeight: Int(l.reference_height), table: Array(UnsafeBufferPointer(start: table, count: l.table_count)),
        width: Int(width), height: Int(height))
}

/// A caller's `max_relative_step`: 0 for the default.
private func depthStep(_ value: Float) throws -> Float {
    let step = value == 0 ? Rectifier.defaultMaxRelativeDepthStep : value
    guard Rectifier.isValidDepthStep(step) else { throw argument("max_relative_step must be positive (or 0 for the default)") }
    return step
}

@c @implementation
public func rgbd_rectify_u8(_ lensPointer: UnsafePointer<rgbd_lens>!, _ src: UnsafePointer<UInt8>!, _ width: Int32,
                            _ height: Int32, _ channels: Int32, _ dst: UnsafeMutablePointer<UInt8>!) -> Int32 {
    guarded {
        let distortion = try lens(lensPointer, width: width, height: height)
        guard [1, 3, 4].contains(channels) else { throw argument("channels must be 1, 3 or 4, not \(channels)") }
        guard let src, let dst else { throw argument("src and dst must not be NULL") }
        let count = Int(width) * Int(height) * Int(channels)
        guard dst + count <= src || src + count <= dst else { throw argument("src and dst overlap") }
        Rectifier().rectify(UnsafeBufferPointer(start: src, count: count), channels: Int(channels), distortion: distortion,
                            into: UnsafeMutableBufferPointer(start: dst, count: count))
    }
}

@c @implementation
public func rgbd_rectify_f32(_ lensPointer: UnsafePointer<rgbd_lens>!, _ src: UnsafePointer<Float>!, _ width: Int32,
                             _ height: Int32, _ maxRelativeStep: Float, _ dst: UnsafeMutablePointer<Float>!) -> Int32 {
    guarded {
        let distortion = try lens(lensPointer, width: width, height: height)
        guard let src, let dst else { throw argument("src and dst must not be NULL") }
        let step = try depthStep(maxRelativeStep)
        let count = Int(width) * Int(height)
        guard UnsafePointer(dst) + count <= src || src + count <= UnsafePointer(dst) else { throw argument("src and dst overlap") }
        Rectifier(maxRelativeDepthStep: step).rectify(UnsafeBufferPointer(start: src, count: count), distortion: distortion,
                                                      into: UnsafeMutableBufferPointer(start: dst, count: count))
    }
}

// MARK: - Rectifying video frames

private func rectifier(_ pointer: OpaquePointer?) throws -> FrameRectifier {
    try object(pointer, "rectifier")
}

/// A caller's size_t: beyond Int.max it arrives negative, and no buffer is that large.
private func byteCount(_ value: Int, _ name: String) throws -> Int {
    guard value >= 0 else { throw argument("\(name) is out of range (\(UInt(bitPattern: value)))") }
    return value
}

private func plane(_ pointer: UnsafeRawPointer?, _ rowBytes: Int, _ size: Int, _ name: String) throws -> FramePlane {
    let count = try byteCount(size, "\(name)_size"), stride = try byteCount(rowBytes, "\(name)_row_bytes")
    guard let pointer else { throw argument("\(name) is NULL") }
    return FramePlane(UnsafeRawBufferPointer(start: pointer, count: count), rowBytes: stride)
}

private func mutablePlane(_ pointer: UnsafeMutableRawPointer?, _ rowBytes: Int, _ size: Int, _ name: String) throws
    -> MutableFramePlane {
    let count = try byteCount(size, "\(name)_size"), stride = try byteCount(rowBytes, "\(name)_row_bytes")
    guard let pointer else { throw argument("\(name) is NULL") }
    return MutableFramePlane(UnsafeMutableRawBufferPointer(start: pointer, count: count), rowBytes: stride)
}

@c @implementation
public func rgbd_rectifier_create(_ lensPointer: UnsafePointer<rgbd_lens>!, _ width: Int32, _ height: Int32,
                                  _ maxRelativeStep: Float, _ maxMapBytes: Int,
                                  _ out: UnsafeMutablePointer<OpaquePointer?>!) -> Int32 {
    guarded {
        guard let out else { throw argument("out is NULL") }
        let distortion = try lens(lensPointer, width: width, height: height)
        let step = try depthStep(maxRelativeStep)
        // size_t beyond Int.max (SIZE_MAX: no bound) arrives negative.
        let limit = maxMapBytes < 0 ? Int.max : maxMapBytes
        let rectifier = try FrameRectifier(distortion: distortion, maxRelativeDepthStep: step, mapByteLimit: limit)
        out.pointee = retained(rectifier)
    }
}

@c @implementation
public func rgbd_rectifier_destroy(_ rectifier: OpaquePointer!) {
    release(rectifier, as: FrameRectifier.self)
}

@c @implementation
public func rgbd_rectifier_info(_ pointer: OpaquePointer!, _ bytesHeld: UnsafeMutablePointer<Int>!,
                                _ chromaWidth: UnsafeMutablePointer<Int32>!, _ chromaHeight: UnsafeMutablePointer<Int32>!) -> Int32 {
    guarded {
        let r = try rectifier(pointer)
        bytesHeld?.pointee = r.bytesHeld
        size(r.chromaWidth, r.chromaHeight, chromaWidth, chromaHeight)
    }
}

@c @implementation
public func rgbd_rectifier_apply_u8(_ pointer: OpaquePointer!, _ channels: Int32, _ src: UnsafePointer<UInt8>!,
                                    _ srcRowBytes: Int, _ srcSize: Int, _ dst: UnsafeMutablePointer<UInt8>!,
                                    _ dstRowBytes: Int, _ dstSize: Int) -> Int32 {
    guarded {
        let r = try rectifier(pointer)
        try r.rectify(plane(src, srcRowBytes, srcSize, "src"), channels: Int(channels),
                      into: mutablePlane(dst, dstRowBytes, dstSize, "dst"))
    }
}

@c @implementation
public func rgbd_rectifier_apply_f32(_ pointer: OpaquePointer!, _ src: UnsafePointer<Float>!, _ srcRowBytes: Int,
                                     _ srcSize: Int, _ dst: UnsafeMutablePointer<Float>!, _ dstRowBytes: Int,
                                     _ dstSize: Int) -> Int32 {
    guarded {
        let r = try rectifier(pointer)
        try r.rectifyDepth(plane(src, srcRowBytes, srcSize, "src"), into: mutablePlane(dst, dstRowBytes, dstSize, "dst"))
    }
}

@c @implementation
public func rgbd_rectifier_apply_nv12(_ pointer: OpaquePointer!, _ srcY: UnsafePointer<UInt8>!, _ srcYRowBytes: Int,
                                      _ srcYSize: Int, _ srcCbCr: UnsafePointer<UInt8>!, _ srcCbCrRowBytes: Int,
                                      _ srcCbCrSize: Int, _ dstY: UnsafeMutablePointer<UInt8>!, _ dstYRowBytes: Int,
                                      _ dstYSize: Int, _ dstCbCr: UnsafeMutablePointer<UInt8>!, _ dstCbCrRowBytes: Int,
                                      _ dstCbCrSize: Int) -> Int32 {
    guarded {
        let r = try rectifier(pointer)
        try r.rectifyNV12(luma: plane(srcY, srcYRowBytes, srcYSize, "src_y"),
                          chroma: plane(srcCbCr, srcCbCrRowBytes, srcCbCrSize, "src_cbcr"),
                          intoLuma: mutablePlane(dstY, dstYRowBytes, dstYSize, "dst_y"),
                          chroma: mutablePlane(dstCbCr, dstCbCrRowBytes, dstCbCrSize, "dst_cbcr"))
    }
}

// MARK: - Scenes

/// What a `rgbd_scene *` points to: the scene and a cursor that keeps its place.
private final class SceneHandle: @unchecked Sendable {
    /// The scene; replaced (with its poses) by `replace` only, the cursors with it.
    private(set) var scene: Scene
    private let lock = Lock()
    private var cursors: [Bool: Scene.Cursor] = [:]

    init(_ scene: Scene) { self.scene = scene }

    /// The same scan with other poses (or fewer frames): the cursors start again.
    func replace(_ scene: Scene) {
        lock.withLock {
            self.scene = scene
            cursors = [:]
        }
    }

    /// Frame `position`, read by the cursor with or without color (one per kind, so a
    /// depth-only pass does not decode video).
    func frame(_ position: Int, color: Bool) throws -> SceneFrame {
        try lock.withLock {
            let cursor = try cursors[color] ?? scene.cursor(color: color)
            cursors[color] = cursor
            return try cursor.frame(at: position)
        }
    }
}

private func sceneHandle(_ pointer: OpaquePointer?) throws -> SceneHandle {
    try object(pointer, "scene")
}

private func framePosition(_ scene: Scene, _ frame: Int) throws -> Int {
    guard frame >= 0, frame < scene.frames.count else {
        throw argument("frame \(UInt(bitPattern: frame)) is beyond the scene's \(scene.frames.count) frames")
    }
    return frame
}

@c @implementation
public func rgbd_scene_open(_ path: UnsafePointer<CChar>!, _ out: UnsafeMutablePointer<OpaquePointer?>!) -> Int32 {
    guarded {
        guard let out else { throw argument("out is NULL") }
        let scene = try Scene.open(try string(path, "path"))
        out.pointee = retained(SceneHandle(scene))
    }
}

@c @implementation
public func rgbd_scene_destroy(_ scene: OpaquePointer!) {
    release(scene, as: SceneHandle.self)
}

@c @implementation
public func rgbd_scene_info(_ scene: OpaquePointer!, _ frameCount: UnsafeMutablePointer<Int>!,
                            _ colorWidth: UnsafeMutablePointer<Int32>!, _ colorHeight: UnsafeMutablePointer<Int32>!,
                            _ depthWidth: UnsafeMutablePointer<Int32>!, _ depthHeight: UnsafeMutablePointer<Int32>!) -> Int32 {
    guarded {
        let s = try sceneHandle(scene).scene
        frameCount?.pointee = s.frames.count
        colorWidth?.pointee = Int32(s.colorSize?.width ?? 0)
        colorHeight?.pointee = Int32(s.colorSize?.height ?? 0)
        depthWidth?.pointee = Int32(s.depthSize.width)
        depthHeight?.pointee = Int32(s.depthSize.height)
    }
}

@c @implementation
public func rgbd_scene_frame_info(_ scene: OpaquePointer!, _ frame: Int,
                                  _ out: UnsafeMutablePointer<rgbd_frame_info>!) -> Int32 {
    guarded {
        let s = try sceneHandle(scene).scene
        guard let out else { throw argument("out is NULL") }
        let info = s.frames[try framePosition(s, frame)]
        func k(_ i: Intrinsics) -> rgbd_intrinsics {
            rgbd_intrinsics(fx: i.fx, fy: i.fy, cx: i.cx, cy: i.cy, width: Int32(i.width), height: Int32(i.height))
        }
        var result = rgbd_frame_info()
        result.index = Int64(info.index)
        result.time = info.time ?? .nan
        withUnsafeMutableBytes(of: &result.pose) { raw in
            let values = raw.bindMemory(to: Double.self)
            for (i, v) in info.pose.matrix.enumerated() { values[i] = v }
        }
        result.color = k(info.colorIntrinsics)
        result.depth = k(info.depthIntrinsics)
        out.pointee = result
    }
}

@c @implementation
public func rgbd_scene_read_frame(_ scene: OpaquePointer!, _ frame: Int, _ depth: UnsafeMutablePointer<Float>!,
                                  _ depthCount: Int, _ confidence: UnsafeMutablePointer<UInt8>!, _ confidenceSize: Int,
                                  _ rgb: UnsafeMutablePointer<UInt8>!, _ rgbSize: Int) -> Int32 {
    guarded {
        let handle = try sceneHandle(scene)
        let s = handle.scene
        let position = try framePosition(s, frame)
        let pixels = s.depthSize.width * s.depthSize.height
        // Check every buffer before reading anything.
        let depthOut = try depth.map { try buffer($0, depthCount, needed: pixels, "depth") }
        let confidenceOut = try confidence.map { try buffer($0, confidenceSize, needed: pixels, "confidence") }
        var rgbOut: UnsafeMutableBufferPointer<UInt8>?
        if let rgb {
            guard let size = s.colorSize else { throw argument("rgb: the scene has no color frames") }
            rgbOut = try buffer(rgb, rgbSize, needed: size.width * size.height * 3, "rgb")
        }
        let read = try handle.frame(position, color: rgbOut != nil)
        if let depthOut { _ = depthOut.update(fromContentsOf: read.depth.samples) }
        if let confidenceOut {
            if let map = read.confidence { _ = confidenceOut.update(fromContentsOf: map.samples) }
            else { confidenceOut.update(repeating: 255) }
        }
        if let rgbOut, let color = read.color { _ = rgbOut.update(fromContentsOf: color.samples) }
    }
}

// MARK: - rgbd rectify's output files

@c @implementation
public func rgbd_rectify_options_default(_ options: UnsafeMutablePointer<rgbd_rectify_options>!) {
    guard let options else { return }
    options.pointee = rgbd_rectify_options(align_to: RGBD_ALIGN_NONE, upright: 0, crop_valid: 0, small_png: 0,
                                           max_blend_step: 0.05,
                                           max_valid_depth: CaptureReadingOptions.defaultMaxValidDepth)
}

@c @implementation
public func rgbd_rectify_files(_ jsonPath: UnsafePointer<CChar>!, _ imagePath: UnsafePointer<CChar>!,
                               _ directory: UnsafePointer<CChar>!, _ options: UnsafePointer<rgbd_rectify_options>!,
                               _ warnings: UnsafeMutablePointer<UnsafePointer<CChar>?>!) -> Int32 {
    warnings?.pointee = nil
    return guarded {
        let json = try string(jsonPath, "json_path")
        let image = imagePath.map { String(cString: $0) }
        let output = try string(directory, "directory")
        var settings = rgbd_rectify_options()
        rgbd_rectify_options_default(&settings)
        if let options { settings = options.pointee }
        let alignment: PixelAlignment?
        switch settings.align_to {
        case RGBD_ALIGN_NONE: alignment = nil
        case RGBD_ALIGN_DEPTH: alignment = .depth
        case RGBD_ALIGN_COLOR: alignment = .color
        default: throw argument("align_to must be RGBD_ALIGN_NONE, RGBD_ALIGN_DEPTH or RGBD_ALIGN_COLOR")
        }
        guard settings.max_blend_step > 0, settings.max_blend_step < 1 else {
            throw argument("max_blend_step must be between 0 and 1")
        }
        guard settings.max_valid_depth > 0, settings.max_valid_depth.isFinite else {
            throw argument("max_valid_depth must be a positive number of meters")
        }
        let result = try RectifyPipeline.run(
            json: json, image: image, directory: output,
            rectifier: Rectifier(maxRelativeDepthStep: settings.max_blend_step), alignment: alignment,
            geometry: OutputGeometry(upright: settings.upright != 0, cropToValid: settings.crop_valid != 0),
            pngEffort: settings.small_png != 0 ? .small : .fast,
            reading: CaptureReadingOptions(maxValidDepth: settings.max_valid_depth))
        ThreadMessage.returned.set(result.warnings.joined(separator: "\n"))
        warnings?.pointee = ThreadMessage.returned.current
    }
}

@c @implementation
public func rgbd_capture_depth_accuracy(_ capture: OpaquePointer!,
                                        _ accuracy: UnsafeMutablePointer<UnsafePointer<CChar>?>!) -> Int32 {
    guarded {
        guard let accuracy else { throw argument("accuracy is NULL") }
        ThreadMessage.returned.set(try handle(capture).capture.metadata.portrait?.accuracy ?? "")
        accuracy.pointee = ThreadMessage.returned.current
    }
}

// MARK: - Scene export

@c @implementation
public func rgbd_export_options_default(_ options: UnsafeMutablePointer<rgbd_export_options>!) {
    guard let options else { return }
    let o = SceneExportOptions(format: .nerfstudio)
    options.pointee = rgbd_export_options(
        every: Int32(o.selection.every), max_frames: 0, sharpest: 0, image_format: RGBD_EXPORT_IMAGES_DEFAULT,
        jpeg_quality: Int32(o.jpegQuality), downscale: Int32(o.downscale), min_confidence: Int32(o.minConfidence.rawValue),
        colmap_text: 0, overwrite: 0, frame: RGBD_FRAME_CAMERA, depth_size: RGBD_EXPORT_DEPTH_DEFAULT)
}

@c @implementation
public func rgbd_scene_export(_ scene: OpaquePointer!, _ directory: UnsafePointer<CChar>!, _ format: UnsafePointer<CChar>!,
                              _ options: UnsafePointer<rgbd_export_options>!, _ frames: UnsafeMutablePointer<Int>!) -> Int32 {
    guarded {
        let s = try sceneHandle(scene).scene
        let path = try string(directory, "directory")
        let name = try string(format, "format")
        guard let layout = SceneExportFormat(rawValue: name) else {
            throw argument("format \"\(RGBDError.shown(name))\" is none of " + SceneExportFormat.allCases.map(\.rawValue).joined(separator: ", "))
        }
        var o = SceneExportOptions(format: layout)
        if let c = options?.pointee {
            o.selection = FrameSelection(every: Int(c.every), maxFrames: c.max_frames > 0 ? Int(c.max_frames) : nil,
                                         sharpest: c.sharpest != 0)
            switch c.image_format {
            case RGBD_EXPORT_IMAGES_DEFAULT: o.imageFormat = nil
            case RGBD_EXPORT_IMAGES_JPEG: o.imageFormat = .jpeg
            case RGBD_EXPORT_IMAGES_PNG: o.imageFormat = .png
            default: throw argument("image_format \(c.image_format) is none of RGBD_EXPORT_IMAGES_*")
            }
            switch c.depth_size {
            case RGBD_EXPORT_DEPTH_DEFAULT: o.depthSize = nil
            case RGBD_EXPORT_DEPTH_SENSOR: o.depthSize = .sensor
            case RGBD_EXPORT_DEPTH_IMAGE: o.depthSize = .image
            default: throw argument("depth_size \(c.depth_size) is none of RGBD_EXPORT_DEPTH_*")
            }
            o.jpegQuality = Int(c.jpeg_quality)
            o.downscale = Int(c.downscale)
            o.minConfidence = try ConfidenceLevel(validating: Int(c.min_confidence))
            o.colmapText = c.colmap_text != 0
            o.overwrite = c.overwrite != 0
            o.frame = try WorldFrame.forScene(try frameKind(c.frame), scene: s)
        }
        let result = try SceneExport.run(s, to: path, options: o)
        frames?.pointee = result.frames
    }
}

// MARK: - Fusion

/// What a `rgbd_mesh *` points to: the fusion, and the scene and world frame it was
/// fused from (for texturing at writing).
private final class MeshHandle: @unchecked Sendable {
    let fused: SceneFusion
    let scene: Scene
    let frame: WorldFrame
    var mesh: TriangleMesh { fused.mesh }
    var comments: [String] { fused.comments }
    init(_ fused: SceneFusion, scene: Scene, frame: WorldFrame) {
        self.fused = fused
        self.scene = scene
        self.frame = frame
    }
}

private func meshHandle(_ pointer: OpaquePointer?) throws -> MeshHandle {
    try object(pointer, "mesh")
}

@c @implementation
public func rgbd_fuse_options_default(_ options: UnsafeMutablePointer<rgbd_fuse_options>!) {
    guard let options else { return }
    let o = SceneFusionOptions()
    options.pointee = rgbd_fuse_options(voxel: o.voxel ?? 0, trunc: 0, min_depth: o.points.minDepth, max_depth: o.points.maxDepth,
                                        min_confidence: Int32(o.minConfidence.rawValue), keep_edges: o.points.dropEdges ? 0 : 1,
                                        edge_threshold: o.points.edgeThreshold, every: Int32(o.every),
                                        min_fragment: Int32(o.minFragmentTriangles), max_memory_mb: 0,
                                        frame: RGBD_FRAME_CAMERA, min_weight: o.minWeight ?? -1, triangles: 0, max_error: 0)
}

@c @implementation
public func rgbd_refine_options_default(_ options: UnsafeMutablePointer<rgbd_refine_options>!) {
    guard let options else { return }
    let o = PoseRefinementOptions()
    options.pointee = rgbd_refine_options(voxel: o.model.voxel ?? 0, min_depth: o.model.points.minDepth,
                                          max_depth: o.model.points.maxDepth,
                                          min_confidence: Int32(o.model.minConfidence.rawValue), max_memory_mb: 0)
}

private func refinementOptions(_ pointer: UnsafePointer<rgbd_refine_options>?) throws -> PoseRefinementOptions {
    var o = PoseRefinementOptions()
    guard let c = pointer?.pointee else { return o }
    o.model.voxel = c.voxel == 0 ? nil : c.voxel
    o.model.points.minDepth = c.min_depth
    o.model.points.maxDepth = c.max_depth
    o.model.minConfidence = try ConfidenceLevel(validating: Int(c.min_confidence))
    guard c.max_memory_mb >= 0, c.max_memory_mb <= 1 << 30 else { throw argument("max_memory_mb must be 0 or a number of MB") }
    o.model.memoryBudget = c.max_memory_mb == 0 ? nil : Int(c.max_memory_mb) << 20
    try o.validate()
    return o
}

@c @implementation
public func rgbd_scene_refine(_ scene: OpaquePointer!, _ options: UnsafePointer<rgbd_refine_options>!,
                              _ poses: UnsafeMutablePointer<Double>!, _ poseCapacity: Int,
                              _ report: UnsafeMutablePointer<rgbd_refine_report>!) -> Int32 {
    guarded {
        let s = try sceneHandle(scene).scene
        if poses != nil, poseCapacity < s.frames.count {
            throw argument("pose_capacity is \(poseCapacity), the scene has \(s.frames.count) frames")
        }
        let refined = try PoseRefinement.run(s, options: try refinementOptions(options))
        if let poses {
            for (i, pose) in refined.poses.enumerated() {
                for (j, v) in pose.matrix.enumerated() { poses[16 * i + j] = v }
            }
        }
        report?.pointee = rgbd_refine_report(frames: refined.poses.count, tracked: refined.tracked,
                                             undecided: refined.undecided, corrected: refined.corrected,
                                             residual_before: refined.residualBefore, residual_after: refined.residualAfter,
                                             voxel: refined.voxel, truncation: refined.truncation)
    }
}

@c @implementation
public func rgbd_scene_set_poses(_ scene: OpaquePointer!, _ poses: UnsafePointer<Double>!, _ count: Int,
                                 _ source: UnsafePointer<CChar>!) -> Int32 {
    guarded {
        let handle = try sceneHandle(scene)
        guard let poses else { throw argument("poses is NULL") }
        guard count == handle.scene.frames.count else {
            throw argument("count is \(count), the scene has \(handle.scene.frames.count) frames")
        }
        let matrices = (0..<count).map { i in
            Pose(row0: SIMD3(poses[16 * i], poses[16 * i + 1], poses[16 * i + 2]),
                 row1: SIMD3(poses[16 * i + 4], poses[16 * i + 5], poses[16 * i + 6]),
                 row2: SIMD3(poses[16 * i + 8], poses[16 * i + 9], poses[16 * i + 10]),
                 translation: SIMD3(poses[16 * i + 3], poses[16 * i + 7], poses[16 * i + 11]))
        }
        let described = try source.map { try string($0, "source") } ?? "set through the C interface"
        handle.replace(try handle.scene.replacingPoses(matrices, source: described))
    }
}

@c @implementation
public func rgbd_scene_load_poses(_ scene: OpaquePointer!, _ path: UnsafePointer<CChar>!,
                                  _ missing: UnsafeMutablePointer<Int>!) -> Int32 {
    guarded {
        let handle = try sceneHandle(scene)
        let file = try string(path, "path")
        let trajectory = try PoseTrajectory.read(file)
        let (replaced, left) = try handle.scene.replacingPoses(with: trajectory, source: "from \(file)", file: file)
        handle.replace(replaced)
        missing?.pointee = left.count
    }
}

private func fusionOptions(_ pointer: UnsafePointer<rgbd_fuse_options>?, for scene: Scene) throws -> SceneFusionOptions {
    var o = SceneFusionOptions()
    guard let c = pointer?.pointee else { return o }
    o.points.frame = try WorldFrame.forScene(try frameKind(c.frame), scene: scene)
    o.voxel = c.voxel == 0 ? nil : c.voxel
    o.trunc = c.trunc == 0 ? nil : c.trunc
    o.points.minDepth = c.min_depth
    o.points.maxDepth = c.max_depth
    o.minConfidence = try ConfidenceLevel(validating: Int(c.min_confidence))
    o.points.dropEdges = c.keep_edges == 0
    o.points.edgeThreshold = c.edge_threshold
    o.every = Int(c.every)
    o.minFragmentTriangles = Int(c.min_fragment)
    guard c.max_memory_mb >= 0, c.max_memory_mb <= 1 << 30 else { throw argument("max_memory_mb must be 0 or a number of MB") }
    o.memoryBudget = c.max_memory_mb == 0 ? nil : Int(c.max_memory_mb) << 20
    o.minWeight = c.min_weight < 0 ? nil : c.min_weight
    guard c.triangles >= 0 else { throw argument("triangles must be 0 (no count) or a number of triangles") }
    guard c.max_error >= 0 else { throw argument("max_error must be 0 (no bound) or a distance in meters") }
    if c.triangles > 0 || c.max_error > 0 {
        o.simplification = MeshSimplification(targetTriangles: c.triangles > 0 ? Int(c.triangles) : nil,
                                              maxError: c.max_error > 0 ? c.max_error : nil)
    }
    try o.validate()
    return o
}

@c @implementation
public func rgbd_scene_fuse(_ scene: OpaquePointer!, _ options: UnsafePointer<rgbd_fuse_options>!,
                            _ out: UnsafeMutablePointer<OpaquePointer?>!) -> Int32 {
    guarded {
        guard let out else { throw argument("out is NULL") }
        let s = try sceneHandle(scene).scene
        let o = try fusionOptions(options, for: s)
        let fused = try SceneFusion.build(s, options: o)
        out.pointee = retained(MeshHandle(fused, scene: s, frame: o.points.frame))
    }
}

@c @implementation
public func rgbd_mesh_destroy(_ mesh: OpaquePointer!) {
    release(mesh, as: MeshHandle.self)
}

@c @implementation
public func rgbd_mesh_counts(_ mesh: OpaquePointer!, _ vertexCount: UnsafeMutablePointer<Int>!,
                             _ faceCount: UnsafeMutablePointer<Int>!) -> Int32 {
    guarded {
        let m = try meshHandle(mesh).mesh
        vertexCount?.pointee = m.vertexCount
        faceCount?.pointee = m.faceCount
    }
}

@c @implementation
public func rgbd_mesh_copy(_ mesh: OpaquePointer!, _ positions: UnsafeMutablePointer<Float>!,
                           _ colors: UnsafeMutablePointer<UInt8>!, _ normals: UnsafeMutablePointer<Float>!,
                           _ vertexCapacity: Int, _ faces: UnsafeMutablePointer<UInt32>!, _ faceCapacity: Int) -> Int32 {
    guarded {
        let m = try meshHandle(mesh).mesh
        // Check every buffer before writing any.
        if positions != nil || colors != nil || normals != nil, vertexCapacity < m.vertexCount {
            throw argument("vertex_capacity is \(vertexCapacity), the mesh has \(m.vertexCount) vertices")
        }
        if faces != nil, faceCapacity < m.faceCount {
            throw argument("face_capacity is \(faceCapacity), the mesh has \(m.faceCount) triangles")
        }
        if let positions { _ = UnsafeMutableBufferPointer(start: positions, count: m.positions.count).update(fromContentsOf: m.positions) }
        if let colors { _ = UnsafeMutableBufferPointer(start: colors, count: m.colors.count).update(fromContentsOf: m.colors) }
        if let normals { _ = UnsafeMutableBufferPointer(start: normals, count: m.normals.count).update(fromContentsOf: m.normals) }
        if let faces { _ = UnsafeMutableBufferPointer(start: faces, count: m.faces.count).update(fromContentsOf: m.faces) }
    }
}

@c @implementation
public func rgbd_mesh_comments(_ mesh: OpaquePointer!, _ buffer: UnsafeMutablePointer<CChar>!, _ capacity: Int,
                               _ length: UnsafeMutablePointer<Int>!) -> Int32 {
    guarded {
        let text = Array(try meshHandle(mesh).comments.joined(separator: "\n").utf8)
        length?.pointee = text.count
        guard let buffer else { return }
        guard capacity > text.count else {
            throw argument("capacity is \(capacity) bytes, the comments take \(text.count + 1) with their NUL")
        }
        for (i, byte) in text.enumerated() { buffer[i] = CChar(bitPattern: byte) }
        buffer[text.count] = 0
    }
}

@c @implementation
public func rgbd_mesh_write_options_default(_ options: UnsafeMutablePointer<rgbd_mesh_write_options>!) {
    guard let options else { return }
    options.pointee = rgbd_mesh_write_options(texture_size: Int32(TexturingOptions().side), ascii: 0, max_memory_mb: 0)
}

@c @implementation
public func rgbd_mesh_write(_ mesh: OpaquePointer!, _ path: UnsafePointer<CChar>!,
                            _ options: UnsafePointer<rgbd_mesh_write_options>!, _ textured: UnsafeMutablePointer<Double>!) -> Int32 {
    guarded {
        let handle = try meshHandle(mesh)
        let destination = try string(path, "path")
        var c = rgbd_mesh_write_options()
        rgbd_mesh_write_options_default(&c)
        if let options { c = options.pointee }
        guard c.max_memory_mb >= 0, c.max_memory_mb <= 1 << 30 else { throw argument("max_memory_mb must be 0 or a number of MB") }
        var texturing: TexturingOptions? = nil
        if c.texture_size != 0 {
            texturing = TexturingOptions(side: Int(c.texture_size), memoryBudget: c.max_memory_mb == 0 ? nil : Int(c.max_memory_mb) << 20)
            try texturing?.validate()
        }
        guard SceneFusion.fileExtensions.contains(Path.pathExtension(destination)) else {
            throw RGBDError(.invalidArgument, file: destination, "a mesh is written as .ply, .glb, .obj or .html (nothing was written)")
        }
        try SceneFusion.checkRequirements(forWriting: destination)
        let result = try handle.fused.write(to: destination, scene: handle.scene, frame: handle.frame, texturing: texturing,
                                            encoding: c.ascii != 0 ? .ascii : .binaryLittleEndian)
        textured?.pointee = result?.coverage ?? -1
    }
}

/// What a `rgbd_textured_mesh *` points to.
private final class TexturedMeshHandle: @unchecked Sendable {
    let texture: TexturedMesh
    init(_ texture: TexturedMesh) { self.texture = texture }
}

private func texturedMeshHandle(_ pointer: OpaquePointer?) throws -> TexturedMeshHandle {
    try object(pointer, "mesh")
}

@c @implementation
public func rgbd_mesh_texture(_ mesh: OpaquePointer!, _ options: UnsafePointer<rgbd_mesh_write_options>!,
                              _ out: UnsafeMutablePointer<OpaquePointer?>!) -> Int32 {
    guarded {
        guard let out else { throw argument("out is NULL") }
        let handle = try meshHandle(mesh)
        var c = rgbd_mesh_write_options()
        rgbd_mesh_write_options_default(&c)
        if let options { c = options.pointee }
        guard c.max_memory_mb >= 0, c.max_memory_mb <= 1 << 30 else { throw argument("max_memory_mb must be 0 or a number of MB") }
        guard c.texture_size != 0 else { throw argument("texture_size is 0: a texture needs atlases of 64 to 16384 pixels") }
        let options = TexturingOptions(side: Int(c.texture_size), memoryBudget: c.max_memory_mb == 0 ? nil : Int(c.max_memory_mb) << 20)
        let (_, texture) = try handle.fused.textured(scene: handle.scene, frame: handle.frame, options: options)
        out.pointee = retained(TexturedMeshHandle(texture))
    }
}

@c @implementation
public func rgbd_textured_mesh_destroy(_ mesh: OpaquePointer!) {
    release(mesh, as: TexturedMeshHandle.self)
}

@c @implementation
public func rgbd_textured_mesh_counts(_ mesh: OpaquePointer!, _ vertexCount: UnsafeMutablePointer<Int>!,
                                      _ faceCount: UnsafeMutablePointer<Int>!, _ atlasCount: UnsafeMutablePointer<Int>!,
                                      _ atlasSide: UnsafeMutablePointer<Int>!, _ coverage: UnsafeMutablePointer<Double>!) -> Int32 {
    guarded {
        let t = try texturedMeshHandle(mesh).texture
        vertexCount?.pointee = t.positions.count / 3
        faceCount?.pointee = t.faces.count / 3
        atlasCount?.pointee = t.atlases.count
        atlasSide?.pointee = t.atlases.first?.width ?? 0
        coverage?.pointee = t.coverage
    }
}

@c @implementation
public func rgbd_textured_mesh_copy(_ mesh: OpaquePointer!, _ positions: UnsafeMutablePointer<Float>!,
                                    _ normals: UnsafeMutablePointer<Float>!, _ uvs: UnsafeMutablePointer<Float>!,
                                    _ vertexCapacity: Int, _ faces: UnsafeMutablePointer<UInt32>!,
                                    _ faceAtlas: UnsafeMutablePointer<Int32>!, _ faceCapacity: Int) -> Int32 {
    guarded {
        let t = try texturedMeshHandle(mesh).texture
        let vertices = t.positions.count / 3, triangles = t.faces.count / 3
        // Check every buffer before writing any.
        if positions != nil || normals != nil || uvs != nil, vertexCapacity < vertices {
            throw argument("vertex_capacity is \(vertexCapacity), the mesh has \(vertices) vertices")
        }
        if faces != nil || faceAtlas != nil, faceCapacity < triangles {
            throw argument("face_capacity is \(faceCapacity), the mesh has \(triangles) triangles")
        }
        if let positions { _ = UnsafeMutableBufferPointer(start: positions, count: t.positions.count).update(fromContentsOf: t.positions) }
        if let normals { _ = UnsafeMutableBufferPointer(start: normals, count: t.normals.count).update(fromContentsOf: t.normals) }
        if let uvs { _ = UnsafeMutableBufferPointer(start: uvs, count: t.uvs.count).update(fromContentsOf: t.uvs) }
        if let faces { _ = UnsafeMutableBufferPointer(start: faces, count: t.faces.count).update(fromContentsOf: t.faces) }
        if let faceAtlas { _ = UnsafeMutableBufferPointer(start: faceAtlas, count: t.facePages.count).update(fromContentsOf: t.facePages) }
    }
}

@c @implementation
public func rgbd_textured_mesh_atlas(_ mesh: OpaquePointer!, _ index: Int, _ pixels: UnsafeMutablePointer<UInt8>!,
                                     _ capacity: Int) -> Int32 {
    guarded {
        let t = try texturedMeshHandle(mesh).texture
        guard t.atlases.indices.contains(index) else { throw argument("index is \(index), the mesh has \(t.atlases.count) atlases") }
        guard let pixels else { throw argument("pixels is NULL") }
        let atlas = t.atlases[index]
        guard capacity >= atlas.samples.count else {
            throw argument("capacity is \(capacity) bytes, the atlas takes \(atlas.samples.count)")
        }
        _ = UnsafeMutableBufferPointer(start: pixels, count: atlas.samples.count).update(fromContentsOf: atlas.samples)
    }
}

@c @implementation
public func rgbd_write_mesh_ply(_ path: UnsafePointer<CChar>!, _ positions: UnsafePointer<Float>!,
                                _ colors: UnsafePointer<UInt8>!, _ normals: UnsafePointer<Float>!, _ vertexCount: Int,
                                _ faces: UnsafePointer<UInt32>!, _ faceCount: Int, _ comments: UnsafePointer<CChar>!,
                                _ ascii: Int32) -> Int32 {
    guarded {
        let destination = try string(path, "path")
        guard let positions, let colors, let normals else { throw argument("positions, colors and normals must not be NULL") }
        guard let faces else { throw argument("faces is NULL") }
        guard vertexCount >= 0, vertexCount <= Int.max / 16, faceCount >= 0, faceCount <= Int.max / 16 else {
            throw argument("vertex_count \(vertexCount) or face_count \(faceCount) is out of range")
        }
        var mesh = TriangleMesh()
        mesh.positions = Array(UnsafeBufferPointer(start: positions, count: 3 * vertexCount))
        mesh.colors = Array(UnsafeBufferPointer(start: colors, count: 3 * vertexCount))
        mesh.normals = Array(UnsafeBufferPointer(start: normals, count: 3 * vertexCount))
        mesh.faces = Array(UnsafeBufferPointer(start: faces, count: 3 * faceCount))
        let lines = comments.map { String(cString: $0).split(separator: "\n", omittingEmptySubsequences: false).map(String.init) } ?? []
        try PLYWriter.write(path: destination, mesh: mesh, encoding: ascii != 0 ? .ascii : .binaryLittleEndian,
                            comments: lines)
    }
}

// MARK: - AprilTags (docs/markers.md)

private func tagFamily(_ family: Int32) throws -> TagFamily {
    switch family {
    case RGBD_TAG_FAMILY_36H11: return .tag36h11
    case RGBD_TAG_FAMILY_STANDARD41H12: return .tagStandard41h12
    default: throw argument("tag family \(family) is not RGBD_TAG_FAMILY_36H11 or RGBD_TAG_FAMILY_STANDARD41H12")
    }
}

private func tagSize(_ size: Double) throws -> Double? {
    guard size.isFinite else { throw argument("the tag size must be finite") }
    return size > 0 ? size : nil
}

@c @implementation
public func rgbd_capture_tags(_ capture: OpaquePointer!, _ family: Int32, _ size: Double,
                              _ tags: UnsafeMutablePointer<rgbd_tag>!, _ capacity: Int,
                              _ count: UnsafeMutablePointer<Int>!) -> Int32 {
    guarded {
        guard let count else { throw argument("count is NULL") }
        let options = TagOptions(family: try tagFamily(family), size: try tagSize(size))
        let found = CaptureTags.find(in: try handle(capture).rectified, options: options).tags
        guard capacity >= 0 else { throw argument("capacity \(capacity) is out of range") }
        if capacity > 0 {
            let out = try buffer(tags, capacity, needed: min(capacity, found.count), "tags")
            for (i, tag) in found.prefix(capacity).enumerated() {
                var c = rgbd_tag()
                c.id = Int32(clamping: tag.detection.id)
                c.duplicate_id = tag.detection.duplicateID ? 1 : 0
                withUnsafeMutableBytes(of: &c.corners) { raw in
                    let values = raw.bindMemory(to: Double.self)
                    for (k, p) in tag.detection.corners.enumerated() { values[2 * k] = p.x; values[2 * k + 1] = p.y }
                }
                c.center = (tag.detection.center.x, tag.detection.center.y)
                c.decision_margin = tag.detection.decisionMargin
                c.size = tag.size
                withUnsafeMutableBytes(of: &c.tag_to_camera) { raw in
                    let values = raw.bindMemory(to: Double.self)
                    for (k, v) in tag.pose.matrix.enumerated() { values[k] = v }
                }
                c.corner_rms = tag.cornerRMS
                c.depth_rms = tag.depthRMS
                c.depth_scale = tag.depthScale
                out[i] = c
            }
        }
        count.pointee = found.count
    }
}

@c @implementation
public func rgbd_register(_ paths: UnsafePointer<UnsafePointer<CChar>?>!, _ count: Int, _ family: Int32, _ size: Double,
                          _ originTag: Int32, _ metricFromTags: Int32, _ outputDirectory: UnsafePointer<CChar>!,
                          _ registered: UnsafeMutablePointer<Int>!) -> Int32 {
    guarded {
        guard let paths else { throw argument("paths is NULL") }
        guard count >= 1, count <= 100_000 else { throw argument("count \(count) is out of range") }
        let inputs = try (0..<count).map { try string(paths[$0], "paths[\($0)]") }
        let size = try tagSize(size)
        if metricFromTags != 0 && size == nil { throw argument("metric_from_tags needs a tag size") }
        let options = RegisterPipeline.Options(tags: TagOptions(family: try tagFamily(family), size: size),
                                               originTag: originTag >= 0 ? Int(originTag) : nil,
                                               metricFromTags: metricFromTags != 0)
        let result = try RegisterPipeline.run(inputs, output: try string(outputDirectory, "output_dir"), options: options)
        registered?.pointee = result.captures.filter { $0.pose != nil }.count
    }
}
