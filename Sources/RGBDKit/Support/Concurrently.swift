import Dispatch

/// Runs two independent pieces of work at once (one per processor).
enum Concurrently {
    /// Runs `a` and `b` on two threads and returns both results; if either throws, the
    /// first error (in argument order) is rethrown after both have finished.
    static func run<A, B>(_ a: () throws -> A, _ b: () throws -> B) throws -> (A, B) {
        nonisolated(unsafe) var resultA: Result<A, any Error>? = nil
        nonisolated(unsafe) var resultB: Result<B, any Error>? = nil
        // Each slot is written by exactly one iteration, and read only after
        // concurrentPerform has returned.
        nonisolated(unsafe) let a = a
        nonisolated(unsafe) let b = b
        DispatchQueue.concurrentPerform(iterations: 2) { i in
            if i == 0 { resultA = Result { try a() } } else { resultB = Result { try b() } }
        }
        guard let resultA, let resultB else { preconditionFailure("concurrentPerform skipped an iteration") }
        return (try resultA.get(), try resultB.get())
    }
}
