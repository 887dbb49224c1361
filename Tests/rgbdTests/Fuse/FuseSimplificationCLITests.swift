import Foundation
import Testing
import RGBDKit
import RGBDSynth

/// `rgbd fuse --triangles` and `--max-error` through the real binary: the PLY has at most
/// the triangles asked for, its vertices are the full mesh's and lie on the true surfaces,
/// the header and the summary say what was done; bad values are one line, exit 64, and
/// nothing is written.
@Suite(.serialized) struct FuseSimplificationCLITests {
    @Test func trianglesAndErrorSimplifyTheWrittenMesh() throws {
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scan = FuseCLITests.scan()
        try scan.write(layout: FuseCLITests.layout, to: dir + "/scan")
        let full = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/full.ply", "--voxel", "0.02", "-q"])
        #expect(full.status == 0, "\(full.stderr)")
        let fullMesh = try FuseCLITests.read(dir + "/full.ply")
        let target = fullMesh.faces.count / 10
        let run = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/small.ply", "--voxel", "0.02",
                                    "--triangles", "\(target)"])
        #expect(run.status == 0, "\(run.stderr)")
        let (header, vertices, _, faces) = try FuseCLITests.read(dir + "/small.ply")
        #expect(faces.count <= target && faces.count > target / 2, "\(faces.count) triangles for \(target)")
        #expect(faces.allSatisfy { $0.count == 3 && $0.allSatisfy { (0..<vertices.count).contains($0) } })
        #expect(header.contains { $0.hasPrefix("comment simplified from \(fullMesh.faces.count) to \(faces.count) triangles") },
                "\(header)")
        #expect(run.stderr.contains("\(faces.count) triangles (simplified from \(fullMesh.faces.count), error "), "\(run.stderr)")
        // The vertices are the full mesh's, on the true surfaces.
        let fullVertices = Set(fullMesh.vertices.map { [$0.x, $0.y, $0.z] })
        #expect(vertices.allSatisfy { fullVertices.contains([$0.x, $0.y, $0.z]) })
        let truth = scan.truth(for: FuseCLITests.layout)
        let distances = vertices.map { truth.distanceToSurface($0) }.sorted()
        #expect(distances[distances.count / 2] < 0.002, "median \(distances[distances.count / 2]) m")
        // An error bound alone: fewer triangles than the full mesh, more than at a tenth.
        let bounded = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/bounded.ply", "--voxel", "0.02",
                                        "--max-error", "0.002", "-q"])
        #expect(bounded.status == 0, "\(bounded.stderr)")
        let boundedFaces = try FuseCLITests.read(dir + "/bounded.ply").faces.count
        #expect(boundedFaces < fullMesh.faces.count * 3 / 4 && boundedFaces > faces.count, "\(boundedFaces)")
    }

    @Test func badValuesAreOneLineAndWriteNothing() throws {
        let dir = try CLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FuseCLITests.scan().write(layout: FuseCLITests.layout, to: dir + "/scan")
        for (arguments, expected) in [(["--triangles", "0"], "(--triangles)"), (["--triangles", "-3"], "(--triangles)"),
                                      (["--max-error", "-0.01"], "(--max-error)"), (["--max-error", "0"], "(--max-error)"),
                                      (["--max-error", "nan"], "(--max-error)")] {
            let run = try CLITests.run(["fuse", dir + "/scan", "-o", dir + "/bad.ply", "--voxel", "0.02"] + arguments)
            let lines = run.stderr.split(separator: "\n").filter { !$0.isEmpty }
            #expect(run.status == 64, "\(arguments): \(run.stderr)")
            // One line says what is wrong (the usage follows, as for every usage error).
            #expect(lines.filter { $0.hasPrefix("Error: ") }.count == 1 && lines[0].contains(expected),
                    "\(arguments): \(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/bad.ply"))
        }
    }
}
