/// How a tag's pose is estimated: its printed size and the weights of the two kinds of
/// evidence (corners and depth).
package struct TagPoseOptions: Equatable, Sendable {
    /// Edge of the tag's black square, meters.
    package var size: Double
    /// The standard deviation assumed for a detected corner, pixels of the color image.
    package var cornerSigma: Double = 0.3
    /// The smallest standard deviation assumed for one depth sample, meters (the plane
    /// fit's own scatter is used when larger).
    package var minimumDepthSigma: Double = 0.0005
    /// The share of depth pixels under the tag that must hold a depth.
    package var minimumDepthCoverage: Double = 0.7
    /// The fewest depth pixels under the tag.
    package var minimumDepthSamples: Int = 12

    /// Options for tags whose black square has edge `size` meters.
    package init(size: Double) { self.size = size }
}

/// A tag's pose in a capture's camera frame, from its corners and the depth under it, with
/// the residuals that say how well they agree.
///
/// The **combined** pose is the weighted least-squares fit of both: the corners' distances
/// from their projections (weight 1/`cornerSigma`²) and the depth samples' distances from
/// the tag's plane (weight 1/σ², σ the plane fit's scatter), started from the depth
/// estimate. The depth plane fixes the tag's tilt, which corners alone leave ambiguous for
/// a near-frontal tag (the flip), and its distance; the corners fix its in-plane position
/// and turn.
package struct TagPose: Equatable, Sendable {
    /// The detection.
    package var detection: TagDetection
    /// Edge of the black square, meters (as given).
    package var size: Double
    /// Tag-to-camera, combined: `p_camera = R·p_tag + t` (tag frame x right, y down, z into
    /// the tag, origin at its centre).
    package var pose: Pose
    /// Tag-to-camera from the corners alone (perspective-n-point with the known size): the
    /// better of the two solutions a planar square allows.
    package var cornerPose: Pose
    /// Tag-to-camera from depth alone: the plane fitted to the depth under the tag, the
    /// corners' rays cut with it, and the tag's model fitted to those four points.
    package var depthPose: Pose
    /// RMS distance of the detected corners from the combined pose's projections, pixels.
    package var cornerRMS: Double
    /// RMS distance of the depth samples from the combined pose's plane, meters.
    package var depthRMS: Double
    /// Depth pixels used.
    package var depthSamples: Int
    /// The tag's edge measured in the depth (corners cut with the depth plane) over `size`:
    /// 1 when depth and size agree; k when the depth is k times too far.
    package var depthScale: Double
    /// Angle between the corners-alone and combined rotations, radians (large for a
    /// near-frontal tag whose corners alone chose the wrong tilt).
    package var cornerAngle: Double
    /// The expected error of each of the combined pose's four corners in camera
    /// coordinates (`cornersInCamera`), meters, in the detector's corner order: `x` across
    /// the line of sight (`cornerSigma` pixels at the corner's distance), `y` along it (the
    /// depth plane's uncertainty at the corner: the depth samples' scatter over their
    /// number, and the plane's tilt uncertainty times the corner's distance from the
    /// samples' centroid). `TagRegistration` weighs the corners with it.
    package var cornerSigmas: [SIMD2<Double>]

    /// The combined pose's corners in camera coordinates, meters, in the detector's order.
    package var cornersInCamera: [SIMD3<Double>] { TagDetection.modelCorners(size: size).map(pose.apply) }
}

