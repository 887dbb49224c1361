"""Portrait photos (HEIC and JPEG with a depth image) as captures: the real rgbd binary and
the Python package (the real library) on photos made at test time by
portrait_files.py (beside the tests), from a scene with known lens, lines and planes.

Ground truth: the lens tables are computed here with numpy from the coefficients in the
photo (portrait_files.lens_table, Apple's formula written independently of rgbd), the
lines of the rectified image and the planes' depths are those the scene was drawn with.
"""

import json
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest
import tifffile

import portrait_files

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("portrait")
    scene = portrait_files.write(directory)
    return directory, scene


def run(rgbd_bin, *args, check=True):
    result = subprocess.run([str(rgbd_bin), *map(str, args)], capture_output=True, text=True, timeout=300)
    if check and result.returncode != 0:
        raise AssertionError(f"rgbd {' '.join(map(str, args))} failed ({result.returncode}): {result.stderr}")
    return result


def info_json(rgbd_bin, path):
    return json.loads(run(rgbd_bin, "info", path, "--json").stdout)[0]


@pytest.fixture(scope="module")
def rectified(files, rgbd_bin):
    """OUT/heic and OUT/jpg: `rgbd rectify` of each photo, no JSON."""
    directory, _ = files
    out = {}
    for kind in ("heic", "jpg"):
        target = directory / f"out-{kind}"
        run(rgbd_bin, "rectify", directory / f"portrait.{kind}", "-o", target)
        out[kind] = target
    return out


# ------------------------------------------------------------------------- the lens model

def test_table_is_the_formula_computed_in_numpy(files, rgbd_bin):
    directory, scene = files
    for name in ("portrait.heic", "portrait.jpg"):
        entry = info_json(rgbd_bin, directory / name)
        expected = portrait_files.lens_table(scene.forward, scene.pixel_size, scene.center, scene.width, scene.height)
        inverse = portrait_files.lens_table(scene.inverse, scene.pixel_size, scene.center, scene.width, scene.height)
        table = np.array(entry["lens_distortion_lookup_table"], dtype=np.float32)
        inverse_table = np.array(entry["inverse_lens_distortion_lookup_table"], dtype=np.float32)
        assert table.shape == (42,) and inverse_table.shape == (42,)
        np.testing.assert_array_max_ulp(table, expected, maxulp=1)
        np.testing.assert_array_max_ulp(inverse_table, inverse, maxulp=1)


def test_table_is_positive_not_monotonic_and_round_trips_within_half_a_pixel(files, rgbd_bin):
    directory, scene = files
    entry = info_json(rgbd_bin, directory / "portrait.heic")
    table = np.array(entry["lens_distortion_lookup_table"])
    # Like the real phone's: rising to about +1.4 % at the corner, not monotonic.
    assert table[0] == 0 and (table[1:] > 0).all()
    assert abs(table[-1] - 0.0142) < 0.0005
    assert table.max() > table[-1] + 1e-4 and table.argmax() < 41
    assert entry["lookup_table"]["monotonic"] is False
    # The corner moves by 1.4 % of its radius (403 px here; 2520 px, 35 px, on a 12 MP photo).
    corner = entry["corner_displacement"]["max"]
    assert 5.0 < corner < 6.5
    # Round trip forward then inverse, recomputed in numpy with the numpy tables.
    w, h = scene.width, scene.height
    y, x = np.mgrid[0:h:7, 0:w:7].astype(np.float64)
    qx, qy = portrait_files.apply_table(scene.table, scene.center, w, h, x, y)
    px, py = portrait_files.apply_table(scene.inverse_table, scene.center, w, h, qx, qy)
    error = np.hypot(px - x, py - y).max()
    assert error < 0.5
    assert entry["inverse_round_trip"]["max"] < 0.5
    assert abs(entry["inverse_round_trip"]["max"] - error) < 0.1
    # The same lens on a 12 MP photo: 35-37 px at the corner, round trip still within half a pixel.
    big = portrait_files.Scene(4032, 3024)
    corner_px = float(big.table[-1]) * np.hypot(max(big.center[0], 4032 - big.center[0]),
                                                 max(big.center[1], 3024 - big.center[1]))
    assert 34 < corner_px < 38
    y, x = np.mgrid[0:3024:48, 0:4032:48].astype(np.float64)
    qx, qy = portrait_files.apply_table(big.table, big.center, 4032, 3024, x, y)
    px, py = portrait_files.apply_table(big.inverse_table, big.center, 4032, 3024, qx, qy)
    assert np.hypot(px - x, py - y).max() < 0.5


