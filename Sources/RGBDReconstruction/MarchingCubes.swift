import Dispatch

/// The triangulation of a cube's 256 sign configurations for marching cubes, built at
/// first use from the cube's geometry rather than typed in as a table.
///
/// Corner `i` of a cell sits at offset `(i & 1, i >> 1 & 1, i >> 2 & 1)`; a configuration
/// has bit `i` set when corner `i` is inside (negative). On each of the 6 faces the edges
/// whose corners differ in sign are joined in pairs into segments; a face with 4 such
/// edges (two inside corners on a diagonal) cuts off each inside corner on its own. The
/// rule depends on the face's four values only, so the two cells sharing a face draw the
/// same segments there and the surface has no cracks. Every edge vertex meets exactly two
/// segments, so the segments close into loops; each loop is turned so that its triangles
/// face the outside corners (counter-clockwise seen from the positive side) and split into
/// a fan.
enum MarchingCubesTable {
    /// The two corners of edge `e` (the first with the smaller coordinate).
    static let edges: [(Int, Int)] = {
        var result: [(Int, Int)] = []
        for axis in 0..<3 {
            for corner in 0..<8 where corner & (1 << axis) == 0 {
                result.append((corner, corner | 1 << axis))
            }
        }
        return result
    }()

    /// The axis of edge `e` (0 x, 1 y, 2 z).
    static func axis(ofEdge e: Int) -> Int { e / 4 }

    /// Per configuration, triangles as edge numbers, three per triangle.
    static let triangles: [[UInt8]] = (0..<256).map(triangulate)

    static func corner(_ i: Int) -> SIMD3<Double> { SIMD3(Double(i & 1), Double(i >> 1 & 1), Double(i >> 2 & 1)) }

    static func edge(between a: Int, _ b: Int) -> Int {
        let (lo, hi) = a < b ? (a, b) : (b, a)
        return edges.firstIndex { $0 == (lo, hi) } ?? 0
    }

    static func triangulate(_ configuration: Int) -> [UInt8] {
        let inside = { (corner: Int) in configuration & (1 << corner) != 0 }
        var neighbors = [[Int]](repeating: [], count: 12)
        for axis in 0..<3 {
            let b = 1 << ((axis + 1) % 3), c = 1 << ((axis + 2) % 3)
            for side in 0..<2 {
                let base = side << axis
                let ring = [base, base | b, base | b | c, base | c]
                let cut = (0..<4).filter { inside(ring[$0]) != inside(ring[($0 + 1) % 4]) }
                let ringEdge = { (k: Int) in edge(between: ring[k], ring[(k + 1) % 4]) }
                if cut.count == 2 {
                    let e0 = ringEdge(cut[0]), e1 = ringEdge(cut[1])
                    neighbors[e0].append(e1); neighbors[e1].append(e0)
                } else if cut.count == 4 {
                    // Each inside corner k is cut off by its two ring edges (k−1, k) and (k, k+1).
                    for k in 0..<4 where inside(ring[k]) {
                        let e0 = ringEdge((k + 3) % 4), e1 = ringEdge(k)
                        neighbors[e0].append(e1); neighbors[e1].append(e0)
                    }
                }
            }
        }
        var visited = [Bool](repeating: false, count: 12)
        var result: [UInt8] = []
        for start in 0..<12 where !visited[start] && !neighbors[start].isEmpty {
            var loop = [start]
            visited[start] = true
            var previous = start, current = neighbors[start][0]
            while current != start {
                loop.append(current)
                visited[current] = true
                let next = neighbors[current][0] == previous ? neighbors[current][1] : neighbors[current][0]
                previous = current
                current = next
            }
            // Newell's normal of the loop through the edges' midpoints, against the
            // direction from the loop's inside corners to its outside corners.
            let points = loop.map { (corner(edges[$0].0) + corner(edges[$0].1)) / 2 }
            var normal = SIMD3<Double>.zero, outward = SIMD3<Double>.zero
            for (n, p) in points.enumerated() {
                let q = points[(n + 1) % points.count]
                normal += SIMD3((p.y - q.y) * (p.z + q.z), (p.z - q.z) * (p.x + q.x), (p.x - q.x) * (p.y + q.y))
                let (a, b) = edges[loop[n]]
                outward += inside(a) ? corner(b) - corner(a) : corner(a) - corner(b)
            }
            if (normal * outward).sum() < 0 { loop.reverse() }
            for n in 1..<(loop.count - 1) {
                result += [UInt8(loop[0]), UInt8(loop[n]), UInt8(loop[n + 1])]
            }
        }
        return result
    }
}

