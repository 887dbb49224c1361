"""rgbd.rectify_files and Capture.depth_accuracy: what `rgbd rectify` writes, from Python
through the real library (the C call rgbd_rectify_files), checked against the synthetic
truth: the sample's known intrinsics and wall, a Portrait photo's written accuracy and matte,
an EXIF-turned photo's turned outputs.
"""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import tifffile

import portrait_files
import rgbd

REPO = Path(__file__).resolve().parents[2]

SAMPLE = REPO / "Examples" / "sample" / "shot.json"
TRUTH = json.loads((REPO / "Examples" / "sample" / "shot.truth.json").read_text())


def sidecar(directory, stem="shot"):
    return json.loads((Path(directory) / f"{stem}.intrinsics.json").read_text())


def matrix(entry):
    k = entry["intrinsic_matrix"]
    return entry["width"], entry["height"], k[0], k[4], k[6], k[7]


def test_the_four_files_carry_the_true_intrinsics_and_depth(tmp_path):
    result = rgbd.rectify_files(SAMPLE, tmp_path)
    assert result.warnings == []
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["shot.color.png", "shot.depth.png", "shot.depth.tiff", "shot.intrinsics.json"]
    truth = TRUTH["depth_intrinsics"]
    w, h, fx, fy, cx, cy = matrix(sidecar(tmp_path))
    assert (w, h) == (truth["width"], truth["height"])
    assert np.allclose([fx, fy, cx, cy], [truth["fx"], truth["fy"], truth["cx"], truth["cy"]], atol=1e-9)
    # The wall, z = 3 m, fills the top middle of the depth map.
    meters = tifffile.imread(tmp_path / "shot.depth.tiff")
    assert abs(float(meters[10, w // 2]) - 3.0) < 0.002
    color = cv2.imread(str(tmp_path / "shot.color.png"), cv2.IMREAD_COLOR)
    assert color.shape[:2] == (TRUTH["color_intrinsics"]["height"], TRUTH["color_intrinsics"]["width"])


@pytest.mark.parametrize("align_to", ["depth", "color"])
def test_the_aligned_pair(tmp_path, align_to):
    rgbd.rectify_files(SAMPLE, tmp_path, align_to=align_to)
    entry = sidecar(tmp_path)
    color = cv2.imread(str(tmp_path / "shot.color.png"), cv2.IMREAD_COLOR)
    depth = cv2.imread(str(tmp_path / "shot.depth.png"), cv2.IMREAD_UNCHANGED)
    grid = TRUTH["depth_intrinsics" if align_to == "depth" else "color_intrinsics"]
    assert color.shape[:2] == depth.shape == (grid["height"], grid["width"])
    assert entry["color"] == entry["depth"]
    _, _, fx, fy, cx, cy = matrix(entry)
    assert np.allclose([fx, fy, cx, cy], [grid["fx"], grid["fy"], grid["cx"], grid["cy"]], atol=1e-9)
    assert depth[depth.shape[0] // 20, depth.shape[1] // 2] == 3000


def test_options_are_checked(tmp_path):
    with pytest.raises(ValueError, match="align_to"):
        rgbd.rectify_files(SAMPLE, tmp_path, align_to="both")
    with pytest.raises(rgbd.RGBDError, match="max_blend_step"):
        rgbd.rectify_files(SAMPLE, tmp_path, max_blend_step=2.0)
    with pytest.raises(rgbd.RGBDError) as error:
        rgbd.rectify_files(tmp_path / "missing.json", tmp_path / "out")
    assert "missing.json" in str(error.value)
    assert not (tmp_path / "out").exists()


def test_warnings_are_returned(tmp_path):
    # A depth marker of 9999 m among the sample's values: discarded and reported.
    document = json.loads(SAMPLE.read_text())
    key = next(k for k in ("depth_data", "depth_map", "depth") if k in document)
    rows = document[key]
    rows[0][0] = 9999.0
    (tmp_path / "marked.json").write_text(json.dumps(document))
    (tmp_path / "marked.jpg").write_bytes(SAMPLE.with_suffix(".jpg").read_bytes())
    result = rgbd.rectify_files(tmp_path / "marked.json", tmp_path / "out")
    assert len(result.warnings) == 1 and "marked.json" in result.warnings[0], result.warnings


def test_portrait_accuracy_and_matte(tmp_path):
    portrait_files.write(tmp_path)
    photo = tmp_path / "portrait.heic"
    with rgbd.load_capture(photo) as capture:
        assert capture.depth_accuracy == "relative"
    with rgbd.load_capture(SAMPLE) as capture:
        assert capture.depth_accuracy is None
    out = tmp_path / "out"
    rgbd.rectify_files(photo, out, align_to="depth")
    entry = sidecar(out, "portrait")
    assert entry["depth_accuracy"] == "relative"
    assert entry["depth_quality"] == "high"  # the fixture's XMP says Quality="high"
    matte = cv2.imread(str(out / "portrait.matte.png"), cv2.IMREAD_UNCHANGED)
    depth = cv2.imread(str(out / "portrait.depth.png"), cv2.IMREAD_UNCHANGED)
    assert matte.dtype == np.uint16 and matte.shape == depth.shape
    assert entry["matte"] == entry["depth"]


def test_upright_turns_a_portrait_shot(tmp_path):
    """EXIF 6 (turn 90° clockwise to show): the outputs come out turned, K with them."""
    jpeg = bytearray(SAMPLE.with_suffix(".jpg").read_bytes())
    tiff = b"MM\x00\x2a\x00\x00\x00\x08" + b"\x00\x01" + b"\x01\x12\x00\x03\x00\x00\x00\x01\x00\x06\x00\x00" + b"\x00\x00\x00\x00"
    payload = b"Exif\x00\x00" + tiff
    segment = b"\xff\xe1" + (len(payload) + 2).to_bytes(2, "big") + payload
    (tmp_path / "shot.json").write_bytes(SAMPLE.read_bytes())
    (tmp_path / "shot.jpg").write_bytes(bytes(jpeg[:2]) + segment + bytes(jpeg[2:]))
    stored, upright = tmp_path / "stored", tmp_path / "upright"
    rgbd.rectify_files(tmp_path / "shot.json", stored)
    rgbd.rectify_files(tmp_path / "shot.json", upright, upright=True)
    w, h, fx, fy, cx, cy = matrix(sidecar(stored))
    assert matrix(sidecar(upright)) == (h, w, fy, fx, h - 1 - cy, cx)
    before = tifffile.imread(stored / "shot.depth.tiff")
    after = tifffile.imread(upright / "shot.depth.tiff")
    # One quarter turn clockwise: pixel (x, y) goes to (h - 1 - y, x).
    assert np.array_equal(np.rot90(before, k=-1), after, equal_nan=True)
