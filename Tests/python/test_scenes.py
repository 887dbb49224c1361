"""Scans from Python (rgbd.load_scene) against the real library, checked by geometry.

Scans come from the project's generator (rgbd-synth scan, beside the rgbd binary). What
is checked: frames, sizes and value ranges; poses are rotations; a point seen in one
frame, moved into another frame's camera with the two poses, lands where that frame's
own depth map says (reprojection between frames: the poses and intrinsics agree with
the depth, whatever the app's convention on disk); Stray and Record3D give the same
geometry; a malformed scan raises RGBDError with status INVALID_SCENE.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import rgbd
from conftest import REPO
from synthetic_room import room_distance


def make_scan(synth, tmp_path, layout, frames=6, extra=()):
    subprocess.run([str(synth), "scan", "--layout", layout, "--frames", str(frames), "--size", "320x240",
                    "-o", str(tmp_path), "--name", layout, *extra], check=True, capture_output=True)
    return tmp_path / (layout + (".r3d" if layout.startswith("r3d") and layout != "r3d-exr" else ""))


def backproject(frame, step=6):
    """World points of every step-th valid depth pixel (OpenCV camera axes, c2w pose)."""
    k = frame.intrinsics
    v, u = np.mgrid[0:frame.depth.shape[0]:step, 0:frame.depth.shape[1]:step]
    z = frame.depth[v, u]
    keep = np.isfinite(z)
    cam = np.stack([(u[keep] - k.cx) * z[keep] / k.fx, (v[keep] - k.cy) * z[keep] / k.fy, z[keep]], axis=1)
    return cam @ frame.pose[:3, :3].T + frame.pose[:3, 3]


def reprojection_error(points, frame):
    """Depth error (m) of world points seen from another frame: the median over those
    inside it and the number of them (inf when fewer than 200 are)."""
    w2c = np.linalg.inv(frame.pose)
    cam = points @ w2c[:3, :3].T + w2c[:3, 3]
    k = frame.intrinsics
    z = cam[:, 2]
    u = np.round(cam[:, 0] / z * k.fx + k.cx).astype(int)
    v = np.round(cam[:, 1] / z * k.fy + k.cy).astype(int)
    h, w = frame.depth.shape
    inside = (z > 0) & (u >= 0) & (u < w) & (v >= 0) & (v < h)
    seen = frame.depth[v[inside], u[inside]]
    ok = np.isfinite(seen)
    if ok.sum() < 200:
        return float("inf")
    return float(np.median(np.abs(seen[ok] - z[inside][ok])))


@pytest.mark.parametrize("layout", ["stray", "stray-legacy", "r3d", "r3d-old"])
def test_frames_reproject_onto_each_other(synth, tmp_path, layout):
    path = make_scan(synth, tmp_path, layout)
    with rgbd.load_scene(path) as scene:
        assert len(scene) == 6
        assert scene.depth_size == (256, 192)
        assert scene.color_size == (320, 240)
        frames = list(scene)
        assert [f.index for f in frames] == list(range(6))
        for f in frames:
            r = f.pose[:3, :3]
            assert np.allclose(r @ r.T, np.eye(3), atol=1e-6) and abs(np.linalg.det(r) - 1) < 1e-6
            assert f.depth.shape == (192, 256) and f.depth.dtype == np.float32
            assert f.color.shape == (240, 320, 3) and f.color.dtype == np.uint8
            assert f.confidence is not None and set(np.unique(f.confidence)) <= {0, 1, 2}
            valid = f.depth[np.isfinite(f.depth)]
            assert valid.size > 0.5 * f.depth.size and valid.min() > 0
        # Frame 0's points seen from frame 5 (the camera moved): within 5 mm of its depth.
        error = reprojection_error(backproject(frames[0]), frames[5])
        assert error < 0.005, f"median reprojection depth error {error} m"
        # The same, with frame 5's pose misread in the other camera convention: far off.
        wrong = frames[5].pose @ np.diag([1.0, -1.0, -1.0, 1.0])
        moved = rgbd.Frame(**{**frames[5].__dict__, "pose": wrong})
        assert reprojection_error(backproject(frames[0]), moved) > 0.05


def test_indexing_and_random_access(synth, tmp_path):
    path = make_scan(synth, tmp_path, "stray")
    with rgbd.load_scene(path) as scene:
        last = scene[-1]
        first = scene[0]
        again = scene[5]
        assert last.index == 5 and first.index == 0
        assert np.array_equal(last.color, again.color) and np.array_equal(last.depth, again.depth, equal_nan=True)
        assert not np.array_equal(first.color, last.color)
        assert [f.index for f in scene[1:4]] == [1, 2, 3]
        assert scene.frame(2, color=False).color is None
        with pytest.raises(IndexError):
            scene[6]
    with pytest.raises(ValueError):
        scene.frame(0)


def test_malformed_scan_raises_invalid_scene(synth, tmp_path):
    path = make_scan(synth, tmp_path, "stray-v9")
    odometry = path / "odometry.csv"
    lines = odometry.read_text().splitlines()
    lines[2] = lines[2] + ", 1.0"
    odometry.write_text("\n".join(lines) + "\n")
    with pytest.raises(rgbd.RGBDError) as error:
        rgbd.load_scene(path)
    assert error.value.status == rgbd.Status.INVALID_SCENE
    assert str(odometry) in str(error.value) and "line 3" in str(error.value)


def test_missing_paths_and_parts_are_named(synth, tmp_path):
    """load_scene of a path that does not exist says so; of a Stray folder without
    odometry.csv, which file is missing."""
    with pytest.raises(rgbd.RGBDError) as error:
        rgbd.load_scene(tmp_path / "nope")
    assert str(error.value) == f"{tmp_path / 'nope'}: no such file or directory"
    path = make_scan(synth, tmp_path, "stray-v9")
    (path / "odometry.csv").unlink()
    with pytest.raises(rgbd.RGBDError) as error:
        rgbd.load_scene(path)
    assert error.value.status == rgbd.Status.INVALID_SCENE
    assert f"{path}: a Stray Scanner scan" in str(error.value) and "without odometry.csv" in str(error.value)


def test_fuse_without_voxel_lets_the_library_choose(synth, tmp_path):
    """voxel=None (the C ABI's voxel 0): the library chooses the voxel from the scan's depth
    and says so in the mesh's comments, as rgbd fuse does without --voxel."""
    path = make_scan(synth, tmp_path, "stray", frames=6)
    with rgbd.load_scene(path) as scene:
        mesh = scene.fuse()
    line = next(c for c in mesh.comments if c.startswith("voxel "))
    assert "(automatic: a depth pixel's footprint" in line, line
    assert 0.008 <= float(line.split()[1]) <= 0.02, line
    assert len(mesh.vertices) > 1000


def test_fuse_returns_the_mesh_rgbd_fuse_writes(synth, tmp_path, rgbd_bin):
    """Scene.fuse (the C ABI's rgbd_scene_fuse, count then fill) gives numpy arrays on the
    scan's true surfaces, bit for bit the mesh `rgbd fuse` writes."""
    import json

    from plyfile import PlyData

    path = make_scan(synth, tmp_path, "stray", frames=10)
    with rgbd.load_scene(path) as scene:
        mesh = scene.fuse(voxel=0.02)
    assert isinstance(mesh, rgbd.Mesh)
    n = len(mesh.vertices)
    assert n > 3000 and mesh.vertices.dtype == np.float32 and mesh.faces.dtype == np.uint32
    assert mesh.faces.shape[1] == 3 and mesh.faces.max() < n and mesh.colors.shape == (n, 3)
    assert np.allclose(np.linalg.norm(mesh.normals, axis=1), 1, atol=1e-3)
    truth = json.loads((tmp_path / "stray.truth.json").read_text())
    distance = room_distance(mesh.vertices.astype(np.float64), truth)
    assert np.median(distance) < 0.002 and np.quantile(distance, 0.95) < 0.02
    ply = tmp_path / "mesh.ply"
    subprocess.run([rgbd_bin, "fuse", str(path), "-o", str(ply), "--voxel", "0.02", "-q"], check=True)
    written = PlyData.read(str(ply))
    v = written["vertex"]
    assert np.array_equal(np.stack([v["x"], v["y"], v["z"]], axis=1), mesh.vertices)
    assert np.array_equal(np.stack([v["red"], v["green"], v["blue"]], axis=1), mesh.colors)
    assert np.array_equal(np.stack(written["face"]["vertex_indices"]).astype(np.uint32), mesh.faces)
    # The mesh writes itself as rgbd fuse writes it: the same file, header comments and all.
    mine = tmp_path / "mine.ply"
    mesh.write(mine)
    assert mine.read_bytes() == ply.read_bytes()
    assert mesh.comments[0].startswith("rgbd ") and f"source {path}" in mesh.comments[1]
    mesh.write(tmp_path / "mine-ascii.ply", ascii=True)
    ascii_ply = PlyData.read(str(tmp_path / "mine-ascii.ply"))
    assert np.array_equal(np.stack(ascii_ply["face"]["vertex_indices"]).astype(np.uint32), mesh.faces)
    with pytest.raises(ValueError, match=r"\.ply, \.glb, \.obj or \.html"):
        mesh.write(tmp_path / "mesh.stl")
    assert not (tmp_path / "mesh.stl").exists()
    # The option names are rgbd fuse's; the earlier ones are still taken.
    with rgbd.load_scene(path) as scene:
        renamed = scene.fuse(voxel=0.02, flying_pixel_step=0.05, max_memory=512)
        older = scene.fuse(voxel=0.02, edge_threshold=0.05, max_memory_mb=512)
        first = scene[0]
    assert np.array_equal(renamed.vertices, mesh.vertices) and np.array_equal(older.faces, mesh.faces)
    # A frame's repr is one short line (it once printed whole arrays).
    text = repr(first)
    assert "\n" not in text and len(text) < 200 and "depth 192×256" in text, text
    # Bad options raise RGBDError with the library's message.
    with rgbd.load_scene(path) as scene, pytest.raises(rgbd.RGBDError, match="voxel must be between"):
        scene.fuse(voxel=1e-9)
    # The confidence level goes through the library's one rule, named as Python spells it.
    with rgbd.load_scene(path) as scene:
        for call in (lambda: scene.fuse(voxel=0.02, min_confidence=5),
                     lambda: scene.export(str(tmp_path / "e"), "colmap", min_confidence=-1)):
            with pytest.raises(rgbd.RGBDError, match=r"the confidence levels are 0 \(low\), 1 \(medium\) and 2 \(high\), "
                                                     r"not (5|-1) \(min_confidence\)"):
                call()
    assert not (tmp_path / "e").exists()


def test_fused_mesh_writes_the_files_rgbd_fuse_writes(synth, tmp_path, rgbd_bin):
    """Mesh.write (the C ABI's rgbd_mesh_write) of a fused mesh: .glb and .obj textured from
    the scene's frames, and with texture_size=0 vertex colors, byte for byte the files
    `rgbd fuse -o` writes (the .obj with its .mtl and atlas); a pickled mesh keeps its arrays
    and writes .ply only; an .obj never replaces an image beside it that rgbd did not write."""
    import pickle

    path = make_scan(synth, tmp_path, "stray", frames=10)
    with rgbd.load_scene(path) as scene:
        mesh = scene.fuse(voxel=0.02)
    for name, flags, size in (("room.glb", [], 4096), ("room.obj", [], 4096), ("plain.glb", ["--texture-size", "0"], 0)):
        cli, mine = tmp_path / "cli", tmp_path / "mine"
        subprocess.run([rgbd_bin, "fuse", str(path), "-o", str(cli / name), "--voxel", "0.02", "-q"] + flags, check=True)
        textured = mesh.write(mine / name, texture_size=size)
        assert (textured is None) == (size == 0), (name, textured)
        if textured is not None:
            assert 0.5 < textured <= 1, (name, textured)
        made = sorted(p.name for p in mine.iterdir())
        assert made == sorted(p.name for p in cli.iterdir()), made
        for file in made:
            assert (mine / file).read_bytes() == (cli / file).read_bytes(), (name, file)
        for folder in (cli, mine):
            for file in folder.iterdir():
                file.unlink()
    assert pickle.loads(pickle.dumps(mesh)).faces.tolist() == mesh.faces.tolist()
    with pytest.raises(ValueError, match=r"made from arrays is written as \.ply"):
        pickle.loads(pickle.dumps(mesh)).write(tmp_path / "copy.glb")
    with pytest.raises(ValueError, match="texture_size"):
        mesh.write(tmp_path / "room.glb", texture_size=7)
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "room.jpg").write_bytes(b"a photo of mine")
    with pytest.raises(rgbd.RGBDError, match="room.jpg: exists and rgbd did not write it"):
        mesh.write(tmp_path / "keep" / "room.obj")
    assert sorted(p.name for p in (tmp_path / "keep").iterdir()) == ["room.jpg"]
    assert (tmp_path / "keep" / "room.jpg").read_bytes() == b"a photo of mine"


