import Foundation
import Testing
@testable import RGBDKit
import RGBDSynth

/// `--upright` and `--crop valid` (`OutputGeometry`), by geometry: a turned capture is the
/// stored one turned (every 3-D point, every pixel), a cropped one has no black border and
/// the same 3-D points.
@Suite struct OutputGeometryTests {
    static func withOrientation(_ jpeg: [UInt8], _ value: Int, bigEndian: Bool = false) -> [UInt8] {
        SyntheticOrientation.tagged(jpeg, exif: value, bigEndian: bigEndian)
    }

    /// A temporary directory, removed by the caller.
    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rgbd-geometry-\(UUID().uuidString)").path
        try FileSystem.createDirectory(path)
        return path
    }

    /// The depth intrinsics (top level) of an intrinsics sidecar.
    static func intrinsics(_ path: String, key: String? = nil) throws -> Intrinsics {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        if let key { json = try #require(json[key] as? [String: Any]) }
        let m = try #require(json["intrinsic_matrix"] as? [Double])
        return Intrinsics(fx: m[0], fy: m[4], cx: m[6], cy: m[7], width: try #require(json["width"] as? Int),
                          height: try #require(json["height"] as? Int))
    }

    static func apply(_ rows: [SIMD3<Double>], _ p: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3((rows[0] * p).sum(), (rows[1] * p).sum(), (rows[2] * p).sum())
    }

    /// Where pixel `(x, y)` of a `w × h` image goes when it is turned `turns` times clockwise.
    static func turned(_ x: Double, _ y: Double, turns: Int, width w: Int, height h: Int) -> (Double, Double) {
        switch turns {
        case 1: return (Double(h - 1) - y, x)
        case 2: return (Double(w - 1) - x, Double(h - 1) - y)
        case 3: return (y, Double(w - 1) - x)
        default: return (x, y)
        }
    }

    @Test func exifAndHEIFOrientationsAreRead() throws {
        let jpeg = try JPEGCodec.encode(ColorImage(width: 8, height: 8, channels: 3, repeating: 128), quality: 90)
        #expect(PhotoOrientation.of(photo: jpeg) == .asStored)
        for value in 1...8 {
            for bigEndian in [false, true] {
                let oriented = Self.withOrientation(jpeg, value, bigEndian: bigEndian)
                #expect(PhotoOrientation.of(photo: oriented) == PhotoOrientation(exif: value), "\(value) \(bigEndian)")
                #expect(PhotoOrientation.of(photo: oriented).exifValue == value)
            }
        }
        // EXIF 6 is "turn 90° clockwise to show", 8 counterclockwise.
        #expect(PhotoOrientation(exif: 6)?.clockwiseQuarterTurns == 1 && PhotoOrientation(exif: 8)?.clockwiseQuarterTurns == 3)
        // A Portrait HEIC taken upright: irot says so (the fixture's primary image is stored as shot).
        let portrait = try FileSystem.readFile(Path.join(Path.directory(of: Path.directory(of: #filePath)), "Fixtures/portrait/portrait.heic"))
        #expect(PhotoOrientation.of(photo: portrait).mirrored == false)
    }

    /// The turned intrinsics project each 3-D point, turned with the camera, to the pixel
    /// its old pixel went to; and the turned image holds each pixel there.
    @Test func intrinsicsAndImagesTurnTogether() {
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<50 {
            let w = Int.random(in: 2...40, using: &rng), h = Int.random(in: 2...40, using: &rng)
            let k = Intrinsics(fx: .random(in: 10...100, using: &rng), fy: .random(in: 10...100, using: &rng),
                               cx: .random(in: 0...Double(w), using: &rng), cy: .random(in: 0...Double(h), using: &rng),
                               width: w, height: h)
            let point = SIMD3(Double.random(in: -2...2, using: &rng), .random(in: -2...2, using: &rng),
                              .random(in: 0.5...5, using: &rng))
            let pixel = k.project(point)
            for turns in 1...3 {
                let turned = k.rotated(clockwiseQuarterTurns: turns)
                let expected = Self.turned(pixel.x, pixel.y, turns: turns, width: w, height: h)
                let got = turned.project(Self.apply(Intrinsics.cameraRotation(clockwiseQuarterTurns: turns), point))
                #expect(abs(got.x - expected.0) < 1e-9 && abs(got.y - expected.1) < 1e-9, "\(turns): \(got) vs \(expected)")
                #expect(turned.width == (turns == 2 ? w : h) && turned.height == (turns == 2 ? h : w))
            }
            let labels = ImageBuffer<Int32>(width: w, height: h, channels: 1, samples: (0..<(w * h)).map { Int32($0) })
            for turns in 1...3 {
                let image = labels.rotated(clockwiseQuarterTurns: turns)
                for y in 0..<h {
                    for x in 0..<w {
                        let (nx, ny) = Self.turned(Double(x), Double(y), turns: turns, width: w, height: h)
                        #expect(image[Int(nx), Int(ny)] == Int32(y * w + x))
                    }
                }
            }
            #expect(labels.rotated(clockwiseQuarterTurns: 1).rotated(clockwiseQuarterTurns: 3).samples == labels.samples)
        }
    }

    /// `RectifyPipeline.run` with `upright`: for a photo whose EXIF says 6, 3 or 8, every
    /// depth pixel of the stored outputs is at its turned place in the upright ones with the
    /// same depth and color, and back-projects with the upright intrinsics to the same 3-D
    /// point turned about the optical axis.
    @Test(arguments: [6, 3, 8])
    func uprightOutputsAreTheStoredOnesTurned(exif: Int) throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = SyntheticCapture(colorWidth: 320, colorHeight: 240, depthWidth: 160, depthHeight: 120)
        let files = try capture.write(to: directory, stem: "shot")
        try Data(Self.withOrientation(try FileSystem.readFile(files.image), exif)).write(to: URL(fileURLWithPath: files.image))
        let turns = try #require(PhotoOrientation(exif: exif)).clockwiseQuarterTurns
        let rotation = Intrinsics.cameraRotation(clockwiseQuarterTurns: turns)
        for alignment in [nil, PixelAlignment.depth] as [PixelAlignment?] {
            let stored = directory + "/stored-\(String(describing: alignment))", upright = directory + "/upright-\(String(describing: alignment))"
            try RectifyPipeline.run(json: files.json, image: nil, directory: stored, alignment: alignment)
            try RectifyPipeline.run(json: files.json, image: nil, directory: upright, alignment: alignment,
                                    geometry: OutputGeometry(upright: true))
            let depth = try TIFFCodec.readFloat(path: stored + "/shot.depth.tiff")
            let turnedDepth = try TIFFCodec.readFloat(path: upright + "/shot.depth.tiff")
            let k = try Self.intrinsics(stored + "/shot.intrinsics.json")
            let turnedK = try Self.intrinsics(upright + "/shot.intrinsics.json")
            #expect(turnedK == k.rotated(clockwiseQuarterTurns: turns))
            #expect(turnedDepth.width == (turns == 2 ? depth.width : depth.height))
            var compared = 0
            for y in 0..<depth.height {
                for x in 0..<depth.width {
                    let (nx, ny) = Self.turned(Double(x), Double(y), turns: turns, width: depth.width, height: depth.height)
                    let z = depth[x, y], turnedZ = turnedDepth[Int(nx), Int(ny)]
                    #expect(z == turnedZ || (z.isNaN && turnedZ.isNaN))
                    guard z.isFinite else { continue }
                    let point = k.backProject(u: Double(x), v: Double(y), depth: Double(z))
                    let turnedPoint = turnedK.backProject(u: nx, v: ny, depth: Double(turnedZ))
                    let expected = Self.apply(rotation, point)
                    #expect(((turnedPoint - expected) * (turnedPoint - expected)).sum() < 1e-18)
                    compared += 1
                }
            }
            #expect(compared > depth.width * depth.height / 2)
            let color = try PNGCodec.decodeRGB(FileSystem.readFile(stored + "/shot.color.png"))
            let turnedColor = try PNGCodec.decodeRGB(FileSystem.readFile(upright + "/shot.color.png"))
            #expect(turnedColor.samples == color.rotated(clockwiseQuarterTurns: turns).samples)
            let colorK = try Self.intrinsics(stored + "/shot.intrinsics.json", key: "color")
            #expect(try Self.intrinsics(upright + "/shot.intrinsics.json", key: "color") == colorK.rotated(clockwiseQuarterTurns: turns))
        }
    }

    /// The upright cloud is the stored cloud turned about the optical axis, point for point.
    @Test func uprightCloudIsTheStoredCloudTurned() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = SyntheticCapture(colorWidth: 320, colorHeight: 240, depthWidth: 160, depthHeight: 120)
        let files = try capture.write(to: directory, stem: "shot")
        try Data(Self.withOrientation(try FileSystem.readFile(files.image), 6)).write(to: URL(fileURLWithPath: files.image))
        let stored = try RectifyPipeline.pointCloud(json: files.json, image: nil).output
        let upright = try RectifyPipeline.pointCloud(json: files.json, image: nil, upright: true).output
        #expect(stored.count == upright.count && stored.count > 1000)
        let rotation = Intrinsics.cameraRotation(clockwiseQuarterTurns: 1)
        func key(_ p: SIMD3<Double>) -> [Double] { [p.z, p.y, p.x] }
        func positions(_ cloud: PointCloud) -> [SIMD3<Double>] {
            var out: [SIMD3<Double>] = []
            cloud.forEachPoint { out.append(SIMD3<Double>($0.position)) }
            return out
        }
        let expected = positions(stored).map { Self.apply(rotation, $0) }
            .sorted { key($0).lexicographicallyPrecedes(key($1)) }
        let got = positions(upright).sorted { key($0).lexicographicallyPrecedes(key($1)) }
        var largest = 0.0
        for (a, b) in zip(expected, got) { largest = max(largest, ((a - b) * (a - b)).sum().squareRoot()) }
        #expect(largest < 1e-5, "largest difference \(largest) m")
        // The cloud without `upright` is not the turned one (the check can fail).
        let unturned = positions(stored).sorted { key($0).lexicographicallyPrecedes(key($1)) }
        #expect(zip(unturned, got).contains { ((($0 - $1) * ($0 - $1)).sum()) > 1e-6 })
    }

    /// `cropToValid` with a pincushion lens: the stored outputs have black corners, the
    /// cropped ones none, and every cropped depth pixel is the same 3-D point as the
    /// uncropped pixel it came from.
    @Test(arguments: [nil, PixelAlignment.depth, PixelAlignment.color] as [PixelAlignment?])
    func cropToValidRemovesTheBorderAndKeepsThePoints(alignment: PixelAlignment?) throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = SyntheticCapture(colorWidth: 320, colorHeight: 240, depthWidth: 160, depthHeight: 120,
                                       calibration: SyntheticCapture.iPhoneCalibration(cornerMagnification: 0.06))
        let files = try capture.write(to: directory, stem: "shot")
        let whole = directory + "/whole", cropped = directory + "/cropped"
        try RectifyPipeline.run(json: files.json, image: nil, directory: whole, alignment: alignment)
        try RectifyPipeline.run(json: files.json, image: nil, directory: cropped, alignment: alignment,
                                geometry: OutputGeometry(cropToValid: true))
        func black(_ image: ColorImage) -> Int {
            (0..<(image.width * image.height)).filter { i in image.samples[3 * i] == 0 && image.samples[3 * i + 1] == 0 && image.samples[3 * i + 2] == 0 }.count
        }
        let wholeColor = try PNGCodec.decodeRGB(FileSystem.readFile(whole + "/shot.color.png"))
        let croppedColor = try PNGCodec.decodeRGB(FileSystem.readFile(cropped + "/shot.color.png"))
        #expect(black(wholeColor) > 0, "the lens leaves no border: the test checks nothing")
        #expect(black(croppedColor) == 0)
        #expect(croppedColor.width < wholeColor.width || croppedColor.height < wholeColor.height)

        let wholeK = try Self.intrinsics(whole + "/shot.intrinsics.json")
        let croppedK = try Self.intrinsics(cropped + "/shot.intrinsics.json")
        let depth = try TIFFCodec.readFloat(path: whole + "/shot.depth.tiff")
        let croppedDepth = try TIFFCodec.readFloat(path: cropped + "/shot.depth.tiff")
        #expect(croppedK.fx == wholeK.fx && croppedK.fy == wholeK.fy)
        #expect(croppedK.width == croppedDepth.width && croppedK.height == croppedDepth.height)
        // The crop's corner, from the principal point's shift: whole pixels.
        let dx = wholeK.cx - croppedK.cx, dy = wholeK.cy - croppedK.cy
        #expect(dx == dx.rounded() && dy == dy.rounded() && dx >= 0 && dy >= 0)
        var compared = 0
        for y in 0..<croppedDepth.height {
            for x in 0..<croppedDepth.width {
                let z = croppedDepth[x, y], original = depth[x + Int(dx), y + Int(dy)]
                #expect(z == original || (z.isNaN && original.isNaN))
                guard z.isFinite else { continue }
                let a = croppedK.backProject(u: Double(x), v: Double(y), depth: Double(z))
                let b = wholeK.backProject(u: Double(x) + dx, v: Double(y) + dy, depth: Double(original))
                #expect(((a - b) * (a - b)).sum() < 1e-18)
                compared += 1
            }
        }
        #expect(compared > croppedDepth.width * croppedDepth.height / 2)
        if alignment != nil {
            #expect(croppedColor.width == croppedDepth.width && croppedColor.height == croppedDepth.height)
        }
    }

    /// The largest rectangle is the largest: against trying every rectangle of small masks.
    @Test func largestRectangleIsTheLargest() {
        var rng = SeededGenerator(seed: 11)
        for _ in 0..<200 {
            let w = Int.random(in: 1...7, using: &rng), h = Int.random(in: 1...6, using: &rng)
            let mask = (0..<(w * h)).map { _ in Double.random(in: 0..<1, using: &rng) < 0.7 }
            var best = 0
            for y0 in 0..<h { for y1 in y0..<h { for x0 in 0..<w { for x1 in x0..<w {
                let all = (y0...y1).allSatisfy { y in (x0...x1).allSatisfy { x in mask[y * w + x] } }
                if all { best = max(best, (y1 - y0 + 1) * (x1 - x0 + 1)) }
            } } } }
            let found = PixelRectangle.largest(in: mask, width: w, height: h)
            #expect((found.map { $0.width * $0.height } ?? 0) == best)
            if let r = found {
                #expect((r.y..<(r.y + r.height)).allSatisfy { y in (r.x..<(r.x + r.width)).allSatisfy { x in mask[y * w + x] } })
            }
        }
    }
}
