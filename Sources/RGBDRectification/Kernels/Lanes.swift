/// Lane conversions for the sampling kernels, written lane by lane.
///
/// The standard library's generic conversions (`SIMD8<Int32>(truncatingIfNeeded:)`) are
/// specialized into functions that the optimizer may leave as calls in a kernel's loop
/// (whether it does depends on how many kernels use them): measured, that made the RGB
/// kernel much slower (docs/testing.md). Lane by lane, each conversion is one or two vector
/// instructions (`punpcklbw`, `psrad`, `packssdw`, `packuswb`) in every caller.
enum Lanes {
    /// Zero-extends bytes to 16-bit lanes.
    @inline(__always)
    static func widen(_ a: SIMD8<UInt8>) -> SIMD8<Int16> {
        SIMD8(Int16(a[0]), Int16(a[1]), Int16(a[2]), Int16(a[3]), Int16(a[4]), Int16(a[5]), Int16(a[6]), Int16(a[7]))
    }

    /// Sign-extends 16-bit lanes to 32 bits.
    @inline(__always)
    static func widen(_ a: SIMD8<Int16>) -> SIMD8<Int32> {
        SIMD8(Int32(a[0]), Int32(a[1]), Int32(a[2]), Int32(a[3]), Int32(a[4]), Int32(a[5]), Int32(a[6]), Int32(a[7]))
    }

    /// The low 16 bits of each lane.
    @inline(__always)
    static func narrow16(_ a: SIMD8<Int32>) -> SIMD8<Int16> {
        SIMD8(Int16(truncatingIfNeeded: a[0]), Int16(truncatingIfNeeded: a[1]), Int16(truncatingIfNeeded: a[2]),
              Int16(truncatingIfNeeded: a[3]), Int16(truncatingIfNeeded: a[4]), Int16(truncatingIfNeeded: a[5]),
              Int16(truncatingIfNeeded: a[6]), Int16(truncatingIfNeeded: a[7]))
    }

    /// The low byte of each lane.
    @inline(__always)
    static func narrow8(_ a: SIMD8<Int32>) -> SIMD8<UInt8> {
        SIMD8(UInt8(truncatingIfNeeded: a[0]), UInt8(truncatingIfNeeded: a[1]), UInt8(truncatingIfNeeded: a[2]),
              UInt8(truncatingIfNeeded: a[3]), UInt8(truncatingIfNeeded: a[4]), UInt8(truncatingIfNeeded: a[5]),
              UInt8(truncatingIfNeeded: a[6]), UInt8(truncatingIfNeeded: a[7]))
    }

    /// The low byte of each lane.
    @inline(__always)
    static func narrow8(_ a: SIMD16<Int32>) -> SIMD16<UInt8> {
        SIMD16(lowHalf: narrow8(a.lowHalf), highHalf: narrow8(a.highHalf))
    }
}
