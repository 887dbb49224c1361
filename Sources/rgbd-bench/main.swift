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
// they made. Scripts/bench.sh runs this for the cases of Benchmarks/cases.toml (rectify
// beside the whole-process and Python baselines, png-* the PNG stages).
//
// Cloud stages, on the capture rectified once (`Capture.load` + `rectified()`), default
// `PointCloudOptions` as `rgbd cloud` uses them: cloud_points (`PointCloud` construction:
// colors averaged over each depth pixel's footprint, points selected), cloud_write_ply
// (that cloud's binary PLY, streamed to a staged file), cloud_backproject_and_write (both:
// the back-projection plus PLY writing figure). Case cloud of Benchmarks/cases.toml runs these.
//
// Frame stages (`rgbd-bench --frames WIDTHxHEIGHT`, no capture): a `FrameRectifier` for
// Scripts/baseline_remap.py's lens (center in the middle, 42-entry table −0.04·(k/41)²)
// applied to seeded random frames into preallocated buffers: frame_setup (creating the
// rectifier: its maps), frame_luma, frame_chroma (the 2-channel half-size plane alone),
// frame_rgb, frame_bgra, frame_nv12 (both planes in one call), frame_depth, and the same
// with positions computed per frame (`_onthefly`, `mapByteLimit` 0), and
// frame_rectifier1/3/4 (the one-shot `Rectifier` on the same frames, for comparison).
// Also prints `bytes frame_rectifier <n>`, the memory the rectifier holds. `--serial`
// runs the frames on the calling thread alone.
//
// Tag stage: tags_detect (AprilTag tag36h11 detection on the rectified color, one thread;
// case tags of Benchmarks/cases.toml, against pupil-apriltags in Scripts/baseline_tags.py).
//
// `--only` keeps the stages whose names start with one of the prefixes (`--only cloud`,
// `--only parse,rectify_color`); a prefix ending in `$` is an exact name
// (`--only 'rectify_color$'`); it may be repeated.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RGBDKit

/// Writes `text` to standard error.
func printError(_ text: String) {
    var text = text
    text.withUTF8 { buffer in _ = buffer.baseAddress.map { write(2, $0, buffer.count) } }
}

let usage = "usage: rgbd-bench CAPTURE.json [--runs N] [--only PREFIX[,PREFIX...]] [--photo FILE]\n"
    + "       rgbd-bench --scan-read SCAN\n"
    + "       rgbd-bench --frames WIDTHxHEIGHT [--serial] [--runs N] [--only PREFIX[,PREFIX...]]\n"

/// Every stage, in the order run.
let stageNames = [
    "parse", "decode", "decode_photo", "rectify_color", "rectify_color_into", "rectify_color_serial", "map_build", "rectify_color_map", "rectify_depth",
    "encode_color_png", "encode_color_png_small", "png_baseline_isal_single", "encode_depth_png", "write_depth_tiff",
    "cloud_points", "cloud_write_ply", "cloud_backproject_and_write", "tags_detect",
    "frame_setup", "frame_luma", "frame_chroma", "frame_rgb", "frame_bgra", "frame_nv12", "frame_depth",
    "frame_rectifier1", "frame_rectifier3", "frame_rectifier4", "frame_luma_onthefly", "frame_rgb_onthefly", "frame_bgra_onthefly", "frame_nv12_onthefly",
]

