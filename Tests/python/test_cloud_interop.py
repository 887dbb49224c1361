"""Interop and ground-truth tests of `rgbd cloud` against the real binary (issue 3).

Run with `python3 -m pytest -q Tests/python` (requirements: Tests/python/requirements.txt).
The binary is $RGBD_BIN, else <repo>/.build/release/rgbd; a missing binary is a failure,
not a skip. Everything is generated from Examples/sample/shot.json into a temporary
directory. Conventions: docs/outputs.md.
"""

import json
import os
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest
import tifffile
from plyfile import PlyData

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "Examples" / "sample" / "shot.json"
TRUTH = REPO / "Examples" / "sample" / "shot.truth.json"
XYZ = ("x", "y", "z")
RGB = ("red", "green", "blue")


# ---------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("cloud_interop")


def run(binary, *args):
    proc = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        pytest.fail(f"`rgbd {' '.join(map(str, args))}` exited {proc.returncode}:\n"
                    f"{proc.stderr}{proc.stdout}", pytrace=False)
    return proc


@pytest.fixture(scope="module")
def cloud(rgbd_bin, workdir):
    """cloud(*options) -> path of the PLY `rgbd cloud SAMPLE *options` writes (cached)."""
    cache = {}

    def make(*options):
        if options not in cache:
            name = "cloud" + "".join(o.replace("-", "_").replace(".", "p") for o in options)
            out = workdir / f"{name}.ply"
            run(rgbd_bin, "cloud", SAMPLE, "-o", out, "-q", *options)
            assert out.is_file(), f"rgbd cloud did not write {out}"
            cache[options] = out
        return cache[options]

    return make


@pytest.fixture(scope="module")
def rectified(rgbd_bin, workdir):
    """Directory with the sample's NAME.depth.png/.depth.tiff/.color.png/.intrinsics.json."""
    out = workdir / "rect"
    run(rgbd_bin, "rectify", SAMPLE, "-o", out, "-q")
    stem = SAMPLE.stem
    for suffix in (".depth.png", ".depth.tiff", ".color.png", ".intrinsics.json"):
        assert (out / f"{stem}{suffix}").is_file(), f"rgbd rectify did not write {stem}{suffix}"
    return out, stem


@pytest.fixture(scope="module")
def truth():
    return json.loads(TRUTH.read_text())


# ---------------------------------------------------------------------------- helpers

def vertices(path):
    ply = PlyData.read(str(path))
    assert [e.name for e in ply.elements] == ["vertex"], f"{path}: elements {ply.elements}"
    return ply["vertex"].data


def points(v):
    """(n, 3) float64 of a vertex array's x, y, z."""
    return np.stack([v[c] for c in XYZ], axis=1).astype(np.float64)


def colors(v):
    return np.stack([v[c] for c in RGB], axis=1)


def read_intrinsics(path):
    """(width, height, fx, fy, cx, cy) as Open3D's read_pinhole_camera_intrinsic reads it."""
    doc = json.loads(Path(path).read_text())
    k = doc["intrinsic_matrix"]          # 9 numbers, column-major
    assert len(k) == 9, f"intrinsic_matrix has {len(k)} numbers"
    assert k[1] == k[2] == k[3] == k[5] == 0 and k[8] == 1, f"not column-major pinhole: {k}"
    return doc["width"], doc["height"], k[0], k[4], k[6], k[7]


def open3d_points(depth, intrinsics, depth_scale=1.0, depth_trunc=np.inf):
    """PointCloud.create_from_depth_image(depth, intrinsic, depth_scale, depth_trunc), in numpy.

    Open3D converts the image to float meters (value / depth_scale), then for every pixel in
    row-major order with 0 < z < depth_trunc emits ((u - cx) z / fx, (v - cy) z / fy, z) in
    double precision (project_valid_depth_only=True, stride 1, identity extrinsic).
    """
    width, height, fx, fy, cx, cy = intrinsics
    assert depth.shape == (height, width), f"depth {depth.shape} vs intrinsics {width}x{height}"
    z_img = depth.astype(np.float32) / np.float32(depth_scale)   # Open3D's float image
    with np.errstate(invalid="ignore"):
        valid = (z_img > 0) & (z_img < depth_trunc)
    v, u = np.nonzero(valid)                                      # row-major
    z = z_img[v, u].astype(np.float64)
    return np.stack([(u - cx) * z / fx, (v - cy) * z / fy, z], axis=1)


