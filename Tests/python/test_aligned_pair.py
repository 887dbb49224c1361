"""Pixel-aligned color + depth pairs of `rgbd rectify --align-to depth|color` (issue 8),
read back from the real binary's files and fed through Open3D's RGBD formulas in numpy.

Open3D's `RGBDImage.create_from_color_and_depth(color, depth, depth_scale, depth_trunc,
convert_rgb_to_intensity=False)` needs color and depth of one size (it raises "Unsupported
image format" otherwise); `PointCloud.create_from_rgbd_image(rgbd, intrinsic)` then makes a
point of every pixel with depth. `open3d_rgbd_cloud` below is that code path; the optional
Scripts/interop_open3d.py runs the real Open3D on the same files.

The same pair in memory (`Capture.aligned`, the C call rgbd_capture_aligned) is checked
against those files and against the sample's truth: back-projected with its intrinsics,
each pixel's depth lands on the surface whose color the pixel has.
"""

import json
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest
import tifffile
from numpy.lib.stride_tricks import sliding_window_view
from plyfile import PlyData

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "Examples" / "sample" / "shot.json"
TRUTH = json.loads((REPO / "Examples" / "sample" / "shot.truth.json").read_text())
STEM = SAMPLE.stem


def run(binary, *args):
    proc = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.fail(f"`rgbd {' '.join(map(str, args))}` exited {proc.returncode}:\n{proc.stderr}",
                    pytrace=False)
    return proc


@pytest.fixture(scope="module")
def outputs(rgbd_bin, tmp_path_factory):
    """outputs(kind) -> directory of `rgbd rectify` on the sample: kind is "native",
    "depth" or "color" (--align-to), or "cloud" (the PLY of `rgbd cloud --keep-edges`)."""
    root = tmp_path_factory.mktemp("aligned")
    cache = {}

    def make(kind):
        if kind not in cache:
            out = root / kind
            if kind == "cloud":
                out = root / "cloud.ply"
                run(rgbd_bin, "cloud", SAMPLE, "-o", out, "-q", "--keep-edges")
            elif kind == "native":
                run(rgbd_bin, "rectify", SAMPLE, "-o", out, "-q")
            else:
                run(rgbd_bin, "rectify", SAMPLE, "-o", out, "-q", "--align-to", kind)
            cache[kind] = out
        return cache[kind]

    return make


def read_pair(directory):
    """(color RGB uint8, depth uint16 millimeters, depth float32 meters, sidecar dict)."""
    color = cv2.imread(str(directory / f"{STEM}.color.png"), cv2.IMREAD_COLOR)[:, :, ::-1]
    depth = cv2.imread(str(directory / f"{STEM}.depth.png"), cv2.IMREAD_UNCHANGED)
    assert depth is not None and depth.dtype == np.uint16, "depth PNG is not 16-bit"
    meters = tifffile.imread(directory / f"{STEM}.depth.tiff")
    sidecar = json.loads((directory / f"{STEM}.intrinsics.json").read_text())
    return np.ascontiguousarray(color), depth, meters, sidecar


def camera(entry):
    """(width, height, fx, fy, cx, cy) of a sidecar entry, as read_pinhole_camera_intrinsic reads it."""
    k = entry["intrinsic_matrix"]
    assert len(k) == 9 and k[1] == k[2] == k[3] == k[5] == 0 and k[8] == 1, f"not column-major pinhole: {k}"
    return entry["width"], entry["height"], k[0], k[4], k[6], k[7]


