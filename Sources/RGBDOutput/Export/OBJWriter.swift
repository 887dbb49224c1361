/// Wavefront OBJ (`NAME.obj`), staged (the file appears only when complete).
///
/// `v x y z r g b`: positions in meters in the axes of `YUpAxes` (+Y up, right-handed,
/// as Blender's importer and most viewers read OBJ), each with its color (sRGB, 0…1: the
/// vertex-color extension that Blender, MeshLab and trimesh read); `vn`: unit normals,
/// turned alike; `f a//a b//b c//c` (1-based, counter-clockwise seen from the observed
/// side). No material: with vertex colors alone an OBJ needs none, and a material
/// (`usemtl`) makes trimesh drop the vertex colors (measured); a textured mesh will bring
/// its `NAME.mtl` and atlas images, staged with the OBJ. `#` comments give rgbd's version,
/// the axes' mapping and the PLY header's lines.
public enum OBJWriter {
    /// Writes `mesh` to `path`.
    /// - Throws: `RGBDError` for a mesh whose arrays disagree, or when a file cannot be written.
    public static func write(path: String, mesh: TriangleMesh, axes: YUpAxes, comments: [String] = []) throws {
        let n = mesh.vertexCount
        guard mesh.positions.count == 3 * n, mesh.normals.count == 3 * n, mesh.colors.count == 3 * n,
              mesh.faces.count % 3 == 0, mesh.faces.allSatisfy({ Int($0) < n }) else {
            throw RGBDError(.invalidArgument, file: path, "a mesh needs 3 values per vertex for positions, colors and normals, and faces of existing vertices")
        }
        var header = "# rgbd \(RGBDVersion.string): a fused surface, meters\n"
        header += "# axes: \(axes.description)\n"
        header += "# matrix from rgbd's world (row-major 3x3): " + axes.matrix.map { "\($0)" }.joined(separator: " ") + "\n"
        for line in comments { header += "# " + line.replacingControlCharacters() + "\n" }
        header += "o surface\n"
        var text = Array(header.utf8)
        text.reserveCapacity(text.count + n * 90 + mesh.faceCount * 40)
        let normals = GLTFWriter.normals(of: mesh, axes: axes)
        for i in 0..<n {
            let p = axes.apply(SIMD3(mesh.positions[3 * i], mesh.positions[3 * i + 1], mesh.positions[3 * i + 2]))
            let c = (0..<3).map { Float(mesh.colors[3 * i + $0]) / 255 }
            text += Array("v \(p.x) \(p.y) \(p.z) \(c[0]) \(c[1]) \(c[2])\n".utf8)
        }
        for v in normals { text += Array("vn \(v.x) \(v.y) \(v.z)\n".utf8) }
        for t in 0..<mesh.faceCount {
            let a = mesh.faces[3 * t] + 1, b = mesh.faces[3 * t + 1] + 1, c = mesh.faces[3 * t + 2] + 1
            text += Array("f \(a)//\(a) \(b)//\(b) \(c)//\(c)\n".utf8)
        }
        try FileSystem.createDirectory(Path.directory(of: path))
        let files = StagedFiles()
        try files.stage(path, bytes: text)
        try files.commit()
    }
}

extension String {
    /// The text with line breaks and other control characters as spaces (one comment line).
    fileprivate func replacingControlCharacters() -> String {
        String(unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
    }
}

extension OBJWriter {
    /// The atlas images' names beside `NAME.obj`: `NAME.jpg`, or `NAME_0.jpg`, `NAME_1.jpg`, …
    /// for several atlases.
    package static func atlasNames(stem: String, count: Int) -> [String] {
        count == 1 ? [stem + ".jpg"] : (0..<count).map { "\(stem)_\($0).jpg" }
    }

