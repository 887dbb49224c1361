import Foundation
import Testing
@testable import RGBDKit
@testable import RGBDSynth

/// Placemarks seen from the tilted, geotagged synthetic capture of `GeoCloudTests`: places
/// put at known directions in the scene; their columns and rows must be within 1 px of the
/// projection of their true directions, and the wall (3 m ahead) must hide the far ones.
struct PlacemarkTests {
    static let latitude = 46.5197, longitude = 6.6323, altitude = 372.0

    /// A place at scene direction `d` (x right, y down, z forward in the level scene; meters).
    static func place(_ name: String, _ d: SIMD3<Double>, withAltitude: Bool = true) -> Placemark {
        let h = GeoCloudTests.heading * .pi / 180
        let enu = SIMD3(cos(h) * d.x + sin(h) * d.z, -sin(h) * d.x + cos(h) * d.z, -d.y)
        let origin = GeodeticPosition(latitude: latitude, longitude: longitude, height: altitude)
        let p = ENUFrame(origin: origin).geodetic(enu: enu)
        return Placemark(name: name, latitude: p.latitude, longitude: p.longitude, altitude: withAltitude ? p.height : nil)
    }

    /// Where direction `d` (scene axes) projects in the rectified photo, from the truth.
    static func truePixel(_ d: SIMD3<Double>, _ synthetic: SyntheticCapture) -> SIMD2<Double> {
        let r = synthetic.scene.cameraToScene ?? .identity
        let c = r.inverse.rotate(d)
        let k = synthetic.colorIntrinsics
        return SIMD2(k.fx * c.x / c.z + k.cx, k.fy * c.y / c.z + k.cy)
    }

    @Test func columnsRowsAndOcclusionMatchTheTruth() throws {
        let (json, synthetic) = try #require(GeoCloudTests.capture)
        let near = SIMD3(0.2, 0.3, 1.5), far = SIMD3(60.0, 40, 800), behind = SIMD3(0.0, 0, -100), side = SIMD3(500.0, 0, 100)
        let places = [Self.place("near", near), Self.place("far", far), Self.place("behind", behind),
                      Self.place("side", side), Self.place("far, no altitude", far, withAltitude: false)]
        let info = try CaptureInfo.read(json: json, placemarks: places)
        let s = info.placemarks
        #expect(s.count == 5)
        for (sighting, d) in zip(s.prefix(2), [near, far]) {
            let truth = Self.truePixel(d, synthetic)
            #expect(sighting.inView == true, "\(sighting.place.name)")
            #expect(abs((sighting.column ?? .nan) - truth.x) < 1, "\(sighting.place.name): \(String(describing: sighting.column)) vs \(truth.x)")
            #expect(abs((sighting.row ?? .nan) - truth.y) < 1, "\(sighting.place.name): \(String(describing: sighting.row)) vs \(truth.y)")
            // Distance on the ellipsoid: the horizontal distance (less by h/R at the camera's altitude).
            let horizontal = (d.x * d.x + d.z * d.z).squareRoot()
            #expect(abs((sighting.distance ?? 0) - horizontal * (1 - Self.altitude / 6_371_000)) < 0.01 + horizontal * 1e-5)
        }
        // The near place stands before the wall; the far one behind it.
        #expect(s[0].occluded == false, "\(s[0])")
        #expect(s[1].occluded == true, "\(s[1])")
        #expect(s[2].inView == false)
        #expect(s[3].inView == false)
        // Without an altitude: the column of its direction at the camera's height, no row.
        let level = Self.truePixel(SIMD3(far.x, 0, far.z), synthetic)
        #expect(abs((s[4].column ?? .nan) - level.x) < 1)
        #expect(s[4].row == nil && s[4].occluded == nil)
        // Bearing: the scene's +z faces the heading; "side" is atan2(500, 100) to its right.
        let expected = (GeoCloudTests.heading + atan2(500.0, 100) * 180 / .pi).truncatingRemainder(dividingBy: 360)
        #expect(abs((s[3].bearing ?? 0) - expected) < 1e-3)
        #expect(info.text.contains("placemarks"))
    }

    @Test func csvIsReadWithHeaderCommentsAndErrors() throws {
        let text = "name,latitude,longitude,altitude\n# a comment\nTower, 48.8583701, 2.2944813, 330\n\nPeak,45.8326,6.8652\n"
        let places = try Placemark.read(csv: Array(text.utf8), file: "p.csv")
        #expect(places == [Placemark(name: "Tower", latitude: 48.8583701, longitude: 2.2944813, altitude: 330),
                           Placemark(name: "Peak", latitude: 45.8326, longitude: 6.8652)])
        #expect(throws: RGBDError.self) { try Placemark.read(csv: Array("A,91,0\n".utf8), file: "p.csv") }
        #expect(throws: RGBDError.self) { try Placemark.read(csv: Array("A,1\n".utf8), file: "p.csv") }
        #expect(throws: RGBDError.self) { try Placemark.read(csv: Array("A,1,2\nB,x,3\n".utf8), file: "p.csv") }
    }

    /// ECEF to geodetic undoes geodetic to ECEF (whose direction the IOGP example checks).
    @Test func geodeticFromECEFRoundTrips() {
        var rng = SeededGenerator(seed: 3)
        for _ in 0..<500 {
            let p = GeodeticPosition(latitude: Double.random(in: -89.9...89.9, using: &rng),
                                     longitude: Double.random(in: -180...180, using: &rng),
                                     height: Double.random(in: -500...9000, using: &rng))
            let q = GeodeticPosition(ecef: p.ecef)
            #expect(abs(q.latitude - p.latitude) < 1e-10 && abs(q.longitude - p.longitude) < 1e-10 && abs(q.height - p.height) < 1e-4)
        }
    }
}