def open3d_rgbd_cloud(color, depth, intrinsics, depth_scale=1000.0, depth_trunc=3.0):
    """create_from_color_and_depth(color, depth, depth_scale, depth_trunc,
    convert_rgb_to_intensity=False) + PointCloud.create_from_rgbd_image(rgbd, intrinsic).

    ConvertDepthToFloatImage: z = float(d) / float(depth_scale), and z >= depth_trunc becomes 0
    (the default depth_trunc is 3.0 m). Then every pixel with z > 0, row-major, gives
    ((u - cx) z / fx, (v - cy) z / fy, z) in double and the color / 255.
    """
    if color.shape[:2] != depth.shape:
        raise ValueError("Unsupported image format.")      # Open3D's LogError
    width, height, fx, fy, cx, cy = intrinsics
    assert depth.shape == (height, width), f"depth {depth.shape} vs intrinsics {width}x{height}"
    z_img = depth.astype(np.float32) / np.float32(depth_scale)
    z_img[z_img >= depth_trunc] = 0
    v, u = np.nonzero(z_img > 0)
    z = z_img[v, u].astype(np.float64)
    points = np.stack([(u - cx) * z / fx, (v - cy) * z / fy, z], axis=1)
    return points, color[v, u].astype(np.float64) / 255.0, (v, u)


def true_depth(width, height, fx, fy, cx, cy):
    """The scene's depth along the ray of every pixel (wall, floor, box of the truth file)."""
    u, v = np.meshgrid(np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64))
    a, b = (u - cx) / fx, (v - cy) / fy
    wall_z = float(TRUTH["wall"]["plane"].split("=")[1])
    floor_y = float(TRUTH["floor"]["plane"].split("=")[1])
    z = np.full(a.shape, wall_z)
    with np.errstate(divide="ignore", invalid="ignore"):
        floor = np.where(b > 0, floor_y / b, np.inf)
        z = np.minimum(z, floor)
        lo, hi = TRUTH["box"]["min"], TRUTH["box"]["max"]
        near, far = np.full(a.shape, -np.inf), np.full(a.shape, np.inf)
        for d, l, h in ((a, lo[0], hi[0]), (b, lo[1], hi[1]), (np.ones_like(a), lo[2], hi[2])):
            t0, t1 = l / d, h / d
            near, far = np.maximum(near, np.minimum(t0, t1)), np.minimum(far, np.maximum(t0, t1))
        box = np.where((near <= far) & (near > 0), near, np.inf)
    return np.minimum(z, box)


def distance_to_scene(p):
    """Distance of points (n, 3) to the nearest scene surface."""
    wall_z = float(TRUTH["wall"]["plane"].split("=")[1])
    floor_y = float(TRUTH["floor"]["plane"].split("=")[1])
    lo, hi = np.asarray(TRUTH["box"]["min"]), np.asarray(TRUTH["box"]["max"])
    d = np.maximum(lo - p, p - hi)
    box = np.linalg.norm(np.maximum(d, 0), axis=1) - np.minimum(d.max(axis=1), 0)
    return np.minimum.reduce([np.abs(p[:, 2] - wall_z), np.abs(p[:, 1] - floor_y), box])


# ---------------------------------------------------------------------------- the issue

def test_native_outputs_do_not_fit_create_from_color_and_depth(outputs):
    color, depth, _, sidecar = read_pair(outputs("native"))
    assert color.shape[:2] != depth.shape
    with pytest.raises(ValueError):
        open3d_rgbd_cloud(color, depth, camera(sidecar))


@pytest.mark.parametrize("alignment", ["depth", "color"])
def test_sidecar_describes_the_pair(outputs, alignment):
    color, depth, meters, sidecar = read_pair(outputs(alignment))
    assert color.shape[:2] == depth.shape == meters.shape
    truth = TRUTH[f"{alignment}_intrinsics"]
    expected = (truth["width"], truth["height"], truth["fx"], truth["fy"], truth["cx"], truth["cy"])
    for entry in (sidecar, sidecar["color"], sidecar["depth"]):
        got = camera(entry)
        assert got[:2] == (depth.shape[1], depth.shape[0]) == expected[:2]
        np.testing.assert_allclose(got[2:], expected[2:], rtol=1e-12)


# ---------------------------------------------------------------------------- --align-to depth

