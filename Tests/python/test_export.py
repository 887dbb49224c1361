"""rgbd export: synthetic scans exported to every layout, loaded back by the tools'
own readers and conventions, and checked by geometry against the generator's truth.

Scans come from rgbd-synth (beside the rgbd binary) with --truth-points: for every
frame, points on the true surfaces that frame sees, with the colour rendered there.
Each exported layout is read with its tool's conventions (pycolmap for COLMAP and 3DGS,
Open3D for its layout, a reader written from nerfstudio's documented conventions,
OpenCV's FileStorage and the TUM text formats), and

- every true point, moved into the camera with the *exported* pose and projected with
  the *exported* intrinsics in that tool's pixel convention, must land where the exported
  image shows its colour: the offset is estimated per frame by least squares on the
  image gradient (a half-pixel mistake gives 0.5; the tests require < 0.15 px, and a
  deliberately wrong convention is shown to fail);
- the exported depth at that pixel equals the point's depth in the exported camera
  within the layout's quantisation (and the source's), for 97 % of the points whose
  depth neighbourhood is one surface (the rest straddle a crease of the room at the
  depth map's coarser resolution).

Hostile cases run the real binary: an output path that is a file, a folder that is not
empty, a write failing mid-run (a file-size limit), a scan without poses: one error line,
exit 1, nothing half written.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest

try:
    import pycolmap
except ImportError:  # pragma: no cover - pycolmap is in Tests/python/requirements.txt
    pycolmap = None

try:
    import open3d as o3d
except ImportError:
    o3d = None

from plyfile import PlyData

FRAMES = 8
POINTS = 4000




class Scan:
    """A synthetic scan, its truth and its truth points (frame -> (xyz, rgb))."""

    def __init__(self, path: Path, truth: Path, points: Path, source_depth_step: float):
        self.path = path
        self.truth = json.loads(truth.read_text())
        table = np.loadtxt(points, delimiter=",", skiprows=1)
        self.points = {int(f): (table[table[:, 0] == f, 1:4], table[table[:, 0] == f, 4:7]) for f in np.unique(table[:, 0])}
        # The scan's own depth quantisation (Stray stores millimetres, Record3D float32).
        self.source_depth_step = source_depth_step
        times = [t - self.truth["frames"][0]["timestamp"] for t in (f["timestamp"] for f in self.truth["frames"])]
        self.seconds = np.array(times)


def make_scan(synth, directory: Path, layout: str, size: str) -> Scan:
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(synth), "scan", "--layout", layout, "--frames", str(FRAMES), "--size", size,
                    "--truth-points", str(POINTS), "-o", str(directory), "--name", "scan"],
                   check=True, capture_output=True)
    scan = directory / ("scan.r3d" if layout == "r3d" else "scan")
    return Scan(scan, directory / "scan.truth.json", directory / "scan.points.csv",
                0.001 if layout.startswith("stray") else 0.0)


@pytest.fixture(scope="module")
def r3d(synth, tmp_path_factory):
    return make_scan(synth, tmp_path_factory.mktemp("r3d"), "r3d", "960x720")


@pytest.fixture(scope="module")
def stray(synth, tmp_path_factory):
    return make_scan(synth, tmp_path_factory.mktemp("stray"), "stray", "640x480")


def export(rgbd_bin, scan: Scan, out: Path, fmt: str, *extra: str) -> Path:
    result = subprocess.run([str(rgbd_bin), "export", str(scan.path), "--format", fmt, "-o", str(out), "--quiet", *extra],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return out


# ---------- geometry helpers (array coordinates: pixel (i, j)'s centre at (i, j)) ----------

def gray(image_rgb: np.ndarray) -> np.ndarray:
    rgb = image_rgb.astype(np.float64)
    return 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]


def bilinear(image: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x0 = np.floor(x).astype(int)
    y0 = np.floor(y).astype(int)
    a = x - x0
    b = y - y0
    h, w = image.shape[:2]
    x0 = np.clip(x0, 0, w - 2)
    y0 = np.clip(y0, 0, h - 2)
    return ((image[y0, x0] * (1 - a) + image[y0, x0 + 1] * a) * (1 - b)
            + (image[y0 + 1, x0] * (1 - a) + image[y0 + 1, x0 + 1] * a) * b)


class Offsets:
    """Where true points appear in exported images relative to their projections,
    over all frames of an export: the shift s (pixels) that best matches the images
    sampled at projection + s to the points' true gray levels (mean absolute
    difference, a per-frame level offset removed), by a coarse-to-fine grid search.
    A correct projection gives about (0, 0); a half-pixel convention error 0.5."""

    def __init__(self):
        self.frames = []

    def add(self, image_rgb, x, y, colors):
        g = gray(image_rgb)
        h, w = g.shape
        inside = (x >= 2) & (x <= w - 3) & (y >= 2) & (y <= h - 3)
        assert inside.sum() > 500, f"only {inside.sum()} points inside the image"
        self.frames.append((g, x[inside], y[inside], gray(colors[inside][None, :, :])[0]))

    def cost(self, shift):
        total = 0.0
        for g, x, y, truth in self.frames:
            r = bilinear(g, x + shift[0], y + shift[1]) - truth
            total += np.mean(np.abs(r - np.median(r)))
        return total

    def best(self, moved=(0.0, 0.0)) -> np.ndarray:
        """The shift s with the images best matched at projection + moved + s."""
        centre = np.array(moved, dtype=float)
        found = np.zeros(2)
        for radius, step in [(1.0, 0.1), (0.1, 0.02)]:
            steps = np.arange(-radius, radius + 1e-9, step)
            grid = [(found[0] + a, found[1] + b) for b in steps for a in steps]
            costs = [self.cost(centre + np.array(s)) for s in grid]
            found = np.array(grid[int(np.argmin(costs))])
        return found

    def check(self):
        """The points appear within 0.1 px of where the exported cameras put them, and
        the search finds a deliberate half-pixel error (so the check has power)."""
        found = self.best()
        assert np.all(np.abs(found) <= 0.1), f"true points appear {found} px away from their projections"
        wrong = self.best(moved=(0.5, -0.5))
        assert np.all(np.abs(wrong - np.array([-0.5, 0.5])) <= 0.15), wrong


def depth_errors(depth_units: np.ndarray, scale: float, x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """|exported depth - z| (metres) at the points whose 2x2 depth neighbourhood is
    known and on one surface (within 1 %)."""
    h, w = depth_units.shape
    inside = (x >= 0) & (x <= w - 2) & (y >= 0) & (y <= h - 2) & (z > 0)
    x, y, z = x[inside], y[inside], z[inside]
    d = depth_units.astype(np.float64) / scale
    x0 = np.floor(x).astype(int)
    y0 = np.floor(y).astype(int)
    corners = np.stack([d[y0, x0], d[y0, x0 + 1], d[y0 + 1, x0], d[y0 + 1, x0 + 1]], axis=1)
    keep = (corners.min(axis=1) > 0) & (corners.max(axis=1) <= corners.min(axis=1) * 1.01)
    assert keep.sum() > 300, f"only {keep.sum()} points have known depth"
    return np.abs(bilinear(d, x[keep], y[keep]) - z[keep])


def project(points: np.ndarray, w2c: np.ndarray, k: np.ndarray):
    cam = points @ w2c[:3, :3].T + w2c[:3, 3]
    uvw = cam @ k.T
    return uvw[:, 0] / uvw[:, 2], uvw[:, 1] / uvw[:, 2], cam[:, 2]


def check_frame(offsets: Offsets, image_rgb, depth_units, scale, x, y, z, colors, scan: Scan, quantisation: float):
    """Collects the frame's image check (`Offsets`) and checks its depth, x and y in
    array coordinates."""
    offsets.add(image_rgb, x, y, colors)
    if depth_units is not None:
        assert depth_units.shape == image_rgb.shape[:2]
        errors = depth_errors(depth_units, scale, x, y, z)
        bound = quantisation / 2 + scan.source_depth_step / 2 + 2e-5
        # 97 %: the rest lie where the coarse depth map's pixels straddle a crease
        # (wall meets floor, a box's edge), which no resampling recovers exactly.
        assert np.quantile(errors, 0.97) <= bound, (np.quantile(errors, 0.97), bound)
        assert np.median(errors) <= bound / 2


def scan_depth_shape(scan: Scan):
    """The depth maps' (rows, columns), from the generator's truth."""
    return scan.truth["depth_camera"]["height"], scan.truth["depth_camera"]["width"]


def footprint_coordinates(x, y, image_shape, depth_shape):
    """Image array coordinates -> the depth image's, for a depth image whose pixel i is the
    ray through the middle of the image pixels that OpenCV's nearest-neighbour resize gives
    it (those whose centres x satisfy i <= x * w_d / w < i + 1): i <-> (i + 1/2) * w / w_d."""
    (h, w), (dh, dw) = image_shape[:2], depth_shape
    return x * dw / w - 0.5, y * dh / h - 0.5


def check_sensor_depth(depth_units, image_shape, x, y, z, scan: Scan):
    """nerfstudio's loader resizes a smaller depth image to the image with OpenCV's nearest
    neighbours (nerfstudio/data/utils/data_utils.py, get_depth_image_from_path). Checks that
    OpenCV gives each image pixel the depth pixel whose ray is within half a footprint of
    it, and that the depth image holds the true depth on those rays (the truth points moved
    into its grid), within the quantisation."""
    (h, w), (dh, dw) = image_shape[:2], depth_units.shape
    assert dw < w and dh < h
    for n, d in [(w, dw), (h, dh)]:
        taken = cv2.resize(np.arange(d, dtype=np.float64)[None, :], (n, 1), interpolation=cv2.INTER_NEAREST)[0]
        rays = (taken + 0.5) * n / d
        offsets = np.arange(n) - rays
        assert np.all(offsets >= -n / d / 2 - 1e-6) and np.all(offsets < n / d / 2 + 1e-6), offsets
        assert abs(offsets.mean()) < 0.5, offsets.mean()
    loaded = cv2.resize(depth_units.astype(np.float64), (w, h), interpolation=cv2.INTER_NEAREST)
    assert loaded.shape == (h, w)
    xd, yd = footprint_coordinates(x, y, image_shape, depth_units.shape)
    errors = depth_errors(depth_units, 1000, xd, yd, z)
    bound = 0.001 / 2 + scan.source_depth_step / 2 + 2e-5
    assert np.quantile(errors, 0.97) <= bound, (np.quantile(errors, 0.97), bound)
    assert np.median(errors) <= bound / 2
    # Read with the pixel-area convention instead, (i + 1/2) * w / w_d - 1/2, the depth
    # would be measurably wrong: the check has power.
    wrong = depth_errors(depth_units, 1000, xd + 0.5 * dw / w, yd + 0.5 * dh / h, z)
    assert np.median(wrong) > bound, np.median(wrong)


def quaternion_matrix(qx, qy, qz, qw) -> np.ndarray:
    return np.array([
        [1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy)],
        [2 * (qx * qy + qw * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx)],
        [2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy)],
    ])


def read_rgb(path: Path) -> np.ndarray:
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    assert image is not None, path
    return image[..., ::-1]


def read_depth(path: Path) -> np.ndarray:
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    assert image is not None and image.dtype == np.uint16, path
    return image


# ---------- the layouts, each read as its tool reads it ----------

def colmap_frames(model_dir: Path, centred: bool):
    """(frame index, image path, w2c 4x4, x, y as array coords) per image, projected by
    pycolmap (COLMAP: pixel centres at i + 0.5). With `centred`, the projection a
    Gaussian splatting trainer makes: the principal point ignored, the frustum centred."""
    reconstruction = pycolmap.Reconstruction(str(model_dir))
    assert reconstruction.num_images() == FRAMES
    for image in reconstruction.images.values():
        camera = reconstruction.cameras[image.camera_id]
        assert camera.model_name == "PINHOLE"
        cam_from_world = image.cam_from_world() if callable(image.cam_from_world) else image.cam_from_world
        w2c = np.eye(4)
        w2c[:3, :] = cam_from_world.matrix()
        yield int(Path(image.name).stem), image.name, w2c, camera


@pytest.mark.parametrize("text", [False, True])
def test_colmap(rgbd_bin, r3d, tmp_path, text):
    if pycolmap is None:
        pytest.fail("pycolmap is not installed (Tests/python/requirements.txt)")
    out = export(rgbd_bin, r3d, tmp_path / "colmap", "colmap", *(["--text"] if text else []))
    suffix = ".txt" if text else ".bin"
    assert sorted(p.name for p in (out / "sparse/0").iterdir()) == [f"cameras{suffix}", f"images{suffix}", f"points3D{suffix}"]
    reconstruction = pycolmap.Reconstruction(str(out / "sparse/0"))
    assert reconstruction.num_points3D() > 1000
    # The seed points lie on the true surfaces.
    xyz = np.array([p.xyz for p in reconstruction.points3D.values()])
    assert_on_surfaces(xyz, r3d)
    offsets = Offsets()
    for index, name, w2c, camera in colmap_frames(out / "sparse/0", centred=False):
        points, colors = r3d.points[index]
        cam = points @ w2c[:3, :3].T + w2c[:3, 3]
        pixels = camera.img_from_cam(cam)
        image = read_rgb(out / "images" / name)
        assert (camera.width, camera.height) == (image.shape[1], image.shape[0])
        check_frame(offsets, image, None, 1, pixels[:, 0] - 0.5, pixels[:, 1] - 0.5, cam[:, 2], colors, r3d, 0)
    offsets.check()


def test_3dgs(rgbd_bin, r3d, tmp_path):
    if pycolmap is None:
        pytest.fail("pycolmap is not installed (Tests/python/requirements.txt)")
    out = export(rgbd_bin, r3d, tmp_path / "3dgs", "3dgs")
    ply = PlyData.read(str(out / "sparse/0/points3D.ply"))
    names = [p.name for p in ply["vertex"].properties]
    for needed in ["x", "y", "z", "nx", "ny", "nz", "red", "green", "blue"]:
        assert needed in names
    xyz = np.stack([ply["vertex"][c] for c in "xyz"], axis=1).astype(np.float64)
    assert_on_surfaces(xyz, r3d)
    truth_k = r3d.truth["color_camera"]
    offsets = Offsets()
    for index, name, w2c, camera in colmap_frames(out / "sparse/0", centred=True):
        # As a splatting trainer reads it: focal lengths and size, principal point ignored.
        fx, fy = camera.params[0], camera.params[1]
        w, h = camera.width, camera.height
        assert camera.params[2] == w / 2 and camera.params[3] == h / 2
        assert w < truth_k["width"] and h < truth_k["height"]
        k = np.array([[fx, 0, w / 2], [0, fy, h / 2], [0, 0, 1]])
        points, colors = r3d.points[index]
        x, y, z = project(points, w2c, k)
        image = read_rgb(out / "images" / name)
        assert (w, h) == (image.shape[1], image.shape[0])
        check_frame(offsets, image, None, 1, x - 0.5, y - 0.5, z, colors, r3d, 0)
    offsets.check()


def nerfstudio_frames(out: Path):
    """A reader of transforms.json from nerfstudio's documented conventions: OpenGL
    camera-to-world `transform_matrix`, `fl_x fl_y cx cy w h` (top level or per frame)
    with pixel centres at i + 0.5, paths relative to the file; `applied_transform` maps
    the original world into the poses' world."""
    meta = json.loads((out / "transforms.json").read_text())
    assert meta["camera_model"] == "PINHOLE"
    applied = np.eye(4)
    if "applied_transform" in meta:
        applied[:3, :] = np.array(meta["applied_transform"])
    for frame in meta["frames"]:
        intr = {key: frame.get(key, meta.get(key)) for key in ["fl_x", "fl_y", "cx", "cy", "w", "h"]}
        c2w_gl = np.array(frame["transform_matrix"])
        c2w = c2w_gl @ np.diag([1, -1, -1, 1])      # OpenGL camera axes to OpenCV
        w2c = np.linalg.inv(c2w) @ applied          # original world -> camera
        k = np.array([[intr["fl_x"], 0, intr["cx"]], [0, intr["fl_y"], intr["cy"]], [0, 0, 1]])
        yield meta, frame, intr, w2c, k


