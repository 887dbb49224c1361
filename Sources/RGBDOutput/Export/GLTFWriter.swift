#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// glTF 2.0 binary (`.glb`): one file with the JSON description and the binary buffer.
///
/// One mesh of one primitive (triangles): `POSITION` (float, meters), `NORMAL` (float,
/// unit), `COLOR_0` (the vertex colors, linear as glTF defines them: the sRGB colors
/// decoded, as normalized unsigned shorts, RGBA with alpha 1) and 32-bit indices; one
/// material (white base color, not metallic, rough) that multiplies the vertex colors.
/// The axes are glTF's (+Y up, right-handed) by `YUpAxes`; the asset's `extras.rgbd` says
/// how rgbd's world was mapped (`axes`, `matrix`: row-major, from rgbd's world to glTF's),
/// the units and where the surface comes from (`comments`, the PLY header's lines).
public enum GLTFWriter {
    /// Writes `mesh` to `path` (staged: the file appears only when complete).
    /// - Throws: `RGBDError` for a mesh whose arrays disagree, or one too large for a glTF
    ///   buffer (4 GiB), or when the file cannot be written.
    public static func write(path: String, mesh: TriangleMesh, axes: YUpAxes, comments: [String] = []) throws {
        let bytes = try glb(mesh: mesh, axes: axes, comments: comments, path: path)
        try FileSystem.createDirectory(Path.directory(of: path))
        let files = StagedFiles()
        try files.stage(path, bytes: bytes)
        try files.commit()
    }

    /// The normals written: the mesh's, turned; a zero normal (a vertex where the distance
    /// field's gradient vanished) replaced by its triangles' summed normal, glTF requiring
    /// unit normals.
    static func normals(of mesh: TriangleMesh, axes: YUpAxes) -> [SIMD3<Float>] {
        var result = (0..<mesh.vertexCount).map {
            SIMD3(mesh.normals[3 * $0], mesh.normals[3 * $0 + 1], mesh.normals[3 * $0 + 2])
        }
        var missing = [Int]()
        for (i, n) in result.enumerated() {
            let length = (n * n).sum().squareRoot()
            if length > 0 && length.isFinite { result[i] = n / length } else { missing.append(i) }
        }
        if !missing.isEmpty {
            var sums = [Int: SIMD3<Float>]()
            for i in missing { sums[i] = .zero }
            for t in 0..<mesh.faceCount {
                let f = (0..<3).map { Int(mesh.faces[3 * t + $0]) }
                guard f.contains(where: { sums[$0] != nil }) else { continue }
                func p(_ i: Int) -> SIMD3<Float> { SIMD3(mesh.positions[3 * i], mesh.positions[3 * i + 1], mesh.positions[3 * i + 2]) }
                let u = p(f[1]) - p(f[0]), v = p(f[2]) - p(f[0])
                let n = SIMD3(u.y * v.z - u.z * v.y, u.z * v.x - u.x * v.z, u.x * v.y - u.y * v.x)
                for i in f where sums[i] != nil { sums[i]? += n }
            }
            for (i, n) in sums {
                let length = (n * n).sum().squareRoot()
                result[i] = length > 0 ? n / length : SIMD3(0, 0, 1)
            }
        }
        return result.map { axes.apply($0) }
    }

    /// sRGB (0…255) to linear, as a normalized unsigned short.
    static let linear: [UInt16] = (0..<256).map { value in
        let c = Double(value) / 255
        let l = c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        return UInt16((l * 65_535).rounded())
    }

