import Foundation
import Testing
@testable import RGBDFoundation
@testable import RGBDKit

/// rgbd's own HEIF reading (`HEIFItems`) and libde265 decoding (`HEVCImageDecoder`)
/// against libheif decoding the same files, and against the pixels that were encoded.
/// Files are made at test time with libheif's `heif-enc` (4:2:0, lossy, as cameras
/// write), plus the grid seed of the fuzz corpus (pillow-heif, 16-pixel tiles).
@Suite struct HEVCDecoderTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// 250×186: a smooth gradient with saturated 16-pixel squares (chroma edges).
    static func scene() -> ColorImage {
        let width = 250, height = 186
        var samples = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                var rgb = [UInt8(x * 255 / width), UInt8(y * 255 / height), UInt8(128)]
                if (x / 16 + y / 16) % 5 == 0 { rgb = [[230, 20, 40], [20, 200, 60], [30, 40, 220]][(x / 16) % 3] }
                samples.replaceSubrange((y * width + x) * 3..<(y * width + x) * 3 + 3, with: rgb)
            }
        }
        return ColorImage(width: width, height: height, channels: 3, samples: samples)
    }

    /// `image` encoded by heif-enc with `arguments`.
    static func heifEnc(_ image: ColorImage, _ arguments: [String]) throws -> [UInt8] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rgbd-hevc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("in.png"), output = directory.appendingPathComponent("out.heic")
        try Data(try PNGCodec.encodeRGB(image)).write(to: source)
        let tool = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
            .map { "\($0)/heif-enc" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        let path = try #require(tool, "heif-enc not found (Scripts/bootstrap.sh installs libheif-examples)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments + ["-o", output.path, source.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return Array(try Data(contentsOf: output))
    }

    /// Largest and mean absolute difference of two images of one size.
    static func difference(_ a: ColorImage, _ b: ColorImage) -> (max: Int, mean: Double) {
        #expect(a.width == b.width && a.height == b.height)
        var largest = 0, total = 0
        for (p, q) in zip(a.samples, b.samples) {
            let d = abs(Int(p) - Int(q))
            largest = max(largest, d)
            total += d
        }
        return (largest, Double(total) / Double(max(1, a.samples.count)))
    }

    /// Decodes with rgbd's path (which must apply) and with libheif.
    static func bothWays(_ bytes: [UInt8]) throws -> (rgbd: ColorImage, libheif: ColorImage) {
        let items = HEIFItems.primary(of: bytes)
        try #require(items != nil, "rgbd's HEVC path does not take the file")
        let fast = try HEVCImageDecoder.decodeRGB(try #require(items), file: nil)
        let reference = try HEIFCodec.File(bytes, file: nil).primary().decodeRGB()
        #expect(try HEIFCodec.decodeRGB(bytes).samples == fast.samples)
        return (fast, reference)
    }

    @Test(arguments: [
        ["-q", "90"],
        ["-q", "90", "--matrix_coefficients=1"],
        ["-q", "90", "--matrix_coefficients=1", "--full_range_flag=0"],
        ["-q", "90", "--matrix_coefficients=6", "--full_range_flag=0"],
        ["-q", "90", "--matrix_coefficients=9"],
    ])
    func sameAsLibheif(arguments: [String]) throws {
        let scene = Self.scene()
        let (fast, reference) = try Self.bothWays(try Self.heifEnc(scene, arguments))
        let (largest, mean) = Self.difference(fast, reference)
        // The same decoded planes; the conversion's rounding may differ by one.
        #expect(largest <= 1, "\(arguments): largest difference \(largest)")
        #expect(mean < 0.2, "\(arguments): mean difference \(mean)")
        // And the picture is the scene: away from the squares' edges (where 4:2:0 blurs
        // colour) the pixels are the ones encoded.
        var far = 0, checked = 0
        for y in 4..<(scene.height - 4) where (y % 16) >= 4 && (y % 16) < 12 {
            for x in 4..<(scene.width - 4) where (x % 16) >= 4 && (x % 16) < 12 {
                for c in 0..<3 where abs(Int(fast[x, y, c]) - Int(scene[x, y, c])) > 6 { far += 1 }
                checked += 3
            }
        }
        #expect(far * 100 < checked, "\(arguments): \(far) of \(checked) samples off by more than 6")
    }

    /// A grid (4×3 tiles of 64 pixels, the last column and row cropped by the grid's
    /// output size of 200×136), as iPhones write; and one of 16-pixel tiles, each coded
    /// at 64×64 with its own crop (`clap`), which rgbd leaves to libheif.
    @Test func gridSameAsLibheif() throws {
        let corpus = Self.repository.appendingPathComponent("Fuzz/corpus/FuzzImage")
        let bytes = Array(try Data(contentsOf: corpus.appendingPathComponent("heic-200x136-grid-64")))
        let items = HEIFItems.primary(of: bytes)
        #expect(items?.tiles.count == 12 && items?.columns == 4 && items?.width == 200 && items?.height == 136)
        let (fast, reference) = try Self.bothWays(bytes)
        let (largest, mean) = Self.difference(fast, reference)
        #expect(largest <= 1 && mean < 0.2, "largest \(largest), mean \(mean)")
        let cropped = Array(try Data(contentsOf: corpus.appendingPathComponent("heic-48x36-grid-16")))
        #expect(HEIFItems.primary(of: cropped) == nil)
        #expect(try HEIFCodec.decodeRGB(cropped).width == 48)
    }

    /// FFmpeg's and libde265's HEVC decoders give the same pixels (a conforming decoder's
    /// output is exact): on the real iPhone photos of the benchmarks (48-tile grids from an
    /// iPhone 8 and an XR), on heif-enc files of each matrix, and on the fuzz corpus's grid.
    @Test func decodersAgreeExactly() throws {
        _ = try FFmpegHEVCDecoder(threads: 1)  // FFmpeg's decoder starts (no silent fallback)
        var files: [(String, [UInt8])] = []
        for name in ["iphone8.heic", "iphonexr.heic"] {
            let url = Self.repository.appendingPathComponent("Benchmarks/phone/\(name)")
            files.append((name, Array(try Data(contentsOf: url))))
        }
        files.append(("grid", Array(try Data(contentsOf: Self.repository
            .appendingPathComponent("Fuzz/corpus/FuzzImage/heic-200x136-grid-64")))))
        for arguments in [["-q", "60"], ["-q", "90", "--matrix_coefficients=1", "--full_range_flag=0"]] {
            files.append(("\(arguments)", try Self.heifEnc(Self.scene(), arguments)))
        }
        for (name, bytes) in files {
            let items = try #require(HEIFItems.primary(of: bytes), "\(name)")
            let ffmpeg = try HEVCImageDecoder.decodeRGB(items, file: nil, backend: .ffmpeg)
            let libde265 = try HEVCImageDecoder.decodeRGB(items, file: nil, backend: .libde265)
            #expect(ffmpeg.width == items.width && ffmpeg.height == items.height, "\(name)")
            let same = ffmpeg.samples == libde265.samples
            #expect(same, "\(name): \(Self.difference(ffmpeg, libde265))")
        }
    }

    /// A damaged tile is an error from FFmpeg's decoder, not a picture with the damage
    /// concealed (libde265 conceals it and gives a picture): bytes in the middle of every
    /// tile's data flipped. `HEIFCodec` then leaves the file to libheif.
    @Test func damagedTilesAreErrors() throws {
        var bytes = Array(try Data(contentsOf: Self.repository.appendingPathComponent("Benchmarks/phone/iphone8.heic")))
        let items = try #require(HEIFItems.primary(of: bytes))
        for tile in items.tiles {
            let middle = (tile.data.startIndex + tile.data.endIndex) / 2
            for i in middle..<middle + 64 { bytes[i] ^= 0x5A }
        }
        let damaged = try #require(HEIFItems.primary(of: bytes))
        #expect(throws: RGBDError.self) { _ = try HEVCImageDecoder.decodeRGB(damaged, file: nil, backend: .ffmpeg) }
    }

    /// Forms the fast path leaves to libheif: 4:4:4, and lossless identity-matrix files.
    @Test func otherFormsGoToLibheif() throws {
        let scene = Self.scene()
        #expect(HEIFItems.primary(of: try Self.heifEnc(scene, ["-q", "90", "-p", "chroma=444"])) == nil)
        let lossless = try Self.heifEnc(scene, ["-L", "-p", "chroma=444", "--matrix_coefficients=0"])
        #expect(HEIFItems.primary(of: lossless) == nil)
        // libheif decodes it (heif-enc's "lossless" from this PNG comes back within one
        // level; Tests/python/test_heif.py checks exactness on the files it makes).
        let decoded = try HEIFCodec.decodeRGB(lossless)
        #expect(Self.difference(decoded, scene).max <= 1, "\(Self.difference(decoded, scene))")
    }

    /// An `ispe` claiming 2^32 − 1 × 2^32 − 1 pixels: left to libheif, which refuses it.
    @Test func absurdSizesAreRefusedNotOverflowed() throws {
        var bytes = try Self.heifEnc(Self.scene(), ["-q", "50"])
        let ispe = try #require((0..<(bytes.count - 4)).first { bytes[$0..<$0 + 4].elementsEqual("ispe".utf8) })
        for i in (ispe + 8)..<(ispe + 16) { bytes[i] = 0xFF }
        #expect(HEIFItems.primary(of: bytes) == nil)
        #expect(throws: RGBDError.self) { try HEIFCodec.decodeRGB(bytes) }
    }

    /// Every prefix and single-byte corruption of a small file: the reader never traps
    /// (what it takes decodes or throws), and `HEIFCodec` answers with an image or an error.
    @Test func damagedFilesNeverTrap() throws {
        let bytes = try Self.heifEnc(Self.scene(), ["-q", "50"])
        var random = SeededGenerator(seed: 7)
        var variants: [[UInt8]] = stride(from: 0, to: bytes.count, by: max(1, bytes.count / 200)).map { Array(bytes.prefix($0)) }
        for _ in 0..<200 {
            var damaged = bytes
            let at = Int(random.next() % UInt64(min(bytes.count, 2000)))
            damaged[at] ^= UInt8(truncatingIfNeeded: random.next() | 1)
            variants.append(damaged)
        }
        var decoded = 0
        for variant in variants {
            if let items = HEIFItems.primary(of: variant) {
                if (try? HEVCImageDecoder.decodeRGB(items, file: nil)) != nil { decoded += 1 }
            }
            _ = try? HEIFCodec.decodeRGB(variant)
        }
        #expect(decoded > 0)
    }
}