@pytest.mark.parametrize("layout", ["r3d", "stray", "stray-level", "r3d-image-depth"])
def test_nerfstudio(rgbd_bin, r3d, stray, tmp_path, layout):
    scan = r3d if layout.startswith("r3d") else stray
    extra = ["--frame", "level"] if layout == "stray-level" else []
    image_depth = layout.endswith("image-depth")
    if image_depth:
        extra += ["--depth-size", "image"]
    out = export(rgbd_bin, scan, tmp_path / "ns", "nerfstudio", *extra)
    offsets = Offsets()
    seen = 0
    for meta, frame, intr, w2c, k in nerfstudio_frames(out):
        index = frame["rgbd_frame"]
        points, colors = scan.points[index]
        x, y, z = project(points, w2c, k)
        image = read_rgb(out / frame["file_path"])
        depth = read_depth(out / frame["depth_file_path"])
        assert (intr["w"], intr["h"]) == (image.shape[1], image.shape[0])
        if image_depth:
            check_frame(offsets, image, depth, 1000, x - 0.5, y - 0.5, z, colors, scan, 0.001)
        else:
            check_frame(offsets, image, None, 1000, x - 0.5, y - 0.5, z, colors, scan, 0.001)
            assert depth.shape == scan_depth_shape(scan)
            check_sensor_depth(depth, image.shape, x - 0.5, y - 0.5, z, scan)
        seen += 1
    offsets.check()
    assert seen == FRAMES
    if layout.startswith("stray"):
        # ARKit's world is gravity-aligned (+y up): turned to nerfstudio's +z up.
        assert meta["orientation_override"] == "none"
        up = np.array(meta["applied_transform"])[:3, :3] @ np.array([0, 1, 0])
        assert np.allclose(up, [0, 0, 1])
    else:
        assert "orientation_override" not in meta
    ply = PlyData.read(str(out / meta["ply_file_path"]))
    xyz = np.stack([ply["vertex"][c] for c in "xyz"], axis=1).astype(np.float64)
    applied = np.eye(4)
    if "applied_transform" in meta:
        applied[:3, :] = np.array(meta["applied_transform"])
    original = (xyz - applied[:3, 3]) @ applied[:3, :3]     # back to the scan's world
    assert_on_surfaces(original, scan)


