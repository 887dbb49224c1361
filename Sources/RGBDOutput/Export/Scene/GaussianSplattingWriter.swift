/// COLMAP's layout as 3D Gaussian Splatting trainers read it (graphdeco-inria's
/// `scene/dataset_readers.py` and its descendants): `images/` + `sparse/0/`, cameras
/// `PINHOLE` only, and `sparse/0/points3D.ply` with `x y z nx ny nz red green blue`.
///
/// Those trainers ignore the principal point (they assume the frustum is centred), so
/// every image is **cropped** to the largest window centred on the principal point (the
/// same size for all frames) and shifted by the remaining fraction of a pixel with
/// bilinear weights: the exported principal point is exactly the image's centre.
struct GaussianSplattingWriter: SceneLayoutWriter {
    private let model = COLMAPWriter(centred: true)

    var layout: SceneLayout { model.layout }

    func fileStem(_ info: SceneFrameInfo, ordinal: Int, seconds: Double) -> String {
        model.fileStem(info, ordinal: ordinal, seconds: seconds)
    }

    func finish(_ frames: [ExportedFrame], cloud: SceneCloud?, scene: Scene, options: SceneExportOptions,
                into folder: StagedDirectory) throws {
        try model.finish(frames, cloud: cloud, scene: scene, options: options, into: folder)
        if let cloud {
            try ExportFiles.writeCloud(cloud, transformed: .identity, colored: scene.colorSize != nil, normals: true,
                                       to: folder.path(COLMAPWriter.model + "/points3D.ply"), scene: scene)
        }
    }
}
