import CPNG
import Dispatch
import Testing
@testable import RGBDFoundation
@testable import RGBDKit

/// Shapes for the round trips: single pixel, tiny and odd widths, heights of a few rows,
/// several multi-row strips with a partial last one, and rows so long that each strip is
/// one row.
private let colorShapes: [(width: Int, height: Int)] = [
    (1, 1), (7, 3), (5, 9), (33, 2), (2, 40), (257, 131), (1000, 300), (45_000, 3),
]
private let grayShapes: [(width: Int, height: Int)] = [
    (1, 1), (7, 3), (5, 9), (33, 2), (2, 40), (257, 131), (2000, 200), (70_000, 2),
]
private let efforts: [PNGCodec.Effort] = [.fast, .small]

/// Test content: pure noise, a smooth gradient with a little noise (photo-like), or flat.
private enum Pattern: CaseIterable {
    case noise, gradient, flat
}

private func colorImage(width: Int, height: Int, pattern: Pattern, seed: UInt64 = 1) -> ColorImage {
    var random = SeededGenerator(seed: seed)
    var samples = [UInt8](repeating: 0, count: width * height * 3)
    for y in 0..<height {
        for x in 0..<width {
            for c in 0..<3 {
                let value: Int
                switch pattern {
                case .noise: value = Int(random.next() & 0xFF)
                case .gradient: value = (x * 3 + y * 2 + c * 40) % 256 + Int(random.next() % 5) - 2
                case .flat: value = 17 + 60 * c
                }
                samples[(y * width + x) * 3 + c] = UInt8(clamping: value)
            }
        }
    }
    return ColorImage(width: width, height: height, channels: 3, samples: samples)
}

private func grayImage(width: Int, height: Int, pattern: Pattern, seed: UInt64 = 1) -> ImageBuffer<UInt16> {
    var random = SeededGenerator(seed: seed)
    var samples = [UInt16](repeating: 0, count: width * height)
    for y in 0..<height {
        for x in 0..<width {
            let value: Int
            switch pattern {
            case .noise: value = Int(random.next() & 0xFFFF)
            // Millimeters like a depth map, with holes (0).
            case .gradient: value = (x + y) % 97 == 0 ? 0 : 1500 + 3 * x + 2 * y + Int(random.next() % 7) - 3
            case .flat: value = 0xA55A
            }
            samples[y * width + x] = UInt16(clamping: value)
        }
    }
    return ImageBuffer(width: width, height: height, channels: 1, samples: samples)
}

private func bigEndian32(_ bytes: [UInt8], _ offset: Int) -> Int {
    bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
}

/// What `checkedStructure` finds in a PNG file.
private struct PNGStructure {
    var width = 0
    var height = 0
    var bitDepth = 0
    var colorType = 0
    var idatCount = 0
    /// The inflated IDAT data: filter-type byte and filtered bytes of every row.
    var scanlines: [UInt8] = []
}

/// Checks the signature, the chunk sequence (IHDR, IDAT..., IEND) and every CRC, and
/// inflates the IDAT data with zlib, which checks the stream's Adler-32.
private func checkedStructure(_ png: [UInt8], rowBytes: Int) -> PNGStructure? {
    var result = PNGStructure()
    guard png.count >= 8, Array(png[0..<8]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] else { return nil }
    var offset = 8
    var names: [String] = []
    var zlibStream: [UInt8] = []
    while offset + 12 <= png.count {
        let length = bigEndian32(png, offset)
        guard offset + 12 + length <= png.count else { return nil }
        let typeAndData = Array(png[offset + 4..<offset + 8 + length])
        let crc = typeAndData.withUnsafeBufferPointer { crc32(0, $0.baseAddress, UInt32($0.count)) }
        guard Int(crc) == bigEndian32(png, offset + 8 + length) else { return nil }
        let name = String(decoding: typeAndData[0..<4], as: UTF8.self)
        names.append(name)
        let data = Array(typeAndData[4...])
        if name == "IHDR" {
            result.width = bigEndian32(data, 0)
            result.height = bigEndian32(data, 4)
            result.bitDepth = Int(data[8])
            result.colorType = Int(data[9])
        } else if name == "IDAT" {
            zlibStream += data
            result.idatCount += 1
        }
        offset += 12 + length
    }
    guard offset == png.count, names.first == "IHDR", names.last == "IEND",
          names.dropFirst().dropLast().allSatisfy({ $0 == "IDAT" }), result.idatCount > 0
    else { return nil }
    let expected = result.height * (rowBytes + 1)
    var scanlines = [UInt8](repeating: 0, count: expected + 1)
    var outputLength = UInt(scanlines.count)
    var inputLength = UInt(zlibStream.count)
    let status = uncompress2(&scanlines, &outputLength, zlibStream, &inputLength)
    guard status == Z_OK, Int(outputLength) == expected, Int(inputLength) == zlibStream.count else { return nil }
    result.scanlines = Array(scanlines[0..<expected])
    return result
}