/// The AVX2 Y′CbCr kernel gives the bytes of the Swift loops, for every matrix and range,
/// row lengths around its sixteen-pixel steps, odd last rows, and extreme samples; and the
/// loops give the conversion's formula, rounded.
@Suite struct YCbCrConversionTests {
    static let matrices = [YCbCrMatrix(kr: 0.299, kb: 0.114, fullRange: true),
                           YCbCrMatrix(kr: 0.2126, kb: 0.0722, fullRange: false),
                           YCbCrMatrix(kr: 0.2627, kb: 0.0593, fullRange: false)]

    /// Rows `y0` (and `y1`) converted; both output rows, concatenated.
    static func convert(_ conversion: YCbCrConversion, _ y0: [UInt8], _ y1: [UInt8]?, _ cb: [UInt8], _ cr: [UInt8],
                        avx2: Bool) -> [UInt8] {
        let count = y0.count
        var out0 = [UInt8](repeating: 7, count: 3 * count), out1 = [UInt8](repeating: 7, count: 3 * count)
        let second = y1 ?? y0
        y0.withUnsafeBufferPointer { a in
            second.withUnsafeBufferPointer { b in
                cb.withUnsafeBufferPointer { u in
                    cr.withUnsafeBufferPointer { v in
                        out0.withUnsafeMutableBufferPointer { o0 in
                            out1.withUnsafeMutableBufferPointer { o1 in
                                conversion.convertRows(y0: a.baseAddress!, y1: y1 == nil ? nil : b.baseAddress,
                                                       cb: u.baseAddress!, cr: v.baseAddress!, out0: o0.baseAddress!,
                                                       out1: y1 == nil ? nil : o1.baseAddress, count: count, avx2: avx2)
                            }
                        }
                    }
                }
            }
        }
        return out0 + out1
    }

