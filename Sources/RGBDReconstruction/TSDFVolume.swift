import CKernels
import Dispatch

/// One voxel of a `TSDFVolume`: 8 bytes.
///
/// - `tsdf`: the truncated signed distance divided by the volume's `range` (the
///   truncation, or the widest per-pixel band), −1…1, as `Int16` (×32767): positive in
///   front of the surface (seen free), negative behind.
/// - `weight`: the sum of the observations' weights in units of 1/256, capped at
///   `TSDFVolume.maxWeight` (a running average over the last ~255 full-weight views).
/// - `red`, `green`, `blue`: the weighted running average of the colors observed within
///   the truncation band; `colorWeight` its weight (1/16 units, capped at 255; 0: no
///   color seen, the voxel is white).
struct TSDFVoxel {
    var tsdf: Int16 = 0
    var weight: UInt16 = 0
    var red: UInt8 = 0
    var green: UInt8 = 0
    var blue: UInt8 = 0
    var colorWeight: UInt8 = 0
}

/// One depth frame ready to integrate: depth in meters (NaN or 0 = nothing measured), a
/// weight per pixel (0 = not used), optional RGB per depth pixel, the depth camera's
/// intrinsics and its camera-to-world pose (OpenCV camera axes).
struct TSDFFrame {
    package var depth: [Float]
    var weights: [Float]
    var colors: [UInt8]?
    var width: Int
    var height: Int
    package var intrinsics: Intrinsics
    var pose: Pose
    /// Per pixel, how far from its depth the distance is kept (meters, at least the
    /// volume's `trunc`; `SceneFusion.noiseBand`): noisy far depth is averaged as a
    /// distance over a wider band instead of being clipped into blobs. Nil: `trunc` for
    /// every pixel.
    var bands: [Float]? = nil
}

/// A truncated signed distance volume on a sparse hash of 8×8×8-voxel blocks (the layout
/// of voxblox and Open3D's `VoxelBlockGrid`): blocks exist only where a frame saw a
/// surface within the truncation distance, so memory follows the observed surface, not a
/// bounding box.
///
/// Voxel `(i, j, k)` (integers) has its centre at `(i, j, k)·voxel` in the world; block
/// `(a, b, c)` holds voxels `8a…8a+7` × `8b…8b+7` × `8c…8c+7`. Integration is projective
/// (as KinectFusion, Open3D and voxblox's "simple" integrator): each voxel of a touched
/// block is projected into the depth map (nearest pixel), its signed distance is the
/// measured depth minus the voxel's depth along the optical axis, truncated to ±`trunc`;
/// voxels more than `trunc` behind the measurement are left alone. Blocks are integrated
/// in parallel, each by one worker, with the same arithmetic in any order: the parallel
/// result equals the serial one bit for bit.
struct TSDFVolume {
    /// Voxels per block edge.
    static let blockSide = 8
    /// Voxels per block.
    static let blockVoxels = 512
    /// Bytes of one block's voxels.
    static let blockBytes = blockVoxels * MemoryLayout<TSDFVoxel>.stride
    /// The most blocks from the origin along any axis (the keys' 21 bits): ±83 km at 1 cm.
    static let maxBlockCoordinate = 1_048_575
    /// Weight units per unit of observation weight.
    static let weightScale: Float = 256
    /// The cap on a voxel's weight, in units (255 full-weight observations).
    static let maxWeight: UInt16 = 65_280

    /// The voxel edge, meters.
    let voxel: Float
    /// The truncation distance, meters: the band around each depth where distances are
    /// kept, unless the frame gives wider ones (`TSDFFrame.bands`); colors are taken
    /// within it.
    let trunc: Float
    /// The distance that a stored ±32767 stands for, meters: `trunc`, or the widest band
    /// frames may give.
    let range: Float
    /// The most bytes the blocks may take; a frame that would need more is refused before
    /// anything is allocated for it.
    let memoryBudget: Int
    /// Block keys (`SparseKeyIndex.cellKey` of the block coordinates) → block number.
    private(set) var index = SparseKeyIndex(capacity: 1 << 14)
    /// The voxels, in pages of `pageBlocks` blocks.
    let storage = VoxelPages()
    /// Set false to integrate on the calling thread alone (for tests: serial = parallel).
    var parallel = true
    /// Set false to integrate without the AVX2 kernel (for tests: kernel = Swift loop).
    var useKernel = true

