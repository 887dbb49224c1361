import Testing
@testable import RGBDKit
import RGBDSynth

/// The scheduled pipeline writes exactly what the step-by-step API writes.
@Suite struct RectifyPipelineTests {
    @Test func pipelineEqualsStepByStep() throws {
        let directory = try TemporaryDirectory()
        let capture = try SyntheticCapture(colorWidth: 640, colorHeight: 480, depthWidth: 160, depthHeight: 120)
            .write(to: directory.path, stem: "shot", jpegQuality: 90, supersampling: 1)
        let a = Path.join(directory.path, "a"), b = Path.join(directory.path, "b")
        let piped = try RectifyPipeline.run(json: capture.json, image: nil, directory: a)
        let stepped = try Capture.load(json: capture.json).rectified().write(to: b)
        #expect(piped.output.count == 4 && stepped.count == 4)
        for (x, y) in zip(piped.output, stepped) {
            #expect(try FileSystem.readFile(x) == FileSystem.readFile(y), "\(Path.lastComponent(x)) differs")
        }
        // Pixel-aligned pairs, both ways.
        var directories = [a, b]
        for alignment in PixelAlignment.allCases {
            let c = Path.join(directory.path, "c-\(alignment)"), d = Path.join(directory.path, "d-\(alignment)")
            directories += [c, d]
            let piped = try RectifyPipeline.run(json: capture.json, image: nil, directory: c, alignment: alignment)
            let stepped = try Capture.load(json: capture.json).rectified(alignedTo: alignment).write(to: d)
            for (x, y) in zip(piped.output, stepped) {
                #expect(try FileSystem.readFile(x) == FileSystem.readFile(y), "\(alignment): \(Path.lastComponent(x)) differs")
            }
            let color = try PNGCodec.decodeRGB(FileSystem.readFile(piped.output[0]))
            let depth = try PNGCodec.decodeGray16(FileSystem.readFile(piped.output[1]))
            let size = alignment == .depth ? (160, 120) : (640, 480)
            #expect(color.width == size.0 && color.height == size.1 && depth.width == size.0 && depth.height == size.1)
        }
        // Cleanup of the temporary directory's subfolders.
        for dir in directories {
            for name in try FileSystem.contentsOfDirectory(dir) { FileSystem.removeQuietly(Path.join(dir, name)) }
            FileSystem.removeDirectoryQuietly(dir)
        }
        for name in try FileSystem.contentsOfDirectory(directory.path) { FileSystem.removeQuietly(Path.join(directory.path, name)) }
    }
}
