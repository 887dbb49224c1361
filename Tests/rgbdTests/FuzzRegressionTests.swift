import Foundation
import Testing

/// The fuzz targets (Fuzz/), built without libFuzzer as every build makes them, replay
/// their seed corpora and every past finding (Fuzz/regressions/): each input must pass
/// the target's checks (no crash, only RGBDErrors, serial == parallel, ...), with at most
/// 200 MB of private memory (RLIMIT_DATA; none under a sanitizer), so an input that
/// makes rgbd allocate more (issue 28's headers claiming huge images) fails the replay.
@Suite(.serialized) struct FuzzRegressionTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func inputs(_ directory: URL) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { !$0.hasPrefix(".") }.count
    }

    @Test(arguments: ["FuzzJSON", "FuzzImage", "FuzzCAPI", "FuzzLens", "FuzzPortrait", "FuzzDepthImage", "FuzzScanTables",
                       "FuzzLZFSE", "FuzzZIP", "FuzzEXIF", "FuzzEXR",
                       "FuzzVideo"])
    func corpusAndPastFindingsPass(target: String) throws {
        let binary = URL(fileURLWithPath: CLITests.binary).deletingLastPathComponent().appendingPathComponent(target)
        #expect(FileManager.default.isExecutableFile(atPath: binary.path), "no \(target) at \(binary.path)")
        let corpus = Self.repository.appendingPathComponent("Fuzz/corpus/\(target)")
        let regressions = Self.repository.appendingPathComponent("Fuzz/regressions/\(target)")
        let expected = Self.inputs(corpus) + Self.inputs(regressions)
        #expect(Self.inputs(corpus) >= 2, "\(target): no seed corpus in \(corpus.path)")

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        let limit = CLITests.sanitized ? "" : "ulimit -d 200000 && "
        process.arguments = ["-c", limit + "exec \"$0\" \"$@\"", binary.path, corpus.path, regressions.path]
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(target): \(errors.suffix(2000))")
        #expect(output.contains("replayed \(expected) inputs"), "\(target): \(output) \(errors.suffix(500))")
    }
}
