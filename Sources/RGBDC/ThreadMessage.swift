// The C interface's per-thread error message.
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Dispatch


/// A C string per thread (the C interface's last error message), in pthread
/// thread-specific storage; each thread's string is freed when the thread ends.
enum ThreadMessage {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { free($0) }
        return key
    }()


    /// Replaces the calling thread's message.
    static func set(_ message: String) {
        let old = pthread_getspecific(key)
        pthread_setspecific(key, strdup(message))
        free(old)
    }

    /// The calling thread's message ("" if none); valid until the next `set` on it.
    static var current: UnsafePointer<CChar> {
        guard let p = pthread_getspecific(key) else {
            // A static, NUL-terminated empty string.
            return UnsafeRawPointer(("" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
        }
        return UnsafePointer(p.assumingMemoryBound(to: CChar.self))
    }
}
