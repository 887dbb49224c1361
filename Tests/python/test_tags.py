"""AprilTags from Python (Capture.tags, rgbd.register) against the real library.

Captures come from the project's generator (rgbd-synth capture --tags, beside the rgbd
binary), whose truth file lists each tag's true pose and corners: the tags found must be
those, at those poses; registration of a capture with a copy of itself must give the
same pose twice; depth written 1.1 times too far must be corrected by a factor 1/1.1.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

import rgbd


def make_capture(synth, directory, name, depth_scale=1.0):
    subprocess.run([str(synth), "capture", "-o", str(directory), "--name", name, "--color", "1344x1008",
                    "--depth", "512x384", "--quality", "92", "--tags", "3", "--depth-noise", "0.002",
                    "--depth-scale", str(depth_scale)], check=True, capture_output=True)
    return directory / f"{name}.json"


def test_tags_match_the_truth(synth, tmp_path):
    path = make_capture(synth, tmp_path, "tags")
    truth = json.loads((tmp_path / "tags.truth.json").read_text())
    k = truth["color_intrinsics"]
    with rgbd.load_capture(path) as cap:
        tags = cap.tags(size=0.16)
        assert [t.id for t in tags] == [t["id"] for t in truth["tags"]]
        for tag, true in zip(tags, truth["tags"]):
            pose = np.array(true["tag_to_camera"]).reshape(4, 4)
            assert np.linalg.norm(tag.tag_to_camera[:3, 3] - pose[:3, 3]) < 0.005
            corners = np.array(true["corners_camera"])
            projected = np.stack([k["fx"] * corners[:, 0] / corners[:, 2] + k["cx"],
                                  k["fy"] * corners[:, 1] / corners[:, 2] + k["cy"]], axis=1)
            assert np.abs(tag.corners - projected).max() < 0.5
            assert abs(tag.depth_scale - 1) < 0.01 and not tag.duplicate_id
        with pytest.raises(ValueError):
            cap.tags(family="tag99")


def test_register_and_metric_scale(synth, tmp_path):
    a = make_capture(synth, tmp_path, "a", depth_scale=1.1)
    shutil.copy(tmp_path / "a.jpg", tmp_path / "b.jpg")
    shutil.copy(a, tmp_path / "b.json")
    scene = rgbd.register([a, tmp_path / "b.json"], tag_size=0.16, output=tmp_path / "out", metric_from_tags=True)
    with scene:
        assert len(scene) == 2
        p0, p1 = scene.pose(0), scene.pose(1)
        assert np.abs(p0 - p1).max() < 1e-9
    data = json.loads((tmp_path / "out" / "scene.json").read_text())
    for frame in data["frames"]:
        assert abs(frame["depth_factor"] * 1.1 - 1) < 0.005
    assert data["origin_tag"] == 0
    with pytest.raises(rgbd.RGBDError):
        rgbd.register([a, tmp_path / "b.json"], tag_size=0.16, output=tmp_path / "none", origin_tag=40)


def test_register_a_multi_view_set(synth, tmp_path):
    """rgbd-synth tag-set: tags fixed on a wall, five cameras 1-4 m away; rgbd.register's
    relative poses against the truth file (median within 3 mm and 0.2 degrees), and the
    report's residual: a number where a tag can be left out, null for the capture that one
    tag places."""
    subprocess.run([str(synth), "tag-set", "-o", str(tmp_path), "--seed", "23"], check=True, capture_output=True)
    truth = json.loads((tmp_path / "cam.set.truth.json").read_text())
    paths = [tmp_path / c["capture"] for c in truth["cameras"]]
    with rgbd.register(paths, tag_size=0.16, output=tmp_path / "out") as scene:
        assert len(scene) == len(paths)
        estimated = [scene.pose(i) for i in range(len(scene))]
    real = [np.array(c["camera_to_origin_tag"]).reshape(4, 4) for c in truth["cameras"]]
    mm, deg = [], []
    for a in range(len(real)):
        for b in range(a + 1, len(real)):
            e = np.linalg.inv(estimated[a]) @ estimated[b]
            t = np.linalg.inv(real[a]) @ real[b]
            mm.append(np.linalg.norm(e[:3, 3] - t[:3, 3]) * 1000)
            r = e[:3, :3].T @ t[:3, :3]
            deg.append(np.degrees(np.arccos(np.clip((np.trace(r) - 1) / 2, -1, 1))))
    assert np.median(mm) <= 3 and np.median(deg) <= 0.2, (mm, deg)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    for entry in report["captures"]:
        if len(entry["tags_used"]) == 1:
            assert entry["residual_mm"] is None and "one tag" in entry["residual_note"]
        else:
            assert entry["residual_mm"] > 0 and entry["residual_tags_left_out"] >= 1
