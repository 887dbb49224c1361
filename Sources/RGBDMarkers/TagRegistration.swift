/// Poses for many single captures in one world, from the tags they share: a least-squares
/// adjustment of every tag's 3-D corner points over all captures at once.
///
/// The world is the frame of the origin tag (x right, y down, z into the tag, meters,
/// origin at its centre). The unknowns are each capture's camera-to-world pose `C` and each
/// linking tag's tag-to-world pose `W` (the origin tag is fixed at the identity). Each clean
/// tag seen in a capture gives its four corners in camera coordinates (the combined pose's
/// corners, `TagPose.cornersInCamera`), and the model says the corner `m` is at
/// `C⁻¹·W·m`; the differences are weighed by each corner's anisotropic error
/// (`TagPose.cornerSigmas`: across the line of sight from the corner's pixels, along it
/// from the depth plane) and minimised together by Levenberg–Marquardt, started from a
/// breadth-first walk over the tags' poses. So a capture that sees tags spread across a
/// wall is held by where they are, not by any one tag's orientation (about a degree
/// uncertain for a 16 cm tag at 3 m). Tags seen by two or more captures link them; a
/// capture with no link to the origin tag is left out.
///
/// Each capture's residual is measured on what the estimate did not use: for each of its
/// tags in turn, the whole adjustment is solved again without that tag in that capture,
/// and the capture's pose so found predicts the tag's corners (`CaptureResidual`).
package struct TagRegistration: Sendable {
    /// The origin tag's ID.
    package var originTag: Int
    /// Camera-to-world pose per registered capture, by its index in the input.
    package var cameras: [Int: Pose]
    /// Tag-to-world pose per tag used.
    package var tags: [Int: Pose]
    /// Per registered capture, the tags that placed it and how well they check it.
    package var residuals: [Int: CaptureResidual]
    /// Captures left out, by index, with the reason.
    package var leftOut: [(index: Int, reason: String)]

    /// How well a capture's pose is checked by its own tags.
    ///
    /// The leave-one-tag-out residual: for each tag `k` of the capture that can be left out
    /// (the capture keeps another tag, and the tag is still tied to the world by other
    /// captures), the adjustment is solved without the capture's view of `k`; the
    /// capture's pose so found places `k`'s corners, which are compared with where the
    /// capture measured them. Each prediction is made without the measurement it is
    /// compared with, so the number does not shrink with the fit; it includes the error of
    /// placing a capture by one tag fewer, so it tends to be larger than the error of the
    /// pose that used them all (for a capture with two tags, much larger: one tag alone
    /// places it). Nil when no tag can be left out (a capture placed by one tag).
    package struct CaptureResidual: Sendable {
        /// The IDs of the tags used.
        package var tags: [Int]
        /// RMS over the left-out tags' corners of the distance between predicted and
        /// measured corners, meters; nil when nothing could be left out.
        package var translationRMS: Double?
        /// RMS over the left-out tags of the angle by which the capture's rotation moved
        /// when the tag was left out, radians; nil when nothing could be left out.
        package var rotationRMS: Double?
        /// How many of its tags could be left out.
        package var checkedTags: Int
        /// RMS distance of the capture's measured corners from the solution's, meters: how
        /// well the solution fits what it was solved from (small by construction; not an error).
        package var fitRMS: Double
    }

    /// One tag seen in one capture: its corners in camera coordinates and their whitening.
    struct Observation {
        var camera: Int
        var tag: Int
        var model: [SIMD3<Double>]
        var corners: [SIMD3<Double>]
        /// Per corner, the rows of `Σ^(−1/2)` (symmetric).
        var whitening: [(SIMD3<Double>, SIMD3<Double>, SIMD3<Double>)]
    }

    /// Registers `captures` (each capture's tags, in input order). `originTag` picks the
    /// world's tag (default: the lowest ID seen by two or more captures, or by the one
    /// capture when there is one).
    ///
    /// - Throws: `RGBDError(.invalidArgument)` when the origin tag is not seen, or no tag
    ///   is shared.
    package static func solve(_ captures: [CaptureTags], originTag: Int? = nil) throws -> TagRegistration {
        // Measurements: clean, unambiguous tags per capture.
        var seen: [Int: [Int]] = [:]
        var measured: [[Int: TagPose]] = []
        for (i, capture) in captures.enumerated() {
            var m: [Int: TagPose] = [:]
            for tag in capture.tags where !tag.detection.duplicateID {
                m[tag.detection.id] = tag
                seen[tag.detection.id, default: []].append(i)
            }
            measured.append(m)
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

        // Breadth-first start from the tags' own poses.
        var cameras: [Int: Pose] = [:]
        var tags: [Int: Pose] = [origin: .identity]
        var queue = [origin]
        while let id = queue.first {
            queue.removeFirst()
            guard let w = tags[id] else { continue }
            for i in seen[id] ?? [] where cameras[i] == nil {
                guard let m = measured[i][id] else { continue }
                let c = w.composed(with: m.pose.inverse)
                cameras[i] = c
                for (other, mo) in measured[i] where usable.contains(other) && tags[other] == nil {
                    tags[other] = c.composed(with: mo.pose)
                    queue.append(other)
                }
            }
        }

        // The tags' model squares: the mean of the sizes they were measured with.
        var sizes: [Int: (sum: Double, count: Double)] = [:]
        for i in cameras.keys { for (id, m) in measured[i] where tags[id] != nil {
            sizes[id, default: (0, 0)].sum += m.size
            sizes[id, default: (0, 0)].count += 1
        } }
        var observations: [Observation] = []
        for i in cameras.keys.sorted() {
            for (id, m) in measured[i].sorted(by: { $0.key < $1.key }) where tags[id] != nil {
                let size = sizes[id].map { $0.sum / $0.count } ?? m.size
                observations.append(observation(m, camera: i, model: TagDetection.modelCorners(size: size)))
            }
        }
        adjust(cameras: &cameras, tags: &tags, observations, origin: origin)
        var residuals: [Int: CaptureResidual] = [:]
        for i in cameras.keys.sorted() {
            guard let c = cameras[i] else { continue }
            let own = observations.indices.filter { observations[$0].camera == i }
            var fit = 0.0
            for o in own { fit += squaredDistances(observations[o], c, tags[observations[o].tag] ?? .identity) }
            var t2 = 0.0, r2 = 0.0, checked = 0
            if own.count >= 2 {
                for o in own {
                    var rest = observations
                    rest.remove(at: o)
                    let left = observations[o]
                    guard connected(rest, origin: origin, camera: i, tag: left.tag) else { continue }
                    var c2 = cameras, w2 = tags
                    adjust(cameras: &c2, tags: &w2, rest, origin: origin)
                    guard let ci = c2[i], let wk = w2[left.tag] else { continue }
                    t2 += squaredDistances(left, ci, wk)
                    let a = TagMath.angleBetween(ci, c)
                    r2 += a * a
                    checked += 1
                }
            }
            residuals[i] = CaptureResidual(
                tags: own.map { observations[$0].tag },
                translationRMS: checked > 0 ? (t2 / Double(4 * checked)).squareRoot() : nil,
                rotationRMS: checked > 0 ? (r2 / Double(checked)).squareRoot() : nil,
                checkedTags: checked, fitRMS: (fit / Double(max(1, 4 * own.count))).squareRoot())
        }
        var leftOut: [(index: Int, reason: String)] = []
        for i in captures.indices where cameras[i] == nil {
            leftOut.append((i, measured[i].isEmpty ? "no clean tag with depth under it"
                                : "shares no tag with the others (tags " + measured[i].keys.sorted().map(String.init).joined(separator: ", ") + ")"))
        }
        return TagRegistration(originTag: origin, cameras: cameras, tags: tags, residuals: residuals, leftOut: leftOut)
    }

    /// A tag seen in capture `camera` as an observation of the corners `model`: its
    /// combined pose's corners, each whitened by its error across and along its line of sight.
    static func observation(_ tag: TagPose, camera: Int, model: [SIMD3<Double>]) -> Observation {
        let corners = tag.cornersInCamera
        let whitening = zip(corners, tag.cornerSigmas).map { p, sigma -> (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>) in
            let u = p / (p * p).sum().squareRoot()
            let across = 1 / max(sigma.x, 1e-6), along = 1 / max(sigma.y, 1e-6)
            // (1/σx)·(I − u·uᵀ) + (1/σy)·u·uᵀ
            func row(_ k: Int) -> SIMD3<Double> {
                var e = SIMD3<Double>.zero
                e[k] = 1
                return e * across + u * (u[k] * (along - across))
            }
            return (row(0), row(1), row(2))
        }
        return Observation(camera: camera, tag: tag.detection.id, model: model, corners: corners, whitening: whitening)
    }

    /// Sum over the observation's corners of the squared distance between measured and
    /// predicted (`C⁻¹·W·m`) corners, meters².
    static func squaredDistances(_ o: Observation, _ c: Pose, _ w: Pose) -> Double {
        let inverse = c.inverse
        var sum = 0.0
        for (m, q) in zip(o.model, o.corners) {
            let d = inverse.apply(w.apply(m)) - q
            sum += (d * d).sum()
        }
        return sum
    }

    /// True when capture `camera` and tag `tag` are both tied to the origin tag through
    /// `observations` (cameras and tags linked by what each camera sees).
    static func connected(_ observations: [Observation], origin: Int, camera: Int, tag: Int) -> Bool {
        var tagsReached: Set<Int> = [origin], camerasReached: Set<Int> = []
        var grew = true
        while grew {
            grew = false
            for o in observations {
                if tagsReached.contains(o.tag), !camerasReached.contains(o.camera) { camerasReached.insert(o.camera); grew = true }
                if camerasReached.contains(o.camera), !tagsReached.contains(o.tag) { tagsReached.insert(o.tag); grew = true }
            }
        }
        return camerasReached.contains(camera) && tagsReached.contains(tag)
    }

    /// Levenberg–Marquardt over the cameras and the tags other than `origin` that
    /// `observations` reach, on the whitened corner differences, from the poses given.
    /// Steps: a rotation vector applied on the left (in the world) and a translation added.
    static func adjust(cameras: inout [Int: Pose], tags: inout [Int: Pose], _ observations: [Observation],
                       origin: Int, iterations: Int = 50) {
        let cameraOrder = Set(observations.map(\.camera)).sorted()
        let tagOrder = Set(observations.map(\.tag)).subtracting([origin]).sorted()
        var slot: [Int: Int] = [:], tagSlot: [Int: Int] = [:]
        for (n, i) in cameraOrder.enumerated() { slot[i] = 6 * n }
        for (n, id) in tagOrder.enumerated() { tagSlot[id] = 6 * (cameraOrder.count + n) }
        let unknowns = 6 * (cameraOrder.count + tagOrder.count)
        guard unknowns > 0 else { return }

        func whiten(_ l: (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>), _ v: SIMD3<Double>) -> SIMD3<Double> {
            SIMD3((l.0 * v).sum(), (l.1 * v).sum(), (l.2 * v).sum())
        }
        func cost(_ cameras: [Int: Pose], _ tags: [Int: Pose]) -> Double {
            var sum = 0.0
            for o in observations {
                guard let c = cameras[o.camera], let w = tags[o.tag] else { continue }
                let inverse = c.inverse
                for k in 0..<o.model.count {
                    let r = whiten(o.whitening[k], inverse.apply(w.apply(o.model[k])) - o.corners[k])
                    sum += (r * r).sum()
                }
            }
            return sum
        }
        func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
            SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
        }
        let axes = [SIMD3<Double>(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1)]
        var lambda = 1e-4
        var current = cost(cameras, tags)
        for _ in 0..<iterations {
            var jtj = [Double](repeating: 0, count: unknowns * unknowns), jtr = [Double](repeating: 0, count: unknowns)
            for o in observations {
                guard let c = cameras[o.camera], let w = tags[o.tag] else { continue }
                let inverse = c.inverse
                let cs = slot[o.camera], ts = tagSlot[o.tag]
                for k in 0..<o.model.count {
                    let rotated = w.rotate(o.model[k]), x = rotated + w.translation
                    let l = o.whitening[k]
                    let r = whiten(l, inverse.apply(x) - o.corners[k])
                    // Columns of the whitened Jacobian: camera (ω, τ) then tag (ω, τ).
                    var columns: [(Int, SIMD3<Double>)] = []
                    columns.reserveCapacity(12)
                    if let cs {
                        let d = x - c.translation
                        for a in 0..<3 { columns.append((cs + a, whiten(l, inverse.rotate(cross(d, axes[a]))))) }
                        for a in 0..<3 { columns.append((cs + 3 + a, whiten(l, -inverse.rotate(axes[a])))) }
                    }
                    if let ts {
                        for a in 0..<3 { columns.append((ts + a, whiten(l, inverse.rotate(cross(axes[a], rotated))))) }
                        for a in 0..<3 { columns.append((ts + 3 + a, whiten(l, inverse.rotate(axes[a])))) }
                    }
                    for (a, ja) in columns {
                        jtr[a] -= (ja * r).sum()
                        for (b, jb) in columns { jtj[a * unknowns + b] += (ja * jb).sum() }
                    }
                }
            }
            var accepted = false, done = false
            for _ in 0..<10 {
                var damped = jtj
                for a in 0..<unknowns { damped[a * unknowns + a] += lambda * max(jtj[a * unknowns + a], 1e-9) }
                guard let d = SmallMatrix.solve(damped, jtr) else { lambda *= 8; continue }
                func step(_ p: Pose, _ s: Int) -> Pose {
                    TagMath.perturbed(p, rotation: SIMD3(d[s], d[s + 1], d[s + 2]), translation: SIMD3(d[s + 3], d[s + 4], d[s + 5]))
                }
                var tryCameras = cameras, tryTags = tags
                for (i, s) in slot { if let c = cameras[i] { tryCameras[i] = step(c, s) } }
                for (id, s) in tagSlot { if let w = tags[id] { tryTags[id] = step(w, s) } }
                let candidate = cost(tryCameras, tryTags)
                if candidate < current {
                    done = current - candidate < 1e-10 * max(current, 1e-30)
                    (cameras, tags, current) = (tryCameras, tryTags, candidate)
                    lambda = max(lambda / 4, 1e-10)
                    accepted = true
                    break
                }
                lambda *= 8
            }
            if !accepted || done { break }
        }
    }
}