def test_open3d(rgbd_bin, r3d, tmp_path):
    if o3d is None:
        pytest.skip("open3d is not installed (optional: pip install open3d); the open3d layout is unchecked")
    out = export(rgbd_bin, r3d, tmp_path / "o3d", "open3d")
    intrinsic = o3d.io.read_pinhole_camera_intrinsic(str(out / "camera_intrinsic.json"))
    trajectory = o3d.io.read_pinhole_camera_trajectory(str(out / "trajectory.log"))
    assert len(trajectory.parameters) == FRAMES
    config = json.loads((out / "config.json").read_text())
    assert Path(config["path_dataset"]) == out.resolve() and config["depth_scale"] == 1000
    colors = sorted((out / "color").iterdir())
    depths = sorted((out / "depth").iterdir())
    assert len(colors) == len(depths) == FRAMES
    k = np.asarray(intrinsic.intrinsic_matrix)
    offsets = Offsets()
    for index, (parameter, color_path, depth_path) in enumerate(zip(trajectory.parameters, colors, depths)):
        color = o3d.io.read_image(str(color_path))
        depth = o3d.io.read_image(str(depth_path))
        rgbd_image = o3d.geometry.RGBDImage.create_from_color_and_depth(color, depth, depth_scale=1000,
                                                                        convert_rgb_to_intensity=False)
        assert np.asarray(rgbd_image.depth).shape == (intrinsic.height, intrinsic.width)
        points, point_colors = r3d.points[index]
        x, y, z = project(points, np.asarray(parameter.extrinsic), k)  # Open3D: pixel centres at integers
        check_frame(offsets, np.asarray(color), np.asarray(depth), 1000, x, y, z, point_colors, r3d, 0.001)
    offsets.check()


