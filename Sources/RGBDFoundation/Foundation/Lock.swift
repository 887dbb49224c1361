// POSIX calls (on Linux and macOS only the module name differs).
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A mutual-exclusion lock (pthread mutex), for the few shared records rgbd keeps.
package final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A new, unlocked lock.
    package init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` holding the lock.
    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