    /// The whole file.
    static func glb(mesh: TriangleMesh, axes: YUpAxes, comments: [String], path: String) throws -> [UInt8] {
        let n = mesh.vertexCount
        guard mesh.positions.count == 3 * n, mesh.normals.count == 3 * n, mesh.colors.count == 3 * n,
              mesh.faces.count % 3 == 0, mesh.faces.allSatisfy({ Int($0) < n }) else {
            throw RGBDError(.invalidArgument, file: path, "a mesh needs 3 values per vertex for positions, colors and normals, and faces of existing vertices")
        }
        // The binary buffer: positions, normals, colors, indices, each 4-byte aligned.
        var bin = Bytes()
        var lo = SIMD3<Float>(repeating: .infinity), hi = SIMD3<Float>(repeating: -.infinity)
        bin.reserve(n * 32 + mesh.faces.count * 4)
        for i in 0..<n {
            let p = axes.apply(SIMD3(mesh.positions[3 * i], mesh.positions[3 * i + 1], mesh.positions[3 * i + 2]))
            lo = pointwiseMin(lo, p); hi = pointwiseMax(hi, p)
            bin.float(p.x); bin.float(p.y); bin.float(p.z)
        }
        let normalsOffset = bin.count
        for v in normals(of: mesh, axes: axes) { bin.float(v.x); bin.float(v.y); bin.float(v.z) }
        let colorsOffset = bin.count
        for i in 0..<n {
            for k in 0..<3 { bin.uint16(linear[Int(mesh.colors[3 * i + k])]) }
            bin.uint16(65_535)
        }
        let indicesOffset = bin.count
        for index in mesh.faces { bin.uint32(index) }
        let length = bin.count
        guard length < Int(UInt32.max) - 1 << 20 else {
            throw RGBDError(.invalidArgument, file: path, "the mesh is too large for a glTF binary (\(length) bytes of buffer, at most 4 GiB)")
        }
        typealias M = JSONValue.Member
        func view(_ offset: Int, _ count: Int, target: Int) -> JSONValue {
            .object([M("buffer", .int(0)), M("byteOffset", .int(offset)), M("byteLength", .int(count)), M("target", .int(target))])
        }
        func accessor(_ view: Int, _ componentType: Int, _ count: Int, _ type: String, normalized: Bool = false,
                      bounds: (SIMD3<Float>, SIMD3<Float>)? = nil) -> JSONValue {
            var members = [M("bufferView", .int(view)), M("componentType", .int(componentType)), M("count", .int(count)),
                           M("type", .string(type))]
            if normalized { members.append(M("normalized", .bool(true))) }
            if let (lo, hi) = bounds {
                members.append(M("min", .array([lo.x, lo.y, lo.z].map { .number(Double($0)) })))
                members.append(M("max", .array([hi.x, hi.y, hi.z].map { .number(Double($0)) })))
            }
            return .object(members)
        }
        let arrayBuffer = 34_962, elementBuffer = 34_963, float = 5_126, unsignedShort = 5_123, unsignedInt = 5_125
        let json = JSONValue.object([
            asset(axes: axes, note: ("colors", "COLOR_0: the fused vertex colors (sRGB) decoded to linear, as glTF defines COLOR_0"),
                  comments: comments),
            M("scene", .int(0)),
            M("scenes", .array([.object([M("nodes", .array([.int(0)]))])])),
            M("nodes", .array([.object([M("mesh", .int(0)), M("name", .string("rgbd surface"))])])),
            M("meshes", .array([.object([
                M("name", .string("surface")),
                M("primitives", .array([.object([
                    M("attributes", .object([M("POSITION", .int(0)), M("NORMAL", .int(1)), M("COLOR_0", .int(2))])),
                    M("indices", .int(3)),
                    M("material", .int(0)),
                    M("mode", .int(4)),
                ])])),
            ])])),
            M("materials", .array([.object([
                M("name", .string("vertex colors")),
                M("pbrMetallicRoughness", .object([
                    M("baseColorFactor", .array([.int(1), .int(1), .int(1), .int(1)])),
                    M("metallicFactor", .int(0)), M("roughnessFactor", .int(1)),
                ])),
            ])])),
            M("buffers", .array([.object([M("byteLength", .int(length))])])),
            M("bufferViews", .array([
                view(0, normalsOffset, target: arrayBuffer), view(normalsOffset, colorsOffset - normalsOffset, target: arrayBuffer),
                view(colorsOffset, indicesOffset - colorsOffset, target: arrayBuffer),
                view(indicesOffset, length - indicesOffset, target: elementBuffer),
            ])),
            M("accessors", .array([
                accessor(0, float, n, "VEC3", bounds: n > 0 ? (lo, hi) : (.zero, .zero)),
                accessor(1, float, n, "VEC3"),
                accessor(2, unsignedShort, n, "VEC4", normalized: true),
                accessor(3, unsignedInt, mesh.faces.count, "SCALAR"),
            ])),
        ])
        return container(json: json, bin: bin)
    }

    /// The asset object every file carries: glTF's version, the generator, and rgbd's
    /// extras (units, the axes' mapping, `note`, the PLY header's comments).
    static func asset(axes: YUpAxes, note: (key: String, text: String), comments: [String]) -> JSONValue.Member {
        typealias M = JSONValue.Member
        return M("asset", .object([
            M("version", .string("2.0")),
            M("generator", .string("rgbd \(RGBDVersion.string)")),
            M("extras", .object([M("rgbd", .object([
                M("units", .string("meters")),
                M("axes", .string(axes.description)),
                M("matrix", .array(axes.matrix.map { .number($0) })),
                M("matrix_note", .string("row-major 3x3 rotation from rgbd's world (as the PLY has it) to glTF's axes")),
                M(note.key, .string(note.text)),
                M("comments", .array(comments.map { .string($0) })),
            ]))])),
        ]))
    }