def test_tum(rgbd_bin, r3d, tmp_path):
    out = export(rgbd_bin, r3d, tmp_path / "tum", "tum")
    settings = cv2.FileStorage(str(out / "camera.yaml"), cv2.FILE_STORAGE_READ)
    k = np.array([[settings.getNode("Camera.fx").real(), 0, settings.getNode("Camera.cx").real()],
                  [0, settings.getNode("Camera.fy").real(), settings.getNode("Camera.cy").real()], [0, 0, 1]])
    factor = settings.getNode("DepthMapFactor").real()
    assert factor == 5000

    def table(name):
        return [line.split() for line in (out / name).read_text().splitlines() if not line.startswith("#")]

    truth = {float(row[0]): np.array(row[1:], dtype=float) for row in table("groundtruth.txt")}
    rgb = {float(t): p for t, p in table("rgb.txt")}
    depth = {float(t): p for t, p in table("depth.txt")}
    associations = table("associations.txt")
    assert len(associations) == len(truth) == FRAMES
    offsets = Offsets()
    for t_rgb, rgb_path, t_depth, depth_path in associations:
        t = float(t_rgb)
        assert rgb[t] == rgb_path and depth[float(t_depth)] == depth_path
        index = int(np.argmin(np.abs(r3d.seconds - t)))
        assert abs(r3d.seconds[index] - t) < 1e-6
        tx, ty, tz, qx, qy, qz, qw = truth[t]
        c2w = np.eye(4)
        c2w[:3, :3] = quaternion_matrix(qx, qy, qz, qw)
        c2w[:3, 3] = [tx, ty, tz]
        points, colors = r3d.points[index]
        x, y, z = project(points, np.linalg.inv(c2w), k)
        check_frame(offsets, read_rgb(out / rgb_path), read_depth(out / depth_path), factor, x, y, z, colors, r3d, 1 / factor)
    offsets.check()