def box_distance(p, lo, hi):
    """Unsigned distance from points p (n, 3) to the surface of the axis-aligned box."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    d = np.maximum(lo - p, p - hi)                 # > 0 outside along that axis
    outside = np.linalg.norm(np.maximum(d, 0), axis=1)
    inside = -np.minimum(d.max(axis=1), 0)         # inside: distance to the nearest face
    return outside + inside


def plane_value(truth, key, axis):
    """The constant c of a truth plane written as '<axis> = c'."""
    lhs, rhs = (s.strip() for s in truth[key]["plane"].split("="))
    assert lhs == axis, f"unexpected {key} plane {truth[key]['plane']!r}"
    return float(rhs)


# ---------------------------------------------------------------------------- Open3D

def test_open3d_equivalence_float_tiff(cloud, rectified):
    out, stem = rectified
    depth = tifffile.imread(out / f"{stem}.depth.tiff")
    assert depth.dtype == np.float32 and depth.ndim == 2, f"depth TIFF {depth.dtype} {depth.shape}"
    expected = open3d_points(depth, read_intrinsics(out / f"{stem}.intrinsics.json"),
                             depth_scale=1.0)
    got = points(vertices(cloud("--keep-edges")))
    assert len(got) == len(expected), \
        f"rgbd cloud --keep-edges has {len(got)} points, Open3D would give {len(expected)}"
    err = np.abs(got - expected).max()
    assert err < 1e-5, f"max abs difference to Open3D's points {err:.3g} m"


def test_open3d_equivalence_png_millimeters(cloud, rectified):
    out, stem = rectified
    depth = cv2.imread(str(out / f"{stem}.depth.png"), cv2.IMREAD_UNCHANGED)
    assert depth is not None and depth.dtype == np.uint16 and depth.ndim == 2, \
        "depth PNG is not 16-bit grayscale"
    expected = open3d_points(depth, read_intrinsics(out / f"{stem}.intrinsics.json"),
                             depth_scale=1000.0)
    got = points(vertices(cloud("--keep-edges")))
    assert len(got) == len(expected), \
        f"rgbd cloud --keep-edges has {len(got)} points, Open3D from the PNG gives {len(expected)}"
    err = np.abs(got - expected).max()
    assert err <= 0.5e-3 + 1e-6, f"max abs difference to Open3D's points from the PNG {err:.3g} m"


# ---------------------------------------------------------------------------- PLY format

def test_ascii_and_binary_hold_the_same_points(cloud):
    binary, ascii_ = PlyData.read(str(cloud())), PlyData.read(str(cloud("--ascii")))
    assert not binary.text and binary.byte_order == "<", "default PLY is not binary_little_endian"
    assert ascii_.text, "--ascii PLY is not ascii"
    for ply in (binary, ascii_):
        props = [(p.name, p.val_dtype) for p in ply["vertex"].properties]
        assert props == [("x", "f4"), ("y", "f4"), ("z", "f4"),
                         ("red", "u1"), ("green", "u1"), ("blue", "u1")], props
        comments = [c.lower() for c in ply.comments]
        assert any("meter" in c for c in comments), f"no units comment: {ply.comments}"
        assert any("frame" in c and "opencv" in c for c in comments), \
            f"no frame comment: {ply.comments}"
    b, a = binary["vertex"].data, ascii_["vertex"].data
    assert len(a) == len(b) > 0
    np.testing.assert_allclose(points(a), points(b), rtol=1e-5, atol=0)
    np.testing.assert_array_equal(colors(a), colors(b))


@pytest.mark.parametrize("axes", ["opencv", "opengl"])
def test_normals_unit_and_toward_camera(cloud, axes):
    v = vertices(cloud("--normals", "--axes", axes))
    assert v.dtype.names == XYZ + RGB + ("nx", "ny", "nz"), v.dtype.names
    n = np.stack([v["nx"], v["ny"], v["nz"]], axis=1).astype(np.float64)
    p = points(v)
    assert np.isfinite(n).all(), f"{(~np.isfinite(n)).any(axis=1).sum()} non-finite normals"
    length = np.linalg.norm(n, axis=1)
    assert np.abs(length - 1).max() <= 1e-3, f"normal lengths in [{length.min()}, {length.max()}]"
    toward = np.mean((n * p).sum(axis=1) < 0)    # the camera is at the origin
    assert toward > 0.99, f"only {toward:.2%} of normals point toward the camera"
    # Same points as without --normals.
    np.testing.assert_array_equal(p, points(vertices(cloud("--axes", axes))))


def test_axes_opengl_flips_y_and_z(cloud):
    cv, gl = vertices(cloud()), vertices(cloud("--axes", "opengl"))
    assert len(cv) == len(gl)
    np.testing.assert_array_equal(gl["x"], cv["x"])
    np.testing.assert_array_equal(gl["y"], -cv["y"])
    np.testing.assert_array_equal(gl["z"], -cv["z"])
    np.testing.assert_array_equal(colors(gl), colors(cv))
    comments = " ".join(PlyData.read(str(cloud("--axes", "opengl"))).comments).lower()
    assert "opengl" in comments, "the OpenGL cloud's header does not name its frame"


# ---------------------------------------------------------------------------- options

def test_stride_two_keeps_about_a_quarter(cloud):
    full, half = vertices(cloud()), vertices(cloud("--stride", "2"))
    ratio = len(half) / len(full)
    assert 0.23 <= ratio <= 0.27, f"--stride 2 kept {len(half)} of {len(full)} ({ratio:.3f})"
    # Every strided point is one of the full-resolution cloud's points (no resampling).
    full_keep, half_keep = vertices(cloud("--keep-edges")), vertices(cloud("--stride", "2",
                                                                           "--keep-edges"))
    known = set(map(tuple, points(full_keep).tolist()))
    missing = sum(tuple(q) not in known for q in points(half_keep).tolist())
    assert missing == 0, f"{missing} of --stride 2's points are not in the full cloud"


def test_depth_range(cloud):
    full = vertices(cloud())
    v = vertices(cloud("--min-depth", "2", "--max-depth", "2.5"))
    z = v["z"]
    assert len(v) > 0, "no points in [2, 2.5] m, but the sample's floor crosses that range"
    assert z.min() >= 2 and z.max() <= 2.5, f"z in [{z.min()}, {z.max()}]"
    in_range = (full["z"] >= 2) & (full["z"] <= 2.5)
    assert len(v) == in_range.sum(), \
        f"{len(v)} points with the range options, {in_range.sum()} of the default cloud in range"


# ---------------------------------------------------------------------------- ground truth

def test_every_point_lies_on_a_scene_surface(cloud, truth):
    """No flying pixels: within 5 mm of the wall, the floor or the box (the sample's depth
    noise is ±0.5 mm); in particular nothing floats between the box and the wall."""
    p = points(vertices(cloud()))
    wall_z = plane_value(truth, "wall", "z")
    floor_y = plane_value(truth, "floor", "y")
    dist = np.minimum.reduce([np.abs(p[:, 2] - wall_z), np.abs(p[:, 1] - floor_y),
                              box_distance(p, truth["box"]["min"], truth["box"]["max"])])
    bad = dist > 5e-3
    assert not bad.any(), (
        f"{bad.sum()} of {len(p)} points are more than 5 mm from every scene surface "
        f"(worst {dist.max() * 1e3:.2f} mm), e.g. {p[bad][:5].round(4).tolist()}")


def test_wall_points_on_true_plane(cloud, truth):
    p = points(vertices(cloud()))
    wall_z = plane_value(truth, "wall", "z")
    floor_y = plane_value(truth, "floor", "y")
    # Wall points: near the wall's depth, away from the floor; the box is at z <= 2 m.
    wall = (np.abs(p[:, 2] - wall_z) < 0.1) & (p[:, 1] < floor_y - 0.05)
    assert wall.sum() > 0.5 * len(p), f"only {wall.sum()} of {len(p)} points on the wall"
    rms = np.sqrt(np.mean((p[wall, 2] - wall_z) ** 2))
    assert rms <= 2e-3, f"wall RMS distance to z = {wall_z} is {rms * 1e3:.2f} mm"


def test_colors_average_the_depth_pixels_footprint(cloud, rectified):
    """The color of depth pixel (u, v) is the rectified color averaged over the footprint
    centered at (u * wc / wd, v * hc / hd) (docs/outputs.md)."""
    out, stem = rectified
    depth = tifffile.imread(out / f"{stem}.depth.tiff")
    rgb = cv2.imread(str(out / f"{stem}.color.png"), cv2.IMREAD_COLOR)[:, :, ::-1]
    hc, wc = rgb.shape[:2]
    hd, wd = depth.shape
    sx, sy = wc / wd, hc / hd
    v, u = np.nonzero(np.isfinite(depth) & (depth > 0))
    # Exact box mean over [u*sx - sx/2, u*sx + sx/2] (index coordinates, clipped to the
    # image) from the summed-area table, bilinear in it for fractional bounds.
    table = cv2.integral(np.ascontiguousarray(rgb))      # (hc+1, wc+1, 3), edge coordinates

    def area_sum(x, y):
        x0 = np.minimum(np.floor(x).astype(int), wc - 1)
        y0 = np.minimum(np.floor(y).astype(int), hc - 1)
        fx, fy = (x - x0)[:, None], (y - y0)[:, None]
        return (table[y0, x0] * (1 - fx) * (1 - fy) + table[y0, x0 + 1] * fx * (1 - fy)
                + table[y0 + 1, x0] * (1 - fx) * fy + table[y0 + 1, x0 + 1] * fx * fy)

    x0 = np.clip(u * sx + 0.5 - sx / 2, 0, wc)
    x1 = np.clip(u * sx + 0.5 + sx / 2, 0, wc)
    y0 = np.clip(v * sy + 0.5 - sy / 2, 0, hc)
    y1 = np.clip(v * sy + 0.5 + sy / 2, 0, hc)
    mean = (area_sum(x1, y1) - area_sum(x0, y1) - area_sum(x1, y0) + area_sum(x0, y0)) \
        / ((x1 - x0) * (y1 - y0))[:, None]
    got = colors(vertices(cloud("--keep-edges"))).astype(np.float64)
    assert len(got) == len(mean)
    err = np.abs(got - mean)
    assert err.mean() < 3, f"mean color difference to the footprint average {err.mean():.2f}"
    assert np.percentile(err, 99) < 25, \
        f"99th percentile color difference {np.percentile(err, 99):.1f}"
