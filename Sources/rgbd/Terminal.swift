// The terminal and the process's exit, for the command-line front.
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Dispatch

import RGBDKit

/// Standard error and the process's end, as the command line uses them.
enum Terminal {

    /// Ends the process with `status` (for command-line tools).
    static func exitProcess(_ status: Int32) -> Never { exit(status) }

    /// Whether standard error is a terminal (progress bars are drawn only then).
    static var standardErrorIsTerminal: Bool { isatty(2) != 0 }

    /// The width in columns of the terminal standard error is, or nil if it is not a
    /// terminal (or does not say).
    static var standardErrorColumns: Int? { terminalColumns(of: 2) }

    /// The width in columns of the terminal open as descriptor `fd`, or nil if it is
    /// not a terminal (or does not say).
    static func terminalColumns(of fd: Int32) -> Int? {
        var size = winsize()
        #if canImport(Darwin)
        let status = ioctl(fd, TIOCGWINSZ, &size)
        #else
        let status = ioctl(fd, UInt(TIOCGWINSZ), &size)
        #endif
        guard status == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// Writes a string to standard error, unbuffered.
    static func printError(_ text: String) {
        var text = text
        text.withUTF8 { buffer in
            guard let base = buffer.baseAddress else { return }
            var done = 0
            while done < buffer.count {
                let n = write(2, base + done, buffer.count - done)
                if n <= 0 { if errno == EINTR { continue }; return }
                done += n
            }
        }
    }
}

/// Clean exits on Ctrl-C and `kill`, with one owner of the exit path.
///
/// `install()` blocks SIGINT and SIGTERM in every thread and waits for them on a thread
/// of its own. When one arrives while the command runs, that thread removes the
/// temporaries of uncommitted `StagedFiles` (so neither half-written outputs nor
/// temporary files are left), says so on stderr and ends the process at once with
/// status 128 + the signal: 130 for Ctrl-C, 143 for SIGTERM. The other threads do no more
/// work, and no exit handler runs while they might. The command's own end goes through
/// `exit(_:)`, which claims the exit first (a signal arriving later is ignored: every
/// output is committed by then) or, if an interruption got there first, waits for it.
enum Interruption {
    /// Starts handling SIGINT and SIGTERM. Call once, at start-up, before any other
    /// thread exists (threads inherit the blocked signals).
    static func install() {
        var signals = handledSignals()
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        #if canImport(Darwin)
        var thread: pthread_t? = nil
        #else
        var thread = pthread_t()
        #endif
        if pthread_create(&thread, nil, { _ in Interruption.waitForSignals() }, nil) != 0 {
            // Without the thread, signals keep their default action (the process ends
            // without cleaning up); unblock them so they still end it.
            pthread_sigmask(SIG_UNBLOCK, &signals, nil)
        }
    }

    /// Ends the process with `status`, unless an interruption is already ending it (then
    /// waits for that, which ends it with 130 or 143).
    static func exit(_ status: Int32) -> Never {
        if StagedFiles.claimFinish() {
            #if canImport(Glibc)
            Glibc.exit(status)
            #elseif canImport(Musl)
            Musl.exit(status)
            #elseif canImport(Darwin)
            Darwin.exit(status)
            #endif
        }
        waitForever()
    }

    /// Never returns if an interruption is ending the process: a failure it caused (a
    /// staged file refused) is not the command's to report.
    static func waitIfInterrupted() {
        if StagedFiles.isInterrupted { waitForever() }
    }

    private static func handledSignals() -> sigset_t {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        return signals
    }

    private static func waitForSignals() -> Never {
        var signals = handledSignals()
        while true {
            var received: Int32 = 0
            guard sigwait(&signals, &received) == 0 else { continue }
            if StagedFiles.claimInterruption() {
                Terminal.printError("\nrgbd: interrupted; no partial output was left\n")
                _exit(128 + received)
            }
        }
    }

    private static func waitForever() -> Never {
        while true { pause() }
    }
}
