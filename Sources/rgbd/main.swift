import ArgumentParser
import RGBDKit

/// The `rgbd` command: a thin front over RGBDKit.
struct RGBD: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rgbd",
        abstract: "Turn raw iPhone depth captures (JSON + JPEG or HEIC photo, or a Portrait photo alone) into rectified, metric data.",
        discussion: """
        A capture is a photo (JPEG or HEIC) and a JSON file with the camera calibration \
        (AVCameraCalibrationData) and the depth map (meters), both distorted by the lens. \
        An iPhone Portrait photo (HEIC or JPEG holding a depth image and Apple's depth \
        metadata) is a capture by itself, no JSON. rgbd removes the lens distortion with \
        Apple's lookup-table model and writes ideal pinhole images and their intrinsics.

        Exit status: 0 when every capture was processed, 1 when any failed (or the batch \
        was refused before writing anything), 64 for a usage error, 130 when interrupted \
        (Ctrl-C), 143 when terminated (SIGTERM).
        """,
        version: RGBDVersion.string,
        subcommands: [Rectify.self, Cloud.self, Info.self, Preview.self, Export.self, Fuse.self, Refine.self,
                      Register.self])
}

/// Parses and runs the command; returns the exit status. Everything it made (the
/// command, an error) is released when it returns, before the process exits.
func runCommand() -> Int32 {
    // The subcommand parsed, for the usage of a usage error found while it runs.
    var parsed: (any ParsableCommand.Type)?
    do {
        var command = try RGBD.parseAsRoot()
        parsed = type(of: command)
        try command.run()
        return 0
    } catch {
        Interruption.waitIfInterrupted()
        let code = RGBD.exitCode(for: error)
        let message = parsed.flatMap { usageErrorMessage(error, of: $0) } ?? RGBD.fullMessage(for: error)
        if !message.isEmpty {
            if code == .success {
                print(message)
            } else {
                Terminal.printError(message + "\n")
            }
        }
        return code.rawValue
    }
}

/// The message of a `ValidationError` that `command` threw while running (a usage error
/// only the inputs reveal, such as several captures for one output file), with that
/// command's usage; the parser's own message would give the root command's. Nil for
/// any other error, or for the root command.
func usageErrorMessage(_ error: any Error, of command: any ParsableCommand.Type) -> String? {
    guard let error = error as? ValidationError, command != RGBD.self else { return nil }
    let name = "rgbd \(command._commandName)"
    return """
        Error: \(error.message)
        Usage: \(RGBD.usageString(for: command))
          See '\(name) --help' for more information.
        """
}

// One exit path: the command's end goes through `Interruption.exit`, which defers to an
// interruption already under way (that one exits with 130 or 143).
Interruption.install()
Interruption.exit(runCommand())
