#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

extension FileSystem {
    /// Reads exactly `buffer.count` bytes at `offset` of the open file `descriptor` with
    /// `pread` (no shared file position: any number of threads may read one descriptor
    /// at once). Returns the bytes read: fewer than asked only if the file ends first.
    ///
    /// - Throws: `RGBDError(.io)` naming `path` and the system's reason.
    static func readAt(_ descriptor: Int32, offset: Int, into buffer: UnsafeMutableRawBufferPointer,
                     path: String) throws -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let n = pread(descriptor, base + done, buffer.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw RGBDError(.io, file: path, "cannot read: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            done += n
        }
        return done
    }
}
