"""Place, heading and gravity from Python (cap.location, cap.heading, cap.gravity and
point_cloud(frame=...)) against the real library, checked by geometry.

Captures come from the project's generator (rgbd-synth capture --tilt --geotag, beside the
rgbd binary): a camera tilted by a known pitch and roll in a level scene (a floor 1.2 m
below the camera), with EXIF saying where it was and which way its scene faced.
"""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

import rgbd
from conftest import REPO


PITCH_DOWN, ROLL = 21.0, -8.0
LAT, LON, ALT, HEADING = 51.4778, -0.0015, 46.0, 75.0


@pytest.fixture(scope="module")
def capture(rgbd_bin, tmp_path_factory):
    synth = Path(rgbd_bin).with_name("rgbd-synth")
    if not synth.is_file():
        pytest.fail(f"rgbd-synth not found beside {rgbd_bin}", pytrace=False)
    out = tmp_path_factory.mktemp("geo")
    subprocess.run([str(synth), "capture", "-o", str(out), "--name", "tilted", "--color", "640x480",
                    "--depth", "160x120", "--tilt", f"{PITCH_DOWN},{ROLL}",
                    "--geotag", f"{LAT},{LON},{ALT},{HEADING}"], check=True, capture_output=True)
    with rgbd.load_capture(str(out / "tilted.json")) as cap:
        yield cap


def test_location_heading_and_gravity(capture):
    location = capture.location
    assert abs(location["latitude"] - LAT) < 1e-9 and abs(location["longitude"] - LON) < 1e-9
    assert location["altitude"] == ALT
    assert capture.heading == {"degrees": HEADING, "north": "true"}
    gravity = capture.gravity
    assert abs(gravity["pitch"] + PITCH_DOWN) < 1e-4
    assert abs(gravity["roll"] - ROLL) < 1e-4
    assert abs(np.linalg.norm(gravity["down"]) - 1) < 1e-12


def test_level_frame_puts_the_floor_level(capture):
    camera, _ = capture.point_cloud()
    level, _ = capture.point_cloud(frame="level")
    assert level.shape == camera.shape
    # Gravity maps to -z: the camera-frame down vector, turned by the same transform as the points.
    down = capture.gravity["down"]
    # The floor: the lowest points of the level cloud, 1.2 m below the camera; fit a plane.
    floor = level[np.abs(level[:, 2] + 1.2) < 0.03]
    assert len(floor) > 300
    a = np.c_[floor[:, 0], floor[:, 1], np.ones(len(floor))]
    coef, *_ = np.linalg.lstsq(a, floor[:, 2], rcond=None)
    normal = np.array([-coef[0], -coef[1], 1.0])
    normal /= np.linalg.norm(normal)
    assert math.degrees(math.acos(normal[2])) < 0.2
    # The same floor points in the camera frame lie on a plane whose normal is -down.
    cam_floor = camera[np.abs(level[:, 2] + 1.2) < 0.03]
    centered = cam_floor - cam_floor.mean(axis=0)
    n = np.linalg.svd(centered)[2][-1]
    assert abs(abs(n @ down) - 1) < 1e-4


def test_enu_frame_turns_level_by_the_heading(capture):
    level, _ = capture.point_cloud(frame="level")
    enu, _ = capture.point_cloud(frame="enu")
    h = math.radians(HEADING)
    # The level frame's forward (y) is the heading; its right (x) is 90° clockwise from it.
    expected = np.c_[math.cos(h) * level[:, 0] + math.sin(h) * level[:, 1],
                     -math.sin(h) * level[:, 0] + math.cos(h) * level[:, 1], level[:, 2]]
    assert np.max(np.abs(enu - expected)) < 1e-4


def test_frame_errors(capture, tmp_path):
    with pytest.raises(ValueError):
        capture.point_cloud(frame="north")
    sample = REPO / "Examples" / "sample" / "shot.json"
    with rgbd.load_capture(str(sample)) as plain:
        assert plain.location is None and plain.gravity is None and plain.heading is None
        with pytest.raises(rgbd.RGBDError, match="needs gravity") as error:
            plain.point_cloud(frame="level")
        # Python's spelling of the setting, never the command line's.
        assert str(error.value).endswith("(frame)") and "--" not in str(error.value), str(error.value)


