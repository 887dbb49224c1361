/// Wall-clock time spent in each named stage of a run, for `--timings` and benchmarks.
///
/// Safe to fill from several threads (stages running concurrently record separately).
public final class StageTimings: @unchecked Sendable {
    private let lock = Lock()
    private var entries: [(name: String, seconds: Double)] = []

    /// An empty record.
    public init() {}

    /// Records `seconds` under `name` (adding to an existing entry of that name).
    public func record(_ name: String, seconds: Double) {
        lock.withLock {
            if let i = entries.firstIndex(where: { $0.name == name }) {
                entries[i].seconds += seconds
            } else {
                entries.append((name, seconds))
            }
        }
    }

    /// The stages in the order first recorded.
    public var stages: [(name: String, seconds: Double)] { lock.withLock { entries } }
}

extension Optional where Wrapped == StageTimings {
    /// Runs `body`, recording its duration under `name` if there is a record.
    package func measure<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
        guard let timings = self else { return try body() }
        let start = Host.monotonicSeconds()
        defer { timings.record(name, seconds: Host.monotonicSeconds() - start) }
        return try body()
    }
}
