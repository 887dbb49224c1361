/// An open-addressing hash table from 64-bit keys to dense indices `0, 1, 2, …` in the
/// order keys were first inserted: the index of sparse grids (`VoxelAccumulator`'s cells,
/// `TSDFVolume`'s blocks, marching cubes' shared vertices). Memory follows the keys
/// inserted (about 2 slots per key), never the extent of the grid.
struct SparseKeyIndex {
    /// The keys, in insertion order (key `i` has index `i`).
    private(set) var keys: [UInt64] = []
    private var slots: [Int32]
    private var mask: Int

    /// An empty index with room for about `capacity / 2` keys before it grows.
    init(capacity: Int = 1 << 12) {
        var size = 16
        while size < capacity { size <<= 1 }
        slots = [Int32](repeating: -1, count: size)
        mask = size - 1
    }

    /// The number of keys.
    var count: Int { keys.count }

    @inline(__always) private static func hash(_ k: UInt64) -> Int {
        var h = k &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 29
        return Int(truncatingIfNeeded: h)
    }

    /// The index of `key`, or nil when it was never inserted.
    @inline(__always) func index(of key: UInt64) -> Int? {
        var slot = Self.hash(key) & mask
        while true {
            let index = Int(slots[slot])
            if index < 0 { return nil }
            if keys[index] == key { return index }
            slot = (slot &+ 1) & mask
        }
    }

    /// The index of `key`, inserting it (with the next index) when it is new; `inserted`
    /// says which.
    @inline(__always) mutating func insert(_ key: UInt64) -> (index: Int, inserted: Bool) {
        var slot = Self.hash(key) & mask
        while true {
            let index = Int(slots[slot])
            if index < 0 {
                let new = keys.count
                slots[slot] = Int32(truncatingIfNeeded: new)
                keys.append(key)
                if keys.count * 2 > slots.count { rehash(capacity: slots.count * 2) }
                return (new, true)
            }
            if keys[index] == key { return (index, false) }
            slot = (slot &+ 1) & mask
        }
    }

    private mutating func rehash(capacity: Int) {
        slots = [Int32](repeating: -1, count: capacity)
        mask = capacity - 1
        for (index, k) in keys.enumerated() {
            var slot = Self.hash(k) & mask
            while slots[slot] >= 0 { slot = (slot &+ 1) & mask }
            slots[slot] = Int32(truncatingIfNeeded: index)
        }
    }

    /// Bytes held (keys and slots), for memory budgets.
    var bytes: Int { keys.capacity * 8 + slots.count * 4 }

    /// A grid cell's key: 21 bits per axis, each coordinate offset by 2^20, so cells within
    /// ±1 048 575 of the origin on every axis have distinct keys; nil beyond.
    @inline(__always) static func cellKey(_ x: Int, _ y: Int, _ z: Int) -> UInt64? {
        let limit = 1_048_575
        guard abs(x) <= limit, abs(y) <= limit, abs(z) <= limit else { return nil }
        return UInt64(x + 1_048_576) | UInt64(y + 1_048_576) << 21 | UInt64(z + 1_048_576) << 42
    }

    /// The cell of a key made by `cellKey`.
    @inline(__always) static func cell(ofKey key: UInt64) -> SIMD3<Int32> {
        let m: UInt64 = (1 << 21) - 1
        return SIMD3(Int32(truncatingIfNeeded: Int(key & m) - 1_048_576),
                     Int32(truncatingIfNeeded: Int(key >> 21 & m) - 1_048_576),
                     Int32(truncatingIfNeeded: Int(key >> 42 & m) - 1_048_576))
    }
}
