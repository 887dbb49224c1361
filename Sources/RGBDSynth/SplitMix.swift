/// SplitMix64: the generator's deterministic uniform numbers, the same on every machine
/// and run for a seed (the test sets are drawn from it).
struct SplitMix {
    private var state: UInt64

    /// A sequence starting from `state`.
    init(state: UInt64) { self.state = state }

    /// The next number, uniform in [0, 1).
    mutating func next() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
    }
}
