import CPNG
import Testing
@testable import RGBDKit

/// rgbd's Huffman-only deflate coder against zlib's inflate (the decoder every PNG
/// reader uses), on the inputs that stress it.
@Suite struct HuffmanDeflaterTests {
    /// Codes `pieces` as consecutive strips (each a `HuffmanDeflater`, all but the last
    /// ending with a sync flush), wraps them in a zlib stream and inflates it.
    static func roundTrip(_ pieces: [[UInt8]]) throws -> (inflated: [UInt8], compressed: Int) {
        var stream: [UInt8] = [0x78, 0x01]
        var adler: UInt = 1
        for (i, piece) in pieces.enumerated() {
            let last = i == pieces.count - 1
            let coder = HuffmanDeflater(expectedInput: piece.count, prefix: [], reserve: 0)
            // Written in a few calls, as rows come.
            var offset = 0
            while offset < piece.count {
                let n = min(piece.count - offset, 5000)
                try piece.withUnsafeBufferPointer { try coder.write($0.baseAddress! + offset, count: n) }
                offset += n
            }
            try coder.finish(last: last)
            stream += Array(UnsafeBufferPointer(start: coder.buffer, count: coder.count))
            adler = i == 0 ? coder.adler : rgbd_adler32_combine(adler, coder.adler, Int64(piece.count))
        }
        stream += [UInt8(truncatingIfNeeded: adler >> 24), UInt8(truncatingIfNeeded: adler >> 16),
                   UInt8(truncatingIfNeeded: adler >> 8), UInt8(truncatingIfNeeded: adler)]
        let total = pieces.reduce(0) { $0 + $1.count }
        var output = [UInt8](repeating: 0, count: total + 1)
        var outputLength = UInt(output.count), inputLength = UInt(stream.count)
        let status = uncompress2(&output, &outputLength, stream, &inputLength)
        #expect(status == Z_OK, "zlib status \(status)")
        #expect(Int(inputLength) == stream.count, "zlib stopped before the end of the stream")
        return (Array(output.prefix(Int(outputLength))), stream.count)
    }

    /// Bytes with Fibonacci-like frequencies: an unlimited Huffman code would need
    /// codes far longer than deflate's 15 bits.
    static func skewed(count: Int) -> [UInt8] {
        var weights: [Int] = [1, 1]
        while weights.count < 26 { weights.append(weights[weights.count - 1] + weights[weights.count - 2]) }
        let total = weights.reduce(0, +)
        var out: [UInt8] = []
        out.reserveCapacity(count)
        var random = SeededGenerator(seed: 5)
        while out.count < count {
            var pick = Int(random.next() % UInt64(total))
            var symbol = 0
            while pick >= weights[symbol] { pick -= weights[symbol]; symbol += 1 }
            out.append(UInt8(symbol * 9))
        }
        return out
    }

    static func noise(count: Int, seed: UInt64) -> [UInt8] {
        var random = SeededGenerator(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    @Test(arguments: [0, 1, 2, 100, HuffmanDeflater.blockBytes - 1, HuffmanDeflater.blockBytes,
                      HuffmanDeflater.blockBytes + 1, 3 * HuffmanDeflater.blockBytes + 7])
    func inputsOfEverySizeComeBack(size: Int) throws {
        for input in [Self.skewed(count: size), Self.noise(count: size, seed: UInt64(size)), [UInt8](repeating: 42, count: size)] {
            let (inflated, _) = try Self.roundTrip([input])
            #expect(inflated == input)
        }
    }

    @Test func stripsJoinIntoOneStream() throws {
        let pieces = [Self.skewed(count: 70_000), [], Self.noise(count: 20_000, seed: 3), [7], Self.skewed(count: 9)]
        let (inflated, _) = try Self.roundTrip(pieces)
        #expect(inflated == pieces.flatMap { $0 })
    }

    @Test func compressesSkewedDataAndStoresNoise() throws {
        let skewed = Self.skewed(count: 200_000)
        let (_, skewedSize) = try Self.roundTrip([skewed])
        // The entropy of this distribution is about 2.3 bits a byte.
        #expect(skewedSize < skewed.count * 35 / 100, "\(skewedSize) bytes")
        let noise = Self.noise(count: 200_000, seed: 9)
        let (_, noiseSize) = try Self.roundTrip([noise])
        // Stored blocks: 5 bytes each, plus the zlib header and trailer.
        #expect(noiseSize <= noise.count + 5 * (noise.count / HuffmanDeflater.blockBytes + 1) + 6, "\(noiseSize) bytes")
    }

    /// Length-limited codes are complete (Kraft sum 1) and within the limit.
    @Test func codeLengthsAreLimitedAndComplete() {
        var fibonacci: [Int] = [1, 1]
        while fibonacci.count < 40 { fibonacci.append(fibonacci[fibonacci.count - 1] + fibonacci[fibonacci.count - 2]) }
        for (frequencies, limit) in [(fibonacci, 15), (fibonacci, 7), ([5, 0], 15), ([0, 0, 3], 7), ([0, 0], 7), ([Int](repeating: 1, count: 257), 15)] {
            let lengths = HuffmanCode.lengths(frequencies: frequencies, limit: limit)
            #expect(lengths.max() ?? 0 <= limit)
            let kraft = lengths.filter { $0 > 0 }.reduce(0.0) { $0 + 1 / Double(1 << $1) }
            #expect(kraft == 1, "\(frequencies.count) symbols, limit \(limit): Kraft sum \(kraft)")
            #expect(zip(frequencies, lengths).allSatisfy { $0 == 0 || $1 > 0 }, "a used symbol has no code")
        }
    }
}
