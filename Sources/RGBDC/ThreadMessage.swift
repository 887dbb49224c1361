// The C interface's per-thread strings: the last error message, and strings returned to
// the caller (warnings, a depth accuracy).
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Dispatch


/// A C string per thread, in pthread thread-specific storage; each thread's string is
/// freed when the thread ends. `ThreadMessage.set`/`current` are the last error message
/// (rgbd_last_error); `returned` holds strings handed to the caller.
struct ThreadMessage: Sendable {
    private let key: pthread_key_t

    private init() {
        var key = pthread_key_t()
        pthread_key_create(&key) { free($0) }
        self.key = key
    }

    /// rgbd_last_error's message.
    private static let error = ThreadMessage()
    /// Strings returned through `const char **` (rgbd_rectify_files' warnings, …).
    static let returned = ThreadMessage()

    /// Replaces the calling thread's error message.
    static func set(_ message: String) { error.set(message) }

    /// The calling thread's error message ("" if none); valid until the next `set` on it.
    static var current: UnsafePointer<CChar> { error.current }

    /// Replaces the calling thread's string.
    func set(_ message: String) {
        let old = pthread_getspecific(key)
        pthread_setspecific(key, strdup(message))
        free(old)
    }

    /// The calling thread's string ("" if none); valid until the next `set` on it.
    var current: UnsafePointer<CChar> {
        guard let p = pthread_getspecific(key) else {
            // A static, NUL-terminated empty string.
            return UnsafeRawPointer(("" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
        }
        return UnsafePointer(p.assumingMemoryBound(to: CChar.self))
    }
}
