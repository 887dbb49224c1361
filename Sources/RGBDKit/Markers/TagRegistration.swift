/// Poses for many single captures in one world, from the tags they share: a small
/// least-squares pose graph over captures and tags.
///
/// The world is the frame of the origin tag (x right, y down, z into the tag, meters,
/// origin at its centre). Each clean tag seen in a capture (`TagPose.pose`, tag-to-camera)
/// is one measurement linking that capture's camera-to-world pose `C` and the tag's
/// tag-to-world pose `W`: `C⁻¹·W` should equal it. Tags seen by two or more captures link
/// captures; the origin tag is fixed at the identity. Started from a breadth-first walk
/// over the links, all unknown poses are solved together by Levenberg–Marquardt on the
/// measurements' rotation (as a rotation vector) and translation errors, each weighted by
/// the measurement's expected error at its distance (`translationSigma` and
/// `rotationSigma` per meter). A capture with no link to the origin tag is left out.
public struct TagRegistration: Sendable {
    /// The origin tag's ID.
    public var originTag: Int
    /// Camera-to-world pose per registered capture, by its index in the input.
    public var cameras: [Int: Pose]
    /// Tag-to-world pose per tag used.
    public var tags: [Int: Pose]
    /// Per registered capture, the tags that placed it and how well they agree.
    public var residuals: [Int: CaptureResidual]
    /// Captures left out, by index, with the reason.
    public var leftOut: [(index: Int, reason: String)]

    /// How well a capture's tags agree with the solution.
    public struct CaptureResidual: Sendable {
        /// The IDs of the tags used.
        public var tags: [Int]
        /// RMS over those tags of the distance between measured and solved tag positions, meters.
        public var translationRMS: Double
        /// RMS of the angle between measured and solved tag rotations, radians.
        public var rotationRMS: Double
    }

    /// Expected translation error of one tag measurement, meters per meter of distance.
    public static let translationSigma = 0.001
    /// Expected rotation error of one tag measurement, radians per meter of distance.
    public static let rotationSigma = 0.002

