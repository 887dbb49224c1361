/// rgbd's quadric edge collapse (Garland and Heckbert's error quadrics) behind
/// `TriangleMesh.simplified(_:)`, written for what a fused mesh must keep: its boundary,
/// its topology and its orientation.
///
/// Each step collapses one vertex `a` onto a neighbour `b` (a half-edge collapse: `b`
/// stays where it is, so the result's vertices are the mesh's own), cheapest first. The
/// cost is `(Qa + Qb)(pb)`, with `Qv` the sum of the planes of the original triangles
/// merged into `v`, each weighted by its area. The error is measured, not estimated:
/// each vertex of the original mesh is assigned to a triangle of the current one; when a
/// collapse changes the triangles around `a`, the vertices assigned to them are assigned
/// to the nearest triangle of `b`'s new fan, and their distance to it (an upper bound of
/// their distance to the simplified surface) is the collapse's error. A collapse happens
/// only when
/// - `a` is free: on no boundary edge and no edge of more than two triangles, its
///   triangles one closed fan (vertex-manifold); boundary and non-manifold vertices never
///   move or go, so every boundary edge stays as it is;
/// - the link condition holds: the vertices adjacent to both `a` and `b` are exactly the
///   two opposite the edge `ab`, so no edge comes to join more than two triangles, no
///   hole is opened or closed and no handle made or lost (Dey, Edelsbrunner et al.);
/// - no triangle turns over: each triangle that moves keeps its normal within 78° of
///   where it was (a cosine above 0.2) and within 60° of where it was in the original
///   mesh, and keeps an area;
/// - its error is within the bound asked for: every original vertex stays within it of
///   the simplified surface.
/// Costs change as quadrics merge: after a collapse onto `b` every edge of `b` is queued
/// again at its new cost and its older entries are dropped when they come up (each entry
/// carries the two vertices' versions), so the order is by current cost. The queue is a
/// bucket queue: costs in buckets of a 64th of an octave (their float patterns' top
/// bits), the cheapest bucket first and a bucket's entries in the order queued, so that costs
/// within 0.8 to 1.6 % of each other are taken in no particular order; pushing and taking
/// cost O(1) where the 4-ary heap it replaced (strict order) was the largest part of the
/// simplifier's time, sifting millions of mostly stale entries. (One entry per vertex, its cheapest collapse,
/// was tried with the heap: no faster.)
struct QuadricSimplifier {
    /// A symmetric 4×4 matrix: a sum of area-weighted squared plane distances.
    struct Quadric {
        var a2 = 0.0, ab = 0.0, ac = 0.0, ad = 0.0, b2 = 0.0, bc = 0.0, bd = 0.0, c2 = 0.0, cd = 0.0, d2 = 0.0
        /// The summed area of the planes.
        var weight = 0.0

        init() {}

        /// The plane `n·x + d = 0` (unit `n`), weighted by `area`.
        init(normal n: SIMD3<Double>, d: Double, area: Double) {
            a2 = area * n.x * n.x; ab = area * n.x * n.y; ac = area * n.x * n.z; ad = area * n.x * d
            b2 = area * n.y * n.y; bc = area * n.y * n.z; bd = area * n.y * d
            c2 = area * n.z * n.z; cd = area * n.z * d; d2 = area * d * d
            weight = area
        }

        static func + (l: Quadric, r: Quadric) -> Quadric {
            var q = l
            q.a2 += r.a2; q.ab += r.ab; q.ac += r.ac; q.ad += r.ad; q.b2 += r.b2; q.bc += r.bc; q.bd += r.bd
            q.c2 += r.c2; q.cd += r.cd; q.d2 += r.d2; q.weight += r.weight
            return q
        }

        /// The summed weighted squared distance of `p` to the planes (never negative).
        func cost(_ p: SIMD3<Double>) -> Double {
            let x: Double = p.x, y: Double = p.y, z: Double = p.z
            let rowX: Double = a2 * x + 2 * (ab * y + ac * z + ad)
            let rowY: Double = b2 * y + 2 * (bc * z + bd)
            let rowZ: Double = c2 * z + 2 * cd
            let value: Double = x * rowX + y * rowY + z * rowZ + d2
            return max(0, value)
        }
    }

