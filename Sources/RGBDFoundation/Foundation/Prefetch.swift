/// A two-stage pipeline: item `i + 1` is produced in the background while item `i` is
/// consumed on the calling thread, so reading frames and working on them overlap.
package enum Prefetch {
    /// Produces items `0..<count` in order and hands each to `consume`, in order. An error
    /// from either side stops the run (the consumer's first) once the step under way ends.
    package static func run<Item>(count: Int, produce: (Int) throws -> Item, consume: (Item) throws -> Void) throws {
        guard count > 0 else { return }
        var current = try produce(0)
        for i in 1..<max(count, 1) {
            let (_, next) = try Concurrently.withBackground({ try produce(i) }, foreground: { try consume(current) })
            current = next
        }
        try consume(current)
    }
}
