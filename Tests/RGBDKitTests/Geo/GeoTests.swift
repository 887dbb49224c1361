import Foundation
import Testing
@testable import RGBDCapture
@testable import RGBDKit
@testable import RGBDSynth

/// Geodesy against published and independent values, gravity and the level and ENU frames
/// by geometry.
struct GeoTests {
    static func length(_ v: SIMD3<Double>) -> Double { (v * v).sum().squareRoot() }

    /// IOGP Guidance Note 7-2, EPSG method 9837 (geocentric to topocentric), the example
    /// PROJ's topocentric page repeats: origin 55° N, 5° E, 200 m; point 53.80939444° N,
    /// 2.12955° E, 73 m → E −189013.869, N −128642.040, U −4220.171 m.
    @Test func enuMatchesTheIOGPExampleWithinAMillimeter() {
        let frame = ENUFrame(origin: GeodeticPosition(latitude: 55, longitude: 5, height: 200))
        let point = GeodeticPosition(latitude: 53.80939444, longitude: 2.12955, height: 73)
        let enu = frame.enu(point)
        #expect(abs(enu.x - -189_013.869) < 1e-3, "\(enu.x)")
        #expect(abs(enu.y - -128_642.040) < 1e-3, "\(enu.y)")
        #expect(abs(enu.z - -4_220.171) < 1e-3, "\(enu.z)")
        // The inverse returns the ECEF point; the origin is at zero.
        #expect(Self.length(frame.ecef(enu: enu) - point.ecef) < 1e-6)
        #expect(Self.length(frame.enu(frame.origin)) < 1e-9)
    }

    /// ECEF of the IOGP example's point as the same guidance note gives it (geographic to
    /// geocentric, EPSG 9602): X 3771793.968, Y 140253.342, Z 5124304.349 m.
    @Test func ecefMatchesTheIOGPExample() {
        let p = GeodeticPosition(latitude: 53.80939444, longitude: 2.12955, height: 73).ecef
        #expect(abs(p.x - 3_771_793.968) < 1e-3 && abs(p.y - 140_253.342) < 1e-3 && abs(p.z - 5_124_304.349) < 1e-3, "\(p)")
    }

    /// Distance and bearings against GeographicLib 2.1 (PyPI `geographiclib`,
    /// `Geodesic.WGS84.Inverse(lat1, lon1, lat2, lon2)`: s12, azi1, azi2, azimuths taken
    /// mod 360), generated with:
    /// `python3 -c "from geographiclib.geodesic import Geodesic as G; print(G.WGS84.Inverse(52.2, 0.1, 48.85, 2.35))"`.
    static let geographicLib: [(Double, Double, Double, Double, Double, Double, Double)] = [
        (52.2, 0.1, 48.85, 2.35, 405319.940154, 155.9473123000, 157.6849260641),
        (-33.9, 151.2, 51.5, -0.12, 16991292.115164, 319.2272189612, 240.4423270847),
        (0, 0, 0, 90, 10018754.171395, 90.0000000000, 90.0000000000),
        (89.9, 10, 89.9, -170, 22338.795683, 0.0000000000, 180.0000000000),
        (23.1779166666667, 113.394316666667, 23.18, 113.4, 625.970288, 68.3706371086, 68.3728740932),
        (40.0, -75.0, 40.0001, -75.0001, 14.007423, 322.4371015006, 322.4370372218),
        (10, 20, -12, -150, 18919999.403473, 256.9994747735, 281.1987236996),
    ]

