import Foundation
import Testing
@testable import RGBDKit

/// The lens polynomial against values worked out by hand.
@Suite struct LensPolynomialTests {
    /// A 6×8 reference with its center at (3, 4) and 1 mm pixels: r_max = 5 mm.
    func table(_ c: [Double], count: Int = 42) throws -> [Float] {
        try LensPolynomial.lookupTable(coefficients: c, pixelSize: 1, center: SIMD2(3, 4), width: 6, height: 8, count: count)
    }

    @Test func handComputedEntries() throws {
        // P = −t (percent), t = r²: at r = 5, s = 1 − 25/100 = 0.75, entry 1/0.75 − 1 = 1/3.
        let t = try table([0, -1])
        #expect(t.count == 42)
        #expect(t[0] == 0)
        #expect(abs(Double(t[41]) - 1.0 / 3.0) < 1e-7)
        // Entry 20: r = 5·20/41, t = 2500/1681, s = 1 − t/100.
        let r = 5.0 * 20 / 41, s = 1 - r * r / 100
        #expect(abs(Double(t[20]) - (1 / s - 1)) < 1e-7)
        // Two entries, P = t² (c2 = 1): at r = 5, P = 625, s = 7.25, 1/7.25 − 1 = −0.862069.
        let u = try table([0, 0, 1], count: 2)
        #expect(u == [0, Float(1 / 7.25 - 1)])
        // A constant: P = 100 → s = 2 → −0.5 everywhere.
        #expect(try table([100]).allSatisfy { $0 == -0.5 })
        // s ≤ 0 gives 0. Three entries at r = 0, 2.5, 5 mm with P = −10·t: s = 1, 0.375, −1.5.
        let v = try table([0, -10], count: 3)
        #expect(v == [0, Float(1 / 0.375 - 1), 0])
    }

    @Test func farthestCornerAndPixelSize() throws {
        // Center (1, 1) of a 10×4 reference, pixel 0.5 mm: corner (10, 4) at √(81 + 9) px.
        let t = try LensPolynomial.lookupTable(coefficients: [0, -1], pixelSize: 0.5, center: SIMD2(1, 1),
                                               width: 10, height: 4, count: 2)
        let r = 90.0.squareRoot() * 0.5, s = 1 - r * r / 100
        #expect(t[1] == Float(1 / s - 1))
    }

    @Test func badValuesAreErrors() {
        #expect(throws: RGBDError.self) { try table(Array(repeating: 0, count: 9)) }
        #expect(throws: RGBDError.self) { try table([0, .nan]) }
        #expect(throws: RGBDError.self) {
            try LensPolynomial.lookupTable(coefficients: [0], pixelSize: 0, center: SIMD2(3, 4), width: 6, height: 8)
        }
        #expect(throws: RGBDError.self) {
            try LensPolynomial.lookupTable(coefficients: [0], pixelSize: 1, center: SIMD2(1e9, 4), width: 6, height: 8)
        }
        // s just above 0 gives an entry beyond the table range (−1, 10).
        #expect(throws: RGBDError.self) { try table([-95]) }
    }
}

/// The XMP reader: both forms, any prefix, lists, and garbage.
@Suite struct PortraitXMPTests {
    static let dd = "http://ns.apple.com/depthData/1.0/", pdi = "http://ns.apple.com/pixeldatainfo/1.0/"

    @Test func elementsWithSequences() {
        let xml = """
        <?xpacket begin="\u{FEFF}"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about="" xmlns:q="\(Self.dd)" xmlns:z="\(Self.pdi)">
          <q:IntrinsicMatrix><rdf:Seq><rdf:li>2742.5</rdf:li><rdf:li>0</rdf:li> <rdf:li>0</rdf:li>
            <rdf:li>0</rdf:li><rdf:li>2742.5</rdf:li><rdf:li>0</rdf:li><rdf:li>2015.25</rdf:li><rdf:li>1511.5</rdf:li><rdf:li>1</rdf:li></rdf:Seq></q:IntrinsicMatrix>
          <q:Accuracy>relative</q:Accuracy>
          <z:NativeFormat>1751411059</z:NativeFormat>
          <z:StoredFormat>L008</z:StoredFormat>
          <!-- <q:PixelSize>9</q:PixelSize> -->
          <q:PixelSize><![CDATA[0.0014]]></q:PixelSize>
          <other:PixelSize xmlns:other="http://example.com/">7</other:PixelSize>
        </rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>
        """
        let xmp = PortraitXMP(Array(xml.utf8))
        #expect(xmp.numbers("IntrinsicMatrix") == [2742.5, 0, 0, 0, 2742.5, 0, 2015.25, 1511.5, 1])
        #expect(xmp.string("Accuracy") == "relative")
        #expect(xmp.fourCC("NativeFormat") == "hdis")
        #expect(xmp.fourCC("StoredFormat") == "L008")
        #expect(xmp.number("PixelSize") == 0.0014)
        #expect(xmp.describesDepth)
    }