# ------------------------------------------------------------------------------ geometry

def line_positions(image, lines, across, avoid):
    """Centroid of the dark line nearest each known position, for every column (rows:
    across=0) or row (columns: across=1), away from the other lines and the borders."""
    ink = np.clip(255 - image.astype(np.float64).mean(axis=2) - 40, 0, None)
    if across == 1:
        ink = ink.T
    length = ink.shape[1]
    keep = [i for i in range(20, length - 20) if min(abs(i - a) for a in avoid) > 6]
    worst = 0.0
    for position in lines:
        window = np.arange(round(position) - 5, round(position) + 6)
        weights = ink[window][:, keep]
        centroid = (weights * window[:, None]).sum(axis=0) / weights.sum(axis=0)
        worst = max(worst, float(np.abs(centroid - position).max()))
    return worst


@pytest.mark.parametrize("kind", ["heic", "jpg"])
def test_straight_lines_are_straight_and_in_place_after_rectification(files, rectified, kind):
    directory, scene = files
    color = cv2.imread(str(rectified[kind] / "portrait.color.png"))[:, :, ::-1]
    assert color.shape == (scene.height, scene.width, 3)
    rows = line_positions(color, scene.rows, 0, scene.columns)
    columns = line_positions(color, scene.columns, 1, scene.rows)
    assert rows < 0.15 and columns < 0.15, (rows, columns)
    # The photo as captured: the same lines are bent by pixels (the check can fail).
    captured = scene.color()
    assert line_positions(captured, scene.rows, 0, scene.columns) > 1.5


