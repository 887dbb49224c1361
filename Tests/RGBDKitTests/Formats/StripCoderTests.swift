import CPNG
import Testing
@testable import RGBDFoundation
@testable import RGBDKit

/// PNGCodec's ISA-L strip coder against zlib's inflate (the decoder libpng uses): strips
/// coded separately, all but the last ending with a sync flush, must join into one zlib
/// stream whose Adler-32 is combined from the strips' own.
@Suite struct StripCoderTests {
    /// Codes `pieces` as consecutive strips with fresh ISA-L streams, wraps them in a zlib
    /// stream (header, strips, combined Adler-32) and inflates it with zlib.
    static func roundTrip(_ pieces: [[UInt8]], level: Int = 1, historyBits: Int = 2)
        throws -> (inflated: [UInt8], compressed: Int)
    {
        try roundTrip(pieces, coders: [try ISALCoder(level: level, historyBits: historyBits)])
    }

    /// As above, piece i coded by `coders[i % coders.count]`.
    static func roundTrip(_ pieces: [[UInt8]], coders: [any StripCoder]) throws -> (inflated: [UInt8], compressed: Int) {
        var stream: [UInt8] = []
        var adler: UInt = 1
        for (i, piece) in pieces.enumerated() {
            let coder = coders[i % coders.count]
            let last = i == pieces.count - 1
            let strip = try piece.withUnsafeBufferPointer {
                try coder.code($0, last: last, prefix: i == 0 ? [0x78, 0x01] : [], reserve: last ? 4 : 0)
            }
            #expect(strip.inputCount == piece.count)
            adler = i == 0 ? strip.adler : rgbd_adler32_combine(adler, strip.adler, Int64(piece.count))
            if last {
                strip.appendReserved([UInt8(truncatingIfNeeded: adler >> 24), UInt8(truncatingIfNeeded: adler >> 16),
                                      UInt8(truncatingIfNeeded: adler >> 8), UInt8(truncatingIfNeeded: adler)])
            }
            stream += Array(UnsafeBufferPointer(start: strip.buffer, count: strip.count))
        }
        let total = pieces.reduce(0) { $0 + $1.count }
        var output = [UInt8](repeating: 0, count: total + 1)
        var outputLength = UInt(output.count), inputLength = UInt(stream.count)
        let status = uncompress2(&output, &outputLength, stream, &inputLength)
        #expect(status == Z_OK, "zlib status \(status)")
        #expect(Int(inputLength) == stream.count, "zlib stopped before the end of the stream")
        return (Array(output.prefix(Int(outputLength))), stream.count)
    }

