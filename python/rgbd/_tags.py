"""AprilTags: a capture's tags with their poses, and registering captures by their tags
(docs/markers.md)."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

import numpy as np

from . import _lib
from ._errors import check
from ._scene import Scene, load_scene
from ._util import PathLike, encode_path

__all__ = ["Tag", "register"]

_FAMILIES = {"tag36h11": _lib.RGBD_TAG_FAMILY_36H11, "tagStandard41h12": _lib.RGBD_TAG_FAMILY_STANDARD41H12}


def _family(name: str) -> int:
    try:
        return _FAMILIES[name]
    except KeyError:
        raise ValueError(f"family must be one of {', '.join(_FAMILIES)}, not {name!r}") from None


def _size(size: Optional[float]) -> float:
    if size is None:
        return 0.0
    size = float(size)
    if not size > 0:
        raise ValueError("size must be a positive number of meters (None: measured in the depth)")
    return size


@dataclass(frozen=True)
class Tag:
    """One clean AprilTag of a capture, with depth under it.

    ``corners`` (4×2) and ``center`` are rectified color pixels (integer coordinates are
    pixel centres), corners in the tag's order: tag coordinates (−s/2, +s/2), (+s/2, +s/2),
    (+s/2, −s/2), (−s/2, −s/2), tag frame x right, y down, z into the tag.
    ``tag_to_camera`` is the 4×4 pose from corners and depth combined (OpenCV camera axes,
    meters); ``size`` the black square's edge used; ``depth_scale`` the tag's edge in the
    depth over ``size`` (1 when depth and size agree).
    """

    id: int
    duplicate_id: bool
    corners: np.ndarray
    center: np.ndarray
    decision_margin: float
    size: float
    tag_to_camera: np.ndarray
    corner_rms: float
    depth_rms: float
    depth_scale: float

    @classmethod
    def _from_c(cls, t: Any) -> "Tag":
        return cls(id=int(t.id), duplicate_id=bool(t.duplicate_id),
                   corners=np.array(t.corners, dtype=np.float64).reshape(4, 2),
                   center=np.array(t.center, dtype=np.float64), decision_margin=float(t.decision_margin),
                   size=float(t.size), tag_to_camera=np.array(t.tag_to_camera, dtype=np.float64).reshape(4, 4),
                   corner_rms=float(t.corner_rms), depth_rms=float(t.depth_rms), depth_scale=float(t.depth_scale))


def capture_tags(handle: Any, family: str, size: Optional[float]) -> List[Tag]:
    """The tags of a capture handle (``rgbd_capture_tags``)."""
    lib = _lib.lib()
    code, tag_size = _family(family), _size(size)
    count = ctypes.c_size_t(0)
    check(lib.rgbd_capture_tags(handle, code, tag_size, None, 0, ctypes.byref(count)))
    if count.value == 0:
        return []
    buffer = (_lib.RgbdTag * count.value)()
    check(lib.rgbd_capture_tags(handle, code, tag_size, buffer, count.value, ctypes.byref(count)))
    return [Tag._from_c(buffer[i]) for i in range(min(count.value, len(buffer)))]


def register(captures: Sequence[PathLike], tag_size: Optional[float], output: PathLike, *,
             family: str = "tag36h11", origin_tag: Optional[int] = None, metric_from_tags: bool = False) -> Scene:
    """``rgbd register``: places the captures (JSON or Portrait photo paths) in one world by
    the AprilTags they share and writes ``output/scene.json`` and ``output/report.json``.

    Returns the written scene, opened. ``tag_size`` is the black square's edge in meters
    (None: measured in the depth); ``origin_tag`` the world's tag (default: the lowest ID
    seen by two captures); ``metric_from_tags`` rescales each capture's depth by its tags
    first (needs ``tag_size``). Captures that share no tag are left out (see the report).

    Raises:
        RGBDError: nothing could be registered, or the output could not be written.
    """
    paths = [encode_path(p, "captures") for p in captures]
    if not paths:
        raise ValueError("give at least one capture")
    array = (ctypes.c_char_p * len(paths))(*paths)
    origin = -1 if origin_tag is None else int(origin_tag)
    if origin_tag is not None and origin < 0:
        raise ValueError("origin_tag must be a tag ID (0 or more)")
    out = encode_path(output, "output")
    registered = ctypes.c_size_t(0)
    check(_lib.lib().rgbd_register(array, len(paths), _family(family), _size(tag_size), origin,
                                   1 if metric_from_tags else 0, out, ctypes.byref(registered)))
    return load_scene(os.fsdecode(out))
