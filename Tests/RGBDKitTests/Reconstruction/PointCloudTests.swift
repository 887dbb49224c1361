import Testing
@testable import RGBDKit
import RGBDSynth

/// Back-projection against the synthetic scene's ground truth.
@Suite struct PointCloudTests {
    /// The small scene, rectified (no JPEG, no noise).
    static let rectified: RectifiedCapture = {
        let scene = Scenes.small
        let rectifier = Rectifier()
        return RectifiedCapture(
            stem: "small", source: "memory",
            color: rectifier.rectify(scene.color, distortion: scene.colorCalibration.distortion),
            depth: rectifier.rectify(scene.depth, distortion: scene.depthCalibration.distortion),
            colorIntrinsics: scene.colorCalibration.intrinsics, depthIntrinsics: scene.depthCalibration.intrinsics)
    }()

    static func points(_ options: PointCloudOptions = PointCloudOptions()) -> [PointCloud.Point] {
        var out: [PointCloud.Point] = []
        PointCloud(rectified, options: options).forEachPoint { out.append($0) }
        return out
    }

    /// Distance from a camera-frame point to the nearest surface of the scene.
    static func distanceToScene(_ p: SIMD3<Float>, _ scene: SyntheticScene) -> Double {
        let q = SIMD3<Double>(Double(p.x), Double(p.y), Double(p.z))
        var best = abs(q.z - scene.wallZ)
        if q.z <= scene.wallZ + 0.01 { best = min(best, abs(q.y - scene.floorY)) }
        // Distance to the box's surface (outside: to the box; inside: to the nearest face).
        let lo = scene.boxMin, hi = scene.boxMax
        let outside = SIMD3(max(lo.x - q.x, 0, q.x - hi.x), max(lo.y - q.y, 0, q.y - hi.y), max(lo.z - q.z, 0, q.z - hi.z))
        let inside = min(q.x - lo.x, hi.x - q.x, q.y - lo.y, hi.y - q.y, q.z - lo.z, hi.z - q.z)
        let toBox = (outside * outside).sum() > 0 ? (outside * outside).sum().squareRoot() : inside
        return min(best, toBox)
    }

    @Test func everyPointLiesOnASceneSurface() {
        let scene = Scenes.small.synthetic.scene
        for keepEdges in [false, true] {
            var options = PointCloudOptions()
            options.dropEdges = !keepEdges
            let points = Self.points(options)
            #expect(points.count > 30000)
            // A point between the box (z ≤ 2 m) and the wall (3 m) would be tens of
            // centimeters from every surface. At grazing angles a point can sit a few
            // millimeters off its face (its depth is that of a neighbor up to half a
            // pixel away, never a blend across the edge): allow that for a few.
            let distances = points.map { Self.distanceToScene($0.position, scene) }
            let worst = distances.max() ?? 0
            let off = distances.filter { $0 > 0.005 }.count
            #expect(worst <= 0.02, "keepEdges \(keepEdges): a point \(worst) m from every surface")
            #expect(Double(off) <= 0.005 * Double(points.count), "keepEdges \(keepEdges): \(off) points beyond 5 mm")
        }
    }

    @Test func wallPointsAreOnThePlane() {
        let scene = Scenes.small.synthetic.scene
        // Points seen on the wall: above the floor line, beside the box.
        let wall = Self.points().filter { abs($0.position.z - Float(scene.wallZ)) < 0.2 && $0.position.y < 1.15 }
        #expect(wall.count > 20000)
        let squares = wall.map { Double($0.position.z) - scene.wallZ }.map { $0 * $0 }
        let rms = (squares.reduce(0, +) / Double(squares.count)).squareRoot()
        #expect(rms <= 0.002, "wall RMS \(rms) m")
    }

    /// Distances between points of the cloud equal distances between the scene points
    /// seen at the same rectified pixels (ray through the true camera, hit the scene).
    @Test func knownDistancesComeOutRight() {
        let capture = Self.rectified
        let k = capture.depthIntrinsics
        let scene = Scenes.small.synthetic
        func truth(_ u: Int, _ v: Int) -> SIMD3<Double> {
            let z = scene.trueDepth(u: Double(u), v: Double(v), intrinsics: k)
            return k.backProject(u: Double(u), v: Double(v), depth: z)
        }
        func measured(_ u: Int, _ v: Int) -> SIMD3<Double> {
            k.backProject(u: Double(u), v: Double(v), depth: Double(capture.depth[u, v]))
        }
        // Wall to wall across the image, wall to box front, box to floor.
        let pairs = [((20, 20), (236, 30)), ((128, 40), (30, 150)), ((40, 140), (200, 180)), ((10, 100), (250, 100))]
        for ((u0, v0), (u1, v1)) in pairs {
            let t = truth(u0, v0) - truth(u1, v1), m = measured(u0, v0) - measured(u1, v1)
            let trueDistance = (t * t).sum().squareRoot(), distance = (m * m).sum().squareRoot()
            #expect(abs(distance - trueDistance) <= 0.003, "(\(u0),\(v0))–(\(u1),\(v1)): \(distance) vs \(trueDistance)")
            #expect(trueDistance > 0.5)
        }
    }

