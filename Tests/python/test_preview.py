"""rgbd preview from Python: ``Capture.preview()`` is the CLI's sheet, pixel for pixel, and
its depth panel follows matplotlib's Turbo colormap at the sample's known depths.

The package is imported from <repo>/python, as in test_python_package.py; the library is
found as users find it ($RGBD_LIBRARY, or the repository's build folders).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import cv2
import matplotlib
import numpy as np
import pytest

import rgbd

REPO = Path(__file__).resolve().parents[2]


SAMPLE = REPO / "Examples" / "sample" / "shot.json"


def cli_sheet(rgbd_bin: Path, out: Path, *flags: str) -> np.ndarray:
    subprocess.run([str(rgbd_bin), "preview", str(SAMPLE), "-o", str(out), "-q", *flags], check=True)
    image = cv2.imread(str(out / "shot.preview.png"), cv2.IMREAD_UNCHANGED)
    assert image is not None and image.dtype == np.uint8 and image.ndim == 3
    return image[:, :, ::-1]  # BGR -> RGB


@pytest.mark.parametrize("width, max_depth", [(1200, 4.0), (800, None)])
def test_preview_is_the_cli_sheet(rgbd_bin, tmp_path, width, max_depth):
    flags = ["--width", str(width)] + ([] if max_depth is None else ["--max-depth", str(max_depth)])
    expected = cli_sheet(rgbd_bin, tmp_path, *flags)
    with rgbd.load_capture(SAMPLE) as cap:
        sheet = cap.preview(width=width, max_depth=max_depth)
    assert sheet.dtype == np.uint8 and sheet.shape == expected.shape and sheet.shape[1] == width
    assert np.array_equal(sheet, expected)


def test_upright_preview_is_the_cli_sheet(rgbd_bin, tmp_path):
    """A portrait shot (the sample's photo saved with EXIF orientation 6): ``upright=True``
    gives the CLI's ``--upright`` sheet, pixel for pixel, with tall panels; without it the
    sheet is the stored one, as the CLI's without the flag."""
    from PIL import Image

    shot = tmp_path / "portrait"
    shot.mkdir()
    (shot / "shot.json").write_bytes(SAMPLE.read_bytes())
    with Image.open(SAMPLE.with_suffix(".jpg")) as photo:
        exif = Image.Exif()
        exif[0x0112] = 6  # Orientation: turn 90° clockwise to show
        photo.save(shot / "shot.jpg", quality=95, exif=exif.tobytes())

    def cli(*flags):
        subprocess.run([str(rgbd_bin), "preview", str(shot / "shot.json"), "-o", str(tmp_path / "out"), "-q",
                        "--width", "1000", "--max-depth", "4", *flags], check=True)
        image = cv2.imread(str(tmp_path / "out" / "shot.preview.png"), cv2.IMREAD_UNCHANGED)
        return image[:, :, ::-1]

    with rgbd.load_capture(shot / "shot.json") as cap:
        upright = cap.preview(width=1000, max_depth=4.0, upright=True)
        stored = cap.preview(width=1000, max_depth=4.0)
    assert np.array_equal(upright, cli("--upright"))
    assert np.array_equal(stored, cli())
    assert upright.shape[1] == stored.shape[1] == 1000 and upright.shape[0] > stored.shape[0]


def test_depth_panel_follows_turbo(tmp_path):
    turbo = np.round(matplotlib.colormaps["turbo"](np.linspace(0, 1, 256))[:, :3] * 255).astype(int)
    with rgbd.load_capture(SAMPLE) as cap:
        sheet = cap.preview(width=1600, max_depth=5.0)
        depth = cap.rectified_depth()
    h, w = depth.shape
    # The layout: the depth panel is the third of the top row. Find it as the region whose
    # pixels are Turbo colors: the wall (3 m on a 0-5 m scale: entry 153) fills its top, left to right.
    wall = turbo[round(3.0 / 5.0 * 255)]
    rows, cols = np.nonzero(np.all(sheet.astype(int) == wall, axis=2))
    assert rows.size > 10000, "no wall-colored region"
    top, left = rows.min(), cols.min()
    assert left > sheet.shape[1] * 0.6  # the right column
    # Box front, z = 1.6 m (shot.truth.json) at depth pixel (53, 176): entry round(0.32*255) = 82.
    # The wall spans the panel's width; its height follows the color image's aspect (1344×1008).
    panel_w = cols.max() - left + 1
    panel_h = round(panel_w * 1008 / 1344)
    truth_k = (184.12698412698413, 128.0190476190476, 95.97460317460316)
    u = int(round(truth_k[0] * -0.65 / 1.6 + truth_k[1]))
    v = int(round(truth_k[0] * 0.7 / 1.6 + truth_k[2]))
    assert abs(depth[v, u] - 1.6) < 1e-3
    x = left + int((u + 0.5) * panel_w / w)
    y = top + int((v + 0.5) * panel_h / h)
    got = sheet[y, x].astype(int)
    assert any(np.array_equal(got, turbo[i]) for i in (81, 82, 83)), (got, turbo[82])
