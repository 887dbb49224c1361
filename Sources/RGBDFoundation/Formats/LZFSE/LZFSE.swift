/// Apple's LZFSE stream format, decoded (Record3D's `.depth` and `.conf` frames).
///
/// Written from the format as the public reference describes it (Apple's lzfse,
/// BSD-3: https://github.com/lzfse/lzfse); no code of it is used. A stream is a
/// sequence of blocks, each starting with a four-byte magic:
///
/// - `bvx-`: uncompressed bytes (`LZFSEStream.rawHeaderSize` bytes of header);
/// - `bvxn`: LZVN, a byte-oriented LZ77 code (`LZVNDecoder`);
/// - `bvx1` / `bvx2`: LZFSE proper, literals and (L, M, D) triplets coded with finite
///   state entropy; `bvx1` stores its frequency tables plainly, `bvx2` packs them
///   (`LZFSEBlockHeader`, `LZFSEBlockDecoder`);
/// - `bvx$`: the end of the stream (bytes after it are ignored, as the reference does).
///
/// Matches may reach back into the output of earlier blocks. Every size in a header is
/// checked against the input before it is trusted, and the output against `outputLimit`
/// before anything is allocated.
package enum LZFSE {
    /// Decodes a whole stream; throws when the output would exceed `outputLimit` bytes.
    ///
    /// - Throws: `RGBDError(.invalidImage, "LZFSE: …")` (no file: the caller sets it)
    ///   for a truncated or malformed stream, a size that contradicts the data, or an
    ///   output over the limit.
    package static func decompress(_ input: UnsafeRawBufferPointer, outputLimit: Int) throws -> [UInt8] {
        let blocks = try LZFSEStream.scan(input, outputLimit: outputLimit)
        let total = blocks.reduce(0) { $0 + $1.rawSize }  // ≤ outputLimit: scan checked it
        var failure: RGBDError?
        // At least one byte of capacity, so that a stream of empty blocks is decoded
        // (and checked) like any other.
        let output = [UInt8](unsafeUninitializedCapacity: max(total, 1)) { buffer, initialized in
            initialized = 0
            guard let base = buffer.baseAddress else {
                failure = LZFSE.error("no memory for \(total) bytes")
                return
            }
            var decoder = LZFSEStream.Decoder(input: input, output: base, capacity: total)
            do {
                for block in blocks { try decoder.decode(block) }
                initialized = total
            } catch let error as RGBDError {
                failure = error
            } catch {
                failure = LZFSE.error("\(error)")
            }
        }
        if let failure { throw failure }
        return output
    }

    /// Decodes a whole stream held in an array; see `decompress(_:outputLimit:)`.
    package static func decompress(_ input: [UInt8], outputLimit: Int) throws -> [UInt8] {
        try input.withUnsafeBytes { try decompress($0, outputLimit: outputLimit) }
    }

    /// The error for a malformed stream: `LZFSE: <what>`, no file (the caller sets it).
    static func error(_ what: String) -> RGBDError {
        RGBDError(.invalidImage, file: nil, "LZFSE: \(what)")
    }
}

/// The block structure of a stream: a first pass finds every block and its output
/// size (so the output is allocated once, exactly, and only when the sizes fit the
/// input and the limit), a second decodes them.
enum LZFSEStream {
    /// `bvx$`, `bvx-`, `bvx1`, `bvx2`, `bvxn` as little-endian 32-bit numbers.
    static let endMagic: UInt32 = 0x2478_7662
    static let rawMagic: UInt32 = 0x2d78_7662
    static let v1Magic: UInt32 = 0x3178_7662
    static let v2Magic: UInt32 = 0x3278_7662
    static let lzvnMagic: UInt32 = 0x6e78_7662

    /// Header sizes: magic and raw size; LZVN adds the payload size; a `bvx1` header
    /// is the reference's C structure, padded to 772 bytes.
    static let rawHeaderSize = 8
    static let lzvnHeaderSize = 12
    static let v1HeaderSize = 772