/// Benchmarks `FrameRectifier` on seeded random frames of `width × height`.
func runFrames(width: Int, height: Int, runs: Int, selection: Selection) throws {
    let table: [Float] = (0..<42).map { k in Float(-0.04 * Double(k * k) / (41 * 41)) }
    let distortion = LensDistortion(center: SIMD2(Double(width) / 2, Double(height) / 2), table: table,
                                    width: width, height: height)
    printError("rgbd-bench: frames \(width)x\(height); \(runs) timed runs after 1 warm-up, "
                          + "\(Host.processorCount) processors\n")
    try bench("frame_setup", runs: runs, selection: selection) { try FrameRectifier(distortion: distortion) }
    let scheduler: RowScheduler = CommandLine.arguments.contains("--serial") ? .serial : .parallel
    let rectifier = try FrameRectifier(distortion: distortion, scheduler: scheduler)
    let onTheFly = try FrameRectifier(distortion: distortion, scheduler: scheduler, mapByteLimit: 0)
    print("bytes frame_rectifier \(rectifier.bytesHeld)")
    print("bytes frame_rectifier_onthefly \(onTheFly.bytesHeld)")
    var generator = SplitMix(state: 42)
    func frame(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) } }
    let cw = rectifier.chromaWidth, ch = rectifier.chromaHeight
    let sources: [Int: [UInt8]] = [1: frame(width * height), 3: frame(width * height * 3), 4: frame(width * height * 4)]
    let chroma = frame(cw * ch * 2)
    var outputs: [Int: [UInt8]] = [1: [UInt8](repeating: 0, count: width * height),
                                   3: [UInt8](repeating: 0, count: width * height * 3),
                                   4: [UInt8](repeating: 0, count: width * height * 4)]
    var chromaOut = [UInt8](repeating: 0, count: cw * ch * 2)
    func plane(_ rectifier: FrameRectifier, _ name: String, channels: Int) throws {
        guard let source = sources[channels], var out = outputs[channels] else { return }
        try source.withUnsafeBytes { src in
            try out.withUnsafeMutableBytes { dst in
                try bench(name, runs: runs, selection: selection) {
                    try rectifier.rectify(FramePlane(src, rowBytes: width * channels), channels: channels,
                                          into: MutableFramePlane(dst, rowBytes: width * channels))
                }
            }
        }
        outputs[channels] = out
    }
    func nv12(_ rectifier: FrameRectifier, _ name: String) throws {
        guard let luma = sources[1], var out = outputs[1] else { return }
        try luma.withUnsafeBytes { ys in
            try chroma.withUnsafeBytes { cs in
                try out.withUnsafeMutableBytes { yd in
                    try chromaOut.withUnsafeMutableBytes { cd in
                        try bench(name, runs: runs, selection: selection) {
                            try rectifier.rectifyNV12(luma: FramePlane(ys, rowBytes: width), chroma: FramePlane(cs, rowBytes: 2 * cw),
                                                      intoLuma: MutableFramePlane(yd, rowBytes: width),
                                                      chroma: MutableFramePlane(cd, rowBytes: 2 * cw))
                        }
                    }
                }
            }
        }
        outputs[1] = out
    }
    try plane(rectifier, "frame_luma", channels: 1)
    // The chroma plane alone: a rectifier whose frame is that plane, with its lens.
    let chromaRectifier = try FrameRectifier(distortion: rectifier.chromaDistortion)
    try chroma.withUnsafeBytes { cs in
        try chromaOut.withUnsafeMutableBytes { cd in
            try bench("frame_chroma", runs: runs, selection: selection) {
                try chromaRectifier.rectify(FramePlane(cs, rowBytes: 2 * cw), channels: 2, into: MutableFramePlane(cd, rowBytes: 2 * cw))
            }
        }
    }
    try plane(rectifier, "frame_rgb", channels: 3)
    try plane(rectifier, "frame_bgra", channels: 4)
    try nv12(rectifier, "frame_nv12")
    if selection.includes("frame_depth") {
        let depth = DepthMap(width: width, height: height, channels: 1,
                             samples: (0..<(width * height)).map { _ in 1 + Float(generator.next() % 1000) / 1000 })
        var out = [Float](repeating: 0, count: width * height)
        try depth.samples.withUnsafeBytes { src in
            try out.withUnsafeMutableBytes { dst in
                try bench("frame_depth", runs: runs, selection: selection) {
                    try rectifier.rectifyDepth(FramePlane(src, rowBytes: width * 4), into: MutableFramePlane(dst, rowBytes: width * 4))
                }
            }
        }
    }
    for channels in [1, 3, 4] where selection.includes("frame_rectifier\(channels)") {
        guard let source = sources[channels], var out = outputs[channels] else { continue }
        source.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                bench("frame_rectifier\(channels)", runs: runs, selection: selection) {
                    Rectifier().rectify(src, channels: channels, distortion: distortion, into: dst)
                }
            }
        }
    }
    try plane(onTheFly, "frame_luma_onthefly", channels: 1)
    try plane(onTheFly, "frame_rgb_onthefly", channels: 3)
    try plane(onTheFly, "frame_bgra_onthefly", channels: 4)
    try nv12(onTheFly, "frame_nv12_onthefly")
}

