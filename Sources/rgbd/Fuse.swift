import ArgumentParser
import RGBDKit

/// `rgbd fuse`: a scan's frames fused into one colored triangle mesh (TSDF and marching
/// cubes).
struct Fuse: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fuse scans into one colored triangle mesh (TSDF volume and marching cubes).",
        discussion: """
        Each SCAN (a Stray Scanner folder, a Record3D .r3d file or EXR + JPG folder, a \
        folder of captures rgbd register placed, \
        recognised by content; docs/scans.md) becomes one surface: its frames' depth is \
        integrated, frame by frame with each frame's pose and intrinsics, into a truncated \
        signed distance volume on a sparse hash of 8x8x8-voxel blocks (memory follows the \
        observed surface), then marching cubes extracts the zero crossing as a triangle \
        mesh with shared vertices, per-vertex colors and normals (from the distance \
        field's gradient, pointing to the side the cameras saw).

        A depth pixel counts when its ARKit confidence is at least --min-confidence \
        (default 2, high only: medium-confidence depth put surfaces 15 cm off on a real \
        scan; frames without confidence use all), its depth lies within \
        --min-depth/--max-depth and it passes the flying-pixel filter of rgbd cloud \
        (--flying-pixel-step). Its weight is c * min(1, (1 m / z)^2) * max(0.1, cos a): c is \
        1 for high, 0.5 for medium, 0.25 for low confidence, z the depth, a the angle \
        between the ray and the surface (far and grazing measurements count less). Colors \
        are each frame's color averaged over the depth pixel's footprint (as rgbd cloud \
        colors points), averaged with the same weights into the voxels within the \
        truncation band; white without color. A voxel is meshed when the weights it saw add \
        up to at least --min-weight full-weight views (default (0.003 m / voxel)^2: 0.09 at \
        1 cm, 2.25 at 2 mm; 0 meshes every observed voxel): finer voxels need more views to \
        be a surface rather than one frame's noise.

        --voxel sets the voxel edge (0.001 to 1 m). Without it the voxel is chosen from the \
        scan's depth: the width of one depth pixel at the median depth of 16 frames spread \
        over the scan (the pixels that pass the filters), rounded to 0.5 mm, within 2 mm \
        and 2 cm: about 2 mm for an object at 30 cm, about 1 cm for a room. The summary \
        line and the PLY header say which voxel and why. --trunc sets the truncation \
        distance (default 4 voxels). --every N integrates every N-th frame. \
        --min-fragment N drops connected pieces of fewer than N triangles. --triangles N \
        simplifies the mesh to about N triangles and --max-error M as far as keeping every \
        fused vertex within M meters of the surface allows (both: whichever stops first), \
        by quadric edge collapse onto the fused vertices: the boundary is kept edge for \
        edge, the topology kept, no triangle turned over (docs/fuse.md). --cloud writes \
        the mesh's vertices as a point cloud (positions, colors, normals) instead. The \
        volume (the TSDF blocks, 4 KiB per 8x8x8 block) may take at most --max-memory MB \
        (default half the machine's memory): a frame that would need more is refused, \
        naming it, before memory is allocated. That bounds the volume only: the process \
        also holds the frames being read (about 100 MB for 1920x1440 video) and, at the \
        end, the mesh and marching cubes' lists (about 200 bytes per vertex); the summary \
        gives the volume's size and the process's peak. \
        --frame level turns a gravity-aligned scan world (ARKit's world, +y up: Stray \
        Scanner's, and a Record3D file's whose poses are not re-based, as rgbd info says) \
        so that up is +z before fusing (the transform is in the header); a scene of \
        registered captures (rgbd register) is placed by the first photo whose EXIF has \
        gravity (level) or also a position and heading (enu). Other worlds are refused with \
        a message.

        Output: PLY 1.0, binary little-endian (or --ascii): vertex x y z (meters, the \
        scan's world or --frame), red green blue, nx ny nz; face vertex_indices (three per \
        triangle, counter-clockwise seen from the observed side). Header comments give \
        the source, world, axes, voxel and options. OUT is a .ply path for one scan or a \
        directory (NAME.ply per scan). A .glb output is glTF 2.0 binary (positions, \
        normals, meters, +Y up: a gravity-aligned world as it is, --frame level or enu \
        turned so that their up is +Y; the mapping is in the asset's extras); a .obj output \
        is OBJ (NAME.obj, NAME.mtl and its images) in the same axes. A .html output is one \
        self-contained web page that any browser opens from disk, without a server: the \
        .glb's surface (textured as below) and the camera path, orbit (drag), pan (right \
        drag), zoom (wheel), reset view (button or R); it embeds three.js, which rgbd finds \
        at run time (Debian's libjs-three in /usr/share/javascript/three, or the folder \
        $RGBD_THREE_DIR names; without it, one error line and nothing is fused).

        Texturing: a .glb, .obj or .html output of a scan with color is textured by default. The \
        mesh is simplified within one voxel (unless --triangles or --max-error say \
        otherwise) and each triangle takes its color from one frame (at most 120 frames, \
        spread over the scan): among the frames that see it whole (its depth agreeing with \
        the triangle at its centre and corners, so that a frame where something stands in \
        front of it is never used; facing it within 78 degrees), the one where it covers \
        the most pixels, times the frame's sharpness from the camera's motion, then the \
        frame its neighbours took. Triangles that reach out of every frame are split until \
        their parts fit; triangles no frame sees keep their vertices' color. Neighbouring \
        triangles of one frame form charts, packed into atlases of --texture-size pixels \
        (default 4096; one smaller power of two when it holds everything; more atlases when \
        one does not), embedded as JPEG in the .glb (one primitive and material per atlas) \
        or written beside the .obj (NAME.jpg, or NAME_0.jpg, NAME_1.jpg, ...). Per-frame \
        color gains from the overlaps level exposures, per-vertex offsets level the seams \
        between charts, and the unused texels are filled from their neighbours so that no \
        dark seam shows at any zoom. --texture-size 0 writes vertex colors instead (and \
        simplifies only when asked); a scan without color always does. The atlases count \
        against --max-memory: more is refused before anything is written. On a terminal a \
        status line shows frames done, rate and time left, then each stage (meshing, \
        simplifying, texturing, writing).
        """)

    @Argument(help: "Scans: Stray Scanner folders, Record3D .r3d files or EXR + JPG folders, folders rgbd register wrote.", completion: .file())
    var scans: [String]

    @Option(name: [.short, .customLong("output")], help: "Output .ply, .glb, .obj or .html path (one scan) or directory (NAME.ply per scan).", completion: .file())
    var output: String

    @Option(parsing: .unconditional, help: ArgumentHelp("Voxel edge, meters (0.001 to 1; default: a depth pixel's width at the scan's median depth, 0.002 to 0.02).", valueName: "meters"))
    var voxel: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("Truncation distance, meters (default 4 voxels).", valueName: "meters"))
    var trunc: Double?

    @OptionGroup var depth: DepthFilterOptions

    @OptionGroup var selection: SceneSelectionOptions

    @OptionGroup var poseSource: ScenePoseOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("Mesh only voxels observed with at least this total weight, in full-weight views (0: every observed voxel; default (0.003 m / voxel)²).", valueName: "views"))
    var minWeight: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("Drop connected pieces of fewer than N triangles (0 keeps all).", valueName: "N"))
    var minFragment: Int = 0

    @OptionGroup var memory: VolumeMemoryOptions

    @OptionGroup var placement: WorldFrameOptions

    @Flag(help: "Write the surface's vertices as a point cloud (with colors and normals), not a mesh.")
    var cloud = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Simplify the mesh to about N triangles (at least 1; the boundary is kept, so a count below it is not reached).", valueName: "N"))
    var triangles: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Simplify the mesh as far as an error of at most this many meters allows (with --triangles: whichever stops first).", valueName: "meters"))
    var maxError: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("A .glb, .obj or .html output of a scan with color is textured from the frames in atlases of this side, pixels (64 to 16384, default 4096; more atlases when one does not hold the texture); 0: vertex colors instead, no texture.", valueName: "pixels"))
    var textureSize: Int?

    /// The texturing of a `format` output: nil for PLY or `--texture-size 0` (vertex colors).
    func texturing(format: String) -> TexturingOptions? {
        guard format == "glb" || format == "obj" || format == "html", textureSize != 0 else { return nil }
        return TexturingOptions(side: textureSize ?? 4096, memoryBudget: memory.bytes)
    }

    /// The simplification asked for, if any.
    var simplification: MeshSimplification? {
        triangles == nil && maxError == nil ? nil : MeshSimplification(targetTriangles: triangles, maxError: maxError)
    }

    @Flag(help: "Write ASCII PLY instead of binary.")
    var ascii = false

    @Flag(name: [.short, .long], help: "Print nothing but errors and warnings.")
    var quiet = false

    func validate() throws {
        let format = try checkOutputPath(output, writes: SceneFusion.fileExtensions) ? Path.pathExtension(output) : "ply"
        if format != "ply" && cloud { throw ValidationError("--cloud writes PLY: give a .ply output") }
        if format != "ply" && ascii { throw ValidationError("--ascii applies to PLY only") }
        if let textureSize, textureSize != 0 {
            do {
                try TexturingOptions(side: textureSize).validate()
            } catch let error as RGBDError {
                throw ValidationError(Report.describe(error) + " (0: vertex colors, no texture)")
            }
        }
        if textureSize != nil && format != "glb" && format != "obj" && format != "html" {
            throw ValidationError("--texture-size applies to a .glb, .obj or .html output")
        }
        if let voxel, !(voxel >= 0.001 && voxel <= 1) { throw ValidationError("--voxel must be between 0.001 and 1 meters") }
        if let trunc, !(trunc >= (voxel ?? 0.001) && trunc <= 1) {
            throw ValidationError(voxel == nil ? "--trunc must be between 0.001 and 1 meter" : "--trunc must be at least --voxel and at most 1 meter")
        }
        if let minWeight, !(minWeight >= 0 && minWeight <= 255) { throw ValidationError("--min-weight must be between 0 and 255") }
        if minFragment < 0 { throw ValidationError("--min-fragment must be 0 or more") }
        do {
            try simplification?.validate()
        } catch let error as RGBDError {
            throw ValidationError(Report.describe(error))
        }
    }

    func run() throws {
        var options = SceneFusionOptions()
        options.voxel = voxel
        options.trunc = trunc
        depth.apply(to: &options.points)
        options.minConfidence = selection.minConfidence
        options.every = selection.every
        options.minWeight = minWeight
        options.minFragmentTriangles = minFragment
        options.memoryBudget = memory.bytes
        options.simplification = simplification
        let encoding: PLYWriter.Encoding = ascii ? .ascii : .binaryLittleEndian
        // Every scan's file decided, and collisions refused, before anything is read.
        let plan: SceneOutputPlan
        do {
            plan = try SceneOutputPlan(scenes: scans, output: output, suffix: "ply", fileExtensions: SceneFusion.fileExtensions)
            // What a format needs (three.js for a page), missing: said before any scan is fused.
            for target in plan.targets { try SceneFusion.checkRequirements(forWriting: target.path) }
        } catch {
            Report.error(error)
            throw ExitCode(1)
        }
        var failures = 0
        for (path, target) in plan.targets.map({ ($0.scene, $0.path) }) {
            let start = Host.monotonicSeconds()
            do {
                let refining = Refine.options(depth: depth, confidence: selection.minConfidence, memory: memory)
                let (scene, refinement) = try SceneInputs.openRefined(path, poses: poseSource, refining: refining, quiet: quiet)
                var options = options
                // The voxel a refinement chose from the same frames and filters is this
                // fusion's too: not chosen again.
                if options.every == 1 { options.chosenVoxel = refinement?.fusionVoxel }
                options.points.frame = try WorldFrame.forScene(placement.frame, scene: scene)
                let texturing = SceneFusion.texturing(forWriting: target, scene: scene, options: self.texturing(format: Path.pathExtension(target)))
                options.simplifyWithinVoxel = texturing != nil
                if texturing != nil { try SceneFusion.checkRequirements(forWriting: target, textured: true) }
                let progress = FrameProgress(name: Path.lastComponent(path), quiet: quiet)
                defer { progress.finish() }
                let fused = try SceneFusion.build(scene, options: options,
                                                  progress: { done, total in progress.update(done: done, total: total) },
                                                  stage: { progress.stage($0.rawValue) })
                var texture = ""
                let textured = try fused.write(to: target, scene: scene, frame: options.points.frame, texturing: texturing,
                                               encoding: encoding, asPoints: cloud, stage: { progress.stage($0) },
                                               progress: { done, total in progress.stage("texturing, frame \(done) of \(total) read") })
                if let textured {
                    let side = textured.atlases.first?.width ?? 0
                    let percent = Progress.format(seconds: 100 * textured.coverage, decimals: 1)
                    texture = ", textured: \(percent) % of the area (\(textured.faceViews.filter { $0 >= 0 }.count) of \(textured.faceViews.count) triangles) from \(Set(textured.faceViews.filter { $0 >= 0 }).count) frames, \(textured.atlases.count) atlas\(textured.atlases.count == 1 ? "" : "es") of \(side) px"
                } else if self.texturing(format: Path.pathExtension(target)) != nil && scene.colorSize == nil {
                    texture = ", vertex colors: the scan has no color to texture from"
                }
                let mesh = fused.mesh
                progress.finish()
                if mesh.faceCount == 0 {
                    Report.warning("\(path): \(target) holds no surface: no depth passed the filters (confidence \(selection.minConfidence.rawValue) and up, depth range) or no cell was seen whole")
                }
                if !quiet {
                    let seconds = Progress.format(seconds: Host.monotonicSeconds() - start, decimals: 2)
                    var what = cloud ? "\(mesh.vertexCount) points" : "\(mesh.vertexCount) vertices, \(mesh.faceCount) triangles"
                    if let simplified = fused.simplification {
                        what += " (simplified from \(simplified.trianglesBefore), error \(Progress.format(seconds: simplified.error * 1000, decimals: 2)) mm)"
                    }
                    let peak = Host.peakResidentBytes.map { ", process peak \($0 >> 20) MB" } ?? ""
                    Terminal.printError("\(path): \(fused.frames) frames, voxel \(fused.voxel.voxel) m (\(fused.voxel.reason)), \(fused.blocks) blocks (volume \(fused.volumeBytes >> 20) MB\(peak)) → \(what)\(texture) in \(target) (\(seconds) s)\n")
                }
            } catch {
                Report.error(error)
                failures += 1
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }
}