def test_depth_aligned_pair_through_open3d_is_rgbd_cloud(outputs):
    """Open3D's RGBD path on the depth-size pair gives `rgbd cloud --keep-edges`: the same
    points (to the PNG's millimeter) in the same order, and the same footprint-averaged colors."""
    color, depth, _, sidecar = read_pair(outputs("depth"))
    points, colors, _ = open3d_rgbd_cloud(color, depth, camera(sidecar), depth_trunc=np.inf)
    ply = PlyData.read(str(outputs("cloud")))["vertex"].data
    assert len(points) == len(ply) > 0.9 * depth.size
    expected = np.stack([ply[c] for c in ("x", "y", "z")], axis=1).astype(np.float64)
    err = np.abs(points - expected).max()
    assert err <= 0.5e-3 + 1e-6, f"points differ from rgbd cloud's by {err * 1e3:.3f} mm"
    rgb = np.stack([ply[c] for c in ("red", "green", "blue")], axis=1)
    np.testing.assert_array_equal(np.rint(colors * 255).astype(np.uint8), rgb)


def test_default_depth_trunc_drops_the_wall(outputs):
    """Why the docs say to pass depth_trunc: Open3D's default (3.0 m) drops the 3 m wall."""
    color, depth, _, sidecar = read_pair(outputs("depth"))
    everything, _, _ = open3d_rgbd_cloud(color, depth, camera(sidecar), depth_trunc=np.inf)
    default, _, _ = open3d_rgbd_cloud(color, depth, camera(sidecar))
    wall = lambda p: np.sum(np.abs(p[:, 2] - 3.0) < 0.01)
    assert wall(everything) > 0.5 * len(everything)
    assert wall(default) < 0.5 * wall(everything)


# ---------------------------------------------------------------------------- --align-to color

def test_color_aligned_color_is_the_rectified_photo(outputs):
    aligned, _, _, _ = read_pair(outputs("color"))
    native, _, _, _ = read_pair(outputs("native"))
    np.testing.assert_array_equal(aligned, native)


def test_color_aligned_points_lie_on_the_scene(outputs):
    color, depth, _, sidecar = read_pair(outputs("color"))
    k = camera(sidecar)
    points, _, (v, u) = open3d_rgbd_cloud(color, depth, k, depth_trunc=np.inf)
    assert len(points) > 0.9 * depth.size
    dist = distance_to_scene(points)
    # Nothing between the box (z <= 2 m) and the wall (3 m): that would be decimeters off.
    # Beside a silhouette a pixel may take the depth of a surface half a depth pixel away.
    assert dist.max() <= 0.02, f"a point {dist.max() * 1e3:.1f} mm from every surface"
    assert np.mean(dist > 5e-3) <= 0.005, f"{np.sum(dist > 5e-3)} points beyond 5 mm"

    # Where the true depth is the wall over a depth pixel either way, it is 3 m to the
    # millimeter (sample noise 0.5 mm, PNG rounding 0.5 mm).
    truth = true_depth(*k).astype(np.float32)
    kernel = np.ones((13, 13), np.uint8)                   # ±6 px > one depth pixel (5.25 px)
    lo, hi = cv2.erode(truth, kernel), cv2.dilate(truth, kernel)
    z = depth.astype(np.float64) / 1000
    wall = (lo == 3.0) & (hi == 3.0) & (depth > 0)
    assert wall.sum() > 0.3 * depth.size
    assert np.abs(z[wall] - 3.0).max() <= 1.5e-3

    # Near silhouettes every depth is one of the true depths around it (within 1 %, the
    # floor is steep), never a blend of foreground and background.
    edge = (hi - lo > 0.5) & (depth > 0)
    assert edge.sum() > 1000, "the scene must have depth edges for this test to mean anything"
    windows = sliding_window_view(np.pad(truth, 6, mode="edge"), (13, 13))
    ev, eu = np.nonzero(edge)
    around = windows[ev, eu].reshape(len(ev), -1).astype(np.float64)
    gap = np.abs(around - z[ev, eu][:, None]).min(axis=1)
    bad = gap > np.maximum(2e-3, 0.01 * z[ev, eu]) + 1e-3
    assert not bad.any(), f"{bad.sum()} of {len(ev)} silhouette depths are no surface's"


