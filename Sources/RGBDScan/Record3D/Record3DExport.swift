/// Record3D's "EXR + JPG" export folder: `metadata.json`, `rgb/N.jpg`, `depth/N.exr`.
extension Record3DScan {
    static func openExport(_ folder: String) throws -> Scene {
        let metadataPath = Path.join(folder, "metadata.json")
        let metadata = try Record3DMetadata.parse(FileSystem.readFile(metadataPath, limit: maxMetadataBytes),
                                                  name: metadataPath)
        let (depthFiles, _) = try StrayScan.numberedFiles(in: Path.join(folder, "depth"), extensions: ["exr"])
        let rgbFolder = Path.join(folder, "rgb")
        let colorFiles = FileSystem.isDirectory(rgbFolder)
            ? try StrayScan.numberedFiles(in: rgbFolder, extensions: ["jpg", "jpeg"]).files : [:]
        guard let first = depthFiles.keys.filter({ $0 < metadata.poses.count }).min(), let firstPath = depthFiles[first] else {
            throw RGBDError(.invalidScene, file: Path.join(folder, "depth"),
                            "no N.exr depth map for any of the \(metadata.poses.count) poses")
        }
        let firstDepth = try EXRDepth.read(path: firstPath)
        let depthSize = (firstDepth.width, firstDepth.height)
        if let dw = metadata.depthWidth, let dh = metadata.depthHeight, (dw, dh) != depthSize {
            throw RGBDError(.invalidScene, file: firstPath,
                            "a \(firstDepth.width)×\(firstDepth.height) depth map where metadata.json says \(dw)×\(dh)")
        }
        let storage = ExportStorage(depthFiles: depthFiles, colorFiles: colorFiles, depthSize: depthSize,
                                    colorSize: (metadata.width, metadata.height))
        return try scene(path: folder, metadata: metadata, has: { depthFiles[$0] != nil }, depthSize: depthSize,
                         hasColor: !colorFiles.isEmpty, variant: "EXR + JPG export", storage: storage)
    }
}

/// An EXR + JPG export's files per frame.
struct ExportStorage: SceneStorage {
    let depthFiles: [Int: String]
    let colorFiles: [Int: String]
    let depthSize: (width: Int, height: Int)
    let colorSize: (width: Int, height: Int)

    func makeReader(color: Bool) throws -> any SceneFrameReader { Reader(storage: self, color: color) }

    struct Reader: SceneFrameReader {
        let storage: ExportStorage
        package let color: Bool

        func read(_ info: SceneFrameInfo) throws -> SceneFrame {
            guard let path = storage.depthFiles[info.index] else {
                throw RGBDError(.invalidScene, location: "frame \(info.index)", "no depth")
            }
            let exr = try EXRDepth.read(path: path)
            guard exr.width == storage.depthSize.width, exr.height == storage.depthSize.height else {
                throw RGBDError(.invalidScene, file: path,
                                "a \(exr.width)×\(exr.height) depth map where the scan's are \(storage.depthSize.width)×\(storage.depthSize.height)")
            }
            let depth = DepthMap(width: exr.width, height: exr.height, channels: 1, samples: Record3DScan.meters(exr.samples))
            var image: ColorImage?
            if color, let file = storage.colorFiles[info.index] {
                let decoded = try JPEGCodec.decodeRGB(FileSystem.readFile(file), file: file)
                try Record3DScan.checkColor(decoded, storage.colorSize, file: file)
                image = decoded
            }
            return SceneFrame(info: info, depth: depth, confidence: nil, color: image)
        }
    }
}