    /// One block found by `scan`.
    struct Block {
        enum Kind { case raw, lzvn, lzfse }
        var kind: Kind
        /// Where its magic starts in the input.
        package var offset: Int
        /// The bytes it decodes to, as its header says.
        var rawSize: Int
        /// The bytes it occupies in the input, header included.
        var encodedSize: Int
    }

    /// Finds the blocks up to the end-of-stream marker, checking that each lies
    /// within the input and that their output fits `outputLimit`.
    package static func scan(_ input: UnsafeRawBufferPointer, outputLimit: Int) throws -> [Block] {
        var blocks: [Block] = []
        var offset = 0, total = 0
        while true {
            guard input.count - offset >= 4 else {
                throw LZFSE.error(offset == 0 && input.isEmpty ? "empty stream" : "truncated stream (no end-of-stream marker)")
            }
            let magic = load32(input, offset)
            if magic == endMagic { return blocks }
            let block: Block
            switch magic {
            case rawMagic:
                let size = try field(input, offset, 4, header: rawHeaderSize, "uncompressed block")
                block = Block(kind: .raw, offset: offset, rawSize: size, encodedSize: rawHeaderSize + size)
            case lzvnMagic:
                let size = try field(input, offset, 4, header: lzvnHeaderSize, "LZVN block")
                let payload = Int(load32(input, offset + 8))
                block = Block(kind: .lzvn, offset: offset, rawSize: size, encodedSize: lzvnHeaderSize + payload)
            case v1Magic:
                let size = try field(input, offset, 4, header: v1HeaderSize, "LZFSE v1 block")
                let payload = Int(load32(input, offset + 20)) + Int(load32(input, offset + 24))
                block = Block(kind: .lzfse, offset: offset, rawSize: size, encodedSize: v1HeaderSize + payload)
            case v2Magic:
                let size = try field(input, offset, 4, header: LZFSEBlockHeader.v2FixedSize, "LZFSE v2 block")
                let headerSize = Int(load32(input, offset + 24))
                guard headerSize >= LZFSEBlockHeader.v2FixedSize, headerSize <= LZFSEBlockHeader.v2MaxSize else {
                    throw LZFSE.error("LZFSE v2 block at byte \(offset): header size \(headerSize) is impossible")
                }
                let packed0 = load64(input, offset + 8), packed1 = load64(input, offset + 16)
                let payload = Int((packed0 >> 20) & 0xFFFFF) + Int((packed1 >> 40) & 0xFFFFF)
                block = Block(kind: .lzfse, offset: offset, rawSize: size, encodedSize: headerSize + payload)
            default:
                throw LZFSE.error("unknown block magic 0x\(String(magic, radix: 16)) at byte \(offset)")
            }
            guard block.encodedSize <= input.count - offset else {
                throw LZFSE.error("truncated block at byte \(offset) (\(block.encodedSize) bytes announced, \(input.count - offset) left)")
            }
            total += block.rawSize  // < 2^32 added to a total ≤ outputLimit: no overflow
            guard total <= outputLimit else {
                throw LZFSE.error("output exceeds the limit of \(outputLimit) bytes")
            }
            blocks.append(block)
            offset += block.encodedSize
        }
    }

    /// The 32-bit field at `at` of a block header of `header` bytes, once the whole
    /// header is known to be there.
    private static func field(_ input: UnsafeRawBufferPointer, _ offset: Int, _ at: Int, header: Int,
                              _ what: String) throws -> Int {
        guard input.count - offset >= header else {
            throw LZFSE.error("truncated \(what) header at byte \(offset)")
        }
        return Int(load32(input, offset + at))
    }

