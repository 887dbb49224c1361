import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RGBDKit

/// Calibration plausibility (`CalibrationPlausibility`): the values of capture JSON and of
/// Portrait photos' metadata refused when implausible, each error naming its key or field.
@Suite struct CalibrationPlausibilityTests {
    /// The sample's calibration (4032×3024) with the given changes, as capture JSON.
    static func json(fx: String = "2900", cx: String = "2016.3", center: String = "2015.53",
                     pixelSize: String = "0.0014") -> [UInt8] {
        Array("""
            {"calibration_data": {"intrinsic_matrix": [[\(fx), 0, 0], [0, 2900, 0], [\(cx), 1511.6, 1]],
             "pixel_size": \(pixelSize), "intrinsic_matrix_reference_dimensions": [4032, 3024],
             "lens_distortion_center": [\(center), 1511.21], "lens_distortion_lookup_table": [0, -0.01, -0.02]},
             "depth_data": [[1, 2], [3, 4]]}
            """.utf8)
    }

    static func message(_ bytes: [UInt8]) -> String? {
        do {
            _ = try CaptureReader.parse(bytes, file: "c.json")
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func theSampleIsPlausible() throws {
        #expect(Self.message(Self.json()) == nil)
        let contents = try CaptureReader.parse(Self.json(), file: "c.json")
        #expect(CalibrationPlausibility.problem(of: contents.calibration) == nil)
    }

    @Test func implausibleValuesAreRefusedNamingTheKey() {
        let cases: [([UInt8], String)] = [
            (Self.json(fx: "5e-324"), "c.json: calibration_data.intrinsic_matrix: the focal lengths (fx 5e-324, fy 2900) must lie between 40.32 and 403200 pixels"),
            (Self.json(fx: "1e308", cx: "1e308"), "c.json: calibration_data.intrinsic_matrix: the focal lengths (fx 1e+308, fy 2900)"),
            (Self.json(fx: "40"), "c.json: calibration_data.intrinsic_matrix: the focal lengths (fx 40, fy 2900)"),
            (Self.json(cx: "1e308"), "c.json: calibration_data.intrinsic_matrix: the principal point (1e+308, 1511.6) is far outside the 4032×3024 reference image"),
            (Self.json(cx: "-4033"), "c.json: calibration_data.intrinsic_matrix: the principal point (-4033, 1511.6)"),
            (Self.json(center: "9000"), "c.json: calibration_data.lens_distortion_center: (9000.0, 1511.21) is far outside"),
            (Self.json(pixelSize: "2"), "c.json: calibration_data.pixel_size: the pixel size 2 mm is not plausible"),
            (Self.json(pixelSize: "1e309"), "c.json: calibration_data.pixel_size: expected a positive number of millimeters, found 1e309, beyond the range of a double"),
            (Self.json(pixelSize: "1" + String(repeating: "0", count: 100_000)), "c.json: calibration_data.pixel_size: expected a positive number of millimeters, found an integer beyond 64 bits"),
            (Self.json(cx: "1e400"), "c.json: calibration_data.intrinsic_matrix[2][0]: expected a finite number, found 1e400, beyond the range of a double"),
            (Self.json(cx: "-" + String(repeating: "9", count: 30)), "c.json: calibration_data.intrinsic_matrix[2][0]: expected a finite number, found an integer beyond 64 bits"),
        ]
        for (bytes, expected) in cases {
            let message = Self.message(bytes)
            #expect(message?.hasPrefix(expected) == true, "\(message ?? "accepted"), expected \(expected)")
            #expect(message?.contains("\n") != true)
        }
        // The edges are accepted: 1/100 and 100 times the larger side, a point one image away.
        #expect(Self.message(Self.json(fx: "40.32")) == nil)
        #expect(Self.message(Self.json(fx: "403200")) == nil)
        #expect(Self.message(Self.json(cx: "-4032")) == nil)
        #expect(Self.message(Self.json(pixelSize: "1")) == nil)
    }

    /// An XMP packet of a Portrait photo's depth image, the sample's values with changes.
    static func xmp(_ changes: [String: String?]) -> PortraitXMP {
        var fields = [
            "IntrinsicMatrix": "104.0 0 0 0 104.0 0 64.5 47.65 1", "IntrinsicMatrixReferenceWidth": "128",
            "IntrinsicMatrixReferenceHeight": "96", "LensDistortionCenterOffsetX": "63.75",
            "LensDistortionCenterOffsetY": "48.7", "PixelSize": "0.0595",
            "LensDistortionCoefficients": "0.0 -0.1475217 0.004215382 -2.116006e-05 0.0 0.0 0.0 0.0",
        ]
        for (key, value) in changes { fields[key] = value }
        return PortraitXMP(fields: fields)
    }

    static func xmpMessage(_ changes: [String: String?]) -> String? {
        do {
            _ = try PortraitReader.calibration(xmp(changes), imageWidth: 128, imageHeight: 96, file: "p.heic")
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func portraitValuesAreCheckedAndNamedByTheirOwnField() {
        #expect(Self.xmpMessage([:]) == nil)
        let cases: [([String: String?], String)] = [
            (["IntrinsicMatrix": "5e-324 0 0 0 104 0 64.5 47.65 1"], "p.heic: IntrinsicMatrix: the focal lengths (fx 5e-324, fy 104)"),
            (["IntrinsicMatrix": "1e308 0 0 0 104 0 1e308 47.65 1"], "p.heic: IntrinsicMatrix: the focal lengths (fx 1e+308"),
            (["IntrinsicMatrix": "104 0 0 0 104 0 NaN 47.65 1"], "p.heic: IntrinsicMatrix: expected a finite number, found NaN"),
            (["IntrinsicMatrixReferenceWidth": "NaN"], "p.heic: IntrinsicMatrixReferenceWidth: expected a finite number, found NaN"),
            (["IntrinsicMatrixReferenceWidth": nil], "p.heic: IntrinsicMatrixReferenceWidth: missing, but IntrinsicMatrixReferenceHeight is there"),
            (["IntrinsicMatrixReferenceHeight": "abc"], "p.heic: IntrinsicMatrixReferenceHeight: expected a number, found \"abc\""),
            (["LensDistortionCenterOffsetX": "1e300"], "p.heic: LensDistortionCenterOffsetX: the distortion center (1e+300, 48.7) is far outside"),
            (["LensDistortionCenterOffsetY": "inf"], "p.heic: LensDistortionCenterOffsetY: expected a finite number, found inf"),
            (["LensDistortionCenterOffsetY": nil], "p.heic: LensDistortionCenterOffsetY: missing"),
            (["PixelSize": "inf"], "p.heic: PixelSize: expected a finite number, found inf"),
            (["PixelSize": "-0.01"], "p.heic: PixelSize: the pixel size -0.01 mm is not plausible"),
            (["LensDistortionCoefficients": "0 NaN"], "p.heic: LensDistortionCoefficients: expected a finite number, found NaN"),
            (["LensDistortionCoefficients": nil], "p.heic: LensDistortionCoefficients: missing"),
        ]
        for (changes, expected) in cases {
            let message = Self.xmpMessage(changes)
            #expect(message?.hasPrefix(expected) == true, "\(changes): \(message ?? "accepted"), expected \(expected)")
        }
    }

    @Test func portraitRangeFieldsAreNamedByTheirOwnField() {
        func message(_ fields: [String: String]) -> String? {
            do {
                _ = try PortraitReader.depthInfo(PortraitXMP(fields: fields), bits: 8, container: "test", file: "p.heic")
                return nil
            } catch {
                return "\(error)"
            }
        }
        let base = ["AuxiliaryImageType": "disparity", "FloatMinValue": "0.5", "FloatMaxValue": "1.0"]
        #expect(message(base) == nil)
        #expect(message(base.merging(["FloatMaxValue": "NaN"]) { $1 }) == "p.heic: FloatMaxValue: expected a finite number, found NaN")
        #expect(message(base.merging(["FloatMinValue": "x"]) { $1 }) == "p.heic: FloatMinValue: expected a number, found \"x\"")
        #expect(message(base.merging(["IntMaxValue": "-inf"]) { $1 }) == "p.heic: IntMaxValue: expected a finite number, found -inf")
        #expect(message(base.filter { $0.key != "FloatMaxValue" })?.hasPrefix("p.heic: FloatMaxValue: missing") == true)
    }
}