    @Test func avx2EqualsSwiftLoops() throws {
        try #require(VectorKernels.cpuHasAVX2, "this CPU has no AVX2: nothing to compare")
        var random = SeededGenerator(seed: 11)
        func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        for matrix in Self.matrices {
            let conversion = YCbCrConversion(matrix)
            for count in [1, 2, 15, 16, 17, 31, 32, 33, 100, 513] {
                var y0 = bytes(count), cb = bytes((count + 1) / 2)
                let y1 = bytes(count), cr = bytes((count + 1) / 2)
                if count > 4 { y0[0] = 0; y0[1] = 255; cb[0] = 0; cb[1] = 255 }
                for rows in [y1, nil] {
                    let vector = Self.convert(conversion, y0, rows, cb, cr, avx2: true)
                    let loops = Self.convert(conversion, y0, rows, cb, cr, avx2: false)
                    #expect(vector == loops, "\(matrix) count \(count) pair \(rows != nil)")
                }
            }
        }
    }

    @Test func loopsFollowTheFormula() {
        for matrix in Self.matrices {
            let conversion = YCbCrConversion(matrix)
            for (y, u, v) in [(0, 128, 128), (255, 128, 128), (128, 0, 255), (16, 16, 240), (235, 240, 16), (90, 200, 60)]
                as [(UInt8, UInt8, UInt8)] {
                let out = Self.convert(conversion, [y, y], nil, [u], [v], avx2: false)
                let ls = matrix.fullRange ? 1 : 255.0 / 219, cs = matrix.fullRange ? 1 : 255.0 / 224
                let l = (Double(y) - (matrix.fullRange ? 0 : 16)) * ls
                let pb = (Double(u) - 128) * cs, pr = (Double(v) - 128) * cs
                let kg = 1 - matrix.kr - matrix.kb
                let expected = [l + 2 * (1 - matrix.kr) * pr,
                                l - 2 * matrix.kb * (1 - matrix.kb) / kg * pb - 2 * matrix.kr * (1 - matrix.kr) / kg * pr,
                                l + 2 * (1 - matrix.kb) * pb].map { min(max($0, 0), 255) }
                for c in 0..<3 {
                    // Rounded to the nearest level (2^-16 coefficient rounding may tip a half).
                    #expect(abs(Double(out[c]) - expected[c]) <= 0.5 + 0.01, "\(matrix) \(y) \(u) \(v) channel \(c)")
                    #expect(out[c] == out[3 + c])
                }
            }
        }
    }
}
