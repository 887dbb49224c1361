/// The file formats rgbd reads, recognised by their first bytes and never by name (a HEIC
/// named `.jpg` is a HEIC). This is the one place that tells formats apart: the photo
/// decoder, the Portrait-photo check, the depth-image reader, the batch planner and the
/// scan reader (a Record3D `.r3d` is a ZIP archive) all ask it.
package enum FileFormat: String, Sendable, CaseIterable {
    /// JPEG: the SOI marker `FF D8`.
    case jpeg = "JPEG"
    /// HEIF / HEIC: an ISO base media file whose `ftyp` box names a HEIF brand.
    case heif = "HEIF"
    /// PNG: its eight-byte signature.
    case png = "PNG"
    /// TIFF or BigTIFF, either byte order.
    case tiff = "TIFF"
    /// A ZIP archive: a local file header's signature `PK 03 04` first (Record3D's `.r3d`).
    case zip = "ZIP"

    /// How many leading bytes `init?(bytes:)` may look at (a `ftyp` box lists its brands
    /// within them).
    package static let prefixLength = 64

    /// The HEIF brands (ISO/IEC 23008-12) that make an ISO base media file a HEIF image
    /// rgbd hands to its decoders: HEVC images and sequences (`heic`, `heix`, `heim`,
    /// `heis`, `hevc`, `hevx`) and the structural brands `mif1` / `msf1` that files of any
    /// HEIF codec carry.
    static let heifBrands: Set<String> = ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"]

    /// The format of a file that begins with `bytes`, or nil if it is none of these.
    package init?(bytes: some Collection<UInt8>) {
        let b = Array(bytes.prefix(Self.prefixLength))
        if b.count >= 2, b[0] == 0xFF, b[1] == 0xD8 {
            self = .jpeg
        } else if b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if b.starts(with: [0x49, 0x49, 0x2A, 0x00]) || b.starts(with: [0x4D, 0x4D, 0x00, 0x2A])
            || b.starts(with: [0x49, 0x49, 0x2B, 0x00]) || b.starts(with: [0x4D, 0x4D, 0x00, 0x2B]) {
            self = .tiff
        } else if Self.isHEIF(b) {
            self = .heif
        } else if b.starts(with: [0x50, 0x4B, 0x03, 0x04]) {
            self = .zip
        } else {
            return nil
        }
    }

    /// The format of the file at `path` from its first bytes; nil if it cannot be read or
    /// is none of these.
    package init?(path: String) {
        guard let bytes = try? FileSystem.readPrefix(path, count: Self.prefixLength) else { return nil }
        self.init(bytes: bytes)
    }

    /// Whether the format is a photo rgbd decodes (JPEG or HEIF).
    package var isPhoto: Bool { self == .jpeg || self == .heif }

    /// File name extensions of photos (compared lowercased), in the order a photo beside a
    /// capture JSON is preferred: a JPEG before a HEIC.
    package static let photoExtensions = ["jpg", "jpeg", "heic", "heif"]

    /// Whether `path` is named like a photo (`photoExtensions`, any case).
    package static func isNamedLikePhoto(_ path: String) -> Bool {
        photoExtensions.contains(Path.pathExtension(path))
    }

    /// A `ftyp` box first, whose major or one of whose compatible brands is a HEIF brand.
    private static func isHEIF(_ b: [UInt8]) -> Bool {
        guard b.count >= 16, b[4] == 0x66, b[5] == 0x74, b[6] == 0x79, b[7] == 0x70 else { return false }
        let boxSize = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
        guard boxSize >= 16 else { return false }
        let end = min(boxSize, b.count)
        func brand(at i: Int) -> String { String(decoding: b[i..<(i + 4)], as: UTF8.self) }
        if heifBrands.contains(brand(at: 8)) { return true }
        var i = 16
        while i + 4 <= end {
            if heifBrands.contains(brand(at: i)) { return true }
            i += 4
        }
        return false
    }

    /// A message for bytes that are not the photo expected: empty, or the first bytes in hex.
    static func notAPhoto(_ bytes: [UInt8]) -> String {
        if bytes.isEmpty { return "the file is empty" }
        let start = bytes.prefix(4).map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: " ")
        return "not a JPEG or HEIF image (it starts with bytes \(start))"
    }
}
