import RGBDKit

/// Writing a scan as Record3D does.
extension SyntheticScan {
    /// Writes a `.r3d` archive (`metadata`, `rgbd/N.jpg`, `rgbd/N.depth`, `rgbd/N.conf`,
    /// `icon`) or an "EXR + JPG" folder (`metadata.json`, `rgb/N.jpg`, `depth/N.exr`).
    /// Poses: camera-to-world with OpenGL camera axes, re-based on the first frame or in
    /// the room's (ARKit-like) world (`world`).
    func writeRecord3D(to path: String, container: Record3DContainer, keys: Record3DKeys, portrait: Bool,
                       world: Record3DWorld = .firstFrame) throws {
        let metadata = Array(record3DMetadata(keys: keys, portrait: portrait, world: world).utf8)
        var compressor: ScanLZFSECompressor?
        if container == .r3d, case .python(let python) = options.lzfse {
            compressor = try ScanLZFSECompressor(python: python)
        }
        func lzfse(_ bytes: [UInt8]) throws -> [UInt8] {
            try compressor?.compress(bytes) ?? ScanLZFSE.raw(bytes)
        }
        func float32(_ values: [Float]) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(values.count * 4)
            for v in values { out.le32(v.bitPattern) }
            return out
        }
        switch container {
        case .r3d:
            let directory = Path.directory(of: path)
            if !directory.isEmpty && directory != "." { try FileSystem.createDirectory(directory) }
            let zip = try ScanZipWriter(path)
            try zip.add("metadata", metadata)
            var icon: [UInt8] = []
            for i in 0..<frameCount {
                let frame = render(frame: i, portrait: portrait, depthSize: depthSize(frame: i, portrait: portrait))
                let jpeg = try JPEGCodec.encode(frame.color, quality: options.jpegQuality)
                if i == 0 { icon = jpeg }
                try zip.add("rgbd/\(i).jpg", jpeg)
                guard !options.framesWithoutDepth.contains(i) else { continue }
                try zip.add("rgbd/\(i).depth", lzfse(float32(frame.depth.samples)))
                try zip.add("rgbd/\(i).conf", lzfse(frame.confidence.samples))
            }
            try zip.add("icon", icon)
            try zip.finish()
            try compressor?.finish()
        case .exr:
            try FileSystem.createDirectory(Path.join(path, "rgb"))
            try FileSystem.createDirectory(Path.join(path, "depth"))
            try ScanOutputFile.write(Path.join(path, "metadata.json"), metadata)
            for i in 0..<frameCount {
                let frame = render(frame: i, portrait: portrait, depthSize: depthSize(frame: i, portrait: portrait))
                try ScanOutputFile.write(Path.join(path, "rgb/\(i).jpg"),
                                         JPEGCodec.encode(frame.color, quality: options.jpegQuality))
                guard !options.framesWithoutDepth.contains(i) else { continue }
                try ScanOutputFile.write(Path.join(path, "depth/\(i).exr"),
                                         ScanEXR.encode(width: frame.depth.width, height: frame.depth.height,
                                                        values: frame.depth.samples))
            }
        }
    }

    /// Record3D's metadata JSON: `w, h` (RGB as stored), `fps`, `K` (column-major, at the
    /// RGB size), `poses` (per frame `[qx, qy, qz, qw, px, py, pz]`: camera-to-world,
    /// OpenGL camera axes, world re-based on frame 0 or, for `.arkit`, the room's
    /// gravity-aligned world); the new key set adds `dw, dh`, `initPose` (re-based: frame
    /// 0's pose in the gravity-aligned room world, OpenGL axes, the transform the
    /// re-basing removed; `.arkit`: the identity), `frameTimestamps`,
    /// `perFrameIntrinsicCoeffs` (`[fx, fy, cx, cy]`) and `cameraType` (0: the back LiDAR
    /// camera).
    package func record3DMetadata(keys: Record3DKeys, portrait: Bool, world: Record3DWorld = .firstFrame) -> String {
        let k = colorCamera(portrait: portrait), d = depthCamera(portrait: portrait)
        let layout = Layout.record3D(.r3d, keys: keys, portrait: portrait, world: world)
        let truth = truth(for: layout)
        func numbers(_ values: [Double]) -> String { "[" + values.map(scanNumber).joined(separator: ",") + "]" }
        func poseEntry(_ cv: SynthPose) -> String {
            let gl = cv.flippingCameraAxes
            let q = SynthQuaternion(gl.rotation)
            return numbers(q.xyzw + [gl.translation.x, gl.translation.y, gl.translation.z])
        }
        let poses = "[" + truth.recordedPoses.map(poseEntry).joined(separator: ",") + "]"
        let kColumns = numbers([k.fx, 0, 0, 0, k.fy, 0, k.cx, k.cy, 1])
        switch keys {
        case .old:
            return "{\"h\":\(k.height),\"w\":\(k.width),\"fps\":\(scanNumber(trajectory.fps)),\"K\":\(kColumns),\"poses\":\(poses)}"
        case .new:
            let initPose = world == .arkit ? numbers([0, 0, 0, 1, 0, 0, 0]) : poseEntry(trajectory.pose(frame: 0))
            let stamps = numbers(truth.timestamps)
            let perFrame = "[" + (0..<frameCount).map { _ in numbers([k.fx, k.fy, k.cx, k.cy]) }.joined(separator: ",") + "]"
            return "{\"w\":\(k.width),\"h\":\(k.height),\"dw\":\(d.width),\"dh\":\(d.height),"
                + "\"fps\":\(scanNumber(trajectory.fps)),\"cameraType\":0,\"K\":\(kColumns),\"initPose\":\(initPose),"
                + "\"poses\":\(poses),\"frameTimestamps\":\(stamps),\"perFrameIntrinsicCoeffs\":\(perFrame)}"
        }
    }
}
