import ArgumentParser
import RGBDKit

/// Runs one operation over every capture of the inputs, isolating failures and
/// reporting progress on stderr.
///
/// Before anything is written the batch is planned: inputs are expanded (an input that
/// cannot be is a failed item), a capture given twice is done once, and a batch in which
/// two captures would write the same file, or a capture would write over an input, is
/// refused as a whole, naming both.
struct Batch {
    var inputs: [String]
    var image: String?
    var quiet: Bool
    var showTimings: Bool

    /// Processes every capture; returns how many of the batch's items failed.
    ///
    /// - Parameters:
    ///   - single: if set, more than one capture is a usage error with this message.
    ///   - outputs: the files an item's operation writes.
    /// - Throws: `ValidationError` (exit status 64) for a usage error, `ExitCode(1)` for
    ///   a refused batch (after reporting why); nothing has been written then.
    func run(single: String? = nil, outputs: (CaptureDiscovery.Item) -> [String],
             _ operation: (CaptureDiscovery.Item, StageTimings?) throws -> Void) throws -> Int {
        var items: [CaptureDiscovery.Item] = []
        var failures = 0
        var skipped = 0
        for input in inputs {
            do {
                let expansion = try CaptureDiscovery.expand(input)
                items += expansion.items
                for note in expansion.skipped where !quiet { Report.warning(note) }
                skipped += expansion.skipped.count
            } catch {
                Report.error(error)
                failures += 1
            }
        }
        items = Self.withoutRepeats(items)
        if let single, items.count > 1 {
            throw ValidationError("\(single) (the inputs hold \(items.count) captures)")
        }
        if let image {
            guard items.count == 1 else {
                throw ValidationError("--image applies to a single capture, but the inputs hold \(items.count)")
            }
            items[0].image = image
        }
        let conflicts = Self.conflicts(items, outputs: outputs)
        if !conflicts.isEmpty {
            for conflict in conflicts { Report.error(conflict) }
            Report.error("batch refused, nothing was written: outputs of one run never overwrite each other or an input; process those captures in separate runs or into separate output directories")
            throw ExitCode(1)
        }

        let total = items.count + failures
        let progress = Progress(total: total, enabled: !quiet)
        progress.completed = failures
        for item in items {
            progress.starting(item.json)
            let timings = showTimings ? StageTimings() : nil
            let start = Host.monotonicSeconds()
            do {
                try operation(item, timings)
                progress.finished(item.json, seconds: Host.monotonicSeconds() - start)
            } catch {
                // A failure caused by an interruption is not this capture's: the
                // interruption ends the process (130 / 143).
                Interruption.waitIfInterrupted()
                failures += 1
                progress.failed(error)
            }
            if let timings {
                for stage in timings.stages {
                    let ms = (stage.seconds * 1000 * 10).rounded() / 10
                    progress.report("timing \(stage.name.replacingOccurrences(" ", "_")) \(ms) ms")
                }
                let total = ((Host.monotonicSeconds() - start) * 10000).rounded() / 10
                progress.report("timing capture_total \(total) ms")
            }
        }
        progress.done(failures: failures, skipped: skipped)
        return failures
    }

    /// The items with any capture named twice (the same JSON file, however spelled)
    /// kept once, in first-seen order; each repeat is reported.
    static func withoutRepeats(_ items: [CaptureDiscovery.Item]) -> [CaptureDiscovery.Item] {
        var seen: Set<String> = []
        var kept: [CaptureDiscovery.Item] = []
        for item in items {
            let key = FileSystem.canonicalPath(item.json) ?? item.json
            if seen.insert(key).inserted {
                kept.append(item)
            } else {
                Report.warning("\(item.json): given more than once; processed once")
            }
        }
        return kept
    }

    /// Every pair of captures whose outputs would land on the same file, and every
    /// output that would replace an input, as messages naming both.
    static func conflicts(_ items: [CaptureDiscovery.Item],
                          outputs: (CaptureDiscovery.Item) -> [String]) -> [String] {
        var inputs: [String: String] = [:]
        for item in items {
            // A depth image beside the JSON may be an input (read when the JSON holds no
            // depth), and is named like rectify's depth output: never written over.
            let depthImage = Capture.depthImagePath(besideJSON: item.json).map { [$0] } ?? []
            for path in [item.json] + (item.image.map { [$0] } ?? []) + depthImage {
                if let key = FileSystem.canonicalPath(path) { inputs[fileKey(key)] = path }
            }
        }
        var writers: [String: String] = [:]
        var messages: [String] = []
        var reported: Set<[String]> = []
        for item in items {
            for output in outputs(item) {
                let key = fileKey(FileSystem.canonicalPath(output) ?? output)
                if let input = inputs[key] {
                    messages.append("\(item.json): its output \(output) would overwrite the input \(input)")
                } else if let other = writers[key] {
                    if reported.insert([other, item.json]).inserted {
                        messages.append("\(other) and \(item.json) would both write \(output)")
                    }
                } else {
                    writers[key] = item.json
                }
            }
        }
        return messages
    }