    init(voxel: Float, trunc: Float, range: Float? = nil, memoryBudget: Int) {
        self.voxel = voxel
        self.trunc = trunc
        self.range = max(trunc, range ?? trunc)
        self.memoryBudget = memoryBudget
    }

    /// The number of blocks.
    var blockCount: Int { index.count }

    /// Bytes the volume holds (voxels and index).
    var bytes: Int { storage.bytes + index.bytes }

    /// Block number `b`'s coordinates.
    func blockCoordinates(_ b: Int) -> SIMD3<Int32> { SparseKeyIndex.cell(ofKey: index.keys[b]) }

    /// The voxels of block `b` (512, x fastest, then y, then z).
    func voxels(ofBlock b: Int) -> UnsafeMutablePointer<TSDFVoxel> { storage.block(b) }

    /// The block number of block coordinates, nil when absent.
    func block(at c: SIMD3<Int32>) -> Int? {
        guard let key = SparseKeyIndex.cellKey(Int(c.x), Int(c.y), Int(c.z)) else { return nil }
        return index.index(of: key)
    }

    /// The block keys within `trunc` of the frame's measured points, in first-seen order:
    /// the new ones (not yet in the volume) and the ones already there. (Wider bands
    /// allocate nothing more: they widen what a frame writes into these blocks. Also
    /// touching the blocks already there along each ray's band was measured: no gain on
    /// the synthetic truth, three times slower.)
    /// - Throws: when a point lies beyond the volume's reach (`maxBlockCoordinate`).
    func touchedBlocks(_ frame: TSDFFrame, describe: () -> String) throws -> (existing: [Int], new: [UInt64]) {
        let k = frame.intrinsics
        let fxInv = Float(1 / k.fx), fyInv = Float(1 / k.fy), cx = Float(k.cx), cy = Float(k.cy)
        let pose = frame.pose
        let r0 = SIMD3<Float>(pose.row0), r1 = SIMD3<Float>(pose.row1), r2 = SIMD3<Float>(pose.row2)
        let t = SIMD3<Float>(pose.translation)
        let inv = 1 / voxel, side = Float(Self.blockSide)
        // In voxels: blocks beyond ±maxBlockCoordinate are refused (and Int32 conversions stay in range).
        let reach = Float(Self.maxBlockCoordinate) * side
        var seen = SparseKeyIndex(capacity: 1 << 12)
        var existing: [Int] = [], new: [UInt64] = []
        var previous = (lo: SIMD3<Int32>(1, 1, 1), hi: SIMD3<Int32>(0, 0, 0))
        for v in 0..<frame.height {
            let y = (Float(v) - cy) * fyInv
            for u in 0..<frame.width {
                let i = v &* frame.width &+ u
                let z = frame.depth[i]
                guard z > 0, frame.weights[i] > 0 else { continue }
                let p = SIMD3((Float(u) - cx) * fxInv * z, y * z, z)
                let world = SIMD3((r0 * p).sum(), (r1 * p).sum(), (r2 * p).sum()) + t
                // Voxels within ±trunc (indices lo...hi), then their blocks (index >> 3 =
                // floor(index / 8)), in scalar code: SIMD lane conversions are generic calls.
                let lo = (world - trunc) * inv, hi = (world + trunc) * inv
                // Written so that NaN (an overflowing point) fails too.
                guard lo.x >= -reach, lo.y >= -reach, lo.z >= -reach, hi.x <= reach, hi.y <= reach, hi.z <= reach else {
                    throw RGBDError(.invalidArgument, file: describe(),
                                    "a measured point at (\(world.x), \(world.y), \(world.z)) m lies beyond the volume's reach "
                                    + "(±\(Float(Self.maxBlockCoordinate) * side * voxel) m from the origin at \(voxel) m voxels)")
                }
                let range = (lo: SIMD3<Int32>(Int32(lo.x.rounded(.up)) >> 3, Int32(lo.y.rounded(.up)) >> 3,
                                              Int32(lo.z.rounded(.up)) >> 3),
                             hi: SIMD3<Int32>(Int32(hi.x.rounded(.down)) >> 3, Int32(hi.y.rounded(.down)) >> 3,
                                              Int32(hi.z.rounded(.down)) >> 3))
                if range == previous { continue }
                previous = range
                for bz in range.lo.z...range.hi.z {
                    for by in range.lo.y...range.hi.y {
                        for bx in range.lo.x...range.hi.x {
                            guard let key = SparseKeyIndex.cellKey(Int(bx), Int(by), Int(bz)) else { continue }
                            guard seen.insert(key).inserted else { continue }
                            if let b = index.index(of: key) { existing.append(b) } else { new.append(key) }
                        }
                    }
                }
            }
        }
        return (existing, new)
    }

