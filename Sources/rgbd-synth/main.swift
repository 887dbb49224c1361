import ArgumentParser
import RGBDKit
import RGBDSynth

/// `rgbd-synth`: writes deterministic synthetic data with ground truth: a capture (the
/// default subcommand: the sample in Examples/, benchmark inputs) or a LiDAR scan.
struct Synth: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rgbd-synth",
        abstract: "Write synthetic iPhone data of a known scene, and its ground truth.",
        discussion: """
        `rgbd-synth capture` (the default) writes one capture (JPEG + JSON); `rgbd-synth \
        scan` writes a LiDAR scan (many frames with poses) as Stray Scanner or Record3D \
        store them; `rgbd-synth tag-set` writes captures of tags fixed on a wall from \
        several cameras (the input of rgbd register). The output is the same on every run.
        """,
        subcommands: [Capture.self, Scan.self, TagSet.self],
        defaultSubcommand: Capture.self)
}

/// `rgbd-synth capture`: one capture of the checkerboard scene.
struct Capture: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Write a synthetic iPhone capture (JPEG + JSON) of a known scene, and its ground truth.",
        discussion: """
        The scene (a checkerboard wall at 3 m, a floor, a box) is rendered through a pinhole \
        camera with an iPhone-like calibration (reference 4032×3024) and distorted with a \
        42-entry barrel lookup table (−4 % at the corner). --lens pincushion uses a table \
        shaped like real ones instead (positive, not monotonic, first entry not 0, +3 % at \
        the corner: the corners of the rectified images have no source); --reference \
        gives another reference size (intrinsics scaled from the 4032×3024 ones). Writes \
        NAME.jpg, NAME.json and NAME.truth.json. The output is the same on every run.
        """)

    @Option(name: [.short, .customLong("output")], help: "Directory to write into.")
    var output: String

    @Option(help: "File stem.")
    var name = "synthetic"

    @Option(help: "Color image size, WIDTHxHEIGHT.")
    var color = "4032x3024"

    @Option(help: "Depth map size, WIDTHxHEIGHT.")
    var depth = "768x576"

    @Option(help: "JPEG quality.")
    var quality = 95

    @Option(help: "Supersampling per axis for color (area sampling over each pixel).")
    var supersampling = 2

    @Option(help: "Deterministic noise on color, in 8-bit levels (benchmark realism).")
    var colorNoise: Double = 0

    @Option(help: "Deterministic noise on depth, in meters (benchmark realism).")
    var depthNoise: Double = 0

    @Flag(help: "Cut a small rectangle of holes (0) into the depth map.")
    var holes = false

    @Option(help: "Lens table: barrel (smooth, −4 % at the corner) or pincushion (real-looking: positive, not monotonic).")
    var lens = "barrel"

    @Option(help: "Calibration reference size, WIDTHxHEIGHT (default 4032x3024).")
    var reference = "4032x3024"

    @Option(help: ArgumentHelp("Tilt the camera: degrees below the horizon and roll about its optical axis (the scene stays level).", valueName: "pitch-down,roll"))
    var tilt: String?

    @Option(help: ArgumentHelp("Write EXIF: GPS position (degrees, meters above sea level), the heading of the scene's forward axis (degrees from true north) and the accelerometer's gravity.", valueName: "lat,lon,alt,heading"))
    var geotag: String?

    @Option(help: "Paint this many AprilTags (tag36h11, IDs 0…, black square 16 cm) in a row 1.6–2.8 m away, in front of the wall (moved to 4 m).")
    var tags = 0

    @Option(help: "Write the depth times this factor (a relative depth's wrong scale; 1 = metric).")
    var depthScale: Double = 1

    func run() throws {
        let (cw, ch) = try parseSize(color)
        let (dw, dh) = try parseSize(depth)
        let (rw, rh) = try parseSize(reference)
        let table: [Float]
        switch lens {
        case "barrel": table = SyntheticCapture.iPhoneCalibration().lookupTable
        case "pincushion": table = SyntheticCapture.realisticPincushionTable
        default: throw ValidationError("--lens is barrel or pincushion, got \(lens)")
        }
        let calibration = SyntheticCapture.calibration(lookupTable: table, referenceWidth: rw, referenceHeight: rh)
        var capture = SyntheticCapture(colorWidth: cw, colorHeight: ch, depthWidth: dw, depthHeight: dh,
                                       calibration: calibration)
        capture.colorNoise = colorNoise
        capture.depthNoise = depthNoise
        if let tilt {
            let values = tilt.split(separator: ",").compactMap { Double($0) }
            guard values.count == 2 else { throw ValidationError("--tilt is PITCH-DOWN,ROLL in degrees, got \(tilt)") }
            capture.scene.cameraToScene = SyntheticScene.tilt(pitchDown: values[0], roll: values[1])
        }
        if let geotag {
            let values = geotag.split(separator: ",").compactMap { Double($0) }
            guard values.count == 4, abs(values[0]) <= 90, abs(values[1]) <= 180 else {
                throw ValidationError("--geotag is LAT,LON,ALT,HEADING, got \(geotag)")
            }
            capture = capture.geotagged(latitude: values[0], longitude: values[1], altitude: values[2], heading: values[3])
        }
        guard depthScale > 0, depthScale.isFinite, tags >= 0, tags <= 50 else {
            throw ValidationError("--depth-scale must be positive, --tags between 0 and 50")
        }
        capture.depthScale = depthScale
        if tags > 0 {
            capture.scene.wallZ = 4
            capture.scene.tags = SyntheticTag.row(count: tags)
        }
        let hole = (x: (dw * 3 / 5)..<(dw * 3 / 5 + max(2, dw / 40)), y: (dh / 4)..<(dh / 4 + max(2, dh / 40)))
        let written = try capture.write(to: output, stem: name, jpegQuality: quality, supersampling: supersampling,
                                        holes: holes ? [hole] : [])
        print(written.json)
        print(written.image)
    }
}

/// `WIDTHxHEIGHT` as two numbers, both above 1.
func parseSize(_ text: String) throws -> (Int, Int) {
    let parts = text.split(separator: "x").compactMap { Int($0) }
    guard parts.count == 2, parts[0] > 1, parts[1] > 1 else { throw ValidationError("expected WIDTHxHEIGHT, got \(text)") }
    return (parts[0], parts[1])
}

Synth.main()
