"""Place, heading and gravity from Python (cap.location, cap.heading, cap.gravity and
point_cloud(frame=...)) against the real library, checked by geometry.

Captures come from the project's generator (rgbd-synth capture --tilt --geotag, beside the
rgbd binary): a camera tilted by a known pitch and roll in a level scene (a floor 1.2 m
below the camera), with EXIF saying where it was and which way its scene faced.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "python"))
import rgbd  # noqa: E402

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
        with pytest.raises(rgbd.RGBDError, match="needs gravity"):
            plain.point_cloud(frame="level")