    /// The binary file: the header, the JSON chunk (padded with spaces) and the binary
    /// chunk (padded with zeros), each to 4 bytes.
    static func container(json: JSONValue, bin: Bytes) -> [UInt8] {
        var bin = bin
        var text = Array(json.text().utf8)
        while text.count % 4 != 0 { text.append(0x20) }
        while bin.count % 4 != 0 { bin.bytes.append(0) }
        var out = Bytes()
        out.reserve(28 + text.count + bin.count)
        out.uint32(0x4654_6C67)   // "glTF"
        out.uint32(2)
        out.uint32(UInt32(12 + 8 + text.count + 8 + bin.count))
        out.uint32(UInt32(text.count)); out.uint32(0x4E4F_534A)   // "JSON"
        out.bytes += text
        out.uint32(UInt32(bin.count)); out.uint32(0x004E_4942)    // "BIN\0"
        out.bytes += bin.bytes
        return out.bytes
    }

    /// Little-endian bytes appended.
    struct Bytes {
        var bytes: [UInt8] = []
        var count: Int { bytes.count }
        mutating func reserve(_ n: Int) { bytes.reserveCapacity(n) }
        mutating func uint16(_ v: UInt16) { bytes.append(UInt8(v & 0xFF)); bytes.append(UInt8(v >> 8)) }
        mutating func uint32(_ v: UInt32) {
            bytes.append(UInt8(v & 0xFF)); bytes.append(UInt8(v >> 8 & 0xFF))
            bytes.append(UInt8(v >> 16 & 0xFF)); bytes.append(UInt8(v >> 24))
        }
        mutating func float(_ v: Float) { uint32(v.bitPattern) }
    }
}

extension GLTFWriter {
    /// The JPEG quality of embedded texture atlases.
    package static let atlasQuality = 90

    /// Writes a textured mesh: `POSITION`, `NORMAL`, `TEXCOORD_0`, one primitive per atlas
    /// (its triangles' indices, a material whose base-color texture is that atlas, embedded
    /// as JPEG), staged: the file appears only when complete.
    /// - Throws: `RGBDError` for a mesh whose arrays disagree, one too large for a glTF
    ///   buffer (4 GiB), or when the file cannot be written.
    package static func write(path: String, textured mesh: TexturedMesh, axes: YUpAxes, comments: [String] = []) throws {
        let bytes = try glb(textured: mesh, axes: axes, comments: comments, path: path)
        try FileSystem.createDirectory(Path.directory(of: path))
        let files = StagedFiles()
        try files.stage(path, bytes: bytes)
        try files.commit()
    }