    @Test func attributesAndEntities() {
        let xml = """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description xmlns:a='\(Self.pdi)' xmlns:b="\(Self.dd)"
            a:AuxiliaryImageType="disparity" a:FloatMinValue = "0.25" b:LensDistortionCoefficients="1e-3, -2 3.5"
            b:Quality="h&amp;l&#x21;" c:Accuracy="absolute"/></rdf:RDF></x:xmpmeta>
        """
        let xmp = PortraitXMP(Array(xml.utf8))
        #expect(xmp.string("AuxiliaryImageType") == "disparity")
        #expect(xmp.number("FloatMinValue") == 0.25)
        #expect(xmp.numbers("LensDistortionCoefficients") == [0.001, -2, 3.5])
        #expect(xmp.string("Quality") == "h&l!")
        // An undeclared prefix is not Apple's namespace.
        #expect(xmp.string("Accuracy") == nil)
    }

    @Test func mattesAreNotDepth() {
        // Apple marks a matte's image type `depth` and tells it by its subtype.
        let apple = PortraitXMP(fields: ["AuxiliaryImageType": "depth", "AuxiliaryImageSubType": "portraiteffectsmatte"])
        #expect(apple.describesMatte && !apple.describesDepth)
        let urn = PortraitXMP(fields: ["AuxiliaryImageType": "urn:com:apple:photo:2018:aux:portraiteffectsmatte"])
        #expect(urn.describesMatte && !urn.describesDepth)
        let depth = PortraitXMP(fields: ["AuxiliaryImageType": "disparity", "IntrinsicMatrix": "1 0 0 0 1 0 0 0 1"])
        #expect(depth.describesDepth && !depth.describesMatte)
    }

    @Test func wrongNamespaceIsIgnored() {
        let xml = #"<r xmlns:dd="http://ns.apple.com/depthData/2.0/"><dd:Accuracy>relative</dd:Accuracy></r>"#
        #expect(PortraitXMP(Array(xml.utf8)).fields.isEmpty)
    }

    @Test func notANumberIsNil() {
        let xmp = PortraitXMP(fields: ["PixelSize": "abc", "IntrinsicMatrix": "1 2 x", "IntMaxValue": "1 2"])
        #expect(xmp.number("PixelSize") == nil)
        #expect(xmp.numbers("IntrinsicMatrix") == nil)
        #expect(xmp.number("IntMaxValue") == nil)
        #expect(PortraitXMP(fields: ["NativeFormat": "7"]).fourCC("NativeFormat") == nil)
    }

    @Test func garbageNeverCrashes() {
        let good = Array("""
        <x xmlns:d="\(Self.dd)"><d:IntrinsicMatrix><rdf:Seq><rdf:li>1</rdf:li></rdf:Seq></d:IntrinsicMatrix><d:Accuracy a='1' b=2 c>x</d:Accuracy></x>
        """.utf8)
        var rng = SeededGenerator(seed: 14)
        for round in 0..<3000 {
            var bytes = good
            switch round % 3 {
            case 0: bytes = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count + 1))))
            case 1:
                for _ in 0..<4 { bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            default:
                let alphabet = Array("<>/=:'\"& ;#x!-[]?ab".utf8)
                bytes = (0..<Int(rng.next() % 200)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
            }
            _ = PortraitXMP(bytes)
        }
        // A truncated packet still gives the fields it completed.
        let truncated = PortraitXMP(Array(good.prefix(good.count - 20)))
        #expect(truncated.numbers("IntrinsicMatrix") == [1])
    }
}

