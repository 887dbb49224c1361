import Dispatch

/// Runs two independent pieces of work at once (one per processor).
package enum Concurrently {
    /// Runs `background` on a global queue while `foreground` runs on the calling
    /// thread, and returns both results once both are done; errors are rethrown after
    /// both have finished (the foreground's first).
    ///
    /// Unlike `run`, the foreground is not inside a `concurrentPerform`, so parallel work
    /// it starts itself (PNG strips, row bands) gets every processor: libdispatch gives a
    /// nested `concurrentPerform` only the width left over by the outer one.
    package static func withBackground<A, B>(_ background: () throws -> B, foreground: () throws -> A) throws -> (A, B) {
        nonisolated(unsafe) var resultB: Result<B, any Error>? = nil
        let resultA = withoutActuallyEscaping(background) { background in
            // The background closure and its result slot are used only until group.wait(),
            // before this scope ends.
            nonisolated(unsafe) let work = background
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) { resultB = Result { try work() } }
            let result = Result { try foreground() }
            group.wait()
            return result
        }
        guard let resultB else { preconditionFailure("background work did not run") }
        return (try resultA.get(), try resultB.get())
    }

    /// Runs `a` and `b` on two threads and returns both results; if either throws, the
    /// first error (in argument order) is rethrown after both have finished.
    package static func run<A, B>(_ a: () throws -> A, _ b: () throws -> B) throws -> (A, B) {
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
