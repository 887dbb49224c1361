import CFFmpeg
import Foundation
import Testing
@testable import RGBDFoundation
@testable import RGBDKit
import RGBDSynth

/// `rgbd export`'s JPEGs made straight from the video's Y′CbCr planes
/// (`FrameEncoder`, `YCbCrPicture.inJPEGColors`) against ground truth: the exact
/// conversion of the decoded Y′CbCr to RGB (the decoder's own RGB is libswscale's
/// faster, approximate one), colours converted between matrices and ranges and back,
/// and the AVX2 kernel against the Swift loops.
@Suite(.serialized) struct ExportVideoPicturesTests {
    /// The exact RGB of a picture (floating point, each chroma sample over its 2×2 block,
    /// rounded and clamped): the reference both export paths are measured against.
    static func exactRGB(_ picture: YCbCrPicture) throws -> ColorImage {
        let matrix = try #require(picture.matrix)
        let kr = matrix.kr, kb = matrix.kb, kg = 1 - kr - kb
        let lumaScale = matrix.fullRange ? 1 / 255.0 : 1 / 219.0, lumaZero = matrix.fullRange ? 0.0 : 16
        let chromaScale = matrix.fullRange ? 1 / 255.0 : 1 / 224.0
        var out = ColorImage(width: picture.width, height: picture.height, channels: 3, repeating: 0)
        for y in 0..<picture.height {
            for x in 0..<picture.width {
                let c = (y / 2) * picture.chromaWidth + x / 2
                let l = (Double(picture.luma[y * picture.width + x]) - lumaZero) * lumaScale
                let cb = (Double(picture.cb[c]) - 128) * chromaScale, cr = (Double(picture.cr[c]) - 128) * chromaScale
                let r = l + 2 * (1 - kr) * cr, b = l + 2 * (1 - kb) * cb, g = (l - kr * r - kb * b) / kg
                for (channel, value) in [r, g, b].enumerated() {
                    out[x, y, channel] = UInt8(min(max((value * 255).rounded(), 0), 255))
                }
            }
        }
        return out
    }

    static func psnr(_ a: ColorImage, _ b: ColorImage) -> Double {
        var sum = 0.0
        for (x, y) in zip(a.samples, b.samples) { sum += Double(Int(x) - Int(y)) * Double(Int(x) - Int(y)) }
        let mse = sum / Double(a.samples.count)
        return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
    }

