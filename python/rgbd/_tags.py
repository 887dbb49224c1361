"""AprilTags: a capture's tags with their poses (docs/markers.md); registering captures by
their tags (:func:`rgbd.register`) opens a scene and lives with scenes (``_scene``)."""

from __future__ import annotations

import ctypes
from typing import Any, List, Optional

from . import _lib
from ._types import Tag

__all__ = ["capture_tags", "family_code", "size_meters"]

_FAMILIES = {"tag36h11": _lib.RGBD_TAG_FAMILY_36H11, "tagStandard41h12": _lib.RGBD_TAG_FAMILY_STANDARD41H12}


def family_code(name: str) -> int:
    """The ``RGBD_TAG_FAMILY_*`` value of a family's name."""
    try:
        return _FAMILIES[name]
    except KeyError:
        raise ValueError(f"family must be one of {', '.join(_FAMILIES)}, not {name!r}") from None


def size_meters(size: Optional[float]) -> float:
    """A tag size for the library: meters, or 0 for None (measured in the depth)."""
    if size is None:
        return 0.0
    size = float(size)
    if not size > 0:
        raise ValueError("size must be a positive number of meters (None: measured in the depth)")
    return size


def capture_tags(handle: Any, family: str, size: Optional[float]) -> List[Tag]:
    """The tags of a capture handle (``rgbd_capture_tags``)."""
    lib = _lib.lib()
    code, tag_size = family_code(family), size_meters(size)
    count = ctypes.c_size_t(0)
    lib.rgbd_capture_tags(handle, code, tag_size, None, 0, ctypes.byref(count))
    if count.value == 0:
        return []
    buffer = (_lib.RgbdTag * count.value)()
    lib.rgbd_capture_tags(handle, code, tag_size, buffer, count.value, ctypes.byref(count))
    return [Tag._from_c(buffer[i]) for i in range(min(count.value, len(buffer)))]
