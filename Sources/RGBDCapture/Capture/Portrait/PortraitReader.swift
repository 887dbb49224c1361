/// What a Portrait photo's depth metadata says about its depth image (docs/portrait.md).
package struct PortraitDepth: Equatable, Sendable {
    /// What the stored values measure.
    package enum Kind: String, Sendable {
        /// Disparity in 1/m: depth = 1 / disparity.
        case disparity
        /// Depth in meters.
        case depth
    }

    /// Disparity or depth.
    package var kind: Kind
    /// `Accuracy`: `relative` (right relative to itself, scale not guaranteed) or
    /// `absolute`; nil if the packet does not say.
    package var accuracy: String?
    /// `Quality` (`high`, `low`), if given.
    package var quality: String?
    /// `Filtered` (holes filled by the camera), if given.
    package var filtered: Bool?
    /// `StoredFormat` as four characters (`L008`), if given.
    package var storedFormat: String?
    /// `NativeFormat` as four characters (`hdis`), if given.
    package var nativeFormat: String?
    /// The stored integer range (`IntMinValue`, `IntMaxValue`).
    package var intRange: SIMD2<Double>
    /// The float range it maps to linearly (`FloatMinValue`, `FloatMaxValue`), in 1/m for
    /// disparity, meters for depth.
    package var floatRange: SIMD2<Double>
    /// Bits per stored sample.
    package var bits: Int
    /// Where the depth image was: `HEIC depth image` or `JPEG MPF image N`.
    package var container: String
    /// `ExtrinsicMatrix` as stored, when it holds 12 numbers: a 3×4 matrix listed column
    /// by column (AVFoundation's `matrix_float4x3`), the rotation's three columns then
    /// the translation. Shown by `rgbd info`; rgbd does not use it.
    package var extrinsicMatrix: [Double]? = nil

    /// Whether the depth's scale is not guaranteed (`Accuracy = relative`).
    package var isRelative: Bool { accuracy?.lowercased() == "relative" }

    /// The sentence rgbd prints about a relative depth.
    package static let relativeNote = "Accuracy = relative: the depth is right relative to itself, but its scale (meters) is not guaranteed"

    /// The value a stored sample stands for: linear from `intRange` to `floatRange`.
    package func value(ofStored stored: Double) -> Double {
        floatRange.x + (stored - intRange.x) * (floatRange.y - floatRange.x) / (intRange.y - intRange.x)
    }

    /// The depth in meters a stored sample stands for, NaN where there is none (a
    /// disparity or depth that is not positive).
    package func meters(ofStored stored: Double) -> Float {
        let v = value(ofStored: stored)
        guard v > 0, v.isFinite else { return .nan }
        return Float(kind == .disparity ? 1 / v : v)
    }
}