    /// Writes a textured mesh: `NAME.obj` (`v`, `vt`, `vn`, `f a/a/a ...`, one `usemtl`
    /// group per atlas; `vt`'s v counted from the bottom, as OBJ has it), `NAME.mtl` (one
    /// material per atlas, its `map_Kd`) and the atlases beside it as JPEG
    /// (`atlasNames`), all staged and committed together.
    /// - Throws: `RGBDError` for a mesh whose arrays disagree, or when a file cannot be written.
    package static func write(path: String, textured mesh: TexturedMesh, axes: YUpAxes, comments: [String] = []) throws {
        let n = mesh.positions.count / 3
        guard mesh.normals.count == 3 * n, mesh.uvs.count == 2 * n, mesh.faces.count % 3 == 0,
              mesh.facePages.count == mesh.faces.count / 3,
              mesh.faces.allSatisfy({ Int($0) < n }), mesh.facePages.allSatisfy({ $0 >= 0 && Int($0) < mesh.atlases.count }) else {
            throw RGBDError(.invalidArgument, file: path, "a textured mesh needs positions, normals and texture coordinates per vertex, and faces of existing vertices and atlases")
        }
        let directory = Path.directory(of: path), stem = Path.stem(path)
        func beside(_ name: String) -> String { path.contains("/") ? Path.join(directory, name) : name }
        let materialName = stem + ".mtl"
        let imageNames = atlasNames(stem: stem, count: mesh.atlases.count)
        var header = "# rgbd \(RGBDVersion.string): a fused surface, meters, textured\n"
        header += "# axes: \(axes.description)\n"
        header += "# matrix from rgbd's world (row-major 3x3): " + axes.matrix.map { "\($0)" }.joined(separator: " ") + "\n"
        for line in comments { header += "# " + String(line.map { $0.isNewline ? " " : $0 }) + "\n" }
        header += "mtllib \(materialName)\no surface\n"
        var text = Array(header.utf8)
        for i in 0..<n {
            let p = axes.apply(SIMD3(mesh.positions[3 * i], mesh.positions[3 * i + 1], mesh.positions[3 * i + 2]))
            text += Array("v \(p.x) \(p.y) \(p.z)\n".utf8)
        }
        for i in 0..<n { text += Array("vt \(mesh.uvs[2 * i]) \(1 - mesh.uvs[2 * i + 1])\n".utf8) }
        for i in 0..<n {
            var v = SIMD3(mesh.normals[3 * i], mesh.normals[3 * i + 1], mesh.normals[3 * i + 2])
            let length = (v * v).sum().squareRoot()
            v = axes.apply(length > 0 && length.isFinite ? v / length : SIMD3(0, 0, 1))
            text += Array("vn \(v.x) \(v.y) \(v.z)\n".utf8)
        }
        var library = materialHeader(of: path) + ", one per atlas\n"
        for page in mesh.atlases.indices {
            let name = mesh.atlases.count == 1 ? "surface" : "surface\(page)"
            text += Array("usemtl \(name)\n".utf8)
            for t in 0..<mesh.facePages.count where Int(mesh.facePages[t]) == page {
                let a = mesh.faces[3 * t] + 1, b = mesh.faces[3 * t + 1] + 1, c = mesh.faces[3 * t + 2] + 1
                text += Array("f \(a)/\(a)/\(a) \(b)/\(b)/\(b) \(c)/\(c)/\(c)\n".utf8)
            }
            library += "newmtl \(name)\nKa 0 0 0\nKd 1 1 1\nKs 0 0 0\nd 1\nillum 1\nmap_Kd \(imageNames[page])\n"
        }
        try checkSideFiles(of: path, atlases: mesh.atlases.count)
        let files = StagedFiles()
        try files.createDirectory(directory)
        try files.stage(path, bytes: text)
        try files.stage(beside(materialName), bytes: Array(library.utf8))
        for (page, atlas) in mesh.atlases.enumerated() {
            try files.stage(beside(imageNames[page]), bytes: try JPEGCodec.encode(atlas, quality: GLTFWriter.atlasQuality))
        }
        try files.commit()
    }
}

extension OBJWriter {
    /// The first line of the `.mtl` rgbd writes beside `path` (without its tail): what
    /// marks the material library, and the atlases it names, as rgbd's own.
    static func materialHeader(of path: String) -> String {
        "# rgbd \(RGBDVersion.string): the materials of \(Path.lastComponent(path))"
    }

    /// Refuses to replace a file beside `path` that a textured OBJ writes (`NAME.mtl`,
    /// `NAME.jpg`, `NAME_0.jpg`, …) unless an earlier rgbd wrote it for this same OBJ: the
    /// user named `NAME.obj` only, so a `NAME.jpg` of theirs is never replaced. An existing
    /// `NAME.mtl` is rgbd's when its first line is rgbd's material header for `NAME.obj`;
    /// an existing image is rgbd's when that `.mtl` names it (`map_Kd`).
    ///
    /// - Parameter atlases: the number of atlases to be written; nil checks every atlas
    ///   name that exists now (before the count is known).
    /// - Throws: `RGBDError(.invalidArgument)` naming the file that would be replaced
    ///   (nothing is written).
    package static func checkSideFiles(of path: String, atlases: Int? = nil) throws {
        let directory = Path.directory(of: path), stem = Path.stem(path)
        func beside(_ name: String) -> String { path.contains("/") ? Path.join(directory, name) : name }
        let material = beside(stem + ".mtl")
        var images: [String]
        if let atlases {
            images = atlasNames(stem: stem, count: atlases)
        } else {
            let names = (try? FileSystem.contentsOfDirectory(path.contains("/") ? directory : ".")) ?? []
            images = names.filter { name in
                guard name.hasPrefix(stem), Path.pathExtension(name) == "jpg" else { return false }
                let middle = Path.stem(name).dropFirst(stem.count)
                return middle.isEmpty || (middle.first == "_" && middle.count > 1 && middle.dropFirst().allSatisfy(\.isWholeNumber))
            }
        }
        images = images.filter { FileSystem.exists(beside($0)) }
        guard FileSystem.exists(material) || !images.isEmpty else { return }
        // The material library rgbd wrote: its header line, and the images it names.
        var named: Set<String> = []
        if FileSystem.exists(material) {
            let text = String(decoding: (try? FileSystem.readPrefix(material, count: 1 << 16)) ?? [], as: UTF8.self)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let suffix = ": the materials of \(Path.lastComponent(path)),"
            let ours = lines.first.map { $0.hasPrefix("# rgbd ") && $0.contains(suffix) } ?? false
            if !ours {
                throw RGBDError(.invalidArgument, file: material,
                                "exists and is not the material library rgbd wrote for \(Path.lastComponent(path)): a textured OBJ writes its .mtl and images beside it; move that file or give another output name (nothing was written)")
            }
            for line in lines where line.hasPrefix("map_Kd ") { named.insert(String(line.dropFirst(7))) }
        }
        for image in images where !named.contains(image) {
            throw RGBDError(.invalidArgument, file: beside(image),
                            "exists and rgbd did not write it for \(Path.lastComponent(path)): a textured OBJ writes its atlas images beside it; move that file or give another output name (nothing was written)")
        }
    }
}