    /// One candidate collapse in the queue.
    struct Entry {
        var cost: Float
        var from: UInt32
        var to: UInt32
        /// `version[from] + version[to]` when queued: a change of either makes it stale.
        var stamp: UInt32
    }

    var positions: [SIMD3<Double>]
    var faces: [SIMD3<UInt32>]
    var faceAlive: [Bool]
    /// The triangles around each vertex (alive ones; dead ones are removed as they die).
    var around: [[UInt32]]
    var quadrics: [Quadric]
    /// Vertices that may move (see the type's comment).
    var free: [Bool]
    var vertexAlive: [Bool]
    var aliveFaces: Int
    /// The queue: entries by cost bucket (`bucket(_:)`), each bucket first in, first out
    /// (its entries before `heads` taken).
    var buckets = [[Entry]](repeating: [], count: QuadricSimplifier.bucketCount)
    var heads = [Int](repeating: 0, count: QuadricSimplifier.bucketCount)
    /// No entry is queued in a bucket below this one.
    var lowest = QuadricSimplifier.bucketCount
    /// Bumped when a vertex's quadric changes (it received a collapse).
    var version: [UInt32]
    /// The largest error of a collapse made, meters.
    var largestError = 0.0
    /// Each triangle's unit normal in the original mesh.
    var originalNormals: [SIMD3<Double>]
    /// The original vertices assigned to each triangle (each vertex to one).
    var assigned: [[UInt32]]
    /// Storage reused by every `check` (none allocated per candidate collapse): the new
    /// fan's triangles and corners, the original vertices' new triangles, two vertices'
    /// neighbours.
    var fanTriangles: [UInt32] = []
    var fanCorners: [(SIMD3<Double>, SIMD3<Double>, SIMD3<Double>)] = []
    var assignment: Assignment = []
    var neighboursA: [UInt32] = [], neighboursB: [UInt32] = []

    /// The least cosine between a moved triangle's normal and its original one.
    static let leastOriginalCosine = 0.5

    /// The least cosine between a moved triangle's normal before and after a collapse.
    static let leastTurnCosine = 0.2

    init(positions flat: [Float], faces flatFaces: [UInt32]) {
        let vertexCount = flat.count / 3
        var points: [SIMD3<Double>] = []
        points.reserveCapacity(vertexCount)
        for i in 0..<vertexCount {
            let o = 3 * i
            points.append(SIMD3<Double>(Double(flat[o]), Double(flat[o + 1]), Double(flat[o + 2])))
        }
        positions = points
        var triangles: [SIMD3<UInt32>] = []
        triangles.reserveCapacity(flatFaces.count / 3)
        for t in 0..<flatFaces.count / 3 {
            let o = 3 * t
            triangles.append(SIMD3<UInt32>(flatFaces[o], flatFaces[o + 1], flatFaces[o + 2]))
        }
        faces = triangles
        originalNormals = [SIMD3<Double>](repeating: .zero, count: triangles.count)
        assigned = [[UInt32]](repeating: [], count: triangles.count)
        faceAlive = [Bool](repeating: true, count: faces.count)
        aliveFaces = faces.count
        around = [[UInt32]](repeating: [], count: vertexCount)
        quadrics = [Quadric](repeating: Quadric(), count: vertexCount)
        vertexAlive = [Bool](repeating: true, count: vertexCount)
        version = [UInt32](repeating: 0, count: vertexCount)
        free = [Bool](repeating: false, count: vertexCount)
        for (t, f) in faces.enumerated() {
            for k in 0..<3 { around[Int(f[k])].append(UInt32(t)) }
            let p0 = positions[Int(f.x)], p1 = positions[Int(f.y)], p2 = positions[Int(f.z)]
            let n = Self.cross(p1 - p0, p2 - p0)
            let length = (n * n).sum().squareRoot()
            guard length > 0 else { continue }
            let unit = n / length
            originalNormals[t] = unit
            let q = Quadric(normal: unit, d: -(unit * p0).sum(), area: length / 2)
            for k in 0..<3 { quadrics[Int(f[k])] = quadrics[Int(f[k])] + q }
        }
        for v in 0..<vertexCount {
            free[v] = isClosedFan(UInt32(v))
            if let t = around[v].first { assigned[Int(t)].append(UInt32(v)) }
        }
    }

