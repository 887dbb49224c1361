/// ARKit's confidence in a LiDAR depth pixel, as scans store it: the lowest level a
/// scene command uses (`SceneCloudOptions`, `SceneFusionOptions`, `SceneExportOptions`).
/// Frames without confidence maps use every depth, whatever the level.
public enum ConfidenceLevel: UInt8, Comparable, CaseIterable, Sendable {
    /// 0: ARKit's low confidence (depth edges, far, dark or shiny surfaces).
    case low = 0
    /// 1: medium.
    case medium = 1
    /// 2: high (on real scans, the only level whose depth lies on the surfaces).
    case high = 2

    /// The level numbered `value` (0 low, 1 medium, 2 high).
    ///
    /// - Throws: `RGBDError` (`.invalidArgument`, pointing at `.minConfidence`) for any
    ///   other number.
    public init(validating value: Int) throws {
        guard let level = UInt8(exactly: value).flatMap(ConfidenceLevel.init(rawValue:)) else { throw Self.refusal("\(value)") }
        self = level
    }

    /// The level written `text`: its number (0, 1, 2) or its name (low, medium, high).
    ///
    /// - Throws: `RGBDError` (`.invalidArgument`, pointing at `.minConfidence`) for
    ///   anything else.
    public init(validating text: String) throws {
        if let value = Int(text) {
            try self.init(validating: value)
        } else if let level = Self.allCases.first(where: { $0.name == text }) {
            self = level
        } else {
            throw Self.refusal(RGBDError.shown(text))
        }
    }

    private static func refusal(_ given: String) -> RGBDError {
        RGBDError(.invalidArgument, "the confidence levels are 0 (low), 1 (medium) and 2 (high), not \(given)",
                  argument: .minConfidence)
    }

    public static func < (a: ConfidenceLevel, b: ConfidenceLevel) -> Bool { a.rawValue < b.rawValue }

    /// The level's name: low, medium or high.
    public var name: String {
        switch self {
        case .low: "low"
        case .medium: "medium"
        case .high: "high"
        }
    }
}