    /// A picture of random planes (sizes odd as well as even) in a given matrix and range.
    static func randomPicture(width: Int, height: Int, colorspace: AVColorSpace, fullRange: Bool,
                              using generator: inout SeededGenerator) -> YCbCrPicture {
        let chroma = ((width + 1) / 2) * ((height + 1) / 2)
        func plane(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        return YCbCrPicture(width: width, height: height, luma: plane(width * height), cb: plane(chroma), cr: plane(chroma),
                            pixelFormat: AV_PIX_FMT_YUV420P.rawValue, colorspace: Int32(colorspace.rawValue),
                            fullRange: fullRange)
    }

    @Test func jpegColorKernelEqualsTheSwiftLoops() throws {
        var generator = SeededGenerator(seed: 709)
        for (space, full) in [(AVCOL_SPC_BT709, false), (AVCOL_SPC_BT709, true), (AVCOL_SPC_SMPTE170M, false)] {
            for (width, height) in [(1920, 8), (37, 23), (130, 65), (2, 1)] {
                let picture = Self.randomPicture(width: width, height: height, colorspace: space, fullRange: full,
                                                 using: &generator)
                let swift = try #require(picture.inJPEGColors(avx2: false))
                let kernel = try #require(picture.inJPEGColors(avx2: VectorKernels.avx2))
                let differing = zip(swift.luma + swift.cb + swift.cr, kernel.luma + kernel.cb + kernel.cr).count { $0 != $1 }
                #expect(differing == 0, "\(width)×\(height): \(differing) values differ")
                #expect(swift.hasJPEGColors)
                #expect(!picture.hasJPEGColors)
            }
        }
        // JPEG's own colours are kept as they are; matrices other than BT.601 and BT.709 are not converted.
        let jpeg = Self.randomPicture(width: 4, height: 4, colorspace: AVCOL_SPC_BT470BG, fullRange: true, using: &generator)
        #expect(jpeg.inJPEGColors()?.luma == jpeg.luma)
        #expect(Self.randomPicture(width: 4, height: 4, colorspace: AVCOL_SPC_BT2020_NCL, fullRange: false,
                                   using: &generator).inJPEGColors() == nil)
    }

    /// Colours inside RGB written as a video holds them (BT.709 or BT.601, limited or
    /// full range) and converted to JPEG's Y′CbCr: each code value is the exact one
    /// (source codes → R′G′B′ → BT.601 full range, in floating point) rounded, and read
    /// back with JPEG's matrix the colour is the one it started as, within the rounding
    /// of the code values on both sides.
    @Test func jpegColorsKeepTheColours() throws {
        var generator = SeededGenerator(seed: 601)
        for full in [false, true] {
            for kr in [0.2126, 0.299] {
                let kb = kr == 0.299 ? 0.114 : 0.0722, kg = 1 - kr - kb
                let lumaScale = full ? 255.0 : 219, lumaZero = full ? 0.0 : 16, chromaScale = full ? 255.0 : 224
                var largestCode = 0.0, largestColour = 0.0
                for _ in 0..<2000 {
                    let rgb = (0..<3).map { _ in Double.random(in: 0...1, using: &generator) }
                    let l = kr * rgb[0] + kg * rgb[1] + kb * rgb[2]
                    let cb = (rgb[2] - l) / (2 * (1 - kb)), cr = (rgb[0] - l) / (2 * (1 - kr))
                    func code(_ value: Double, _ scale: Double, _ zero: Double) -> UInt8 {
                        UInt8(min(max((value * scale + zero).rounded(), 0), 255))
                    }
                    let y8 = code(l, lumaScale, lumaZero), cb8 = code(cb, chromaScale, 128), cr8 = code(cr, chromaScale, 128)
                    let picture = YCbCrPicture(width: 2, height: 2, luma: [y8, y8, y8, y8], cb: [cb8], cr: [cr8],
                                               pixelFormat: AV_PIX_FMT_YUV420P.rawValue,
                                               colorspace: Int32((kr == 0.299 ? AVCOL_SPC_SMPTE170M : AVCOL_SPC_BT709).rawValue),
                                               fullRange: full)
                    let jpeg = try #require(picture.inJPEGColors())
                    // The exact conversion of the codes.
                    let sl = (Double(y8) - lumaZero) / lumaScale
                    let scb = (Double(cb8) - 128) / chromaScale, scr = (Double(cr8) - 128) / chromaScale
                    let r = sl + 2 * (1 - kr) * scr, b = sl + 2 * (1 - kb) * scb, g = (sl - kr * r - kb * b) / kg
                    let jl = 0.299 * r + 0.587 * g + 0.114 * b
                    let exact = [jl * 255, (b - jl) / (2 * (1 - 0.114)) * 255 + 128, (r - jl) / (2 * (1 - 0.299)) * 255 + 128]
                    for (ours, value) in zip([jpeg.luma[0], jpeg.cb[0], jpeg.cr[0]], exact) {
                        largestCode = max(largestCode, abs(Double(ours) - min(max(value, 0), 255)))
                    }
                    let back = try Self.exactRGB(jpeg)
                    for c in 0..<3 { largestColour = max(largestColour, abs(Double(back[0, 0, c]) - rgb[c] * 255)) }
                }
                #expect(largestCode <= 0.51, "kr \(kr), full range \(full): codes \(largestCode) from the exact ones")
                // Half a code on each side, times the matrices' chroma gains (up to 1.86 · 255/224).
                #expect(largestColour <= 3.5, "kr \(kr), full range \(full): colours \(largestColour) levels off")
            }
        }
    }

    /// A 1920×1440 synthetic Stray scan (HEVC, yuv420p, limited range, untagged: read as
    /// BT.709, as FFmpeg's players read HD) exported to COLMAP both ways: the JPEGs made
    /// from the planes are at least as close to the exact RGB of the decoded pictures as
    /// those made through the decoder's RGB, and close to them; the decoder's RGB is the
    /// pictures' own through `YCbCrPicture.rgb()`.
    @Test func jpegsFromThePlanesShowTheSamePicture() throws {
        let scan = SyntheticScan(frameCount: 3, colorWidth: 1920, colorHeight: 1440)
        let (scene, _, path) = try SceneTests.written(.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false),
                                                      scan: scan)
        let video = Path.join(path, "rgb.mp4")
        let pictures = try VideoDecoder(path: video), rgb = try VideoDecoder(path: video)
        var exact: [ColorImage] = []
        while let (frame, _) = try pictures.nextPicture() {
            guard case .ycbcr(let picture) = frame else {
                Issue.record("the synthetic video is not 8-bit 4:2:0")
                return
            }
            #expect(picture.colorspace == Int32(AVCOL_SPC_BT709.rawValue) && !picture.fullRange)
            let decoded = try #require(try rgb.nextFrame()).image
            #expect(try picture.rgb().samples == decoded.samples)
            exact.append(try Self.exactRGB(picture))
        }
        #expect(exact.count == 3)
        var options = SceneExportOptions(format: .colmap)
        options.overwrite = true
        let fast = try SceneTests.directory() + "/fast", slow = try SceneTests.directory() + "/slow"
        _ = try SceneExport.run(scene, to: fast, options: options, videoPictures: true, progress: nil)
        _ = try SceneExport.run(scene, to: slow, options: options, videoPictures: false, progress: nil)
        let names = try FileSystem.contentsOfDirectory(Path.join(fast, "images")).sorted()
        #expect(names.count == 3)
        for (name, truth) in zip(names, exact) {
            let fastBytes = try FileSystem.readFile(Path.join(Path.join(fast, "images"), name), limit: 1 << 26)
            let slowBytes = try FileSystem.readFile(Path.join(Path.join(slow, "images"), name), limit: 1 << 26)
            #expect(fastBytes != slowBytes)
            let a = try JPEGCodec.decodeRGB(fastBytes), b = try JPEGCodec.decodeRGB(slowBytes)
            let fastToTruth = Self.psnr(a, truth), slowToTruth = Self.psnr(b, truth), between = Self.psnr(a, b)
            // JPEG's own loss at quality 93 dominates: 44.5-46.3 dB over a 200-frame scan.
            #expect(fastToTruth > 44 && fastToTruth >= slowToTruth && between > 42,
                    "\(name): planes \(fastToTruth) dB, RGB \(slowToTruth) dB from the exact RGB; \(between) dB apart")
        }
    }
}
