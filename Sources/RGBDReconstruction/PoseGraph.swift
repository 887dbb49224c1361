/// The second stage of `PoseRefinement`: keyframes, loop closures and a pose graph.
///
/// Frame-to-model tracking keeps each frame on the surface fused before it, but drift the
/// depth cannot see (a stretch facing one plain wall) stays in the model, and the frames
/// after it inherit it; where the camera comes back to what it saw long before, the two
/// disagree. Every `keyframeStep`-th frame is a node; consecutive nodes are joined by the
/// tracked relative motion (an odometry edge, its covariance the sum of the frames' in
/// between: small where the depth decided, the recorded motion's where it did not); a
/// node that sees again what a node at least `loopGap` frames earlier saw (cameras within
/// `loopDistance`, views within `loopAngle`) is tracked against a small model fused from
/// the frames around the earlier node (a loop edge, its information the depth's decided
/// directions). Levenberg–Marquardt over the nodes' poses (the first fixed: it anchors the
/// world) spreads the disagreement along the edges that are least sure, then every frame
/// takes the correction of its nodes, interpolated.
struct PoseGraph {
    struct Node {
        var pose: Pose
        /// The rotations' pivot (the node frame's point centroid, world).
        var pivot: SIMD3<Double>
    }

    struct Edge {
        var from: Int
        var to: Int
        /// `pose(from)⁻¹ ∘ pose(to)` as measured.
        var measurement: Pose
        /// 6×6 row-major, the residual's coordinates: translation at the `to` node's pivot
        /// (meters), rotation vector (radians), world axes.
        var information: [Double]
    }

    var nodes: [Node]
    var edges: [Edge]

    /// The residual of `edge` with the nodes' poses `poses`: the world motion between
    /// where the `to` node is and where the `from` node and the measurement put it.
    static func residual(_ edge: Edge, from: Pose, to: Pose, pivot: SIMD3<Double>) -> [Double] {
        let error = from.composed(with: edge.measurement).composed(with: to.inverse)
        let shift = error.apply(pivot) - pivot
        let turn = error.rotationVector
        return [shift.x, shift.y, shift.z, turn.x, turn.y, turn.z]
    }

    /// Levenberg–Marquardt over the nodes but the first.
    mutating func optimize(iterations: Int = 20) {
        let free = nodes.count - 1
        guard free > 0, !edges.isEmpty else { return }
        let n = 6 * free
        var damping = 1e-4
        func cost(_ nodes: [Node]) -> Double {
            var total = 0.0
            for edge in edges {
                let r = Self.residual(edge, from: nodes[edge.from].pose, to: nodes[edge.to].pose, pivot: nodes[edge.to].pivot)
                for i in 0..<6 { for j in 0..<6 { total += r[i] * edge.information[i * 6 + j] * r[j] } }
            }
            return total
        }
        var current = cost(nodes)
        for _ in 0..<iterations {
            var h = [Double](repeating: 0, count: n * n)
            var g = [Double](repeating: 0, count: n)
            let epsilon = 1e-6
            for edge in edges {
                let pivot = nodes[edge.to].pivot
                let r0 = Self.residual(edge, from: nodes[edge.from].pose, to: nodes[edge.to].pose, pivot: pivot)
                // Numeric Jacobians (6 × 12): a step of each node's pose on the world side.
                var columns: [(variable: Int, values: [Double])] = []
                for node in [edge.from, edge.to] where node > 0 {
                    for c in 0..<6 {
                        var step = [Double](repeating: 0, count: 6)
                        step[c] = epsilon
                        var from = nodes[edge.from].pose, to = nodes[edge.to].pose
                        if node == edge.from { from = FrameTracker.applying(step, to: from, pivot: nodes[node].pivot) }
                        if node == edge.to { to = FrameTracker.applying(step, to: to, pivot: nodes[node].pivot) }
                        let r1 = Self.residual(edge, from: from, to: to, pivot: pivot)
                        columns.append((6 * (node - 1) + c, (0..<6).map { (r1[$0] - r0[$0]) / epsilon }))
                    }
                }
                // Ω·J and Ω·r.
                let omegaR = (0..<6).map { i in (0..<6).reduce(0.0) { $0 + edge.information[i * 6 + $1] * r0[$1] } }
                let omegaJ = columns.map { column in
                    (0..<6).map { i in (0..<6).reduce(0.0) { $0 + edge.information[i * 6 + $1] * column.values[$1] } }
                }
                for column in columns {
                    g[column.variable] += (0..<6).reduce(0.0) { $0 + column.values[$1] * omegaR[$1] }
                    for (b, other) in columns.enumerated() {
                        h[column.variable * n + other.variable] += (0..<6).reduce(0.0) { $0 + column.values[$1] * omegaJ[b][$1] }
                    }
                }
            }
            var improved = false
            for _ in 0..<10 {
                var a = h
                for i in 0..<n { a[i * n + i] += damping * max(h[i * n + i], 1e-9) + 1e-12 }
                guard let step = SmallMatrix.solvePositiveDefinite(a, g.map { -$0 }) else { damping *= 10; continue }
                var trial = nodes
                for k in 1..<nodes.count {
                    trial[k].pose = FrameTracker.applying(Array(step[(6 * (k - 1))..<(6 * k)]), to: trial[k].pose,
                                                          pivot: trial[k].pivot)
                }
                let next = cost(trial)
                if next < current {
                    nodes = trial
                    let gain = current - next
                    current = next
                    damping = max(damping / 10, 1e-9)
                    improved = gain > 1e-9 * max(1, current)
                    break
                }
                damping *= 10
            }
            if !improved { break }
        }
    }

    /// The inverse of a symmetric positive semi-definite 6×6 matrix on its range, with
    /// `floor` added to every eigenvalue first (eigen decomposition).
    static func inverse(_ m: [Double], floor: Double = 0) -> [Double] {
        let (values, vectors) = SmallMatrix.symmetricEigen(m, n: 6)
        var result = [Double](repeating: 0, count: 36)
        for i in 0..<6 {
            for j in 0..<6 {
                var sum = 0.0
                for k in 0..<6 where values[k] + floor > 0 {
                    sum += vectors[k][i] * vectors[k][j] / (values[k] + floor)
                }
                result[i * 6 + j] = sum
            }
        }
        return result
    }

    /// The pose moved part of the way (`fraction`, 0…1) along the rigid motion `motion`:
    /// the rotation vector and the translation scaled.
    static func partial(_ motion: Pose, _ fraction: Double) -> Pose {
        let turn = Pose(rotationVector: motion.rotationVector * fraction)
        return Pose(row0: turn.row0, row1: turn.row1, row2: turn.row2, translation: motion.translation * fraction)
    }
}