    /// The whole file of a textured mesh (`write(path:textured:axes:comments:)`); `path`
    /// names it in errors.
    package static func glb(textured mesh: TexturedMesh, axes: YUpAxes, comments: [String], path: String) throws -> [UInt8] {
        let n = mesh.positions.count / 3
        guard mesh.normals.count == 3 * n, mesh.uvs.count == 2 * n, mesh.faces.count % 3 == 0,
              mesh.facePages.count == mesh.faces.count / 3,
              mesh.faces.allSatisfy({ Int($0) < n }), mesh.facePages.allSatisfy({ $0 >= 0 && Int($0) < mesh.atlases.count }) else {
            throw RGBDError(.invalidArgument, file: path, "a textured mesh needs positions, normals and texture coordinates per vertex, and faces of existing vertices and atlases")
        }
        var bin = Bytes()
        var lo = SIMD3<Float>(repeating: .infinity), hi = SIMD3<Float>(repeating: -.infinity)
        for i in 0..<n {
            let p = axes.apply(SIMD3(mesh.positions[3 * i], mesh.positions[3 * i + 1], mesh.positions[3 * i + 2]))
            lo = pointwiseMin(lo, p); hi = pointwiseMax(hi, p)
            bin.float(p.x); bin.float(p.y); bin.float(p.z)
        }
        let normalsOffset = bin.count
        for i in 0..<n {
            var v = SIMD3(mesh.normals[3 * i], mesh.normals[3 * i + 1], mesh.normals[3 * i + 2])
            let length = (v * v).sum().squareRoot()
            v = length > 0 && length.isFinite ? v / length : SIMD3(0, 0, 1)
            v = axes.apply(v)
            bin.float(v.x); bin.float(v.y); bin.float(v.z)
        }
        let uvOffset = bin.count
        for value in mesh.uvs { bin.float(value) }
        typealias M = JSONValue.Member
        var views: [JSONValue] = []
        func view(_ offset: Int, _ count: Int, target: Int?) -> JSONValue {
            var members = [M("buffer", .int(0)), M("byteOffset", .int(offset)), M("byteLength", .int(count))]
            if let target { members.append(M("target", .int(target))) }
            return .object(members)
        }
        views.append(view(0, normalsOffset, target: 34_962))
        views.append(view(normalsOffset, uvOffset - normalsOffset, target: 34_962))
        views.append(view(uvOffset, 8 * n, target: 34_962))
        var accessors: [JSONValue] = [
            .object([M("bufferView", .int(0)), M("componentType", .int(5_126)), M("count", .int(n)), M("type", .string("VEC3")),
                     M("min", .array((n > 0 ? [lo.x, lo.y, lo.z] : [0, 0, 0]).map { .number(Double($0)) })),
                     M("max", .array((n > 0 ? [hi.x, hi.y, hi.z] : [0, 0, 0]).map { .number(Double($0)) }))]),
            .object([M("bufferView", .int(1)), M("componentType", .int(5_126)), M("count", .int(n)), M("type", .string("VEC3"))]),
            .object([M("bufferView", .int(2)), M("componentType", .int(5_126)), M("count", .int(n)), M("type", .string("VEC2"))]),
        ]
        var primitives: [JSONValue] = [], materials: [JSONValue] = [], textures: [JSONValue] = [], images: [JSONValue] = []
        for page in mesh.atlases.indices {
            let start = bin.count
            var count = 0
            for t in 0..<mesh.facePages.count where Int(mesh.facePages[t]) == page {
                for k in 0..<3 { bin.uint32(mesh.faces[3 * t + k]) }
                count += 3
            }
            views.append(view(start, bin.count - start, target: 34_963))
            accessors.append(.object([M("bufferView", .int(views.count - 1)), M("componentType", .int(5_125)), M("count", .int(count)),
                                      M("type", .string("SCALAR"))]))
            primitives.append(.object([
                M("attributes", .object([M("POSITION", .int(0)), M("NORMAL", .int(1)), M("TEXCOORD_0", .int(2))])),
                M("indices", .int(accessors.count - 1)), M("material", .int(page)), M("mode", .int(4)),
            ]))
        }
        for (page, atlas) in mesh.atlases.enumerated() {
            let jpeg = try JPEGCodec.encode(atlas, quality: atlasQuality)
            let start = bin.count
            bin.bytes += jpeg
            views.append(view(start, jpeg.count, target: nil))
            while bin.count % 4 != 0 { bin.bytes.append(0) }
            images.append(.object([M("bufferView", .int(views.count - 1)), M("mimeType", .string("image/jpeg"))]))
            textures.append(.object([M("source", .int(page)), M("sampler", .int(0))]))
            materials.append(.object([
                M("name", .string(mesh.atlases.count == 1 ? "texture" : "texture \(page)")),
                M("pbrMetallicRoughness", .object([
                    M("baseColorTexture", .object([M("index", .int(page))])),
                    M("metallicFactor", .int(0)), M("roughnessFactor", .int(1)),
                ])),
            ]))
        }
        let length = bin.count
        guard length < Int(UInt32.max) - 1 << 20 else {
            throw RGBDError(.invalidArgument, file: path, "the mesh is too large for a glTF binary (\(length) bytes of buffer, at most 4 GiB)")
        }
        let json = JSONValue.object([
            asset(axes: axes, note: ("texture", "base color atlases from the scan's frames, one frame per triangle (scale \(mesh.scale) of the frames' pixels), one primitive per atlas"),
                  comments: comments),
            M("scene", .int(0)),
            M("scenes", .array([.object([M("nodes", .array([.int(0)]))])])),
            M("nodes", .array([.object([M("mesh", .int(0)), M("name", .string("rgbd surface"))])])),
            M("meshes", .array([.object([M("name", .string("surface")), M("primitives", .array(primitives))])])),
            M("materials", .array(materials)),
            M("textures", .array(textures)),
            M("samplers", .array([.object([M("magFilter", .int(9729)), M("minFilter", .int(9987)),
                                           M("wrapS", .int(33071)), M("wrapT", .int(33071))])])),
            M("images", .array(images)),
            M("buffers", .array([.object([M("byteLength", .int(length))])])),
            M("bufferViews", .array(views)),
            M("accessors", .array(accessors)),
        ])
        return container(json: json, bin: bin)
    }
}