/// Estimates tag poses from corners and depth (`TagPose`).
package enum TagPoseEstimator {
    /// The pose of `detection` in a rectified capture: color `colorIntrinsics`, depth map
    /// `depth` with `depthIntrinsics`; a reason instead when the depth under the tag is too
    /// sparse or the corners give no pose.
    package static func estimate(_ detection: TagDetection, colorIntrinsics k: Intrinsics, depth: DepthMap,
                                depthIntrinsics kd: Intrinsics, options: TagPoseOptions) -> Result<TagPose, RejectedTag> {
        func reject(_ reason: String) -> Result<TagPose, RejectedTag> { .failure(RejectedTag(id: detection.id, reason: reason)) }
        let rays = detection.corners.map { SIMD2(($0.x - k.cx) / k.fx, ($0.y - k.cy) / k.fy) }
        let model = TagDetection.modelCorners(size: options.size)
        guard let corner = cornerPose(rays: rays, model: model, intrinsics: k) else { return reject("corners give no pose") }

        let (points, inside) = depthSamples(rays: rays, depth: depth, intrinsics: kd)
        guard inside > 0, points.count >= options.minimumDepthSamples,
              Double(points.count) >= options.minimumDepthCoverage * Double(inside) else {
            return reject("no depth under the tag (\(points.count) of \(inside) pixels)")
        }
        guard let plane = TagMath.plane(points) else { return reject("no depth plane") }
        let cut = rays.map { r -> SIMD3<Double> in
            let d = SIMD3(r.x, r.y, 1)
            return d * ((plane.normal * plane.centroid).sum() / (plane.normal * d).sum())
        }
        guard cut.allSatisfy({ $0.z > 0 && $0.z.isFinite }),
              let fromDepth = TagMath.rigidFit(model: model, measured: cut) else { return reject("depth plane is edge-on") }
        var edges = 0.0
        for i in 0..<4 { let e = cut[i] - cut[(i + 1) % 4]; edges += (e * e).sum().squareRoot() }
        let scale = edges / 4 / options.size

        // The combined fit: corners in pixels over cornerSigma, the depth term as four
        // residuals whose squares sum to the squared plane distances of all samples.
        let depthSigma = max(options.minimumDepthSigma, plane.rms)
        let c = plane.centroid
        var scatter = [Double](repeating: 0, count: 9)
        for p in points {
            let q = p - c
            for i in 0..<3 { for j in 0..<3 { scatter[i * 3 + j] += q[i] * q[j] } }
        }
        let eigen = SmallMatrix.symmetricEigen(scatter, n: 3)
        let count = Double(points.count)
        let f = SIMD2(k.fx, k.fy)
        func residuals(_ pose: Pose) -> [Double] {
            var r = reprojection(pose, model: model, rays: rays, focal: f).map { $0 / options.cornerSigma }
            let n = SIMD3(pose.row0.z, pose.row1.z, pose.row2.z)
            for (value, v) in zip(eigen.values, eigen.vectors) {
                r.append(max(0, value).squareRoot() * (n * SIMD3(v[0], v[1], v[2])).sum() / depthSigma)
            }
            r.append(count.squareRoot() * (n * (c - pose.translation)).sum() / depthSigma)
            return r
        }
        let combined = refine(fromDepth, residuals: residuals)
        let rms = { (pose: Pose) -> Double in
            let r = reprojection(pose, model: model, rays: rays, focal: f)
            return ((r.map { $0 * $0 }.reduce(0, +)) / 4).squareRoot()
        }
        let n = SIMD3(combined.row0.z, combined.row1.z, combined.row2.z)
        var planeSum = 0.0
        for p in points { let d = (n * (p - combined.translation)).sum(); planeSum += d * d }
        // Each corner's expected error: across the line of sight from the corner's pixel
        // error; along it from the plane's: offset σ²/N, tilts σ²/λ (λ the samples'
        // second moments along the plane's two in-plane axes), seen along the ray.
        let focal = (k.fx + k.fy) / 2
        let sigmas = model.map { m -> SIMD2<Double> in
            let p = combined.apply(m), ray = p / (p * p).sum().squareRoot()
            let o = p - c
            var variance = depthSigma * depthSigma / count
            for (value, v) in zip(eigen.values.dropFirst(), eigen.vectors.dropFirst()) {
                let a = (o * SIMD3(v[0], v[1], v[2])).sum()
                variance += depthSigma * depthSigma * a * a / max(value, 1e-12)
            }
            let along = variance.squareRoot() / max(abs((ray * n).sum()), 0.2)
            return SIMD2(options.cornerSigma * p.z / focal, along)
        }
        return .success(TagPose(detection: detection, size: options.size, pose: combined, cornerPose: corner,
                                depthPose: fromDepth, cornerRMS: rms(combined), depthRMS: (planeSum / count).squareRoot(),
                                depthSamples: points.count, depthScale: scale,
                                cornerAngle: TagMath.angleBetween(corner, combined), cornerSigmas: sigmas))
    }

    /// Pixel differences (x, y per corner) between the projections of `model` under `pose`
    /// and the measured corner rays, scaled by the focal lengths.
    static func reprojection(_ pose: Pose, model: [SIMD3<Double>], rays: [SIMD2<Double>], focal: SIMD2<Double>) -> [Double] {
        var r: [Double] = []
        r.reserveCapacity(8)
        for (m, ray) in zip(model, rays) {
            let p = pose.apply(m)
            let d = (SIMD2(p.x, p.y) / p.z - ray) * focal
            r.append(d.x)
            r.append(d.y)
        }
        return r
    }

    /// The tag's pose from its corners alone: a homography to the corner rays, decomposed,
    /// then refined on the reprojection error from both tilts a planar square allows (the
    /// tag normal as found and mirrored about the line of sight); the one with the smaller
    /// error.
    static func cornerPose(rays: [SIMD2<Double>], model: [SIMD3<Double>], intrinsics k: Intrinsics) -> Pose? {
        var a: [Double] = [], b: [Double] = []
        for (m, r) in zip(model, rays) {
            a += [m.x, m.y, 1, 0, 0, 0, -r.x * m.x, -r.x * m.y]
            b.append(r.x)
            a += [0, 0, 0, m.x, m.y, 1, -r.y * m.x, -r.y * m.y]
            b.append(r.y)
        }
        guard let h = SmallMatrix.solve(a, b) else { return nil }
        let h1 = SIMD3(h[0], h[3], h[6]), h2 = SIMD3(h[1], h[4], h[7]), h3 = SIMD3(h[2], h[5], 1)
        func length(_ v: SIMD3<Double>) -> Double { (v * v).sum().squareRoot() }
        var lambda = 2 / (length(h1) + length(h2))
        if h3.z * lambda < 0 { lambda = -lambda }
        let r1 = h1 * lambda / length(h1 * lambda)
        var r2 = h2 * lambda - r1 * (r1 * h2 * lambda).sum()
        r2 /= length(r2)
        let r3 = SIMD3(r1.y * r2.z - r1.z * r2.y, r1.z * r2.x - r1.x * r2.z, r1.x * r2.y - r1.y * r2.x)
        let first = Pose(row0: SIMD3(r1.x, r2.x, r3.x), row1: SIMD3(r1.y, r2.y, r3.y), row2: SIMD3(r1.z, r2.z, r3.z),
                         translation: h3 * lambda)
        let f = SIMD2(k.fx, k.fy)
        let residuals = { (pose: Pose) in reprojection(pose, model: model, rays: rays, focal: f) }
        let a1 = refine(first, residuals: residuals)
        let a2 = refine(mirrored(a1), residuals: residuals)
        func cost(_ p: Pose) -> Double { residuals(p).map { $0 * $0 }.reduce(0, +) }
        let best = cost(a2) < cost(a1) ? a2 : a1
        return best.translation.z > 0 ? best : nil
    }

    /// The other tilt: the tag's normal mirrored about the line of sight to its centre, by
    /// the smallest rotation that does it (about the tag's centre).
    static func mirrored(_ pose: Pose) -> Pose {
        let t = pose.translation
        let v = t / (t * t).sum().squareRoot()
        let n = SIMD3(pose.row0.z, pose.row1.z, pose.row2.z)
        let m = v * (2 * (n * v).sum()) - n
        let axis = SIMD3(n.y * m.z - n.z * m.y, n.z * m.x - n.x * m.z, n.x * m.y - n.y * m.x)
        let s = (axis * axis).sum().squareRoot()
        guard s > 1e-12 else { return pose }
        let angle = TagMath.angle(sine: s, cosine: (n * m).sum())
        return TagMath.perturbed(pose, rotation: axis / s * angle, translation: .zero)
    }

    /// Levenberg–Marquardt on a pose (rotation vector on the left, translation), with
    /// forward-difference derivatives.
    static func refine(_ start: Pose, residuals: (Pose) -> [Double], iterations: Int = 30) -> Pose {
        var pose = start
        var r = residuals(pose)
        var cost = r.map { $0 * $0 }.reduce(0, +)
        var lambda = 1e-3
        for _ in 0..<iterations {
            let m = r.count
            var jacobian = [[Double]](repeating: [Double](repeating: 0, count: 6), count: m)
            for j in 0..<6 {
                let eps = j < 3 ? 1e-7 : 1e-7 * max(1, (pose.translation * pose.translation).sum().squareRoot())
                var step = [Double](repeating: 0, count: 6)
                step[j] = eps
                let moved = TagMath.perturbed(pose, rotation: SIMD3(step[0], step[1], step[2]),
                                              translation: SIMD3(step[3], step[4], step[5]))
                let rj = residuals(moved)
                for i in 0..<m { jacobian[i][j] = (rj[i] - r[i]) / eps }
            }
            var jtj = [Double](repeating: 0, count: 36), jtr = [Double](repeating: 0, count: 6)
            for i in 0..<m {
                for a in 0..<6 {
                    jtr[a] -= jacobian[i][a] * r[i]
                    for b in 0..<6 { jtj[a * 6 + b] += jacobian[i][a] * jacobian[i][b] }
                }
            }
            var improved = false
            for _ in 0..<8 {
                var damped = jtj
                for a in 0..<6 { damped[a * 6 + a] *= 1 + lambda }
                guard let d = SmallMatrix.solve(damped, jtr) else { break }
                let candidate = TagMath.perturbed(pose, rotation: SIMD3(d[0], d[1], d[2]), translation: SIMD3(d[3], d[4], d[5]))
                let rc = residuals(candidate)
                let cc = rc.map { $0 * $0 }.reduce(0, +)
                if cc < cost {
                    let done = cost - cc < 1e-12 * max(cost, 1e-30)
                    pose = candidate; r = rc; cost = cc; lambda = max(lambda / 4, 1e-9); improved = true
                    if done { return pose }
                    break
                }
                lambda *= 8
            }
            if !improved { break }
        }
        return pose
    }

    /// The depth points under the tag: depth pixels whose centres fall inside the tag's
    /// black square shrunk by 15 % toward its centre (so none sits on an edge), back-projected;
    /// and how many pixels that was.
    static func depthSamples(rays: [SIMD2<Double>], depth: DepthMap, intrinsics kd: Intrinsics)
        -> (points: [SIMD3<Double>], inside: Int) {
        let corners = rays.map { SIMD2($0.x * kd.fx + kd.cx, $0.y * kd.fy + kd.cy) }
        let centre = corners.reduce(.zero, +) / 4
        let quad = corners.map { centre + ($0 - centre) * 0.85 }
        let xs = quad.map(\.x), ys = quad.map(\.y)
        guard let minX = xs.min(), let maxX = xs.max(), let minY = ys.min(), let maxY = ys.max(),
              minX.isFinite, maxX.isFinite, minY.isFinite, maxY.isFinite else { return ([], 0) }
        let x0 = max(0, Int(minX.rounded(.up))), x1 = min(depth.width - 1, Int(maxX.rounded(.down)))
        let y0 = max(0, Int(minY.rounded(.up))), y1 = min(depth.height - 1, Int(maxY.rounded(.down)))
        guard x0 <= x1, y0 <= y1 else { return ([], 0) }
        func cross(_ a: SIMD2<Double>, _ b: SIMD2<Double>, _ p: SIMD2<Double>) -> Double {
            (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)
        }
        var points: [SIMD3<Double>] = [], inside = 0
        for y in y0...y1 {
            for x in x0...x1 {
                let p = SIMD2(Double(x), Double(y))
                let s = (0..<4).map { cross(quad[$0], quad[($0 + 1) % 4], p) }
                guard s.allSatisfy({ $0 >= 0 }) || s.allSatisfy({ $0 <= 0 }) else { continue }
                inside += 1
                let z = Double(depth[x, y])
                if z.isFinite, z > 0 { points.append(kd.backProject(u: p.x, v: p.y, depth: z)) }
            }
        }
        return (points, inside)
    }
}
