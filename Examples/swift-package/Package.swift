// swift-tools-version: 6.1
// An app that uses rgbd's library, RGBDKit, as a SwiftPM dependency.
import PackageDescription

let package = Package(
    name: "rgbd-example",
    platforms: [.macOS(.v13)],
    dependencies: [
        // The repository this example sits in. In your own package:
        //   .package(url: "https://example.com/you/rgbd.git", from: "0.1.0")
        // (the URL of your clone or of the project's repository).
        .package(name: "rgbd", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "rgbd-example",
            dependencies: [.product(name: "RGBDKit", package: "rgbd")]),
    ],
    swiftLanguageModes: [.v6]
)