/// The number of strips (one IDAT chunk each) the encoder cuts an image into.
private func stripCount(height: Int, rowBytes: Int) -> Int {
    let rowsPerStrip = max(1, PNGCodec.stripBytes / (rowBytes + 1))
    return (height + rowsPerStrip - 1) / rowsPerStrip
}

@Suite struct PNGCodecTests {
    @Test(arguments: colorShapes, efforts)
    func rgbRoundTrip(shape: (width: Int, height: Int), effort: PNGCodec.Effort) throws {
        for pattern in Pattern.allCases {
            let image = colorImage(width: shape.width, height: shape.height, pattern: pattern)
            let png = try PNGCodec.encodeRGB(image, effort: effort)
            let structure = checkedStructure(png, rowBytes: shape.width * 3)
            #expect(structure != nil, "\(shape) \(pattern): not a well-formed PNG")
            if let structure {
                #expect(structure.width == shape.width && structure.height == shape.height)
                #expect(structure.bitDepth == 8 && structure.colorType == 2)
                #expect(structure.idatCount == stripCount(height: shape.height, rowBytes: shape.width * 3))
            }
            let decoded = try PNGCodec.decodeRGB(png)
            #expect(decoded.width == shape.width && decoded.height == shape.height)
            #expect(decoded.samples == image.samples, "\(shape) \(pattern) \(effort): pixels differ")
        }
    }

    @Test(arguments: grayShapes, efforts)
    func gray16RoundTrip(shape: (width: Int, height: Int), effort: PNGCodec.Effort) throws {
        for pattern in Pattern.allCases {
            let image = grayImage(width: shape.width, height: shape.height, pattern: pattern)
            let png = try PNGCodec.encodeGray16(width: shape.width, height: shape.height, samples: image.samples,
                                                effort: effort)
            let structure = checkedStructure(png, rowBytes: shape.width * 2)
            #expect(structure != nil, "\(shape) \(pattern): not a well-formed PNG")
            if let structure {
                #expect(structure.width == shape.width && structure.height == shape.height)
                #expect(structure.bitDepth == 16 && structure.colorType == 0)
                #expect(structure.idatCount == stripCount(height: shape.height, rowBytes: shape.width * 2))
            }
            let decoded = try PNGCodec.decodeGray16(png)
            #expect(decoded.width == shape.width && decoded.height == shape.height)
            #expect(decoded.samples == image.samples, "\(shape) \(pattern) \(effort): samples differ")
        }
    }

    /// PNG stores 16-bit samples most significant byte first, whatever the host's order.
    @Test func gray16IsBigEndian() throws {
        let png = try PNGCodec.encodeGray16(width: 2, height: 1, samples: [0x1234, 0xABCD], effort: .fast)
        let structure = try #require(checkedStructure(png, rowBytes: 4))
        // Row 0 with the Paeth filter: the row above is zero, so the bytes minus the left pixel.
        #expect(structure.scanlines == [4, 0x12, 0x34, 0xAB &- 0x12, 0xCD &- 0x34])
    }

    @Test(arguments: efforts)
    func encodingIsDeterministic(effort: PNGCodec.Effort) throws {
        let color = colorImage(width: 1000, height: 300, pattern: .gradient, seed: 7)
        let gray = grayImage(width: 2000, height: 200, pattern: .gradient, seed: 7)
        let colorPNG = try PNGCodec.encodeRGB(color, effort: effort)
        let grayPNG = try PNGCodec.encodeGray16(width: 2000, height: 200, samples: gray.samples, effort: effort)
        #expect(try PNGCodec.encodeRGB(color, effort: effort) == colorPNG)
        #expect(try PNGCodec.encodeGray16(width: 2000, height: 200, samples: gray.samples, effort: effort) == grayPNG)

        // Encoded from inside concurrent work (where Dispatch runs the strips on fewer
        // threads, down to one), the bytes are the same.
        nonisolated(unsafe) var results = [[UInt8]?](repeating: nil, count: 4)
        results.withUnsafeMutableBufferPointer { slots in
            nonisolated(unsafe) let slots = slots
            DispatchQueue.concurrentPerform(iterations: 4) { i in
                slots[i] = i.isMultiple(of: 2)
                    ? try? PNGCodec.encodeRGB(color, effort: effort)
                    : try? PNGCodec.encodeGray16(width: 2000, height: 200, samples: gray.samples, effort: effort)
            }
        }
        for (i, result) in results.enumerated() {
            #expect(result == (i.isMultiple(of: 2) ? colorPNG : grayPNG))
        }
    }