/// A triangle mesh with a color and a normal per vertex: what `TSDFVolume.extractMesh`
/// and `SceneFusion` produce.
public struct TriangleMesh: Sendable {
    /// Vertex positions, meters (3 floats per vertex).
    public var positions: [Float] = []
    /// RGB per vertex (3 bytes per vertex).
    public var colors: [UInt8] = []
    /// Unit normals per vertex (3 floats per vertex), pointing to the observed (free) side.
    public var normals: [Float] = []
    /// Triangles: three vertex indices each, counter-clockwise seen from the free side.
    public var faces: [UInt32] = []

    /// The number of vertices.
    public var vertexCount: Int { positions.count / 3 }
    /// The number of triangles.
    public var faceCount: Int { faces.count / 3 }

    /// An empty mesh.
    public init() {}

    /// Keeps the triangles `keep` accepts (by triangle number) and the vertices they use,
    /// each in its order, in place (no second copy of the mesh).
    mutating func keepFaces(where keep: (Int) -> Bool) {
        var keptFace = [Bool](repeating: false, count: faceCount)
        var used = [Bool](repeating: false, count: vertexCount)
        for t in 0..<faceCount where keep(t) {
            keptFace[t] = true
            for k in 0..<3 { used[Int(faces[3 * t + k])] = true }
        }
        guard keptFace.contains(false) || used.contains(false) else { return }
        var remap = [UInt32](repeating: 0, count: vertexCount)
        var next = 0
        for i in 0..<vertexCount where used[i] {
            remap[i] = UInt32(next)
            for k in 0..<3 {
                positions[3 * next + k] = positions[3 * i + k]
                normals[3 * next + k] = normals[3 * i + k]
                colors[3 * next + k] = colors[3 * i + k]
            }
            next += 1
        }
        positions.removeLast(positions.count - 3 * next)
        normals.removeLast(normals.count - 3 * next)
        colors.removeLast(colors.count - 3 * next)
        var written = 0
        for t in 0..<keptFace.count where keptFace[t] {
            for k in 0..<3 { faces[written + k] = remap[Int(faces[3 * t + k])] }
            written += 3
        }
        faces.removeLast(faces.count - written)
    }
}

extension TSDFVolume {
    /// Voxels sampled around one block for marching cubes: block-local coordinates −1…9
    /// on each axis (the cells whose first corner is in the block, their far corners in
    /// the next blocks, and one more voxel for central differences).
    private struct Window {
        static let side = 11
        var tsdf = [Float](repeating: 0, count: side * side * side)
        var weight = [Bool](repeating: false, count: side * side * side)
        package var color = [SIMD3<Float>](repeating: .zero, count: side * side * side)

        @inline(__always) static func index(_ x: Int, _ y: Int, _ z: Int) -> Int { ((z + 1) * side + (y + 1)) * side + (x + 1) }
    }

    /// A vertex computed by one block, keyed by the edge it lies on (or the voxel, when it
    /// lies on one).
    private struct EdgeVertex {
        var key: UInt64
        var position: SIMD3<Float>
        var normal: SIMD3<Float>
        package var color: SIMD3<UInt8>
    }