def test_textured_mesh_arrays_are_the_glb_s_and_show_the_true_colors(synth, tmp_path, rgbd_bin):
    """Mesh.textured (rgbd_mesh_texture and its copies): the arrays of the texture the .glb
    carries (the same triangles, texture coordinates and atlas, read back by pygltflib), on
    the true surfaces. (The texture's colors against the truth: MeshTexturingTests.)"""
    import io
    import json

    import pygltflib
    from PIL import Image

    path = make_scan(synth, tmp_path, "stray", frames=10)
    truth = json.loads((tmp_path / "stray.truth.json").read_text())
    with rgbd.load_scene(path) as scene:
        mesh = scene.fuse(voxel=0.02)
    texture = mesh.textured(texture_size=1024)
    assert isinstance(texture, rgbd.TexturedMesh) and "textured" in repr(texture)
    n, m = len(texture.vertices), len(texture.faces)
    assert n > 100 and texture.normals.shape == (n, 3) and texture.uvs.shape == (n, 2) and texture.faces.max() < n
    assert texture.face_atlas.shape == (m,) and set(texture.face_atlas.tolist()) <= set(range(len(texture.atlases)))
    assert all(a.shape == (1024, 1024, 3) and a.dtype == np.uint8 for a in texture.atlases)
    assert 0.5 < texture.coverage <= 1 and ((texture.uvs >= 0) & (texture.uvs <= 1)).all()
    # Simplified within the voxel, still on the true surfaces.
    assert m < len(mesh.faces)
    assert np.median(room_distance(texture.vertices.astype(np.float64), truth)) < 0.004
    # The .glb written with the same size holds these very arrays.
    mesh.write(tmp_path / "room.glb", texture_size=1024)
    gltf = pygltflib.GLTF2().load(str(tmp_path / "room.glb"))
    blob = gltf.binary_blob()

    def accessor(index, dtype, width):
        a = gltf.accessors[index]
        view = gltf.bufferViews[a.bufferView]
        return np.frombuffer(blob, dtype=dtype, count=a.count * width,
                             offset=view.byteOffset + (a.byteOffset or 0)).reshape(a.count, width)

    primitives = gltf.meshes[0].primitives
    uvs = accessor(primitives[0].attributes.TEXCOORD_0, np.float32, 2)
    assert np.array_equal(uvs, texture.uvs)
    faces = np.concatenate([accessor(p.indices, np.uint32 if gltf.accessors[p.indices].componentType == pygltflib.UNSIGNED_INT
                                     else np.uint16, 1).reshape(-1, 3) for p in primitives])
    assert sorted(map(tuple, faces.tolist())) == sorted(map(tuple, texture.faces.tolist()))
    image = gltf.images[0]
    view = gltf.bufferViews[image.bufferView]
    decoded = np.asarray(Image.open(io.BytesIO(blob[view.byteOffset:view.byteOffset + view.byteLength])).convert("RGB"))
    assert np.abs(decoded.astype(int) - texture.atlases[0].astype(int)).mean() < 3  # JPEG's loss only
    with pytest.raises(ValueError, match="texture_size"):
        mesh.textured(texture_size=0)


