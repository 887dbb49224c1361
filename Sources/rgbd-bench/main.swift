// rgbd-bench: in-process micro-benchmarks of RGBDKit's stages on one capture.
//
//     rgbd-bench CAPTURE.json [--runs N]
//
// For each stage, one untimed warm-up run (this VM is slow to touch fresh memory the
// first time), then N timed runs (default 7). Prints one line per stage on stdout:
//
//     bench <name> median_ms <x> runs <a b c ...>
//
// Stages: parse, decode, rectify_color (positions on the fly, parallel),
// rectify_color_serial, map_build, rectify_color_map (with a prebuilt map),
// rectify_depth, encode_color_png, encode_depth_png, write_depth_tiff. Encoders take
// the rectified images, as `rgbd rectify` does. Scripts/bench-rectify.sh runs this
// beside the whole-process and Python baselines.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import RGBDKit

let usage = "usage: rgbd-bench CAPTURE.json [--runs N]\n"

/// The median of non-empty `values` (the mean of the middle two for an even count).
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/// Milliseconds rounded to the microsecond, as text.
func milliseconds(_ ms: Double) -> String {
    "\((ms * 1000).rounded() / 1000)"
}

/// Runs `body` once untimed, then `runs` times timed, and prints the `bench` line.
/// The result of each call is kept alive until the clock is read, so no work is skipped.
func bench<T>(_ name: String, runs: Int, _ body: () throws -> T) rethrows {
    withExtendedLifetime(try body()) {}
    var times: [Double] = []
    for _ in 0..<runs {
        let start = FileSystem.monotonicSeconds()
        let result = try body()
        let end = FileSystem.monotonicSeconds()
        withExtendedLifetime(result) {}
        times.append((end - start) * 1000)
    }
    print("bench \(name) median_ms \(milliseconds(median(times))) runs \(times.map(milliseconds).joined(separator: " "))")
}

/// Benchmarks every stage on the capture at `json` (its image is the JPEG beside it).
func run(json: String, runs: Int) throws {
    let imagePath = try Capture.imagePath(besideJSON: json)
    let capture = try Capture.load(json: json, image: imagePath)
    let color = capture.color, depth = capture.depth
    let colorDistortion = capture.calibration.scaled(toWidth: color.width, height: color.height).distortion
    let depthDistortion = capture.calibration.scaled(toWidth: depth.width, height: depth.height).distortion
    FileSystem.printError("rgbd-bench: \(json): color \(color.width)x\(color.height), depth \(depth.width)x\(depth.height); "
                          + "\(runs) timed runs after 1 warm-up, \(FileSystem.processorCount) processors\n")

    // Reading.
    try bench("parse", runs: runs) { try CaptureReader.read(path: json) }
    try bench("decode", runs: runs) { try JPEGCodec.decodeRGB(try FileSystem.readFile(imagePath), file: imagePath) }

    // Rectifying: positions on the fly (parallel, serial), or through a cached map.
    bench("rectify_color", runs: runs) { Rectifier().rectify(color, distortion: colorDistortion) }
    bench("rectify_color_serial", runs: runs) { Rectifier(scheduler: .serial).rectify(color, distortion: colorDistortion) }
    bench("map_build", runs: runs) { RectificationMap(colorDistortion) }
    let map = RectificationMap(colorDistortion)
    bench("rectify_color_map", runs: runs) { Rectifier().rectify(color, map: map) }
    bench("rectify_depth", runs: runs) { Rectifier().rectify(depth, distortion: depthDistortion) }

    // Writing the rectified images, as `rgbd rectify` does (default PNG effort).
    let rectifiedColor = Rectifier().rectify(color, distortion: colorDistortion)
    let rectifiedDepth = Rectifier().rectify(depth, distortion: depthDistortion)
    try bench("encode_color_png", runs: runs) { try PNGCodec.encodeRGB(rectifiedColor) }
    let millimeters = DepthEncoding.millimeters(rectifiedDepth)
    try bench("encode_depth_png", runs: runs) {
        try PNGCodec.encodeGray16(width: rectifiedDepth.width, height: rectifiedDepth.height, samples: millimeters)
    }
    // Staged beside the capture (the same file system rgbd writes to) and never
    // committed: the temporaries are removed when `staged` is released, after timing.
    let destination = Path.join(Path.directory(of: json), "\(capture.stem).bench.depth.tiff")
    var staged: [StagedFiles] = []
    try bench("write_depth_tiff", runs: runs) {
        let files = StagedFiles()
        try files.stage(destination) { fd, temporary in
            try TIFFCodec.writeFloat(rectifiedDepth, fd: fd, path: temporary)
        }
        staged.append(files)
    }
    staged.removeAll()
}

var arguments = Array(CommandLine.arguments.dropFirst())
var runs = 7
var capturePath: String? = nil
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "-h", "--help":
        print(usage, terminator: "")
        exit(0)
    case "--runs":
        guard let text = arguments.first, let n = Int(text), n > 0 else {
            FileSystem.printError("rgbd-bench: --runs takes a positive number\n" + usage)
            exit(2)
        }
        arguments.removeFirst()
        runs = n
    default:
        guard capturePath == nil, !argument.hasPrefix("-") else {
            FileSystem.printError("rgbd-bench: unexpected argument \(argument)\n" + usage)
            exit(2)
        }
        capturePath = argument
    }
}
guard let capturePath else {
    FileSystem.printError(usage)
    exit(2)
}
do {
    try run(json: capturePath, runs: runs)
} catch {
    FileSystem.printError("rgbd-bench: error: \(error)\n")
    exit(1)
}
