import Foundation
import RGBDKit
import RGBDSynth

/// The synthetic calibration the tests share.
enum SyntheticCalibration {
    static let iPhone = SyntheticCapture.iPhoneCalibration()
}

/// Synthetic captures rendered once per test process (deterministic).
enum Scenes {
    /// A 1008×756 color / 256×192 depth capture of the default scene, rendered in
    /// memory (no JPEG), with a patch of depth holes.
    static let small: Rendered = Rendered(SyntheticCapture(colorWidth: 1008, colorHeight: 756, depthWidth: 256, depthHeight: 192))

    /// Hole rectangle cut into `small`'s depth map (depth pixels).
    static let holeX = 150..<160
    static let holeY = 40..<46

    struct Rendered: Sendable {
        let synthetic: SyntheticCapture
        let color: ColorImage
        let depth: DepthMap

        init(_ synthetic: SyntheticCapture) {
            self.synthetic = synthetic
            color = synthetic.renderColor(supersampling: 2)
            var depth = synthetic.renderDepth()
            for y in Scenes.holeY { for x in Scenes.holeX { depth[x, y] = .nan } }
            self.depth = depth
        }

        var colorCalibration: ImageCalibration {
            synthetic.calibration.scaled(toWidth: color.width, height: color.height)
        }
        var depthCalibration: ImageCalibration {
            synthetic.calibration.scaled(toWidth: depth.width, height: depth.height)
        }
    }
}

/// Bit-for-bit equality of float arrays (NaN equals NaN).
func identicalBits(_ a: [Float], _ b: [Float]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { $0.bitPattern == $1.bitPattern }
}

/// A small deterministic generator (SplitMix64) for property tests.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The Python interpreter of the test venv (`.venv/`, made by `Scripts/test.sh`, which
/// exports it as `RGBD_TEST_PYTHON`), for tests whose inputs come from an independent
/// encoder on PyPI. Throws, failing the test loudly, when there is none.
func testPython() throws -> String {
    if let python = ProcessInfo.processInfo.environment["RGBD_TEST_PYTHON"], !python.isEmpty {
        return python
    }
    // The package root is three levels above this file (Tests/RGBDKitTests/TestSupport.swift).
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    let venv = root.appendingPathComponent(".venv/bin/python").path
    guard FileManager.default.isExecutableFile(atPath: venv) else {
        throw TestPythonMissing()
    }
    return venv
}

/// No test venv: run `./Scripts/test.sh` once (it creates `.venv/` with the requirements of
/// `Tests/python/requirements.txt`), or set `RGBD_TEST_PYTHON`.
struct TestPythonMissing: Error, CustomStringConvertible {
    var description: String {
        "no test Python: run ./Scripts/test.sh once (it makes .venv/) or set RGBD_TEST_PYTHON"
    }
}