    /// The zero set of the volume as a triangle mesh (marching cubes over every cell whose
    /// eight voxels have been observed with a weight of at least `minWeight` units: 1, any
    /// observation; `weightScale`, one full-weight observation). A vertex lies on a voxel edge, where the linear
    /// interpolation of the two voxels' values is zero; it is shared by every triangle
    /// that uses that edge, in any block, and a vertex on a voxel whose value is exactly
    /// zero by every triangle of any edge meeting there. Triangles left without area (a
    /// vertex repeated, or three on a line) are dropped, and the vertices only they used.
    /// A vertex's normal is the TSDF's gradient (central differences, interpolated along
    /// the edge), its color the voxels' colors interpolated alike. Blocks are meshed in
    /// parallel and merged in the order of their coordinates (z, y, x), so the output is
    /// the same on any number of processors.
    func extractMesh(parallel: Bool = true, minWeight: UInt16 = 1) -> TriangleMesh {
        let count = blockCount
        let order = (0..<count).sorted { a, b in
            let ca = blockCoordinates(a), cb = blockCoordinates(b)
            if ca.z != cb.z { return ca.z < cb.z }
            if ca.y != cb.y { return ca.y < cb.y }
            return ca.x < cb.x
        }
        var perBlock = [(vertices: [EdgeVertex], triangles: [UInt64])](repeating: ([], []), count: count)
        perBlock.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            // Each slot is written by the one iteration of its block.
            nonisolated(unsafe) let out = base
            nonisolated(unsafe) let work = { (n: Int) in out[n] = self.mesh(block: order[n], minWeight: max(1, minWeight)) }
            if parallel {
                let chunk = 16
                DispatchQueue.concurrentPerform(iterations: (count + chunk - 1) / chunk) { c in
                    for n in (c * chunk)..<min(count, c * chunk + chunk) { work(n) }
                }
            } else {
                for n in 0..<count { work(n) }
            }
        }
        // Room for every vertex and triangle at once (the arrays never grow by doubling),
        // and each block's lists released as soon as they are merged: the peak is the
        // volume, the per-block lists and the mesh, never twice the mesh.
        var mesh = TriangleMesh()
        let vertexBound = perBlock.reduce(0) { $0 + $1.vertices.count }
        let triangleCount = perBlock.reduce(0) { $0 + $1.triangles.count }
        mesh.positions.reserveCapacity(3 * vertexBound)
        mesh.normals.reserveCapacity(3 * vertexBound)
        mesh.colors.reserveCapacity(3 * vertexBound)
        mesh.faces.reserveCapacity(triangleCount)
        var shared = SparseKeyIndex(capacity: 1 << 16)
        for n in perBlock.indices {
            let block = perBlock[n]
            perBlock[n] = ([], [])
            for vertex in block.vertices where shared.insert(vertex.key).inserted {
                mesh.positions += [vertex.position.x, vertex.position.y, vertex.position.z]
                mesh.normals += [vertex.normal.x, vertex.normal.y, vertex.normal.z]
                mesh.colors += [vertex.color.x, vertex.color.y, vertex.color.z]
            }
            for k in Swift.stride(from: 0, to: block.triangles.count - 2, by: 3) {
                guard let a = shared.index(of: block.triangles[k]), let b = shared.index(of: block.triangles[k + 1]),
                      let c = shared.index(of: block.triangles[k + 2]),
                      !Self.isDegenerate(a, b, c, positions: mesh.positions) else { continue }
                mesh.faces += [UInt32(a), UInt32(b), UInt32(c)]
            }
        }
        // The vertices only degenerate triangles used.
        mesh.keepFaces { _ in true }
        return mesh
    }

    /// Whether a triangle has no area: a vertex repeated (a cell's vertices on one voxel
    /// whose value is exactly zero are one vertex) or three positions on a line.
    static func isDegenerate(_ a: Int, _ b: Int, _ c: Int, positions: [Float]) -> Bool {
        guard a != b, b != c, a != c else { return true }
        func point(_ i: Int) -> SIMD3<Double> {
            SIMD3(Double(positions[3 * i]), Double(positions[3 * i + 1]), Double(positions[3 * i + 2]))
        }
        let u = point(b) - point(a), v = point(c) - point(a)
        let n = SIMD3(u.y * v.z - u.z * v.y, u.z * v.x - u.x * v.z, u.x * v.y - u.y * v.x)
        return n == .zero
    }

    /// The vertices and triangles of the cells whose first corner is in block `b`.
    private func mesh(block b: Int, minWeight: UInt16) -> (vertices: [EdgeVertex], triangles: [UInt64]) {
        let side = Self.blockSide
        let c = blockCoordinates(b)
        var window = Window()
        // The 27 blocks around (and including) this one.
        var around = [UnsafeMutablePointer<TSDFVoxel>?](repeating: nil, count: 27)
        for dz in -1...1 {
            for dy in -1...1 {
                for dx in -1...1 {
                    around[(dz + 1) * 9 + (dy + 1) * 3 + (dx + 1)] = block(at: c &+ SIMD3(Int32(dx), Int32(dy), Int32(dz)))
                        .map { voxels(ofBlock: $0) }
                }
            }
        }
        for z in -1...side + 1 {
            let bz = z < 0 ? -1 : z >= side ? 1 : 0, lz = z - bz * side
            for y in -1...side + 1 {
                let by = y < 0 ? -1 : y >= side ? 1 : 0, ly = y - by * side
                for x in -1...side + 1 {
                    let bx = x < 0 ? -1 : x >= side ? 1 : 0, lx = x - bx * side
                    guard let voxels = around[(bz + 1) * 9 + (by + 1) * 3 + (bx + 1)] else { continue }
                    let v = voxels[(lz * side + ly) * side + lx]
                    guard v.weight >= minWeight else { continue }
                    let i = Window.index(x, y, z)
                    window.tsdf[i] = Float(v.tsdf) / 32_767
                    window.weight[i] = true
                    window.color[i] = v.colorWeight > 0 ? SIMD3(Float(v.red), Float(v.green), Float(v.blue)) : SIMD3(255, 255, 255)
                }
            }
        }
        let table = MarchingCubesTable.triangles
        let edges = MarchingCubesTable.edges
        var vertices: [EdgeVertex] = [], triangles: [UInt64] = []
        var made = SparseKeyIndex(capacity: 256)
        let voxel = self.voxel
        let origin = SIMD3<Int>(Int(c.x), Int(c.y), Int(c.z)) &* side
        // The gradient at a window voxel: central differences, one-sided at unobserved neighbors.
        func gradient(_ x: Int, _ y: Int, _ z: Int) -> SIMD3<Float> {
            var g = SIMD3<Float>.zero
            let here = window.tsdf[Window.index(x, y, z)]
            for axis in 0..<3 {
                var lo = SIMD3(x, y, z), hi = lo
                lo[axis] -= 1; hi[axis] += 1
                let inLo = lo.min() >= -1 && lo.max() <= side + 1, inHi = hi.min() >= -1 && hi.max() <= side + 1
                let l = inLo ? Window.index(lo.x, lo.y, lo.z) : -1, h = inHi ? Window.index(hi.x, hi.y, hi.z) : -1
                let hasLo = l >= 0 && window.weight[l], hasHi = h >= 0 && window.weight[h]
                if hasLo && hasHi { g[axis] = (window.tsdf[h] - window.tsdf[l]) / 2 }
                else if hasHi { g[axis] = window.tsdf[h] - here }
                else if hasLo { g[axis] = here - window.tsdf[l] }
            }
            return g
        }
        for z in 0..<side {
            for y in 0..<side {
                for x in 0..<side {
                    var configuration = 0
                    var values = SIMD8<Float>()
                    var complete = true
                    for corner in 0..<8 {
                        let i = Window.index(x + corner & 1, y + (corner >> 1 & 1), z + (corner >> 2 & 1))
                        guard window.weight[i] else { complete = false; break }
                        values[corner] = window.tsdf[i]
                        if values[corner] < 0 { configuration |= 1 << corner }
                    }
                    guard complete, configuration != 0, configuration != 255 else { continue }
                    for e in table[configuration] {
                        let (a, bCorner) = edges[Int(e)]
                        let pa = SIMD3(x + a & 1, y + (a >> 1 & 1), z + (a >> 2 & 1))
                        let pb = SIMD3(x + bCorner & 1, y + (bCorner >> 1 & 1), z + (bCorner >> 2 & 1))
                        let global = origin &+ pa
                        let va = values[a], vb = values[bCorner]
                        let t = va / (va - vb)
                        // The vertex's key: the edge's first voxel's block and place there, and
                        // the edge's axis; a vertex on a voxel (its value exactly zero: t = 0
                        // or 1, the quantized distance makes this common) is that voxel's, axis
                        // code 3, so the cell's edges that meet there share one vertex and
                        // the triangles between them, of no area, are dropped when merged.
                        let at = t == 0 ? global : t == 1 ? origin &+ pb : global
                        let owner = SIMD3(at.x >> 3, at.y >> 3, at.z >> 3)
                        let local = at &- owner &* side
                        let ownerBlock = block(at: SIMD3(Int32(owner.x), Int32(owner.y), Int32(owner.z))) ?? 0
                        let code = t == 0 || t == 1 ? 3 : MarchingCubesTable.axis(ofEdge: Int(e))
                        let key = UInt64(ownerBlock) << 11 | UInt64((local.z * side + local.y) * side + local.x) << 2
                            | UInt64(code)
                        triangles.append(key)
                        guard made.insert(key).inserted else { continue }
                        let ia = Window.index(pa.x, pa.y, pa.z), ib = Window.index(pb.x, pb.y, pb.z)
                        let position = (SIMD3<Float>(Float(global.x), Float(global.y), Float(global.z))
                            + (SIMD3<Float>(Float(pb.x - pa.x), Float(pb.y - pa.y), Float(pb.z - pa.z)) * t)) * voxel
                        var normal = gradient(pa.x, pa.y, pa.z) * (1 - t) + gradient(pb.x, pb.y, pb.z) * t
                        let length = (normal * normal).sum().squareRoot()
                        normal = length > 0 ? normal / length : .zero
                        let rgb = (window.color[ia] * (1 - t) + window.color[ib] * t).rounded(.toNearestOrEven)
                        vertices.append(EdgeVertex(key: key, position: position, normal: normal,
                                                   color: SIMD3(UInt8(min(255, max(0, rgb.x))), UInt8(min(255, max(0, rgb.y))),
                                                                UInt8(min(255, max(0, rgb.z))))))
                    }
                }
            }
        }
        return (vertices, triangles)
    }
}
