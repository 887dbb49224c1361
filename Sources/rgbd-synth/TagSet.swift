import ArgumentParser
import RGBDKit
import RGBDSynth

/// `rgbd-synth tag-set`: several captures of tags fixed on one wall, from cameras at known
/// poses: the input of `rgbd register`, with its truth.
struct TagSet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tag-set",
        abstract: "Write captures of AprilTags fixed on a wall from several cameras, and the cameras' true poses.",
        discussion: """
        Three (--tags) tag36h11 tags (IDs 0, 1, 2, …; black square 16 cm) hang on one wall, \
        spread over 2 m across and about 0.6 m up and down; --cameras cameras 1–4 m away \
        (--distance) look at it from up to 25° to the side, each keeping at least one tag \
        in view. Each capture is written as the exporter writes it (NAME0.jpg, NAME0.json \
        with the lens lookup tables, NAME0.truth.json, …): color through a distorting lens, \
        depth with Gaussian noise of σ = --depth-noise × z² (meters; 0.0005 is 0.5 mm at \
        1 m, 4.5 mm at 3 m). NAME.set.truth.json holds every tag's tag-to-world and every \
        camera's camera-to-world pose, and each camera in the frame of the lowest tag ID \
        (the world rgbd register writes). --seed picks the set; the output is the same on \
        every run. (`rgbd-synth capture --tags` paints tags fixed to one camera instead.)
        """)

    @Option(name: [.short, .customLong("output")], help: "Directory to write into.")
    var output: String

    @Option(help: "File stem of the captures.")
    var name = "cam"

    @Option(help: "Picks the tags' places, the cameras and the noise.")
    var seed: UInt64 = 1

    @Option(help: "Number of cameras (captures).")
    var cameras = 5

    @Option(help: "Number of tags on the wall.")
    var tags = 3

    @Option(help: ArgumentHelp("Cameras' distances from the wall, meters.", valueName: "near,far"))
    var distance = "1,4"

    @Option(help: "Color image size, WIDTHxHEIGHT.")
    var color = "1920x1440"

    @Option(help: "Depth map size, WIDTHxHEIGHT.")
    var depth = "640x480"

    @Option(help: "Depth noise: σ at 1 m, meters (σ grows with the square of the depth).")
    var depthNoise = 0.0005

    @Option(help: "Lens table: barrel (smooth, −4 % at the corner) or pincushion (real-looking: positive, not monotonic).")
    var lens = "barrel"

    @Option(help: "JPEG quality.")
    var quality = 92

    func run() throws {
        let (cw, ch) = try parseSize(color)
        let (dw, dh) = try parseSize(depth)
        let range = distance.split(separator: ",").compactMap { Double($0) }
        guard range.count == 2, range[0] > 0.3, range[1] >= range[0], range[1] < 20 else {
            throw ValidationError("--distance is NEAR,FAR in meters (0.3 < NEAR <= FAR < 20), got \(distance)")
        }
        guard (1...50).contains(cameras), (1...20).contains(tags), depthNoise >= 0, depthNoise.isFinite else {
            throw ValidationError("--cameras is 1…50, --tags 1…20, --depth-noise 0 or more")
        }
        let table: [Float]
        switch lens {
        case "barrel": table = SyntheticCapture.iPhoneCalibration().lookupTable
        case "pincushion": table = SyntheticCapture.realisticPincushionTable
        default: throw ValidationError("--lens is barrel or pincushion, got \(lens)")
        }
        var set = SyntheticTagSet.wall(seed: seed, tags: tags, cameras: cameras, distances: range[0]...range[1])
        set.colorWidth = cw
        set.colorHeight = ch
        set.depthWidth = dw
        set.depthHeight = dh
        set.depthNoiseAtOneMeter = depthNoise
        set.calibration = SyntheticCapture.calibration(lookupTable: table)
        for path in try set.write(to: output, stem: name, jpegQuality: quality) { print(path) }
    }
}