    /// The strips are coded on as many threads as there are processors; the bytes must
    /// not depend on it. Forced here to 1, 2 and 3 threads, on images of many strips
    /// (and one of a single strip).
    @Test(arguments: efforts)
    func sameBytesOnAnyNumberOfThreads(effort: PNGCodec.Effort) throws {
        for (width, height) in [(1000, 300), (600, 2000), (50, 20)] {
            let color = colorImage(width: width, height: height, pattern: .gradient, seed: 5)
            let gray = grayImage(width: width, height: height, pattern: .gradient, seed: 5)
            #expect(stripCount(height: height, rowBytes: width * 3) >= (height > 100 ? 3 : 1))
            let colorOne = try PNGCodec.encodeRGB(color, effort: effort, threads: 1)
            let grayOne = try PNGCodec.encodeGray16(width: width, height: height, samples: gray.samples,
                                                    effort: effort, threads: 1)
            for threads in [2, 3] {
                #expect(try PNGCodec.encodeRGB(color, effort: effort, threads: threads) == colorOne)
                #expect(try PNGCodec.encodeGray16(width: width, height: height, samples: gray.samples,
                                                  effort: effort, threads: threads) == grayOne)
            }
            #expect(try PNGCodec.decodeRGB(colorOne).samples == color.samples)
            #expect(try PNGCodec.decodeGray16(grayOne).samples == gray.samples)
        }
    }

    /// `filteredScanlines` (the benchmark baseline's input) are the rows the default
    /// effort codes: Paeth-filtered, each with its filter-type byte.
    @Test func filteredScanlinesAreWhatTheFileHolds() throws {
        let image = colorImage(width: 333, height: 1000, pattern: .gradient, seed: 9)
        let structure = try #require(checkedStructure(try PNGCodec.encodeRGB(image), rowBytes: 999))
        let scanlines = PNGCodec.filteredScanlines(image)
        #expect(scanlines == structure.scanlines)
        #expect((0..<1000).allSatisfy { scanlines[$0 * 1000] == 4 })
    }

    /// The vector Paeth filter against the PNG specification's predictor, written out
    /// here, for every (a, b, c) and two current bytes per triple: with 16 bytes per
    /// pixel, row = [a… | x…] and above = [c… | b…].
    @Test func vectorPaethMatchesTheSpecificationOnEveryTriple() {
        func predictor(_ a: Int, _ b: Int, _ c: Int) -> Int {
            let p = a + b - c
            let pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
            if pa <= pb && pa <= pc { return a }
            return pb <= pc ? b : c
        }
        var row = [UInt8](repeating: 0, count: 32), above = [UInt8](repeating: 0, count: 32)
        var out = [UInt8](repeating: 0, count: 16)
        var mismatches = 0
        for a in 0..<256 {
            for b in 0..<256 {
                for cBase in stride(from: 0, to: 256, by: 16) {
                    for lane in 0..<16 {
                        row[lane] = UInt8(a)
                        row[16 + lane] = UInt8(truncatingIfNeeded: a &* 7 &+ b &* 3 &+ lane)
                        above[lane] = UInt8(cBase + lane)
                        above[16 + lane] = UInt8(b)
                    }
                    row.withUnsafeBufferPointer { r in
                        above.withUnsafeBufferPointer { u in
                            out.withUnsafeMutableBufferPointer { o in
                                RowFilter.paeth16(r.baseAddress! + 16, u.baseAddress! + 16, 16, o.baseAddress!)
                            }
                        }
                    }
                    for lane in 0..<16 {
                        let expected = UInt8(truncatingIfNeeded: Int(row[16 + lane]) - predictor(a, b, cBase + lane))
                        if out[lane] != expected { mismatches += 1 }
                    }
                }
            }
        }
        #expect(mismatches == 0)
    }

    /// The 257×131 pseudo-random image in both efforts: `small` is never much larger than
    /// `fast`, and flat content compresses to almost nothing.
    @Test func sizesAreSensible() throws {
        let noise = colorImage(width: 257, height: 131, pattern: .noise, seed: 3)
        let fast = try PNGCodec.encodeRGB(noise, effort: .fast)
        let small = try PNGCodec.encodeRGB(noise, effort: .small)
        #expect(try PNGCodec.decodeRGB(small).samples == noise.samples)
        #expect(Double(small.count) <= Double(fast.count) * 1.02)
        // Incompressible: about the raw size, not much more.
        #expect(fast.count < 257 * 131 * 3 * 11 / 10)

        let flat = colorImage(width: 1000, height: 300, pattern: .flat)
        #expect(try PNGCodec.encodeRGB(flat, effort: .fast).count < 20_000)
        #expect(try PNGCodec.encodeRGB(flat, effort: .small).count < 10_000)
    }

    @Test func emptyImagesAreRejected() {
        #expect(throws: RGBDError.self) { try PNGCodec.encodeRGB(ColorImage(width: 0, height: 0, channels: 3, samples: [])) }
        #expect(throws: RGBDError.self) {
            try PNGCodec.encodeRGB(ColorImage(width: 5, height: 0, channels: 3, samples: []), effort: .small)
        }
        #expect(throws: RGBDError.self) { try PNGCodec.encodeGray16(width: 0, height: 3, samples: []) }
    }
}
