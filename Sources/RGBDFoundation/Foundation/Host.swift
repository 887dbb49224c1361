// POSIX calls (on Linux and macOS only the module name differs).
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Facts about the machine and the clock.
package enum Host {

    /// The most resident memory the process has held so far, bytes (`getrusage`'s
    /// `ru_maxrss`: kilobytes on Linux, bytes on macOS); nil if it cannot be read.
    package static var peakResidentBytes: Int? {
        var usage = rusage()
        #if canImport(Glibc)
        let who = __rusage_who_t(RUSAGE_SELF.rawValue)
        #else
        let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { return nil }
        #if canImport(Darwin)
        return Int(usage.ru_maxrss)
        #else
        return Int(usage.ru_maxrss) * 1024
        #endif
    }

    /// The current value of a monotonic clock, in seconds.
    package static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    /// The number of processors available to this process.
    package static var processorCount: Int {
        let n = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return n > 0 ? Int(n) : 1
    }

    /// The machine's physical memory in bytes (nil when the system does not say).
    package static var physicalMemoryBytes: Int? {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        guard pages > 0, size > 0 else { return nil }
        return Int(pages).multipliedReportingOverflow(by: Int(size)).overflow ? Int.max : Int(pages) * Int(size)
    }

    /// The value of the environment variable `name`; nil when it is not set.
    package static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

/// The C library's sine and cosine (radians).
package enum Trigonometry {
    package static func sine(_ x: Double) -> Double { sin(x) }
    package static func cosine(_ x: Double) -> Double { cos(x) }
}

/// The process's environment.
enum ProcessEnvironment {
    /// Whether the environment variable `name` is set (to anything, even empty).
    static func isSet(_ name: String) -> Bool {
        getenv(name) != nil
    }
}
