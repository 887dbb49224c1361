import ArgumentParser
import RGBDKit

/// Runs one operation over every capture of the inputs, isolating failures and
/// reporting progress on stderr.
///
/// Before anything is written the batch is planned (`BatchPlan`: inputs expanded, a
/// capture given twice done once, a batch in which two captures would write the same
/// file, or a capture would write over an input, refused as a whole, naming both); this
/// type reports the plan and runs it.
struct Batch {
    /// How one capture's operation ended when it did not throw.
    enum Outcome {
        /// Its outputs were written, with something in them.
        case done
        /// Its outputs were written but hold nothing (a filter left nothing; the
        /// operation has said why): counted in the summary.
        case empty
    }

    /// The inputs expanded (once, when the batch is made).
    let plan: BatchPlan
    var image: String?
    var quiet: Bool
    var showTimings: Bool

    /// Whether directories were expanded with their subdirectories.
    let recursive: Bool

    init(inputs: [String], recursive: Bool = false, image: String?, quiet: Bool, showTimings: Bool) {
        plan = BatchPlan(inputs: inputs, recursive: recursive)
        self.recursive = recursive
        self.image = image
        self.quiet = quiet
        self.showTimings = showTimings
    }

    /// Processes every capture; returns how many of the batch's items failed.
    ///
    /// - Parameters:
    ///   - single: if set, more than one capture is a usage error with this message.
    ///   - directory: the directory the outputs go into (nil: none), checked once
    ///     (`BatchPlan.checkOutputDirectory`) before any capture is processed.
    ///   - outputs: the files an item's operation writes.
    /// - Throws: `ValidationError` (exit status 64) for a usage error, `ExitCode(1)` for
    ///   a refused batch or an output directory that cannot be written (after reporting
    ///   why); nothing has been written then.
    func run(single: String? = nil, directory: String?, outputs: (CaptureDiscovery.Item) -> [String],
             _ operation: (CaptureDiscovery.Item, StageTimings?) throws -> Outcome) throws -> Int {
        var plan = self.plan
        var failures = 0, empty = 0
        for input in plan.inputs {
            switch input.expansion {
            case .success(let expansion):
                for note in expansion.skipped where !quiet { Report.warning(note) }
            case .failure(let error):
                if !recursive, CaptureDiscovery.subdirectoriesHoldCaptures(input.input) {
                    Report.error("\(error); its subdirectories hold captures: add -r (--recursive) to take them")
                } else {
                    Report.error(error)
                }
                failures += 1
            }
        }
        let skipped = plan.skippedCount
        for warning in plan.repeatWarnings { Report.warning(warning) }
        if let single, plan.items.count > 1 {
            throw ValidationError("\(single) (the inputs hold \(plan.items.count) captures)")
        }
        if let image {
            guard plan.items.count == 1 else {
                throw ValidationError("--image applies to a single capture, but the inputs hold \(plan.items.count)")
            }
            plan.items[0].image = image
        }
        let conflicts = plan.conflicts(outputs: outputs)
        if !conflicts.isEmpty {
            for conflict in conflicts { Report.error(conflict) }
            Report.error(BatchPlan.refusal)
            throw ExitCode(1)
        }
        if let directory, !plan.items.isEmpty {
            do {
                try BatchPlan.checkOutputDirectory(directory)
            } catch {
                Report.error(error)
                throw ExitCode(1)
            }
        }

        let items = plan.items
        let total = items.count + failures
        let progress = Progress(total: total, enabled: !quiet)
        progress.completed = failures
        for item in items {
            progress.starting(item.json)
            let timings = showTimings ? StageTimings() : nil
            let start = Host.monotonicSeconds()
            do {
                if try operation(item, timings) == .empty { empty += 1 }
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
        progress.done(failures: failures, skipped: skipped, empty: empty)
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
        Terminal.printError("rgbd: error: \(describe(error))\n")
    }

    /// An error's line, a library error's caller argument named as the command line
    /// spells it.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? RGBDError else { return "\(error)" }
        return error.description { argument in
            switch argument {
            case .image: "--image"
            case .depthRange: "--min-depth, --max-depth"
            case .stride: "--stride"
            case .edgeThreshold: "--flying-pixel-step"
            case .overwrite: "give --overwrite to replace it"
            case .frame: "--frame"
            case .crs: "--crs"
            case .minConfidence: "--min-confidence"
            case .every: "--every"
            case .triangles: "--triangles"
            case .maxError: "--max-error"
            case .textureSize: "--texture-size"
            case .memoryBudget: "--max-memory"
            }
        }
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

    /// The summary line; `empty` counts the captures done whose outputs hold nothing.
    func done(failures: Int, skipped: Int, empty: Int = 0) {
        clear()
        guard enabled || failures > 0 || empty > 0, total > 1 || failures > 0 || skipped > 0 || empty > 0 else { return }
        var line = "rgbd: \(total - failures) of \(total) captures done, \(failures) failed"
        if empty > 0 { line += ", \(empty) with an empty output" }
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
