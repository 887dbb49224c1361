// Loads a capture with RGBDKit, rectifies it and prints what came out.
//
//   swift run rgbd-example [CAPTURE.json]      (default: ../sample/shot.json)
import Foundation
import RGBDKit

let json = CommandLine.arguments.dropFirst().first ?? "../sample/shot.json"
do {
    let capture = try Capture.load(json: json)
    let rectified = capture.rectified()
    let k = rectified.depthIntrinsics
    let valid = rectified.depth.samples.reduce(0) { $0 + ($1.isNaN ? 0 : 1) }
    print("capture: \(capture.stem) (rgbd \(RGBDVersion.string))")
    print("color: \(capture.color.width)x\(capture.color.height) -> rectified \(rectified.color.width)x\(rectified.color.height)")
    print("depth: \(capture.depth.width)x\(capture.depth.height) -> rectified \(rectified.depth.width)x\(rectified.depth.height), \(valid) pixels with depth")
    print("depth intrinsics: fx \(k.fx) fy \(k.fy) cx \(k.cx) cy \(k.cy)")
} catch {
    FileHandle.standardError.write(Data("rgbd-example: \(error)\n".utf8))
    exit(1)
}
