// TEMPORARY (not to be committed): stands in until the FFmpeg wrapper is merged.
enum StrayVideo {
    struct Summary: Sendable {
        var width: Int
        var height: Int
        var codec: String
        var frameCount: Int?
        var framesPerSecond: Double?
    }
    static func probe(_ path: String) throws -> Summary {
        throw RGBDError(.io, file: path, "video reading is not merged yet")
    }
    final class Frames {
        init(_ path: String) throws { throw RGBDError(.io, file: path, "video reading is not merged yet") }
        func frame(_ index: Int) throws -> ColorImage { throw RGBDError(.io, "no") }
    }
}
