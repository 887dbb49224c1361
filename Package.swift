// swift-tools-version: 6.1
import PackageDescription

// OpenEXR's pkg-config file adds -pthread to its compiler flags, which SwiftPM refuses with
// a warning on every build. On Linux its headers are under /usr/include (the shim includes
// <OpenEXR/openexr.h>) and its C library is found by name, so pkg-config is not needed there;
// Homebrew's prefix is not searched by default, so macOS keeps it.
#if os(Linux)
let openEXRPkgConfig: String? = nil
#else
let openEXRPkgConfig: String? = "OpenEXR"
#endif

// FFmpeg's headers (CFFmpegHeaders, below): pkg-config only where they are not on the default
// include path.
#if os(Linux)
let ffmpegPkgConfig: String? = nil
#else
let ffmpegPkgConfig: String? = "libavformat"
#endif

// PROJ's headers (CProjHeaders, below): likewise.
#if os(Linux)
let projPkgConfig: String? = nil
#else
let projPkgConfig: String? = "proj"
#endif

let package = Package(
    name: "rgbd",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "rgbd", targets: ["rgbd"]),
        // The C-ABI shared library (rgbd.h): libRGBDKit.so / libRGBDKit.dylib. (SwiftPM
        // cannot name it librgbd: product names must differ from the `rgbd` executable.)
        .library(name: "RGBDKit", type: .dynamic, targets: ["RGBDC", "RGBDKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // C libraries, found through pkg-config; each module map has a shim.h.
        .systemLibrary(
            name: "CTurboJPEG", pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"]), .brew(["jpeg-turbo"])]),
        .systemLibrary(
            name: "CPNG", pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"]), .brew(["libpng"])]),
        .systemLibrary(
            name: "CTIFF", pkgConfig: "libtiff-4",
            providers: [.apt(["libtiff-dev"]), .brew(["libtiff"])]),
        .systemLibrary(
            name: "CJSONC", pkgConfig: "json-c",
            providers: [.apt(["libjson-c-dev"]), .brew(["json-c"])]),
        .systemLibrary(
            name: "CHEIF", pkgConfig: "libheif",
            providers: [.apt(["libheif-dev"]), .brew(["libheif"])]),
        // 2-D drawing (text, lines, colorbar) of `rgbd preview`'s sheet.
        .systemLibrary(
            name: "CCairo", pkgConfig: "cairo",
            providers: [.apt(["libcairo2-dev"]), .brew(["cairo"])]),
        .systemLibrary(
            name: "CISAL", pkgConfig: "libisal",
            providers: [.apt(["libisal-dev"]), .brew(["isa-l"])]),
        // libde265: HEVC decoding of common HEIC files' tiles, in parallel (libheif
        // decodes the rest).
        .systemLibrary(
            name: "CDE265", pkgConfig: "libde265",
            providers: [.apt(["libde265-dev"]), .brew(["libde265"])]),
        // libdeflate: the slow, near-optimal deflate of `--small-png`.
        .systemLibrary(
            name: "CDeflate", pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"]), .brew(["libdeflate"])]),

        // FFmpeg (libavformat, libavcodec, libswscale, libavutil): the videos of LiDAR scans
        // (Stray Scanner's rgb.mp4, HEVC or H.264), decoded on all cores (VideoDecoder).
        // Not linked: CFFmpeg's loader `dlopen`s the libraries at the first video (linked,
        // they and their ~130 dependencies were loaded at every start of rgbd). The headers
        // still come from the system: on Linux they are on the compiler's default include
        // path, so CFFmpegHeaders names no pkg-config package (SwiftPM links whatever a
        // system-library target's pkg-config file lists); Homebrew's prefix is not searched
        // by default, so on macOS it keeps pkg-config, which also links the libraries there.
        .systemLibrary(
            name: "CFFmpegHeaders", pkgConfig: ffmpegPkgConfig,
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev"]),
                        .brew(["ffmpeg"])]),
        .target(
            name: "CFFmpeg", dependencies: ["CFFmpegHeaders"],
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // OpenEXR's C library (OpenEXRCore): the EXR depth maps of Record3D's exports (EXRDepth).
        .systemLibrary(
            name: "COpenEXR", pkgConfig: openEXRPkgConfig,
            providers: [.apt(["libopenexr-dev"]), .brew(["openexr"])]),
        // AprilTag 3: fiducial markers (tag36h11, tagStandard41h12) found in rectified color.
        .systemLibrary(
            name: "CAprilTag", pkgConfig: "apriltag",
            providers: [.apt(["libapriltag-dev"]), .brew(["apriltag"])]),

        // PROJ: projected coordinate systems (rgbd cloud --crs EPSG:...), their WKT, and the
        // EGM96 geoid (EXIF altitudes are above mean sea level). Not linked, as FFmpeg:
        // CProj's loader `dlopen`s libproj at the first --crs (linked, it and its ~45
        // dependencies, libcurl's among them, were loaded at every start of rgbd).
        .systemLibrary(
            name: "CProjHeaders", pkgConfig: projPkgConfig,
            providers: [.apt(["libproj-dev"]), .brew(["proj"])]),
        .target(
            name: "CProj", dependencies: ["CProjHeaders"],
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),

        // The few inner loops written for AVX2 in C (a target attribute per function, so
        // no compiler flag), used when the CPU has AVX2; the Swift loops otherwise.
        .target(name: "CKernels"),

        // The library that does all the work, one target per layer in the order the data
        // flows (docs/architecture.md); each imports only the layers below it, re-exported,
        // so `import RGBDKit` gives a dependent all of it.
        // Files and byte formats: errors, buffers, file access, the codecs and containers.
        .target(
            name: "RGBDFoundation",
            dependencies: ["CTurboJPEG", "CPNG", "CTIFF", "CJSONC", "CHEIF", "CISAL", "CDeflate", "CDE265",
                           "CFFmpeg", "COpenEXR", "CKernels"]),
        // The camera model, place and gravity, and a still capture's ways in.
        .target(name: "RGBDCapture", dependencies: ["RGBDFoundation", "CJSONC", "CProj"]),
        // Lens removal and the inner loops.
        .target(name: "RGBDRectification", dependencies: ["RGBDCapture", "CKernels"]),
        // AprilTags on rectified color: detection, tag poses, registration, metric scale.
        .target(name: "RGBDMarkers", dependencies: ["RGBDRectification", "CAprilTag"]),
        // Scans as scenes (Stray Scanner, Record3D, registered captures).
        .target(name: "RGBDScan", dependencies: ["RGBDMarkers", "CJSONC"]),
        // Point clouds, TSDF fusion, marching cubes.
        .target(name: "RGBDReconstruction", dependencies: ["RGBDScan", "CKernels"]),
        // Writers of output files and dataset layouts; rgbd info and the preview sheet.
        .target(name: "RGBDOutput", dependencies: ["RGBDReconstruction", "CCairo", "CKernels"]),
        // The use cases the fronts call; the one module a Swift dependent imports.
        .target(name: "RGBDKit", dependencies: ["RGBDOutput"]),

        // The C interface: the hand-written header, and its Swift implementation
        // (`@c @implementation`, checked by the compiler against the header).
        // Scripts/build-library.sh builds the shared library for C and Python with the
        // Swift runtime linked in statically on Linux (a command-line option, not an
        // unsafe flag here, so that other packages can depend on this one).
        .target(name: "CRGBD"),
        .target(name: "RGBDC", dependencies: ["RGBDKit", "CRGBD"]),

        // Deterministic synthetic captures with ground truth (sample, tests, benchmarks).
        .target(name: "RGBDSynth", dependencies: ["RGBDKit", "CAprilTag"]),

        // Thin fronts.
        .executableTarget(
            name: "rgbd",
            dependencies: ["RGBDKit", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .executableTarget(
            name: "rgbd-synth",
            dependencies: ["RGBDSynth", "RGBDKit", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .executableTarget(name: "rgbd-bench", dependencies: ["RGBDKit", "RGBDSynth"]),

        // Fuzz targets (Fuzz/README.md). Scripts/fuzz.sh builds them with
        // -sanitize=fuzzer,address; in a normal build they replay the files they are given
        // (the checked-in corpora and past findings, which a test runs).
        .target(name: "CFuzzDriver", path: "Fuzz/CFuzzDriver"),
        .executableTarget(name: "FuzzJSON", dependencies: ["RGBDKit", "CFuzzDriver"], path: "Fuzz/FuzzJSON"),
        .executableTarget(name: "FuzzImage", dependencies: ["RGBDKit", "CFuzzDriver"], path: "Fuzz/FuzzImage"),
        .executableTarget(name: "FuzzCAPI", dependencies: ["RGBDC", "CRGBD", "RGBDKit", "CFuzzDriver"], path: "Fuzz/FuzzCAPI"),
        .executableTarget(name: "FuzzLens", dependencies: ["RGBDC", "CRGBD", "RGBDKit", "CFuzzDriver"], path: "Fuzz/FuzzLens"),
        .executableTarget(name: "FuzzPortrait", dependencies: ["RGBDKit", "CFuzzDriver"], path: "Fuzz/FuzzPortrait"),
        .executableTarget(name: "FuzzDepthImage", dependencies: ["RGBDKit", "CFuzzDriver"], path: "Fuzz/FuzzDepthImage"),
        .executableTarget(name: "FuzzScanTables", dependencies: ["RGBDKit", "CFuzzDriver"], path: "Fuzz/FuzzScanTables"),
        .executableTarget(name: "FuzzLZFSE", dependencies: ["RGBDKit", "CFuzzDriver"], path: "Fuzz/FuzzLZFSE"),
        .executableTarget(name: "FuzzZIP", dependencies: ["RGBDKit", "CFuzzDriver"], path: "Fuzz/FuzzZIP"),
        .executableTarget(name: "FuzzEXIF", dependencies: ["RGBDKit", "CFuzzDriver"], path: "Fuzz/FuzzEXIF"),
        .executableTarget(name: "FuzzEXR", dependencies: ["RGBDKit", "CFuzzDriver"], path: "Fuzz/FuzzEXR"),
        .executableTarget(name: "FuzzVideo", dependencies: ["RGBDKit", "CFuzzDriver"], path: "Fuzz/FuzzVideo"),

        .testTarget(name: "RGBDKitTests", dependencies: ["RGBDKit", "RGBDSynth"], exclude: ["Fixtures"]),
        .testTarget(name: "rgbdTests", dependencies: ["RGBDKit", "RGBDSynth"]),
    ],
    swiftLanguageModes: [.v6]
)
