"""The ground truth of the synthetic room `rgbd-synth scan` renders (NAME.truth.json beside a
scan): exact distances to its surfaces, for the tests (test_scenes.py) and the fusion
quality benchmark (Scripts/fuse_quality.py)."""

import numpy as np


def room_distance(points, truth):
    """Exact distance of (N, 3) points in the layout's world to the room's surfaces."""
    w = np.array(truth["world_from_room"], dtype=np.float64)
    # Room coordinates: inverse of world_from_room.
    r, t = w[:3, :3], w[:3, 3]
    p = (points - t) @ r   # = r.T @ (p - t) per row
    room = truth["room"]
    lo, hi = np.array(room["min_corner"]), np.array(room["max_corner"])

    def box_surface(q, half):
        d = np.abs(q) - half
        outside = np.linalg.norm(np.maximum(d, 0), axis=1)
        inside = np.minimum(d.max(axis=1), 0)
        return np.abs(outside + inside)

    best = box_surface(p - (lo + hi) / 2, (hi - lo) / 2)
    for box in room["boxes"]:
        c, s = np.cos(box["yaw"]), np.sin(box["yaw"])
        v = p - np.array(box["center"])
        local = np.stack([c * v[:, 0] - s * v[:, 2], v[:, 1], s * v[:, 0] + c * v[:, 2]], axis=1)
        best = np.minimum(best, box_surface(local, np.array(box["half_size"])))
    for sphere in room.get("spheres", []):
        best = np.minimum(best, np.abs(np.linalg.norm(p - np.array(sphere["center"]), axis=1) - sphere["radius"]))
    return best
