import ArgumentParser
import RGBDKit

extension SceneExportFormat: ExpressibleByArgument {}
extension ExportImageFormat: ExpressibleByArgument {}
extension ExportDepthSize: ExpressibleByArgument {}

/// `rgbd export`: a scan into a trainer's or reconstruction system's dataset layout.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export a scan into the layout of nerfstudio, COLMAP, Gaussian splatting, Open3D or TUM RGB-D.",
        discussion: """
        SCAN is a Stray Scanner folder, a Record3D .r3d file or EXR + JPG folder, or a \
        folder of captures rgbd register placed \
        (docs/scans.md). DIR receives one dataset that the tool loads as it is, with the \
        poses, pixel convention, depth scale and camera model it expects (docs/export.md):

          nerfstudio  images/, depth/ (16-bit mm, 0 = unknown), sparse_pc.ply,
                      transforms.json: OpenGL camera-to-world, fl_x fl_y cx cy
                      w h (pixel centres at i + 0.5); a gravity-aligned world
                      is turned to +z up
          colmap      images/, sparse/0/: PINHOLE cameras, images (world-to-
                      camera, QW QX QY QZ), points3D; binary (--text: text)
          3dgs        colmap's layout for Gaussian splatting: images cropped
                      around the principal point (and shifted by the rest of
                      a pixel), sparse/0/points3D.ply (x y z nx ny nz rgb)
          open3d      color/, depth/ (mm), camera_intrinsic.json,
                      trajectory.log (camera-to-world), config.json
          tum         rgb/, depth/ (5000 per meter), rgb.txt, depth.txt,
                      groundtruth.txt, associations.txt, camera.yaml

        Images are the scan's color frames, rectified where the scan carries lens tables, \
        so every camera is a pinhole; intrinsics per frame where they vary (nerfstudio, \
        colmap; open3d and tum hold one camera and refuse frames whose intrinsics differ). \
        Depth is resampled from the depth map (inverse depth interpolated within a \
        surface, the nearest depth at edges); depth below --min-confidence is unknown (0). \
        open3d and tum store it on the color pixels. nerfstudio stores it at the depth \
        map's own size (--depth-size sensor, the default: 256×192 on an iPhone), which \
        nerfstudio resizes to the images with nearest neighbours as it loads them; each \
        depth pixel is the ray through the middle of the image pixels it is resized to. \
        --depth-size image writes it on the color pixels instead (interpolated), for \
        readers that do not resize; the export then takes about twice as long.

        Frames: --every N keeps every N-th, --max-frames N at most N spread evenly over \
        the scan, --sharpest the sharpest frame (variance of the Laplacian) of each window \
        instead (windows of --every frames, or --max-frames equal windows); it reads every \
        frame once more.

        --frame level writes the poses and the seed cloud with z up (a gravity-aligned \
        scan world, Stray Scanner's or a Record3D file's that rgbd info calls so, turned \
        x, y, z -> x, -z, y); the default keeps the \
        scan's world (nerfstudio's layout turns a gravity-aligned world to z up either way).

        DIR is written as a whole: everything goes into a temporary folder beside it, \
        renamed to DIR at the end, so a failed run leaves nothing. DIR must not be a file, \
        the scan or a folder holding it. A folder that is not empty is refused; \
        --overwrite replaces a folder an earlier rgbd export wrote (listed in its \
        .rgbd-written) and refuses one holding anything else, naming it. Frames \
        are streamed and encoded on all processors; memory does not grow with the number \
        of frames. On a terminal a status line shows frames done, rate and time left.
        """)

    @Argument(help: "The scan: a Stray Scanner folder, a Record3D .r3d file or EXR + JPG folder, or a folder rgbd register wrote.", completion: .file())
    var scan: String

    @Option(help: "nerfstudio, colmap, 3dgs, open3d or tum.")
    var format: SceneExportFormat

    @Option(name: [.short, .customLong("output")], help: "The folder to create.", completion: .directory)
    var output: String

    @OptionGroup var selection: SceneSelectionOptions

    @OptionGroup var poseSource: ScenePoseOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("Keep at most N frames, spread evenly over the scan.", valueName: "N"))
    var maxFrames: Int?

    @Flag(help: "Keep the sharpest frame of each window (of --every frames, or --max-frames windows).")
    var sharpest = false

    @Option(help: "Color files: jpeg or png (default: png for tum, jpeg otherwise).")
    var imageFormat: ExportImageFormat?

    @Option(parsing: .unconditional, help: ArgumentHelp("JPEG quality, 1 to 100.", valueName: "quality"))
    var jpegQuality: Int = 93

    @Option(parsing: .unconditional, help: ArgumentHelp("Shrink the images by this whole factor (each pixel the mean of an N×N block); intrinsics follow.", valueName: "N"))
    var downscale: Int = 1

    @Option(help: ArgumentHelp("nerfstudio's depth images: sensor (the depth map's size, the default) or image (the color images' size).", valueName: "size"))
    var depthSize: ExportDepthSize?

    @OptionGroup var placement: WorldFrameOptions

    @Flag(help: "colmap, 3dgs: write the model as text (.txt) instead of binary (.bin).")
    var text = false

    @Flag(help: "Replace DIR if an earlier rgbd export wrote it (a folder holding anything else is refused).")
    var overwrite = false

    @Flag(name: [.short, .long], help: "Print nothing but errors and warnings.")
    var quiet = false

    func validate() throws {
        try checkOutputPath(output, writes: [])
        if let maxFrames, maxFrames < 1 { throw ValidationError("--max-frames must be at least 1") }
        if !(1...100).contains(jpegQuality) { throw ValidationError("--jpeg-quality must be 1 to 100") }
        if !(1...64).contains(downscale) { throw ValidationError("--downscale must be a whole number from 1 to 64") }
        if text && format != .colmap && format != .gaussianSplatting {
            throw ValidationError("--text applies to --format colmap and 3dgs")
        }
        if depthSize == .sensor && format != .nerfstudio {
            throw ValidationError("--depth-size sensor applies to --format nerfstudio (open3d and tum store depth at the images' size)")
        }
    }

    func run() throws {
        var options = SceneExportOptions(format: format)
        options.selection = FrameSelection(every: selection.every, maxFrames: maxFrames, sharpest: sharpest)
        options.imageFormat = imageFormat
        options.jpegQuality = jpegQuality
        options.downscale = downscale
        options.minConfidence = selection.minConfidence
        options.depthSize = depthSize
        options.colmapText = text
        options.overwrite = overwrite
        let start = Host.monotonicSeconds()
        do {
            let scene = try SceneInputs.open(scan, poses: poseSource,
                                             refining: Refine.options(depth: nil, confidence: selection.minConfidence, memory: nil),
                                             quiet: quiet)
            var options = options
            options.frame = try WorldFrame.forScene(placement.frame, scene: scene)
            let progress = FrameProgress(name: Path.lastComponent(scan), quiet: quiet)
            let result = try SceneExport.run(scene, to: output, options: options) { done, total in
                progress.update(done: done, total: total)
            }
            progress.finish()
            if !quiet {
                let seconds = Progress.format(seconds: Host.monotonicSeconds() - start, decimals: 2)
                let cloud = result.seedPoints.map { ", seed cloud of \($0) points" } ?? ""
                Terminal.printError("\(scan): \(result.frames) frames (\(result.width)×\(result.height))\(cloud) → \(result.directory) (\(format.rawValue), \(seconds) s)\n")
            }
        } catch {
            Report.error(error)
            throw ExitCode(1)
        }
    }
}