    @Test func edgesAreDroppedByDefault() {
        var keep = PointCloudOptions()
        keep.dropEdges = false
        let all = PointCloud(Self.rectified, options: keep).count
        let filtered = PointCloud(Self.rectified).count
        #expect(filtered < all)
        #expect(all - filtered > 100)  // the box's silhouette and the floor line
        #expect(Double(all - filtered) < 0.1 * Double(all))
    }

    @Test func optionsFilterAndTransform() {
        let base = Self.points()
        var opengl = PointCloudOptions()
        opengl.axes = .opengl
        let flipped = Self.points(opengl)
        #expect(flipped.count == base.count)
        #expect(zip(base, flipped).allSatisfy { $0.position * SIMD3(1, -1, -1) == $1.position && $0.color == $1.color })

        var range = PointCloudOptions()
        range.minDepth = 2
        range.maxDepth = 2.9
        let ranged = Self.points(range)
        #expect(!ranged.isEmpty && ranged.allSatisfy { $0.position.z >= 2 && $0.position.z <= 2.9 })

        var strided = PointCloudOptions()
        strided.stride = 2
        let n = Self.points(strided).count
        #expect(abs(Double(n) / Double(base.count) - 0.25) < 0.02)
    }

    @Test func normalsFaceTheCamera() {
        var options = PointCloudOptions()
        options.normals = true
        let scene = Scenes.small.synthetic.scene
        let points = Self.points(options)
        let wall = points.filter { abs($0.position.z - Float(scene.wallZ)) < 0.01 && $0.position.y < 1.15 }
        let floor = points.filter { abs($0.position.y - Float(scene.floorY)) < 0.01 && $0.position.z < 2.9 }
        #expect(wall.count > 1000 && floor.count > 100)
        #expect(wall.allSatisfy { ($0.normal * SIMD3(0, 0, -1)).sum() > 0.999 })
        #expect(floor.allSatisfy { ($0.normal * SIMD3(0, -1, 0)).sum() > 0.99 })
        #expect(points.allSatisfy { ($0.normal * $0.position).sum() <= 0 })
    }

    /// Rectifying and averaging band by band gives the same colors as averaging the
    /// full rectified image.
    @Test func fusedRectifyAndAverageEqualsTwoSteps() {
        let scene = Scenes.small
        let distortion = scene.colorCalibration.distortion
        let twoSteps = Rectifier().rectify(scene.color, distortion: distortion).areaAverage(toWidth: 256, height: 192)
        let fused = Rectifier().rectifyAreaAveraged(scene.color, distortion: distortion, toWidth: 256, height: 192)
        #expect(fused.samples == twoSteps.samples)
        let serial = Rectifier(scheduler: .serial).rectifyAreaAveraged(scene.color, distortion: distortion, toWidth: 100, height: 75)
        #expect(serial.samples == Rectifier().rectify(scene.color, distortion: distortion).areaAverage(toWidth: 100, height: 75).samples)
    }

    @Test func colorsAverageTheFootprint() {
        // A constant image averages to itself; a 2×2 checker of 1-pixel cells to its mean.
        let flat = ColorImage(width: 21, height: 14, channels: 3, repeating: 77)
        #expect(flat.areaAverage(toWidth: 4, height: 3).samples.allSatisfy { $0 == 77 })
        var checker = ColorImage(width: 40, height: 40, channels: 3, repeating: 0)
        for y in 0..<40 { for x in 0..<40 where (x + y) % 2 == 0 { for c in 0..<3 { checker[x, y, c] = 200 } } }
        let small = checker.areaAverage(toWidth: 10, height: 10)
        // Interior footprints are 4×4 pixels: exactly half of them are 200.
        #expect(small[5, 5, 0] == 100)
        // Footprints are contiguous and disjoint, centered on u·s: the first is cut at
        // the left edge, and the last pixels (beyond the last half-footprint) are unused.
        let columns = ColorImage.footprints(count: 768, over: 4032)
        #expect(columns.first?.0 == 0 && columns.first?.1 == 3 && columns.last?.1 == 4030)
        #expect(zip(columns, columns.dropFirst()).allSatisfy { $0.1 == $1.0 })
    }