def test_level_frame(rgbd_bin, stray, tmp_path):
    """--frame level, checked by geometry: one rigid map A takes every true camera pose
    (in the scan's gravity-aligned world, +y up) to its exported pose, so the cameras keep
    their placement, and A takes up (+y, against gravity) to +z: the floor is horizontal,
    each camera's height above it is its z plus a constant. A world that is not
    gravity-aligned (Record3D's, re-based on the first frame) is refused in one line."""
    out = export(rgbd_bin, stray, tmp_path / "tum", "tum", "--frame", "level")
    rows = [line.split() for line in (out / "groundtruth.txt").read_text().splitlines() if not line.startswith("#")]
    assert len(rows) == FRAMES
    maps = []
    for row in rows:
        t, tx, ty, tz, qx, qy, qz, qw = map(float, row)
        index = int(np.argmin(np.abs(stray.seconds - t)))
        c2w = np.eye(4)
        c2w[:3, :3] = quaternion_matrix(qx, qy, qz, qw)
        c2w[:3, 3] = [tx, ty, tz]
        true_c2w = np.array(stray.truth["frames"][index]["camera_to_world"])
        maps.append(c2w @ np.linalg.inv(true_c2w))
    a = maps[0]
    assert all(np.allclose(m, a, atol=1e-5) for m in maps), "the exported poses are not one rigid map of the true ones"
    assert np.allclose(a[:3, :3] @ a[:3, :3].T, np.eye(3), atol=1e-6) and np.linalg.det(a[:3, :3]) > 0
    assert np.allclose(a[:3, :3] @ np.array([0, 1, 0]), [0, 0, 1], atol=1e-6), a
    floor_y = stray.truth["room"]["min_corner"][1]
    for row, m in zip(rows, maps):
        index = int(np.argmin(np.abs(stray.seconds - float(row[0]))))
        true_height = np.array(stray.truth["frames"][index]["camera_to_world"])[1, 3] - floor_y
        assert abs(float(row[3]) - (a @ np.array([0, floor_y, 0, 1]))[2] - true_height) < 1e-5

    result = run_export(rgbd_bin, stray.path, tmp_path / "enu", "tum", "--frame", "enu")
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0 and len(lines) == 1 and str(stray.path) in lines[0], result.stderr
    assert not (tmp_path / "enu").exists()


def test_level_frame_refused_for_worlds_not_gravity_aligned(rgbd_bin, r3d, tmp_path):
    result = run_export(rgbd_bin, r3d.path, tmp_path / "out", "tum", "--frame", "level")
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0 and len(lines) == 1, result.stderr
    assert str(r3d.path) in lines[0] and "gravity-aligned" in lines[0]
    assert not (tmp_path / "out").exists()


def assert_on_surfaces(xyz: np.ndarray, scan: Scan):
    """Seed points within 2 cm (the cell) of the true room's planes: walls, floor,
    ceiling, or a box's faces (distance to the nearest, in the room's world)."""
    world_from_room = np.array(scan.truth["world_from_room"])
    room_points = (xyz - world_from_room[:3, 3]) @ world_from_room[:3, :3]
    room = scan.truth["room"]
    lo, hi = np.array(room["min_corner"]), np.array(room["max_corner"])
    centre, half = (lo + hi) / 2, (hi - lo) / 2
    best = box_distance(room_points - centre, half)
    for box in room["boxes"]:
        c, s = np.cos(box["yaw"]), np.sin(box["yaw"])
        d = room_points - np.array(box["center"])
        local = np.stack([c * d[:, 0] - s * d[:, 2], d[:, 1], s * d[:, 0] + c * d[:, 2]], axis=1)
        best = np.minimum(best, box_distance(local, np.array(box["half_size"])))
    assert np.quantile(best, 0.99) < 0.02, np.quantile(best, 0.99)


def box_distance(p: np.ndarray, half: np.ndarray) -> np.ndarray:
    q = np.abs(p) - half
    outside = np.linalg.norm(np.maximum(q, 0), axis=1)
    inside = np.minimum(q.max(axis=1), 0)
    return np.abs(outside + inside)


# ---------- options ----------

def test_downscale_keeps_geometry(rgbd_bin, r3d, tmp_path):
    """Shrunk 3× (a factor whose half-pixel shift is not trivial): the intrinsics
    follow, so the truth still lands on its colour."""
    out = export(rgbd_bin, r3d, tmp_path / "ns3", "nerfstudio", "--downscale", "3")
    offsets = Offsets()
    for meta, frame, intr, w2c, k in nerfstudio_frames(out):
        assert (intr["w"], intr["h"]) == (320, 240)
        points, colors = r3d.points[frame["rgbd_frame"]]
        x, y, z = project(points, w2c, k)
        image = read_rgb(out / frame["file_path"])
        check_frame(offsets, image, None, 1000, x - 0.5, y - 0.5, z, colors, r3d, 0.001)
        depth = read_depth(out / frame["depth_file_path"])
        assert depth.shape == scan_depth_shape(r3d)
        check_sensor_depth(depth, image.shape, x - 0.5, y - 0.5, z, r3d)
    offsets.check()


def test_depth_size_follows_smaller_images(rgbd_bin, r3d, tmp_path):
    """Shrunk below the depth map's size (960x720 / 5 = 192x144, the depth map 256x192),
    nerfstudio's depth is written at the images' size, and still holds the true depth.
    A depth size is refused for layouts whose depth must be the images' size."""
    out = export(rgbd_bin, r3d, tmp_path / "ns5", "nerfstudio", "--downscale", "5")
    meta = json.loads((out / "transforms.json").read_text())
    assert "the images' where they are smaller" in meta["rgbd"]["depth"]
    offsets = Offsets()
    for meta, frame, intr, w2c, k in nerfstudio_frames(out):
        points, colors = r3d.points[frame["rgbd_frame"]]
        x, y, z = project(points, w2c, k)
        image = read_rgb(out / frame["file_path"])
        depth = read_depth(out / frame["depth_file_path"])
        assert depth.shape == image.shape[:2] == (144, 192)
        check_frame(offsets, image, depth, 1000, x - 0.5, y - 0.5, z, colors, r3d, 0.001)
    for fmt in ["open3d", "colmap"]:
        result = subprocess.run([str(rgbd_bin), "export", str(r3d.path), "--format", fmt, "-o", str(tmp_path / fmt),
                                 "--depth-size", "sensor"], capture_output=True, text=True)
        assert result.returncode != 0 and "--depth-size sensor applies to --format nerfstudio" in result.stderr
        assert not (tmp_path / fmt).exists()