def test_color_aligned_depth_keeps_holes_and_native_values(outputs):
    _, depth, meters, _ = read_pair(outputs("color"))
    _, native_depth, native_meters, _ = read_pair(outputs("native"))
    (hc, wc), (hd, wd) = depth.shape, native_depth.shape
    sx, sy = wc / wd, hc / hd
    assert (sx, sy) == (5.25, 5.25)
    # Holes stay holes and none appear: the hole area scales with the pixel count.
    inner = (slice(8, -8), slice(8, -8))
    native_holes = np.mean(native_depth[inner] == 0)
    holes = np.mean(depth[tuple(slice(int(s.start * sx), int(s.stop * sx)) for s in inner)] == 0)
    assert native_holes > 0, "the sample has a patch of holes"
    assert abs(holes / native_holes - 1) < 0.15, f"hole fraction {holes:.4f} vs {native_holes:.4f}"
    # Color pixel (21 i, 21 j) is depth pixel (4 i, 4 j): the same rectified value.
    a, b = meters[::21, ::21], native_meters[::4, ::4][: meters[::21].shape[0], : meters[0, ::21].shape[0]]
    assert np.array_equal(np.isnan(a), np.isnan(b))
    finite = np.isfinite(a)
    assert np.abs(a[finite] - b[finite]).max() <= 1e-6
    # PNG and TIFF agree: millimeters = 1000·d (a float32 product) rounded half away from zero.
    mm = np.floor((meters * np.float32(1000)).astype(np.float64) + 0.5)
    np.testing.assert_array_equal(depth, np.where(np.isnan(meters), 0, mm).astype(np.uint16))


# ---------------------------------------------------------------------------- in memory: Capture.aligned

def _rgbd():
    """The Python package of this repository (over $RGBD_LIBRARY or the build)."""
    import rgbd
    return rgbd


@pytest.fixture(scope="module")
def sample_capture():
    with _rgbd().load_capture(SAMPLE) as capture:
        yield capture


@pytest.mark.parametrize("alignment", ["depth", "color"])
def test_aligned_in_memory_is_what_rectify_writes(sample_capture, outputs, alignment):
    """Capture.aligned (rgbd_capture_aligned) gives the pixels and intrinsics of
    `rgbd rectify --align-to`: the PNG's colors, the TIFF's meters (NaN where the TIFF has
    NaN), the sidecar's camera, and the synthetic truth's."""
    pair = sample_capture.aligned(to=alignment)
    color, _, meters, sidecar = read_pair(outputs(alignment))
    assert pair.color.dtype == np.uint8 and pair.depth.dtype == np.float32
    assert pair.color.shape == color.shape and pair.depth.shape == meters.shape
    np.testing.assert_array_equal(pair.color, color)
    assert np.array_equal(np.isnan(pair.depth), np.isnan(meters))
    np.testing.assert_array_equal(pair.depth[np.isfinite(meters)], meters[np.isfinite(meters)])
    k = pair.intrinsics
    width, height, fx, fy, cx, cy = camera(sidecar)
    assert (k.width, k.height) == (width, height) == (pair.depth.shape[1], pair.depth.shape[0])
    np.testing.assert_allclose([k.fx, k.fy, k.cx, k.cy], [fx, fy, cx, cy], rtol=1e-12)
    truth = TRUTH[f"{alignment}_intrinsics"]
    np.testing.assert_allclose([k.fx, k.fy, k.cx, k.cy], [truth[n] for n in ("fx", "fy", "cx", "cy")], rtol=1e-12)


