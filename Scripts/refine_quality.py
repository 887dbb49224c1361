#!/usr/bin/env python3
"""Accuracy of refined poses against a synthetic scan's ground truth (`rgbd-synth scan
--pose-drift` writes NAME.truth.json beside the scan: per frame the true `camera_to_world`,
the `recorded_camera_to_world` the scan's odometry.csv holds, and `pose_error.plain_wall_frames`),
run by Scripts/bench.sh (case refine).

Runs `rgbd refine SCAN -o rgbd.txt -q` (plus the options given after `--`) and
Scripts/baseline_refine.py (Open3D) on the same scan (untimed: the case's other steps time
them), reads both TUM trajectories (matched to the truth's frames by time: seconds since the
first frame, within 0.5 ms), then for the recorded, rgbd's and Open3D's poses:

- ATE: the RMSE of the camera centres after the rigid motion (no scale) that best aligns
  them onto the true ones (Horn's closed form, as `evo_ape tum truth est -a`);
- RPE over 1 s (--gap frames, 60 at 60 fps), translation: the RMSE of |Δ_true⁻¹·Δ_est|'s
  translation, Δ the motion from frame i to i + gap (`evo_rpe --delta 60 --delta_unit f`);
- wall: the largest aligned centre error over the frames that face the plain wall.

What users see: the scan fused (`rgbd fuse`, its defaults) with the true poses (written as a
TUM file at the refined trajectory's times), the recorded ones and rgbd's; each mesh's median
distance to the room's exact surfaces (Tests/python/synthetic_room.py); `mesh_*_mm` lines, and
`{recorded,rgbd}_mesh_excess_mm`: that median less the true poses' mesh's (the issue's goal: rgbd's
within 1 mm).

When the `evo` package is installed, the ATE is also computed by evo (its `align` and
`APE`, translation part) as a cross-check: `*_ate_evo_mm` lines.

Prints `timing NAME VALUE ms` lines on stderr (the harness's in-process metrics; the values
are millimeters, not milliseconds): {recorded,rgbd,open3d}_{ate,rpe,wall}_mm (and
_ate_evo_mm), and a readable summary.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from baseline_refine import matrix_quaternion, quaternion_matrix  # noqa: E402
# The room's exact surfaces: the tests' helper, shared (as Scripts/fuse_quality.py does).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Tests", "python"))
from synthetic_room import room_distance  # noqa: E402


def mesh_median(rgbd, scan, out, name, truth, poses=None):
    """Median distance (m) of the vertices of `rgbd fuse SCAN [--poses POSES]` to the room."""
    from plyfile import PlyData
    path = os.path.join(out, f"mesh-{name}.ply")
    subprocess.run([rgbd, "fuse", scan, "-o", path, "-q", *(["--poses", poses] if poses else [])], check=True)
    v = PlyData.read(path)["vertex"]
    return float(np.median(room_distance(np.stack([v["x"], v["y"], v["z"]], axis=1).astype(np.float64), truth)))


def read_tum(path):
    """(seconds, (N, 4, 4) camera-to-world) of a TUM trajectory file."""
    rows = [line.split() for line in open(path) if line.strip() and not line.startswith("#")]
    values = np.array(rows, dtype=np.float64)
    poses = np.tile(np.eye(4), (len(values), 1, 1))
    for pose, v in zip(poses, values):
        pose[:3, :3] = quaternion_matrix(*v[4:8])
        pose[:3, 3] = v[1:4]
    return values[:, 0], poses


def matched(truth_seconds, seconds, poses, path):
    """The poses at the truth's frame times (every truth frame must have one)."""
    index = np.searchsorted(seconds, truth_seconds)
    out = []
    for t, i in zip(truth_seconds, index):
        best = min((j for j in (i - 1, i) if 0 <= j < len(seconds)), key=lambda j: abs(seconds[j] - t))
        if abs(seconds[best] - t) > 0.0005:
            sys.exit(f"{path}: no pose at {t:.6f} s")
        out.append(poses[best])
    return np.array(out)


def align(estimate, truth):
    """estimate (N, 3) moved by the rigid motion minimising the squared distances to truth (Umeyama, no scale)."""
    ce, ct = estimate.mean(axis=0), truth.mean(axis=0)
    u, _, vt = np.linalg.svd((truth - ct).T @ (estimate - ce))
    s = np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))])
    r = u @ s @ vt
    return (estimate - ce) @ r.T + ct


def metrics(poses, truth, gap, wall):
    errors = np.linalg.norm(align(poses[:, :3, 3], truth[:, :3, 3]) - truth[:, :3, 3], axis=1)
    rpe = []
    for i in range(len(poses) - gap):
        e = np.linalg.inv(poses[i]) @ poses[i + gap]
        t = np.linalg.inv(truth[i]) @ truth[i + gap]
        rpe.append(np.linalg.norm((np.linalg.inv(t) @ e)[:3, 3]))
    return {"ate": float(np.sqrt(np.mean(errors ** 2))), "rpe": float(np.sqrt(np.mean(np.square(rpe)))),
            "wall": float(errors[wall].max()) if len(wall) else float("nan")}