def test_frame_selection(rgbd_bin, r3d, tmp_path):
    def frames(*options):
        out = export(rgbd_bin, r3d, tmp_path / "sel", "nerfstudio", "--overwrite", *options)
        return [f["rgbd_frame"] for f in json.loads((out / "transforms.json").read_text())["frames"]]

    assert frames() == list(range(FRAMES))
    assert frames("--every", "3") == [0, 3, 6]
    assert frames("--max-frames", "3") == [0, 4, 7]   # evenly spread, first and last kept
    assert frames("--every", "2", "--max-frames", "2") == [0, 6]
    # --sharpest keeps one frame per window: windows [0,4) and [4,8).
    chosen = frames("--every", "4", "--sharpest")
    assert len(chosen) == 2 and 0 <= chosen[0] < 4 <= chosen[1] < 8


def test_sharpest_prefers_sharp_frames(rgbd_bin, r3d, tmp_path):
    """Blur every frame but one of each window (a copy of the scan with blurred JPEGs):
    --sharpest keeps the unblurred ones."""
    import zipfile
    blurred = tmp_path / "blurred.r3d"
    keep = {1, 6}
    with zipfile.ZipFile(r3d.path) as source, zipfile.ZipFile(blurred, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename.startswith("rgbd/") and info.filename.endswith(".jpg"):
                n = int(Path(info.filename).stem)
                if n not in keep:
                    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
                    ok, encoded = cv2.imencode(".jpg", cv2.GaussianBlur(image, (0, 0), 2.0), [cv2.IMWRITE_JPEG_QUALITY, 90])
                    assert ok
                    data = encoded.tobytes()
            target.writestr(info, data)
    scan = Scan(blurred, Path(r3d.path).with_name("scan.truth.json"), Path(r3d.path).with_name("scan.points.csv"), 0)
    out = export(rgbd_bin, scan, tmp_path / "sharp", "nerfstudio", "--every", "4", "--sharpest")
    chosen = [f["rgbd_frame"] for f in json.loads((out / "transforms.json").read_text())["frames"]]
    assert chosen == [1, 6]


# ---------- hostile ----------

def run_export(rgbd_bin, scan_path, out, fmt="colmap", *extra, preexec=None):
    return subprocess.run([str(rgbd_bin), "export", str(scan_path), "--format", fmt, "-o", str(out), "--quiet", *extra],
                          capture_output=True, text=True, preexec_fn=preexec)


def leftovers(parent: Path):
    return [p.name for p in parent.iterdir() if "rgbd-tmp" in p.name]


def test_output_is_a_file(rgbd_bin, r3d, tmp_path):
    target = tmp_path / "out"
    target.write_text("keep me")
    result = run_export(rgbd_bin, r3d.path, target)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(target) in lines[0] and "not a folder" in lines[0], result.stderr
    assert target.read_text() == "keep me" and leftovers(tmp_path) == []


def test_non_empty_folder_refused_unless_overwrite(rgbd_bin, r3d, tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "mine.txt").write_text("keep me")
    result = run_export(rgbd_bin, r3d.path, target)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(target) in lines[0] and "--overwrite" in lines[0], result.stderr
    assert [p.name for p in target.iterdir()] == ["mine.txt"]
    # --overwrite replaces only what an earlier export wrote: a folder holding anything
    # else is refused, naming it, and kept as it was.
    result = run_export(rgbd_bin, r3d.path, target, "colmap", "--overwrite")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "mine.txt" in lines[0] and "not written by rgbd" in lines[0], result.stderr
    assert [p.name for p in target.iterdir()] == ["mine.txt"]
    earlier = tmp_path / "earlier"
    assert run_export(rgbd_bin, r3d.path, earlier).returncode == 0
    result = run_export(rgbd_bin, r3d.path, earlier, "colmap", "--overwrite")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in earlier.iterdir()) == [".rgbd-written", "images", "sparse"]
    assert leftovers(tmp_path) == []
    # An empty folder is simply filled.
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_export(rgbd_bin, r3d.path, empty).returncode == 0


def test_write_failure_leaves_nothing(rgbd_bin, r3d, tmp_path):
    """A write fails mid-run (a 200 kB file-size limit, SIGXFSZ ignored: write() returns
    EFBIG as on a full disk): one line naming the file, no output, no temporary folder."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    target = tmp_path / "out"
    result = run_export(rgbd_bin, r3d.path, target, "nerfstudio", "--image-format", "png", preexec=limit)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot write" in lines[0] and "File too large" in lines[0], result.stderr
    assert not target.exists() and leftovers(tmp_path) == []


def test_write_failure_on_tiny_tmpfs(rgbd_bin, r3d, tmp_path):
    """The same on a full file system, where one can be mounted (needs the right to mount)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not permitted); test_write_failure_leaves_nothing covers write errors")
    try:
        target = mount / "out"
        result = run_export(rgbd_bin, r3d.path, target, "nerfstudio")
        assert result.returncode == 1
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "No space left on device" in lines[0], result.stderr
        assert os.listdir(mount) == []
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_scan_without_poses(rgbd_bin, stray, tmp_path):
    """A Stray scan whose odometry has no rows: one line naming it, nothing written."""
    import shutil
    broken = tmp_path / "broken"
    shutil.copytree(stray.path, broken)
    odometry = broken / "odometry.csv"
    odometry.write_text(odometry.read_text().splitlines()[0] + "\n")
    target = tmp_path / "out"
    result = run_export(rgbd_bin, broken, target)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "odometry.csv" in lines[0], result.stderr
    assert not target.exists() and leftovers(tmp_path) == []