    /// Integrates one frame: finds the blocks it touches, refuses it (before allocating)
    /// when the new blocks would exceed `memoryBudget`, then updates every voxel of those
    /// blocks. `describe` names the frame in errors.
    mutating func integrate(_ frame: TSDFFrame, describe: () -> String) throws {
        var (blocks, new) = try touchedBlocks(frame, describe: describe)
        let needed = (index.count + new.count) * Self.blockBytes
        if needed > memoryBudget {
            throw RGBDError(.invalidArgument, file: describe(),
                            "the volume would need \(needed / 1_048_576) MB for \(index.count + new.count) blocks of "
                            + "\(Self.blockSide)³ voxels, more than the memory budget of \(memoryBudget / 1_048_576) MB "
                            + "(a larger voxel, a shorter depth range or a larger budget)")
        }
        storage.reserve(blocks: index.count + new.count)
        for key in new { blocks.append(index.insert(key).index) }
        integrate(frame, blocks: blocks)
    }

    /// The block number of block coordinates `c`, adding the block (unobserved) when it
    /// is absent; nil beyond the volume's reach.
    mutating func addBlock(_ c: SIMD3<Int32>) -> Int? {
        guard let key = SparseKeyIndex.cellKey(Int(c.x), Int(c.y), Int(c.z)) else { return nil }
        let b = index.insert(key).index
        storage.reserve(blocks: index.count)
        return b
    }

