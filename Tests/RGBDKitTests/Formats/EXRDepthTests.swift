import Foundation
import Testing
@testable import RGBDKit

/// `EXRDepth` against EXR files written at test time by an independent writer, the
/// OpenEXR Python bindings (PyPI `OpenEXR`, in the test venv): float32 and half depth with
/// NaN holes, uncompressed and compressed (ZIP, ZIPS, PIZ, RLE), scanline and tiled,
/// several channels, data windows inside and across the display window. Values are
/// compared exactly (half: as the writer rounded them). Then damaged and hostile files.
@Suite struct EXRDepthTests {
    /// Writes every case into the folder given as its argument: NAME.exr, and for those
    /// that must read, NAME.f32 (the expected map, little-endian float32, display
    /// window) and NAME.size ("width height").
    static let writer = #"""
import os, sys
import numpy as np
import OpenEXR

out = sys.argv[1]
rng = np.random.default_rng(7)

def depth(height, width):
    z = (0.25 + rng.random((height, width)) * 4.75).astype(np.float32)
    z[height // 4:height // 4 + 5, width // 3:width // 3 + 9] = np.nan   # a hole
    z[-1, -1] = np.nan
    return z

def tiles(x, y):
    t = OpenEXR.TileDescription()
    t.xSize, t.ySize, t.mode = x, y, OpenEXR.ONE_LEVEL
    return t

def write(name, channels, expected=None, compression=OpenEXR.NO_COMPRESSION, **header):
    header = dict(header, compression=compression)
    header.setdefault("type", OpenEXR.scanlineimage)
    OpenEXR.File(header, channels).write(os.path.join(out, name + ".exr"))
    if expected is not None:
        expected.astype("<f4").tofile(os.path.join(out, name + ".f32"))
        with open(os.path.join(out, name + ".size"), "w") as f:
            f.write(f"{expected.shape[1]} {expected.shape[0]}")

z = depth(192, 256)                                 # Record3D's size
half = z.astype(np.float16)
for name, compression in [("none", OpenEXR.NO_COMPRESSION), ("zip", OpenEXR.ZIP_COMPRESSION),
                          ("zips", OpenEXR.ZIPS_COMPRESSION), ("piz", OpenEXR.PIZ_COMPRESSION),
                          ("rle", OpenEXR.RLE_COMPRESSION)]:
    write("float-" + name, {"Z": z}, z, compression)
    write("half-" + name, {"Z": half}, half.astype(np.float32), compression)

# Tiled: 100×70 in 32×32 tiles (the last column and row partial).
t = depth(70, 100)
write("float-tiled-zip", {"Z": t}, t, OpenEXR.ZIP_COMPRESSION, type=OpenEXR.tiledimage, tiles=tiles(32, 32))
write("half-tiled-piz", {"Z": t.astype(np.float16)}, t.astype(np.float16).astype(np.float32),
      OpenEXR.PIZ_COMPRESSION, type=OpenEXR.tiledimage, tiles=tiles(16, 8))

# Channel choice: Z among others; R of RGB; Y of a luminance image; the only channel.
m = depth(48, 64)
write("rgbaz", {"R": m * 2, "G": m * 3, "B": m * 4, "A": np.ones_like(m), "Z": m}, m, OpenEXR.ZIP_COMPRESSION)
write("rgb", {"R": m, "G": m * 3, "B": m * 4}, m, OpenEXR.PIZ_COMPRESSION)
write("luminance", {"Y": m, "A": m * 5}, m)
write("single", {"depth.V": m}, m, OpenEXR.ZIP_COMPRESSION)

# Windows: data inside the display window (NaN around it), and across its corner.
d = depth(8, 10)
expected = np.full((12, 16), np.nan, np.float32)
expected[2:10, 3:13] = d
write("window-inside", {"Z": d}, expected, OpenEXR.ZIP_COMPRESSION,
      dataWindow=((3, 2), (12, 9)), displayWindow=((0, 0), (15, 11)))
expected = d[1:5, 2:7]                            # data (−2, −1)…(7, 6) over display (0, 0)…(4, 3)
write("window-across", {"Z": d}, expected, OpenEXR.NO_COMPRESSION,
      dataWindow=((-2, -1), (7, 6)), displayWindow=((0, 0), (4, 3)))
write("window-across-tiled", {"Z": d}, expected, OpenEXR.ZIP_COMPRESSION, type=OpenEXR.tiledimage,
      tiles=tiles(4, 4), dataWindow=((-2, -1), (7, 6)), displayWindow=((0, 0), (4, 3)))

# Files that must be refused.
write("two-channels", {"U": m, "V": m})
write("integers", {"Z": np.arange(48 * 64, dtype=np.uint32).reshape(48, 64)})
write("small", {"Z": depth(8, 8)})
"""#

    /// The files of `writer`, made once per test process.
    static let files: Result<URL, any Error> = Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rgbd-exr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try testPython())
        process.arguments = ["-c", writer, folder.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let complaint = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw WriterFailed(description: "the EXR writer failed: \(String(decoding: complaint, as: UTF8.self))")
        }
        return folder
    }

    struct WriterFailed: Error, CustomStringConvertible {
        var description: String
    }

    static func path(_ name: String) throws -> String {
        try files.get().appendingPathComponent("\(name).exr").path
    }

    /// The map `writer` expects for `name`.
    static func expected(_ name: String) throws -> DepthMap {
        let folder = try files.get()
        let size = try String(contentsOf: folder.appendingPathComponent("\(name).size"), encoding: .utf8)
            .split(separator: " ").compactMap { Int($0) }
        let bytes = try Data(contentsOf: folder.appendingPathComponent("\(name).f32"))
        let values = stride(from: 0, to: bytes.count, by: 4).map { i in
            Float(bitPattern: bytes[i..<i + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) })
        }
        return DepthMap(width: size[0], height: size[1], channels: 1, samples: values)
    }

    /// Same size, and every value the same (NaN where NaN is expected).
    static func same(_ a: DepthMap, _ b: DepthMap) -> Bool {
        a.width == b.width && a.height == b.height && a.channels == 1
            && zip(a.samples, b.samples).allSatisfy { ($0.isNaN && $1.isNaN) || $0.bitPattern == $1.bitPattern }
    }

    @Test(arguments: [
        "float-none", "float-zip", "float-zips", "float-piz", "float-rle",
        "half-none", "half-zip", "half-zips", "half-piz", "half-rle",
        "float-tiled-zip", "half-tiled-piz",
        "rgbaz", "rgb", "luminance", "single",
        "window-inside", "window-across", "window-across-tiled",
    ])
    func readsExactly(name: String) throws {
        let map = try EXRDepth.read(path: try Self.path(name))
        let expected = try Self.expected(name)
        #expect(Self.same(map, expected), "\(name): \(map.width)×\(map.height)")
        #expect(map.samples.contains { $0.isNaN }, "NaN is kept")
    }

    @Test func recordThreeDSize() throws {
        let map = try EXRDepth.read(path: try Self.path("float-zip"))
        #expect(map.width == 256 && map.height == 192 && map.channels == 1)
    }

    // MARK: Refusals

    /// The error of reading `path`, which must be one `RGBDError` line naming it.
    static func error(_ path: String) -> String? {
        do {
            _ = try EXRDepth.read(path: path)
            return nil
        } catch let error as RGBDError {
            #expect(error.description.hasPrefix(path + ": "), "\(error)")
            #expect(!error.description.contains("\n"), "\(error)")
            return error.description
        } catch {
            Issue.record("not an RGBDError: \(error)")
            return nil
        }
    }

    @Test func unsuitableChannelsAreRefused() throws {
        let two = try Self.path("two-channels")
        #expect(Self.error(two) == "\(two): no depth channel (Z, Y, R or a single channel) among its channels U, V")
        let integers = try Self.path("integers")
        #expect(Self.error(integers) == "\(integers): channel Z holds integers, not float depth")
    }

    @Test func truncatedAndGarbageFilesAreOneLineErrors() throws {
        let folder = try Self.files.get()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: try Self.path("float-zip")))
        var damaged: [(String, Data)] = [0, 4, 20, 100, 400, bytes.count / 2, bytes.count - 1].map {
            ("cut-\($0)", bytes.prefix($0))
        }
        var random = SeededGenerator(seed: 11)
        damaged.append(("garbage", Data((0..<5000).map { _ in UInt8(truncatingIfNeeded: random.next()) })))
        // The magic number and version, then garbage.
        damaged.append(("magic-then-garbage", bytes.prefix(8) + Data((0..<5000).map { _ in UInt8(truncatingIfNeeded: random.next()) })))
        damaged.append(("text", Data("not an EXR image\n".utf8)))
        for (name, data) in damaged {
            let path = folder.appendingPathComponent("\(name).exr").path
            try data.write(to: URL(fileURLWithPath: path))
            #expect(Self.error(path) != nil, "\(name) read without error")
        }
        let missing = folder.appendingPathComponent("missing.exr").path
        #expect(Self.error(missing)?.hasPrefix("\(missing): cannot open the file") == true)
    }

    /// `data` with the header's box attribute `name` (xMin, yMin, xMax, yMax) replaced.
    static func replacingBox(_ name: String, in data: Data, with box: [Int32]) throws -> Data {
        var bytes = [UInt8](data)
        let key = Array((name + "\0box2i\0").utf8)
        let at = try #require((0..<(bytes.count - key.count)).first { bytes[$0..<$0 + key.count].elementsEqual(key) })
        let values = at + key.count + 4                       // after the attribute's size
        for (i, value) in box.enumerated() {
            for b in 0..<4 { bytes[values + 4 * i + b] = UInt8(truncatingIfNeeded: UInt32(bitPattern: value) >> (8 * b)) }
        }
        return Data(bytes)
    }

    @Test func absurdSizesAreRefusedBeforeAllocating() throws {
        let folder = try Self.files.get()
        let small = try Data(contentsOf: URL(fileURLWithPath: try Self.path("small")))
        // 2 billion × 2 billion pixels.
        var data = try Self.replacingBox("dataWindow", in: small, with: [0, 0, 0x7FFF_FFF0, 0x7FFF_FFF0])
        data = try Self.replacingBox("displayWindow", in: data, with: [0, 0, 0x7FFF_FFF0, 0x7FFF_FFF0])
        let huge = folder.appendingPathComponent("huge.exr").path
        try data.write(to: URL(fileURLWithPath: huge))
        let message = Self.error(huge)
        #expect(message != nil)
        // 4000×4000 (within the 16-megapixel limit) claimed by a file of a few hundred bytes:
        // its chunk table alone (4000 offsets) would be larger than the file.
        data = try Self.replacingBox("dataWindow", in: small, with: [0, 0, 3999, 3999])
        data = try Self.replacingBox("displayWindow", in: data, with: [0, 0, 3999, 3999])
        let claimed = folder.appendingPathComponent("claimed.exr").path
        try data.write(to: URL(fileURLWithPath: claimed))
        #expect(Self.error(claimed)?.contains("truncated or corrupt") == true, "\(Self.error(claimed) ?? "no error")")
        // Over 16 megapixels in a valid-looking header.
        data = try Self.replacingBox("dataWindow", in: small, with: [0, 0, 4999, 3999])
        data = try Self.replacingBox("displayWindow", in: data, with: [0, 0, 4999, 3999])
        let large = folder.appendingPathComponent("large.exr").path
        try data.write(to: URL(fileURLWithPath: large))
        #expect(Self.error(large) == "\(large): a data window of 5000×4000 pixels, over the depth limit of 16 megapixels")
    }
}