    /// A path as the file system compares names: case-insensitively on macOS (APFS and
    /// HFS+ as formatted by default), exactly elsewhere.
    static func fileKey(_ path: String) -> String {
        #if os(macOS) || os(iOS)
        return path.lowercased()
        #else
        return path
        #endif
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
        Terminal.printError("rgbd: error: \(error)\n")
    }

    static func error(_ text: String) {
        Terminal.printError("rgbd: error: \(text)\n")
    }

    static func warning(_ text: any CustomStringConvertible) {
        Terminal.printError("rgbd: warning: \(text)\n")
    }
}

/// Progress on stderr.
///
/// On a terminal, a batch shows one status line redrawn in place (bar, count, rate, time
/// left and the capture at work), never wider than the terminal; messages print above it.
/// Off a terminal (logs, CI) each capture gets one line when it ends. A single capture
/// prints only its result line.
final class Progress {
    let total: Int
    let enabled: Bool
    /// Captures ended (done or failed), including inputs that failed to expand.
    var completed = 0
    private let terminal = Terminal.standardErrorIsTerminal
    private let start = Host.monotonicSeconds()
    /// Seconds spent on the captures processed so far (for the rate).
    private var processed = 0
    private var processingSeconds = 0.0
    private var current = ""
    private var drawn = false

    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled
    }

    private var showsBar: Bool { enabled && terminal && total > 1 }

    func starting(_ name: String) {
        current = name
        if showsBar { draw() }
    }

    func finished(_ name: String, seconds: Double) {
        completed += 1
        processed += 1
        processingSeconds += seconds
        guard enabled else { return }
        if showsBar {
            draw()
        } else {
            report("[\(completed)/\(total)] \(name): done in \(Self.format(seconds: seconds, decimals: 2)) s")
        }
    }

    func failed(_ error: any Error) {
        completed += 1
        clear()
        Report.error(error)
        if showsBar { draw() }
    }

    /// Prints a line, keeping the status line below it.
    func report(_ line: String) {
        clear()
        Terminal.printError(line + "\n")
        if showsBar && completed < total { draw() }
    }

    func done(failures: Int, skipped: Int) {
        clear()
        guard enabled || failures > 0, total > 1 || failures > 0 || skipped > 0 else { return }
        var line = "rgbd: \(total - failures) of \(total) captures done, \(failures) failed"
        if skipped > 0 { line += "; \(skipped) JSON file\(skipped == 1 ? "" : "s") without an image skipped" }
        Terminal.printError(line + "\n")
    }

    private func clear() {
        if drawn { Terminal.printError("\r\u{1B}[K"); drawn = false }
    }

    /// `[#####-----] 3/10  2.1/s  0:04 left  NAME`, cut to the terminal's width.
    private func draw() {
        let columns = Terminal.standardErrorColumns ?? 80
        Terminal.printError("\r\u{1B}[K" + Self.statusLine(completed: completed, total: total,
                                                             processed: processed, seconds: processingSeconds,
                                                             name: Path.lastComponent(current), columns: columns))
        drawn = true
    }

    /// The status line for a terminal `columns` wide: at most `columns - 1` characters (a
    /// line filling the last column wraps on some terminals). Parts are dropped from the
    /// end when there is no room: the name first, then the time left, the rate, the bar.
    static func statusLine(completed: Int, total: Int, processed: Int, seconds: Double, name: String,
                           columns: Int) -> String {
        let room = max(0, columns - 1)
        let count = "\(completed)/\(total)"
        var rate = "--/s"
        var left = "--:-- left"
        if processed > 0, seconds > 0 {
            let perSecond = Double(processed) / seconds
            rate = perSecond >= 10 ? "\(Int(perSecond.rounded()))/s" : "\(format(seconds: perSecond, decimals: 1))/s"
            let remaining = Int((Double(total - completed) / perSecond).rounded())
            left = "\(remaining / 60):\(remaining % 60 < 10 ? "0" : "")\(remaining % 60) left"
        }
        let barWidth = 20
        let filled = total > 0 ? min(barWidth, completed * barWidth / total) : 0
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "]"
        var parts = [bar, count, rate, left]
        while parts.joined(separator: "  ").count > room && parts.count > 2 { parts.removeLast() }
        if parts.joined(separator: "  ").count > room { parts = [count] }
        var line = parts.joined(separator: "  ")
        if line.count > room { return "" }
        let space = room - line.count - 2
        if space >= 4, !name.isEmpty {
            line += "  " + (name.count <= space ? name : String(name.prefix(space - 1)) + "…")
        }
        return line
    }

    static func format(seconds: Double, decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let value = (seconds * scale).rounded() / scale
        return "\(value)"
    }
}
