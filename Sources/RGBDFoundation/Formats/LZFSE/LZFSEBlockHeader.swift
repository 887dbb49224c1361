/// The header of an LZFSE block (`bvx1` or `bvx2`), read and checked.
///
/// `bvx1` is the reference's C structure as stored: seven 32-bit counts, the literal
/// stream's final bit count and four states, the L, M, D stream's bit count and three
/// states, then the four frequency tables as 16-bit numbers (772 bytes with padding).
/// `bvx2` packs the counts and states into three 64-bit words and the tables into a
/// variable-length code of 2 to 14 bits per value, least significant bit first.
struct LZFSEBlockHeader {
    /// A `bvx2` header without its tables: magic, raw size, three packed words.
    static let v2FixedSize = 32
    /// The largest `bvx2` header the reference can hold (every table value on 16 bits).
    static let v2MaxSize = v2FixedSize + 2 * symbolCount

    /// Symbols of the L (literal length), M (match length), D (distance) and literal
    /// alphabets, and the number of states of each one's FSE table.
    static let lSymbols = 20, mSymbols = 20, dSymbols = 64, literalSymbols = 256
    static let symbolCount = lSymbols + mSymbols + dSymbols + literalSymbols
    static let lStates = 64, mStates = 64, dStates = 256, literalStates = 1024

    /// The most literals and matches a block holds.
    static let maxLiterals = 40_000, maxMatches = 10_000

    /// Where the block's magic is in the input, and the size of its header (the
    /// literal payload follows it, then the L, M, D payload).
    package var offset: Int
    var headerSize: Int
    var literalCount: Int
    var literalPayloadSize: Int
    var matchCount: Int
    var lmdPayloadSize: Int
    /// The final bit counts of the two streams (−7...0, as the encoder left them).
    var literalBits: Int
    var lmdBits: Int
    /// The initial decoder states.
    var literalStates: (Int, Int, Int, Int)
    var lState: Int, mState: Int, dState: Int
    /// Normalized frequencies: L, M, D, then literals (`symbolCount` values).
    var frequencies: [UInt16]

    /// Reads the header at `offset` (its magic is `bvx1` or `bvx2`, and `scan` has
    /// checked that it and its payload lie within the input), then checks it.
    init(_ input: UnsafeRawBufferPointer, at offset: Int) throws {
        self.offset = offset
        if LZFSEStream.load32(input, offset) == LZFSEStream.v1Magic {
            let count = { (index: Int) in Int(LZFSEStream.load32(input, offset + 4 * index)) }
            let signed = { (at: Int) in Int(Int32(bitPattern: LZFSEStream.load32(input, offset + at))) }
            let state = { (at: Int) in Int(LZFSEStream.load16(input, offset + at)) }
            headerSize = LZFSEStream.v1HeaderSize
            literalCount = count(3)
            matchCount = count(4)
            literalPayloadSize = count(5)
            lmdPayloadSize = count(6)
            guard count(2) == literalPayloadSize + lmdPayloadSize else {
                throw Self.invalid(offset, "payload size \(count(2)) is not the sum of its parts")
            }
            literalBits = signed(28)
            literalStates = (state(32), state(34), state(36), state(38))
            lmdBits = signed(40)
            lState = state(44)
            mState = state(46)
            dState = state(48)
            frequencies = (0..<Self.symbolCount).map { LZFSEStream.load16(input, offset + 50 + 2 * $0) }
        } else {
            let v0 = LZFSEStream.load64(input, offset + 8)
            let v1 = LZFSEStream.load64(input, offset + 16)
            let v2 = LZFSEStream.load64(input, offset + 24)
            let bits = { (word: UInt64, at: UInt64, width: UInt64) in Int((word >> at) & ((1 << width) - 1)) }
            headerSize = bits(v2, 0, 32)
            literalCount = bits(v0, 0, 20)
            literalPayloadSize = bits(v0, 20, 20)
            matchCount = bits(v0, 40, 20)
            literalBits = bits(v0, 60, 3) - 7
            literalStates = (bits(v1, 0, 10), bits(v1, 10, 10), bits(v1, 20, 10), bits(v1, 30, 10))
            lmdPayloadSize = bits(v1, 40, 20)
            lmdBits = bits(v1, 60, 3) - 7
            lState = bits(v2, 32, 10)
            mState = bits(v2, 42, 10)
            dState = bits(v2, 52, 10)
            frequencies = try Self.packedFrequencies(input, from: offset + Self.v2FixedSize, to: offset + headerSize,
                                                     block: offset)
        }
        try check()
    }