    /// Registers `captures` (each capture's tags, in input order). `originTag` picks the
    /// world's tag (default: the lowest ID seen by two or more captures, or by the one
    /// capture when there is one).
    ///
    /// - Throws: `RGBDError(.invalidArgument)` when the origin tag is not seen, or no tag
    ///   is shared.
    public static func solve(_ captures: [CaptureTags], originTag: Int? = nil) throws -> TagRegistration {
        // Measurements: clean, unambiguous tags per capture.
        var seen: [Int: [Int]] = [:]
        var measured: [[Int: Pose]] = []
        var distance: [[Int: Double]] = []
        for (i, capture) in captures.enumerated() {
            var m: [Int: Pose] = [:], d: [Int: Double] = [:]
            for tag in capture.tags where !tag.detection.duplicateID {
                m[tag.detection.id] = tag.pose
                d[tag.detection.id] = max(0.3, (tag.pose.translation * tag.pose.translation).sum().squareRoot())
                seen[tag.detection.id, default: []].append(i)
            }
            measured.append(m)
            distance.append(d)
        }
        let linking = Set(seen.filter { $0.value.count >= 2 }.keys)
        let origin: Int
        if let requested = originTag {
            guard seen[requested] != nil else {
                throw RGBDError(.invalidArgument, "the origin tag \(requested) is in none of the captures (seen: "
                                + (seen.keys.sorted().map(String.init).joined(separator: ", ")) + ")")
            }
            origin = requested
        } else if let lowest = linking.min() ?? (captures.count == 1 ? seen.keys.min() : nil) {
            origin = lowest
        } else {
            throw RGBDError(.invalidArgument, seen.isEmpty ? "no tags found in any capture"
                            : "no tag is seen by two captures: nothing links them")
        }
        let usable = linking.union([origin])

        // Breadth-first start.
        var cameras: [Int: Pose] = [:]
        var tags: [Int: Pose] = [origin: .identity]
        var queue = [origin]
        while let id = queue.first {
            queue.removeFirst()
            guard let w = tags[id] else { continue }
            for i in seen[id] ?? [] where cameras[i] == nil {
                guard let m = measured[i][id] else { continue }
                let c = w.composed(with: m.inverse)
                cameras[i] = c
                for (other, mo) in measured[i] where usable.contains(other) && tags[other] == nil {
                    tags[other] = c.composed(with: mo)
                    queue.append(other)
                }
            }
        }

        // Unknowns: every camera, every tag but the origin.
        let cameraOrder = cameras.keys.sorted(), tagOrder = tags.keys.filter { $0 != origin }.sorted()
        var slot: [String: Int] = [:]
        for (n, i) in cameraOrder.enumerated() { slot["c\(i)"] = 6 * n }
        for (n, id) in tagOrder.enumerated() { slot["t\(id)"] = 6 * (cameraOrder.count + n) }
        struct Edge { var camera: Int; var tag: Int; var measurement: Pose; var sigmaT: Double; var sigmaR: Double }
        var edges: [Edge] = []
        for i in cameraOrder {
            for (id, m) in measured[i] where tags[id] != nil {
                let z = distance[i][id] ?? 1
                edges.append(Edge(camera: i, tag: id, measurement: m, sigmaT: translationSigma * z, sigmaR: rotationSigma * z))
            }
        }
        func residual(_ e: Edge, _ c: Pose, _ w: Pose) -> [Double] {
            let error = e.measurement.inverse.composed(with: c.inverse.composed(with: w))
            let r = TagMath.rotationVector(error) / e.sigmaR, t = error.translation / e.sigmaT
            return [r.x, r.y, r.z, t.x, t.y, t.z]
        }
        func step(_ p: Pose, _ d: ArraySlice<Double>) -> Pose {
            let b = d.startIndex
            return TagMath.perturbed(p, rotation: SIMD3(d[b], d[b + 1], d[b + 2]), translation: SIMD3(d[b + 3], d[b + 4], d[b + 5]))
        }
        let unknowns = 6 * (cameraOrder.count + tagOrder.count)
        func cost() -> Double {
            edges.reduce(0) { sum, e in
                guard let c = cameras[e.camera], let w = tags[e.tag] else { return sum }
                return sum + residual(e, c, w).map { $0 * $0 }.reduce(0, +)
            }
        }
        var lambda = 1e-4
        var current = cost()
        for _ in 0..<50 where unknowns > 0 {
            var jtj = [Double](repeating: 0, count: unknowns * unknowns), jtr = [Double](repeating: 0, count: unknowns)
            for e in edges {
                guard let c = cameras[e.camera], let w = tags[e.tag] else { continue }
                let r = residual(e, c, w)
                var columns: [(Int, [Double])] = []
                let eps = 1e-7
                for k in 0..<6 {
                    var d = [Double](repeating: 0, count: 6)
                    d[k] = eps
                    if let s = slot["c\(e.camera)"] {
                        let rc = residual(e, step(c, d[0...]), w)
                        columns.append((s + k, zip(rc, r).map { ($0 - $1) / eps }))
                    }
                    if let s = slot["t\(e.tag)"] {
                        let rw = residual(e, c, step(w, d[0...]))
                        columns.append((s + k, zip(rw, r).map { ($0 - $1) / eps }))
                    }
                }
                for (a, ja) in columns {
                    jtr[a] -= zip(ja, r).map(*).reduce(0, +)
                    for (b, jb) in columns { jtj[a * unknowns + b] += zip(ja, jb).map(*).reduce(0, +) }
                }
            }
            var accepted = false
            for _ in 0..<8 {
                var damped = jtj
                for a in 0..<unknowns { damped[a * unknowns + a] += lambda * max(jtj[a * unknowns + a], 1e-9) }
                guard let d = TagMath.solve(damped, jtr) else { break }
                var tryCameras = cameras, tryTags = tags
                for i in cameraOrder { if let s = slot["c\(i)"], let c = cameras[i] { tryCameras[i] = step(c, d[s..<(s + 6)]) } }
                for id in tagOrder { if let s = slot["t\(id)"], let w = tags[id] { tryTags[id] = step(w, d[s..<(s + 6)]) } }
                let saved = (cameras, tags)
                (cameras, tags) = (tryCameras, tryTags)
                let candidate = cost()
                if candidate < current {
                    let done = current - candidate < 1e-10 * max(current, 1e-30)
                    current = candidate
                    lambda = max(lambda / 4, 1e-10)
                    accepted = true
                    if done { lambda = -1 }
                    break
                }
                (cameras, tags) = saved
                lambda *= 8
            }
            if !accepted || lambda < 0 { break }
        }

        var residuals: [Int: CaptureResidual] = [:]
        for i in cameraOrder {
            guard let c = cameras[i] else { continue }
            var t2 = 0.0, r2 = 0.0, used: [Int] = []
            for (id, m) in measured[i] {
                guard let w = tags[id] else { continue }
                let error = m.inverse.composed(with: c.inverse.composed(with: w))
                t2 += (error.translation * error.translation).sum()
                let a = TagMath.rotationVector(error)
                r2 += (a * a).sum()
                used.append(id)
            }
            let n = Double(max(1, used.count))
            residuals[i] = CaptureResidual(tags: used.sorted(), translationRMS: (t2 / n).squareRoot(), rotationRMS: (r2 / n).squareRoot())
        }
        var leftOut: [(index: Int, reason: String)] = []
        for i in captures.indices where cameras[i] == nil {
            leftOut.append((i, measured[i].isEmpty ? "no clean tag with depth under it"
                                : "shares no tag with the others (tags " + measured[i].keys.sorted().map(String.init).joined(separator: ", ") + ")"))
        }
        return TagRegistration(originTag: origin, cameras: cameras, tags: tags, residuals: residuals, leftOut: leftOut)
    }
}
