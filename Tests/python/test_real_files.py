"""Other exporters' files through the Python package (ctypes against the real libRGBDKit),
and real scans and a real iPhone video through the rgbd binary and the package.

Each capture here is made at test time from the sample (Examples/sample/shot.json) in
another exporter's layout, with Python's own json, struct and base64 (and OpenCV /
tifffile for depth images), so the expectations come from outside rgbd: every layout
must load with the sample's calibration, depth map and rectified images.

The real files (a Record3D EXR + JPG export, a Stray Scanner scan without its video, an
iPhone HEVC video) are public files kept outside the repository, in ../shared/data beside
it; their tests skip when that folder is absent.
"""

import base64
import json
import shutil
import struct
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest
import tifffile

import rgbd

REPO = Path(__file__).resolve().parents[2]


SAMPLE = REPO / "Examples" / "sample" / "shot.json"


def sample_document(millimeters=False):
    """The sample as a dict; with millimeters, its depths rounded to whole mm (what a PNG holds)."""
    document = json.loads(SAMPLE.read_text())
    if millimeters:
        document["depth_data"] = [[round(v * 1000) / 1000 for v in row] for row in document["depth_data"]]
    return document


def depth_array(document):
    """The document's depth as float32 (NaN where the sample has no depth)."""
    depth = np.array(document["depth_data"], dtype=np.float32)
    depth[~(depth > 0)] = np.nan
    return depth


def b64_floats(values):
    """Base64 of little-endian float32, as Swift's JSONEncoder writes Data."""
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def swift_json(document):
    """JSON text with "/" escaped as "\\/", as Foundation's JSONEncoder writes it."""
    return json.dumps(document, separators=(",", ":")).replace("/", "\\/")


def without_depth(document):
    return {k: v for k, v in document.items() if k != "depth_data"}


def snake_case_flat(document):
    c = document["calibration_data"]
    k = c["intrinsic_matrix"]  # columns
    depth = document["depth_data"]
    return {
        "session_token": "0c1d", "device_attitude": {"roll": 0.0, "pitch": 1.0, "yaw": 2.0},
        "camera_intrinsics": {
            "width": 1920, "height": 1440,
            "intrinsic_matrix": [x for column in k for x in column],
            "intrinsic_matrix_reference_dimensions_width": c["intrinsic_matrix_reference_dimensions"][0],
            "intrinsic_matrix_reference_dimensions_height": c["intrinsic_matrix_reference_dimensions"][1],
            "lens_distortion_center_x": c["lens_distortion_center"][0],
            "lens_distortion_center_y": c["lens_distortion_center"][1],
            "lens_distortion_lookup_table": c["lens_distortion_lookup_table"],
            "inverse_lens_distortion_lookup_table": c["inverse_lens_distortion_lookup_table"],
            "pixel_size_mm": c["pixel_size"],
            "extrinsic_matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0],
        },
        "crop_rect": [0, 0, 1920, 1440], "segmentation_mask": [[0, 1], [1, 0]],
        "depth_width": len(depth[0]), "depth_height": len(depth),
        "depth_map": [v for row in depth for v in row],
    }


def pascal_case_base64(document):
    c = document["calibration_data"]
    k = c["intrinsic_matrix"]
    depth = document["depth_data"]
    return {
        "CalibrationData": {
            "IntrinsicMatrix": [x for column in k for x in column],
            "IntrinsicMatrixReferenceDimensions": {"Width": c["intrinsic_matrix_reference_dimensions"][0],
                                                   "Height": c["intrinsic_matrix_reference_dimensions"][1]},
            "LensDistortionCenter": {"X": c["lens_distortion_center"][0], "Y": c["lens_distortion_center"][1]},
            "LensDistortionLookupTable": b64_floats(c["lens_distortion_lookup_table"]),
            "InverseLensDistortionLookupTable": b64_floats(c["inverse_lens_distortion_lookup_table"]),
            "PixelSize": c["pixel_size"],
        },
        "FaceAnchor": {"Transform": [1, 0, 0, 0]},
        "DepthWidth": len(depth[0]), "DepthHeight": len(depth),
        "DepthData": b64_floats([v for row in depth for v in row]),
    }


