#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The frame exported points are given in (`--frame`, docs/geo.md), as one rigid transform
/// from the source's own frame (a capture's OpenCV camera frame, a scan's world) and what
/// it rests on: `camera` (the source's frame as it is), `level` (gravity along −z) or `enu`
/// (East-North-Up meters at the photo's GPS position). Every command that writes points
/// (cloud, and fuse and export as they adopt it) builds one with `forCapture` or
/// `forScene` and applies `transform`; `comments` and `json` describe it in the outputs.
public struct WorldFrame: Equatable, Sendable {
    /// The frames there are.
    public enum Kind: String, Sendable, CaseIterable {
        /// The source's frame: a capture's OpenCV camera frame, a scan's world.
        case camera
        /// Right-handed, z up (gravity along −z), y the camera's heading (its optical axis
        /// projected on the horizontal plane), x to its right; origin at the camera. For a
        /// gravity-aligned scan: its world turned so that its up (+y) becomes +z.
        case level
        /// East, north, up (meters) at the photo's position: the level frame turned by
        /// the photo's heading. Origin at the camera, `origin` its geodetic position.
        case enu
    }

    /// Which frame.
    public var kind: Kind
    /// Source frame to this frame: `p = R·p_source + t`.
    public var transform: Pose
    /// For `enu`: the frame's origin (WGS84 latitude and longitude; `height` is the
    /// photo's altitude above mean sea level, see `heightNote`).
    public var origin: GeodeticPosition?
    /// What the origin's height is (no geoid model is applied).
    package var heightNote: String?
    /// One line per input the transform rests on, with its source and uncertainty.
    package var basis: [String] = []
    /// What the user should know (a magnetic heading), one line each.
    public var warnings: [String] = []

    /// The source's own frame, unchanged.
    public static let camera = WorldFrame(kind: .camera, transform: .identity)

    /// A frame from its parts.
    public init(kind: Kind, transform: Pose, origin: GeodeticPosition? = nil) {
        self.kind = kind
        self.transform = transform
        self.origin = origin
    }

    /// The frame `kind` for `capture`, from what its photo's EXIF says (gravity; for `enu`
    /// also a position and a heading).
    ///
    /// - Throws: `RGBDError` naming the photo when it lacks what the frame needs.
    public static func forCapture(_ kind: Kind, capture: Capture) throws -> WorldFrame {
        try forCapture(kind, geo: capture.metadata.geo, file: capture.imagePath)
    }

    /// The frame `kind` for a capture whose photo's geotag is `geo` (`file` names the
    /// photo in errors).
    ///
    /// - Throws: `RGBDError` naming the file when the photo lacks what the frame needs
    ///   (gravity for `level` and `enu`; a GPS position and heading for `enu`).
    package static func forCapture(_ kind: Kind, geo: GeoTag?, file: String) throws -> WorldFrame {
        switch kind {
        case .camera:
            return .camera
        case .level, .enu:
            guard let gravity = geo?.gravity else {
                throw RGBDError(.invalidArgument, file: file,
                                "the \(kind.rawValue) frame needs gravity, but the photo's EXIF has no usable Apple MakerNote acceleration vector\(reason(geo))",
                                argument: .frame)
            }
            var frame = WorldFrame(kind: .level, transform: level(down: gravity.down))
            frame.basis.append("gravity: \(gravity.source), |a| = \(DecimalText.fixed(gravity.magnitude, 3)) g, pitch \(DecimalText.fixed(gravity.pitch, 2)) deg, roll \(DecimalText.fixed(gravity.roll, 2)) deg")
            guard kind == .enu else { return frame }
            guard let location = geo?.location else {
                throw RGBDError(.invalidArgument, file: file, "the enu frame needs a position, but the photo's EXIF has no usable GPS latitude and longitude\(reason(geo))",
                                argument: .frame)
            }
            guard let heading = geo?.heading else {
                throw RGBDError(.invalidArgument, file: file, "the enu frame needs the camera's heading, but the photo's EXIF has no GPSImgDirection\(reason(geo))",
                                argument: .frame)
            }
            frame.kind = .enu
            frame.transform = turn(by: heading.degrees).composed(with: frame.transform)
            frame.origin = GeodeticPosition(latitude: location.latitude, longitude: location.longitude,
                                            height: location.altitude ?? 0)
            frame.heightNote = location.altitude == nil
                ? "no altitude in the EXIF: height 0"
                : "height = the EXIF altitude above mean sea level, not above the ellipsoid (no geoid model applied)"
            frame.basis.append("position: \(location.source), horizontal error \(location.horizontalError.map { DecimalText.fixed($0, 1) + " m" } ?? "not recorded")")
            frame.basis.append("heading: \(heading.source) \(DecimalText.fixed(heading.degrees, 2)) deg; \(GeoTag.Heading.uncertaintyNote)")
            if heading.isMagnetic {
                frame.warnings.append("the heading is magnetic (GPSImgDirectionRef M): north is magnetic north, the declination is not applied")
            }
            return frame
        }
    }

