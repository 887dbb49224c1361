import Testing
@testable import RGBDKit

/// The depth metadata of four real iPhone Portrait photos (Fixtures/real-xmp: the XMP
/// packets only, extracted byte for byte; sources and licences in its README): an iPhone
/// 13 Pro rear-camera HEIC (pug), two iPhone 14 TrueDepth HEICs and an iPhone XS
/// TrueDepth JPEG.
///
/// Every expected figure below was computed independently of rgbd by
/// `Fixtures/real-xmp/expected.py` (the packets parsed with xml.etree, the tables and the
/// lens model evaluated with numpy: float32 tables, linear interpolation, the last entry
/// beyond r_max) and copied here; the same figures were measured with `rgbd info` on the
/// photos themselves.
@Suite struct RealPortraitXMPTests {
    static let directory = Path.join(Path.directory(of: Path.directory(of: #filePath)), "Fixtures/real-xmp")

    /// What a packet says, as expected.py prints it.
    struct Packet: Sendable, CustomStringConvertible {
        var name: String
        var accuracy: String
        var reference: (width: Int, height: Int)
        var floatRange: SIMD2<Double>
        var fx: Double, fy: Double
        var center: SIMD2<Double>
        var extrinsic: [Double]
        var description: String { name }
    }

    static let upright: [Double] = [0, -1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0]

    static let packets: [Packet] = [
        Packet(name: "pug", accuracy: "relative", reference: (4032, 3024), floatRange: SIMD2(1.498047, 4.382812),
               fx: 3032.59423828125, fy: 3032.59423828125, center: SIMD2(1990.331298828125, 1515.205078125),
               extrinsic: [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]),
        Packet(name: "heic_depth_data", accuracy: "absolute", reference: (2316, 3088),
               floatRange: SIMD2(0.508301, 3.767578), fx: 2085.5478515625, fy: 2718.403564453125,
               center: SIMD2(806, 1543.9998779296875), extrinsic: upright),
        Packet(name: "heic_face_data", accuracy: "absolute", reference: (2316, 3088),
               floatRange: SIMD2(0.493652, 3.402344), fx: 2720.71826171875, fy: 2720.71826171875,
               center: SIMD2(1158, 1543.9998779296875), extrinsic: upright),
        Packet(name: "jpeg_depth_data", accuracy: "absolute", reference: (2316, 3088),
               floatRange: SIMD2(0.554199, 2.808594), fx: 2890.630615234375, fy: 2890.630615234375,
               center: SIMD2(1163.1043701171875, 1534.6602783203125), extrinsic: upright),
    ]

    static func xmp(_ name: String) throws -> PortraitXMP {
        PortraitXMP(try FileSystem.readFile(Path.join(directory, name + ".xmp")))
    }

    /// The calibration of a packet. The photo size given is 1×1, so the reference size
    /// must come from the packet.
    static func calibration(_ name: String) throws -> Calibration {
        try PortraitReader.calibration(try xmp(name), imageWidth: 1, imageHeight: 1, file: name)
    }

    /// The calibration scaled to a photo of the reference size (the photos' own size).
    static func distortion(_ name: String) throws -> (forward: LensDistortion, inverse: LensDistortion) {
        let calibration = try calibration(name)
        let (w, h) = calibration.referenceSize
        let scaled = calibration.scaled(toWidth: w, height: h)
        return (scaled.distortion, try #require(scaled.inverseDistortion))
    }

    @Test(arguments: packets)
    func fieldsAreReadAsStored(packet: Packet) throws {
        let xmp = try Self.xmp(packet.name)
        #expect(xmp.describesDepth && !xmp.describesMatte)
        let depth = try PortraitReader.depthInfo(xmp, bits: 8, container: "test", file: packet.name)
        #expect(depth.kind == .disparity)
        #expect(depth.storedFormat == "L008" && depth.nativeFormat == "hdis")
        #expect(depth.accuracy == packet.accuracy)
        #expect(depth.quality == "high" && depth.filtered == true)
        #expect(depth.intRange == SIMD2(0, 255) && depth.floatRange == packet.floatRange)
        #expect(depth.extrinsicMatrix == packet.extrinsic)
        #expect(xmp.numbers("LensDistortionCoefficients")?.count == 8)
        #expect(xmp.numbers("InverseLensDistortionCoefficients")?.count == 8)

        let calibration = try Self.calibration(packet.name)
        #expect(calibration.referenceSize == packet.reference)
        #expect(calibration.pixelSize == (packet.name == "pug" ? 0.0019 : 0.001))
        let k = calibration.intrinsics
        #expect(k.fx == packet.fx && k.fy == packet.fy)
        #expect(calibration.distortionCenter == packet.center)
        #expect(calibration.lookupTable.count == 42 && calibration.inverseLookupTable.count == 42)
    }

    /// iPhone 13 Pro, rear cameras: a pincushion that rises to +1.855 % (entry 31) and
    /// falls back to +1.374 % at the corner; the corner pixels move about 34.9 px.
    @Test func pugTableHasTheMeasuredShape() throws {
        let calibration = try Self.calibration("pug")
        let table = calibration.lookupTable
        // expected.py: last np.float32(0.013737532), max np.float32(0.018546028) at 31.
        #expect(abs(Double(table[41]) - 0.013737532) < 1e-9)
        #expect(abs(Double(table.max() ?? 0) - 0.018546028) < 1e-9)
        #expect(table.firstIndex(of: table.max() ?? 0) == 31)
        #expect(table[0] == 0)
        #expect(!CaptureInfo.TableSummary(table).monotonic)
        // expected.py: corners 34.705440, 34.923306, 34.899950, 34.680506 px.
        let corners = CaptureInfo.cornerDisplacements(try Self.distortion("pug").forward).map(\.pixels)
        for (measured, expected) in zip(corners, [34.705440, 34.923306, 34.899950, 34.680506]) {
            #expect(abs(measured - expected) < 1e-5, "\(corners)")
        }
    }

    /// The TrueDepth HEICs store all-zero coefficients: no distortion, both tables zero.
    @Test(arguments: ["heic_depth_data", "heic_face_data"])
    func trueDepthHEICsHaveZeroTables(name: String) throws {
        let calibration = try Self.calibration(name)
        #expect(calibration.lookupTable == [Float](repeating: 0, count: 42))
        #expect(calibration.inverseLookupTable == [Float](repeating: 0, count: 42))
        let (forward, inverse) = try Self.distortion(name)
        #expect(CaptureInfo.cornerDisplacements(forward).allSatisfy { $0.pixels == 0 })
        let round = CaptureInfo.inverseConsistency(forward: forward, inverse: inverse)
        #expect(round.beyondTable == 0 && round.maxError < 1e-9)
    }

    /// iPhone XS TrueDepth JPEG: a table that dips below 0 at the center (entry 0 is
    /// −1.15e-6), rises to +0.986 % at the corner; the corner pixels move up to 19.07 px.
    @Test func xsTableHasTheMeasuredShape() throws {
        let table = try Self.calibration("jpeg_depth_data").lookupTable
        // expected.py: first np.float32(-1.1487322e-06), last np.float32(0.009863746) = max.
        #expect(abs(Double(table[0]) + 1.1487322e-06) < 1e-12)
        #expect(abs(Double(table[41]) - 0.009863746) < 1e-9 && table.max() == table[41])
        #expect(!CaptureInfo.TableSummary(table).monotonic)
        // expected.py: corners 17.827569, 17.239354, 18.478418, 19.070030 px.
        let corners = CaptureInfo.cornerDisplacements(try Self.distortion("jpeg_depth_data").forward).map(\.pixels)
        for (measured, expected) in zip(corners, [17.827569, 17.239354, 18.478418, 19.070030]) {
            #expect(abs(measured - expected) < 1e-5, "\(corners)")
        }
    }

    /// The round trip forward then inverse is measured only where the forward image lies
    /// within the inverse table's radius. On the XS photo 3 of the 41×31 grid points land
    /// beyond it; with them the largest error was 1.44 px (the inverse magnification held
    /// at its last entry there), without them it is 0.097 px. Likewise the 13 Pro: 2
    /// points, 0.45 px with them, 0.159 px without.
    @Test(arguments: [
        // name, beyond, max inside, mean inside, max over all points (expected.py)
        ("jpeg_depth_data", 3, 0.096838, 0.005584, 1.441352),
        ("pug", 2, 0.158654, 0.028961, 0.449945),
    ])
    func roundTripIsMeasuredInsideTheInverseTable(name: String, beyond: Int, max: Double, mean: Double, all: Double) throws {
        let (forward, inverse) = try Self.distortion(name)
        let round = CaptureInfo.inverseConsistency(forward: forward, inverse: inverse)
        #expect((round.columns, round.rows) == (41, 31))
        #expect(round.beyondTable == beyond && round.measured == 41 * 31 - beyond)
        #expect(abs(round.maxError - max) < 1e-5 && round.maxError < 0.2, "\(round)")
        #expect(abs(round.meanError - mean) < 1e-5, "\(round)")
        // The points left out are the ones that made the old figure: over every point of
        // the grid, the largest error is numpy's all-points figure.
        var worst = 0.0
        for j in 0..<31 {
            for i in 0..<41 {
                let p = SIMD2(Double(i) * Double(forward.width - 1) / 40, Double(j) * Double(forward.height - 1) / 30)
                let d = inverse.apply(to: forward.apply(to: p)) - p
                worst = Swift.max(worst, (d * d).sum().squareRoot())
            }
        }
        #expect(abs(worst - all) < 1e-5 && worst > 2 * round.maxError)
    }

    /// One TrueDepth HEIC has fx/fy 0.767 and its distortion center 352 px (9.1 % of the
    /// diagonal) from the principal point: both warned about; the others pass.
    @Test(arguments: packets)
    func unusualCalibrationsAreWarnedAbout(packet: Packet) throws {
        let warnings = CaptureInfo.calibrationWarnings(try Self.calibration(packet.name), json: packet.name)
        if packet.name == "heic_depth_data" {
            #expect(warnings.count == 2, "\(warnings)")
            #expect(warnings.first?.contains("fx/fy is 0.767 ") == true, "\(warnings)")
            #expect(warnings.last?.contains(" is 352 px from the principal point (1158, 1544), 9.1 % ") == true, "\(warnings)")
        } else {
            #expect(warnings.isEmpty, "\(warnings)")
        }
    }

    /// The thresholds: 5 % on fx/fy and 5 % of the diagonal (5000 px for 3000×4000).
    @Test func calibrationWarningThresholds() {
        func warnings(fx: Double, centerX: Double) -> [String] {
            let calibration = Calibration(
                intrinsics: Intrinsics(fx: fx, fy: 3000, cx: 1500, cy: 2000, width: 3000, height: 4000),
                pixelSize: 0.001, distortionCenter: SIMD2(centerX, 2000),
                lookupTable: [Float](repeating: 0, count: 42), inverseLookupTable: [])
            return CaptureInfo.calibrationWarnings(calibration, json: "c.json")
        }
        #expect(warnings(fx: 3149, centerX: 1500 + 249).isEmpty)
        #expect(warnings(fx: 2851, centerX: 1500 - 249).isEmpty)
        #expect(warnings(fx: 3151, centerX: 1500).count == 1)
        #expect(warnings(fx: 2849, centerX: 1500).count == 1)
        #expect(warnings(fx: 3000, centerX: 1500 + 251).count == 1)
        #expect(warnings(fx: 3000, centerX: 1500 - 251).count == 1)
    }
}
