import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// `rgbd fuse` through the real binary: the mesh's vertices on the scan's true surfaces,
/// valid faces, the header's comments, `--cloud`; hostile scans and options refused with
/// one line naming the scan (and frame), a non-zero exit and nothing written.
@Suite(.serialized) struct FuseCLITests {
    static let layout = SyntheticScan.Layout.stray(odometry: .v15, depth: .png, video: .hevc, imuInG: false)

    static func scan() -> SyntheticScan {
        var options = SyntheticScan.Options()
        options.videoPreset = "ultrafast"
        options.depthNoise = 0.002
        return SyntheticScan(frameCount: 12, colorWidth: 320, colorHeight: 240, options: options)
    }

    /// The PLY's header lines, vertices (position, color) and faces.
    static func read(_ ply: String) throws -> (header: [String], vertices: [SIMD3<Double>], colors: [SIMD3<UInt8>], faces: [[Int]]) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ply)))
        guard let end = Data(bytes).range(of: Data("end_header\n".utf8)) else { throw CocoaError(.fileReadCorruptFile) }
        let header = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).split(separator: "\n").map(String.init)
        func count(_ element: String) -> Int {
            Int(header.first { $0.hasPrefix("element \(element) ") }?.split(separator: " ").last ?? "0") ?? 0
        }
        let hasNormals = header.contains("property float nx")
        let record = hasNormals ? 27 : 15
        func word(_ o: Int) -> UInt32 {
            UInt32(bytes[o]) | UInt32(bytes[o + 1]) << 8 | UInt32(bytes[o + 2]) << 16 | UInt32(bytes[o + 3]) << 24
        }
        var offset = end.upperBound
        var vertices: [SIMD3<Double>] = [], colors: [SIMD3<UInt8>] = []
        for _ in 0..<count("vertex") {
            vertices.append(SIMD3((0..<3).map { Double(Float(bitPattern: word(offset + 4 * $0))) }))
            colors.append(SIMD3(bytes[offset + 12], bytes[offset + 13], bytes[offset + 14]))
            offset += record
        }
        var faces: [[Int]] = []
        for _ in 0..<count("face") {
            let n = Int(bytes[offset])
            faces.append((0..<n).map { Int(Int32(bitPattern: word(offset + 1 + 4 * $0))) })
            offset += 1 + 4 * n
        }
        #expect(offset == bytes.count, "the file ends where its elements do")
        return (header, vertices, colors, faces)
    }

    @Test func fusedMeshLiesOnTheTrueSurfaces() throws {
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scan = Self.scan()
        try scan.write(layout: Self.layout, to: dir + "/scan")
        let run = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/mesh.ply", "--voxel", "0.02", "-q"])
        #expect(run.status == 0, "\(run.stderr)")
        let (header, vertices, colors, faces) = try Self.read(dir + "/mesh.ply")
        #expect(vertices.count > 5000 && faces.count > 8000)
        #expect(header.contains("comment voxel 0.02 m (given), truncation 0.08 m"))
        #expect(header.contains { $0.hasPrefix("comment world gravity-aligned") })
        #expect(header.contains { $0.hasPrefix("comment source \(dir)/scan (Stray Scanner") })
        #expect(faces.allSatisfy { $0.count == 3 && $0.allSatisfy { (0..<vertices.count).contains($0) } })
        let truth = scan.truth(for: Self.layout)
        let distances = vertices.map { truth.distanceToSurface($0) }.sorted()
        #expect(distances[distances.count / 2] < 0.002, "median \(distances[distances.count / 2]) m")
        // 12 frames, depth noise 2 mm at 1 m growing with depth² (3 cm at 4 m): 95 % within a voxel.
        #expect(distances[distances.count * 95 / 100] < 0.02, "95 %: \(distances[distances.count * 95 / 100]) m")
        // Textured, not white: the video's colors reached the vertices.
        #expect(Set(colors.map { Int($0.x) << 16 | Int($0.y) << 8 | Int($0.z) }).count > 1000)
        // --cloud: the same vertices as points, no faces.
        let cloud = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/points.ply", "--voxel", "0.02", "--cloud", "-q"])
        #expect(cloud.status == 0, "\(cloud.stderr)")
        let points = try Self.read(dir + "/points.ply")
        #expect(points.vertices == vertices && points.faces.isEmpty)
    }

    /// Without --voxel the voxel follows the scan's depth: the real Record3D close-up of a
    /// door handle (median depth 0.23 m, a depth pixel 1.2 mm wide there) gets the 2 mm
    /// floor, the synthetic room (median about 2.5 m) about 1 cm; the summary line and the
    /// header say so. Skipped for the real scan without ../shared.
    @Test func voxelFollowsTheScansDepth() throws {
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.scan().write(layout: Self.layout, to: dir + "/scan")
        let room = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/room.ply"])
        #expect(room.status == 0, "\(room.stderr)")
        let line = try #require(try Self.read(dir + "/room.ply").header.first { $0.hasPrefix("comment voxel ") })
        let voxel = try #require(Double(line.split(separator: " ")[2]))
        // The depth camera's focal length is 0.7527 × 256 px: 1 cm is the footprint at 1.9 m.
        #expect(voxel >= 0.008 && voxel <= 0.02 && line.contains("(automatic: a depth pixel's footprint"), "\(line)")
        #expect(room.stderr.contains("voxel \(voxel) m (automatic"), "\(room.stderr)")
        guard let scans = StrayDepthOnlyCLITests.sharedScans else { return }
        let door = try CLITests.run(["fuse", scans + "/record3d-door", "-o", dir + "/door.ply", "-q"])
        #expect(door.status == 0, "\(door.stderr)")
        let header = try Self.read(dir + "/door.ply").header
        #expect(header.contains { $0.hasPrefix("comment voxel 0.002 m (automatic") }, "\(header)")
        // Given, it is used as given.
        let given = try CLITests.run(["fuse", scans + "/record3d-door", "-o", dir + "/door5.ply", "--voxel", "0.005", "-q"])
        #expect(given.status == 0)
        #expect(try Self.read(dir + "/door5.ply").header.contains { $0.hasPrefix("comment voxel 0.005 m (given)") })
    }

    /// What the fused mesh guarantees (docs/fuse.md, "Output"): no face with a repeated
    /// vertex or zero area (the scan's 16-bit distances are exactly zero at some voxels,
    /// where several cell edges have their vertex: 36 such faces before they were merged),
    /// every vertex used, and every edge in at most two faces, turned opposite ways
    /// (edge-manifold, consistently oriented). Vertex-manifoldness is not promised: where
    /// the mesh ends at unobserved cells two boundary fans can meet at a vertex (5 such
    /// vertices here, measured); on this scan none is inside the surface.
    @Test func fusedMeshHasNoDegenerateFacesAndIsEdgeManifold() throws {
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.scan().write(layout: Self.layout, to: dir + "/scan")
        let run = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/mesh.ply", "--voxel", "0.02", "-q"])
        #expect(run.status == 0, "\(run.stderr)")
        let (_, vertices, _, faces) = try Self.read(dir + "/mesh.ply")
        #expect(faces.count > 8000)
        let check = MeshCheck(vertices: vertices, faces: faces)
        #expect(check.repeatedVertex == 0 && check.zeroArea == 0,
                "\(check.repeatedVertex) faces with a repeated vertex, \(check.zeroArea) of zero area, of \(faces.count)")
        #expect(check.unusedVertices == 0)
        #expect(check.edgesInMoreThanTwoFaces == 0 && check.directedEdgesUsedTwice == 0,
                "\(check.edgesInMoreThanTwoFaces) edges in more than two faces, \(check.directedEdgesUsedTwice) directed edges twice")
        #expect(check.nonManifoldInteriorVertices == 0, "\(check.nonManifoldInteriorVertices) pinched vertices inside the surface")
        print("fuse mesh: \(vertices.count) vertices, \(faces.count) faces, \(check.boundaryEdges) boundary edges, \(check.nonManifoldVertices) vertices whose faces form more than one fan (\(check.nonManifoldInteriorVertices) not on the boundary)")
    }

    /// A triangle mesh's defects, counted.
    struct MeshCheck {
        var repeatedVertex = 0, zeroArea = 0, unusedVertices = 0
        var edgesInMoreThanTwoFaces = 0, directedEdgesUsedTwice = 0, boundaryEdges = 0
        /// Vertices whose faces do not form one fan (their opposite edges make more than
        /// one connected chain): pinched, not vertex-manifold.
        var nonManifoldVertices = 0
        /// Those of them on no boundary edge.
        var nonManifoldInteriorVertices = 0

        init(vertices: [SIMD3<Double>], faces: [[Int]]) {
            var edges: [SIMD2<Int>: Int] = [:], directed: [SIMD2<Int>: Int] = [:]
            var used = [Bool](repeating: false, count: vertices.count)
            var link = [[SIMD2<Int>]](repeating: [], count: vertices.count)
            for f in faces {
                if f[0] == f[1] || f[1] == f[2] || f[0] == f[2] { repeatedVertex += 1; continue }
                let u = vertices[f[1]] - vertices[f[0]], v = vertices[f[2]] - vertices[f[0]]
                if SIMD3(u.y * v.z - u.z * v.y, u.z * v.x - u.x * v.z, u.x * v.y - u.y * v.x) == .zero { zeroArea += 1 }
                for k in 0..<3 {
                    let a = f[k], b = f[(k + 1) % 3]
                    used[a] = true
                    edges[SIMD2(min(a, b), max(a, b)), default: 0] += 1
                    directed[SIMD2(a, b), default: 0] += 1
                    link[a].append(SIMD2(b, f[(k + 2) % 3]))
                }
            }
            unusedVertices = used.filter { !$0 }.count
            edgesInMoreThanTwoFaces = edges.values.filter { $0 > 2 }.count
            boundaryEdges = edges.values.filter { $0 == 1 }.count
            directedEdgesUsedTwice = directed.values.filter { $0 > 1 }.count
            var onBoundary = [Bool](repeating: false, count: vertices.count)
            for (edge, count) in edges where count == 1 { onBoundary[edge.x] = true; onBoundary[edge.y] = true }
            for (vertex, segments) in link.enumerated() where segments.count > 1 {
                var parent: [Int: Int] = [:]
                func root(_ x: Int) -> Int {
                    var x = x
                    while let p = parent[x], p != x { x = p }
                    return x
                }
                for s in segments {
                    for end in [s.x, s.y] where parent[end] == nil { parent[end] = end }
                    parent[root(s.x)] = root(s.y)
                }
                if Set(segments.map { root($0.x) }).count > 1 {
                    nonManifoldVertices += 1
                    if !onBoundary[vertex] { nonManifoldInteriorVertices += 1 }
                }
            }
        }
    }

    /// `--frame level` by geometry: the mesh, taken back from z up to the scan's +y-up world
    /// by the inverse of "up becomes +z" (x, y, z -> x, z, -y), lies on the true surfaces;
    /// the floor is the plane z = 0 (the room's floor is y = 0) with nothing below it.
    @Test func levelFrameStandsTheSurfaceOnTheFloor() throws {
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scan = Self.scan()
        try scan.write(layout: Self.layout, to: dir + "/scan")
        let run = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/mesh.ply", "--voxel", "0.02", "--frame", "level", "-q"])
        #expect(run.status == 0, "\(run.stderr)")
        let (header, vertices, _, faces) = try Self.read(dir + "/mesh.ply")
        #expect(vertices.count > 5000 && faces.count > 8000)
        #expect(header.contains { $0.hasPrefix("comment frame level") })
        let truth = scan.truth(for: Self.layout)
        let distances = vertices.map { truth.distanceToSurface(SIMD3($0.x, $0.z, -$0.y)) }.sorted()
        #expect(distances[distances.count / 2] < 0.002, "median \(distances[distances.count / 2]) m")
        let floorY = scan.room.minCorner.y
        let floor = vertices.filter { abs($0.z - floorY) < 0.05 }.map { abs($0.z - floorY) }.sorted()
        #expect(floor.count > 500, "\(floor.count) vertices near the floor")
        #expect(floor[floor.count / 2] < 0.002, "floor off z = \(floorY): median \(floor[floor.count / 2]) m")
        #expect(vertices.allSatisfy { $0.z > floorY - 0.03 }, "nothing below the floor")
        // A Record3D world (re-based on the first frame) is not gravity-aligned: refused.
        try scan.write(layout: .record3D(.r3d, keys: .new, portrait: false), to: dir + "/scan.r3d")
        let refused = try CLITests.run(["fuse", dir + "/scan.r3d", "-o", dir + "/r3d.ply", "--frame", "level", "-q"])
        #expect(refused.status != 0)
        #expect(refused.stderr.split(separator: "\n").count == 1 && refused.stderr.contains("gravity-aligned"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/r3d.ply"))
    }

    @Test func hostileInputsAreOneLineAndWriteNothing() throws {
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scan = Self.scan()
        try scan.write(layout: Self.layout, to: dir + "/good")
        try scan.write(layout: Self.layout, to: dir + "/far")
        // Every pose 1e9 m away along x.
        let odometry = dir + "/far/odometry.csv"
        var lines = try String(contentsOfFile: odometry, encoding: .utf8).components(separatedBy: "\n")
        let columns = lines[0].components(separatedBy: ", ")
        let x = try #require(columns.firstIndex(of: "x"))
        for i in 1..<lines.count where !lines[i].isEmpty {
            var fields = lines[i].components(separatedBy: ", ")
            fields[x] = String((Double(fields[x]) ?? 0) + 1e9)
            lines[i] = fields.joined(separator: ", ")
        }
        try lines.joined(separator: "\n").write(toFile: odometry, atomically: true, encoding: .utf8)
        // The far scan fails with one line naming it and its first frame; the good one is still fused.
        let run = try CLITests.run(["fuse", dir + "/far", dir + "/good", "-o", dir + "/out", "--voxel", "0.02", "-q"])
        #expect(run.status == 1)
        let errors = run.stderr.split(separator: "\n")
        #expect(errors.count == 1 && errors[0].contains("\(dir)/far: frame 0: ") && errors[0].contains("beyond the volume's reach"),
                "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/out/far.ply"))
        #expect(FileManager.default.fileExists(atPath: dir + "/out/good.ply"))
        // A memory budget too small: refused before allocating, naming the frame.
        let budget = try CLITests.run(["fuse", dir + "/good", "-o", dir + "/small.ply", "--voxel", "0.005", "--max-memory", "1", "-q"])
        #expect(budget.status == 1 && budget.stderr.contains("frame 0: ") && budget.stderr.contains("memory budget"), "\(budget.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/small.ply"))
        // Voxels of 0 and 1e-9 m are usage errors.
        for voxel in ["0", "1e-9", "nan"] {
            let bad = try CLITests.run(["fuse", dir + "/good", "-o", dir + "/bad.ply", "--voxel", voxel])
            #expect(bad.status == 64 && bad.stderr.contains("--voxel must be between 0.001 and 1"), "\(voxel): \(bad.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/bad.ply"))
    }
}