    /// Updates the voxels of `blocks` (each by one worker): with the AVX2 kernel
    /// (`rgbd_tsdf_block_avx2`, eight voxels of a row at once) when the CPU has it, else
    /// `integrateBlock`; both give the same bytes.
    private func integrate(_ frame: TSDFFrame, blocks: [Int]) {
        let k = frame.intrinsics
        let pose = frame.pose
        // World → camera: Rᵀ(p − t). Camera-frame steps of one voxel along the world axes
        // (columns of Rᵀ·voxel).
        let c0 = SIMD3<Float>(SIMD3(pose.row0.x, pose.row1.x, pose.row2.x))
        let c1 = SIMD3<Float>(SIMD3(pose.row0.y, pose.row1.y, pose.row2.y))
        let c2 = SIMD3<Float>(SIMD3(pose.row0.z, pose.row1.z, pose.row2.z))
        let t = pose.translation
        let voxel = self.voxel
        let side = Self.blockSide
        let stepX = SIMD3(c0.x, c1.x, c2.x) * voxel, stepY = SIMD3(c0.y, c1.y, c2.y) * voxel
        let stepZ = SIMD3(c0.z, c1.z, c2.z) * voxel
        let storage = self.storage
        let coordinates = blocks.map { blockCoordinates($0) }
        let kernel = useKernel && VectorKernels.avx2
        // The kernel reads four bytes per color pixel: one byte of padding after the last.
        let colors = frame.colors.map { $0 + [0] }
        frame.depth.withUnsafeBufferPointer { depthBuffer in
            frame.weights.withUnsafeBufferPointer { weightBuffer in
              (frame.bands ?? []).withUnsafeBufferPointer { bandBuffer in
                (colors ?? []).withUnsafeBufferPointer { colorBuffer in
                    guard let depth = depthBuffer.baseAddress, let weights = weightBuffer.baseAddress else { return }
                    let params = rgbd_tsdf_frame(
                        fx: Float(k.fx), fy: Float(k.fy), cx: Float(k.cx), cy: Float(k.cy),
                        width: Int32(frame.width), height: Int32(frame.height), trunc: trunc, trunc_inv: 1 / trunc,
                        step_x: (stepX.x, stepX.y, stepX.z), step_y: (stepY.x, stepY.y, stepY.z),
                        step_z: (stepZ.x, stepZ.y, stepZ.z), depth: depth, weights: weights,
                        colors: colors == nil ? nil : colorBuffer.baseAddress,
                        bands: frame.bands == nil ? nil : bandBuffer.baseAddress, range_inv: 1 / range)
                    // Each block's voxels are written by the one iteration that owns it, and
                    // concurrentPerform returns when all are done.
                    nonisolated(unsafe) let frameParams = params
                    nonisolated(unsafe) let work = { (n: Int) in
                        let c = coordinates[n]
                        let base = SIMD3<Double>(Double(c.x), Double(c.y), Double(c.z)) * Double(side) * Double(voxel)
                        // The block's first voxel in the camera frame, in Double (large worlds).
                        let rel = base - t
                        let origin = SIMD3<Float>(Float((SIMD3(pose.row0.x, pose.row1.x, pose.row2.x) * rel).sum()),
                                                  Float((SIMD3(pose.row0.y, pose.row1.y, pose.row2.y) * rel).sum()),
                                                  Float((SIMD3(pose.row0.z, pose.row1.z, pose.row2.z) * rel).sum()))
                        let voxels = storage.block(blocks[n])
                        var local = frameParams
                        if kernel, rgbd_tsdf_block_avx2(&local, origin.x, origin.y, origin.z, voxels) != 0 { return }
                        Self.integrateBlock(local, origin: origin, voxels: voxels)
                    }
                    if parallel && coordinates.count > 1 {
                        let chunk = 8
                        DispatchQueue.concurrentPerform(iterations: (coordinates.count + chunk - 1) / chunk) { c in
                            for n in (c * chunk)..<min(coordinates.count, c * chunk + chunk) { work(n) }
                        }
                    } else {
                        for n in coordinates.indices { work(n) }
                    }
                }
              }
            }
        }
    }

    /// Integrates `frame` into one block's 512 voxels whose first voxel is at `origin` in
    /// the camera frame: voxel `(x, y, z)` at `((origin + step_z·z) + step_y·y) + step_x·x`,
    /// projected to its nearest pixel; the kernel's arithmetic, one voxel at a time.
    static func integrateBlock(_ frame: rgbd_tsdf_frame, origin: SIMD3<Float>, voxels: UnsafeMutablePointer<TSDFVoxel>) {
        let fx = frame.fx, fy = frame.fy, cx = frame.cx, cy = frame.cy
        let width = Int(frame.width), height = Int(frame.height)
        let trunc = frame.trunc, truncInv = frame.trunc_inv, rangeInv = frame.range_inv
        let bands = frame.bands
        let stepX = SIMD3(frame.step_x.0, frame.step_x.1, frame.step_x.2)
        let stepY = SIMD3(frame.step_y.0, frame.step_y.1, frame.step_y.2)
        let stepZ = SIMD3(frame.step_z.0, frame.step_z.1, frame.step_z.2)
        guard let d = frame.depth, let w = frame.weights else { return }
        let rgb = frame.colors
        let side = blockSide
        for z in 0..<side {
            for y in 0..<side {
                let row = origin + stepZ * Float(z) + stepY * Float(y)
                for x in 0..<side {
                    let p = row + stepX * Float(x)
                    guard p.z > 0 else { continue }
                    // The nearest pixel: u + 0.5 truncated (u > −0.5 here).
                    let zInv = 1 / p.z
                    let u = fx * p.x * zInv + cx + 0.5, v = fy * p.y * zInv + cy + 0.5
                    guard u >= 0, v >= 0, u < Float(width), v < Float(height) else { continue }
                    let pixel = Int(v) &* width &+ Int(u)
                    let measured = d[pixel]
                    let weight = w[pixel]
                    guard measured > 0, weight > 0 else { continue }
                    let sdf = measured - p.z
                    let observed: Float
                    if let bands {
                        // The pixel's own band: the distance kept in meters (/ the range) up to it.
                        let band = bands[pixel]
                        guard sdf >= -band else { continue }
                        observed = min(sdf, band) * rangeInv
                    } else {
                        guard sdf >= -trunc else { continue }
                        observed = min(1, sdf * truncInv)
                    }
                    let slot = voxels + ((z &* side &+ y) &* side &+ x)
                    // Colors from the truncation band only (the surface seen at this pixel).
                    let colored = sdf < trunc && sdf >= -trunc
                    update(slot, observed: observed, weight: weight, color: colored ? rgb.map { $0 + 3 &* pixel } : nil)
                }
            }
        }
    }