/// Depth values: stored integers → float range → meters.
@Suite struct PortraitDepthTests {
    func info(_ fields: [String: String], bits: Int = 8) throws -> PortraitDepth {
        try PortraitReader.depthInfo(PortraitXMP(fields: fields), bits: bits, container: "test", file: "x.heic")
    }

    @Test func disparityIsInverted() throws {
        let d = try info(["AuxiliaryImageType": "disparity", "IntMinValue": "0", "IntMaxValue": "255",
                          "FloatMinValue": "0.5", "FloatMaxValue": "1.0", "Accuracy": "relative"])
        #expect(d.kind == .disparity && d.isRelative)
        #expect(d.meters(ofStored: 255) == 1)
        #expect(d.meters(ofStored: 0) == 2)
        #expect(d.meters(ofStored: 153) == 1.25)     // 0.5 + 0.5·153/255 = 0.8
    }

    @Test func depthKindFromNativeFormatAndDefaultIntRange() throws {
        let d = try info(["NativeFormat": "hdep", "FloatMinValue": "0", "FloatMaxValue": "4"], bits: 10)
        #expect(d.kind == .depth && d.intRange == SIMD2(0, 1023) && !d.isRelative)
        #expect(d.meters(ofStored: 1023) == 4)
        #expect(abs(Double(d.meters(ofStored: 511.5)) - 2) < 1e-6)
        #expect(d.meters(ofStored: 0).isNaN)     // zero depth = no depth
    }

    @Test func missingRangeOrKindIsAnError() {
        #expect(throws: RGBDError.self) { try info(["AuxiliaryImageType": "disparity"]) }
        #expect(throws: RGBDError.self) { try info(["FloatMinValue": "0", "FloatMaxValue": "1"]) }
        #expect(throws: RGBDError.self) {
            try info(["AuxiliaryImageType": "depth", "IntMinValue": "3", "IntMaxValue": "3", "FloatMinValue": "0", "FloatMaxValue": "1"])
        }
    }
}