    /// The `bvx2` tables: each value's code ends in 0 (2 bits: 0 or 1), 01 (3 bits: 2
    /// or 3), 011 (5 bits: 4 to 7), 0111 (8 bits: 8 to 23) or 1111 (14 bits: 24 to
    /// 1047), read from the least significant bit; the higher bits of the code are the
    /// value's offset within its range. No bytes at all means every table is empty.
    /// The code must end in the last byte of the header.
    private static func packedFrequencies(_ input: UnsafeRawBufferPointer, from start: Int, to end: Int,
                                          block: Int) throws -> [UInt16] {
        var values = [UInt16](repeating: 0, count: symbolCount)
        guard end > start else { return values }
        var accumulator: UInt32 = 0, available = 0, position = start
        for i in 0..<symbolCount {
            while position < end && available + 8 <= 32 {
                accumulator |= UInt32(input[position]) << UInt32(available)
                available += 8
                position += 1
            }
            let width: Int, value: UInt32
            if accumulator & 1 == 0 {
                (width, value) = (2, (accumulator >> 1) & 1)
            } else if accumulator & 2 == 0 {
                (width, value) = (3, 2 + ((accumulator >> 2) & 1))
            } else if accumulator & 4 == 0 {
                (width, value) = (5, 4 + ((accumulator >> 3) & 3))
            } else if accumulator & 8 == 0 {
                (width, value) = (8, 8 + ((accumulator >> 4) & 15))
            } else {
                (width, value) = (14, 24 + ((accumulator >> 4) & 1023))
            }
            guard width <= available else {
                throw invalid(block, "frequency tables end before their last value")
            }
            values[i] = UInt16(value)
            accumulator >>= UInt32(width)
            available -= width
        }
        guard available < 8 && position == end else {
            throw invalid(block, "frequency tables do not fill the header exactly")
        }
        return values
    }

    /// Counts, states and bit counts in range; each table's frequencies sum to its
    /// number of states, or are all zero for a table the block does not use.
    private func check() throws {
        guard literalCount <= Self.maxLiterals, matchCount <= Self.maxMatches else {
            throw Self.invalid(offset, "\(literalCount) literals and \(matchCount) matches, more than a block holds")
        }
        guard (-7...0).contains(literalBits), (-7...0).contains(lmdBits) else {
            throw Self.invalid(offset, "impossible final bit counts \(literalBits), \(lmdBits)")
        }
        let states = [literalStates.0, literalStates.1, literalStates.2, literalStates.3]
        guard states.allSatisfy({ $0 < Self.literalStates }), lState < Self.lStates, mState < Self.mStates,
              dState < Self.dStates else {
            throw Self.invalid(offset, "an initial state beyond its table")
        }
        let tables: [(name: String, range: Range<Int>, states: Int, used: Bool)] = [
            ("L", 0..<20, Self.lStates, matchCount > 0),
            ("M", 20..<40, Self.mStates, matchCount > 0),
            ("D", 40..<104, Self.dStates, matchCount > 0),
            ("literal", 104..<360, Self.literalStates, literalCount > 0),
        ]
        for table in tables {
            let sum = frequencies[table.range].reduce(0) { $0 + Int($1) }
            guard sum == table.states || (sum == 0 && !table.used) else {
                throw Self.invalid(offset, "\(table.name) frequencies sum to \(sum), not \(table.states)")
            }
        }
    }

    /// An error about the block at `offset`.
    static func invalid(_ offset: Int, _ what: String) -> RGBDError {
        LZFSE.error("LZFSE block at byte \(offset): \(what)")
    }
}
