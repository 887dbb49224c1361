/// How far `TriangleMesh.simplified(_:)` reduces a mesh: a number of triangles, a
/// geometric bound, or both (it stops at whichever comes first).
///
/// The work is rgbd's quadric edge collapse (`QuadricSimplifier`): a vertex is collapsed
/// onto a neighbour, cheapest first, the cost being the area-weighted squared distance of
/// the kept vertex to the planes of the original triangles merged into the two; the error
/// is measured as the distance of the original mesh's vertices to the simplified surface
/// (tracked through the collapses, an upper bound of it). Vertices
/// on the mesh's boundary (edges of one triangle: where what the scan saw ends, holes) or
/// on a non-manifold edge or vertex never move, so every boundary edge is kept as it was;
/// a collapse must keep the topology (the link condition: no edge of more than two
/// triangles made, no hole opened or closed, no handle made or lost) and turn no
/// triangle over. The vertices kept are the mesh's own, with their positions, normals and
/// colors unchanged; only triangles and the vertices no triangle uses any more are dropped.
/// (meshoptimizer 0.18, Debian's, was measured first: on the same fused room at a tenth
/// of its triangles it made 312 edges of more than two triangles and closed 10 boundary
/// edges; docs/fuse.md.)
public struct MeshSimplification: Equatable, Sendable {
    /// The number of triangles to reduce to (at least 1); nil: as few as `maxError`
    /// allows. A count below what the kept boundary, the topology and the refused
    /// collapses allow is not reached: the result then has more.
    public var targetTriangles: Int?
    /// The largest error allowed, meters: every vertex of the original mesh stays within
    /// this distance of the simplified surface (a collapse that would move the surface
    /// farther from one is not made); nil: no bound, the count alone stops it.
    public var maxError: Double?

    /// A simplification to `targetTriangles` triangles and/or within `maxError` meters.
    public init(targetTriangles: Int? = nil, maxError: Double? = nil) {
        self.targetTriangles = targetTriangles
        self.maxError = maxError
    }

    /// Checks the values.
    /// - Throws: `RGBDError` (`.invalidArgument`, pointing at `.triangles` or `.maxError`)
    ///   for a count below 1, an error that is not a positive number of meters (at most
    ///   1 km), or neither given.
    public func validate() throws {
        if let targetTriangles, targetTriangles < 1 {
            throw RGBDError(.invalidArgument, "a mesh is simplified to at least 1 triangle (\(targetTriangles))",
                            argument: .triangles)
        }
        if let maxError, !(maxError > 0 && maxError <= 1000) {
            throw RGBDError(.invalidArgument, "the simplification's largest error must be a positive number of meters, at most 1000 (\(maxError))",
                            argument: .maxError)
        }
        if targetTriangles == nil && maxError == nil {
            throw RGBDError(.invalidArgument, "a simplification needs a number of triangles, a largest error or both",
                            argument: .triangles)
        }
    }
}

/// A mesh simplified, with what it took.
public struct SimplifiedMesh: Sendable {
    /// The simplified mesh: a subset of the original's vertices (in their order) and new triangles.
    public var mesh: TriangleMesh
    /// The triangles before.
    public var trianglesBefore: Int
    /// The error, meters (as bounded by `maxError`): the largest distance of an original
    /// vertex to the simplified surface, as tracked through the collapses (an upper bound).
    public var error: Double
}

extension TriangleMesh {
    /// The mesh simplified as `options` ask (see `MeshSimplification`): the boundary kept
    /// edge for edge, no triangle turned over, the kept vertices' attributes unchanged.
    /// - Throws: `RGBDError` for options out of range (`MeshSimplification.validate()`)
    ///   or a mesh whose arrays disagree.
    public func simplified(_ options: MeshSimplification) throws -> SimplifiedMesh {
        try options.validate()
        guard positions.count == 3 * vertexCount, normals.count == positions.count, colors.count == positions.count,
              faces.count % 3 == 0, faces.allSatisfy({ Int($0) < vertexCount }) else {
            throw RGBDError(.invalidArgument, "a mesh needs 3 values per vertex for positions, colors and normals, and faces of existing vertices")
        }
        let before = faceCount
        guard before > 0, (options.targetTriangles ?? 0) < before else {
            return SimplifiedMesh(mesh: self, trianglesBefore: before, error: 0)
        }
        var simplifier = QuadricSimplifier(positions: positions, faces: faces)
        simplifier.run(target: options.targetTriangles.map { min($0, before) } ?? 0, maxError: options.maxError)
        var mesh = self
        mesh.faces = simplifier.remainingFaces()
        // The vertices no triangle uses any more.
        mesh.keepFaces { _ in true }
        return SimplifiedMesh(mesh: mesh, trianglesBefore: before, error: simplifier.largestError)
    }
}

extension SceneFusion {
    /// Simplifies the fused mesh as `options` ask (nothing when nil), recording what it did.
    mutating func simplify(_ options: MeshSimplification?, stage: ((Stage) -> Void)?) throws {
        guard let options else { return }
        stage?(.simplifying)
        let result = try mesh.simplified(options)
        mesh = result.mesh
        simplification = (result.trianglesBefore, result.error)
    }

    /// The header comment of a simplified fusion: its triangles before and after, the error.
    static func simplificationComments(_ fused: SceneFusion) -> [String] {
        guard let simplification = fused.simplification else { return [] }
        let error = (simplification.error * 1e6).rounded() / 1e6
        return ["simplified from \(simplification.trianglesBefore) to \(fused.mesh.faceCount) triangles (quadric edge collapse, boundary and topology kept), error \(error) m"]
    }
}