    @Test func geodesicsAgreeWithGeographicLib() throws {
        func angle(_ a: Double, _ b: Double) -> Double { abs(remainder(a - b, 360)) }
        for (lat1, lon1, lat2, lon2, s12, azi1, azi2) in Self.geographicLib {
            let g = try #require(Geodesic(from: GeodeticPosition(latitude: lat1, longitude: lon1),
                                          to: GeodeticPosition(latitude: lat2, longitude: lon2)))
            #expect(abs(g.distance - s12) < 1e-3, "\(lat1), \(lon1) → \(lat2), \(lon2): \(g.distance) vs \(s12)")
            #expect(angle(g.initialBearing, azi1) < 1e-6, "\(g.initialBearing) vs \(azi1)")
            #expect(angle(g.finalBearing, azi2) < 1e-6, "\(g.finalBearing) vs \(azi2)")
        }
        // Nearly antipodal places: Vincenty's iteration does not converge, said by nil
        // (GeographicLib: 19981349.343755 m), never a wrong distance.
        if let g = Geodesic(from: GeodeticPosition(latitude: -45, longitude: 170), to: GeodeticPosition(latitude: 45, longitude: -10.5)) {
            #expect(abs(g.distance - 19_981_349.343755) < 1e-3)
        }
    }

    /// Pitch and roll by geometry: a camera tilted by RGBDSynth's rotation (its own
    /// construction) gives the accelerometer reading its gravity implies; the pitch is the
    /// optical axis' elevation in the level scene and the roll the angle of gravity in the
    /// image plane.
    @Test func pitchAndRollFollowTheCamerasTilt() throws {
        var rng = SeededGenerator(seed: 26)
        for _ in 0..<200 {
            let pitchDown = Double.random(in: -80...80, using: &rng), roll = Double.random(in: -179...179, using: &rng)
            let r = SyntheticScene.tilt(pitchDown: pitchDown, roll: roll)
            let down = r.row1   // the scene's +y (down) in camera axes
            let g = try #require(GeoTag.Gravity(acceleration: SyntheticEXIF.acceleration(down: down) * 0.98))
            #expect(Self.length(g.down - down) < 1e-12)
            // The optical axis in the scene: its elevation above the horizon (scene −y is up).
            let axis = r.rotate(SIMD3(0, 0, 1))
            let elevation = asin(-axis.y) * 180 / .pi
            #expect(abs(g.pitch - elevation) < 1e-9)
            #expect(abs(g.pitch + pitchDown) < 1e-9)
            #expect(abs(remainder(g.roll - roll, 360)) < 1e-9)
            #expect(abs(g.magnitude - 0.98) < 1e-12)
        }
        // Level and upright: no pitch, no roll; looking straight down: pitch −90°.
        let level = try #require(GeoTag.Gravity(acceleration: SIMD3(-1, 0, 0)))
        #expect(level.down == SIMD3(0, 1, 0) && level.pitch == 0 && level.roll == 0)
        let floor = try #require(GeoTag.Gravity(acceleration: SIMD3(0, 0, -1)))
        #expect(floor.pitch == -90)
    }

    /// The level frame puts gravity along −z and the optical axis in the y-z plane ahead;
    /// the ENU frame turns that forward direction to the heading.
    @Test func levelAndENUFramesByGeometry() throws {
        var rng = SeededGenerator(seed: 8)
        for _ in 0..<100 {
            let pitchDown = Double.random(in: -60...85, using: &rng), roll = Double.random(in: -170...170, using: &rng)
            let heading = Double.random(in: 0..<360, using: &rng)
            let r = SyntheticScene.tilt(pitchDown: pitchDown, roll: roll)
            var geo = GeoTag()
            geo.gravity = GeoTag.Gravity(acceleration: SyntheticEXIF.acceleration(down: r.row1))
            geo.location = GeoTag.Location(latitude: 47.5, longitude: 8.5, altitude: 420, horizontalError: 5, time: nil)
            geo.heading = GeoTag.Heading(degrees: heading, isMagnetic: false)
            let level = try WorldFrame.forCapture(.level, geo: geo, file: "p.jpg").transform
            #expect(Self.length(level.rotate(r.row1) - SIMD3(0, 0, -1)) < 1e-9)
            let forward = level.rotate(SIMD3(0, 0, 1))
            #expect(abs(forward.x) < 1e-9 && forward.y > 0)
            // The level frame is the scene's (x right, z forward → y, −y down → z up).
            for v in [SIMD3(1.0, 0, 0), SIMD3(0, 1.0, 0), SIMD3(0, 0, 1.0)] {
                let scene = r.rotate(v)
                #expect(Self.length(level.rotate(v) - SIMD3(scene.x, scene.z, -scene.y)) < 1e-9)
            }
            let enu = try WorldFrame.forCapture(.enu, geo: geo, file: "p.jpg")
            let h = heading * .pi / 180
            let f = enu.transform.rotate(SIMD3(0, 0, 1))
            let horizontal = SIMD3(f.x, f.y, 0) / Self.length(SIMD3(f.x, f.y, 0))
            #expect(Self.length(horizontal - SIMD3(sin(h), cos(h), 0)) < 1e-9)
            #expect(Self.length(enu.transform.rotate(r.row1) - SIMD3(0, 0, -1)) < 1e-9)
            #expect(enu.origin == GeodeticPosition(latitude: 47.5, longitude: 8.5, height: 420))
            #expect(enu.warnings.isEmpty)
        }
    }

    @Test func framesSayWhatIsMissing() throws {
        #expect(throws: RGBDError.self) { try WorldFrame.forCapture(.level, geo: nil, file: "p.jpg") }
        var geo = GeoTag()
        geo.gravity = GeoTag.Gravity(acceleration: SIMD3(-1, 0, 0))
        #expect(throws: RGBDError.self) { try WorldFrame.forCapture(.enu, geo: geo, file: "p.jpg") }
        geo.location = GeoTag.Location(latitude: 1, longitude: 2, altitude: nil, horizontalError: nil, time: nil)
        #expect(throws: RGBDError.self) { try WorldFrame.forCapture(.enu, geo: geo, file: "p.jpg") }
        geo.heading = GeoTag.Heading(degrees: 10, isMagnetic: true)
        let magnetic = try WorldFrame.forCapture(.enu, geo: geo, file: "p.jpg")
        #expect(magnetic.warnings.contains { $0.contains("magnetic") })
        #expect(try WorldFrame.forCapture(.camera, geo: nil, file: "p.jpg") == .camera)
        #expect(throws: RGBDError.self) { try WorldFrame.forScene(.level, world: .firstFrame, file: "scan") }
        #expect(throws: RGBDError.self) { try WorldFrame.forScene(.enu, world: .gravityAligned, file: "scan") }
        // ARKit's world (+y up) turned so that up is +z, right-handed.
        let scan = try WorldFrame.forScene(.level, world: .gravityAligned, file: "scan").transform
        #expect(scan.rotate(SIMD3(0, 1, 0)) == SIMD3(0, 0, 1))
        #expect(scan.rotate(SIMD3(0, 0, -1)) == SIMD3(0, 1, 0))
        #expect(scan.rotate(SIMD3(1, 0, 0)) == SIMD3(1, 0, 0))
    }
}