    /// The running weighted average of one voxel (tsdf and color), weight capped.
    @inline(__always) static func update(_ slot: UnsafeMutablePointer<TSDFVoxel>, observed: Float, weight: Float,
                                         color: UnsafePointer<UInt8>?) {
        let old = Float(slot.pointee.weight)
        let add = Float(max(1, Int(weight * weightScale + 0.5)))
        let total = old + add
        let totalInv = 1 / total
        let tsdf = (Float(slot.pointee.tsdf) * old + observed * 32_767 * add) * totalInv
        // Rounded half away from zero by truncation (a conversion instruction, no libm call).
        slot.pointee.tsdf = Int16(max(-32_767, min(32_767, tsdf + (tsdf < 0 ? -0.5 : 0.5))))
        if let color {
            // Colors keep their own weight (units of 1/16, capped at 255: a running average
            // over the last ~16 full-weight views).
            let oldColor = Float(slot.pointee.colorWeight)
            let addColor = Float(max(1, Int(weight * 16 + 0.5)))
            let colorInv = 1 / (oldColor + addColor)
            @inline(__always) func mix(_ a: UInt8, _ b: UInt8) -> UInt8 {
                UInt8(min(255, (Float(a) * oldColor + Float(b) * addColor) * colorInv + 0.5))
            }
            slot.pointee.red = mix(slot.pointee.red, color[0])
            slot.pointee.green = mix(slot.pointee.green, color[1])
            slot.pointee.blue = mix(slot.pointee.blue, color[2])
            slot.pointee.colorWeight = UInt8(min(255, oldColor + addColor))
        }
        slot.pointee.weight = UInt16(min(Float(maxWeight), total))
    }
}

/// A volume's voxels in pages of 64 blocks (256 KiB), allocated as blocks are added and
/// zeroed (weight 0: never observed); freed with the volume.
final class VoxelPages: @unchecked Sendable {
    static let pageBlocks = 64
    private var pages: [UnsafeMutablePointer<TSDFVoxel>] = []

    /// Makes room for `blocks` blocks.
    func reserve(blocks: Int) {
        while pages.count * Self.pageBlocks < blocks {
            let page = UnsafeMutablePointer<TSDFVoxel>.allocate(capacity: Self.pageBlocks * TSDFVolume.blockVoxels)
            page.initialize(repeating: TSDFVoxel(), count: Self.pageBlocks * TSDFVolume.blockVoxels)
            pages.append(page)
        }
    }

    /// Block `b`'s 512 voxels.
    @inline(__always) func block(_ b: Int) -> UnsafeMutablePointer<TSDFVoxel> {
        pages[b / Self.pageBlocks] + (b % Self.pageBlocks) * TSDFVolume.blockVoxels
    }

    /// Bytes allocated.
    var bytes: Int { pages.count * Self.pageBlocks * TSDFVolume.blockBytes }

    deinit {
        for page in pages { page.deallocate() }
    }
}
