/// Where a photo keeps its EXIF: a JPEG's APP1 segment (`Exif\0\0` and a TIFF structure),
/// a HEIF's `Exif` item (read through libheif; it starts with the 4-byte offset of the TIFF
/// header).
extension EXIFMetadata {
    /// The EXIF of a JPEG or HEIF photo (recognised by content), nil if it has none (or
    /// is neither). Never fails: a broken block gives `warnings`.
    package init?(photo bytes: [UInt8]) {
        switch PhotoDecoder.format(of: bytes) {
        case .jpeg?:
            let signature: [UInt8] = Array("Exif\u{0}\u{0}".utf8)
            guard let segment = MPFIndex.segments(of: bytes).first(where: { segment in
                segment.marker == 0xE1 && segment.payload.count >= signature.count
                    && bytes[segment.payload.prefix(signature.count)].elementsEqual(signature)
            }) else { return nil }
            self.init(tiff: bytes, start: segment.payload.lowerBound + signature.count, end: segment.payload.upperBound)
        case .heif?:
            guard let block = try? HEIFCodec.File(bytes, file: nil).primary().metadata(type: "Exif").first else { return nil }
            self.init(heifExifItem: block)
        default:
            return nil
        }
    }

    /// The EXIF of a HEIF `Exif` item's payload: a big-endian offset, then (that many
    /// bytes further) the TIFF header.
    init(heifExifItem block: [UInt8]) {
        guard block.count >= 4 else {
            self.init()
            warnings.append("EXIF: the HEIF Exif item is shorter than its 4-byte header")
            return
        }
        let offset = Int(block[0]) << 24 | Int(block[1]) << 16 | Int(block[2]) << 8 | Int(block[3])
        guard offset <= block.count - 4 - 8 else {
            self.init()
            warnings.append("EXIF: the HEIF Exif item's TIFF offset (\(offset)) lies past its end (\(block.count) bytes)")
            return
        }
        self.init(tiff: block, start: 4 + offset)
    }
}
