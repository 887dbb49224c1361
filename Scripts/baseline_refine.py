#!/usr/bin/env python3
"""Baseline of `rgbd refine SCAN`: the pose refinement a Python user writes with Open3D 0.19
(the pattern of Open3D's reconstruction system: odometry, keyframes, loop closures, a pose
graph, `global_optimization`), run by Scripts/bench.sh.

Reads a Stray Scanner scan: odometry.csv (timestamp, frame, x y z, qx qy qz qw:
camera-to-world with OpenCV camera axes, as rgbd reads it: docs/scans.md), camera_matrix.csv
(K at the video's size, read from rgb.mp4's header without decoding; without a video, twice
the principal point) scaled to the depth maps' size, the 16-bit millimeter depth PNGs and
their confidence PNGs (high confidence only, as rgbd refine's default; a frame without a
confidence map uses all its depth), depth up to --max-depth.

1. Odometry: each frame's depth as a point cloud (voxel_down_sample at --voxel, normals
   from up to 20 neighbours within 2.5 voxels, oriented toward the camera); point-to-plane
   ICP (Tukey robust kernel, coarse to fine: correspondences within 3× then 1× --max-corr) of
   each frame onto the last keyframe (every --keyframe frames: frame to keyframe, so that
   ICP's small errors do not add up frame after frame), started from the previous frame's
   pose moved by the recorded relative motion. A pair whose
   ICP fitness is below --min-fitness, or whose point-to-plane normal matrix is degenerate
   (its smallest eigenvalue under --degenerate of the largest: one plain wall lets ICP
   slide; measured here about 1e-5 on the plain-wall frames, 4e-4 to 2e-2 elsewhere), keeps
   the recorded relative motion; so does one whose ICP moved the pose more than --max-move
   meters or --max-turn degrees from where it started (a wrong minimum).
2. A pose graph of the keyframes (the segments between them are Open3D's "fragments":
   their frames keep the odometry poses relative to their keyframe). Odometry edges between
   consecutive keyframes (ICP of one onto the other, information from the clouds);
   loop-closure candidates: keyframe pairs at least --loop-gap keyframes apart whose
   cameras (on the odometry trajectory) are within --loop-distance meters and look within
   --loop-angle degrees of each other; ICP from the odometry's relative pose on the keyframes' clouds merged with
   their neighbours' (--loop-window frames each side, for overlap), accepted when fitness
   >= --loop-fitness, inlier RMSE <= --loop-rmse, the merged cloud is not degenerate (as
   above) and ICP moved the pose less than 5× --max-move and 5× --max-turn from the
   odometry's: uncertain edges.
3. `o3d.pipelines.registration.global_optimization` (GlobalOptimizationLevenbergMarquardt,
   line process pruning of wrong loop edges, node 0 fixed) over the keyframe graph; every
   frame's pose is its odometry pose moved by the keyframes' corrections (optimised pose ×
   odometry pose⁻¹) blended between the keyframes before and after it (slerp and linear),
   so that the trajectory has no step at each keyframe.

Open3D's OpenMP threads are made to sleep when idle (OMP_WAIT_POLICY=PASSIVE unless set):
its default spinning made ICP about 3× slower on this shared 2-core machine.

Writes the TUM trajectory (`timestamp tx ty tz qx qy qz qw`, seconds since the first frame
with depth, camera-to-world, OpenCV camera axes) as rgbd refine does. Deterministic (Open3D's
ICP and the optimisation are; KD-tree ties aside). Prints `timing STAGE MS ms` lines on
stderr with --stages (read, odometry, loops, optimize, write) and a summary.
"""

import argparse
import os
import sys
import time

import cv2
import numpy as np