def test_las_output_reads_back_with_laspy(rgbd_bin, capture, tmp_path):
    """rgbd cloud -o NAME.las: LAS 1.4, point format 7, the same points as the PLY (to the
    0.1 mm scale) and its colors as 16-bit, read by laspy."""
    import laspy
    from plyfile import PlyData

    source = Path(capture.json_path)
    for name in ("out.las", "out.ply"):
        subprocess.run([str(rgbd_bin), "cloud", str(source), "-o", str(tmp_path / name), "--frame", "enu", "-q"],
                       check=True, capture_output=True)
    las = laspy.read(str(tmp_path / "out.las"))
    assert las.header.version.major == 1 and las.header.version.minor == 4
    assert las.header.point_format.id == 7
    ply = PlyData.read(str(tmp_path / "out.ply"))["vertex"]
    xyz = np.c_[ply["x"], ply["y"], ply["z"]].astype(np.float64)
    got = np.c_[las.x, las.y, las.z]
    assert got.shape == xyz.shape
    assert np.max(np.abs(got - xyz)) <= 0.5e-4 + 1e-6
    assert np.array_equal(np.asarray(las.red), np.asarray(ply["red"], dtype=np.uint16) * 257)
    assert np.array_equal(np.asarray(las.blue), np.asarray(ply["blue"], dtype=np.uint16) * 257)
    assert np.all(np.asarray(las.return_number) == 1)


def assert_cloud_in_utm_agrees_with_pyproj(rgbd_bin, source, tmp_path):
    """`rgbd cloud SOURCE --frame enu --crs EPSG:32630` against the same cloud in ENU taken
    to UTM zone 30 by pyproj's own pipeline (inverse topocentric at the photo's position,
    inverse geocentric, UTM): every point within 1 mm, heights the EXIF altitude plus the
    point's up, the file's WKT naming the system. Returns the number of points."""
    import laspy
    import pyproj
    from plyfile import PlyData

    run = subprocess.run([str(rgbd_bin), "cloud", str(source), "-o", str(tmp_path / "utm.las"), "--frame", "enu",
                          "--crs", "EPSG:32630", "-q"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    subprocess.run([str(rgbd_bin), "cloud", str(source), "-o", str(tmp_path / "enu.ply"), "--frame", "enu", "-q"],
                   check=True, capture_output=True)
    las = laspy.read(str(tmp_path / "utm.las"))
    ply = PlyData.read(str(tmp_path / "enu.ply"))["vertex"]
    enu = np.c_[ply["x"], ply["y"], ply["z"]].astype(np.float64)
    pipeline = ("+proj=pipeline +step +inv +proj=topocentric +ellps=WGS84 "
                f"+lat_0={LAT} +lon_0={LON} +h_0={ALT} +step +inv +proj=cart +ellps=WGS84 "
                "+step +proj=utm +zone=30 +ellps=WGS84")
    e, n, _ = pyproj.Transformer.from_pipeline(pipeline).transform(enu[:, 0], enu[:, 1], enu[:, 2])
    got = np.c_[las.x, las.y, las.z]
    assert got.shape == enu.shape
    assert np.max(np.abs(got[:, 0] - e)) < 1e-3
    assert np.max(np.abs(got[:, 1] - n)) < 1e-3
    assert np.max(np.abs(got[:, 2] - (ALT + enu[:, 2]))) < 1e-3
    crs = las.header.parse_crs()
    assert crs is not None and crs.to_epsg() == 32630
    return len(enu)


def test_las_in_utm_agrees_with_pyproj(rgbd_bin, capture, tmp_path):
    """--crs EPSG:32630 (UTM 30N): each point of the ENU cloud, taken to UTM by pyproj's
    own pipeline (inverse topocentric at the photo's position, inverse geocentric, UTM),
    lands within 1 mm of rgbd's LAS coordinates; heights are above mean sea level (the
    EXIF altitude plus the point's up); the file's WKT names the system."""
    source = Path(capture.json_path)
    assert assert_cloud_in_utm_agrees_with_pyproj(rgbd_bin, source, tmp_path) > 0
    # --crs without --frame enu is a usage error.
    bad = subprocess.run([str(rgbd_bin), "cloud", str(source), "-o", str(tmp_path / "x.las"), "--crs", "EPSG:32630"],
                         capture_output=True, text=True)
    assert bad.returncode == 64 and "--frame enu" in bad.stderr


def test_registered_scene_in_utm_agrees_with_pyproj(rgbd_bin, tmp_path):
    """A scene of registered captures placed with --frame enu (by its first photo's GPS and
    heading) is written in UTM with --crs, as a single capture is: each point of its ENU
    cloud, taken to UTM by pyproj's own pipeline, lands within 1 mm of rgbd's LAS
    coordinates, and the file's WKT names the system (--crs was once ignored for scenes)."""
    synth = Path(rgbd_bin).with_name("rgbd-synth")
    for name in ("a", "b"):
        subprocess.run([str(synth), "capture", "-o", str(tmp_path), "--name", name, "--color", "1344x1008",
                        "--depth", "336x252", "--tags", "2", "--geotag", f"{LAT},{LON},{ALT},{HEADING}"],
                       check=True, capture_output=True)
    reg = tmp_path / "reg"
    run = subprocess.run([str(rgbd_bin), "register", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                          "--tag-size", "0.16", "-o", str(reg), "-q"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert assert_cloud_in_utm_agrees_with_pyproj(rgbd_bin, reg, tmp_path) > 1000
