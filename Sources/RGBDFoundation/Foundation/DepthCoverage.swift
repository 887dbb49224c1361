extension ImageBuffer where Sample == Float {
    /// Whether a depth sample holds a depth: finite and positive. NaN (rgbd's hole),
    /// ±∞, 0 and negatives are holes. Reading a capture turns every value that is not a
    /// depth into NaN, so in a capture's depth map this is `isFinite`.
    @inlinable
    public static func isDepth(_ z: Float) -> Bool { z.isFinite && z > 0 }

    /// How many of the pixels hold a depth (`isDepth`) and how many are holes.
    package var coverage: DepthCoverage {
        var valid = 0
        for z in samples where DepthMap.isDepth(z) { valid += 1 }
        return DepthCoverage(validCount: valid, holeCount: samples.count - valid)
    }
}

/// The pixels of a depth map that hold a depth and the holes: the counts `rgbd info`
/// and `rgbd preview` report (`DepthMap.coverage`).
package struct DepthCoverage: Equatable, Sendable {
    /// Pixels with a depth.
    package var validCount: Int
    /// Pixels without (NaN: 0, negative, `null`, … in the file).
    package var holeCount: Int

    /// Counts made elsewhere.
    package init(validCount: Int, holeCount: Int) {
        self.validCount = validCount
        self.holeCount = holeCount
    }

    /// `holeCount / (validCount + holeCount)`, 0 for an empty map.
    package var holeFraction: Double {
        validCount + holeCount > 0 ? Double(holeCount) / Double(validCount + holeCount) : 0
    }
}