    /// The camera-to-level rotation for gravity `down` (unit, camera axes): rows right,
    /// forward, up, with forward the optical axis projected on the horizontal plane (the
    /// image's upward axis when the camera looks straight up or down).
    static func level(down: SIMD3<Double>) -> Pose {
        let up = -down
        func horizontal(_ v: SIMD3<Double>) -> SIMD3<Double>? {
            let h = v - up * (v * up).sum()
            let length = (h * h).sum().squareRoot()
            return length > 1e-6 ? h / length : nil
        }
        let forward = horizontal(SIMD3(0, 0, 1)) ?? horizontal(SIMD3(0, -1, 0)) ?? SIMD3(0, 0, 1)
        let right = SIMD3(forward.y * up.z - forward.z * up.y, forward.z * up.x - forward.x * up.z,
                          forward.x * up.y - forward.y * up.x)
        return Pose(row0: right, row1: forward, row2: up, translation: .zero)
    }

    /// The level-to-ENU rotation for a forward direction `heading` degrees clockwise from
    /// north: forward becomes `(sin H, cos H, 0)`, right `(cos H, −sin H, 0)`.
    static func turn(by heading: Double) -> Pose {
        let h = heading * .pi / 180
        return Pose(row0: SIMD3(cos(h), sin(h), 0), row1: SIMD3(-sin(h), cos(h), 0), row2: SIMD3(0, 0, 1), translation: .zero)
    }

    private static func reason(_ geo: GeoTag?) -> String {
        guard let geo else { return " (the photo has no EXIF)" }
        return geo.warnings.isEmpty ? "" : " (\(geo.warnings.joined(separator: "; ")))"
    }

    /// One line describing the frame's axes.
    package var axesDescription: String {
        switch kind {
        case .camera: "source frame"
        case .level: origin == nil && basis.first?.contains("scan's gravity-aligned world") == true
            ? "level (the scan's world with z up; gravity along -z; origin and heading the world's)"
            : "level (x right, y heading, z up; gravity along -z; origin at the camera)"
        case .enu: "ENU (x east, y north, z up, meters; origin at the camera's GPS position)"
        }
    }

    /// The PLY header comments describing the frame: its kind, the transform (row-major
    /// 4×4 from the source frame), the geodetic origin in full double precision, and the
    /// basis.
    package var comments: [String] {
        guard kind != .camera else { return [] }
        var lines = ["frame \(kind.rawValue): \(axesDescription)",
                     "transform from the source frame (row-major 4x4) " + transform.matrix.map { "\($0)" }.joined(separator: " ")]
        if let origin {
            lines.append("geodetic origin WGS84 latitude \(origin.latitude) longitude \(origin.longitude) height \(origin.height)")
            if let heightNote { lines.append("geodetic origin height: \(heightNote)") }
        }
        lines += basis
        lines += warnings.map { "warning: \($0)" }
        // PLY headers are ASCII (plyfile refuses anything else).
        return lines.map { String(String.UnicodeScalarView($0.unicodeScalars.map { $0.isASCII ? $0 : "?" })) }
    }

    /// The frame as JSON members (`frame`: kind, axes, transform, origin, basis, warnings).
    package var json: JSONValue {
        typealias M = JSONValue.Member
        var members = [M("kind", .string(kind.rawValue)), M("axes", .string(axesDescription)),
                       M("transform", .array(transform.matrix.map { .number($0) }))]
        if let origin {
            members.append(M("origin", .object([M("latitude", .number(origin.latitude)), M("longitude", .number(origin.longitude)),
                                                M("height", .number(origin.height)), M("datum", .string("WGS84")),
                                                M("height_note", .string(heightNote ?? ""))])))
        }
        members.append(M("basis", .array(basis.map { .string($0) })))
        if !warnings.isEmpty { members.append(M("warnings", .array(warnings.map { .string($0) }))) }
        return .object(members)
    }
}
