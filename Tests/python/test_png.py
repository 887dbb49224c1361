"""rgbd's PNGs read by other decoders (issue 15): the color and depth PNGs `rgbd rectify`
writes, at the default effort and with --small-png, decode with Pillow and with OpenCV to
exactly the rectified pixels the library computes (`Capture.rectified_color`, and
`rectified_depth` in millimeters). The sample's color PNG has 16 strips of rows, each
deflated separately and joined into one stream, so a wrong join would show here.
Requirements: Tests/python/requirements.txt; the CLI is $RGBD_BIN, the library as in
test_python_package.py.
"""

import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

import rgbd

REPO = Path(__file__).resolve().parents[2]

SAMPLE = REPO / "Examples" / "sample" / "shot.json"


@pytest.fixture(scope="module")
def expected():
    """(rectified color, rectified depth in meters) from the library."""
    with rgbd.load_capture(SAMPLE) as cap:
        return cap.rectified_color(), cap.rectified_depth()


@pytest.fixture(scope="module", params=["default", "small"])
def outputs(request, rgbd_bin, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"png_{request.param}")
    flags = ["--small-png"] if request.param == "small" else []
    proc = subprocess.run([str(rgbd_bin), "rectify", str(SAMPLE), "-o", str(out), "-q", *flags],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out


def test_color_png_decodes_to_the_rectified_pixels(outputs, expected):
    color, _ = expected
    path = outputs / "shot.color.png"
    with Image.open(path) as image:
        assert image.mode == "RGB"
        pillow = np.asarray(image)
    opencv = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    assert opencv is not None and opencv.dtype == np.uint8
    np.testing.assert_array_equal(pillow, color)
    np.testing.assert_array_equal(cv2.cvtColor(opencv, cv2.COLOR_BGR2RGB), color)


def test_depth_png_decodes_to_the_rectified_millimeters(outputs, expected):
    _, depth = expected
    path = outputs / "shot.depth.png"
    with Image.open(path) as image:
        assert image.mode in ("I;16", "I;16B", "I")
        pillow = np.asarray(image).astype(np.uint16)
    opencv = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    assert opencv is not None and opencv.dtype == np.uint16
    np.testing.assert_array_equal(pillow, opencv)
    # DepthEncoding.millimeters: round(1000·d), halves away from zero (in float32, as
    # rgbd computes it); 0 where there is no depth or it does not fit.
    product = np.nan_to_num(depth, nan=0.0).astype(np.float32) * np.float32(1000)
    whole = np.trunc(product)
    rounded = whole + (product - whole >= 0.5)
    valid = np.isfinite(depth) & (depth > 0) & (rounded >= 1) & (rounded <= 65535)
    millimeters = np.where(valid, rounded, 0).astype(np.uint16)
    np.testing.assert_array_equal(opencv, millimeters)


def test_both_efforts_hold_the_same_pixels(rgbd_bin, tmp_path):
    paths = {}
    for effort, flags in (("default", []), ("small", ["--small-png"])):
        out = tmp_path / effort
        subprocess.run([str(rgbd_bin), "rectify", str(SAMPLE), "-o", str(out), "-q", *flags],
                       check=True, capture_output=True, timeout=300)
        paths[effort] = out
    for name in ("shot.color.png", "shot.depth.png"):
        a = cv2.imread(str(paths["default"] / name), cv2.IMREAD_UNCHANGED)
        b = cv2.imread(str(paths["small"] / name), cv2.IMREAD_UNCHANGED)
        np.testing.assert_array_equal(a, b)
        # The files differ (the small one is not the default under another name).
        assert (paths["default"] / name).read_bytes() != (paths["small"] / name).read_bytes()