# ---------- Python: Scene.export over the C library ----------

def test_python_scene_export(r3d, tmp_path):
    import rgbd

    with rgbd.load_scene(r3d.path) as scene:
        assert scene.export(tmp_path / "py", format="colmap", every=2, text=True) == FRAMES // 2
        with pytest.raises(rgbd.RGBDError, match="not empty.*overwrite"):
            scene.export(tmp_path / "py", format="colmap")
        with pytest.raises(rgbd.RGBDError, match="format"):
            scene.export(tmp_path / "other", format="blender")
        # nerfstudio's depth at the depth map's size (the default) or the images'.
        sizes = {}
        for size in [None, "sensor", "image"]:
            out = tmp_path / f"ns-{size}"
            assert scene.export(out, format="nerfstudio", max_frames=1, depth_size=size) == 1
            frame = json.loads((out / "transforms.json").read_text())["frames"][0]
            sizes[size] = (read_depth(out / frame["depth_file_path"]).shape, read_rgb(out / frame["file_path"]).shape[:2])
        assert sizes[None] == sizes["sensor"] and sizes[None][0] == scan_depth_shape(r3d)
        assert sizes["image"][0] == sizes["image"][1] == (720, 960)
        with pytest.raises(ValueError, match="depth_size"):
            scene.export(tmp_path / "bad", format="nerfstudio", depth_size="full")
        with pytest.raises(rgbd.RGBDError, match="applies to nerfstudio"):
            scene.export(tmp_path / "tum", format="tum", depth_size="sensor")
        assert not (tmp_path / "bad").exists() and not (tmp_path / "tum").exists()
        assert not (tmp_path / "other").exists()
    if pycolmap is not None:
        reconstruction = pycolmap.Reconstruction(str(tmp_path / "py" / "sparse/0"))
        assert sorted(image.name for image in reconstruction.images.values()) == [f"{i:06d}.jpg" for i in range(0, FRAMES, 2)]


# ---------- a Stray scan with lens tables: exported images and depth rectified ----------

def apple_lens_map(w: int, h: int, center, table: np.ndarray):
    """Apple's lookup-table model (docs/lens-model.md) written here from its definition:
    for every pixel p of a w x h image, c + (p - c)(1 + m), m the table linearly
    interpolated at |p - c| (n - 1) / r_max, the last entry from r_max on."""
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    cx, cy = center
    vx, vy = xs - cx, ys - cy
    r = np.hypot(vx, vy)
    r_max = np.hypot(max(cx, w - cx), max(cy, h - cy))
    n = len(table)
    t = r * (n - 1) / r_max
    i = np.minimum(np.floor(t).astype(int), n - 2)
    m = table[i] + (table[i + 1] - table[i]) * (t - i)
    m = np.where(r < r_max, m, table[-1])
    return cx + vx * (1 + m), cy + vy * (1 + m)


LENS_FORWARD = 0.04 * (np.arange(42) / 41.0) ** 2          # rectified -> recorded: 4 % out at r_max


def lens_inverse(table: np.ndarray) -> np.ndarray:
    """The inverse table (recorded -> rectified), by bisection on r (1 + m(r))."""
    out = []
    for i in range(len(table)):
        rq = i / (len(table) - 1)
        if rq == 0:
            out.append(0.0)
            continue
        lo, hi = 0.0, rq
        for _ in range(60):
            mid = (lo + hi) / 2
            m = np.interp(mid * (len(table) - 1), np.arange(len(table)), table)
            lo, hi = (mid, hi) if mid * (1 + m) < rq else (lo, mid)
        out.append(lo / rq - 1)
    return np.array(out)


def distort_depth(depth_mm: np.ndarray, map_x: np.ndarray, map_y: np.ndarray) -> np.ndarray:
    """The recorded depth map: the ideal one sampled at the inverse lens map, inverse depth
    interpolated bilinearly where the four neighbours are one surface (exact on planes),
    the nearest pixel otherwise, 0 outside."""
    h, w = depth_mm.shape
    inv = np.where(depth_mm > 0, 1.0 / np.maximum(depth_mm, 1), 0.0)
    x0 = np.clip(np.floor(map_x).astype(int), 0, w - 2)
    y0 = np.clip(np.floor(map_y).astype(int), 0, h - 2)
    a = np.clip(map_x - x0, 0, 1)
    b = np.clip(map_y - y0, 0, 1)
    q = [inv[y0, x0], inv[y0, x0 + 1], inv[y0 + 1, x0], inv[y0 + 1, x0 + 1]]
    lo, hi = np.minimum.reduce(q), np.maximum.reduce(q)
    smooth = (lo > 0) & (hi <= lo * 1.05)
    blend = (q[0] * (1 - a) + q[1] * a) * (1 - b) + (q[2] * (1 - a) + q[3] * a) * b
    near = inv[np.clip(np.rint(map_y).astype(int), 0, h - 1), np.clip(np.rint(map_x).astype(int), 0, w - 1)]
    value = np.where(smooth, blend, near)
    inside = (map_x >= -0.5) & (map_x < w - 0.5) & (map_y >= -0.5) & (map_y < h - 0.5) & (value > 0)
    return np.where(inside, np.rint(1.0 / np.where(value > 0, value, 1)), 0).astype(np.uint16)


