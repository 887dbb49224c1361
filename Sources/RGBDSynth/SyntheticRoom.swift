/// A room with known geometry for synthetic scans, in an ARKit-like world: gravity-aligned,
/// +y up, metres. A floor (`y = minCorner.y`), a ceiling, four walls and a few solid boxes
/// standing on the floor (each turned about the vertical by its yaw).
///
/// Everything is analytic: ray casting gives the exact surface, point and normal along any
/// ray, `color(of:)` a texture that is not periodic (hashed cells and planks, so frames can
/// be told apart), and `distanceToSurface(_:)` the exact distance of any point to the
/// nearest surface (ground truth for fused or merged clouds).
package struct SyntheticRoom: Equatable, Sendable {
    /// A solid box standing in the room.
    package struct Box: Equatable, Sendable {
        /// The centre of the box.
        package var center: SIMD3<Double>
        /// Half its extents along its own axes (x, y, z before the yaw).
        package var halfSize: SIMD3<Double>
        /// Its turn about the world's +y axis, radians (counter-clockwise seen from above).
        package var yaw: Double { didSet { turn = SIMD2(cosine(yaw), sine(yaw)) } }
        /// Its base colour (0…255).
        package var color: SIMD3<Double>
        /// `cos(yaw), sin(yaw)`.
        private var turn: SIMD2<Double>

        /// A box from its values.
        package init(center: SIMD3<Double>, halfSize: SIMD3<Double>, yaw: Double = 0, color: SIMD3<Double>) {
            self.center = center
            self.halfSize = halfSize
            self.yaw = yaw
            self.color = color
            turn = SIMD2(cosine(yaw), sine(yaw))
        }

        /// World → box frame (rotation about y by −yaw, then the centre at the origin).
        func toLocal(_ p: SIMD3<Double>) -> SIMD3<Double> { localDirection(p - center) }

        /// A world direction in the box frame.
        func localDirection(_ d: SIMD3<Double>) -> SIMD3<Double> {
            SIMD3(turn.x * d.x - turn.y * d.z, d.y, turn.y * d.x + turn.x * d.z)
        }

        /// A box-frame direction in the world.
        func worldDirection(_ d: SIMD3<Double>) -> SIMD3<Double> {
            SIMD3(turn.x * d.x + turn.y * d.z, d.y, -turn.y * d.x + turn.x * d.z)
        }
    }

    /// A solid ball (for tests of curved surfaces: a fused sphere has its radius).
    package struct Sphere: Equatable, Sendable {
        /// The centre.
        package var center: SIMD3<Double>
        /// The radius, metres.
        package var radius: Double
        /// Its colour (0…255).
        package var color: SIMD3<Double>

        /// A sphere from its values.
        package init(center: SIMD3<Double>, radius: Double, color: SIMD3<Double>) {
            self.center = center
            self.radius = radius
            self.color = color
        }
    }

    /// Which surface a ray hit.
    package enum Surface: Equatable, Sendable {
        /// The floor (`y = minCorner.y`).
        case floor
        /// The ceiling (`y = maxCorner.y`).
        case ceiling
        /// A wall: 0 = `x = minCorner.x`, 1 = `x = maxCorner.x`, 2 = `z = minCorner.z`,
        /// 3 = `z = maxCorner.z`.
        case wall(Int)
        /// Box `index` of `boxes`.
        case box(Int)
        /// Sphere `index` of `spheres`.
        case sphere(Int)
    }

    /// The nearest surface along a ray.
    package struct Hit: Sendable {
        /// The ray parameter: the hit is at `origin + t·direction`.
        package var t: Double
        /// The point hit (world).
        package var point: SIMD3<Double>
        /// The surface's unit normal there, facing the ray's origin side.
        package var normal: SIMD3<Double>
        /// The surface.
        package var surface: Surface
    }

    /// The room's inner corner with the smallest coordinates (the floor is at its y).
    package var minCorner: SIMD3<Double> = SIMD3(-2.5, 0, -2)
    /// The opposite inner corner (the ceiling is at its y).
    package var maxCorner: SIMD3<Double> = SIMD3(2.5, 3, 2)
    /// The boxes.
    package var boxes: [Box] = [
        Box(center: SIMD3(1.85, 0.45, -1.35), halfSize: SIMD3(0.4, 0.45, 0.35), yaw: 0, color: SIMD3(190, 70, 55)),
        Box(center: SIMD3(-1.9, 0.3, 1.25), halfSize: SIMD3(0.35, 0.3, 0.45), yaw: 0.35, color: SIMD3(60, 120, 180)),
        Box(center: SIMD3(0.3, 0.6, -1.55), halfSize: SIMD3(0.25, 0.6, 0.2), yaw: -0.5, color: SIMD3(80, 160, 90)),
    ]

    /// Balls in the room (none in the default room).
    package var spheres: [Sphere] = []

    /// A printed AprilTag (tag36h11) on a wall: black and white paper over the wall's
    /// texture, upright and readable from inside the room.
    package struct WallTag: Equatable, Sendable {
        /// The wall (`Surface.wall`'s index).
        package var wall: Int
        /// The black square's centre: along the wall (z on walls 0 and 1, x on walls 2
        /// and 3) and its height, metres.
        package var center: SIMD2<Double>
        /// The black square's edge, metres.
        package var size: Double
        /// The ID.
        package var id: Int
        /// The family's pattern, row by row (`cells × cells`, true = white), its white ring included.
        package let pattern: [Bool]
        /// Cells per side of `pattern`.
        package let cells: Int
        /// One cell's edge, metres.
        package let cellSize: Double

        /// Tag `id` on `wall` at `center` (along the wall, height), black square `size`
        /// meters; nil for an ID not in tag36h11.
        package init?(wall: Int, center: SIMD2<Double>, size: Double, id: Int) {
            guard let tag = SyntheticTag(family: .tag36h11, id: id, size: size, pose: .identity) else { return nil }
            self.wall = wall
            self.center = center
            self.size = size
            self.id = id
            pattern = tag.pattern
            cells = tag.cells
            cellSize = tag.cellSize
        }

        /// The paper's brightness (0…1) at a wall point (along, height), nil off the paper
        /// (the pattern and one more white cell around it).
        func brightness(along: Double, height: Double) -> Double? {
            let cell = cellSize
            // Seen from inside the room: the tag's x (right) runs along −z on wall 0, +z on
            // wall 1, +x on wall 2 and −x on wall 3; its y (down) is −height.
            let right = (wall == 0 || wall == 3) ? center.x - along : along - center.x
            let down = center.y - height
            let u = right / cell + Double(cells) / 2, v = down / cell + Double(cells) / 2
            guard u >= -1, v >= -1, u < Double(cells + 1), v < Double(cells + 1) else { return nil }
            let i = Int(u.rounded(.down)), j = Int(v.rounded(.down))
            let white = i < 0 || j < 0 || i >= cells || j >= cells || pattern[j * cells + i]
            return white ? 0.92 : 0.08
        }
    }

    /// Tags printed on the walls (none in the default room).
    package var wallTags: [WallTag] = []

    /// Five 20 cm tags (IDs 0 to 4) at 1.3 m on the three walls the default path faces
    /// (walls 0, 2 and 3), where its frames and the views between them see them.
    package static func taggedWalls() -> [WallTag] {
        [WallTag(wall: 3, center: SIMD2(-0.3, 1.3), size: 0.2, id: 0),
         WallTag(wall: 0, center: SIMD2(0.6, 1.3), size: 0.2, id: 1),
         WallTag(wall: 0, center: SIMD2(-0.8, 1.3), size: 0.2, id: 2),
         WallTag(wall: 2, center: SIMD2(-1.6, 1.3), size: 0.2, id: 3),
         WallTag(wall: 2, center: SIMD2(-0.5, 1.3), size: 0.2, id: 4)].compactMap { $0 }
    }

    /// The default room: 5 × 3 × 4 m (x × y × z), floor at y = 0, three boxes.
    package init() {}

    /// The nearest surface along `origin + t·direction`, `t > 0` (nil when the origin is
    /// outside the room and the ray misses everything).
    package func cast(origin o: SIMD3<Double>, direction d: SIMD3<Double>) -> Hit? {
        var bestT = Double.infinity
        var bestSurface = Surface.floor
        var bestNormal = SIMD3<Double>.zero
        // The room's inside: the ray leaves through the face ahead on each axis.
        for axis in 0..<3 where d[axis] != 0 {
            let bound = d[axis] > 0 ? maxCorner[axis] : minCorner[axis]
            let t = (bound - o[axis]) / d[axis]
            if t > 0 && t < bestT {
                bestT = t
                var n = SIMD3<Double>.zero
                n[axis] = d[axis] > 0 ? -1 : 1
                bestNormal = n
                switch axis {
                case 0: bestSurface = .wall(d.x > 0 ? 1 : 0)
                case 1: bestSurface = d.y > 0 ? .ceiling : .floor
                default: bestSurface = .wall(d.z > 0 ? 3 : 2)
                }
            }
        }
        for (index, box) in boxes.enumerated() {
            let lo = box.toLocal(o), ld = box.localDirection(d)
            var tNear = -Double.infinity, tFar = Double.infinity, nearAxis = 0
            var missed = false
            for axis in 0..<3 {
                if ld[axis] == 0 {
                    if abs(lo[axis]) > box.halfSize[axis] { missed = true; break }
                    continue
                }
                var t0 = (-box.halfSize[axis] - lo[axis]) / ld[axis]
                var t1 = (box.halfSize[axis] - lo[axis]) / ld[axis]
                if t0 > t1 { swap(&t0, &t1) }
                if t0 > tNear { tNear = t0; nearAxis = axis }
                tFar = min(tFar, t1)
            }
            if missed || tNear > tFar || tNear <= 0 || tNear >= bestT { continue }
            bestT = tNear
            var n = SIMD3<Double>.zero
            n[nearAxis] = ld[nearAxis] > 0 ? -1 : 1
            bestNormal = box.worldDirection(n)
            bestSurface = .box(index)
        }
        for (index, sphere) in spheres.enumerated() {
            // |o + t·d − c|² = r²: the smaller positive root.
            let oc = o - sphere.center
            let a = (d * d).sum(), b = (oc * d).sum(), c = (oc * oc).sum() - sphere.radius * sphere.radius
            let discriminant = b * b - a * c
            guard discriminant >= 0 else { continue }
            let t = (-b - discriminant.squareRoot()) / a
            guard t > 0, t < bestT else { continue }
            bestT = t
            bestNormal = normalized(o + d * t - sphere.center)
            bestSurface = .sphere(index)
        }
        guard bestT.isFinite else { return nil }
        return Hit(t: bestT, point: o + d * bestT, normal: bestNormal, surface: bestSurface)
    }

    /// The distance from `p` to the nearest surface of the room (walls, floor, ceiling, or a
    /// box's faces), exact, from either side of each surface.
    package func distanceToSurface(_ p: SIMD3<Double>) -> Double {
        let center = (minCorner + maxCorner) / 2, half = (maxCorner - minCorner) / 2
        var best = Self.boxSurfaceDistance(p - center, half: half)
        for box in boxes {
            best = min(best, Self.boxSurfaceDistance(box.toLocal(p), half: box.halfSize))
        }
        for sphere in spheres {
            let v = p - sphere.center
            best = min(best, abs((v * v).sum().squareRoot() - sphere.radius))
        }
        return best
    }

    /// The distance of a point (in the box's centred frame) to the surface of the box.
    static func boxSurfaceDistance(_ p: SIMD3<Double>, half: SIMD3<Double>) -> Double {
        let q = absolute(p) - half
        let outside = SIMD3(max(q.x, 0), max(q.y, 0), max(q.z, 0))
        let inside = min(max(q.x, max(q.y, q.z)), 0)
        return abs((outside * outside).sum().squareRoot() + inside)
    }

    /// The colour (0…255 per channel, RGB) of the surface at `hit`.
    package func color(of hit: Hit) -> SIMD3<Double> {
        let p = hit.point
        switch hit.surface {
        case .floor:
            // Planks 18 cm wide along z, of hashed lengths and tints, with grain and gaps.
            let plankWidth = 0.18
            let row = floorOf(p.x / plankWidth)
            let offset = Self.hash(Int(row), 11, 0) * 1.3
            let along = (p.z + offset) / 1.3
            let plank = floorOf(along)
            let tint = 0.8 + 0.35 * Self.hash(Int(row), Int(plank), 1)
            let grain = 0.92 + 0.08 * sine(p.z * 37 + 5 * Self.valueNoise(p.x * 9, p.z * 2, seed: 2))
            let across = p.x / plankWidth - row, lengthwise = along - plank
            let gap = across < 0.04 || lengthwise < 0.008 ? 0.45 : 1
            return SIMD3(150, 105, 70) * (tint * grain * gap)
        case .ceiling:
            let n = Self.valueNoise(p.x * 2.5, p.z * 2.5, seed: 3)
            return SIMD3(225, 225, 220) * (0.85 + 0.15 * n)
        case .wall(let index):
            let along = index < 2 ? p.z : p.x
            let base: SIMD3<Double>
            switch index {
            case 0: base = SIMD3(205, 190, 160)
            case 1: base = SIMD3(170, 190, 205)
            case 2: base = SIMD3(200, 175, 185)
            default: base = SIMD3(185, 205, 170)
            }
            let coarse = Self.valueNoise(along * 3, p.y * 3, seed: 10 + index)
            let fine = Self.valueNoise(along * 14, p.y * 14, seed: 20 + index)
            // Hashed dark tiles of 25 cm on a band of the wall (posters, frames).
            let cellU = floorOf(along / 0.25), cellV = floorOf(p.y / 0.25)
            let poster = p.y > 0.9 && p.y < 2.1 && Self.hash(Int(cellU), Int(cellV), 30 + index) > 0.7
            let shade = (0.6 + 0.3 * coarse + 0.15 * fine) * (poster ? 0.45 : 1)
            for tag in wallTags where tag.wall == index {
                if let paper = tag.brightness(along: along, height: p.y) { return SIMD3(repeating: 255 * paper) }
            }
            return base * shade
        case .box(let index):
            let box = boxes[index]
            let local = box.toLocal(p)
            let n = box.localDirection(hit.normal)
            // A 10 cm checker of hashed brightness on each face.
            let (a, b): (Double, Double) = abs(n.x) > 0.5 ? (local.y, local.z) : abs(n.y) > 0.5 ? (local.x, local.z) : (local.x, local.y)
            let faceSeed = 100 + index * 8 + (abs(n.x) > 0.5 ? 0 : abs(n.y) > 0.5 ? 2 : 4) + (n.x + n.y + n.z > 0 ? 1 : 0)
            let cell = Self.hash(Int(floorOf(a / 0.1)), Int(floorOf(b / 0.1)), faceSeed)
            let faceShade = abs(n.y) > 0.5 ? 1.1 : abs(n.x) > 0.5 ? 0.8 : 0.95
            return box.color * (faceShade * (0.7 + 0.45 * cell))
        case .sphere(let index):
            let sphere = spheres[index]
            let n = normalized(p - sphere.center)
            // Bands of latitude.
            return sphere.color * (0.75 + 0.25 * sine(n.y * 12))
        }
    }

    /// A deterministic hash of two integers and a seed to [0, 1).
    static func hash(_ i: Int, _ j: Int, _ seed: Int) -> Double {
        var h = UInt64(bitPattern: Int64(i)) &* 0x9E37_79B9_7F4A_7C15
        h ^= UInt64(bitPattern: Int64(j)) &* 0xC2B2_AE3D_27D4_EB4F
        h ^= UInt64(bitPattern: Int64(seed)) &* 0x1656_67B1_9E37_79F9
        h ^= h >> 31
        h &*= 0xBF58_476D_1CE4_E5B9
        h ^= h >> 29
        return Double(h >> 11) / Double(UInt64(1) << 53)
    }

    /// Smooth value noise in [0, 1): hashed values on the integer lattice, interpolated
    /// with a smoothstep.
    static func valueNoise(_ x: Double, _ y: Double, seed: Int) -> Double {
        let fx = floorOf(x), fy = floorOf(y)
        let i = Int(fx), j = Int(fy)
        var tx = x - fx, ty = y - fy
        tx = tx * tx * (3 - 2 * tx)
        ty = ty * ty * (3 - 2 * ty)
        let a = hash(i, j, seed), b = hash(i + 1, j, seed), c = hash(i, j + 1, seed), d = hash(i + 1, j + 1, seed)
        return (a + (b - a) * tx) + ((c + (d - c) * tx) - (a + (b - a) * tx)) * ty
    }
}