    /// Small values around zero with runs, like filtered photo rows.
    static func residuals(count: Int, seed: UInt64) -> [UInt8] {
        var random = SeededGenerator(seed: seed)
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            let r = random.next()
            if r % 7 == 0 {
                out += [UInt8](repeating: 0, count: min(count - out.count, Int((r >> 8) % 40)))
            } else {
                out.append(UInt8(truncatingIfNeeded: Int((r >> 16) % 9) - 4))
            }
        }
        return out
    }

    static func noise(count: Int, seed: UInt64) -> [UInt8] {
        var random = SeededGenerator(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    @Test(arguments: [0, 1, 2, 100, 65_535, 65_536, 300_001])
    func inputsOfEverySizeComeBack(size: Int) throws {
        for input in [Self.residuals(count: size, seed: 1), Self.noise(count: size, seed: UInt64(size)),
                      [UInt8](repeating: 42, count: size)] {
            for (level, bits) in [(1, 2), (1, 3), (1, 15), (0, 15), (3, 15)] {
                let (inflated, _) = try Self.roundTrip([input], level: level, historyBits: bits)
                #expect(inflated == input, "\(size) bytes, level \(level), history 2^\(bits)")
            }
        }
    }

    @Test func stripsJoinIntoOneStream() throws {
        let pieces = [Self.residuals(count: 70_000, seed: 2), [], Self.noise(count: 20_000, seed: 3), [7],
                      Self.residuals(count: 9, seed: 4), [UInt8](repeating: 0, count: 100_000)]
        for bits in [2, 3, 15] {
            let (inflated, _) = try Self.roundTrip(pieces, historyBits: bits)
            #expect(inflated == pieces.flatMap { $0 })
        }
    }

    /// Compressible input shrinks; incompressible input grows by little.
    /// A strip's bytes depend on the strip alone, not on what the coder (one per thread,
    /// taking whichever strip comes next) coded before: a busy machine hands strips to
    /// threads in another order, and must write the same bytes for the same image.
    @Test(arguments: [(1, 2), (1, 15), (2, 15), (3, 15)])
    func stripBytesDoNotDependOnTheCodersEarlierStrips(level: Int, historyBits: Int) throws {
        for strip in [Self.residuals(count: 90_000, seed: 21), Self.noise(count: 90_000, seed: 24)] {
        func bytes(_ coder: ISALCoder, _ input: [UInt8]) throws -> [UInt8] {
            let coded = try input.withUnsafeBufferPointer { try coder.code($0, last: false, prefix: [], reserve: 0) }
            return Array(UnsafeBufferPointer(start: coded.buffer, count: coded.count))
        }
        let fresh = try bytes(try ISALCoder(level: level, historyBits: historyBits), strip)
        let used = try ISALCoder(level: level, historyBits: historyBits)
        let earlier: [[UInt8]] = [strip + strip, Self.residuals(count: 300_000, seed: 22), Self.noise(count: 200_000, seed: 23),
                                  [UInt8](repeating: 0, count: 100_000), Array(strip.prefix(40_000)), Array(strip.suffix(50_000))]
        for input in earlier {
            _ = try bytes(used, input)
            #expect(try bytes(used, strip) == fresh, "level \(level), \(historyBits) history bits, after \(input.count) bytes")
        }
        }
    }

    @Test func sizes() throws {
        let residuals = Self.residuals(count: 200_000, seed: 8)
        let (_, residualSize) = try Self.roundTrip([residuals])
        // Literals from 9 values (about 3.2 bits) and zero runs.
        #expect(residualSize < residuals.count / 2, "\(residualSize) bytes")
        let noise = Self.noise(count: 200_000, seed: 9)
        let (_, noiseSize) = try Self.roundTrip([noise])
        #expect(noiseSize < noise.count + noise.count / 50, "\(noiseSize) bytes")
    }

    /// The benchmark baseline: one zlib stream on the calling thread, inflated by zlib.
    @Test func singleStreamBaselineInflates() throws {
        let input = Self.residuals(count: 500_000, seed: 11)
        let stream = try PNGCodec.zlibStreamISAL(input, level: 1)
        var output = [UInt8](repeating: 0, count: input.count + 1)
        var outputLength = UInt(output.count), inputLength = UInt(stream.count)
        #expect(uncompress2(&output, &outputLength, stream, &inputLength) == Z_OK)
        #expect(Array(output.prefix(Int(outputLength))) == input)
        #expect(Int(inputLength) == stream.count)
    }

    /// libdeflate ends every stream with a final block; reopened, its strips join too,
    /// with ISA-L's and with each other's, whatever bit the last block ended on.
    @Test func libdeflateStripsJoinIntoOneStream() throws {
        let coders: [any StripCoder] = [try LibdeflateCoder(level: 10), try ISALCoder(level: 1, historyBits: 2),
                                        try LibdeflateCoder(level: 1)]
        let pieces = [Self.residuals(count: 70_000, seed: 2), [], Self.noise(count: 20_000, seed: 3), [7], [],
                      Self.residuals(count: 9, seed: 4), [UInt8](repeating: 0, count: 100_000),
                      Self.residuals(count: 300_001, seed: 5)]
        let (inflated, _) = try Self.roundTrip(pieces, coders: coders)
        #expect(inflated == pieces.flatMap { $0 })
    }

    /// A reopened stream gains 4 bytes (LEN, NLEN) when the stored block's 3 header bits
    /// fit in the last byte's padding, else 5: both cases occur among these lengths, and
    /// every reopened stream, followed by another, inflates to both inputs.
    @Test func reopenedStreamsEndOnEveryBit() throws {
        let coder = try LibdeflateCoder(level: 6)
        var growths: Set<Int> = []
        for length in 1...48 {
            let first = Self.residuals(count: length * 37, seed: UInt64(length))
            let second = Self.residuals(count: 100, seed: 99)
            let (inflated, _) = try Self.roundTrip([first, second], coders: [coder])
            #expect(inflated == first + second, "\(first.count) bytes")
            let complete = try first.withUnsafeBufferPointer {
                try coder.code($0, last: true, prefix: [], reserve: 0).count
            }
            let reopened = try first.withUnsafeBufferPointer {
                try coder.code($0, last: false, prefix: [], reserve: 0).count
            }
            growths.insert(reopened - complete)
        }
        #expect(growths == [4, 5])
    }

    @Test func badLevelsAreRefused() {
        #expect(throws: RGBDError.self) { try LibdeflateCoder(level: 13) }
        #expect(throws: RGBDError.self) { try LibdeflateCoder(level: 0) }
        #expect(throws: RGBDError.self) { try ISALCoder(level: 4, historyBits: 15) }
        #expect(throws: RGBDError.self) { try ISALCoder(level: 1, historyBits: 0) }
        #expect(throws: RGBDError.self) { try PNGCodec.zlibStreamISAL([1, 2, 3], level: -1) }
    }
}