def test_fuse_min_weight_and_simplification_are_rgbd_fuse_s(synth, tmp_path, rgbd_bin):
    """min_weight, triangles and max_error (the C ABI's rgbd_fuse_options fields) are
    rgbd fuse's --min-weight, --triangles and --max-error: the same mesh bit for bit, still
    on the true surfaces; out-of-range values raise before anything runs."""
    import json

    path = make_scan(synth, tmp_path, "stray", frames=10)
    truth = json.loads((tmp_path / "stray.truth.json").read_text())
    with rgbd.load_scene(path) as scene:
        default = scene.fuse(voxel=0.02)
        every = scene.fuse(voxel=0.02, min_weight=0)
        strict = scene.fuse(voxel=0.02, min_weight=3)
        simplified = scene.fuse(voxel=0.02, triangles=len(default.faces) // 10)
        bounded = scene.fuse(voxel=0.02, max_error=0.002)
        for bad in (dict(min_weight=-1), dict(triangles=0), dict(max_error=0), dict(max_error=-0.1)):
            with pytest.raises(ValueError):
                scene.fuse(voxel=0.02, **bad)
    # Fewer views needed, more surface kept; more needed, less.
    assert len(every.faces) > len(default.faces) > len(strict.faces) > 0
    assert not any(c.startswith("voxels meshed when") for c in every.comments), every.comments
    assert "voxels meshed when observed with a weight of at least 3.0 full-weight views" in strict.comments, strict.comments
    # About a tenth of the triangles, the boundary kept, still on the true surfaces.
    assert len(simplified.faces) <= 0.12 * len(default.faces), (len(simplified.faces), len(default.faces))
    full = room_distance(default.vertices.astype(np.float64), truth)
    cut = room_distance(simplified.vertices.astype(np.float64), truth)
    assert np.median(cut) <= 1.5 * np.median(full) + 0.001, (np.median(cut), np.median(full))
    assert len(bounded.faces) < len(default.faces)
    assert any("simplified" in c for c in simplified.comments), simplified.comments
    for mesh, flags in ((every, ["--min-weight", "0"]), (simplified, ["--triangles", str(len(default.faces) // 10)]),
                        (bounded, ["--max-error", "0.002"])):
        ply = tmp_path / "cli.ply"
        subprocess.run([rgbd_bin, "fuse", str(path), "-o", str(ply), "--voxel", "0.02", "-q"] + flags, check=True)
        mine = tmp_path / "mine.ply"
        mesh.write(mine)
        assert mine.read_bytes() == ply.read_bytes(), flags


@pytest.mark.parametrize("layout, extra", [("stray", ()), ("r3d-exr", ("--record3d-world", "arkit"))])
def test_fuse_and_export_level_frame(synth, tmp_path, rgbd_bin, layout, extra):
    """frame="level" (RGBD_FRAME_LEVEL through the C ABI), for a Stray scan and a Record3D
    export in ARKit's gravity-aligned world: the fused surface, taken back to
    the scan's +y-up world by the inverse of "up becomes +z", (x, y, z) -> (x, z, -y), lies
    on the true surfaces, bit for bit `rgbd fuse --frame level`'s mesh; export's poses are
    one rigid map of the scan's, taking +y to +z; "enu" and unknown frames are refused."""
    import json

    from plyfile import PlyData

    path = make_scan(synth, tmp_path, layout, frames=10, extra=extra)
    truth = json.loads((tmp_path / f"{layout}.truth.json").read_text())
    # The layout's world is the room's own (its truth's world_from_room the identity).
    assert np.array_equal(np.array(truth["world_from_room"]), np.eye(4))
    with rgbd.load_scene(path) as scene:
        mesh = scene.fuse(voxel=0.02, frame="level")
        world = mesh.vertices.astype(np.float64)[:, [0, 2, 1]] * np.array([1, 1, -1])
        distance = room_distance(world, truth)
        assert len(world) > 3000 and np.median(distance) < 0.002
        with pytest.raises(rgbd.RGBDError, match="enu"):
            scene.fuse(voxel=0.02, frame="enu")
        with pytest.raises(ValueError):
            scene.fuse(voxel=0.02, frame="up")
        assert scene.export(tmp_path / "tum", "tum", frame="level") == 10
    ply = tmp_path / "mesh.ply"
    subprocess.run([rgbd_bin, "fuse", str(path), "-o", str(ply), "--voxel", "0.02", "--frame", "level", "-q"], check=True)
    v = PlyData.read(str(ply))["vertex"]
    assert np.array_equal(np.stack([v["x"], v["y"], v["z"]], axis=1), mesh.vertices)
    rows = [line.split() for line in (tmp_path / "tum" / "groundtruth.txt").read_text().splitlines()
            if not line.startswith("#")]
    heights = np.array([float(r[3]) for r in rows])
    true_heights = np.array([f["camera_to_world"][1][3] for f in truth["frames"]])
    assert np.allclose(heights, true_heights, atol=1e-5)


def test_fuse_dask_example_fuses_one_scan_per_task(synth, tmp_path):
    """Examples/python/fuse_dask.py on a LocalCluster: two scans fused (the same arrays as
    Scene.fuse), a broken one reported by name while the others go on, exit status 1."""
    good = []
    for name in ("a", "b"):
        good.append(make_scan(synth, tmp_path / name, "stray", frames=4).rename(tmp_path / f"scan_{name}"))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "odometry.csv").write_text("not, a, table\n")
    (broken / "depth").mkdir()
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(REPO / "Examples" / "python" / "fuse_dask.py"), *map(str, good),
                           str(broken), "-o", str(out), "--voxel", "0.03", "--threads"],
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=str(REPO / "python")))
    assert proc.returncode == 1, proc.stderr
    assert f"error {broken}: " in proc.stderr and "2 of 3 scans" in proc.stdout
    with rgbd.load_scene(good[0]) as scene:
        mesh = scene.fuse(voxel=0.03)
    saved = np.load(out / "scan_a.npz")
    assert len(saved["faces"]) > 100 and (out / "scan_b.npz").exists()
    assert np.array_equal(saved["vertices"], mesh.vertices) and np.array_equal(saved["faces"], mesh.faces)