def _true_colors(points, margin):
    """The scene's color at each point (n, 3) where it is unambiguous, else NaN: the box's
    front face, and the wall's checker squares, each at least `margin` (n,) meters from any
    edge of its face or square; points farther than 5 mm from those faces are NaN."""
    x, y, z = points[:, 0], points[:, 1], points[:, 2]
    wall_z = float(TRUTH["wall"]["plane"].split("=")[1])
    size, origin = TRUTH["wall"]["checker_size"], TRUTH["wall"]["checker_origin"]
    lo, hi = TRUTH["box"]["min"], TRUTH["box"]["max"]
    out = np.full(points.shape, np.nan)
    # The front face (z = 1.6): SyntheticScene's (200, 60, 50).
    front = (np.abs(z - lo[2]) < 5e-3) & (x > lo[0] + margin) & (x < hi[0] - margin) \
        & (y > lo[1] + margin) & (y < hi[1] - margin)
    out[front] = (200, 60, 50)
    # The wall: light (225, 205, 170) where the cells' parities agree, dark (30, 40, 75)
    # where not; the box's silhouette on the wall is left out (its shadow in depth).
    tx, ty = (x - origin[0]) / size, (y - origin[1]) / size
    inside = (np.minimum(tx % 1, 1 - tx % 1) * size > margin) & (np.minimum(ty % 1, 1 - ty % 1) * size > margin)
    wall = (np.abs(z - wall_z) < 5e-3) & inside
    light = (np.floor(tx).astype(np.int64) + np.floor(ty).astype(np.int64)) % 2 == 0
    out[wall & light] = (225, 205, 170)
    out[wall & ~light] = (30, 40, 75)
    return out


# Per alignment: how far (in the grid's pixels) a pixel must be from a silhouette and from
# a color edge for its color to be one surface's (a depth pixel is 5.25 color pixels; a
# color pixel's value reaches JPEG's 8×8 blocks and 2×2 chroma), the largest error
# allowed (8-bit levels) and a shift of the color that must break the check.
_COLOR_CHECK = {"depth": {"silhouette": 1, "margin": 1.5, "levels": 12, "shift": 2},
                "color": {"silhouette": 6, "margin": 3.0, "levels": 24, "shift": 4}}


def _color_errors(pair, alignment, shift=0):
    """max |aligned color − true color| over the channels at every pixel away from the
    scene's silhouettes whose back-projected depth has an unambiguous true color, with
    the color image moved `shift` pixels to the right."""
    k, check = pair.intrinsics, _COLOR_CHECK[alignment]
    truth = true_depth(k.width, k.height, k.fx, k.fy, k.cx, k.cy).astype(np.float32)
    kernel = np.ones((2 * check["silhouette"] + 1,) * 2, np.uint8)
    away = cv2.dilate(truth, kernel) - cv2.erode(truth, kernel) < 0.01
    v, u = np.nonzero(np.isfinite(pair.depth) & away)
    z = pair.depth[v, u].astype(np.float64)
    points = np.stack([(u - k.cx) * z / k.fx, (v - k.cy) * z / k.fy, z], axis=1)
    colors = _true_colors(points, margin=check["margin"] * z / k.fx)
    known = ~np.isnan(colors[:, 0])
    color = np.roll(pair.color, shift, axis=1)
    return np.abs(color[v, u][known].astype(np.float64) - colors[known]).max(axis=1)


@pytest.mark.parametrize("alignment", ["depth", "color"])
def test_aligned_pixels_see_the_same_point(sample_capture, alignment):
    """Back-projecting the aligned depth with the returned intrinsics lands on the surface
    whose color the aligned color has at that pixel: the box's red front face where the
    depth says box (to its edges), the right checker square where it says wall."""
    pair = sample_capture.aligned(to=alignment)
    check = _COLOR_CHECK[alignment]
    errors = _color_errors(pair, alignment)
    assert len(errors) > 1000, f"only {len(errors)} pixels with a known color"
    assert errors.max() <= check["levels"], f"a color {errors.max():.0f} levels from the scene's"
    # The check can tell: the color a few pixels off its depth is the wrong square's.
    shifted = _color_errors(pair, alignment, shift=check["shift"])
    assert np.mean(shifted > check["levels"]) > 0.01


