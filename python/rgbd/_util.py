"""Small helpers shared by the modules: paths, pointers, argument checks, cloud options."""

from __future__ import annotations

import ctypes
import math
import operator
import os
from typing import Any, Optional, Tuple, Union

import numpy as np

from . import _lib

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

INT32_MAX = 2**31 - 1

_AXES = {"opencv": _lib.RGBD_AXES_OPENCV, "opengl": _lib.RGBD_AXES_OPENGL}


def encode_path(path: PathLike, what: str = "path") -> bytes:
    """``path`` as the NUL-terminated bytes the library takes (file-system encoding)."""
    try:
        raw = os.fsencode(path)
    except TypeError:
        raise TypeError(f"{what} must be a str, bytes or os.PathLike, not {type(path).__name__}") from None
    if not raw:
        raise ValueError(f"{what} is empty")
    if b"\0" in raw:
        raise ValueError(f"{what} contains a NUL byte: {path!r}")
    return raw


def encode_text(text: str, what: str) -> bytes:
    """``text`` as NUL-terminated UTF-8 bytes."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str, not {type(text).__name__}")
    raw = text.encode("utf-8", errors="surrogateescape")
    if b"\0" in raw:
        raise ValueError(f"{what} contains a NUL character: {text!r}")
    return raw


def as_bytes(data: Any, what: str) -> np.ndarray:
    """A zero-copy uint8 view of a bytes-like object (bytes, bytearray, memoryview, mmap, array)."""
    if isinstance(data, str):
        raise TypeError(f"{what} must be bytes-like, not str (read the file in binary mode)")
    if isinstance(data, np.ndarray):
        if not data.flags.c_contiguous:
            raise ValueError(f"{what} must be a contiguous buffer")
        return data.reshape(-1).view(np.uint8)
    try:
        return np.frombuffer(data, dtype=np.uint8)
    except (TypeError, ValueError, BufferError) as error:
        raise TypeError(f"{what} must be a contiguous bytes-like object: {error}") from None


def pointer(array: Optional[np.ndarray], ctype: Any) -> Any:
    """``array``'s data as a ``ctypes.POINTER(ctype)`` (None for None). No copy."""
    if array is None:
        return None
    return array.ctypes.data_as(ctypes.POINTER(ctype))


def output_array(out: Optional[np.ndarray], shape: Tuple[int, ...], dtype: Any, what: str = "out") -> np.ndarray:
    """``out`` checked to be a writable C-contiguous array of ``shape`` and ``dtype``, or a new one."""
    if out is None:
        return np.empty(shape, dtype=dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{what} must be a numpy.ndarray, not {type(out).__name__}")
    if out.dtype != np.dtype(dtype) or out.shape != tuple(shape):
        raise ValueError(f"{what} must be {np.dtype(dtype)} of shape {tuple(shape)}, not {out.dtype} {out.shape}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"{what} must be C-contiguous and writable")
    return out


def int32(value: Any, what: str, minimum: int = 0) -> int:
    """``value`` as an int within [minimum, INT32_MAX] (no silent truncation in ctypes)."""
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an integer, not bool")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {type(value).__name__}") from None
    if not minimum <= number <= INT32_MAX:
        raise ValueError(f"{what} must be in [{minimum}, {INT32_MAX}], not {number}")
    return number


def real(value: Any, what: str) -> float:
    """``value`` as a Python float (NaN and infinities pass: the library judges them)."""
    if isinstance(value, bool):
        raise TypeError(f"{what} must be a number, not bool")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a real number, not {type(value).__name__}") from None


def pair(value: Any, what: str) -> Tuple[Any, Any]:
    """A 2-sequence ``(a, b)``."""
    try:
        a, b = value
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a pair (x, y) / (width, height), not {value!r}") from None
    return a, b


def cloud_options(
    min_depth: float = 0.0,
    max_depth: float = math.inf,
    stride: int = 1,
    keep_edges: bool = False,
    edge_threshold: float = 0.05,
    normals: bool = False,
    axes: str = "opencv",
    frame: str = "camera",
) -> _lib.RgbdCloudOptions:
    """An ``rgbd_cloud_options`` from Python values (ranges are checked by the library)."""
    if not isinstance(axes, str) or axes.lower() not in _AXES:
        raise ValueError(f"axes must be 'opencv' or 'opengl', not {axes!r}")
    frame_value = frame_constant(frame)
    options = _lib.RgbdCloudOptions()
    options.min_depth = real(min_depth, "min_depth")
    options.max_depth = real(max_depth, "max_depth")
    options.stride = int32(stride, "stride", minimum=-INT32_MAX - 1)
    options.keep_edges = 1 if keep_edges else 0
    options.edge_threshold = real(edge_threshold, "edge_threshold")
    options.normals = 1 if normals else 0
    options.axes = _AXES[axes.lower()]
    options.frame = frame_value
    return options


# rgbd_cloud_options.frame (RGBD_FRAME_*): where points are placed (docs/geo.md).
_FRAMES = {"camera": 0, "level": 1, "enu": 2}


def frame_constant(frame: str) -> int:
    """The ``RGBD_FRAME_*`` value of a ``frame=`` argument (``"camera"``, ``"level"`` or
    ``"enu"``; the library refuses, with its message, a frame the source cannot give, such
    as ``"enu"`` for a scan, which records no position)."""
    if not isinstance(frame, str) or frame.lower() not in _FRAMES:
        raise ValueError(f"frame must be 'camera', 'level' or 'enu', not {frame!r}")
    return _FRAMES[frame.lower()]