def make_lens_scan(synth, directory: Path) -> tuple[Scan, tuple[float, float]]:
    """A synthetic Stray scan whose video and depth maps are re-made as a lens with the
    table LENS_FORWARD records them, with the table in distortion/NNNNNN.bin and the
    distortion centre in every odometry row (Stray Scanner's layout for it)."""
    scan = make_scan(synth, directory, "stray", "640x480")
    folder = scan.path
    w, h, dw, dh = 640, 480, 256, 192
    center = (331.7, 228.4)
    inverse = lens_inverse(LENS_FORWARD)
    color_x, color_y = apple_lens_map(w, h, center, inverse)
    depth_x, depth_y = apple_lens_map(dw, dh, (center[0] * dw / w, center[1] * dh / h), inverse)
    raw = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", str(folder / "rgb.mp4"), "-f", "rawvideo",
                          "-pix_fmt", "rgb24", "-"], check=True, capture_output=True).stdout
    frames = np.frombuffer(raw, dtype=np.uint8).reshape(-1, h, w, 3)
    assert len(frames) == FRAMES
    recorded = [cv2.remap(f, color_x.astype(np.float32), color_y.astype(np.float32), cv2.INTER_CUBIC,
                          borderMode=cv2.BORDER_REPLICATE) for f in frames]
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24",
                    "-s", f"{w}x{h}", "-r", str(scan.truth["fps"]), "-i", "-", "-c:v", "libx265", "-tag:v", "hvc1", "-x265-params",
                    "log-level=error", "-crf", "8", "-pix_fmt", "yuv420p", str(folder / "rgb.mp4")],
                   input=np.stack(recorded).tobytes(), check=True, capture_output=True)
    (folder / "distortion").mkdir()
    for index in range(FRAMES):
        depth_path = folder / "depth" / f"{index:06d}.png"
        depth = cv2.imread(str(depth_path), cv2.IMREAD_UNCHANGED)
        assert cv2.imwrite(str(depth_path), distort_depth(depth, depth_x, depth_y))
        (folder / "distortion" / f"{index:06d}.bin").write_bytes(LENS_FORWARD.astype("<f4").tobytes())
    lines = (folder / "odometry.csv").read_text().splitlines()
    rows = [lines[0]] + [", ".join(line.split(",")[:13] + [f" {center[0]}", f" {center[1]}"]) for line in lines[1:]]
    (folder / "odometry.csv").write_text("\n".join(rows) + "\n")
    return scan, center


def nerfstudio_lens_check(out: Path, scan: Scan, center):
    """Of a nerfstudio export, over the true points within 0.8 r_max of the distortion
    centre (farther out, the rectified images' corners see beyond the recorded frame and
    are black): the image offsets (`Offsets`), how well the images match the points' colours
    at their pinhole projections p and at the recorded lens's q(p) (`Offsets.cost`-like:
    mean absolute gray difference, a per-frame level removed), and the depth errors."""
    offsets = Offsets()
    at_p, at_q = Offsets(), Offsets()
    errors = []
    for meta, frame, intr, w2c, k in nerfstudio_frames(out):
        points, colors = scan.points[frame["rgbd_frame"]]
        x, y, z = project(points, w2c, k)
        x, y = x - 0.5, y - 0.5
        image = read_rgb(out / frame["file_path"])
        h, w = image.shape[:2]
        r_max = np.hypot(max(center[0], w - center[0]), max(center[1], h - center[1]))
        r = np.hypot(x - center[0], y - center[1])
        near = r < 0.8 * r_max
        x, y, z, colors, r = x[near], y[near], z[near], colors[near], r[near]
        offsets.add(image, x, y, colors)
        # Where the recorded lens put them: q = c + (p - c)(1 + m(|p - c|)).
        m = np.interp(r * (len(LENS_FORWARD) - 1) / r_max, np.arange(len(LENS_FORWARD)), LENS_FORWARD)
        qx, qy = center[0] + (x - center[0]) * (1 + m), center[1] + (y - center[1]) * (1 + m)
        far = r > 0.4 * r_max          # where p and q are more than a pixel apart
        at_p.add(image, x[far], y[far], colors[far])
        at_q.add(image, qx[far], qy[far], colors[far])
        depth = read_depth(out / frame["depth_file_path"])
        xd, yd = footprint_coordinates(x, y, image.shape, depth.shape)
        errors.append(depth_errors(depth, 1000, xd, yd, z))
    return offsets, at_p.cost((0.0, 0.0)), at_q.cost((0.0, 0.0)), np.concatenate(errors)


def test_lens_table_scan_is_exported_rectified(rgbd_bin, synth, tmp_path):
    """A Stray scan recorded through a lens (4 % radial at the corner, tables in
    distortion/) is exported as pinhole images and depth: the true points land on their
    colours and the depth is the true depth, as for a scan without a lens. The same scan
    with its tables removed (frames used as recorded) fails both checks: they have power."""
    scan, center = make_lens_scan(synth, tmp_path / "lens")
    out = export(rgbd_bin, scan, tmp_path / "ns", "nerfstudio")
    meta = json.loads((out / "transforms.json").read_text())
    assert meta["camera_model"] == "PINHOLE"
    offsets, at_p, at_q, errors = nerfstudio_lens_check(out, scan, center)
    offsets.check()
    bound = 0.001 / 2 + scan.source_depth_step / 2 + 2e-5
    assert np.quantile(errors, 0.97) <= bound, np.quantile(errors, 0.97)
    assert np.median(errors) <= bound / 2, np.median(errors)

    import shutil
    shutil.rmtree(scan.path / "distortion")
    raw = export(rgbd_bin, scan, tmp_path / "raw", "nerfstudio")
    _, raw_p, raw_q, raw_errors = nerfstudio_lens_check(raw, scan, center)
    # The colours are where the pinhole puts them in the export (about 30 gray levels
    # against 57 where the lens put them), and where the lens put them in the frames as
    # recorded (13 against 39).
    assert 1.5 * at_p < at_q and 1.5 * raw_q < raw_p, (at_p, at_q, raw_p, raw_q)
    # Depth as recorded: 26 mm off at the 97th percentile, against 0.75 mm.
    assert np.quantile(raw_errors, 0.97) > 10 * bound, np.quantile(raw_errors, 0.97)
