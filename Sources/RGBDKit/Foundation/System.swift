// The one place that talks to the operating system directly (POSIX calls exist on both
// Linux and macOS; only the module name differs).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("unsupported platform")
#endif
import Dispatch

/// A mutual-exclusion lock (pthread mutex), for the few shared records rgbd keeps.
public final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A new, unlocked lock.
    public init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` holding the lock.
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// Memory for large image buffers.
public enum LargeBuffer {
    /// An array of `count` elements whose storage `initialize` must fill completely.
    ///
    /// No zero-filling pass is made. On Linux, the storage is first advised to use
    /// transparent huge pages (`madvise(MADV_HUGEPAGE)`): touching a fresh 36 MB image
    /// then costs a few dozen page faults instead of nine thousand.
    public static func make<T>(count: Int, _ initialize: (UnsafeMutableBufferPointer<T>) -> Void) -> [T] {
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

/// Facts about the machine and the clock.
public enum Host {

    /// The current value of a monotonic clock, in seconds.
    public static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    /// The number of processors available to this process.
    public static var processorCount: Int {
        let n = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return n > 0 ? Int(n) : 1
    }
}

/// The C library's sine and cosine (radians).
enum Trigonometry {
    static func sine(_ x: Double) -> Double { sin(x) }
    static func cosine(_ x: Double) -> Double { cos(x) }
}

/// The process's environment.
enum ProcessEnvironment {
    /// Whether the environment variable `name` is set (to anything, even empty).
    static func isSet(_ name: String) -> Bool {
        getenv(name) != nil
    }
}
