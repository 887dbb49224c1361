import Foundation
import Testing
@testable import RGBDReconstruction
@testable import RGBDKit
import RGBDSynth

/// TSDF fusion and marching cubes (`TSDFVolume`, `SceneFusion`), checked against analytic
/// zero sets (sphere, plane, cube corner) and the synthetic generator's exact room: the
/// mesh lies on the true surfaces, walls are planar, a sphere has its radius, colors are
/// the texture's, flying pixels make no surface, and the parallel result is the serial
/// one bit for bit.
@Suite struct FusionTests {
    // MARK: Helpers

    /// A volume whose voxels within `trunc` of the zero set of `sdf` (inside `lo…hi`) hold
    /// the truncated signed distance, as integration of exact views would leave them.
    static func volume(voxel: Float, trunc: Float, lo: SIMD3<Double>, hi: SIMD3<Double>,
                       _ sdf: (SIMD3<Double>) -> Double) -> TSDFVolume {
        var volume = TSDFVolume(voxel: voxel, trunc: trunc, memoryBudget: 1 << 30)
        let v = Double(voxel)
        let bLo = SIMD3<Int32>((lo / v / 8).rounded(.down)), bHi = SIMD3<Int32>((hi / v / 8).rounded(.down))
        for bz in bLo.z...bHi.z {
            for by in bLo.y...bHi.y {
                for bx in bLo.x...bHi.x {
                    let c = SIMD3(bx, by, bz)
                    // Only blocks near the surface (as integration would touch).
                    let centre = (SIMD3<Double>(c) * 8 + 3.5) * v
                    guard abs(sdf(centre)) < Double(trunc) + 8 * v, let b = volume.addBlock(c) else { continue }
                    let voxels = volume.voxels(ofBlock: b)
                    for z in 0..<8 {
                        for y in 0..<8 {
                            for x in 0..<8 {
                                let p = (SIMD3<Double>(c) * 8 + SIMD3(Double(x), Double(y), Double(z))) * v
                                let d = sdf(p)
                                guard d > -Double(trunc) else { continue }
                                let slot = voxels + (z * 8 + y) * 8 + x
                                slot.pointee.tsdf = Int16((min(1, d / Double(trunc)) * 32_767).rounded())
                                slot.pointee.weight = 256
                                slot.pointee.red = 200; slot.pointee.green = 100; slot.pointee.blue = 50; slot.pointee.colorWeight = 16
                            }
                        }
                    }
                }
            }
        }
        return volume
    }

    static func vertex(_ mesh: TriangleMesh, _ i: Int) -> SIMD3<Double> {
        SIMD3(Double(mesh.positions[3 * i]), Double(mesh.positions[3 * i + 1]), Double(mesh.positions[3 * i + 2]))
    }

    static func normal(_ mesh: TriangleMesh, _ i: Int) -> SIMD3<Double> {
        SIMD3(Double(mesh.normals[3 * i]), Double(mesh.normals[3 * i + 1]), Double(mesh.normals[3 * i + 2]))
    }

