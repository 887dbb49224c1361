import Foundation
import Testing
@testable import RGBDKit

/// The LZFSE decoder against Apple's reference encoder (the PyPI `lzfse` package, run at
/// test time: `EncoderCases`), and against hostile streams, each with its one-line error.
@Suite struct LZFSETests {
    /// Every case the encoder made decodes to its input, byte for byte; together they
    /// hold every block kind (the encoder writes bvx-, bvxn and bvx2 by input size; the
    /// bvx1 copies are the same streams with their headers rewritten by the script),
    /// several LZFSE blocks in one stream (matches reaching into earlier blocks).
    @Test func decodesWhatTheReferenceEncoderWrites() throws {
        let directory = try EncoderCases.lzfse.get()
        let manifest = try EncoderCases.manifest(directory)
        #expect(manifest.count == 12)
        var kinds: Set<String> = [], mostV2 = 0, v1Streams = 0
        for (name, value) in manifest.sorted(by: { $0.key < $1.key }) {
            let info = try #require(value as? [String: Any])
            let blocks = try #require(info["blocks"] as? [String])
            kinds.formUnion(blocks)
            mostV2 = max(mostV2, blocks.filter { $0 == "bvx2" }.count)
            let raw = try EncoderCases.bytes(directory.appendingPathComponent("\(name).raw"))
            let stream = try EncoderCases.bytes(directory.appendingPathComponent("\(name).lzfse"))
            #expect(try LZFSE.decompress(stream, outputLimit: raw.count) == raw, "\(name)")
            if info["v1"] as? Bool == true {
                let v1 = try EncoderCases.bytes(directory.appendingPathComponent("\(name).v1.lzfse"))
                #expect(Array(v1.prefix(4)) == Array("bvx1".utf8), "\(name)")
                #expect(try LZFSE.decompress(v1, outputLimit: raw.count) == raw, "\(name) as bvx1")
                v1Streams += 1
            }
        }
        #expect(kinds == ["bvx-", "bvxn", "bvx2", "bvx$"])
        #expect(mostV2 >= 30, "no stream of many LZFSE blocks")
        #expect(v1Streams == 5)
    }

    /// The depth frame decodes to the float32 map the script wrote (NaNs included), and
    /// fast: Record3D scans hold thousands of frames.
    @Test func decodesADepthFrameQuickly() throws {
        let directory = try EncoderCases.lzfse.get()
        let stream = try EncoderCases.bytes(directory.appendingPathComponent("depth-256x192.lzfse"))
        let raw = try EncoderCases.bytes(directory.appendingPathComponent("depth-256x192.raw"))
        #expect(raw.count == 256 * 192 * 4)
        let depths = try LZFSE.decompress(stream, outputLimit: raw.count).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        #expect(depths.count == 256 * 192)
        #expect(depths.filter(\.isNaN).count > 100 && depths.filter { $0 > 1 && $0 < 2.5 }.count > 40000)
        #expect(depths.map(\.bitPattern) == raw.withUnsafeBytes { Array($0.bindMemory(to: UInt32.self)) })

        // The thread's CPU time, not the wall clock: the machine may be shared.
        func cpuSeconds() -> Double {
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
        }
        let runs = 300
        let start = cpuSeconds()
        for _ in 0..<runs { _ = try LZFSE.decompress(stream, outputLimit: raw.count) }
        let perFrame = (cpuSeconds() - start) / Double(runs)
        print("LZFSE: a 256×192 float32 depth frame (\(stream.count) bytes, 5 LZFSE blocks) decodes in \(Int(perFrame * 1e6)) µs of CPU")
        // Well under a millisecond (a loose bound: sanitizer and debug builds are slower).
        #expect(perFrame < 0.005)
    }

