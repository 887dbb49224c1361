"""`rgbd info --json` read by a script: the real rgbd binary, Python's json, numpy.

The values are checked against the sample's own files: its ground truth (intrinsics of
each image), and numpy computations on the capture JSON (depth percentiles, table
range, corner displacement) independent of rgbd.
"""

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "Examples" / "sample"


def info(rgbd_bin, *args):
    run = subprocess.run([str(rgbd_bin), "info", "--json", *map(str, args)], capture_output=True, text=True)
    return run.returncode, json.loads(run.stdout), run.stderr


def test_info_json_matches_the_sample(rgbd_bin):
    status, entries, stderr = info(rgbd_bin, SAMPLE / "shot.json")
    assert status == 0, stderr
    assert isinstance(entries, list) and len(entries) == 1
    e = entries[0]
    assert e["info_version"] == 1 and e["status"] == "ok" and e["schema"] == "canonical"
    capture = json.loads((SAMPLE / "shot.json").read_text())
    truth = json.loads((SAMPLE / "shot.truth.json").read_text())
    calibration = capture["calibration_data"]

    # Sizes and intrinsics scaled to each image: the ground truth's.
    for image, key in (("photo", "color_intrinsics"), ("depth", "depth_intrinsics")):
        t = truth[key]
        assert (e[image]["width"], e[image]["height"]) == (t["width"], t["height"])
        for k in ("fx", "fy", "cx", "cy"):
            assert abs(e[image]["intrinsics"][k] - t[k]) <= 1e-9 * abs(t[k]), (image, k)
    assert e["photo"]["format"] == "JPEG"
    assert e["photo"]["bytes"] == (SAMPLE / "shot.jpg").stat().st_size
    assert [e["reference"]["width"], e["reference"]["height"]] == calibration["intrinsic_matrix_reference_dimensions"]

    # The table's range, from the file.
    table = np.array(calibration["lens_distortion_lookup_table"], dtype=np.float32)
    assert e["lookup_table"]["count"] == len(table)
    assert np.float32(e["lookup_table"]["min"]) == table.min()
    assert np.float32(e["lookup_table"]["max"]) == table.max()

    # Corner displacement, with numpy from the table: |q - p| = r * |mag(r)|.
    w, h = e["photo"]["width"], e["photo"]["height"]
    W, H = calibration["intrinsic_matrix_reference_dimensions"]
    c = np.array(calibration["lens_distortion_center"]) * [w / W, h / H]
    r_max = np.hypot(max(c[0], w - c[0]), max(c[1], h - c[1]))
    radii = np.linspace(0, r_max, len(table))
    corners = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], dtype=float)
    r = np.hypot(*(corners - c).T)
    expected = r * np.abs(np.interp(r, radii, table.astype(float)))
    got = [corner["pixels"] for corner in e["corner_displacement"]["corners"]]
    assert np.allclose(got, expected, rtol=0, atol=1e-6), (got, expected)
    assert abs(e["corner_displacement"]["max"] - expected.max()) < 1e-6

    # Depth: numpy on the JSON's rows (0 = hole), as float32 as rgbd reads them.
    depth = np.array(capture["depth_data"], dtype=np.float32)
    valid = depth[depth > 0]
    d = e["depth"]
    assert d["holes"] == depth.size - valid.size and d["valid_pixels"] == valid.size
    assert abs(d["hole_fraction"] - (depth.size - valid.size) / depth.size) < 1e-15
    assert np.float32(d["meters"]["min"]) == valid.min() and np.float32(d["meters"]["max"]) == valid.max()
    for p in (5, 50, 95):
        assert abs(d["meters"][f"p{p}"] - np.percentile(valid.astype(np.float64), p)) < 1e-9, p
    # The scene: a wall at 3 m behind most of the picture, the box's front at 1.6 m.
    assert abs(d["meters"]["p50"] - 3.0) < 0.002 and abs(d["meters"]["min"] - 1.6) < 0.002
    assert e["warnings"] == []


def test_info_json_marks_failed_inputs(rgbd_bin, tmp_path):
    shutil.copy(SAMPLE / "shot.json", tmp_path / "a.json")
    shutil.copy(SAMPLE / "shot.jpg", tmp_path / "a.jpg")
    (tmp_path / "b.json").write_text('{"calibration_data": {}, "depth_data": [[1.0]]}')
    shutil.copy(SAMPLE / "shot.jpg", tmp_path / "b.jpg")
    status, entries, stderr = info(rgbd_bin, tmp_path, tmp_path / "missing.json")
    assert status == 1
    assert [(Path(x["input"]).name, x["status"]) for x in entries] == [
        ("a.json", "ok"), ("b.json", "failed"), ("missing.json", "failed")]
    assert "b.json" in entries[1]["error"] and "b.json" in stderr


def test_info_reports_depth_source_and_discarded_markers(rgbd_bin, tmp_path):
    """Markers exporters write for "no depth" (-1 for NaN, 9999) are counted and named; the
    depth statistics never include them."""
    capture = json.loads((SAMPLE / "shot.json").read_text())
    rows = capture["depth_data"]
    rows[0][:5] = [-1.0] * 5
    rows[1][:3] = [9999.0] * 3
    (tmp_path / "marked.json").write_text(json.dumps(capture))
    shutil.copy(SAMPLE / "shot.jpg", tmp_path / "marked.jpg")
    status, entries, stderr = info(rgbd_bin, tmp_path / "marked.json")
    assert status == 0, stderr
    e = entries[0]
    assert e["depth"]["source"] == "depth_data (rows of meters in the JSON)"
    assert e["depth"]["discarded_sentinels"] == 8
    assert e["depth"]["meters"]["max"] < 10 and e["depth"]["meters"]["min"] > 0
    assert any("5 negative depth pixels" in w and "3 depth pixels beyond 1000 m" in w for w in e["warnings"]), e["warnings"]