    static func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
    }

    /// Each directed edge of the mesh, counted: in a closed, consistently oriented mesh
    /// every edge appears once in each direction.
    static func directedEdges(_ mesh: TriangleMesh) -> [SIMD2<UInt32>: Int] {
        var edges: [SIMD2<UInt32>: Int] = [:]
        for t in 0..<mesh.faceCount {
            let f = [mesh.faces[3 * t], mesh.faces[3 * t + 1], mesh.faces[3 * t + 2]]
            for k in 0..<3 { edges[SIMD2(f[k], f[(k + 1) % 3]), default: 0] += 1 }
        }
        return edges
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
    }

    static func quantile(_ values: [Double], _ q: Double) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]
    }

    // MARK: Marching cubes on analytic fields

    @Test func tableCutsOnlyEdgesThatChangeSign() {
        let edges = MarchingCubesTable.edges
        #expect(edges.count == 12)
        #expect(MarchingCubesTable.triangles[0].isEmpty && MarchingCubesTable.triangles[255].isEmpty)
        for configuration in 1..<255 {
            let inside = { (c: Int) in configuration & (1 << c) != 0 }
            let crossing = Set((0..<12).filter { inside(edges[$0].0) != inside(edges[$0].1) })
            let used = Set(MarchingCubesTable.triangles[configuration].map(Int.init))
            #expect(used == crossing, "configuration \(configuration)")
            #expect(MarchingCubesTable.triangles[configuration].count % 3 == 0)
        }
    }

    @Test func sphereIsClosedOnItsRadiusWithRadialNormals() {
        let centre = SIMD3(0.013, -0.021, 0.034), radius = 0.23
        let sdf = { (p: SIMD3<Double>) in ((p - centre) * (p - centre)).sum().squareRoot() - radius }
        let volume = Self.volume(voxel: 0.01, trunc: 0.04, lo: centre - 0.3, hi: centre + 0.3, sdf)
        let mesh = volume.extractMesh()
        #expect(mesh.vertexCount > 5000)
        var worst = 0.0, worstNormal = 1.0
        for i in 0..<mesh.vertexCount {
            let p = Self.vertex(mesh, i)
            worst = max(worst, abs(sdf(p)))
            let radial = (p - centre) / ((p - centre) * (p - centre)).sum().squareRoot()
            worstNormal = min(worstNormal, (radial * Self.normal(mesh, i)).sum())
        }
        // Linear interpolation of the true distance along an edge: about h²/(8r) off.
        #expect(worst < 2e-4, "a vertex is \(worst) m off the sphere")
        #expect(worstNormal > 0.995, "normals radial: worst cosine \(worstNormal)")
        // Closed and consistently oriented: every edge once each way; Euler characteristic 2.
        let edges = Self.directedEdges(mesh)
        #expect(edges.values.allSatisfy { $0 == 1 })
        #expect(edges.keys.allSatisfy { edges[SIMD2($0.y, $0.x)] == 1 })
        #expect(mesh.vertexCount - edges.count / 2 + mesh.faceCount == 2)
        // Triangles face outward (counter-clockwise seen from outside).
        var inward = 0
        for t in 0..<mesh.faceCount {
            let a = Self.vertex(mesh, Int(mesh.faces[3 * t])), b = Self.vertex(mesh, Int(mesh.faces[3 * t + 1]))
            let c = Self.vertex(mesh, Int(mesh.faces[3 * t + 2]))
            if (Self.cross(b - a, c - a) * ((a + b + c) / 3 - centre)).sum() <= 0 { inward += 1 }
        }
        #expect(inward == 0)
        // Every vertex used, no duplicates: 4πr² / area per vertex is about the voxel grid's.
        #expect(Set(mesh.faces).count == mesh.vertexCount)
        #expect(mesh.colors.allSatisfy { [200, 100, 50].contains($0) })
    }

    @Test func tiltedPlaneIsExactWithItsNormal() {
        let n = SIMD3(0.3, -0.8, 0.52) / (SIMD3(0.3, -0.8, 0.52) * SIMD3(0.3, -0.8, 0.52)).sum().squareRoot()
        let offset = 0.0137
        let sdf = { (p: SIMD3<Double>) in (n * p).sum() - offset }
        let volume = Self.volume(voxel: 0.02, trunc: 0.06, lo: SIMD3(-0.5, -0.5, -0.5), hi: SIMD3(0.5, 0.5, 0.5), sdf)
        let mesh = volume.extractMesh()
        #expect(mesh.vertexCount > 1000)
        for i in 0..<mesh.vertexCount {
            let p = Self.vertex(mesh, i)
            // A linear field: exact but for the 16-bit storage (trunc / 32767).
            #expect(abs(sdf(p)) < 1e-5)
            let g = Self.normal(mesh, i)
            #expect(((g - n) * (g - n)).sum().squareRoot() < 1e-3)
        }
    }

    @Test func cubeCornerIsSharp() {
        // The solid box x, y, z ≤ corner: an exact distance field with a corner, three
        // edges and three faces.
        let corner = SIMD3(0.0531, 0.0417, -0.0268)
        let sdf = { (p: SIMD3<Double>) -> Double in
            let q = p - corner
            let outside = SIMD3(max(q.x, 0), max(q.y, 0), max(q.z, 0))
            return (outside * outside).sum().squareRoot() + min(max(q.x, max(q.y, q.z)), 0)
        }
        let volume = Self.volume(voxel: 0.01, trunc: 0.04, lo: corner - 0.2, hi: corner + 0.1, sdf)
        let mesh = volume.extractMesh()
        var distances: [Double] = []
        var nearest = Double.infinity
        for i in 0..<mesh.vertexCount {
            let p = Self.vertex(mesh, i)
            distances.append(abs(sdf(p)))
            nearest = min(nearest, ((p - corner) * (p - corner)).sum().squareRoot())
        }
        #expect(Self.median(distances) < 1e-5, "faces are exact")
        #expect(distances.max() ?? 1 < 0.004, "edges and the corner are cut by less than half a voxel")
        #expect(nearest < 0.01, "a vertex within a voxel of the corner (\(nearest) m)")
    }

    // MARK: Synthetic scans with ground truth

    /// Fuses frames rendered by the generator (without writing files), meshing the voxels
    /// of at least the options' least weight (as `SceneFusion.build` does).
    static func fuse(_ scan: SyntheticScan, frames: some Sequence<Int>, options: SceneFusionOptions,
                     color: Bool = false, bands: Bool = true) throws -> TriangleMesh {
        let minWeight = options.minWeight(voxel: options.voxel ?? SceneFusion.fallbackVoxel) * Double(TSDFVolume.weightScale)
        return try volume(scan, frames: frames, options: options, color: color, bands: bands)
            .extractMesh(parallel: options.parallel, minWeight: UInt16(max(1, min(65_280, minWeight.rounded()))))
    }

    /// The volume of frames rendered by the generator, as `SceneFusion.build` fills it
    /// (each depth's noise band; `bands` false: every pixel at the truncation; `kernel`
    /// false: the Swift loop only).
    static func volume(_ scan: SyntheticScan, frames: some Sequence<Int>, options: SceneFusionOptions,
                       color: Bool = false, kernel: Bool = true, bands: Bool = true) throws -> TSDFVolume {
        let voxel = options.voxel ?? SceneFusion.fallbackVoxel
        var volume = SceneFusion.volume(voxel: voxel, options: options)
        volume.useKernel = kernel
        for index in frames {
            let frame = scan.render(frame: index, color: color)
            let k = frame.depthCamera
            let p = frame.pose
            let pose = Pose(row0: p.rotation.r0, row1: p.rotation.r1, row2: p.rotation.r2, translation: p.translation)
            let prepared = SceneFusion.prepare(
                depth: frame.depth, confidence: frame.confidence, color: color ? frame.color : nil,
                intrinsics: Intrinsics(fx: k.fx, fy: k.fy, cx: k.cx, cy: k.cy, width: k.width, height: k.height),
                pose: pose, options: options, bandsOver: bands ? volume.trunc : nil)
            try volume.integrate(prepared) { "frame \(index)" }
        }
        return volume
    }

    static func room(withSphere: Bool) -> SyntheticRoom {
        var room = SyntheticRoom()
        if withSphere { room.spheres = [.init(center: SIMD3(-0.9, 0.9, -1.3), radius: 0.3, color: SIMD3(200, 180, 60))] }
        return room
    }

    @Test func serialEqualsParallelBitForBit() throws {
        var noisy = SyntheticScan.Options()
        noisy.depthNoise = 0.003
        noisy.holes = true
        let scan = SyntheticScan(frameCount: 400, colorWidth: 320, colorHeight: 240, options: noisy)
        var options = SceneFusionOptions()
        options.voxel = 0.02
        options.parallel = false
        let serial = try Self.fuse(scan, frames: stride(from: 0, to: 400, by: 40), options: options, color: true)
        options.parallel = true
        let parallel = try Self.fuse(scan, frames: stride(from: 0, to: 400, by: 40), options: options, color: true)
        #expect(serial.faceCount > 10_000)
        #expect(identicalBits(serial.positions, parallel.positions))
        #expect(identicalBits(serial.normals, parallel.normals))
        #expect(serial.colors == parallel.colors)
        #expect(serial.faces == parallel.faces)
    }

    /// The AVX2 kernel (`rgbd_tsdf_block_avx2`, when the CPU has it) and the Swift loop
    /// write the same bytes into every voxel: noisy depth with holes, colors, turning
    /// poses, voxels at the image's borders and behind the camera; at 5 mm most far depth
    /// has a noise band wider than the truncation.
    @Test(arguments: [0.015, 0.005]) func kernelEqualsSwiftLoopBitForBit(voxel: Double) throws {
        var noisy = SyntheticScan.Options()
        noisy.depthNoise = 0.004
        noisy.holes = true
        let scan = SyntheticScan(frameCount: 300, colorWidth: 320, colorHeight: 240, options: noisy)
        var options = SceneFusionOptions()
        options.voxel = voxel
        let frames = stride(from: 0, to: 300, by: 23)
        let swift = try Self.volume(scan, frames: frames, options: options, color: true, kernel: false)
        let kernel = try Self.volume(scan, frames: frames, options: options, color: true, kernel: true)
        #expect(swift.blockCount == kernel.blockCount && swift.blockCount > 1000)
        var differing = 0, observed = 0, colored = 0
        for b in 0..<swift.blockCount {
            let a = swift.voxels(ofBlock: b), k = kernel.voxels(ofBlock: b)
            for i in 0..<TSDFVolume.blockVoxels {
                let x = a[i], y = k[i]
                if x.tsdf != y.tsdf || x.weight != y.weight || x.red != y.red || x.green != y.green || x.blue != y.blue
                    || x.colorWeight != y.colorWeight { differing += 1 }
                if x.weight > 0 { observed += 1 }
                if x.colorWeight > 0 { colored += 1 }
            }
        }
        #expect(differing == 0, "\(differing) voxels differ")
        #expect(observed > 100_000 && colored > 10_000, "observed \(observed), colored \(colored)")
    }

    @Test func roomMeshLiesOnTheTrueSurfaces() throws {
        var noisy = SyntheticScan.Options()
        noisy.depthNoise = 0.002
        var scan = SyntheticScan(frameCount: 1440, colorWidth: 160, colorHeight: 120, options: noisy)
        scan.room = Self.room(withSphere: true)
        var options = SceneFusionOptions()
        options.voxel = 0.02
        let mesh = try Self.fuse(scan, frames: stride(from: 0, to: 1440, by: 24), options: options)
        #expect(mesh.vertexCount > 20_000)
        let room = scan.room
        var distances: [Double] = []
        var wall: [Double] = [], sphereRadii: [Double] = [], boxEdge: [Double] = []
        let sphere = room.spheres[0]
        let box = room.boxes[0]   // yaw 0: its top front edge is the line y = top, z = front
        let top = box.center.y + box.halfSize.y, front = box.center.z + box.halfSize.z
        for i in 0..<mesh.vertexCount {
            let p = Self.vertex(mesh, i)
            distances.append(room.distanceToSurface(p))
            // The wall x = 2.5 away from the corners: planar.
            if p.x > 2.3 && abs(p.z) < 1.5 && p.y > 0.3 && p.y < 2.7 && abs(p.x - 2.5) < 0.1 { wall.append(p.x) }
            let r = ((p - sphere.center) * (p - sphere.center)).sum().squareRoot()
            if abs(r - sphere.radius) < 0.06 { sphereRadii.append(r) }
            // Within 3 cm of the box's top front edge (off its ends).
            if abs(p.x - box.center.x) < box.halfSize.x - 0.05 && abs(p.y - top) < 0.03 && abs(p.z - front) < 0.03 {
                boxEdge.append(room.distanceToSurface(p))
            }
        }
        let voxel = try #require(options.voxel)
        #expect(Self.median(distances) < 0.1 * voxel, "median distance to the truth \(Self.median(distances)) m")
        // 99 % within a voxel (and a hair: with high confidence only, the default, the
        // 99th percentile lies on a voxel one voxel from the surface, 0.0200001 m).
        #expect(Self.quantile(distances, 0.99) < 1.001 * voxel, "99 % within a voxel: \(Self.quantile(distances, 0.99)) m")
        // Planar wall: at x = 2.5 within noise.
        #expect(wall.count > 1000)
        let wallMean = wall.reduce(0, +) / Double(wall.count)
        let wallOff = wall.map { abs($0 - 2.5) }
        #expect(abs(wallMean - 2.5) < 0.001, "wall at \(wallMean)")
        // Parts of the wall seen only from 3–4 m have depth noise of 2–3 cm per frame.
        #expect(Self.median(wallOff) < 0.002 && Self.quantile(wallOff, 0.9) < 0.5 * voxel,
                "wall off its plane: median \(Self.median(wallOff)), 90 % \(Self.quantile(wallOff, 0.9)) m")
        // The sphere has its radius.
        #expect(sphereRadii.count > 300)
        let radius = sphereRadii.reduce(0, +) / Double(sphereRadii.count)
        #expect(abs(radius - sphere.radius) < 0.003, "fused radius \(radius), true \(sphere.radius)")
        // The box's edge is where it is: vertices near it lie on the box.
        #expect(boxEdge.count > 20)
        #expect((boxEdge.max() ?? 1) < 0.5 * voxel, "box edge: worst \(boxEdge.max() ?? 1) m")
    }

    // MARK: Crafted frames: colors, flying pixels

    /// A pinhole looking down +z from `origin` (identity rotation): depth of the scene
    /// `depthAt(x, y)` (world x, y of the ray at unit depth → depth), color `texture` of
    /// the world point, at 4× the depth size.
    static func craftedFrame(origin: SIMD3<Double>, width: Int = 64, height: Int = 48,
                             depthAt: (SIMD3<Double>) -> Double,
                             texture: ((SIMD3<Double>) -> SIMD3<Double>)? = nil) -> (DepthMap, ColorImage?, Intrinsics, Pose) {
        let k = Intrinsics(fx: 60, fy: 60, cx: 31.7, cy: 23.4, width: width, height: height)
        var depth = [Float](repeating: .nan, count: width * height)
        for v in 0..<height {
            for u in 0..<width {
                let ray = SIMD3((Double(u) - k.cx) / k.fx, (Double(v) - k.cy) / k.fy, 1)
                depth[v * width + u] = Float(depthAt(ray))
            }
        }
        var color: ColorImage?
        if let texture {
            let ck = k.scaled(toWidth: 4 * width, height: 4 * height)
            var samples = [UInt8](repeating: 0, count: 48 * width * height)
            for y in 0..<ck.height {
                for x in 0..<ck.width {
                    let ray = SIMD3((Double(x) - ck.cx) / ck.fx, (Double(y) - ck.cy) / ck.fy, 1)
                    let rgb = texture(origin + ray * depthAt(ray))
                    for c in 0..<3 { samples[(y * ck.width + x) * 3 + c] = UInt8(max(0, min(255, rgb[c].rounded()))) }
                }
            }
            color = ColorImage(width: ck.width, height: ck.height, channels: 3, samples: samples)
        }
        let pose = Pose(row0: SIMD3(1, 0, 0), row1: SIMD3(0, 1, 0), row2: SIMD3(0, 0, 1), translation: origin)
        return (DepthMap(width: width, height: height, channels: 1, samples: depth), color, k, pose)
    }

    @Test func texturedWallKeepsItsColors() throws {
        // The wall z = 2 (world), a smooth texture; cameras translated across it.
        let texture = { (p: SIMD3<Double>) in
            SIMD3(128 + 80 * sin(2 * p.x), 128 + 80 * cos(1.7 * p.y), 100 + 50 * sin(p.x + p.y))
        }
        var options = SceneFusionOptions()
        options.voxel = 0.01
        var volume = TSDFVolume(voxel: 0.01, trunc: 0.04, memoryBudget: 1 << 30)
        for (n, shift) in [SIMD3(0.0, 0, 0), SIMD3(0.1, 0.05, 0), SIMD3(-0.08, 0.1, 0.2), SIMD3(0.05, -0.1, -0.1)].enumerated() {
            let (depth, color, k, pose) = Self.craftedFrame(origin: shift, depthAt: { _ in 2 - shift.z }, texture: texture)
            let frame = SceneFusion.prepare(depth: depth, confidence: nil, color: color, intrinsics: k, pose: pose,
                                            options: options)
            try volume.integrate(frame) { "frame \(n)" }
        }
        let mesh = volume.extractMesh()
        #expect(mesh.vertexCount > 1000)
        var errors: [Double] = []
        for i in 0..<mesh.vertexCount {
            let p = Self.vertex(mesh, i)
            #expect(abs(p.z - 2) < 1e-3)
            let truth = texture(p)
            for c in 0..<3 { errors.append(abs(Double(mesh.colors[3 * i + c]) - truth[c])) }
        }
        #expect(Self.median(errors) <= 1.5, "median color error \(Self.median(errors)) levels")
        #expect(Self.quantile(errors, 0.95) <= 4, "95 % within \(Self.quantile(errors, 0.95)) levels")
    }

    /// A board at z = 1 m left of x = 0 before a wall at z = 3 m, with "flying pixels" of
    /// intermediate depth (1.7 and 2.3 m) on the two pixel columns of the edge, seen from
    /// three places. Returns the mesh's vertices off both true surfaces.
    static func flyingPixelVertices(dropEdges: Bool) throws -> Int {
        var options = SceneFusionOptions()
        options.points.dropEdges = dropEdges
        var volume = TSDFVolume(voxel: 0.01, trunc: 0.04, memoryBudget: 1 << 30)
        for (n, dx) in [0.0, 0.004, -0.003].enumerated() {
            let origin = SIMD3(dx, 0, 0)
            var (depth, _, k, pose) = Self.craftedFrame(origin: origin, depthAt: { ray in
                dx + ray.x * 1 < 0 ? 1 : 3
            })
            // The board's edge column and its neighbor on the wall get intermediate depths.
            for v in 0..<depth.height {
                for u in 1..<depth.width where depth[u - 1, v] == 1 && depth[u, v] == 3 {
                    depth.samples[v * depth.width + u - 1] = 1.7
                    depth.samples[v * depth.width + u] = 2.3
                    break
                }
            }
            let frame = SceneFusion.prepare(depth: depth, confidence: nil, color: nil, intrinsics: k, pose: pose,
                                            options: options)
            try volume.integrate(frame) { "frame \(n)" }
        }
        let mesh = volume.extractMesh()
        var off = 0
        for i in 0..<mesh.vertexCount {
            let p = Self.vertex(mesh, i)
            if abs(p.z - 1) > 0.02 && abs(p.z - 3) > 0.02 { off += 1 }
        }
        #expect(mesh.vertexCount > 1000)
        return off
    }

    @Test func flyingPixelsMakeNoSurface() throws {
        #expect(try Self.flyingPixelVertices(dropEdges: true) == 0)
        // The same frames without the filter do make one (the check can fail).
        #expect(try Self.flyingPixelVertices(dropEdges: false) > 20)
    }

    // MARK: Hostile inputs

    @Test func posesFarAwayAreRefusedBeforeAllocating() throws {
        let (depth, _, k, _) = Self.craftedFrame(origin: .zero, depthAt: { _ in 2 })
        let far = Pose(row0: SIMD3(1, 0, 0), row1: SIMD3(0, 1, 0), row2: SIMD3(0, 0, 1), translation: SIMD3(1e9, 0, 0))
        let frame = SceneFusion.prepare(depth: depth, confidence: nil, color: nil, intrinsics: k, pose: far,
                                        options: SceneFusionOptions())
        var volume = TSDFVolume(voxel: 0.01, trunc: 0.04, memoryBudget: 1 << 30)
        #expect {
            try volume.integrate(frame) { "scan: frame 7" }
        } throws: { error in
            let text = "\(error)"
            return text.hasPrefix("scan: frame 7: ") && text.contains("beyond the volume's reach")
        }
        #expect(volume.blockCount == 0 && volume.storage.bytes == 0)
    }

    @Test func memoryBudgetIsCheckedBeforeAllocating() throws {
        let (depth, _, k, pose) = Self.craftedFrame(origin: .zero, depthAt: { _ in 2 })
        let frame = SceneFusion.prepare(depth: depth, confidence: nil, color: nil, intrinsics: k, pose: pose,
                                        options: SceneFusionOptions())
        var volume = TSDFVolume(voxel: 0.01, trunc: 0.04, memoryBudget: 64 << 10)
        #expect {
            try volume.integrate(frame) { "scan: frame 0" }
        } throws: { error in "\(error)".contains("memory budget") && "\(error)".hasPrefix("scan: frame 0: ") }
        #expect(volume.blockCount == 0 && volume.storage.bytes == 0)
    }

    @Test func missingDepthGivesAnEmptyMesh() throws {
        let (depth, _, k, pose) = Self.craftedFrame(origin: .zero, depthAt: { _ in .nan })
        let frame = SceneFusion.prepare(depth: depth, confidence: nil, color: nil, intrinsics: k, pose: pose,
                                        options: SceneFusionOptions())
        var volume = TSDFVolume(voxel: 0.01, trunc: 0.04, memoryBudget: 1 << 30)
        try volume.integrate(frame) { "frame 0" }
        #expect(volume.blockCount == 0 && volume.extractMesh().faceCount == 0)
    }

    @Test(arguments: [0, 1e-9, -0.01, .nan, .infinity, 2])
    func voxelOutOfRangeIsRefused(voxel: Double) {
        var options = SceneFusionOptions()
        options.voxel = voxel
        #expect(throws: RGBDError.self) { try options.validate() }
    }

    @Test func truncationBelowAVoxelIsRefused() {
        var options = SceneFusionOptions()
        options.voxel = 0.01
        options.trunc = 0.005
        #expect(throws: RGBDError.self) { try options.validate() }
        options.trunc = 0.01
        #expect(throws: Never.self) { try options.validate() }
    }

    @Test func smallFragmentsAreDropped() {
        // Two spheres: a large one and a small one (fewer triangles); the small one goes.
        let big = SIMD3(0.0, 0, 0), small = SIMD3(0.5, 0, 0)
        let sdf = { (p: SIMD3<Double>) in
            min(((p - big) * (p - big)).sum().squareRoot() - 0.2, ((p - small) * (p - small)).sum().squareRoot() - 0.05)
        }
        let mesh = Self.volume(voxel: 0.01, trunc: 0.03, lo: SIMD3(-0.3, -0.3, -0.3), hi: SIMD3(0.6, 0.3, 0.3), sdf)
            .extractMesh()
        let kept = mesh.removingFragments(smallerThan: 1000)
        #expect(kept.faceCount < mesh.faceCount && kept.faceCount > 1000)
        for i in 0..<kept.vertexCount { #expect(Self.vertex(kept, i).x < 0.3) }
        #expect(kept.faces.allSatisfy { Int($0) < kept.vertexCount })
        #expect(Self.directedEdges(kept).values.allSatisfy { $0 == 1 })
    }
}