def make_capture(directory, text, stem="shot"):
    directory.mkdir(parents=True, exist_ok=True)
    json_path = directory / f"{stem}.json"
    json_path.write_text(text)
    shutil.copy(SAMPLE.with_suffix(".jpg"), directory / f"{stem}.jpg")
    return json_path


def assert_same_capture(capture, reference):
    assert capture.reference_intrinsics == reference.reference_intrinsics
    assert capture.distortion_center == reference.distortion_center
    np.testing.assert_array_equal(capture.lookup_table, reference.lookup_table)
    np.testing.assert_array_equal(capture.inverse_lookup_table, reference.inverse_lookup_table)
    np.testing.assert_array_equal(capture.depth, reference.depth)  # NaN equal to NaN
    np.testing.assert_array_equal(capture.rectified_depth(), reference.rectified_depth())
    np.testing.assert_array_equal(capture.rectified_color(), reference.rectified_color())


@pytest.fixture(scope="module")
def canonical():
    return rgbd.load_capture(SAMPLE)


@pytest.fixture(scope="module")
def canonical_mm(tmp_path_factory):
    directory = tmp_path_factory.mktemp("canonical_mm")
    return rgbd.load_capture(make_capture(directory, json.dumps(sample_document(millimeters=True))))


@pytest.mark.parametrize("layout", [snake_case_flat, pascal_case_base64])
def test_layouts_load_as_the_canonical(layout, canonical, tmp_path):
    document = sample_document()
    text = swift_json(layout(document))
    if layout is pascal_case_base64:
        assert "\\/" in text  # the escaped slashes JSONEncoder writes are in the test data
    capture = rgbd.load_capture(make_capture(tmp_path, text))
    assert_same_capture(capture, canonical)
    # The sample's own values, read by Python: fx, cx, the table, the depth.
    c = document["calibration_data"]
    assert capture.reference_intrinsics.fx == c["intrinsic_matrix"][0][0]
    assert capture.reference_intrinsics.cx == c["intrinsic_matrix"][2][0]
    np.testing.assert_array_equal(capture.lookup_table, np.float32(c["lens_distortion_lookup_table"]))
    np.testing.assert_array_equal(capture.depth, depth_array(document))


def test_layouts_load_from_memory(canonical):
    text = swift_json(pascal_case_base64(sample_document()))
    capture = rgbd.load_capture_bytes(text.encode(), SAMPLE.with_suffix(".jpg").read_bytes(), name="shot")
    assert_same_capture(capture, canonical)


def test_float_tiff_beside_the_json(canonical, tmp_path):
    document = sample_document()
    json_path = make_capture(tmp_path, json.dumps(without_depth(document)))
    tifffile.imwrite(tmp_path / "shot.depth.tiff", depth_array(document))
    assert_same_capture(rgbd.load_capture(json_path), canonical)


def test_png_millimeters_beside_or_named(canonical_mm, tmp_path):
    document = sample_document(millimeters=True)
    millimeters = np.nan_to_num(depth_array(document) * 1000).round().astype(np.uint16)
    beside = make_capture(tmp_path / "beside", json.dumps(without_depth(document)))
    assert cv2.imwrite(str(tmp_path / "beside" / "shot.depth.png"), millimeters)
    assert_same_capture(rgbd.load_capture(beside), canonical_mm)

    named = without_depth(document)
    named["depth_file"] = "frames/depth_000.png"
    path = make_capture(tmp_path / "named", json.dumps(named))
    (tmp_path / "named" / "frames").mkdir()
    assert cv2.imwrite(str(tmp_path / "named" / "frames" / "depth_000.png"), millimeters)
    assert_same_capture(rgbd.load_capture(path), canonical_mm)


def test_depth_in_the_json_wins(canonical, tmp_path):
    path = make_capture(tmp_path, SAMPLE.read_text())
    tifffile.imwrite(tmp_path / "shot.depth.tiff", np.full((192, 256), 7.0, dtype=np.float32))
    assert_same_capture(rgbd.load_capture(path), canonical)