def quaternion_matrix(qx, qy, qz, qw):
    """Rotation matrix of a Hamilton quaternion given by components."""
    x, y, z, w = qx, qy, qz, qw
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def matrix_quaternion(r):
    """(qx, qy, qz, qw) of a rotation matrix, qw >= 0."""
    t = np.trace(r)
    if t > 0:
        s = 2 * np.sqrt(t + 1)
        q = [(r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, s / 4]
    else:
        i = int(np.argmax(np.diag(r)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2 * np.sqrt(1 + r[i, i] - r[j, j] - r[k, k])
        q = [0.0, 0.0, 0.0, (r[k, j] - r[j, k]) / s]
        q[i], q[j], q[k] = s / 4, (r[j, i] + r[i, j]) / s, (r[k, i] + r[i, k]) / s
    q = np.array(q)
    q /= np.linalg.norm(q)
    return q if q[3] >= 0 else -q


def read_odometry(path):
    """(frame numbers, timestamps or None, c2w poses) of a Stray odometry.csv with a header."""
    with open(path, encoding="utf-8-sig") as f:
        header = [h.strip() for h in f.readline().split(",")]
        rows = [line.split(",") for line in f if line.strip()]
    col = {name: i for i, name in enumerate(header)}
    frames, times, poses = [], [], []
    for r in rows:
        frames.append(int(r[col["frame"]]))
        times.append(float(r[col["timestamp"]]) if "timestamp" in col else None)
        pose = np.eye(4)
        pose[:3, :3] = quaternion_matrix(*(float(r[col[k]]) for k in ("qx", "qy", "qz", "qw")))
        pose[:3, 3] = [float(r[col[k]]) for k in ("x", "y", "z")]
        poses.append(pose)
    return frames, times, poses


def read_scan(scan, min_confidence, max_depth):
    """(timestamps since the first frame with depth, recorded c2w poses, depth K, depth maps in
    meters with unusable pixels 0) of the frames that have depth."""
    numbers, times, poses = read_odometry(os.path.join(scan, "odometry.csv"))
    K = np.loadtxt(os.path.join(scan, "camera_matrix.csv"), delimiter=",")
    video = os.path.join(scan, "rgb.mp4")
    width = height = 0
    if os.path.exists(video):
        capture = cv2.VideoCapture(video)
        width, height = int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)), int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT))
        capture.release()
    if not width:
        width, height = 16 * round(2 * K[0, 2] / 16), 16 * round(2 * K[1, 2] / 16)
    kept_times, kept_poses, depths, k = [], [], [], None
    for n, (frame, pose) in enumerate(zip(numbers, poses)):
        path = os.path.join(scan, "depth", f"{frame:06d}.png")
        if not os.path.exists(path):
            continue
        depth = cv2.imread(path, cv2.IMREAD_UNCHANGED).astype(np.float32) / 1000
        confidence_path = os.path.join(scan, "confidence", f"{frame:06d}.png")
        confidence = cv2.imread(confidence_path, cv2.IMREAD_UNCHANGED) if os.path.exists(confidence_path) else None
        if confidence is not None:
            depth[confidence < min_confidence] = 0
        depth[depth > max_depth] = 0
        if k is None:
            h, w = depth.shape
            sx, sy = w / width, h / height
            k = np.array([[K[0, 0] * sx, 0, K[0, 2] * sx], [0, K[1, 1] * sy, K[1, 2] * sy], [0, 0, 1]])
        kept_times.append(times[n] if times[n] is not None else n / 60.0)
        kept_poses.append(pose)
        depths.append(depth)
    if not depths:
        sys.exit(f"{scan}: no frame with depth")
    t0 = kept_times[0]
    return [t - t0 for t in kept_times], kept_poses, k, depths


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scan")
    parser.add_argument("-o", "--output", required=True, help="TUM trajectory .txt")
    parser.add_argument("--voxel", type=float, default=0.03, help="ICP clouds' voxel, meters")
    parser.add_argument("--max-corr", type=float, default=0.025, help="finest ICP correspondence distance, meters")
    parser.add_argument("--max-depth", type=float, default=5.0)
    parser.add_argument("--min-confidence", type=int, default=2)
    parser.add_argument("--min-fitness", type=float, default=0.3)
    parser.add_argument("--degenerate", type=float, default=3e-3)
    parser.add_argument("--max-move", type=float, default=0.02)
    parser.add_argument("--max-turn", type=float, default=1.0)
    parser.add_argument("--keyframe", type=int, default=10, help="a keyframe every N frames")
    parser.add_argument("--loop-distance", type=float, default=0.75)
    parser.add_argument("--loop-angle", type=float, default=30.0)
    parser.add_argument("--loop-gap", type=int, default=3, help="loop candidates at least this many keyframes apart")
    parser.add_argument("--loop-window", type=int, default=2)
    parser.add_argument("--loop-fitness", type=float, default=0.3)
    parser.add_argument("--loop-rmse", type=float, default=0.015)
    parser.add_argument("--stages", action="store_true")
    args = parser.parse_args()

    # OpenMP threads that sleep when idle: Open3D's default (spinning) is several times
    # slower on a machine whose processors are busy with other work; this is its best.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import open3d as o3d
    reg = o3d.pipelines.registration
    o3d.utility.set_verbosity_level(o3d.utility.VerbosityLevel.Error)

    t0 = time.perf_counter()
    times, recorded, k, depths = read_scan(args.scan.rstrip("/"), args.min_confidence, args.max_depth)
    h, w = depths[0].shape
    intrinsic = o3d.camera.PinholeCameraIntrinsic(w, h, k[0, 0], k[1, 1], k[0, 2], k[1, 2])
    clouds = []
    for depth in depths:
        cloud = o3d.geometry.PointCloud.create_from_depth_image(
            o3d.geometry.Image(depth), intrinsic, depth_scale=1.0, depth_trunc=args.max_depth)
        cloud = cloud.voxel_down_sample(args.voxel)
        cloud.estimate_normals(o3d.geometry.KDTreeSearchParamHybrid(radius=2.5 * args.voxel, max_nn=20))
        cloud.orient_normals_towards_camera_location(np.zeros(3))
        clouds.append(cloud)
    t1 = time.perf_counter()

    estimation = reg.TransformationEstimationPointToPlane(reg.TukeyLoss(k=args.max_corr))
    scales = [(3 * args.max_corr, 15), (args.max_corr, 10)]

    def icp(source, target, init):
        result = None
        for distance, iterations in scales:
            result = reg.registration_icp(source, target, distance, init, estimation,
                                          reg.ICPConvergenceCriteria(max_iteration=iterations))
            init = result.transformation
        info = reg.get_information_matrix_from_point_clouds(source, target, args.max_corr, result.transformation)
        return result, info

    def degenerate(cloud):
        """Whether point-to-plane ICP leaves a direction free: the smallest eigenvalue of
        Σ JᵀJ, J = [p × n, n] (rotation, translation; points in meters) under --degenerate
        of the largest. (Open3D's get_information_matrix_from_point_clouds is point to point:
        it does not see one plain wall as degenerate.)"""
        p, normal = np.asarray(cloud.points), np.asarray(cloud.normals)
        j = np.hstack([np.cross(p, normal), normal])
        eig = np.linalg.eigvalsh(j.T @ j)
        return not eig[-1] > 0 or eig[0] < args.degenerate * eig[-1]

    def far(transformation, init, factor=1):
        """Whether ICP moved the pose more than factor × --max-move meters or --max-turn
        degrees from where it started (a wrong minimum: ARKit's own errors are smaller)."""
        change = np.linalg.inv(init) @ transformation
        angle = np.degrees(np.arccos(np.clip((np.trace(change[:3, :3]) - 1) / 2, -1, 1)))
        return np.linalg.norm(change[:3, 3]) > factor * args.max_move or angle > factor * args.max_turn

    # 1. Odometry, frame to keyframe: each frame is registered onto the last keyframe (frame
    # 0, N, 2N, ...), so that ICP's small per-pair errors do not add up over every frame.
    n = len(clouds)
    odometry = [recorded[0]]
    kept, key = 0, 0
    for i in range(1, n):
        # Started from the previous frame's pose moved by the recorded relative motion.
        predicted = odometry[i - 1] @ np.linalg.inv(recorded[i - 1]) @ recorded[i]
        init = np.linalg.inv(odometry[key]) @ predicted
        result, _ = icp(clouds[i], clouds[key], init)
        if result.fitness < args.min_fitness or degenerate(clouds[i]) or far(result.transformation, init):
            odometry.append(predicted)
            kept += 1
        else:
            odometry.append(odometry[key] @ result.transformation)
        if i % args.keyframe == 0:
            key = i
    t2 = time.perf_counter()

    # 2. Keyframe graph: node k is frame k * N; edges (source s, target t, T_t<-s).
    keys = list(range(0, n, args.keyframe))
    graph = reg.PoseGraph()
    for key in keys:
        graph.nodes.append(reg.PoseGraphNode(odometry[key]))
    for a in range(len(keys) - 1):
        s, t = keys[a], keys[a + 1]
        trans = np.linalg.inv(odometry[t]) @ odometry[s]
        info = reg.get_information_matrix_from_point_clouds(clouds[s], clouds[t], args.max_corr, trans)
        graph.edges.append(reg.PoseGraphEdge(a, a + 1, trans, info, uncertain=False))

    def merged(a):
        """Keyframe a's cloud with its neighbours' (odometry poses), in its camera."""
        key = keys[a]
        cloud = o3d.geometry.PointCloud()
        for i in range(max(0, key - args.loop_window), min(n, key + args.loop_window + 1)):
            cloud += o3d.geometry.PointCloud(clouds[i]).transform(np.linalg.inv(odometry[key]) @ odometry[i])
        return cloud.voxel_down_sample(args.voxel)

    loop_clouds = {}
    candidates = accepted = 0
    for a in range(len(keys)):
        for b in range(a + args.loop_gap, len(keys)):
            pa, pb = odometry[keys[a]], odometry[keys[b]]
            if np.linalg.norm(pa[:3, 3] - pb[:3, 3]) > args.loop_distance \
                    or pa[:3, 2] @ pb[:3, 2] < np.cos(np.radians(args.loop_angle)):
                continue
            candidates += 1
            for c in (a, b):
                if c not in loop_clouds:
                    loop_clouds[c] = merged(c)
            init = np.linalg.inv(pb) @ pa
            result, info = icp(loop_clouds[a], loop_clouds[b], init)
            if result.fitness >= args.loop_fitness and result.inlier_rmse <= args.loop_rmse \
                    and not degenerate(loop_clouds[a]) and not far(result.transformation, init, 5):
                graph.edges.append(reg.PoseGraphEdge(a, b, result.transformation, info, uncertain=True))
                accepted += 1
    t3 = time.perf_counter()

    # 3. Global optimisation, then every frame from its keyframe.
    option = reg.GlobalOptimizationOption(max_correspondence_distance=args.max_corr, edge_prune_threshold=0.25,
                                          preference_loop_closure=1.0, reference_node=0)
    reg.global_optimization(graph, reg.GlobalOptimizationLevenbergMarquardt(),
                            reg.GlobalOptimizationConvergenceCriteria(), option)
    from scipy.spatial.transform import Rotation, Slerp
    corrections = [np.asarray(node.pose) @ np.linalg.inv(odometry[key]) for node, key in zip(graph.nodes, keys)]
    rotations = Slerp(keys, Rotation.from_matrix([c[:3, :3] for c in corrections]))
    refined = []
    for i in range(n):
        # The keyframes' corrections, blended between consecutive keyframes (no step at
        # each keyframe): rotation by slerp, translation linearly.
        a = min(i // args.keyframe, len(keys) - 1)
        b = min(a + 1, len(keys) - 1)
        f = 0.0 if a == b else (i - keys[a]) / (keys[b] - keys[a])
        correction = np.eye(4)
        correction[:3, :3] = rotations(min(i, keys[-1])).as_matrix()
        correction[:3, 3] = (1 - f) * corrections[a][:3, 3] + f * corrections[b][:3, 3]
        refined.append(correction @ odometry[i])
    t4 = time.perf_counter()

    with open(args.output, "w") as f:
        f.write(f"# Open3D {o3d.__version__} pose refinement (Scripts/baseline_refine.py) of {args.scan}\n")
        f.write("# timestamp tx ty tz qx qy qz qw: seconds since the first frame, camera-to-world, "
                "OpenCV camera axes\n")
        for t, pose in zip(times, refined):
            q = matrix_quaternion(pose[:3, :3])
            f.write(f"{t:.6f} {pose[0, 3]:.6f} {pose[1, 3]:.6f} {pose[2, 3]:.6f} "
                    f"{q[0]:.9f} {q[1]:.9f} {q[2]:.9f} {q[3]:.9f}\n")
    t5 = time.perf_counter()
    if args.stages:
        for name, seconds in (("read", t1 - t0), ("odometry", t2 - t1), ("loops", t3 - t2),
                              ("optimize", t4 - t3), ("write", t5 - t4)):
            print(f"timing {name} {1000 * seconds:.1f} ms", file=sys.stderr)
    print(f"{args.output}: {n} frames, {kept} kept the recorded motion (ICP unfit or degenerate), "
          f"{len(keys)} keyframes, {accepted} of {candidates} loop closures accepted, "
          f"{len(graph.edges)} edges after pruning ({t5 - t0:.1f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