@pytest.mark.parametrize("alignment", ["depth", "color"])
def test_aligned_depth_lies_on_the_scene(sample_capture, alignment):
    """The in-memory depth, unrounded, back-projects onto the scene's surfaces: the wall
    planar at 3 m to the sample's noise, the box's edge a straight vertical line where the
    truth puts it, nothing between foreground and background."""
    pair = sample_capture.aligned(to=alignment)
    k = pair.intrinsics
    v, u = np.nonzero(np.isfinite(pair.depth))
    z = pair.depth[v, u].astype(np.float64)
    points = np.stack([(u - k.cx) * z / k.fx, (v - k.cy) * z / k.fy, z], axis=1)
    assert len(points) > 0.9 * pair.depth.size
    dist = distance_to_scene(points)
    assert dist.max() <= 0.02, f"a point {dist.max() * 1e3:.1f} mm from every surface"
    assert np.mean(dist > 5e-3) <= 0.005
    # The wall is planar: where the truth is the wall around a pixel, z is 3 m to the
    # millimeter (noise 0.5 mm) and has no slope.
    truth = true_depth(k.width, k.height, k.fx, k.fy, k.cx, k.cy).astype(np.float32)
    reach = 3 if alignment == "depth" else 13
    kernel = np.ones((reach, reach), np.uint8)
    lo, hi = cv2.erode(truth, kernel), cv2.dilate(truth, kernel)
    wall = (lo == 3.0) & (hi == 3.0) & np.isfinite(pair.depth)
    assert wall.sum() > 0.3 * pair.depth.size
    assert np.abs(pair.depth[wall] - 3.0).max() <= 1.5e-3
    wv, wu = np.nonzero(wall)
    slope = np.linalg.lstsq(np.stack([wu, wv, np.ones_like(wu)], axis=1).astype(np.float64),
                            pair.depth[wall].astype(np.float64), rcond=None)[0]
    assert np.abs(slope[:2]).max() * max(k.width, k.height) < 1e-3, f"the wall tilts: {slope}"
    # The box front's left edge (x = -0.95 at z = 1.6 m) is the column cx + fx·x/z in
    # every row it spans above where the floor comes nearer than 1.7 m: the first column
    # of box depth, row after row (a straight vertical line where the truth puts it).
    box = TRUTH["box"]
    edge = k.cx + k.fx * box["min"][0] / box["min"][2]
    top = k.cy + k.fy * box["min"][1] / box["min"][2]
    bottom = k.cy + k.fy * 0.7  # the floor (y = 1.2) is farther than 1.7 m above this row
    rows = np.arange(int(np.ceil(top)) + 2, min(int(bottom), k.height))
    assert len(rows) > 10
    first = np.array([np.nonzero(r)[0].min() for r in pair.depth[rows] < 1.7])
    # The first pixel whose center is right of the edge, give or take the resampling of
    # one depth pixel (at the photo's size a depth pixel is 5.25 pixels: a pixel there
    # may take the depth of a surface half a depth pixel away).
    depth_pixel = k.width / sample_capture.depth_size[0]
    reach = 1.5 if alignment == "depth" else 0.5 * depth_pixel + 1
    assert np.abs(first - edge).max() <= reach, f"box edge columns {sorted(set(first))}, truth {edge:.2f}"


def test_aligned_argument_errors(tmp_path):
    rgbd = _rgbd()
    capture = rgbd.load_capture(SAMPLE)
    for bad in ("native", "Depth", None, 1):
        with pytest.raises(ValueError, match="^to must be 'depth' or 'color', not .*$"):
            capture.aligned(to=bad)
    capture.close()
    with pytest.raises(ValueError, match="^capture 'shot' is closed$"):
        capture.aligned(to="depth")
    # A depth map larger than the photo has no footprints to average the color over: the
    # library's error, one line, naming the JSON; aligning to the photo still works.
    (tmp_path / "shot.json").write_bytes(SAMPLE.read_bytes())
    image = np.full((48, 64, 3), (90, 40, 200), np.uint8)
    assert cv2.imwrite(str(tmp_path / "shot.jpg"), image)
    with rgbd.load_capture(tmp_path / "shot.json") as small:
        with pytest.raises(rgbd.RGBDError) as raised:
            small.aligned(to="depth")
        assert raised.value.status == rgbd.Status.INVALID_ARGUMENT
        assert "\n" not in str(raised.value) and "shot.json" in str(raised.value)
        assert "larger than the image" in str(raised.value)
        pair = small.aligned(to="color")
        assert pair.color.shape == (48, 64, 3) and pair.depth.shape == (48, 64)
        assert (pair.intrinsics.width, pair.intrinsics.height) == (64, 48)
