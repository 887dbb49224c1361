import Testing
@testable import RGBDOutput
@testable import RGBDKit
import RGBDSynth

/// The pieces of `CaptureInfo` against independent computations.
@Suite struct CaptureInfoTests {
    /// `numpy.percentile` (linear) by sorting.
    static func percentile(_ sorted: [Float], _ p: Double) -> Double {
        let position = Double(sorted.count - 1) * p / 100
        let k = Int(position.rounded(.down))
        let next = min(k + 1, sorted.count - 1)
        return Double(sorted[k]) + (position - Double(k)) * (Double(sorted[next]) - Double(sorted[k]))
    }

    @Test(arguments: [1, 2, 3, 19, 20, 21, 1000, 4097])
    func percentilesEqualSortingOnes(count: Int) {
        var rng = SeededGenerator(seed: UInt64(count))
        for duplicates in [false, true] {
            // Real depth maps repeat values a lot (a flat wall); holes are NaN.
            let values: [Float] = (0..<count).map { _ in
                if UInt8.random(in: 0...9, using: &rng) == 0 { return .nan }
                return duplicates ? Float(Int.random(in: 1...4, using: &rng)) / 2 : Float.random(in: 0.2...9, using: &rng)
            }
            let depth = DepthMap(width: count, height: 1, channels: 1, samples: values)
            let stats = CaptureInfo.depthStatistics(depth)
            let valid = values.filter { $0.isFinite }.sorted()
            #expect(stats.validCount == valid.count && stats.holeCount == count - valid.count)
            #expect(stats.holeFraction == Double(count - valid.count) / Double(count))
            guard !valid.isEmpty else {
                #expect(stats.min == nil && stats.percentiles.isEmpty)
                continue
            }
            #expect(stats.min == Double("\(valid[0])") && stats.max == Double("\(valid[valid.count - 1])"))
            #expect(stats.percentiles.map(\.percent) == [5, 50, 95])
            for p in stats.percentiles {
                #expect(p.meters == Self.percentile(valid, Double(p.percent)), "p\(p.percent) of \(valid.count)")
            }
        }
    }

    @Test func selectionPlacesEveryRank() {
        var rng = SeededGenerator(seed: 5)
        let values: [Float] = (0..<300).map { _ in Float(Int.random(in: 0...40, using: &rng)) }
        let sorted = values.sorted()
        for k in [0, 1, 57, 150, 298, 299] {
            var copy = values
            copy.withUnsafeMutableBufferPointer { Selection.select($0, k, in: 0..<300) }
            #expect(copy[k] == sorted[k])
            #expect(copy[..<k].allSatisfy { $0 <= copy[k] } && copy[(k + 1)...].allSatisfy { $0 >= copy[k] })
        }
    }

    /// `radiusRises` (a closed form per segment) against dense sampling of the model.
    @Test func radiusRisesAgreesWithSampling() {
        var rng = SeededGenerator(seed: 9)
        var folded = 0
        for trial in 0..<200 {
            let amplitude = trial < 100 ? Float(0.02) : Float(0.3)
            let table: [Float] = (0..<12).map { _ in Float.random(in: -amplitude...amplitude, using: &rng) }
            let model = LensDistortion(center: SIMD2(50, 40), table: table, width: 100, height: 80)
            var rises = true, previous = -1.0
            for k in 0...40000 {
                let r = Double(k) / 40000 * 1.5 * model.maxRadius
                let mapped = r * (1 + model.magnification(atRadius: r))
                if mapped <= previous { rises = false }
                previous = mapped
            }
            #expect(CaptureInfo.TableSummary(table).radiusRises == rises, "\(table)")
            if !rises { folded += 1 }
        }
        #expect(folded > 10 && folded < 200)
        #expect(CaptureInfo.TableSummary(SyntheticCapture.realisticPincushionTable).radiusRises)
        #expect(!CaptureInfo.TableSummary(SyntheticCapture.realisticPincushionTable).monotonic)
        #expect(CaptureInfo.TableSummary(SyntheticCapture.iPhoneCalibration().lookupTable).monotonic)
    }

    @Test func jsonTextIsValidAndOrdered() {
        let value = JSONValue.object([
            .init("b", .array([.int(1), .number(0.5), .number(.nan), .null])),
            .init("a", .string("tab\t\"quote\"")),
            .init("c", .array([.object([.init("x", .bool(true))])])),
        ])
        #expect(value.text() == """
        {
          "b": [1, 0.5, null, null],
          "a": "tab\\t\\"quote\\"",
          "c": [
            {
              "x": true
            }
          ]
        }
        """)
    }
}
