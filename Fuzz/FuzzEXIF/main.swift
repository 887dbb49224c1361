// libFuzzer target: any bytes as a photo's EXIF block (a TIFF structure: `EXIFMetadata`,
// rgbd's own IFD walker with Apple's MakerNote), the same bytes inside a JPEG's APP1 and a
// HEIF Exif item's payload, then what rgbd makes of them (`GeoTag`, `WorldFrame`). A
// finding is a crash, a sanitizer report, a warning of more than one line, a value out of
// its documented range, two readings that differ, containers that disagree with the bare
// block, or a frame whose transform is not a rotation. Fuzz/README.md.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFuzzDriver
import RGBDKit

exit(rgbd_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzzOne($0, $1) })

func fail(_ message: String) -> Never {
    fatalError("FuzzEXIF finding: \(message)")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// The documented ranges of what was read.
func checkValues(_ exif: EXIFMetadata) {
    for warning in exif.warnings { check(!warning.contains("\n") && !warning.isEmpty, "a warning of more than one line: \(warning)") }
    if let gps = exif.gps {
        check((gps.latitude == nil) == (gps.longitude == nil), "a latitude without a longitude")
        if let lat = gps.latitude { check(lat.isFinite && abs(lat) <= 90, "latitude \(lat)") }
        if let lon = gps.longitude { check(lon.isFinite && abs(lon) <= 180, "longitude \(lon)") }
        if let d = gps.imageDirection {
            check(d.isFinite && d >= 0 && d < 360, "direction \(d)")
            check(gps.imageDirectionReference == "T" || gps.imageDirectionReference == "M", "a direction without its reference")
        }
        if let e = gps.horizontalError { check(e.isFinite && e >= 0, "positioning error \(e)") }
        if let a = gps.altitude { check(a.isFinite, "altitude \(a)") }
    }
    if let o = exif.orientation { check((1...8).contains(o), "orientation \(o)") }
    if let a = exif.accelerationVector {
        let length = (a * a).sum().squareRoot()
        check(length > 0.05 && length < 20, "acceleration of \(length) g")
    }
}

/// A transform whose rotation is orthonormal with determinant 1.
func checkRotation(_ pose: Pose, _ what: String) {
    let rows = [pose.row0, pose.row1, pose.row2]
    for i in 0..<3 {
        for j in 0..<3 {
            let dot = (rows[i] * rows[j]).sum()
            check(abs(dot - (i == j ? 1 : 0)) < 1e-9, "\(what): rows \(i), \(j) dot \(dot)")
        }
    }
    let r = rows
    let det = r[0].x * (r[1].y * r[2].z - r[1].z * r[2].y) - r[0].y * (r[1].x * r[2].z - r[1].z * r[2].x)
        + r[0].z * (r[1].x * r[2].y - r[1].y * r[2].x)
    check(abs(det - 1) < 1e-9, "\(what): determinant \(det)")
}

func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    let exif = EXIFMetadata(tiff: bytes)
    checkValues(exif)
    check(EXIFMetadata(tiff: bytes) == exif, "two readings differ")
    // Inside a JPEG's APP1 (when it fits a segment) and a HEIF Exif item's payload.
    if bytes.count <= 65_000 {
        let payload = Array("Exif\u{0}\u{0}".utf8) + bytes
        let length = payload.count + 2
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + [0xFF, 0xD9]
        let inJPEG = EXIFMetadata(photo: jpeg)
        check(inJPEG == exif, "the JPEG APP1 reading differs from the bare block")
    }
    // What rgbd makes of it: a geotag for a landscape photo, and every frame either
    // refused with an error or a rotation.
    let geo = GeoTag(exif: exif, width: 4032, height: 3024)
    if let g = geo.gravity {
        check(g.pitch.isFinite && abs(g.pitch) <= 90 && g.roll.isFinite && abs(g.roll) <= 180, "pitch \(g.pitch), roll \(g.roll)")
    }
    for kind in WorldFrame.Kind.allCases {
        do {
            let frame = try WorldFrame.forCapture(kind, geo: geo, file: "fuzz.jpg")
            checkRotation(frame.transform, kind.rawValue)
        } catch let error as RGBDError {
            check(!error.description.contains("\n"), "a message of more than one line: \(error)")
        } catch {
            fail("not an RGBDError: \(error)")
        }
    }
    return 0
}
