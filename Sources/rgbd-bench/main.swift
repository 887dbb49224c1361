// rgbd-bench: in-process micro-benchmarks of RGBDKit's stages on one capture.
//
//     rgbd-bench CAPTURE.json [--runs N] [--only PREFIX[,PREFIX...]] [--photo FILE]
//
// For each stage, one untimed warm-up run (this VM is slow to touch fresh memory the
// first time), then N timed runs (default 7). Prints one line per stage on stdout:
//
//     bench <name> median_ms <x> runs <a b c ...>
//
// Stages: parse, decode, decode_photo (FILE of --photo, JPEG or HEIC, read and decoded by
// content; default the capture's own photo), rectify_color (positions on the fly, parallel),
// rectify_color_into (the same into one preallocated buffer), rectify_color_serial, map_build, rectify_color_map (with a prebuilt map),
// rectify_depth, encode_color_png, encode_color_png_small (`--small-png`),
// png_baseline_isal_single (the baseline of encode_color_png: ISA-L level 1 deflating
// the same Paeth-filtered rows as one zlib stream on one thread, filtering not timed),
// encode_depth_png, write_depth_tiff. Encoders take the rectified images, as
// `rgbd rectify` does; the PNG stages also print `bytes <name> <n>`, the size of what
// they made. Scripts/bench-rectify.sh runs this beside the whole-process and Python
// baselines, Scripts/bench-png.sh the PNG stages.
//
// Cloud stages, on the capture rectified once (`Capture.load` + `rectified()`), default
// `PointCloudOptions` as `rgbd cloud` uses them: cloud_points (`PointCloud` construction:
// colors averaged over each depth pixel's footprint, points selected), cloud_write_ply
// (that cloud's binary PLY, streamed to a staged file), cloud_backproject_and_write (both:
// the back-projection plus PLY writing figure). Scripts/bench-cloud.sh runs these.
//
// `--only` keeps the stages whose names start with one of the prefixes (`--only cloud`,
// `--only parse,rectify_color`); a prefix ending in `$` is an exact name
// (`--only 'rectify_color$'`); it may be repeated.
import RGBDKit

let usage = "usage: rgbd-bench CAPTURE.json [--runs N] [--only PREFIX[,PREFIX...]] [--photo FILE]\n"

/// Every stage, in the order run.
let stageNames = [
    "parse", "decode", "decode_photo", "rectify_color", "rectify_color_into", "rectify_color_serial", "map_build", "rectify_color_map", "rectify_depth",
    "encode_color_png", "encode_color_png_small", "png_baseline_isal_single", "encode_depth_png", "write_depth_tiff",
    "cloud_points", "cloud_write_ply", "cloud_backproject_and_write",
]

/// Which stages to run: those whose names start with one of `prefixes` (all if empty).
struct Selection {
    var prefixes: [String] = []

    /// Whether the stage `name` runs.
    func includes(_ name: String) -> Bool {
        prefixes.isEmpty || prefixes.contains { Self.matches(name, $0) }
    }

    /// Whether `name` starts with `prefix`, or is `prefix` without its final `$`.
    static func matches(_ name: String, _ prefix: String) -> Bool {
        prefix.hasSuffix("$") ? name == String(prefix.dropLast()) : name.hasPrefix(prefix)
    }

    /// Whether any of `names` runs (so their shared setup is needed).
    func includesAny(_ names: String...) -> Bool {
        names.contains(where: includes)
    }
}

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

