import Testing
import RGBDKit

/// The version number has one source, the repository's top-level `VERSION` file (which
/// the Python package reads, through its link `python/rgbd/VERSION`); the library's
/// constant must say the same.
@Suite struct RGBDVersionTests {
    /// The repository's `VERSION` file, from this file's place in it.
    static let versionFile = Path.join(Path.directory(of: Path.directory(of: Path.directory(of: Path.directory(of: #filePath)))), "VERSION")

    @Test func libraryVersionIsTheVersionFile() throws {
        let text = String(decoding: try FileSystem.readFile(Self.versionFile), as: UTF8.self)
        #expect(text == RGBDVersion.string + "\n",
                "VERSION says \(text.debugDescription), RGBDVersion.staticString (Foundation/RGBDVersion.swift) \(RGBDVersion.string): change them together")
        #expect(RGBDVersion.string.split(separator: ".").count == 3 && RGBDVersion.string.allSatisfy { $0.isNumber || $0 == "." })
    }
}
