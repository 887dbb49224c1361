import CHEIF

extension HEIFCodec {
    /// The largest depth image or matte decoded: `InputLimits.maxDepthPixels`, 16
    /// megapixels (real ones have at most a few: 768×576 depth, 2016×1512 mattes).
    static let maxAuxiliaryPixels = InputLimits.maxDepthPixels
}

/// The depth image, auxiliary images and metadata of a HEIF image (Portrait photos).
extension HEIFCodec.Image {
    /// The image's depth image (an auxiliary image of type depth, which libheif links to
    /// its master image), nil if it has none.
    package func depthImage() throws -> HEIFCodec.Image? {
        guard heif_image_handle_has_depth_image(handle) != 0 else { return nil }
        var id: heif_item_id = 0
        guard heif_image_handle_get_list_of_depth_image_IDs(handle, &id, 1) == 1 else { return nil }
        var depth: OpaquePointer? = nil
        try owner.check(heif_image_handle_get_depth_image_handle(handle, id, &depth), "cannot open the depth image")
        guard let depth else { return nil }
        return HEIFCodec.Image(handle: depth, file: owner)
    }

    /// The auxiliary images (depth excluded, as libheif lists them) with their `auxC` type.
    package func auxiliaryImages() -> [(type: String, image: HEIFCodec.Image)] {
        let count = Int(heif_image_handle_get_number_of_auxiliary_images(handle, 0))
        guard count > 0, count < 1000 else { return [] }
        var ids = [heif_item_id](repeating: 0, count: count)
        let listed = Int(heif_image_handle_get_list_of_auxiliary_image_IDs(handle, 0, &ids, Int32(count)))
        var images: [(type: String, image: HEIFCodec.Image)] = []
        for id in ids.prefix(max(0, min(listed, count))) {
            var aux: OpaquePointer? = nil
            guard heif_image_handle_get_auxiliary_image_handle(handle, id, &aux).code == heif_error_Ok, let aux else { continue }
            let image = HEIFCodec.Image(handle: aux, file: owner)
            var type: UnsafePointer<CChar>? = nil
            guard heif_image_handle_get_auxiliary_type(aux, &type).code == heif_error_Ok, let type else { continue }
            var typePointer: UnsafePointer<CChar>? = type
            let name = String(cString: type)
            heif_image_handle_free_auxiliary_types(aux, &typePointer)
            images.append((name, image))
        }
        return images
    }

    /// The metadata blocks of this image (items linked to it by `cdsc`) whose item type
    /// is `type` (`mime`, `Exif`) and, if given, whose content type is `contentType`.
    package func metadata(type: String, contentType: String? = nil) -> [[UInt8]] {
        let count = Int(heif_image_handle_get_number_of_metadata_blocks(handle, type))
        guard count > 0, count < 1000 else { return [] }
        var ids = [heif_item_id](repeating: 0, count: count)
        let listed = Int(heif_image_handle_get_list_of_metadata_block_IDs(handle, type, &ids, Int32(count)))
        var blocks: [[UInt8]] = []
        for id in ids.prefix(max(0, min(listed, count))) {
            if let contentType {
                guard let actual = heif_image_handle_get_metadata_content_type(handle, id),
                      String(cString: actual) == contentType else { continue }
            }
            let size = heif_image_handle_get_metadata_size(handle, id)
            // A block cannot be larger than the file (nor than 16 MB): a claim beyond is a lie.
            guard size > 0, size <= 16 << 20, size <= owner.byteCount else { continue }
            var bytes = [UInt8](repeating: 0, count: size)
            let error = bytes.withUnsafeMutableBytes { heif_image_handle_get_metadata(handle, id, $0.baseAddress) }
            if error.code == heif_error_Ok { blocks.append(bytes) }
        }
        return blocks
    }

    /// Decodes a one-channel image (a depth map or matte) as stored: its luma samples and
    /// their bit depth (8 to 16), transformations not applied, except that an image whose
    /// displayed size is smaller than its coded size (an encoder's padding to whole coding
    /// blocks, cropped by `clap`) is cropped to it from the top-left corner.
    package func decodeGray() throws -> (image: ImageBuffer<UInt16>, bits: Int) {
        let (width, height) = try storedSize()
        guard width * height <= HEIFCodec.maxAuxiliaryPixels else {
            throw RGBDError(.invalidImage, file: owner.file, "the HEIF depth image claims \(width)×\(height) pixels, more than a depth map has")
        }
        guard let options = heif_decoding_options_alloc() else {
            throw RGBDError(.invalidImage, file: owner.file, "cannot allocate libheif decoding options")
        }
        defer { heif_decoding_options_free(options) }
        options.pointee.ignore_transformations = 1
        var decoded: OpaquePointer? = nil
        try owner.check(heif_decode_image(handle, &decoded, heif_colorspace_monochrome, heif_chroma_monochrome, options),
                        "cannot decode the HEIF depth image")
        guard let decoded else { throw RGBDError(.invalidImage, file: owner.file, "cannot decode the HEIF depth image") }
        defer { heif_image_release(decoded) }
        let planeWidth = Int(heif_image_get_width(decoded, heif_channel_Y))
        let planeHeight = Int(heif_image_get_height(decoded, heif_channel_Y))
        let bits = Int(heif_image_get_bits_per_pixel_range(decoded, heif_channel_Y))
        var stride: Int32 = 0
        let bytesPerSample = bits > 8 ? 2 : 1
        guard let plane = heif_image_get_plane_readonly(decoded, heif_channel_Y, &stride),
              planeWidth == width, planeHeight == height, bits >= 1, bits <= 16,
              Int(stride) >= width * bytesPerSample else {
            throw RGBDError(.invalidImage, file: owner.file,
                            "libheif decoded a \(planeWidth)×\(planeHeight) \(bits)-bit depth image where the file says \(width)×\(height)")
        }
        var (outWidth, outHeight) = (width, height)
        let shownWidth = Int(heif_image_handle_get_width(handle)), shownHeight = Int(heif_image_handle_get_height(handle))
        if shownWidth > 0, shownHeight > 0, shownWidth <= width, shownHeight <= height {
            (outWidth, outHeight) = (shownWidth, shownHeight)
        }
        var samples = [UInt16](repeating: 0, count: outWidth * outHeight)
        let rowBytes = Int(stride)
        for y in 0..<outHeight {
            let row = plane + y * rowBytes
            for x in 0..<outWidth {
                samples[y * outWidth + x] = bytesPerSample == 1
                    ? UInt16(row[x])
                    : UInt16(row[2 * x]) | UInt16(row[2 * x + 1]) << 8
            }
        }
        return (ImageBuffer(width: outWidth, height: outHeight, channels: 1, samples: samples), bits)
    }
}
