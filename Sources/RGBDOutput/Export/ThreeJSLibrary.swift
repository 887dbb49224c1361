/// three.js (https://threejs.org, MIT licence), the JavaScript 3-D library the web viewer
/// (`HTMLViewerWriter`) embeds, found at run time: rgbd neither ships nor downloads it.
///
/// Three files are read from one folder, in the layout of three.js releases r111 (Debian
/// 12's and Ubuntu's `libjs-three`) to r147 (the last with `examples/js`): the library,
/// its orbit controls and its glTF loader, as scripts that define `THREE` (not modules).
/// The folder is `$RGBD_THREE_DIR` when that is set (the one place looked in), else the
/// first of `systemDirectories` that holds them.
public struct ThreeJSLibrary: Sendable {
    /// The folder the files were read from.
    public var directory: String
    /// three.js's revision as the library states it (`REVISION="111"`); nil when it does not.
    public var revision: String?
    /// The files' bytes, in the order of `files`.
    package var scripts: [[UInt8]]

    /// The files read, relative to the folder: the library, `THREE.OrbitControls`,
    /// `THREE.GLTFLoader`.
    package static let files = ["build/three.min.js", "examples/js/controls/OrbitControls.js",
                               "examples/js/loaders/GLTFLoader.js"]
    /// The environment variable naming the folder to use instead of the system's.
    package static let environmentVariable = "RGBD_THREE_DIR"
    /// Where packaged three.js is looked for: Debian's and Ubuntu's `libjs-three`.
    package static let systemDirectories = ["/usr/share/javascript/three"]

    /// What to install, in words (for the error when three.js is absent).
    static let installHint = "install three.js: Debian/Ubuntu `apt-get install libjs-three` (Scripts/bootstrap.sh does); "
        + "elsewhere set \(environmentVariable) to a three.js release's folder holding \(files.joined(separator: ", ")) "
        + "(releases r111 to r147, such as npm's three@0.147.0 in node_modules/three)"

    /// Finds and reads three.js.
    /// - Throws: `RGBDError(.io)` saying where it was looked for and what to install, when
    ///   a file is missing or cannot be read.
    public static func locate() throws -> ThreeJSLibrary {
        if let given = Host.environment(environmentVariable), !given.isEmpty {
            return try read(given, named: "\(environmentVariable)=\(given)")
        }
        for directory in systemDirectories where files.allSatisfy({ FileSystem.exists(Path.join(directory, $0)) }) {
            return try read(directory, named: directory)
        }
        throw RGBDError(.io, "the web viewer needs three.js, which is not in \(systemDirectories.joined(separator: " or ")): \(installHint)")
    }

    /// The files of `directory` (`named` so in messages).
    static func read(_ directory: String, named: String) throws -> ThreeJSLibrary {
        var scripts = [[UInt8]]()
        for file in files {
            let path = Path.join(directory, file)
            guard FileSystem.exists(path) else {
                throw RGBDError(.io, "the web viewer needs three.js, and \(named) has no \(file): \(installHint)")
            }
            scripts.append(try FileSystem.readFile(path, limit: 64 << 20))
        }
        return ThreeJSLibrary(directory: directory, revision: revision(of: scripts[0]), scripts: scripts)
    }

    /// The `REVISION` a three.js build declares (`REVISION="111"` minified, `REVISION = '111'`
    /// in the readable build).
    static func revision(of script: [UInt8]) -> String? {
        let key = Array("REVISION".utf8)
        guard script.count > key.count else { return nil }
        for start in 0...(script.count - key.count) where script[start] == key[0] {
            guard Array(script[start..<start + key.count]) == key else { continue }
            var i = start + key.count
            while i < script.count, script[i] == 0x20 || script[i] == 0x3D || script[i] == 0x3A { i += 1 }   // spaces, "=", ":"
            guard i < script.count, script[i] == 0x22 || script[i] == 0x27 else { continue }
            let quote = script[i]
            var digits = [UInt8]()
            i += 1
            while i < script.count, script[i] != quote, digits.count < 16 { digits.append(script[i]); i += 1 }
            let text = String(decoding: digits, as: UTF8.self)
            if !text.isEmpty && text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }) { return text }
        }
        return nil
    }
}
