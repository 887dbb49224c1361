import Foundation
import RGBDKit

/// Inputs made at test time by independent encoders (`Fixtures/encoders/make_cases.py`
/// run by the test venv's Python: Apple's reference LZFSE encoder from PyPI, Python's
/// `zipfile`), once per test process, in a temporary directory.
enum EncoderCases {
    /// `NAME.raw`, `NAME.lzfse` (and `NAME.v1.lzfse`), `manifest.json`.
    static let lzfse: Result<URL, any Error> = Result { try make("lzfse") }
    /// Archives, `contents/`, `manifest.json`.
    static let zip: Result<URL, any Error> = Result { try make("zip") }

    private static func make(_ kind: String) throws -> URL {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/encoders/make_cases.py")
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("rgbd-\(kind)-cases-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.removeItem(at: directory)
        lock.withLock {
            if made.isEmpty { atexit { EncoderCases.removeAll() } }
            made.append(directory)
        }
        try run(testPython(), [script.path, kind, directory.path])
        return directory
    }

    /// The directories made (tens of MB), removed when the test process exits.
    nonisolated(unsafe) private static var made: [URL] = []
    private static let lock = NSLock()

    private static func removeAll() {
        lock.withLock { for directory in made { try? FileManager.default.removeItem(at: directory) } }
    }

    /// Runs a program; throws with its error output if it fails.
    static func run(_ program: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failed(description: "\(program) \(arguments): \(message)") }
    }

    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    /// The bytes of a file.
    static func bytes(_ url: URL) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: url))
    }

    /// The manifest of a set of cases.
    static func manifest(_ directory: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent("manifest.json"))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }
}

/// The description of the RGBDError `body` throws, or nil if it throws none (or
/// another error, described with a marker so that it fails the comparison).
func rgbdErrorDescription(_ body: () throws -> Any) -> String? {
    do {
        _ = try body()
        return nil
    } catch let error as RGBDError {
        return error.description
    } catch {
        return "not an RGBDError: \(error)"
    }
}