/// Runs `body` once untimed, then `runs` times timed, and prints the `bench` line; does
/// nothing if `selection` leaves the stage out. The result of each call is kept alive
/// until the clock is read, so no work is skipped.
func bench<T>(_ name: String, runs: Int, selection: Selection, _ body: () throws -> T) rethrows {
    guard selection.includes(name) else { return }
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

/// Prints `bytes <name> <n>`, the size of what `body` makes, if `selection` has the stage.
func printSize(_ name: String, selection: Selection, _ body: () throws -> [UInt8]) rethrows {
    guard selection.includes(name) else { return }
    print("bytes \(name) \(try body().count)")
}

/// Benchmarks the selected stages on the capture at `json` (its image is the JPEG beside it).
func run(json: String, runs: Int, selection: Selection, photo: String?) throws {
    let imagePath = try Capture.imagePath(besideJSON: json)
    let capture = try Capture.load(json: json, image: imagePath)
    let color = capture.color, depth = capture.depth
    let colorDistortion = capture.calibration.scaled(toWidth: color.width, height: color.height).distortion
    let depthDistortion = capture.calibration.scaled(toWidth: depth.width, height: depth.height).distortion
    FileSystem.printError("rgbd-bench: \(json): color \(color.width)x\(color.height), depth \(depth.width)x\(depth.height); "
                          + "\(runs) timed runs after 1 warm-up, \(FileSystem.processorCount) processors\n")

    // Reading.
    try bench("parse", runs: runs, selection: selection) { try CaptureReader.read(path: json) }
    try bench("decode", runs: runs, selection: selection) {
        try JPEGCodec.decodeRGB(try FileSystem.readFile(imagePath), file: imagePath)
    }
    let photoPath = photo ?? imagePath
    try bench("decode_photo", runs: runs, selection: selection) {
        try PhotoDecoder.decodeRGB(try FileSystem.readFile(photoPath), file: photoPath)
    }

    // Rectifying: positions on the fly (parallel, serial), or through a cached map.
    bench("rectify_color", runs: runs, selection: selection) {
        Rectifier().rectify(color, distortion: colorDistortion)
    }
    if selection.includes("rectify_color_into") {
        // Into one caller buffer, reused run after run: the pure computation, without
        // the fresh output pages every call of `rectify(_:distortion:)` touches.
        // Huge pages as rgbd's own outputs get (numpy also advises them for large arrays).
        var output: [UInt8] = LargeBuffer.make(count: color.samples.count) { $0.initialize(repeating: 0) }
        color.samples.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                bench("rectify_color_into", runs: runs, selection: selection) {
                    Rectifier().rectify(source, channels: color.channels, distortion: colorDistortion, into: destination)
                }
            }
        }
    }
    bench("rectify_color_serial", runs: runs, selection: selection) {
        Rectifier(scheduler: .serial).rectify(color, distortion: colorDistortion)
    }
    bench("map_build", runs: runs, selection: selection) { RectificationMap(colorDistortion) }
    if selection.includes("rectify_color_map") {
        guard let map = RectificationMap(colorDistortion) else {
            throw RGBDError(.invalidArgument, file: json, "the lens moves points too far for a compact map")
        }
        bench("rectify_color_map", runs: runs, selection: selection) { Rectifier().rectify(color, map: map) }
    }
    bench("rectify_depth", runs: runs, selection: selection) {
        Rectifier().rectify(depth, distortion: depthDistortion)
    }

    // Staged beside the capture (the same file system rgbd writes to) and never
    // committed: the temporaries are removed when `staged` is released, after timing.
    var staged: [StagedFiles] = []

    // Writing the rectified images, as `rgbd rectify` does (default PNG effort).
    if selection.includesAny("encode_color_png", "encode_color_png_small", "png_baseline_isal_single") {
        let rectifiedColor = Rectifier().rectify(color, distortion: colorDistortion)
        try bench("encode_color_png", runs: runs, selection: selection) { try PNGCodec.encodeRGB(rectifiedColor) }
        try printSize("encode_color_png", selection: selection) { try PNGCodec.encodeRGB(rectifiedColor) }
        try bench("encode_color_png_small", runs: runs, selection: selection) {
            try PNGCodec.encodeRGB(rectifiedColor, effort: .small)
        }
        try printSize("encode_color_png_small", selection: selection) {
            try PNGCodec.encodeRGB(rectifiedColor, effort: .small)
        }
        if selection.includes("png_baseline_isal_single") {
            let filtered = PNGCodec.filteredScanlines(rectifiedColor)
            try bench("png_baseline_isal_single", runs: runs, selection: selection) {
                try PNGCodec.zlibStreamISAL(filtered, level: 1)
            }
            try printSize("png_baseline_isal_single", selection: selection) { try PNGCodec.zlibStreamISAL(filtered, level: 1) }
        }
    }
    if selection.includesAny("encode_depth_png", "write_depth_tiff") {
        let rectifiedDepth = Rectifier().rectify(depth, distortion: depthDistortion)
        let millimeters = DepthEncoding.millimeters(rectifiedDepth)
        try bench("encode_depth_png", runs: runs, selection: selection) {
            try PNGCodec.encodeGray16(width: rectifiedDepth.width, height: rectifiedDepth.height, samples: millimeters)
        }
        try printSize("encode_depth_png", selection: selection) {
            try PNGCodec.encodeGray16(width: rectifiedDepth.width, height: rectifiedDepth.height, samples: millimeters)
        }
        let destination = Path.join(Path.directory(of: json), "\(capture.stem).bench.depth.tiff")
        try bench("write_depth_tiff", runs: runs, selection: selection) {
            let files = StagedFiles()
            try files.stage(destination) { fd, temporary in
                try TIFFCodec.writeFloat(rectifiedDepth, fd: fd, path: temporary)
            }
            staged.append(files)
        }
        staged.removeAll()
    }

    // Point clouds, as `rgbd cloud` makes them (default options, binary PLY).
    if selection.includesAny("cloud_points", "cloud_write_ply", "cloud_backproject_and_write") {
        let rectified = capture.rectified()
        let cloud = PointCloud(rectified)
        let k = rectified.depthIntrinsics
        FileSystem.printError("rgbd-bench: cloud of \(k.width)x\(k.height) depth: \(cloud.count) points\n")
        let comments = [
            "generated by rgbd-bench", "source \(json)", "units meters",
            "frame OpenCV camera frame (x right, y down, z forward)",
            "intrinsics depth \(k.width)x\(k.height) fx \(k.fx) fy \(k.fy) cx \(k.cx) cy \(k.cy) (rectified pinhole)",
        ]
        let destination = Path.join(Path.directory(of: json), "\(capture.stem).bench.cloud.ply")
        /// Streams `cloud` to a new staged file; returns the number of points.
        func writePLY(_ cloud: PointCloud) throws -> Int {
            let files = StagedFiles()
            var count = 0
            try files.stage(destination) { fd, temporary in
                count = try PLYWriter.write(cloud, fd: fd, path: temporary, encoding: .binaryLittleEndian,
                                            comments: comments)
            }
            staged.append(files)
            return count
        }
        bench("cloud_points", runs: runs, selection: selection) { PointCloud(rectified) }
        try bench("cloud_write_ply", runs: runs, selection: selection) { try writePLY(cloud) }
        staged.removeAll()
        try bench("cloud_backproject_and_write", runs: runs, selection: selection) {
            try writePLY(PointCloud(rectified))
        }
        staged.removeAll()
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
var runs = 7
var selection = Selection()
var capturePath: String? = nil
var photoPath: String? = nil
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "-h", "--help":
        print(usage, terminator: "")
        FileSystem.exitProcess(0)
    case "--runs":
        guard let text = arguments.first, let n = Int(text), n > 0 else {
            FileSystem.printError("rgbd-bench: --runs takes a positive number\n" + usage)
            FileSystem.exitProcess(2)
        }
        arguments.removeFirst()
        runs = n
    case "--photo":
        guard let path = arguments.first else {
            FileSystem.printError("rgbd-bench: --photo takes a file\n" + usage)
            FileSystem.exitProcess(2)
        }
        arguments.removeFirst()
        photoPath = path
    case "--only":
        let prefixes = arguments.first.map { $0.split(separator: ",").map(String.init) } ?? []
        guard !prefixes.isEmpty, prefixes.allSatisfy({ prefix in stageNames.contains { Selection.matches($0, prefix) } }) else {
            FileSystem.printError("rgbd-bench: --only takes stage name prefixes among: "
                                  + stageNames.joined(separator: ", ") + "\n" + usage)
            FileSystem.exitProcess(2)
        }
        arguments.removeFirst()
        selection.prefixes += prefixes
    default:
        guard capturePath == nil, !argument.hasPrefix("-") else {
            FileSystem.printError("rgbd-bench: unexpected argument \(argument)\n" + usage)
            FileSystem.exitProcess(2)
        }
        capturePath = argument
    }
}
guard let capturePath else {
    FileSystem.printError(usage)
    FileSystem.exitProcess(2)
}
do {
    try run(json: capturePath, runs: runs, selection: selection, photo: photoPath)
} catch {
    FileSystem.printError("rgbd-bench: error: \(error)\n")
    FileSystem.exitProcess(1)
}
