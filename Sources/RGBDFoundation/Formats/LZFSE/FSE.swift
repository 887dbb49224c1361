/// Finite state entropy decoding, as LZFSE blocks use it.
///
/// A table of N states (a power of two) is spread over the symbols by their normalized
/// frequencies `f` (summing to N), in symbol order. Each of a symbol's `f` states
/// reads `k` or `k − 1` bits, where `k` is the shift that brings `f << k` into
/// [N, 2N): the first `(2N >> k) − f` states read `k` bits and continue from
/// `((f + j) << k) − N`, the others read `k − 1` bits and continue from
/// `(j − j0) << (k − 1)`, plus the bits read. Every next state is below N, so a state
/// read from a checked header never leaves its table.
enum FSE {
    /// Fills `table` (`states` entries) for `frequencies`, which sum to `states`:
    /// `entry(symbol, bits, delta)` makes each state's entry.
    @inline(__always)
    static func build<Entry>(_ table: UnsafeMutablePointer<Entry>, states: Int, frequencies: ArraySlice<UInt16>,
                             entry: (_ symbol: Int, _ bits: Int, _ delta: Int) -> Entry) {
        let stateZeros = UInt32(states).leadingZeroBitCount
        var index = 0
        for (symbol, frequency) in zip(0..., frequencies) where frequency > 0 {
            let f = Int(frequency)
            let k = UInt32(f).leadingZeroBitCount - stateZeros
            let j0 = ((2 * states) >> k) - f
            for j in 0..<f {
                table[index] = j < j0 ? entry(symbol, k, ((f + j) << k) - states)
                                      : entry(symbol, k - 1, (j - j0) << (k - 1))
                index += 1
            }
        }
    }

    /// A literal table entry: the next state's base in the high 16 bits, the symbol in
    /// bits 8-15, the number of bits to read in the low byte.
    static func literalEntry(_ symbol: Int, _ bits: Int, _ delta: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: delta) << 16 | UInt32(truncatingIfNeeded: symbol) << 8 | UInt32(truncatingIfNeeded: bits)
    }

    /// An L, M or D table entry: the state's bits and the value's extra bits are read
    /// at once; the value is `base` plus the extra bits.
    struct ValueEntry {
        var totalBits: UInt8
        var valueBits: UInt8
        var delta: UInt16
        var base: Int32
    }
}

/// A bit stream read backwards, from the end of its payload towards its start: the
/// last bits the encoder wrote come out first. The accumulator holds 56 to 63 bits
/// after each `refill`, enough for four literals (4 × 10 bits) or one L, M, D triplet
/// (14 + 17 + 23 bits).
struct BackwardBits {
    private let input: UnsafeRawBufferPointer
    private var accumulator: UInt64
    private var count: Int
    /// The first byte not yet loaded (bytes below it are read next), and the lowest
    /// byte the stream may read.
    private var position: Int
    private let lowest: Int

    /// Starts at `end` with the encoder's final bit count (−7...0): the last 8 bytes
    /// (7 when the count is 0) are loaded, and the bits above it must be zero.
    init(_ input: UnsafeRawBufferPointer, end: Int, lowest: Int, finalBits: Int, block: Int) throws {
        let bytes = finalBits == 0 ? 7 : 8
        guard end - lowest >= bytes else {
            throw LZFSEBlockHeader.invalid(block, "a bit stream shorter than its first word")
        }
        self.input = input
        self.lowest = lowest
        position = end - bytes
        var word: UInt64 = 0
        for i in (0..<bytes).reversed() { word = word << 8 | UInt64(input[position + i]) }
        accumulator = word
        count = bytes * 8 + finalBits
        guard accumulator >> UInt64(count) == 0 else {
            throw LZFSEBlockHeader.invalid(block, "a bit stream with stray bits above its start")
        }
    }

    /// Loads whole bytes until the accumulator holds 56 to 63 bits.
    @inline(__always)
    mutating func refill(block: Int) throws {
        let bytes = (63 - count) >> 3
        guard bytes > 0 else { return }
        guard position - lowest >= bytes else {
            throw LZFSEBlockHeader.invalid(block, "a bit stream runs past its start")
        }
        position -= bytes
        // 8 bytes from `position` stay within what `init` loaded (position + 8 ≤ the
        // old position + 7).
        let word = UInt64(littleEndian: input.loadUnaligned(fromByteOffset: position, as: UInt64.self))
        let width = UInt64(bytes * 8)
        accumulator = accumulator &<< width | (word & ((1 &<< width) &- 1))
        count += bytes * 8
    }

    /// The next `n` bits (n ≤ the bits held, which `refill` guarantees for the
    /// callers' reads).
    @inline(__always)
    mutating func pull(_ n: Int) -> UInt64 {
        count &-= n
        let shift = UInt64(truncatingIfNeeded: count)
        let result = accumulator &>> shift
        accumulator &= (1 &<< shift) &- 1
        return result
    }
}