extension FusionTests {
    /// The plane x + y + z = 0 on a 2 cm grid passes through voxels: every voxel with
    /// i + j + k = 0 holds exactly 0 (the 16-bit distance makes such zeros common in
    /// fused scans). The cell edges that meet at such a voxel have their vertex there, so
    /// they must share one vertex, and the triangles between them (of no area) must go:
    /// no face with a repeated vertex or zero area, no two vertices at one place, every
    /// vertex used, every edge in at most two faces with opposite directions, and the
    /// mesh still on the plane.
    @Test func zerosOnVoxelsMakeNoDegenerateTriangles() {
        let n = SIMD3(1.0, 1, 1) / 3.0.squareRoot()
        let sdf = { (p: SIMD3<Double>) in (n * p).sum() }
        let volume = Self.volume(voxel: 0.02, trunc: 0.06, lo: SIMD3(-0.3, -0.3, -0.3), hi: SIMD3(0.3, 0.3, 0.3), sdf)
        let mesh = volume.extractMesh()
        #expect(mesh.faceCount > 1000)
        var degenerate = 0
        for t in 0..<mesh.faceCount {
            let f = (0..<3).map { Int(mesh.faces[3 * t + $0]) }
            let a = Self.vertex(mesh, f[0]), b = Self.vertex(mesh, f[1]), c = Self.vertex(mesh, f[2])
            if f[0] == f[1] || f[1] == f[2] || f[0] == f[2] || Self.cross(b - a, c - a) == .zero { degenerate += 1 }
        }
        #expect(degenerate == 0, "\(degenerate) of \(mesh.faceCount) faces have no area")
        let places = Set((0..<mesh.vertexCount).map { i in
            SIMD3(mesh.positions[3 * i], mesh.positions[3 * i + 1], mesh.positions[3 * i + 2])
        })
        #expect(places.count == mesh.vertexCount, "\(mesh.vertexCount - places.count) vertices share a place with another")
        // Vertices on voxels are there: the plane meets the grid at many of them.
        let onVoxels = (0..<mesh.vertexCount).filter { i in
            (0..<3).allSatisfy { k in
                let q = Double(mesh.positions[3 * i + k]) / 0.02
                return abs(q - q.rounded()) < 1e-4
            }
        }.count
        #expect(onVoxels > 100)
        #expect(Set(mesh.faces).count == mesh.vertexCount)
        let edges = Self.directedEdges(mesh)
        #expect(edges.values.allSatisfy { $0 == 1 }, "a directed edge used twice: an edge in more than two faces or faces turned differently")
        for i in 0..<mesh.vertexCount { #expect(abs(sdf(Self.vertex(mesh, i))) < 1e-5) }
    }
}