/// Portrait photos made by Tests/python/portrait_files.py (`python Tests/python/portrait_files.py
/// Tests/RGBDKitTests/Fixtures/portrait --width 320 --height 240`): the scene's truth is in
/// truth.json (tables computed there with numpy), portrait-equivalent.json is the same
/// capture as a JSON.
@Suite struct PortraitReaderTests {
    static let directory = Path.join(Path.directory(of: Path.directory(of: #filePath)), "Fixtures/portrait")
    static func path(_ name: String) -> String { Path.join(directory, name) }

    struct Truth: Decodable {
        var width: Int, height: Int, depth_width: Int, depth_height: Int
        var fx: Double, fy: Double, cx: Double, cy: Double, center: [Double], pixel_size: Double
        var table: [Float], inverse_table: [Float]
        var extrinsic_rotation: [[Double]], extrinsic_translation: [Double]
    }

    static func truth() throws -> Truth {
        try JSONDecoder().decode(Truth.self, from: Data(FileSystem.readFile(path("truth.json"))))
    }

    static func ulps(_ a: Float, _ b: Float) -> Int {
        abs(Int(Int32(bitPattern: a.bitPattern)) - Int(Int32(bitPattern: b.bitPattern)))
    }

    @Test(arguments: ["portrait.heic", "portrait.jpg"])
    func calibrationIsTheTruth(name: String) throws {
        let truth = try Self.truth()
        let capture = try Capture.load(json: Self.path(name))
        let c = capture.calibration
        #expect(c.intrinsics == Intrinsics(fx: truth.fx, fy: truth.fy, cx: truth.cx, cy: truth.cy,
                                           width: truth.width, height: truth.height))
        #expect(c.distortionCenter == SIMD2(truth.center[0], truth.center[1]))
        #expect(c.pixelSize == truth.pixel_size)
        #expect(c.lookupTable.count == 42 && c.inverseLookupTable.count == 42)
        #expect(zip(c.lookupTable, truth.table).allSatisfy { Self.ulps($0, $1) <= 1 })
        #expect(zip(c.inverseLookupTable, truth.inverse_table).allSatisfy { Self.ulps($0, $1) <= 1 })
        #expect((capture.color.width, capture.color.height) == (truth.width, truth.height))
        // The depth image's coded size is padded to 80×64; its clap crops it to 80×60.
        #expect((capture.depth.width, capture.depth.height) == (truth.depth_width, truth.depth_height))
        #expect(capture.metadata.portrait?.kind == .disparity && capture.metadata.portrait?.isRelative == true)
        #expect(capture.stem == "portrait")
        let matte = try #require(capture.metadata.matte)
        #expect((matte.width, matte.height) == (2 * truth.depth_width, 2 * truth.depth_height))
    }

    @Test func heicDepthIsTheEquivalentJSONsDepth() throws {
        let portrait = try Capture.load(json: Self.path("portrait.heic"))
        let json = try Capture.load(json: Self.path("portrait-equivalent.json"), image: Self.path("portrait.heic"))
        #expect(identicalBits(portrait.depth.samples, json.depth.samples))
        #expect(Set(portrait.depth.samples) == [1, 1.25, 2])
        let a = portrait.rectified(), b = json.rectified()
        #expect(a.color.samples == b.color.samples)
        #expect(identicalBits(a.depth.samples, b.depth.samples))
        #expect(a.depthIntrinsics == b.depthIntrinsics && a.colorIntrinsics == b.colorIntrinsics)
    }

    @Test func fromBytesAlone() throws {
        let bytes = try FileSystem.readFile(Self.path("portrait.jpg"))
        let capture = try Capture.load(photoBytes: bytes, name: "IMG_1234.JPG")
        #expect(capture.stem == "IMG_1234")
        // A JPEG depth image is lossy: the planes' depths within a few tenths of a percent.
        #expect(capture.depth.samples.allSatisfy { $0 >= 0.99 && $0 <= 2.01 })
        for plane: Float in [1, 1.25, 2] {
            #expect(capture.depth.samples.filter { abs($0 - plane) < 0.005 }.count > 300)
        }
    }

    @Test func photoWithoutDepth() throws {
        // The primary image alone: the JPEG up to its MPF images.
        let jpeg = try FileSystem.readFile(Self.path("portrait.jpg"))
        let first = try #require(MPFIndex.images(in: jpeg).first)
        #expect(first.lowerBound == 0)
        var plain = Array(jpeg[first])
        #expect(throws: RGBDError(.invalidCapture, file: "IMG_0001.JPG", "holds no depth image")) {
            try Capture.load(photoBytes: plain, name: "IMG_0001.JPG")
        }
        // Bytes that are not a photo.
        plain = Array("{\"a\": 1}".utf8)
        #expect(throws: RGBDError.self) { try Capture.load(photoBytes: plain, name: "x.heic") }
    }

    /// Apple lists `ExtrinsicMatrix` ([R | t], 3×4) column by column; read that way, the
    /// fixtures' matrix is the truth's rotation (orthonormal, determinant +1) and
    /// translation. Read row by row it would not be a rotation at all.
    @Test(arguments: ["portrait.heic", "portrait.jpg"])
    func extrinsicMatrixIsARotationAndTranslation(name: String) throws {
        let truth = try Self.truth()
        let info = try CaptureInfo.read(json: Self.path(name))
        let m = try #require(info.portrait?.extrinsicMatrix)
        #expect(m.count == 12)
        let r = (0..<3).map { row in (0..<3).map { column in m[column * 3 + row] } }
        for i in 0..<3 {
            for j in 0..<3 {
                let dot = (0..<3).reduce(0.0) { $0 + r[$1][i] * r[$1][j] }
                #expect(abs(dot - (i == j ? 1 : 0)) < 1e-9, "columns \(i), \(j) of \(r)")
                #expect(abs(r[i][j] - truth.extrinsic_rotation[i][j]) < 1e-9)
            }
        }
        let det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0])
            + r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0])
        #expect(abs(det - 1) < 1e-9)
        #expect(Array(m[9..<12]) == truth.extrinsic_translation)
    }

    @Test func infoListsTablesAndAccuracy() throws {
        let info = try CaptureInfo.read(json: Self.path("portrait.heic"))
        #expect(info.portrait?.accuracy == "relative")
        #expect(info.depthOrigin == "portrait_xmp")
        guard case .object(let members) = info.jsonValue else { Issue.record("not an object"); return }
        let keys = members.map(\.key)
        #expect(keys.contains("lens_distortion_lookup_table") && keys.contains("inverse_lens_distortion_lookup_table"))
        let round = try #require(info.inverseConsistency)
        #expect(round.maxError < 0.5)
    }
}
