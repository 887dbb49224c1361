"""Functions on arrays: rectifying arbitrary frames, writing any point cloud as PLY."""

from __future__ import annotations

import ctypes
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from . import _lib
from ._util import INT32_MAX, PathLike, encode_path, int32, output_array, pair, pointer, real

__all__ = ["rectify_image", "write_ply"]


def _image_layout(image: np.ndarray) -> Tuple[int, int, int]:
    """``(height, width, channels)`` of an image rgbd can rectify; channels 0 = float32 depth."""
    if image.dtype == np.uint8:
        if image.ndim == 2:
            height, width, channels = image.shape[0], image.shape[1], 1
        elif image.ndim == 3 and image.shape[2] in (1, 3, 4):
            height, width, channels = image.shape
        else:
            raise ValueError(f"a uint8 image must be H×W, H×W×1, H×W×3 or H×W×4, not of shape {image.shape}")
    elif image.dtype == np.float32:
        if image.ndim != 2:
            raise ValueError(f"a float32 depth map must be H×W, not of shape {image.shape}")
        height, width, channels = image.shape[0], image.shape[1], 0
    else:
        hint = ""
        if image.dtype.kind == "f":
            hint = " (convert depth with .astype(numpy.float32))"
        elif image.dtype == np.uint16:
            hint = " (16-bit depth in millimeters: use (image / 1000).astype(numpy.float32), NaN for holes)"
        raise ValueError(f"image must be uint8 (1, 3 or 4 channels) or float32 depth, not {image.dtype}{hint}")
    if not (1 <= width <= INT32_MAX and 1 <= height <= INT32_MAX):
        raise ValueError(f"image of shape {image.shape} is empty or too large")
    return height, width, channels


def lens_struct(reference_size: Sequence[float], distortion_center: Sequence[float],
                lookup_table: Any) -> Tuple[_lib.RgbdLens, np.ndarray]:
    """The C ``rgbd_lens`` for a lens, checked, and the float32 table it points into (keep
    it alive as long as the struct is used)."""
    ref_w, ref_h = pair(reference_size, "reference_size")
    center_x, center_y = pair(distortion_center, "distortion_center")
    table = np.ascontiguousarray(lookup_table, dtype=np.float32)
    if table.ndim != 1:
        raise ValueError(f"lookup_table must be one-dimensional, not of shape {table.shape}")
    lens = _lib.RgbdLens(
        int32(ref_w, "reference_size width", minimum=-INT32_MAX - 1),
        int32(ref_h, "reference_size height", minimum=-INT32_MAX - 1),
        real(center_x, "distortion_center x"),
        real(center_y, "distortion_center y"),
        pointer(table, ctypes.c_float),
        table.size,
    )
    return lens, table


def rectify_image(
    image: np.ndarray,
    reference_size: Sequence[int],
    distortion_center: Sequence[float],
    lookup_table: Any,
    max_relative_step: float = 0.05,
    *,
    out: Optional[np.ndarray] = None,
) -> np.ndarray:
    """Rectifies any frame of a calibrated camera (a video frame, a mask, another depth map).

    Args:
        image: uint8 H×W, H×W×1, H×W×3 or H×W×4 (interpolated bilinearly, black outside the
            input), or float32 H×W depth in meters with NaN = no depth (never blended across
            depth edges). Any memory layout; copied only if not C-contiguous.
        reference_size: ``(width, height)``, ``intrinsic_matrix_reference_dimensions``.
        distortion_center: ``(x, y)``, ``lens_distortion_center`` at the reference size.
        lookup_table: ``lens_distortion_lookup_table`` (at least 2 values).
        max_relative_step: depth only: steps larger than this fraction of the depth are
            edges, never blended (default 0.05; 0 also means the default).
        out: optional array to write into (same shape and dtype as ``image``, C-contiguous,
            not overlapping it).

    The lens is scaled to the image's size. ``rgbd.rectify_image(frame, *cap.lens)`` uses a
    capture's calibration.

    Returns:
        A new array (or ``out``) of the image's shape and dtype.

    Raises:
        ValueError / TypeError: wrong dtype, shape or argument type (checked before the call).
        RGBDError: the library rejected the calibration values.
    """
    if not isinstance(image, np.ndarray):
        image = np.asarray(image)
    height, width, channels = _image_layout(image)
    lens, table = lens_struct(  # table: lens points into it; alive until the call
        reference_size, distortion_center, lookup_table)
    step = real(max_relative_step, "max_relative_step")
    source = np.ascontiguousarray(image)
    result = output_array(out, image.shape, image.dtype)
    if out is not None and np.may_share_memory(result, source):
        raise ValueError("out must not overlap image")
    lib = _lib.lib()
    if channels:
        lib.rgbd_rectify_u8(ctypes.byref(lens), pointer(source, ctypes.c_uint8), width, height, channels,
                            pointer(result, ctypes.c_uint8))
    else:
        lib.rgbd_rectify_f32(ctypes.byref(lens), pointer(source, ctypes.c_float), width, height, step,
                             pointer(result, ctypes.c_float))
    return result


def _vectors(array: Any, what: str) -> np.ndarray:
    """``array`` as C-contiguous (N, 3) float32 (copied only when needed)."""
    array = np.asarray(array)
    if array.ndim != 2 or array.shape[1] != 3:
        raise ValueError(f"{what} must have shape (N, 3), not {array.shape}")
    if array.dtype.kind not in "fiu":
        raise ValueError(f"{what} must be real numbers, not {array.dtype}")
    return np.ascontiguousarray(array, dtype=np.float32)


def write_ply(
    path: PathLike,
    points: Any,
    colors: Optional[Any] = None,
    normals: Optional[Any] = None,
    ascii: bool = False,
) -> None:
    """Writes any point cloud as PLY (binary little-endian, or ASCII), as ``rgbd cloud`` does.

    Args:
        path: the file to write (atomically: temporary name, then rename).
        points: (N, 3) coordinates, written as float32 (float64 input is converted).
        colors: (N, 3) uint8 RGB, or None for white.
        normals: (N, 3) normals written as float32, or None for no normal properties.
        ascii: write ASCII PLY instead of binary.
    """
    raw = encode_path(path)
    points_data = _vectors(points, "points")
    count = points_data.shape[0]
    colors_data = None
    if colors is not None:
        colors_data = np.asarray(colors)
        if colors_data.dtype != np.uint8:
            raise ValueError(f"colors must be uint8 (0-255), not {colors_data.dtype}; for colors in [0, 1] "
                             "use (colors * 255).round().astype(numpy.uint8)")
        if colors_data.shape != (count, 3):
            raise ValueError(f"colors must have shape ({count}, 3) like points, not {colors_data.shape}")
        colors_data = np.ascontiguousarray(colors_data)
    normals_data = None
    if normals is not None:
        normals_data = _vectors(normals, "normals")
        if normals_data.shape[0] != count:
            raise ValueError(f"normals must have shape ({count}, 3) like points, not {normals_data.shape}")
    _lib.lib().rgbd_write_ply(raw, pointer(points_data, ctypes.c_float), pointer(colors_data, ctypes.c_uint8),
                              pointer(normals_data, ctypes.c_float), count, 1 if ascii else 0)