    /// Hostile streams, each refused with its one-line message.
    @Test func refusesMalformedStreams() throws {
        let directory = try EncoderCases.lzfse.get()
        let text = try EncoderCases.bytes(directory.appendingPathComponent("text-4000.lzfse"))  // bvxn
        let depth = try EncoderCases.bytes(directory.appendingPathComponent("depth-256x192.lzfse"))  // bvx2 ×5
        let v1 = try EncoderCases.bytes(directory.appendingPathComponent("zeros-1000000.v1.lzfse"))
        let limit = 1 << 24
        func error(_ stream: [UInt8], limit: Int = limit) -> String? {
            rgbdErrorDescription { try LZFSE.decompress(stream, outputLimit: limit) }
        }
        #expect(error([]) == "LZFSE: empty stream")
        #expect(error(Array("bvx".utf8)) == "LZFSE: truncated stream (no end-of-stream marker)")
        #expect(error(Array(depth.dropLast(4))) == "LZFSE: truncated stream (no end-of-stream marker)")
        #expect(error(Array("bvxZ\0\0\0\0".utf8)) == "LZFSE: unknown block magic 0x5a787662 at byte 0")
        let cut = Array(depth.prefix(depth.count / 2))
        #expect(error(cut)?.hasPrefix("LZFSE: truncated block at byte ") == true, "\(error(cut) ?? "")")
        // An uncompressed block announcing more bytes than follow.
        #expect(error(Array("bvx-".utf8) + [100, 0, 0, 0] + Array(repeating: 7, count: 10) + Array("bvx$".utf8))
                == "LZFSE: truncated block at byte 0 (108 bytes announced, 22 left)")
        // Output sizes that lie (one byte more than the blocks decode to).
        var lyingLZVN = text
        lyingLZVN[4] &+= 1
        #expect(error(lyingLZVN) == "LZFSE: block at byte 0 decodes to 4000 bytes, its header says 4001")
        var lyingV2 = depth
        lyingV2[4] &+= 1
        let v2Error = error(lyingV2)
        #expect(v2Error?.hasPrefix("LZFSE: block at byte 0 decodes to ") == true && v2Error?.hasSuffix(" bytes, its header says \(Int(depth[4]) + 1 + Int(depth[5]) << 8 + Int(depth[6]) << 16)") == true, "\(v2Error ?? "")")
        // The output limit: the exact size decodes, one byte less does not.
        let raw = try EncoderCases.bytes(directory.appendingPathComponent("depth-256x192.raw"))
        #expect(try LZFSE.decompress(depth, outputLimit: raw.count).count == raw.count)
        #expect(error(depth, limit: raw.count - 1) == "LZFSE: output exceeds the limit of \(raw.count - 1) bytes")
        // A frequency table that does not sum to its states (bvx1's L table: 16-bit
        // values from byte 50).
        var badTable = v1
        badTable[50] &+= 1
        #expect(error(badTable)?.hasPrefix("LZFSE: LZFSE block at byte 0: L frequencies sum to ") == true,
                "\(error(badTable) ?? "")")
        // More triplets than output bytes: refused before any is decoded (the work a
        // block asks for is bounded by its output).
        var few = v1
        few.replaceSubrange(4..<8, with: [10, 0, 0, 0])
        #expect(error(few)?.hasPrefix("LZFSE: LZFSE block at byte 0: ") == true
                && error(few)?.hasSuffix(" matches for 10 bytes") == true, "\(error(few) ?? "")")
        // A match reaching before the output: LZVN "small distance" (L 0, M 3, D 5) first.
        let far = Array("bvxn".utf8) + [3, 0, 0, 0, 10, 0, 0, 0] + [0x00, 5] + [6, 0, 0, 0, 0, 0, 0, 0] + Array("bvx$".utf8)
        #expect(error(far) == "LZFSE: LZVN match distance 5 beyond the 0 bytes decoded")
        // The same with a literal first: 5 literal bytes make distance 5 valid.
        let near = Array("bvxn".utf8) + [8, 0, 0, 0, 16, 0, 0, 0] + [0xE5] + Array("abcde".utf8) + [0x00, 5]
            + [6, 0, 0, 0, 0, 0, 0, 0] + Array("bvx$".utf8)
        #expect(try LZFSE.decompress(near, outputLimit: 8) == Array("abcdeabc".utf8))
        // An undefined LZVN opcode.
        let undefined = Array("bvxn".utf8) + [1, 0, 0, 0, 9, 0, 0, 0] + [0x70] + [6, 0, 0, 0, 0, 0, 0, 0] + Array("bvx$".utf8)
        #expect(error(undefined) == "LZFSE: undefined LZVN opcode 0x70")
        // Every prefix of a multi-block stream fails cleanly (no crash, one line each).
        for length in stride(from: 0, to: depth.count, by: 97) {
            let message = error(Array(depth.prefix(length)))
            #expect(message?.hasPrefix("LZFSE: ") == true && message?.contains("\n") == false, "\(length): \(message ?? "")")
        }
    }

    /// Bytes after the end-of-stream marker are ignored (as by the reference decoder),
    /// and empty blocks by the hundred thousand decode in linear time.
    @Test func trailingBytesAndManyEmptyBlocks() throws {
        let stream = Array("bvx-".utf8) + [3, 0, 0, 0] + [1, 2, 3] + Array("bvx$".utf8) + [9, 9, 9]
        #expect(try LZFSE.decompress(stream, outputLimit: 3) == [1, 2, 3])
        let empty = Array("bvx-".utf8) + [0, 0, 0, 0]
        let many = Array([[UInt8]](repeating: empty, count: 200_000).joined()) + Array("bvx$".utf8)
        let start = ContinuousClock.now
        #expect(try LZFSE.decompress(many, outputLimit: 0) == [])
        #expect(ContinuousClock.now - start < .seconds(2))
    }
}
