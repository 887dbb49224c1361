/// Decodes LZFSE blocks (`bvx1`, `bvx2`): first the block's literals (four interleaved
/// FSE streams sharing one table and one bit stream), then its L, M, D triplets (three
/// FSE tables, one bit stream), each triplet copying L literals and then M bytes from
/// D bytes back (D = 0: the previous triplet's distance).
///
/// The tables and the literal buffer are allocated once and reused for every block
/// of a stream.
final class LZFSEBlockDecoder {
    private let literalTable: UnsafeMutablePointer<UInt32>
    private let lTable: UnsafeMutablePointer<FSE.ValueEntry>
    private let mTable: UnsafeMutablePointer<FSE.ValueEntry>
    private let dTable: UnsafeMutablePointer<FSE.ValueEntry>
    /// A block's literals (four more than the most a block holds: they are decoded four
    /// at a time).
    private let literals: UnsafeMutablePointer<UInt8>

    /// Each L, M and D symbol's base value and number of extra bits.
    private static let lBase: [Int32] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 28, 60]
    private static let lExtra: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 5, 8]
    private static let mBase: [Int32] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 24, 56, 312]
    private static let mExtra: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 5, 8, 11]
    /// D symbols come in fours with 0, 0, 0, 0, 1, 1, 1, 1, 2, ... 15 extra bits, each
    /// symbol's base following the previous one's range.
    private static let dExtra: [UInt8] = (0..<64).map { UInt8($0 / 4) }
    private static let dBase: [Int32] = {
        var bases: [Int32] = [], next: Int32 = 0
        for extra in dExtra {
            bases.append(next)
            next += 1 << Int32(extra)
        }
        return bases
    }()

    init() {
        literalTable = .allocate(capacity: LZFSEBlockHeader.literalStates)
        lTable = .allocate(capacity: LZFSEBlockHeader.lStates)
        mTable = .allocate(capacity: LZFSEBlockHeader.mStates)
        dTable = .allocate(capacity: LZFSEBlockHeader.dStates)
        literals = .allocate(capacity: LZFSEBlockHeader.maxLiterals + 4)
    }

    deinit {
        literalTable.deallocate()
        lTable.deallocate()
        mTable.deallocate()
        dTable.deallocate()
        literals.deallocate()
    }

    /// Decodes the block of `header` (checked, its payload within `input`) into
    /// `window`, at most up to the window's end.
    func decode(_ header: LZFSEBlockHeader, input: UnsafeRawBufferPointer, into window: inout OutputWindow) throws {
        let literalEnd = header.offset + header.headerSize + header.literalPayloadSize
        if header.literalCount > 0 {
            try decodeLiterals(header, input: input, end: literalEnd)
        }
        if header.matchCount > 0 {
            try decodeMatches(header, input: input, start: literalEnd, into: &window)
        }
    }

    /// The literals, four at a time from four states; the stream may read back into
    /// the bytes before the literal payload (the reference's does, down to the start of
    /// the input), never before the input.
    private func decodeLiterals(_ header: LZFSEBlockHeader, input: UnsafeRawBufferPointer, end: Int) throws {
        let states = LZFSEBlockHeader.literalStates
        FSE.build(literalTable, states: states, frequencies: header.frequencies[104..<360], entry: FSE.literalEntry)
        var bits = try BackwardBits(input, end: end, lowest: 0, finalBits: header.literalBits, block: header.offset)
        var s = (header.literalStates.0, header.literalStates.1, header.literalStates.2, header.literalStates.3)
        let table = literalTable, mask = states - 1
        @inline(__always) func next(_ state: inout Int) -> UInt8 {
            let entry = table[state & mask]
            state = Int(entry >> 16) + Int(bits.pull(Int(entry & 0xFF)))
            return UInt8(truncatingIfNeeded: entry >> 8)
        }
        var i = 0
        while i < header.literalCount {
            try bits.refill(block: header.offset)
            literals[i] = next(&s.0)
            literals[i + 1] = next(&s.1)
            literals[i + 2] = next(&s.2)
            literals[i + 3] = next(&s.3)
            i += 4
        }
    }

    /// The triplets, each checked before it is executed: literals within the block's,
    /// output within the window, distances within the output so far.
    private func decodeMatches(_ header: LZFSEBlockHeader, input: UnsafeRawBufferPointer, start: Int,
                               into window: inout OutputWindow) throws {
        let f = header.frequencies
        Self.buildValues(lTable, LZFSEBlockHeader.lStates, f[0..<20], Self.lBase, Self.lExtra)
        Self.buildValues(mTable, LZFSEBlockHeader.mStates, f[20..<40], Self.mBase, Self.mExtra)
        Self.buildValues(dTable, LZFSEBlockHeader.dStates, f[40..<104], Self.dBase, Self.dExtra)
        var bits = try BackwardBits(input, end: start + header.lmdPayloadSize, lowest: start,
                                    finalBits: header.lmdBits, block: header.offset)
        var l = header.lState, m = header.mState, d = header.dState
        @inline(__always) func value(_ table: UnsafeMutablePointer<FSE.ValueEntry>, _ mask: Int, _ state: inout Int) -> Int {
            let entry = table[state & mask]
            let read = bits.pull(Int(entry.totalBits))
            state = Int(entry.delta) + Int(read >> UInt64(entry.valueBits))
            return Int(entry.base) + Int(read & ((1 << UInt64(entry.valueBits)) - 1))
        }
        var literal = 0, distance = 0
        for _ in 0..<header.matchCount {
            try bits.refill(block: header.offset)
            let lengthL = value(lTable, LZFSEBlockHeader.lStates - 1, &l)
            let lengthM = value(mTable, LZFSEBlockHeader.mStates - 1, &m)
            let newDistance = value(dTable, LZFSEBlockHeader.dStates - 1, &d)
            if newDistance != 0 { distance = newDistance }
            guard lengthL <= header.literalCount - literal, lengthL + lengthM <= window.room else {
                throw LZFSEBlockHeader.invalid(header.offset, "a match beyond the block's literals or size")
            }
            window.append(literals + literal, count: lengthL)
            literal += lengthL
            if lengthM > 0 {
                guard distance > 0 && distance <= window.position else {
                    throw LZFSEBlockHeader.invalid(header.offset, "match distance \(distance) beyond the \(window.position) bytes decoded")
                }
                window.appendMatch(distance: distance, count: lengthM)
            }
        }
    }

    /// An L, M or D table from its frequencies and its symbols' values.
    private static func buildValues(_ table: UnsafeMutablePointer<FSE.ValueEntry>, _ states: Int,
                                    _ frequencies: ArraySlice<UInt16>, _ bases: [Int32], _ extras: [UInt8]) {
        FSE.build(table, states: states, frequencies: frequencies) { symbol, bits, delta in
            FSE.ValueEntry(totalBits: UInt8(truncatingIfNeeded: bits) &+ extras[symbol], valueBits: extras[symbol],
                           delta: UInt16(truncatingIfNeeded: delta), base: bases[symbol])
        }
    }
}
