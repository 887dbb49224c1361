import RGBDKit

/// Runs one operation over every capture of the inputs, isolating failures and
/// reporting progress on stderr.
struct Batch {
    var inputs: [String]
    var image: String?
    var quiet: Bool
    var showTimings: Bool

    /// Processes every capture; returns how many failed. With `single` set, more than
    /// one capture is an error with that message.
    func run(single: String? = nil, _ operation: (CaptureDiscovery.Item, StageTimings?) throws -> Void) -> Int {
        var items: [CaptureDiscovery.Item] = []
        var failures = 0
        for input in inputs {
            do {
                items += try CaptureDiscovery.expand([input])
            } catch {
                Report.error(error)
                failures += 1
            }
        }
        if let single, items.count > 1 {
            Report.error(RGBDError(.invalidArgument, "\(items.count) captures: \(single)"))
            return failures + 1
        }
        if let image {
            guard items.count == 1 else {
                Report.error(RGBDError(.invalidArgument, "--image applies to a single capture, but the inputs hold \(items.count)"))
                return failures + 1
            }
            items[0].image = image
        }
        let progress = Progress(total: items.count, enabled: !quiet)
        for (index, item) in items.enumerated() {
            progress.starting(index: index, name: item.json)
            let timings = showTimings ? StageTimings() : nil
            let start = FileSystem.monotonicSeconds()
            do {
                try operation(item, timings)
                progress.finished(index: index, name: item.json, seconds: FileSystem.monotonicSeconds() - start)
            } catch {
                progress.clear()
                Report.error(error)
                failures += 1
            }
            if let timings {
                for stage in timings.stages {
                    let ms = (stage.seconds * 1000 * 10).rounded() / 10
                    FileSystem.printError("timing \(stage.name.replacingOccurrences(" ", "_")) \(ms) ms\n")
                }
                let total = ((FileSystem.monotonicSeconds() - start) * 10000).rounded() / 10
                FileSystem.printError("timing capture_total \(total) ms\n")
            }
        }
        progress.done(failures: failures, total: items.count)
        return failures
    }
}

extension String {
    func replacingOccurrences(_ a: Character, _ b: Character) -> String {
        String(map { $0 == a ? b : $0 })
    }
}

/// Messages on stderr, one line each.
enum Report {
    static func error(_ error: any Error) {
        FileSystem.printError("rgbd: error: \(error)\n")
    }

    static func warning(_ text: String) {
        FileSystem.printError("rgbd: warning: \(text)\n")
    }
}

/// Progress on stderr: a bar redrawn in place on a terminal, a line per capture
/// otherwise (logs, CI). Single captures print only their result line.
final class Progress {
    let total: Int
    let enabled: Bool
    let terminal = FileSystem.standardErrorIsTerminal
    private var drawn = false

    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled
    }

    func starting(index: Int, name: String) {
        guard enabled, terminal, total > 1 else { return }
        let width = 24
        let filled = index * width / max(1, total)
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        FileSystem.printError("\r\u{1B}[K[\(bar)] \(index)/\(total) \(Path.lastComponent(name))")
        drawn = true
    }

    func finished(index: Int, name: String, seconds: Double) {
        guard enabled else { return }
        clear()
        let time = (seconds * 100).rounded() / 100
        FileSystem.printError("[\(index + 1)/\(total)] \(name): done in \(time) s\n")
    }

    func clear() {
        if drawn { FileSystem.printError("\r\u{1B}[K"); drawn = false }
    }

    func done(failures: Int, total: Int) {
        clear()
        guard enabled || failures > 0, total > 1 || failures > 0 else { return }
        FileSystem.printError("rgbd: \(total - failures) of \(total) captures done, \(failures) failed\n")
    }
}