def test_sentinels_are_holes(canonical, tmp_path):
    document = sample_document()
    rows = document["depth_data"]
    for x in range(len(rows[0])):
        rows[100][x] = 9999.0
    rows[101][:20] = [-1.0] * 20
    capture = rgbd.load_capture(make_capture(tmp_path, json.dumps(document)))
    assert np.isnan(capture.depth[100]).all() and np.isnan(capture.depth[101, :20]).all()
    expected = canonical.depth.copy()
    expected[100] = np.nan
    expected[101, :20] = np.nan
    np.testing.assert_array_equal(capture.depth, expected)
    points, _ = capture.point_cloud()
    assert len(points) > 10_000
    assert points[:, 2].max() < 10  # no point at 9999 m


def test_missing_depth_is_a_clear_error(tmp_path):
    path = make_capture(tmp_path, json.dumps(without_depth(sample_document())))
    with pytest.raises(rgbd.RGBDError) as error:
        rgbd.load_capture(path)
    assert "missing depth map" in str(error.value) and "shot.depth.png" in str(error.value)


# ---- Real scans and a real iPhone video (../shared/data; skipped without it) ------------

SHARED = REPO.parent / "shared" / "data"
DOOR = SHARED / "scans" / "record3d-door"
STRAY = SHARED / "scans" / "stray-demo1"
VIDEO = SHARED / "video" / "IMG_3582.mov"


def needs(path):
    return pytest.mark.skipif(not path.exists(), reason=f"{path} absent (real files are kept outside the repository)")


