import ArgumentParser
import RGBDKit

/// The `rgbd` command: a thin front over RGBDKit.
struct RGBD: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rgbd",
        abstract: "Turn raw iPhone depth captures (JSON + JPEG) into rectified, metric data.",
        discussion: """
        A capture is a JPEG photo and a JSON file with the camera calibration \
        (AVCameraCalibrationData) and the depth map (meters), both distorted by the lens. \
        rgbd removes the lens distortion with Apple's lookup-table model and writes \
        ideal pinhole images and their intrinsics.
        """,
        version: RGBDVersion.string,
        subcommands: [Rectify.self, Cloud.self])
}

Interruption.removeStagedFilesOnSignal()
RGBD.main()