    static func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
    }

    /// The two other vertices of triangle `t`, in its turning order after `v`.
    func others(_ t: UInt32, of v: UInt32) -> (UInt32, UInt32) {
        let f = faces[Int(t)]
        if f.x == v { return (f.y, f.z) }
        if f.y == v { return (f.z, f.x) }
        return (f.x, f.y)
    }

    /// Whether `v`'s triangles form one closed fan: each opposite edge `(next, previous)`
    /// chains into one cycle through every triangle, each neighbour met exactly twice.
    func isClosedFan(_ v: UInt32) -> Bool {
        let list = around[Int(v)]
        guard list.count >= 3 else { return false }
        var from: [UInt32] = [], to: [UInt32] = []
        from.reserveCapacity(list.count); to.reserveCapacity(list.count)
        for t in list {
            let (b, c) = others(t, of: v)
            guard !from.contains(b) else { return false }
            from.append(b); to.append(c)
        }
        var current = from[0], steps = 0
        repeat {
            guard let k = from.firstIndex(of: current) else { return false }
            current = to[k]
            steps += 1
        } while current != from[0] && steps <= list.count
        return current == from[0] && steps == list.count
    }

    /// The distinct neighbours of `v`.
    func neighbours(_ v: UInt32) -> [UInt32] {
        var result: [UInt32] = []
        neighbours(v, into: &result)
        return result
    }

    /// The distinct neighbours of `v` into `result` (emptied first; its storage reused).
    func neighbours(_ v: UInt32, into result: inout [UInt32]) {
        result.removeAll(keepingCapacity: true)
        for t in around[Int(v)] {
            let (b, c) = others(t, of: v)
            if !result.contains(b) { result.append(b) }
            if !result.contains(c) { result.append(c) }
        }
    }

    /// The cost of collapsing `a` onto `b`.
    func cost(_ a: UInt32, _ b: UInt32) -> Double {
        (quadrics[Int(a)] + quadrics[Int(b)]).cost(positions[Int(b)])
    }

    /// The new place of the original vertices a collapse moves: vertex, triangle.
    typealias Assignment = [(vertex: UInt32, triangle: UInt32)]

    /// Whether `a` may collapse onto `b` now (the link condition, no triangle turned, the
    /// error within `maxError`): the largest distance of the original vertices to their
    /// new triangles (those left in `assignment`), or nil.
    mutating func check(_ a: UInt32, _ b: UInt32, maxError: Double?) -> Double? {
        guard isAllowed(a, b) else { return nil }
        // b's fan after the collapse: its triangles without a, and a's without b moved.
        var triangles = fanTriangles, corners = fanCorners, result = assignment
        fanTriangles = []; fanCorners = []; assignment = []
        defer { fanTriangles = triangles; fanCorners = corners; assignment = result }
        triangles.removeAll(keepingCapacity: true)
        corners.removeAll(keepingCapacity: true)
        result.removeAll(keepingCapacity: true)
        for t in around[Int(b)] {
            let f = faces[Int(t)]
            guard f.x != a && f.y != a && f.z != a else { continue }
            triangles.append(t)
            corners.append((positions[Int(f.x)], positions[Int(f.y)], positions[Int(f.z)]))
        }
        for t in around[Int(a)] {
            var f = faces[Int(t)]
            guard f.x != b && f.y != b && f.z != b else { continue }
            for k in 0..<3 where f[k] == a { f[k] = b }
            triangles.append(t)
            corners.append((positions[Int(f.x)], positions[Int(f.y)], positions[Int(f.z)]))
        }
        guard let first = triangles.first else { return nil }
        var worst = 0.0
        for t in around[Int(a)] {
            for v in assigned[Int(t)] {
                let q = positions[Int(v)]
                var best = Double.infinity, bestTriangle = first
                for (u, c) in zip(triangles, corners) {
                    let d = Self.squaredDistance(q, c.0, c.1, c.2)
                    if d < best { best = d; bestTriangle = u }
                }
                let distance = best.squareRoot()
                if let maxError, distance > maxError { return nil }
                worst = max(worst, distance)
                result.append((v, bestTriangle))
            }
        }
        return worst
    }

    /// The squared distance from `p` to the triangle `a b c` (Ericson, Real-Time Collision
    /// Detection, 5.1.5).
    static func squaredDistance(_ p: SIMD3<Double>, _ a: SIMD3<Double>, _ b: SIMD3<Double>, _ c: SIMD3<Double>) -> Double {
        func squared(_ v: SIMD3<Double>) -> Double { (v * v).sum() }
        let ab = b - a, ac = c - a, ap = p - a
        let d1 = (ab * ap).sum(), d2 = (ac * ap).sum()
        if d1 <= 0 && d2 <= 0 { return squared(ap) }
        let bp = p - b
        let d3 = (ab * bp).sum(), d4 = (ac * bp).sum()
        if d3 >= 0 && d4 <= d3 { return squared(bp) }
        let vc = d1 * d4 - d3 * d2
        if vc <= 0 && d1 >= 0 && d3 <= 0 { return squared(ap - ab * (d1 / (d1 - d3))) }
        let cp = p - c
        let d5 = (ab * cp).sum(), d6 = (ac * cp).sum()
        if d6 >= 0 && d5 <= d6 { return squared(cp) }
        let vb = d5 * d2 - d1 * d6
        if vb <= 0 && d2 >= 0 && d6 <= 0 { return squared(ap - ac * (d2 / (d2 - d6))) }
        let va = d3 * d6 - d5 * d4
        if va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0 {
            return squared(bp - (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6))))
        }
        let denominator = 1 / (va + vb + vc)
        let v = vb * denominator, w = vc * denominator
        return squared(ap - ab * v - ac * w)
    }

    /// Whether `a` may collapse onto `b` now: the link condition and no triangle turned.
    mutating func isAllowed(_ a: UInt32, _ b: UInt32) -> Bool {
        var opposite: (UInt32, UInt32) = (0, 0), count = 0
        for t in around[Int(a)] {
            let (x, y) = others(t, of: a)
            guard x == b || y == b else { continue }
            count += 1
            if count == 1 { opposite.0 = x == b ? y : x } else if count == 2 { opposite.1 = x == b ? y : x }
        }
        // An edge of a free vertex lies in exactly two triangles.
        guard count == 2, opposite.0 != opposite.1 else { return false }
        var aNeighbours = neighboursA, bNeighbours = neighboursB
        neighboursA = []; neighboursB = []
        defer { neighboursA = aNeighbours; neighboursB = bNeighbours }
        neighbours(a, into: &aNeighbours)
        neighbours(b, into: &bNeighbours)
        for v in aNeighbours where v != b && v != opposite.0 && v != opposite.1 && bNeighbours.contains(v) { return false }
        // Triangles that move (those of a without b) must keep their side and an area.
        let pa = positions[Int(a)], pb = positions[Int(b)]
        for t in around[Int(a)] {
            let (x, y) = others(t, of: a)
            guard x != b && y != b else { continue }
            let px = positions[Int(x)], py = positions[Int(y)]
            let before = Self.cross(px - pa, py - pa), after = Self.cross(px - pb, py - pb)
            let lb = (before * before).sum().squareRoot(), la = (after * after).sum().squareRoot()
            guard la > 0, lb > 0, (before * after).sum() > Self.leastTurnCosine * la * lb,
                  (originalNormals[Int(t)] * after).sum() > Self.leastOriginalCosine * la else { return false }
            // Nor may it land on a triangle b already has (two triangles closing a tetrahedron).
            for u in around[Int(b)] {
                let (p, q) = others(u, of: b)
                if (p == x && q == y) || (p == y && q == x) { return false }
            }
        }
        return true
    }

    /// Queues the collapse of `a` onto `b` at its current cost (when `a` may move).
    mutating func push(_ a: UInt32, _ b: UInt32) {
        guard free[Int(a)] else { return }
        let entry = Entry(cost: Float(cost(a, b)), from: a, to: b, stamp: version[Int(a)] &+ version[Int(b)])
        let bucket = Self.bucket(entry.cost)
        buckets[bucket].append(entry)
        lowest = min(lowest, bucket)
    }

    /// The bucket of a cost (never negative): the top 14 bits of its pattern after the
    /// sign, its exponent and 6 bits of its mantissa, so that the buckets are in the costs'
    /// order and each spans a 64th of an octave.
    static func bucket(_ cost: Float) -> Int { Int(cost.bitPattern >> 17) & (bucketCount - 1) }

    /// The number of buckets (the patterns of every non-negative `Float`, NaN and infinity included).
    static let bucketCount = 16_384

    /// The entry of the cheapest bucket queued (the first one queued there), or nil.
    mutating func pop() -> Entry? {
        while lowest < Self.bucketCount {
            let head = heads[lowest]
            if head < buckets[lowest].count {
                heads[lowest] = head + 1
                return buckets[lowest][head]
            }
            buckets[lowest].removeAll(keepingCapacity: true)
            heads[lowest] = 0
            lowest += 1
        }
        return nil
    }

    /// Whether a queued entry is still current (both vertices there, neither quadric changed since).
    func isCurrent(_ entry: Entry) -> Bool {
        vertexAlive[Int(entry.from)] && vertexAlive[Int(entry.to)] && entry.stamp == version[Int(entry.from)] &+ version[Int(entry.to)]
    }

    /// Collapses `a` onto `b`, the original vertices going to their triangles in `assignment`.
    mutating func collapse(_ a: UInt32, onto b: UInt32, assignment: Assignment) {
        for t in around[Int(a)] { assigned[Int(t)].removeAll(keepingCapacity: true) }
        for (v, t) in assignment { assigned[Int(t)].append(v) }
        for t in around[Int(a)] {
            let f = faces[Int(t)]
            if f.x == b || f.y == b || f.z == b {
                faceAlive[Int(t)] = false
                aliveFaces -= 1
                for k in 0..<3 where f[k] != a { around[Int(f[k])].removeAll { $0 == t } }
            } else {
                for k in 0..<3 where f[k] == a { faces[Int(t)][k] = b }
                around[Int(b)].append(t)
            }
        }
        around[Int(a)] = []
        vertexAlive[Int(a)] = false
        quadrics[Int(b)] = quadrics[Int(a)] + quadrics[Int(b)]
        version[Int(b)] &+= 1
    }

    /// Collapses until at most `target` triangles remain (0: as far as `maxError`
    /// allows), never beyond `maxError` meters (nil: no bound).
    mutating func run(target: Int, maxError: Double?) {
        var list: [UInt32] = []
        for a in 0..<UInt32(positions.count) where free[Int(a)] {
            neighbours(a, into: &list)
            for b in list { push(a, b) }
        }
        while aliveFaces > target, let entry = pop() {
            let a = entry.from, b = entry.to
            // A vertex gone, or a quadric changed since: a newer entry is queued.
            guard isCurrent(entry) else { continue }
            // Refused now; queued again if b's quadric changes.
            guard let error = check(a, b, maxError: maxError) else { continue }
            collapse(a, onto: b, assignment: assignment)
            largestError = max(largestError, error)
            neighbours(b, into: &list)
            for v in list {
                push(v, b)
                push(b, v)
            }
        }
    }

    /// The triangles left, three indices each.
    func remainingFaces() -> [UInt32] {
        var result: [UInt32] = []
        result.reserveCapacity(3 * aliveFaces)
        for (t, f) in faces.enumerated() where faceAlive[t] { result += [f.x, f.y, f.z] }
        return result
    }
}
