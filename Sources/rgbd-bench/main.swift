import RGBDKit
import RGBDSynth

// Temporary micro-benchmark driver; replaced by the benchmark suite.
let args = CommandLine.arguments
let json = args.count > 1 ? args[1] : "/tmp/big/big.json"
let capture = try Capture.load(json: json)
let cal = capture.calibration.scaled(toWidth: capture.color.width, height: capture.color.height)
for mode in ["serial", "parallel", "map-build", "map-apply"] {
    var times: [Double] = []
    let map = RectificationMap(cal.distortion)
    for _ in 0..<5 {
        let t0 = FileSystem.monotonicSeconds()
        switch mode {
        case "serial": _ = Rectifier(scheduler: .serial).rectify(capture.color, distortion: cal.distortion)
        case "parallel": _ = Rectifier().rectify(capture.color, distortion: cal.distortion)
        case "map-build": _ = RectificationMap(cal.distortion)
        default: _ = Rectifier().rectify(capture.color, map: map)
        }
        times.append(FileSystem.monotonicSeconds() - t0)
    }
    times.sort()
    print(mode, (times[2] * 1e4).rounded() / 10, "ms")
}