def evo_ate(poses, truth, seconds):
    """The ATE as evo computes it (align without scale, APE of the translation, RMSE), or None."""
    try:
        from evo.core import metrics as evo_metrics
        from evo.core.trajectory import PoseTrajectory3D
    except ImportError:
        return None
    reference = PoseTrajectory3D(poses_se3=list(truth), timestamps=seconds)
    estimate = PoseTrajectory3D(poses_se3=list(poses), timestamps=seconds)
    estimate.align(reference, correct_scale=False)
    ape = evo_metrics.APE(evo_metrics.PoseRelation.translation_part)
    ape.process_data((reference, estimate))
    return float(ape.get_statistic(evo_metrics.StatisticsType.rmse))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scan")
    parser.add_argument("--rgbd", required=True, help="the rgbd executable")
    parser.add_argument("--out", required=True, help="a scratch folder")
    parser.add_argument("--gap", type=int, default=60, help="RPE's frame gap (1 s at 60 fps)")
    argv = sys.argv[1:]
    rgbd_options = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    scan = args.scan.rstrip("/")
    truth = json.load(open(scan + ".truth.json"))
    os.makedirs(args.out, exist_ok=True)
    paths = {"rgbd": os.path.join(args.out, "rgbd.txt"), "open3d": os.path.join(args.out, "open3d.txt")}
    subprocess.run([args.rgbd, "refine", scan, "-o", paths["rgbd"], "-q", *rgbd_options], check=True)
    subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "baseline_refine.py"),
                    scan, "-o", paths["open3d"]], check=True)

    frames = truth["frames"]
    seconds = np.array([f["timestamp"] for f in frames], dtype=np.float64)
    seconds -= seconds[0]
    true_poses = np.array([f["camera_to_world"] for f in frames], dtype=np.float64)
    trajectories = {"recorded": np.array([f["recorded_camera_to_world"] for f in frames], dtype=np.float64)}
    for name, path in paths.items():
        trajectories[name] = matched(seconds, *read_tum(path), path)
    wall = np.array(truth["pose_error"]["plain_wall_frames"], dtype=int)
    summary = []
    for name, poses in trajectories.items():
        m = metrics(poses, true_poses, args.gap, wall)
        for key in ("ate", "rpe", "wall"):
            print(f"timing {name}_{key}_mm {1000 * m[key]:.4f} ms", file=sys.stderr)
        check = evo_ate(poses, true_poses, seconds)
        if check is not None:
            print(f"timing {name}_ate_evo_mm {1000 * check:.4f} ms", file=sys.stderr)
        evo_text = f" (evo {1000 * check:.2f})" if check is not None else ""
        summary.append(f"{name}: ATE {1000 * m['ate']:.2f} mm{evo_text}"
                       + f", RPE(1 s) {1000 * m['rpe']:.2f} mm, wall worst {1000 * m['wall']:.2f} mm")
    print(f"{len(frames)} frames, {len(wall)} facing the plain wall; " + "; ".join(summary), file=sys.stderr)

    # The true poses at the refined trajectory's own times, so that `--poses` matches them.
    tum_seconds, _ = read_tum(paths["rgbd"])
    true_tum = os.path.join(args.out, "truth.txt")
    with open(true_tum, "w") as f:
        f.write("# timestamp tx ty tz qx qy qz qw: the scan's true camera-to-world poses\n")
        for t in tum_seconds:
            pose = true_poses[int(np.argmin(np.abs(seconds - (t - tum_seconds[0]))))]
            f.write(f"{t:.6f} " + " ".join(f"{x:.9f}" for x in [*pose[:3, 3], *matrix_quaternion(pose[:3, :3])]) + "\n")
    medians = {"true": mesh_median(args.rgbd, scan, args.out, "true", truth, true_tum),
               "recorded": mesh_median(args.rgbd, scan, args.out, "recorded", truth),
               "rgbd": mesh_median(args.rgbd, scan, args.out, "rgbd", truth, paths["rgbd"])}
    for name, value in medians.items():
        print(f"timing mesh_{name}_mm {1000 * value:.4f} ms", file=sys.stderr)
    for name in ("recorded", "rgbd"):
        print(f"timing {name}_mesh_excess_mm {1000 * (medians[name] - medians['true']):.4f} ms", file=sys.stderr)
    print("fused mesh's median distance to the true surfaces: "
          + ", ".join(f"{name} poses {1000 * value:.2f} mm" for name, value in medians.items()), file=sys.stderr)


if __name__ == "__main__":
    main()
