/// A Stray scan's `rgb.mp4`: frame n of the video is frame n of the scan.
enum StrayVideo {
    /// What the container says, without decoding frames.
    struct Summary: Sendable {
        var width: Int
        var height: Int
        var codec: String
        var frameCount: Int?
        var framesPerSecond: Double?
    }

    /// Opens the video to read its size, codec, frame count and rate.
    static func probe(_ path: String) throws -> Summary {
        let decoder = try VideoDecoder(path: path)
        return Summary(width: decoder.width, height: decoder.height, codec: decoder.codecName,
                       frameCount: decoder.frameCount, framesPerSecond: decoder.framesPerSecond)
    }

    /// The video's frames by number: frames asked in increasing order are decoded in
    /// one pass (the ones between are decoded and dropped, as a video needs); an earlier
    /// frame makes it seek.
    final class Frames {
        let path: String
        private let decoder: VideoDecoder
        /// The number of the frame `nextFrame()` returns.
        private var next = 0

        init(_ path: String) throws {
            self.path = path
            decoder = try VideoDecoder(path: path)
        }

        /// Frame `index` as RGB.
        func frame(_ index: Int) throws -> ColorImage {
            try read(index) { try decoder.nextFrame()?.image }
        }

        /// Frame `index` as decoded (`VideoDecoder.nextPicture`).
        func picture(_ index: Int) throws -> VideoFrame {
            try read(index) { try decoder.nextPicture()?.frame }
        }

        /// Decodes (`decode`) up to frame `index`, seeking back when it was passed.
        private func read<T>(_ index: Int, _ decode: () throws -> T?) throws -> T {
            if index < next {
                try decoder.seek(toFrame: index)
                next = index
            }
            while true {
                guard let frame = try decode() else {
                    throw RGBDError(.invalidScene, file: path, location: "frame \(index)",
                                    "the video ends after \(next) frames")
                }
                next += 1
                if next - 1 == index { return frame }
            }
        }
    }
}
