// POSIX calls (on Linux and macOS only the module name differs).
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Memory for large image buffers.
package enum LargeBuffer {
    /// An array of `count` elements whose storage `initialize` must fill completely.
    ///
    /// No zero-filling pass is made. On Linux, the storage is first advised to use
    /// transparent huge pages (`madvise(MADV_HUGEPAGE)`): touching a fresh 36 MB image
    /// then costs a few dozen page faults instead of nine thousand.
    package static func make<T>(count: Int, _ initialize: (UnsafeMutableBufferPointer<T>) -> Void) -> [T] {
        [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            adviseHugePages(UnsafeMutableRawBufferPointer(buffer))
            initialize(buffer)
            initialized = count
        }
    }

    /// Asks the kernel to back the 2 MiB-aligned interior of `buffer` with huge pages.
    static func adviseHugePages(_ buffer: UnsafeMutableRawBufferPointer) {
        #if os(Linux)
        let huge = 2 << 20
        guard buffer.count >= 2 * huge, let base = buffer.baseAddress else { return }
        let start = (Int(bitPattern: base) + huge - 1) & ~(huge - 1)
        let end = (Int(bitPattern: base) + buffer.count) & ~(huge - 1)
        guard end > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(pointer, end - start, 14)  // MADV_HUGEPAGE
        #endif
    }
}
