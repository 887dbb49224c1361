import Foundation
import Testing
@testable import RGBDOutput
@testable import RGBDKit

/// The glTF binary's container (header, chunks, alignment, the JSON's accessors) and the
/// axes' mappings, on a small mesh whose every value is known. The files as other tools
/// read them: Tests/python/test_mesh_formats.py (pygltflib, trimesh).
@Suite struct MeshFormatTests {
    /// A tetrahedron with one zero normal (glTF wants unit normals: it gets its faces').
    static func tetrahedron() -> TriangleMesh {
        var mesh = TriangleMesh()
        mesh.positions = [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]
        mesh.normals = [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]
        mesh.colors = [0, 0, 0, 255, 0, 0, 0, 128, 0, 10, 20, 30]
        mesh.faces = [0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3]
        return mesh
    }

    static func word(_ b: [UInt8], _ o: Int) -> UInt32 {
        UInt32(b[o]) | UInt32(b[o + 1]) << 8 | UInt32(b[o + 2]) << 16 | UInt32(b[o + 3]) << 24
    }

    @Test func glbContainerAndAccessors() throws {
        let axes = YUpAxes(world: .gravityAligned, frame: .level)
        let bytes = try GLTFWriter.glb(mesh: Self.tetrahedron(), axes: axes, comments: ["a comment"], path: "t.glb")
        #expect(Self.word(bytes, 0) == 0x4654_6C67 && Self.word(bytes, 4) == 2 && Int(Self.word(bytes, 8)) == bytes.count)
        let jsonLength = Int(Self.word(bytes, 12))
        #expect(Self.word(bytes, 16) == 0x4E4F_534A && jsonLength % 4 == 0)
        let binStart = 20 + jsonLength
        #expect(Self.word(bytes, binStart + 4) == 0x004E_4942)
        let binLength = Int(Self.word(bytes, binStart))
        #expect(binLength % 4 == 0 && binStart + 8 + binLength == bytes.count)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes[20..<binStart])) as? [String: Any])
        let accessors = try #require(json["accessors"] as? [[String: Any]])
        #expect(accessors.map { $0["count"] as? Int } == [4, 4, 4, 12])
        // Level (z up) to glTF: (x, y, z) -> (x, z, -y); the bounds follow.
        #expect(accessors[0]["min"] as? [Double] == [0, 0, -1] && accessors[0]["max"] as? [Double] == [1, 1, 0])
        let bin = Array(bytes[(binStart + 8)...])
        func float(_ o: Int) -> Float { Float(bitPattern: Self.word(bin, o)) }
        // Vertex 1 (1, 0, 0) stays; vertex 2 (0, 1, 0) becomes (0, 0, -1); vertex 3 (0, 0, 1) becomes (0, 1, 0).
        #expect((0..<3).map { float(12 + 4 * $0) } == [1, 0, 0])
        #expect((0..<3).map { float(24 + 4 * $0) } == [0, 0, -1])
        #expect((0..<3).map { float(36 + 4 * $0) } == [0, 1, 0])
        // The zero normal got its faces' direction (the corner's outward diagonal, turned), unit.
        let n0 = SIMD3((0..<3).map { float(48 + 4 * $0) })
        #expect(abs((n0 * n0).sum() - 1) < 1e-6)
        let expected = axes.apply(SIMD3<Float>(-1, -1, -1) / Float(3).squareRoot())
        #expect(((n0 - expected) * (n0 - expected)).sum() < 1e-10, "\(n0)")
        // Linear colors: 255 -> 65535, 128 -> sRGB decoding (0.2158605), 0 -> 0.
        let colors = 96
        func short(_ o: Int) -> UInt16 { UInt16(bin[o]) | UInt16(bin[o + 1]) << 8 }
        #expect(short(colors + 8) == 65_535 && short(colors + 8 + 2) == 0 && short(colors + 8 + 6) == 65_535)
        #expect(short(colors + 16 + 2) == UInt16((0.2158605 * 65_535).rounded()))
    }

    @Test func axesAreRotations() {
        for world in [SceneWorld.gravityAligned, .firstFrame, .undetermined, .originTag] {
            for frame in WorldFrame.Kind.allCases {
                let r = YUpAxes(world: world, frame: frame).rows
                let det = (r[0] * SIMD3(r[1].y * r[2].z - r[1].z * r[2].y, r[1].z * r[2].x - r[1].x * r[2].z,
                                        r[1].x * r[2].y - r[1].y * r[2].x)).sum()
                #expect(det == 1, "\(world) \(frame)")
            }
        }
        // ARKit's world is already +Y up; OpenCV's first camera turns to OpenGL's axes.
        #expect(YUpAxes(world: .gravityAligned, frame: .camera).apply(SIMD3(1, 2, 3)) == SIMD3(1, 2, 3))
        #expect(YUpAxes(world: .firstFrame, frame: .camera).apply(SIMD3(1, 2, 3)) == SIMD3(1, -2, -3))
        #expect(!YUpAxes(world: .originTag, frame: .camera).gravityUp)
        #expect(YUpAxes(world: .gravityAligned, frame: .enu).apply(SIMD3(1, 2, 3)) == SIMD3(1, 3, -2))
    }
}