def run_rgbd(rgbd_bin, *arguments):
    result = subprocess.run([str(rgbd_bin), *map(str, arguments)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result


def ply_points(path):
    from plyfile import PlyData
    v = PlyData.read(str(path))["vertex"]
    return np.stack([v["x"], v["y"], v["z"]], axis=1).astype(np.float64)


def dominant_plane(points, tolerance=0.01, tries=1500):
    """The plane holding the most points within `tolerance` (RANSAC, seeded), refined by
    least squares over them: (unit normal, share of the points on it)."""
    rng = np.random.default_rng(7)
    best = None
    for _ in range(tries):
        a, b, c = points[rng.choice(len(points), 3, replace=False)]
        n = np.cross(b - a, c - a)
        if np.linalg.norm(n) < 1e-9:
            continue
        n /= np.linalg.norm(n)
        inliers = np.abs((points - a) @ n) < tolerance
        if best is None or inliers.sum() > best.sum():
            best = inliers
    on = points[best]
    normal = np.linalg.svd(on - on.mean(axis=0), full_matrices=False)[2][2]
    return normal, best.mean()


@needs(DOOR)
def test_real_record3d_export_is_gravity_aligned(rgbd_bin):
    """The real 2023 Record3D export: its metadata (read here) has initPose the identity and
    pose 0 far from it; rgbd info says the world is ARKit's gravity-aligned one and why."""
    metadata = json.loads((DOOR / "metadata.json").read_text())
    assert metadata["initPose"] == [0, 0, 0, 1, 0, 0, 0]
    assert abs(abs(metadata["poses"][0][3]) - 1) > 0.1  # pose 0 turned by far more than nothing
    info = json.loads(run_rgbd(rgbd_bin, "info", "--json", DOOR).stdout)[0]
    assert info["world"] == "gravity_aligned"
    assert "initPose is the identity" in info["world_basis"]
    text = run_rgbd(rgbd_bin, "info", DOOR).stdout
    assert "gravity-aligned (ARKit world" in text and "not gravity-aligned" not in text


@needs(DOOR)
@pytest.mark.parametrize("command", ["cloud", "fuse", "export"])
def test_real_record3d_door_is_vertical_in_the_level_frame(rgbd_bin, tmp_path, command):
    """After --frame level (z up), the door's plane (the dominant plane of the cloud, the
    fused surface's vertices, the export's seed cloud) is vertical: its normal within 2°
    of horizontal. Measured: 0.45° (cloud), 0.39° (fuse), 0.54° (export's seed cloud)."""
    if command == "export":
        run_rgbd(rgbd_bin, "export", DOOR, "--format", "nerfstudio", "--frame", "level", "-o", tmp_path / "out", "-q")
        transforms = json.loads((tmp_path / "out" / "transforms.json").read_text())
        assert transforms["applied_transform"] == [[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0]]
        ply = tmp_path / "out" / transforms["ply_file_path"]
    else:
        ply = tmp_path / "out.ply"
        run_rgbd(rgbd_bin, command, DOOR, "--frame", "level", "-o", ply, "-q")
    points = ply_points(ply)
    assert len(points) > 3000
    normal, share = dominant_plane(points)
    tilt = np.degrees(np.arcsin(abs(normal[2])))
    assert share > 0.3, f"the dominant plane holds only {share:.0%} of the points"
    assert tilt < 2, f"the door's normal is {tilt:.2f} degrees from horizontal"


@needs(STRAY)
def test_real_stray_scan_reports_its_depthless_poses_once(rgbd_bin, tmp_path):
    """The real Stray scan's 4212 poses without a depth file are counted in one warning line
    by info and by cloud (never a line per frame); info --json lists them."""
    rows = (STRAY / "odometry.csv").read_text().splitlines()[1:]
    depth = {int(p.stem) for p in (STRAY / "depth").glob("*.png")}
    expected = sum(1 for row in rows if int(row.split(",")[1]) not in depth)
    assert expected == 4212
    info = run_rgbd(rgbd_bin, "info", STRAY).stdout.splitlines()
    warnings = [line for line in info if line.strip().startswith("warning")]
    assert len([line for line in warnings if "4212" in line]) == 1 and len(warnings) <= 2, warnings
    listed = json.loads(run_rgbd(rgbd_bin, "info", "--json", STRAY).stdout)[0]["skipped_frames"]
    assert len(listed) == 4212 and all(entry["reason"] for entry in listed)
    cloud = run_rgbd(rgbd_bin, "cloud", STRAY, "-o", tmp_path / "stray.ply").stderr.splitlines()
    assert len([line for line in cloud if "4212" in line]) == 1 and len(cloud) <= 3, cloud


@needs(VIDEO)
def test_real_iphone_video_colours_equal_ffmpeg(tmp_path):
    """The real iPhone 15 Pro HEVC video (full range, BT.601 matrix) as a Stray scan's
    rgb.mp4: every frame rgbd decodes equals the ffmpeg command's own rgb24 conversion of
    the file (its colour tags read by ffmpeg; stored orientation, every frame passed
    through) bit for bit; decoded as limited range or BT.709 it would differ."""
    width, height, count = 1920, 1440, 55
    raw = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-noautorotate", "-i", str(VIDEO),
                          "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         check=True, capture_output=True).stdout
    reference = np.frombuffer(raw, dtype=np.uint8).reshape(-1, height, width, 3)
    assert len(reference) == count
    scan = tmp_path / "scan"
    (scan / "depth").mkdir(parents=True)
    (scan / "rgb.mp4").symlink_to(VIDEO)
    (scan / "camera_matrix.csv").write_text("1400.0,0.0,960.0\n0.0,1400.0,720.0\n0.0,0.0,1.0\n")
    lines = ["timestamp, frame, x, y, z, qx, qy, qz, qw"]
    lines += [f"{i / 30:.6f}, {i:06d}, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0" for i in range(count)]
    (scan / "odometry.csv").write_text("\n".join(lines) + "\n")
    checked = [0, 1, 2, 27, 53, 54]
    for i in checked:
        assert cv2.imwrite(str(scan / "depth" / f"{i:06d}.png"), np.full((192, 256), 1000, np.uint16))
    with rgbd.load_scene(scan) as scene:
        assert len(scene) == len(checked) and scene.color_size == (width, height)
        for position, index in enumerate(checked):
            frame = scene[position]
            assert frame.index == index
            np.testing.assert_array_equal(frame.color, reference[index], err_msg=f"frame {index}")
    # The check can tell: ffmpeg's decode as BT.709 limited range is far from it.
    wrong = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-noautorotate", "-i", str(VIDEO), "-frames:v", "1",
                            "-vf", "scale=in_color_matrix=bt709:in_range=tv", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                           check=True, capture_output=True).stdout
    wrong = np.frombuffer(wrong, dtype=np.uint8).reshape(height, width, 3)
    assert np.abs(wrong.astype(int) - reference[0]).max() > 10