/// A small deterministic generator (SplitMix64) for the frames' pixels.
struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

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
        let start = Host.monotonicSeconds()
        let result = try body()
        let end = Host.monotonicSeconds()
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
    printError("rgbd-bench: \(json): color \(color.width)x\(color.height), depth \(depth.width)x\(depth.height); "
                          + "\(runs) timed runs after 1 warm-up, \(Host.processorCount) processors\n")

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
        printError("rgbd-bench: cloud of \(k.width)x\(k.height) depth: \(cloud.count) points\n")
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
    // AprilTag detection (tag36h11, one detector, the library's threads on every processor) on the rectified color, as
    // `rgbd info --tags` runs it: gray conversion and detection timed, rectification not.
    if selection.includes("tags_detect") {
        let rectified = capture.rectified()
        let detector = TagDetector()
        printError("rgbd-bench: tags: \(detector.detect(rectified.color).tags.count) found in the rectified color\n")
        bench("tags_detect", runs: runs, selection: selection) { detector.detect(rectified.color).tags.count }
    }
}

// `rgbd-bench --scan-read SCAN`: reads every frame of a scan once, color included, as
// `rgbd cloud` reads them (`Scene.forEachFrame`, the next frame read in the background),
// and nothing else: the reader's figure of the scan benchmarks (a whole process, timed by
// the harness against Scripts/baseline_scan_cloud.py --read-only).
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--scan-read" {
    do {
        let scene = try Scene.open(CommandLine.arguments[2])
        var pixels = 0
        try scene.forEachFrame(Array(scene.frames.indices)) { frame in
            pixels += frame.depth.samples.count + (frame.color?.samples.count ?? 0)
        }
        print("# read \(scene.frames.count) frames, \(pixels) samples")
        exit(0)
    } catch {
        printError("rgbd-bench: \(error)\n")
        exit(1)
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
var runs = 7
var selection = Selection()
var capturePath: String? = nil
var photoPath: String? = nil
var frameSize: (Int, Int)? = nil
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "-h", "--help":
        print(usage, terminator: "")
        exit(0)
    case "--runs":
        guard let text = arguments.first, let n = Int(text), n > 0 else {
            printError("rgbd-bench: --runs takes a positive number\n" + usage)
            exit(2)
        }
        arguments.removeFirst()
        runs = n
    case "--photo":
        guard let path = arguments.first else {
            printError("rgbd-bench: --photo takes a file\n" + usage)
            exit(2)
        }
        arguments.removeFirst()
        photoPath = path
    case "--frames":
        let parts = arguments.first?.split(separator: "x").compactMap { Int($0) } ?? []
        guard parts.count == 2, parts[0] > 0, parts[1] > 0 else {
            printError("rgbd-bench: --frames takes WIDTHxHEIGHT\n" + usage)
            exit(2)
        }
        arguments.removeFirst()
        frameSize = (parts[0], parts[1])
    case "--serial":
        break
    case "--only":
        let prefixes = arguments.first.map { $0.split(separator: ",").map(String.init) } ?? []
        guard !prefixes.isEmpty, prefixes.allSatisfy({ prefix in stageNames.contains { Selection.matches($0, prefix) } }) else {
            printError("rgbd-bench: --only takes stage name prefixes among: "
                                  + stageNames.joined(separator: ", ") + "\n" + usage)
            exit(2)
        }
        arguments.removeFirst()
        selection.prefixes += prefixes
    default:
        guard capturePath == nil, !argument.hasPrefix("-") else {
            printError("rgbd-bench: unexpected argument \(argument)\n" + usage)
            exit(2)
        }
        capturePath = argument
    }
}
if let (width, height) = frameSize {
    do {
        try runFrames(width: width, height: height, runs: runs, selection: selection)
        exit(0)
    } catch {
        printError("rgbd-bench: error: \(error)\n")
        exit(1)
    }
}
guard let capturePath else {
    printError(usage)
    exit(2)
}
do {
    try run(json: capturePath, runs: runs, selection: selection, photo: photoPath)
} catch {
    printError("rgbd-bench: error: \(error)\n")
    exit(1)
}
