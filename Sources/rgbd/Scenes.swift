import ArgumentParser
import RGBDKit

/// Scans (Stray Scanner folders, Record3D `.r3d` files and exports) among a command's
/// inputs: recognised by content and handled as scenes, the other inputs as captures.
enum SceneInputs {
    /// The inputs that are scans, and the rest, each in input order.
    static func split(_ inputs: [String]) -> (scenes: [String], captures: [String]) {
        var scenes: [String] = [], captures: [String] = []
        for input in inputs {
            if Scene.looksLikeScene(input) { scenes.append(input) } else { captures.append(input) }
        }
        return (scenes, captures)
    }

    /// Opens a scene, printing its warnings (one line each, naming the scan unless they
    /// name a file of it) on stderr when `report` is true.
    static func open(_ path: String, report: Bool = true) throws -> Scene {
        let scene = try Scene.open(path)
        if report {
            for warning in scene.warnings {
                Report.warning(warning.hasPrefix(path) ? warning : "\(path): \(warning)")
            }
        }
        return scene
    }
}

/// Progress through a scene's frames on a terminal: one status line redrawn in place
/// (bar, frames, rate, time left); nothing off a terminal or with `--quiet`.
final class FrameProgress {
    private let enabled: Bool
    private let name: String
    private let start = Host.monotonicSeconds()
    private var drawn = false

    init(name: String, quiet: Bool) {
        self.name = name
        enabled = !quiet && Terminal.standardErrorIsTerminal
    }

    /// Shows that the work moved on to `stage` (meshing, writing) after the frames.
    func stage(_ stage: String) {
        guard enabled else { return }
        let seconds = Progress.format(seconds: Host.monotonicSeconds() - start, decimals: 1)
        let line = "\(name): \(stage)… (\(seconds) s)"
        Terminal.printError("\r\u{1B}[K" + String(line.prefix(max(10, (Terminal.standardErrorColumns ?? 80) - 1))))
        drawn = true
    }

    func update(done: Int, total: Int) {
        guard enabled else { return }
        let columns = Terminal.standardErrorColumns ?? 80
        let line = Progress.statusLine(completed: done, total: total, processed: done,
                                       seconds: Host.monotonicSeconds() - start, name: name, columns: columns)
        Terminal.printError("\r\u{1B}[K" + line)
        drawn = true
    }

    func finish() {
        if drawn { Terminal.printError("\r\u{1B}[K"); drawn = false }
    }
}

/// `rgbd cloud` for scans: one merged, voxel-thinned PLY per scan.
struct SceneCloudCommand {
    var options: SceneCloudOptions
    /// `--frame`, placed per scan by `WorldFrame.forScene`.
    var frame: WorldFrame.Kind = .camera
    var encoding: PLYWriter.Encoding
    var quiet: Bool
    /// Which poses the scans use.
    var poses: ScenePoseOptions
    /// How `--refine` refines them (the command's depth filters and confidence).
    var refining: PoseRefinementOptions
    /// Write LAS 1.4 instead of PLY.
    var las = false
    /// With LAS and an ENU frame: the coordinate system to write (`Projection`).
    var crs: String? = nil

    /// Writes the cloud of each scene; `output` is a `.ply` path (one scan) or a
    /// directory (NAME.ply per scan). Returns how many failed (each reported).
    func run(_ scenes: [String], output: String) -> Int {
        var failures = 0
        let ext = las ? "las" : "ply"
        // Every scan's file decided, and collisions refused, before anything is read.
        let plan: SceneOutputPlan
        do {
            plan = try SceneOutputPlan(scenes: scenes, output: output, suffix: ext, fileExtensions: ["ply", "las"])
        } catch {
            Report.error(error)
            return scenes.count
        }
        for (path, target) in plan.targets.map({ ($0.scene, $0.path) }) {
            let start = Host.monotonicSeconds()
            do {
                let scene = try SceneInputs.open(path, poses: poses, refining: refining, quiet: quiet)
                var options = options
                options.points.frame = try WorldFrame.forScene(frame, scene: scene)
                let progress = FrameProgress(name: Path.lastComponent(path), quiet: quiet)
                defer { progress.finish() }
                let cloud = try SceneCloud.build(scene, options: options) { done, total in progress.update(done: done, total: total) }
                progress.stage("writing \(target)")
                if las {
                    var positions = cloud.positions.map(Double.init)
                    var wkt: String? = nil
                    if let crs {
                        let projection = try Projection(crs: crs)
                        let projected = try projection.project(enu: positions, frame: options.points.frame)
                        positions = projected.positions
                        wkt = projection.wkt
                        for note in projected.notes where note.hasPrefix("no geoid") { Report.warning("\(path): \(note)") }
                    }
                    try LASWriter.write(path: target, positions: positions,
                                        colors: scene.colorSize == nil ? nil : cloud.colors, wkt: wkt)
                } else {
                    try cloud.positions.withUnsafeBufferPointer { points in
                        try cloud.colors.withUnsafeBufferPointer { colors in
                            try cloud.normals.withUnsafeBufferPointer { normals in
                                try PLYWriter.write(path: target, points: points, colors: scene.colorSize == nil ? nil : colors,
                                                    normals: options.points.normals ? normals : nil, encoding: encoding,
                                                    comments: comments(scene, cloud, options))
                            }
                        }
                    }
                }
                progress.finish()
                if cloud.count == 0 {
                    Report.warning("\(path): \(target) holds no point: no depth passed the filters (confidence \(options.minConfidence.rawValue) and up, depth range)")
                }
                if !quiet {
                    let seconds = Progress.format(seconds: Host.monotonicSeconds() - start, decimals: 2)
                    Terminal.printError("\(path): \(cloud.frames) frames, \(cloud.inputPoints) points → \(cloud.count) in \(target) (\(seconds) s)\n")
                }
            } catch {
                Report.error(error)
                failures += 1
            }
        }
        return failures
    }

    private func comments(_ scene: Scene, _ cloud: SceneCloud, _ options: SceneCloudOptions) -> [String] {
        let placed = options.points.frame
        return [
            "rgbd \(RGBDVersion.string): merged cloud of a scan, meters",
            "source \(scene.path) (\(scene.format.app.rawValue), \(scene.format.variant))",
            "world \(scene.world.rawValue)",
            "poses \(scene.poseSource)",
            placed.kind == .camera
                ? "axes: the scan's world axes; points = pose * (X, Y, Z) of each frame's OpenCV camera frame"
                : "axes: \(placed.axesDescription); points = transform * pose * (X, Y, Z) of each frame's OpenCV camera frame",
            "frames \(cloud.frames) (every \(options.every)), min confidence \(options.minConfidence.rawValue)",
            options.voxel > 0 ? "voxel \(options.voxel) m: one averaged point per occupied cell" : "voxel 0: every point kept",
        ] + (options.points.normals
             ? ["normals: each frame's from its depth grid (toward its camera), turned into the world and averaged per cell"] : [])
          + placed.comments
    }
}