/// Reads a Portrait photo (a HEIC or JPEG that holds a depth image and Apple's depth
/// metadata) as a capture: the photo is the color image, the depth image with its XMP
/// gives the depth map and the calibration (docs/portrait.md).
package enum PortraitReader {
    /// The message for a photo without a depth image (not a Portrait photo).
    package static let noDepthImage = "holds no depth image"

    /// The Portrait Effects Matte's auxiliary type.
    static let matteType = "urn:com:apple:photo:2018:aux:portraiteffectsmatte"

    /// The depth side of a Portrait photo: calibration, depth map (meters, NaN = no
    /// depth; sanitized with `options`), where it came from, and the matte if present.
    package static func read(_ bytes: [UInt8], file: String, options: CaptureReadingOptions = CaptureReadingOptions())
        throws -> CaptureReader.Contents {
        let (width, height) = try PhotoDecoder.size(of: bytes, file: file)
        let found: Found
        switch try PhotoDecoder.recognise(bytes, file: file) {
        case .heif: found = try heif(bytes, file: file)
        default: found = try jpeg(bytes, file: file)
        }
        let xmp = found.xmp
        let calibration = try calibration(xmp, imageWidth: width, imageHeight: height, file: file)
        let info = try depthInfo(xmp, bits: found.bits, container: found.container, file: file)
        var samples = found.samples.samples.map { info.meters(ofStored: Double($0)) }
        let discarded = DepthDiscards.sanitize(&samples, maxValidDepth: options.maxValidDepth)
        let depth = DepthMap(width: found.samples.width, height: found.samples.height, channels: 1, samples: samples)
        var contents = CaptureReader.Contents(
            calibration: calibration, depth: depth, schemaName: "portrait",
            keys: CalibrationKeys(intrinsicMatrix: "IntrinsicMatrix", referenceDimensions: "IntrinsicMatrixReferenceWidth/Height"),
            depthSource: DepthSource(kind: found.container.hasPrefix("HEIC") ? .portraitHEIC : .portraitJPEG,
                                     key: found.container, path: nil),
            discarded: discarded)
        contents.metadata = CaptureMetadata(portrait: info, matte: found.matte)
        return contents
    }

    /// The depth image and its metadata as found in the file.
    struct Found {
        var samples: ImageBuffer<UInt16>
        var bits: Int
        var xmp: PortraitXMP
        var container: String
        var matte: ImageBuffer<UInt8>?
    }

    /// HEIC: the primary image's depth image (libheif), its XMP (a `mime` item,
    /// `application/rdf+xml`, linked to it by `cdsc`), and the Portrait Effects Matte.
    static func heif(_ bytes: [UInt8], file: String) throws -> Found {
        let heif = try HEIFCodec.File(bytes, file: file)
        let primary = try heif.primary()
        guard let depthImage = try primary.depthImage() else {
            throw RGBDError(.invalidCapture, file: file, noDepthImage)
        }
        // Any `mime` item linked to the depth image whose content reads as Apple's depth
        // XMP (its content type is `application/rdf+xml`, but only the content decides).
        let packets = depthImage.metadata(type: "mime").map(PortraitXMP.init)
        guard let xmp = packets.first(where: \.describesDepth) else {
            throw RGBDError(.invalidCapture, file: file, "its depth image has no Apple depth metadata (an XMP packet with IntrinsicMatrix, LensDistortionCoefficients, …)")
        }
        let (samples, bits) = try depthImage.decodeGray()
        var matte: ImageBuffer<UInt8>? = nil
        if let aux = primary.auxiliaryImages().first(where: { $0.type == matteType }),
           let (m, mbits) = try? aux.image.decodeGray() {
            matte = to8Bit(m, bits: mbits)
        }
        return Found(samples: samples, bits: bits, xmp: xmp, container: "HEIC depth image", matte: matte)
    }

    /// JPEG: the images the MPF index lists after the primary; the depth one is the first
    /// whose XMP describes depth and not a matte (`PortraitXMP.describesMatte`), the matte
    /// the one whose `AuxiliaryImageSubType` (or type) names the Portrait Effects Matte.
    static func jpeg(_ bytes: [UInt8], file: String) throws -> Found {
        let images = MPFIndex.images(in: bytes)
        var found: Found? = nil
        var matte: ImageBuffer<UInt8>? = nil
        for (number, range) in images.enumerated() where number > 0 {
            let image = Array(bytes[range])
            guard let packet = MPFIndex.xmp(in: image) else { continue }
            let xmp = PortraitXMP(packet)
            if xmp.describesMatte {
                let kind = (xmp.string("AuxiliaryImageSubType") ?? "") + " " + (xmp.string("AuxiliaryImageType") ?? "")
                if matte == nil, kind.lowercased().contains("portraiteffectsmatte") {
                    matte = try? JPEGCodec.decodeGray(image, file: file)
                }
                continue
            }
            guard found == nil, xmp.describesDepth else { continue }
            let gray = try JPEGCodec.decodeGray(image, file: file)
            found = Found(samples: ImageBuffer(width: gray.width, height: gray.height, channels: 1,
                                               samples: gray.samples.map(UInt16.init)),
                          bits: 8, xmp: xmp, container: "JPEG MPF image \(number + 1)", matte: nil)
        }
        guard var result = found else { throw RGBDError(.invalidCapture, file: file, noDepthImage) }
        result.matte = matte
        return result
    }

    static func to8Bit(_ image: ImageBuffer<UInt16>, bits: Int) -> ImageBuffer<UInt8> {
        let shift = max(0, bits - 8)
        return ImageBuffer(width: image.width, height: image.height, channels: 1,
                           samples: image.samples.map { UInt8(truncatingIfNeeded: min(255, Int($0) >> shift)) })
    }

    /// The calibration the XMP gives: `IntrinsicMatrix` (column-major) at
    /// `IntrinsicMatrixReferenceWidth × Height` (default: the photo's size), the
    /// distortion center `LensDistortionCenterOffsetX/Y`, `PixelSize`, and the tables of
    /// `LensDistortionCoefficients` / `InverseLensDistortionCoefficients`.
    package static func calibration(_ xmp: PortraitXMP, imageWidth: Int, imageHeight: Int, file: String) throws -> Calibration {
        func fail(_ field: String, _ message: String) -> RGBDError {
            RGBDError(.invalidCapture, file: file, location: field, message)
        }
        guard let m = try xmp.checkedNumbers("IntrinsicMatrix", file: file) else {
            throw fail("IntrinsicMatrix", "missing from the depth metadata")
        }
        guard m.count == 9 else { throw fail("IntrinsicMatrix", "expected 9 numbers, found \(m.count)") }
        // Column-major [fx 0 0, s fy 0, cx cy 1]; a row-major matrix is accepted too.
        guard let entries = Intrinsics.matrixEntries(m) else {
            throw fail("IntrinsicMatrix", "not a 3×3 intrinsic matrix (no 0, 0, 1 row or column)")
        }
        let (fx, fy, cx, cy) = (entries.fx, entries.fy, entries.cx, entries.cy)
        guard fx > 0, fy > 0 else {
            throw fail("IntrinsicMatrix", "the focal lengths must be positive (fx \(fx), fy \(fy))")
        }
        var width = imageWidth, height = imageHeight
        let referenceWidth = try xmp.checkedNumber("IntrinsicMatrixReferenceWidth", file: file)
        let referenceHeight = try xmp.checkedNumber("IntrinsicMatrixReferenceHeight", file: file)
        switch (referenceWidth, referenceHeight) {
        case let (w?, h?):
            guard Calibration.isImageDimension(w), Calibration.isImageDimension(h) else {
                throw fail("IntrinsicMatrixReferenceWidth", "expected positive whole numbers, found \(w) × \(h)")
            }
            (width, height) = (Int(w), Int(h))
        case (nil, nil):
            break
        case (nil, _?):
            throw fail("IntrinsicMatrixReferenceWidth", "missing, but IntrinsicMatrixReferenceHeight is there")
        case (_?, nil):
            throw fail("IntrinsicMatrixReferenceHeight", "missing, but IntrinsicMatrixReferenceWidth is there")
        }
        guard let ox = try xmp.checkedNumber("LensDistortionCenterOffsetX", file: file) else {
            throw fail("LensDistortionCenterOffsetX", "missing from the depth metadata (with …Y: the distortion center)")
        }
        guard let oy = try xmp.checkedNumber("LensDistortionCenterOffsetY", file: file) else {
            throw fail("LensDistortionCenterOffsetY", "missing from the depth metadata (with …X: the distortion center)")
        }
        let center = SIMD2(ox, oy)
        guard let pixelSize = try xmp.checkedNumber("PixelSize", file: file) else {
            throw fail("PixelSize", "missing from the depth metadata")
        }
        if let (value, message) = CalibrationPlausibility.problem(fx: fx, fy: fy, cx: cx, cy: cy, width: width, height: height,
                                                                 distortionCenter: center, pixelSize: pixelSize) {
            switch value {
            case .focalLengths, .principalPoint: throw fail("IntrinsicMatrix", message)
            case .distortionCenter: throw fail("LensDistortionCenterOffsetX", "the distortion center " + message)
            case .pixelSize: throw fail("PixelSize", message)
            }
        }
        guard let coefficients = try xmp.checkedNumbers("LensDistortionCoefficients", file: file) else {
            throw fail("LensDistortionCoefficients", "missing from the depth metadata")
        }
        func table(_ field: String, _ c: [Double]) throws -> [Float] {
            do {
                return try LensPolynomial.lookupTable(coefficients: c, pixelSize: pixelSize, center: center,
                                                      width: width, height: height)
            } catch let error as RGBDError {
                throw fail(field, error.message)
            }
        }
        let forward = try table("LensDistortionCoefficients", coefficients)
        let inverse = try xmp.checkedNumbers("InverseLensDistortionCoefficients", file: file).map {
            try table("InverseLensDistortionCoefficients", $0)
        } ?? []
        return Calibration(intrinsics: Intrinsics(fx: fx, fy: fy, cx: cx, cy: cy, width: width, height: height),
                           pixelSize: pixelSize, distortionCenter: center, lookupTable: forward, inverseLookupTable: inverse)
    }

    /// The depth's kind and value mapping: `AuxiliaryImageType` (else `NativeFormat`:
    /// `hdis`/`fdis` disparity, `hdep`/`fdep` depth), `IntMinValue…IntMaxValue` (default
    /// the stored bits' range) onto `FloatMinValue…FloatMaxValue` (required).
    package static func depthInfo(_ xmp: PortraitXMP, bits: Int, container: String, file: String) throws -> PortraitDepth {
        func fail(_ field: String, _ message: String) -> RGBDError {
            RGBDError(.invalidCapture, file: file, location: field, message)
        }
        let native = xmp.fourCC("NativeFormat")
        let kind: PortraitDepth.Kind
        switch (xmp.string("AuxiliaryImageType")?.lowercased(), native) {
        case ("disparity"?, _): kind = .disparity
        case ("depth"?, _): kind = .depth
        case (_, "hdis"?), (_, "fdis"?): kind = .disparity
        case (_, "hdep"?), (_, "fdep"?): kind = .depth
        default:
            throw fail("AuxiliaryImageType", "the depth metadata says neither disparity nor depth (AuxiliaryImageType \(xmp.shown("AuxiliaryImageType")), NativeFormat \(native ?? "missing"))")
        }
        let maxStored = Double((1 << max(1, min(bits, 16))) - 1)
        let intMin = try xmp.checkedNumber("IntMinValue", file: file) ?? 0
        let intMax = try xmp.checkedNumber("IntMaxValue", file: file) ?? maxStored
        guard intMin != intMax else { throw fail("IntMinValue", "IntMinValue and IntMaxValue are equal (\(intMin))") }
        guard let floatMin = try xmp.checkedNumber("FloatMinValue", file: file) else {
            throw fail("FloatMinValue", "missing from the depth metadata (with FloatMaxValue: the range of the stored values)")
        }
        guard let floatMax = try xmp.checkedNumber("FloatMaxValue", file: file) else {
            throw fail("FloatMaxValue", "missing from the depth metadata (with FloatMinValue: the range of the stored values)")
        }
        let filtered = xmp.string("Filtered").map { ["true", "1", "yes"].contains($0.lowercased()) }
        return PortraitDepth(kind: kind, accuracy: xmp.string("Accuracy"), quality: xmp.string("Quality"),
                             filtered: filtered, storedFormat: xmp.fourCC("StoredFormat"), nativeFormat: native,
                             intRange: SIMD2(intMin, intMax), floatRange: SIMD2(floatMin, floatMax), bits: bits,
                             container: container,
                             extrinsicMatrix: xmp.numbers("ExtrinsicMatrix").flatMap { $0.count == 12 ? $0 : nil })
    }
}