def test_fused_mesh_opens_in_meshlab(synth, tmp_path, rgbd_bin):
    """MeshLab's own reader (pymeshlab, optional: about 100 MB, not in the test
    requirements; `pip install pymeshlab` into .venv to run this) reads `rgbd fuse`'s PLY
    with every vertex, face, color and normal, on the scan's true surfaces, and finds no
    non-manifold edge."""
    pymeshlab = pytest.importorskip("pymeshlab")
    import json

    path = make_scan(synth, tmp_path, "stray", frames=10)
    ply = tmp_path / "mesh.ply"
    subprocess.run([rgbd_bin, "fuse", str(path), "-o", str(ply), "--voxel", "0.02", "-q"], check=True)
    with rgbd.load_scene(path) as scene:
        mesh = scene.fuse(voxel=0.02)
    ms = pymeshlab.MeshSet()
    ms.load_new_mesh(str(ply))
    m = ms.current_mesh()
    assert m.vertex_number() == len(mesh.vertices) and m.face_number() == len(mesh.faces)
    assert np.array_equal(m.face_matrix(), mesh.faces.astype(np.int64))
    assert np.allclose(m.vertex_matrix(), mesh.vertices, atol=1e-6)
    assert np.allclose(m.vertex_normal_matrix(), mesh.normals, atol=1e-6)
    assert np.allclose(m.vertex_color_matrix()[:, :3] * 255, mesh.colors, atol=0.5)
    truth = json.loads((tmp_path / "stray.truth.json").read_text())
    assert np.median(room_distance(m.vertex_matrix(), truth)) < 0.002
    assert ms.get_topological_measures()["non_two_manifold_edges"] == 0