    /// Little-endian loads; the caller has checked the bounds.
    @inline(__always)
    static func load32(_ input: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(littleEndian: input.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    static func load16(_ input: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(littleEndian: input.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    @inline(__always)
    static func load64(_ input: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: input.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The second pass: decodes blocks one after the other into the output.
    struct Decoder {
        let input: UnsafeRawBufferPointer
        /// The output: `capacity` bytes, of which `produced` are written.
        let output: UnsafeMutablePointer<UInt8>
        let capacity: Int
        var produced = 0
        /// LZFSE blocks' tables and literals, made on first use and reused.
        var lzfse: LZFSEBlockDecoder?

        init(input: UnsafeRawBufferPointer, output: UnsafeMutablePointer<UInt8>, capacity: Int) {
            self.input = input
            self.output = output
            self.capacity = capacity
        }

        /// Decodes one block found by `scan`; exactly `rawSize` bytes, or throws.
        mutating func decode(_ block: Block) throws {
            let end = produced + block.rawSize  // ≤ capacity: scan summed the sizes
            var window = OutputWindow(base: output, position: produced, end: end)
            switch block.kind {
            case .raw:
                if block.rawSize > 0, let source = input.baseAddress {
                    window.append(source + block.offset + rawHeaderSize, count: block.rawSize)
                }
            case .lzvn:
                let payload = UnsafeRawBufferPointer(rebasing: input[(block.offset + lzvnHeaderSize)..<(block.offset + block.encodedSize)])
                try LZVNDecoder.decode(payload, into: &window)
            case .lzfse:
                let header = try LZFSEBlockHeader(input, at: block.offset)
                // Every triplet the encoder writes makes at least one byte, and the
                // literals are padded to a multiple of 4 at most: so the work a block
                // asks for is bounded by its output (a block of 40,000 literals and no
                // output would burn time for nothing).
                guard header.matchCount <= block.rawSize, header.literalCount <= block.rawSize + 3 else {
                    throw LZFSEBlockHeader.invalid(block.offset, "\(header.literalCount) literals and \(header.matchCount) matches for \(block.rawSize) bytes")
                }
                if lzfse == nil { lzfse = LZFSEBlockDecoder() }
                try lzfse?.decode(header, input: input, into: &window)
            }
            guard window.position == end else {
                throw LZFSE.error("block at byte \(block.offset) decodes to \(window.position - produced) bytes, its header says \(block.rawSize)")
            }
            produced = end
        }
    }
}

/// Where a block writes: the whole output so far is `base[0..<position]` (matches may
/// reach back into it), and the block may write up to `end`.
struct OutputWindow {
    let base: UnsafeMutablePointer<UInt8>
    var position: Int
    let end: Int

    /// Room left in the block.
    @inline(__always) var room: Int { end - position }

    /// Appends `count` bytes from `source` (the caller checked `count <= room`).
    @inline(__always)
    mutating func append(_ source: UnsafeRawPointer, count: Int) {
        let destination = base + position
        if count <= 16 {
            for i in 0..<count { destination[i] = source.load(fromByteOffset: i, as: UInt8.self) }
        } else {
            UnsafeMutableRawPointer(destination).copyMemory(from: source, byteCount: count)
        }
        position += count
    }

    /// Appends `count` bytes copied from `distance` bytes back, byte by byte in effect
    /// (an overlapping match repeats its pattern); the caller checked
    /// `1 <= distance <= position` and `count <= room`.
    @inline(__always)
    mutating func appendMatch(distance: Int, count: Int) {
        let destination = base + position
        let source = destination - distance
        if distance >= count {
            if count <= 16 {
                for i in 0..<count { destination[i] = source[i] }
            } else {
                destination.update(from: source, count: count)
            }
        } else if distance == 1 {
            destination.update(repeating: source[0], count: count)
        } else {
            // The pattern doubles: after `copied` bytes (a multiple of `distance`) the
            // `distance + copied` bytes from `source` repeat it, and do not overlap
            // the next chunk.
            var copied = 0
            while copied < count {
                let chunk = min(count - copied, distance + copied)
                (destination + copied).update(from: source, count: chunk)
                copied += chunk
            }
        }
        position += count
    }
}