    /// A color image smaller than the depth map (along one axis or both): each depth
    /// pixel takes the color pixel nearest to its position `(u·wc/wd, v·hc/hd)`
    /// (docs/outputs.md), ties to the larger index; the fused kernel agrees bit for bit.
    /// Once a precondition trap ("area averaging reduces the size").
    @Test func colorSmallerThanTheDepthMapTakesTheNearestPixel() {
        // Every pixel of the 8×6 source is distinct: red = x, green = y, blue = 100 + x + 8y.
        var source = ColorImage(width: 8, height: 6, channels: 3, repeating: 0)
        for y in 0..<6 { for x in 0..<8 { source[x, y, 0] = UInt8(x); source[x, y, 1] = UInt8(y); source[x, y, 2] = UInt8(100 + x + 8 * y) } }
        // Nearest source index to u·s by hand (s = fine/count, pixel centers at integers).
        func nearest(_ k: Int, _ fine: Int, _ count: Int) -> Int {
            let position = Double(k) * Double(fine) / Double(count)
            let below = Int(position.rounded(.down))
            return min(fine - 1, position - Double(below) >= 0.5 ? below + 1 : below)
        }
        #expect(nearest(2, 8, 32) == 1 && nearest(1, 8, 32) == 0 && nearest(31, 8, 32) == 7 && nearest(3, 6, 24) == 1)
        for (width, height) in [(32, 24), (8000 / 250, 6), (8, 24), (33, 7), (3, 24)] {
            let out = source.areaAverage(toWidth: width, height: height)
            #expect(out.width == width && out.height == height)
            for v in 0..<height {
                for u in 0..<width {
                    // Along an axis where the grid is coarser, the footprint average of
                    // distinct values; the nearest pixel is checked on the finer axes.
                    if width >= 8 { #expect(out[u, v, 0] == UInt8(nearest(u, 8, width)), "\(width)×\(height) (\(u), \(v))") }
                    if height >= 6 { #expect(out[u, v, 1] == UInt8(nearest(v, 6, height)), "\(width)×\(height) (\(u), \(v))") }
                    if width >= 8 && height >= 6 {
                        #expect(out[u, v, 2] == UInt8(100 + nearest(u, 8, width) + 8 * nearest(v, 6, height)))
                    }
                }
            }
        }
        // 3 columns over 8: the middle footprint holds the centers in [1.33, 4) = 2, 3.
        #expect(source.areaAverage(toWidth: 3, height: 24)[1, 0, 0] == 3)  // (2 + 3) / 2 rounded half up
        // The fused kernel (what `rgbd cloud` runs) equals rectifying then averaging.
        let calibration = SyntheticCalibration.iPhone.scaled(toWidth: 8, height: 6)
        for (width, height) in [(32, 24), (8, 24), (3, 24)] {
            for scheduler in [RowScheduler.serial, .parallel] {
                let fused = Rectifier(scheduler: scheduler).rectifyAreaAveraged(
                    source, distortion: calibration.distortion, toWidth: width, height: height)
                let twoSteps = Rectifier().rectify(source, distortion: calibration.distortion)
                    .areaAverage(toWidth: width, height: height)
                #expect(fused.samples == twoSteps.samples)
            }
        }
        // Empty grids or images give empty or black results instead of a trap.
        #expect(source.areaAverage(toWidth: 0, height: 5).samples.isEmpty)
        #expect(ColorImage(width: 0, height: 0, channels: 3, repeating: 9).areaAverage(toWidth: 2, height: 2).samples == [UInt8](repeating: 0, count: 12))
    }

    @Test func plyFilesHaveTheDeclaredLayout() throws {
        let directory = try TemporaryDirectory()
        var options = PointCloudOptions()
        options.normals = true
        let path = Path.join(directory.path, "c.ply")
        let count = try Self.rectified.writeCloud(to: path, options: options)
        let bytes = try FileSystem.readFile(path)
        let marker = Array("end_header\n".utf8)
        let headerEnd = try #require((0...(bytes.count - marker.count)).first { Array(bytes[$0..<($0 + marker.count)]) == marker })
        let header = String(decoding: bytes[..<headerEnd], as: UTF8.self)
        #expect(header.hasPrefix("ply\nformat binary_little_endian 1.0\n"))
        #expect(header.contains("element vertex \(count)\n"))
        #expect(header.contains("comment units meters"))
        #expect(bytes.count - headerEnd - marker.count == count * 27)
        // The first point read back equals the first point produced.
        var first: PointCloud.Point?
        PointCloud(Self.rectified, options: options).forEachPoint { if first == nil { first = $0 } }
        let x = bytes[(headerEnd + marker.count)...].prefix(4).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        #expect(Float(bitPattern: UInt32(littleEndian: x)) == first?.position.x)
    }
}