def plane_regions(scene, width, height, margin):
    """Per rectified depth pixel, the plane's depth where every point within `margin`
    pixels lies on the same plane, else NaN."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    sx, sy = scene.width / width, scene.height / height
    truth = scene.plane_of(x * sx, y * sy)
    same = np.ones_like(truth, dtype=bool)
    for dy in (-margin, 0, margin):
        for dx in (-margin, 0, margin):
            same &= scene.plane_of((x + dx) * sx, (y + dy) * sy) == truth
    return np.where(same, truth, np.nan)


@pytest.mark.parametrize("kind,tolerance", [("heic", 1e-6), ("jpg", 5e-3)])
def test_planes_are_at_their_distance(files, rectified, kind, tolerance):
    directory, scene = files
    depth = tifffile.imread(rectified[kind] / "portrait.depth.tiff")
    assert depth.shape == (scene.depth_height, scene.depth_width)
    truth = plane_regions(scene, scene.depth_width, scene.depth_height, margin=2)
    inside = np.isfinite(truth)
    # The border, where the rectified image looks beyond the photo, is left out.
    inside[:3, :] = inside[-3:, :] = inside[:, :3] = inside[:, -3:] = False
    assert inside.sum() > 0.7 * depth.size
    relative = np.abs(depth[inside] - truth[inside]) / truth[inside]
    assert np.isfinite(depth[inside]).all()
    assert relative.max() <= tolerance, relative.max()
    for plane in portrait_files.PLANES.values():
        assert (truth[inside] == plane).sum() > 200
    millimeters = cv2.imread(str(rectified[kind] / "portrait.depth.png"), cv2.IMREAD_UNCHANGED)
    assert np.abs(millimeters[inside].astype(np.float64) - truth[inside] * 1000).max() <= 1000 * tolerance * 2 + 0.5


def test_same_pixels_as_the_equivalent_json_capture(files, rectified, rgbd_bin):
    directory, _ = files
    target = directory / "out-json"
    run(rgbd_bin, "rectify", directory / "portrait-equivalent.json", "--image", directory / "portrait.heic", "-o", target)
    a = cv2.imread(str(rectified["heic"] / "portrait.color.png"))
    b = cv2.imread(str(target / "portrait-equivalent.color.png"))
    assert np.array_equal(a, b)
    da = tifffile.imread(rectified["heic"] / "portrait.depth.tiff")
    db = tifffile.imread(target / "portrait-equivalent.depth.tiff")
    assert np.array_equal(da, db, equal_nan=True)
    ia = json.loads((rectified["heic"] / "portrait.intrinsics.json").read_text())
    ib = json.loads((target / "portrait-equivalent.intrinsics.json").read_text())
    for key in ("width", "height", "intrinsic_matrix", "color", "depth"):
        assert ia[key] == ib[key]


def test_matte_is_written_rectified(files, rectified):
    directory, scene = files
    for kind in ("heic", "jpg"):
        matte = cv2.imread(str(rectified[kind] / "portrait.matte.png"), cv2.IMREAD_UNCHANGED)
        h, w = 2 * scene.depth_height, 2 * scene.depth_width
        assert matte.shape == (h, w) and matte.dtype == np.uint16
        truth = plane_regions(scene, w, h, margin=2)
        person = truth == portrait_files.PLANES["near"]
        background = np.isfinite(truth) & ~person
        background[:3, :] = background[-3:, :] = background[:, :3] = background[:, -3:] = False
        assert person.sum() > 1000
        assert (matte[person] >= 65535 - 257 * 3).all()
        assert (matte[background] <= 257 * 3).all()


@pytest.mark.parametrize("alignment", ["color", "depth"])
def test_aligned_matte_is_on_the_pairs_grid(files, rectified, rgbd_bin, alignment):
    """With --align-to, the matte is put on the pixel-aligned pair's grid like the depth
    map (same size, its edges where the foreground plane is), and the sidecar gives its
    intrinsics: the pair's. Without, the sidecar gives the matte's own (the depth map's
    scaled to its size)."""
    directory, scene = files
    target = directory / f"out-align-{alignment}"
    run(rgbd_bin, "rectify", directory / "portrait.heic", "--align-to", alignment, "-o", target)
    depth = tifffile.imread(target / "portrait.depth.tiff")
    color = cv2.imread(str(target / "portrait.color.png"))
    matte = cv2.imread(str(target / "portrait.matte.png"), cv2.IMREAD_UNCHANGED)
    h, w = (scene.height, scene.width) if alignment == "color" else (scene.depth_height, scene.depth_width)
    assert depth.shape == (h, w) and color.shape[:2] == (h, w)
    assert matte.shape == (h, w) and matte.dtype == np.uint16
    truth = plane_regions(scene, w, h, margin=2)
    person = truth == portrait_files.PLANES["near"]
    background = np.isfinite(truth) & ~person
    background[:3, :] = background[-3:, :] = background[:, :3] = background[:, -3:] = False
    assert person.sum() > (1000 if alignment == "color" else 100)
    assert (matte[person] >= 65535 - 257 * 3).all()
    assert (matte[background] <= 257 * 3).all()
    # The matte's foreground is the depth's near plane, pixel for pixel.
    near = np.abs(depth - portrait_files.PLANES["near"]) < 0.01
    assert (person & near).sum() >= 0.95 * person.sum()
    sidecar = json.loads((target / "portrait.intrinsics.json").read_text())
    assert sidecar["matte"] == sidecar["depth"] == sidecar["color"]
    assert (sidecar["matte"]["width"], sidecar["matte"]["height"]) == (w, h)
    # Without alignment: the matte's own size and intrinsics, every image's in the sidecar.
    own = json.loads((rectified["heic"] / "portrait.intrinsics.json").read_text())
    mh, mw = cv2.imread(str(rectified["heic"] / "portrait.matte.png"), cv2.IMREAD_UNCHANGED).shape
    assert (own["matte"]["width"], own["matte"]["height"]) == (mw, mh)
    k, kd = own["matte"]["intrinsic_matrix"], own["depth"]["intrinsic_matrix"]
    assert k[0] == pytest.approx(kd[0] * mw / own["depth"]["width"], rel=1e-12)
    assert k[7] == pytest.approx(kd[7] * mh / own["depth"]["height"], rel=1e-12)


# -------------------------------------------------------------------- what users are told

def test_info_says_kind_accuracy_source(files, rgbd_bin):
    directory, _ = files
    entry = info_json(rgbd_bin, directory / "portrait.heic")
    depth = entry["depth"]
    assert depth["kind"] == "disparity" and depth["accuracy"] == "relative" and depth["origin"] == "portrait_xmp"
    assert depth["portrait"]["stored_format"] == "L008" and depth["portrait"]["native_format"] == "hdis"
    assert depth["portrait"]["float_range"] == [0.5, 1.0]
    assert depth["meters"]["min"] == 1.0 and depth["meters"]["max"] == 2.0
    text = run(rgbd_bin, "info", directory / "portrait.jpg").stdout
    assert "relative" in text and "scale (meters) is not guaranteed" in text
    # A JSON capture: the tables it uses are listed too, and its origin.
    sample = info_json(rgbd_bin, REPO / "Examples" / "sample" / "shot.json")
    assert len(sample["lens_distortion_lookup_table"]) == sample["lookup_table"]["count"]
    assert sample["depth"]["origin"] == "json" and sample["depth"]["accuracy"] is None


def test_relative_accuracy_in_the_sidecar_and_once_in_cloud_output(files, rectified, rgbd_bin, tmp_path):
    directory, _ = files
    sidecar = json.loads((rectified["heic"] / "portrait.intrinsics.json").read_text())
    assert sidecar["depth_accuracy"] == "relative"
    assert "not guaranteed" in sidecar["depth_accuracy_note"]
    (tmp_path / "second.jpg").write_bytes((directory / "portrait.jpg").read_bytes())
    result = run(rgbd_bin, "cloud", directory / "portrait.heic", tmp_path / "second.jpg", "-o", tmp_path / "clouds")
    assert result.stderr.count("Accuracy = relative") == 1, result.stderr
    for name in ("portrait.ply", "second.ply"):
        header = (tmp_path / "clouds" / name).read_bytes().split(b"end_header")[0]
        assert b"Accuracy = relative" in header


def test_photo_without_depth_is_one_line_and_the_batch_goes_on(files, rgbd_bin, tmp_path):
    directory, scene = files
    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / "IMG_0001.HEIC").write_bytes((directory / "portrait.heic").read_bytes())
    (batch / "plain.heic").write_bytes(portrait_files.encode_heic(scene.color(), False))
    (batch / "plain2.jpg").write_bytes(portrait_files.encode_jpeg(scene.color(), 90))
    result = run(rgbd_bin, "rectify", batch, "-o", tmp_path / "out", "-q", check=False)
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if "holds no depth image" in line]
    assert len(lines) == 2, result.stderr
    assert any(line.endswith("plain.heic: holds no depth image") for line in lines)
    assert any(line.endswith("plain2.jpg: holds no depth image") for line in lines)
    assert (tmp_path / "out" / "IMG_0001.depth.tiff").is_file()
    assert not (tmp_path / "out" / "plain.color.png").exists()


def test_failed_rectify_creates_no_output_directory(files, rgbd_bin, tmp_path):
    """A HEIC without depth, alone: exit status 1 and no (empty) output directory."""
    _, scene = files
    plain = tmp_path / "plain.heic"
    plain.write_bytes(portrait_files.encode_heic(scene.color(), False))
    out = tmp_path / "fresh" / "out"
    result = run(rgbd_bin, "rectify", plain, "-o", out, "-q", check=False)
    assert result.returncode == 1
    assert any(line.endswith("plain.heic: holds no depth image") for line in result.stderr.splitlines()), result.stderr
    assert not (tmp_path / "fresh").exists()


def test_broken_depth_metadata_is_one_clear_line(files, rgbd_bin, tmp_path):
    _, scene = files
    xmp = scene.xmp().replace(b"IntrinsicMatrix>", b"IntrinsicMatrixX>")
    broken = tmp_path / "broken.heic"
    broken.write_bytes(portrait_files.compose_heic(scene.color(), scene.depth_stored(), xmp))
    result = run(rgbd_bin, "rectify", broken, "-o", tmp_path / "out", check=False)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if "error" in line and "broken.heic" in line]
    assert len(errors) == 1 and "IntrinsicMatrix: missing" in errors[0], result.stderr
    assert not (tmp_path / "out").exists()


# -------------------------------------------------------------------------------- Python

def test_python_loads_the_photo_alone(files, rectified):
    import rgbd
    directory, scene = files
    stored = scene.depth_stored()
    for name in ("portrait.heic", "portrait.jpg"):
        capture = rgbd.load_capture(directory / name)
        assert capture.color_size == (scene.width, scene.height)
        assert capture.reference_size == (scene.width, scene.height)
        np.testing.assert_array_max_ulp(capture.lookup_table, scene.table, maxulp=1)
        k = capture.reference_intrinsics
        assert (k.fx, k.fy, k.cx, k.cy) == (scene.fx, scene.fy, scene.cx, scene.cy)
        assert capture.distortion_center == scene.center
        if name.endswith("heic"):
            assert np.array_equal(capture.depth, scene.depth_meters(stored))
            expected = tifffile.imread(rectified["heic"] / "portrait.depth.tiff")
            assert np.array_equal(capture.rectified_depth(), expected, equal_nan=True)
    data = (directory / "portrait.heic").read_bytes()
    from_bytes = rgbd.load_photo_bytes(data, name="IMG_1234.HEIC")
    assert np.array_equal(from_bytes.depth, scene.depth_meters(stored))
    with pytest.raises(rgbd.RGBDError, match="plain.heic: holds no depth image"):
        rgbd.load_photo_bytes(portrait_files.encode_heic(scene.color(), False), name="plain.heic")


def test_directory_mixes_captures_and_photos(files, rgbd_bin, tmp_path):
    import shutil
    directory, _ = files
    batch = tmp_path / "mixed"
    batch.mkdir()
    for name in ("shot.json", "shot.jpg"):
        shutil.copy(REPO / "Examples" / "sample" / name, batch / name)
    shutil.copy(directory / "portrait.heic", batch / "IMG_0002.heic")
    result = run(rgbd_bin, "rectify", batch, "-o", tmp_path / "out")
    assert "2 of 2 captures done" in result.stderr
    assert (tmp_path / "out" / "shot.color.png").is_file() and (tmp_path / "out" / "IMG_0002.matte.png").is_file()
    # A photo with --image is refused by name.
    refused = run(rgbd_bin, "rectify", batch / "IMG_0002.heic", "--image", batch / "shot.jpg", "-o", tmp_path / "x",
                  check=False)
    assert refused.returncode == 1 and "IMG_0002.heic: is a photo, not a capture JSON" in refused.stderr


# ------------------------------------------------------------- real depth metadata (XMP)

def test_info_on_a_real_truedepth_packet(rgbd_bin, tmp_path):
    """The depth XMP of a real iPhone 14 TrueDepth HEIC (Fixtures/real-xmp, MIT), in a
    photo composed here at a quarter of its size (579x772, depth 120x160): rgbd info shows
    its ExtrinsicMatrix (a quarter turn, as the file is stored upright) and warns about
    its fx/fy (0.767) and its distortion center 352 px from the principal point."""
    xmp = (REPO / "Tests/RGBDKitTests/Fixtures/real-xmp/heic_depth_data.xmp").read_bytes()
    rng = np.random.default_rng(7)
    color = rng.integers(0, 256, (772, 579, 3), dtype=np.uint8)
    depth = np.full((160, 120), 128, dtype=np.uint8)
    photo = tmp_path / "truedepth.heic"
    photo.write_bytes(portrait_files.compose_heic(color, depth, xmp))
    entry = info_json(rgbd_bin, photo)
    portrait = entry["depth"]["portrait"]
    assert portrait["extrinsic_matrix"] == [0, -1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0]
    assert entry["depth"]["accuracy"] == "absolute"
    assert entry["reference"] == {"width": 2316, "height": 3088}
    k = entry["calibration"]["intrinsics"]
    center = entry["calibration"]["distortion_center"]
    offset = np.hypot(center[0] - k["cx"], center[1] - k["cy"])
    assert abs(k["fx"] / k["fy"] - 0.767196) < 1e-6 and abs(offset - 352) < 1e-3
    warnings = entry["warnings"]
    assert len(warnings) == 2, warnings
    assert "fx/fy is 0.767 " in warnings[0] and "352 px from the principal point" in warnings[1], warnings
    text = run(rgbd_bin, "info", photo).stdout
    assert "extrinsic      rotation [0 1 0; -1 0 0; 0 0 1] (90° about the optical axis), translation 0 0 0" in text, text
    # The zero lens: the round trip is exact, every point measured.
    assert entry["inverse_round_trip"]["beyond_table"] == 0 and entry["inverse_round_trip"]["max"] < 1e-9