def test_level_frame_refused_for_a_rebased_record3d_world(synth, tmp_path):
    """A Record3D scan re-based on its first frame (pose 0 the identity) is not
    gravity-aligned: frame="level" is an RGBDError saying why, in fuse and export."""
    path = make_scan(synth, tmp_path, "r3d", frames=3)
    with rgbd.load_scene(path) as scene:
        for call in (lambda: scene.fuse(voxel=0.02, frame="level"),
                     lambda: scene.export(tmp_path / "tum", "tum", frame="level")):
            with pytest.raises(rgbd.RGBDError, match="pose 0 is the identity"):
                call()
    assert not (tmp_path / "tum").exists()


def _truth_poses(truth_path, key="camera_to_world"):
    import json
    truth = json.loads(truth_path.read_text())
    return np.array([frame[key] for frame in truth["frames"]], dtype=np.float64)


def test_refine_returns_poses_nearer_the_truth(synth, tmp_path, rgbd_bin):
    """scene.refine() on a scan with ARKit-like drift (2 s of the default path, two jumps):
    poses (N, 4, 4) nearer the truth than the recorded ones, frame 0 kept; the same as
    rgbd refine's file; set_poses / load_scene(poses=) make fuse use them and say so."""
    path = make_scan(synth, tmp_path, "stray", frames=120,
                     extra=("--depth-noise", "0.002", "--pose-drift", "--size", "160x120"))
    truth = _truth_poses(tmp_path / "stray.truth.json")
    recorded = _truth_poses(tmp_path / "stray.truth.json", "recorded_camera_to_world")
    with rgbd.load_scene(path) as scene:
        assert np.allclose(np.stack([scene.pose(i) for i in range(len(scene))]), recorded, atol=1e-5)
        poses, report = scene.refine()
        assert poses.shape == (120, 4, 4) and report["frames"] == 120 and report["tracked"] == 119
        assert report["residual_after"] <= report["residual_before"]
        assert np.allclose(poses[0], recorded[0], atol=1e-9)
        before = np.linalg.norm(recorded[:, :3, 3] - truth[:, :3, 3], axis=1)
        after = np.linalg.norm(poses[:, :3, 3] - truth[:, :3, 3], axis=1)
        assert after.mean() < before.mean(), (after.mean(), before.mean())
        # The scene keeps its own poses until told.
        assert np.allclose(scene.pose(5), recorded[5], atol=1e-5)
        assert scene.set_poses(truth, source="the generator's truth") == 0
        assert np.allclose(scene.pose(5), truth[5], atol=1e-9)
        mesh = scene.fuse(voxel=0.02)
        assert "poses the generator's truth" in mesh.comments
        with pytest.raises(rgbd.RGBDError, match="pose 3: a number is not finite"):
            bad = truth.copy()
            bad[3, 0, 3] = np.nan
            scene.set_poses(bad)
        with pytest.raises(rgbd.RGBDError, match="pose 2: its rotation is not a rotation"):
            bad = truth.copy()
            bad[2, :3, :3] *= 1.1
            scene.set_poses(bad)
    # The CLI's file: the same poses as the library's, to the file's precision.
    subprocess.run([str(rgbd_bin), "refine", str(path), "-o", str(tmp_path / "poses.txt"), "-q"], check=True)
    rows = np.loadtxt(tmp_path / "poses.txt")
    assert rows.shape == (120, 8)
    assert np.allclose(rows[:, 1:4], poses[:, :3, 3], atol=1e-6)
    with rgbd.load_scene(path, poses=tmp_path / "poses.txt") as scene:
        assert len(scene) == 120 and np.allclose(scene.pose(60)[:3, 3], poses[60, :3, 3], atol=1e-6)
    (tmp_path / "nothing.txt").write_text("100 0 0 0 0 0 0 1\n")
    with pytest.raises(rgbd.RGBDError, match="nothing.txt: no pose matches a frame"):
        rgbd.load_scene(path, poses=tmp_path / "nothing.txt")
