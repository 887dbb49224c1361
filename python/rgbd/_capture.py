"""Captures: loading, the images as captured and rectified, calibration, point clouds."""

from __future__ import annotations

import ctypes
import math
import os
from pathlib import Path
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np

from . import _lib
from ._handle import Handle
from ._tags import capture_tags
from ._types import AlignedPair, CaptureIntrinsics, Intrinsics, Lens
from ._util import PathLike, as_bytes, cloud_options, encode_path, encode_text, output_array, pointer

__all__ = ["Capture", "load_capture", "load_capture_bytes", "load_photo_bytes"]

PointCloud = Union[Tuple[np.ndarray, np.ndarray], Tuple[np.ndarray, np.ndarray, np.ndarray]]

_ALIGNMENTS = {"depth": _lib.RGBD_ALIGN_DEPTH, "color": _lib.RGBD_ALIGN_COLOR}


def _size(function: Any, handle: Any) -> Tuple[int, int]:
    width, height = ctypes.c_int32(), ctypes.c_int32()
    function(handle, ctypes.byref(width), ctypes.byref(height))
    return width.value, height.value


class Capture(Handle):
    """A loaded capture (calibration, depth map, color photo), backed by an ``rgbd_capture``.

    Create one with :func:`load_capture` or :func:`load_capture_bytes`. The capture is
    immutable and safe to use from several threads at once. Its handle is released by
    :meth:`close`, by leaving a ``with`` block, or when the object is garbage-collected.
    A closed capture raises ``ValueError`` on use.

    Sizes are ``(width, height)``; arrays are ``(height, width[, 3])``. Color is RGB uint8,
    depth is float32 meters along the optical axis with NaN where there is no depth.
    """

    def __init__(self, handle: Any, name: str, json_path: Optional[str] = None,
                 image_path: Optional[str] = None) -> None:
        """Wraps ``handle`` (an ``rgbd_capture *`` this object takes ownership of).

        Use :func:`load_capture` / :func:`load_capture_bytes` instead of calling this.
        """
        super().__init__(handle)
        #: A name for messages: the JSON's stem, or the name given to load_capture_bytes.
        self.name = name
        #: The JSON file it was loaded from (None for load_capture_bytes).
        self.json_path = json_path
        #: The image given to load_capture (None: the photo beside the JSON, or from memory).
        self.image_path = image_path
        lib = _lib.lib()
        self._color_size = _size(lib.rgbd_capture_color_size, handle)
        self._depth_size = _size(lib.rgbd_capture_depth_size, handle)
        self._reference_size = _size(lib.rgbd_capture_reference_size, handle)

    # ---- lifetime (rgbd._handle.Handle) ------------------------------------------------------

    _destroy_function = "rgbd_capture_destroy"
    _pickle_message = ("rgbd.Capture cannot be pickled (it wraps a handle of the C library); "
                       "pass the file paths to the worker and load the capture there")

    def _closed_message(self) -> str:
        return f"capture {self.name!r} is closed"

    def __repr__(self) -> str:
        if self._closed:
            return f"<rgbd.Capture {self.name!r} (closed)>"
        (cw, ch), (dw, dh) = self._color_size, self._depth_size
        return f"<rgbd.Capture {self.name!r} color {cw}×{ch} depth {dw}×{dh}>"

    # ---- sizes and calibration -----------------------------------------------------------

    @property
    def color_size(self) -> Tuple[int, int]:
        """``(width, height)`` of the color image (as captured and rectified)."""
        return self._color_size

    @property
    def depth_size(self) -> Tuple[int, int]:
        """``(width, height)`` of the depth map (as captured and rectified)."""
        return self._depth_size

    @property
    def reference_size(self) -> Tuple[int, int]:
        """``(width, height)`` the calibration refers to (``intrinsic_matrix_reference_dimensions``)."""
        return self._reference_size

    def _intrinsics(self, which: int) -> Intrinsics:
        k = _lib.RgbdIntrinsics()
        with self._use() as handle:
            _lib.lib().rgbd_capture_intrinsics(handle, which, ctypes.byref(k))
        return Intrinsics._from_c(k)

    @property
    def intrinsics(self) -> CaptureIntrinsics:
        """Intrinsics of the rectified images: ``.color`` and ``.depth``, each scaled to its image."""
        return CaptureIntrinsics(self._intrinsics(_lib.RGBD_INTRINSICS_COLOR),
                                 self._intrinsics(_lib.RGBD_INTRINSICS_DEPTH))

    @property
    def reference_intrinsics(self) -> Intrinsics:
        """The intrinsics as recorded, at :attr:`reference_size`."""
        return self._intrinsics(_lib.RGBD_INTRINSICS_REFERENCE)

    @property
    def distortion_center(self) -> Tuple[float, float]:
        """``(x, y)`` of ``lens_distortion_center``, in pixels at :attr:`reference_size`."""
        x, y = ctypes.c_double(), ctypes.c_double()
        with self._use() as handle:
            _lib.lib().rgbd_capture_distortion_center(handle, ctypes.byref(x), ctypes.byref(y))
        return x.value, y.value

    # ---- place, heading and gravity (the photo's EXIF; docs/geo.md) ------------------------

    def _geo(self) -> "_lib.RgbdGeo":
        geo = _lib.RgbdGeo()
        with self._use() as handle:
            _lib.lib().rgbd_capture_geo(handle, ctypes.byref(geo))
        return geo

    @property
    def location(self) -> Optional[Dict[str, Optional[float]]]:
        """Where the photo was taken (EXIF GPS), or None: ``latitude`` and ``longitude``
        (degrees, WGS84), ``altitude`` (meters above mean sea level, or None) and
        ``horizontal_error`` (meters, or None)."""
        geo = self._geo()
        if not geo.has_location:
            return None
        def known(v: float) -> Optional[float]:
            return None if math.isnan(v) else v
        return {"latitude": geo.latitude, "longitude": geo.longitude, "altitude": known(geo.altitude),
                "horizontal_error": known(geo.horizontal_error)}

    @property
    def heading(self) -> Optional[Dict[str, Any]]:
        """The camera's compass heading (EXIF GPSImgDirection), or None: ``degrees``
        clockwise from north and ``north`` (``"true"`` or ``"magnetic"``)."""
        geo = self._geo()
        if not geo.has_heading:
            return None
        return {"degrees": geo.heading, "north": "magnetic" if geo.heading_magnetic else "true"}

    @property
    def gravity(self) -> Optional[Dict[str, Any]]:
        """Gravity from Apple's MakerNote accelerometer vector, or None: ``down`` (a unit
        vector in OpenCV camera axes), ``pitch`` and ``roll`` (degrees) and ``g`` (the
        reading's magnitude)."""
        geo = self._geo()
        if not geo.has_gravity:
            return None
        return {"down": np.array(list(geo.down), dtype=np.float64), "pitch": geo.pitch, "roll": geo.roll,
                "g": geo.gravity_g}

    def _table(self, inverse: int) -> np.ndarray:
        lib = _lib.lib()
        count = ctypes.c_size_t()
        with self._use() as handle:
            lib.rgbd_capture_lookup_table(handle, inverse, None, 0, ctypes.byref(count))
            table = np.empty(count.value, dtype=np.float32)
            lib.rgbd_capture_lookup_table(handle, inverse, pointer(table, ctypes.c_float), table.size,
                                          ctypes.byref(count))
        return table[: count.value]

    @property
    def lookup_table(self) -> np.ndarray:
        """``lens_distortion_lookup_table`` (rectified → distorted), float32 (a new array)."""
        return self._table(0)

    @property
    def inverse_lookup_table(self) -> np.ndarray:
        """``inverse_lens_distortion_lookup_table`` (distorted → rectified), float32; empty if absent."""
        return self._table(1)

    @property
    def lens(self) -> Lens:
        """``(reference_size, distortion_center, lookup_table)`` for :func:`rgbd.rectify_image`."""
        return Lens(self.reference_size, self.distortion_center, self.lookup_table)

    # ---- images ---------------------------------------------------------------------------

    def _image(self, function_name: str, out: Optional[np.ndarray], color: bool) -> np.ndarray:
        width, height = self._color_size if color else self._depth_size
        if color:
            array = output_array(out, (height, width, 3), np.uint8)
            data = pointer(array, ctypes.c_uint8)
        else:
            array = output_array(out, (height, width), np.float32)
            data = pointer(array, ctypes.c_float)
        with self._use() as handle:
            getattr(_lib.lib(), function_name)(handle, data, array.size)
        return array

    def _cached(self, key: str, function_name: str, color: bool) -> np.ndarray:
        array = self.__dict__.get(key)
        if array is None:
            array = self._image(function_name, None, color)
            array.flags.writeable = False
            array = self.__dict__.setdefault(key, array)
        return array

    @property
    def color(self) -> np.ndarray:
        """The color photo as captured (distorted): H×W×3 uint8 RGB, read-only (copy to modify)."""
        return self._cached("_color", "rgbd_capture_color", True)

    @property
    def depth(self) -> np.ndarray:
        """The depth map as captured (distorted): h×w float32 meters, NaN = no depth, read-only."""
        return self._cached("_depth", "rgbd_capture_depth", False)

    @property
    def depth_accuracy(self) -> Optional[str]:
        """A Portrait photo's depth accuracy as its metadata says: ``"absolute"``, or
        ``"relative"`` (the depth's scale is not guaranteed); None for other captures."""
        text = ctypes.c_char_p()
        with self._use() as handle:
            _lib.lib().rgbd_capture_depth_accuracy(handle, ctypes.byref(text))
        value = (text.value or b"").decode("utf-8", errors="replace")
        return value or None

    def rectified_color(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The rectified color image, H×W×3 uint8 RGB, an ideal pinhole image (``intrinsics.color``).

        Written by the library into a new array, or into ``out`` (uint8, H×W×3, C-contiguous).
        The first rectified_* call rectifies color and depth on all cores; later calls copy.
        """
        return self._image("rgbd_capture_rectified_color", out, True)

    def rectified_depth(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The rectified depth map, h×w float32 meters along the optical axis, NaN = no depth.

        Never blended across depth edges (no invented depth between foreground and
        background). Written into a new array, or into ``out`` (float32, h×w, C-contiguous).
        """
        return self._image("rgbd_capture_rectified_depth", out, False)

    def aligned(self, to: str) -> AlignedPair:
        """The rectified color and depth on one pixel grid, as ``rgbd rectify --align-to``
        writes them (the same pixels as its PNG and TIFF).

        Args:
            to: ``"depth"``: at the depth map's size, the rectified color averaged over each
                depth pixel's footprint (the colors :meth:`point_cloud` gives) beside
                :meth:`rectified_depth`; ``"color"``: at the photo's size,
                :meth:`rectified_color` beside the depth map rectified straight onto the
                photo's grid (no depth blended across an edge; holes stay NaN).

        Returns:
            ``AlignedPair(color, depth, intrinsics)``: H×W×3 uint8 RGB, H×W float32 meters
            (NaN = no depth) and the one :class:`Intrinsics` of both (new arrays).

        Raises:
            ValueError: ``to`` is not ``"depth"`` or ``"color"``; the capture is closed.
            RGBDError: ``to="depth"`` with a depth map larger than the photo.
        """
        if not isinstance(to, str) or to not in _ALIGNMENTS:
            raise ValueError(f"to must be 'depth' or 'color', not {to!r}")
        which = _ALIGNMENTS[to]
        lib = _lib.lib()
        k = _lib.RgbdIntrinsics()
        with self._use() as handle:
            lib.rgbd_capture_aligned(handle, which, None, 0, None, 0, ctypes.byref(k))
            width, height = int(k.width), int(k.height)
            color = np.empty((height, width, 3), dtype=np.uint8)
            depth = np.empty((height, width), dtype=np.float32)
            lib.rgbd_capture_aligned(handle, which, pointer(color, ctypes.c_uint8), color.size,
                                     pointer(depth, ctypes.c_float), depth.size, ctypes.byref(k))
        return AlignedPair(color, depth, Intrinsics._from_c(k))

    # ---- tags ------------------------------------------------------------------------------

    def tags(self, family: str = "tag36h11", size: Optional[float] = None) -> list:
        """The clean AprilTags of ``family`` in the rectified color, with depth under each,
        sorted by ID: a list of :class:`rgbd.Tag` (docs/markers.md).

        ``size`` is the tags' black-square edge in meters (None: each measured in the depth).
        """
        with self._use() as handle:
            return capture_tags(handle, family, size)

    # ---- preview --------------------------------------------------------------------------

    def preview(self, width: int = 1600, max_depth: Optional[float] = None, min_depth: float = 0.0,
                upright: bool = False) -> np.ndarray:
        """The sheet ``rgbd preview`` writes for this capture, as an H×W×3 uint8 RGB array.

        Args:
            width: the sheet's width in pixels (480 to 8000).
            max_depth: meters at the top of the depth color scale; None: chosen from the
                depth map (its 99th percentile, rounded up).
            min_depth: meters at the bottom of the depth color scale.
            upright: turn the panels as the photo asks to be shown (its EXIF or HEIF
                orientation): a portrait photo gives tall panels. A mirroring orientation
                is drawn as stored.

        The same pixels as ``rgbd preview --width W [--max-depth M] [--min-depth m]
        [--upright]`` on the same files.
        """
        lib = _lib.lib()
        sheet_width, sheet_height = ctypes.c_int32(), ctypes.c_int32()
        top = 0.0 if max_depth is None else float(max_depth)
        if max_depth is not None and not top > 0:
            raise ValueError(f"max_depth must be positive, not {max_depth!r}")
        turn = int(bool(upright))
        with self._use() as handle:
            lib.rgbd_capture_preview_upright(handle, int(width), float(min_depth), top, turn, None, 0,
                                             ctypes.byref(sheet_width), ctypes.byref(sheet_height))
            sheet = np.empty((sheet_height.value, sheet_width.value, 3), dtype=np.uint8)
            lib.rgbd_capture_preview_upright(handle, int(width), float(min_depth), top, turn,
                                             pointer(sheet, ctypes.c_uint8), sheet.size,
                                             ctypes.byref(sheet_width), ctypes.byref(sheet_height))
        return sheet

    # ---- point clouds ---------------------------------------------------------------------

    def point_cloud_count(self, min_depth: float = 0.0, max_depth: float = math.inf, stride: int = 1,
                          keep_edges: bool = False, edge_threshold: float = 0.05, axes: str = "opencv",
                          frame: str = "camera") -> int:
        """The number of points :meth:`point_cloud` returns with these options."""
        options = cloud_options(min_depth, max_depth, stride, keep_edges, edge_threshold, False, axes, frame)
        count = ctypes.c_size_t()
        with self._use() as handle:
            _lib.lib().rgbd_capture_point_cloud_count(handle, ctypes.byref(options), ctypes.byref(count))
        return count.value

    def point_cloud(self, min_depth: float = 0.0, max_depth: float = math.inf, stride: int = 1,
                    keep_edges: bool = False, edge_threshold: float = 0.05, normals: bool = False,
                    axes: str = "opencv", frame: str = "camera") -> PointCloud:
        """Back-projects the rectified depth map, exactly as ``rgbd cloud`` does.

        Args:
            min_depth: meters; nearer points are dropped.
            max_depth: meters; farther points are dropped.
            stride: keep every stride-th depth pixel in each direction.
            keep_edges: keep points on depth discontinuities (flying pixels), dropped by default.
            edge_threshold: relative depth jump to a 4-neighbor that marks a point as on an edge.
            normals: also return normals (from the depth grid, oriented toward the camera).
            axes: ``"opencv"`` (x right, y down, z forward) or ``"opengl"`` (X, -Y, -Z).
            frame: ``"camera"``, ``"level"`` (z up, from the photo's accelerometer) or
                ``"enu"`` (east, north, up meters at the photo's GPS position), as
                ``rgbd cloud --frame``; a photo without what the frame needs raises RGBDError.

        Returns:
            ``(points, colors)``: (N, 3) float32 meters and (N, 3) uint8 RGB (the rectified
            color averaged over each depth pixel's footprint, or the nearest color pixel
            along an axis where the color image is the smaller); with ``normals=True``,
            ``(points, colors, normals)``, normals (N, 3) float32. Holes give no points.
        """
        options = cloud_options(min_depth, max_depth, stride, keep_edges, edge_threshold, normals, axes, frame)
        lib = _lib.lib()
        count, written = ctypes.c_size_t(), ctypes.c_size_t()
        with self._use() as handle:
            lib.rgbd_capture_point_cloud_count(handle, ctypes.byref(options), ctypes.byref(count))
            n = count.value
            points = np.empty((n, 3), dtype=np.float32)
            colors = np.empty((n, 3), dtype=np.uint8)
            normal_array = np.empty((n, 3), dtype=np.float32) if normals else None
            lib.rgbd_capture_point_cloud(
                handle, ctypes.byref(options), pointer(points, ctypes.c_float), pointer(colors, ctypes.c_uint8),
                pointer(normal_array, ctypes.c_float), n, ctypes.byref(written))
        if written.value != n:  # the header allows *written < capacity; keep what was written
            points, colors = points[: written.value], colors[: written.value]
            normal_array = None if normal_array is None else normal_array[: written.value]
        if normal_array is not None:
            return points, colors, normal_array
        return points, colors

    def write_ply(self, path: PathLike, ascii: bool = False, *, min_depth: float = 0.0,
                  max_depth: float = math.inf, stride: int = 1, keep_edges: bool = False,
                  edge_threshold: float = 0.05, normals: bool = False, axes: str = "opencv",
                  frame: str = "camera") -> None:
        """Writes the point cloud (options as :meth:`point_cloud`) as PLY to ``path``.

        Binary little-endian, or ASCII with ``ascii=True``; written atomically (temporary
        name, then rename), the same file ``rgbd cloud`` writes.
        """
        options = cloud_options(min_depth, max_depth, stride, keep_edges, edge_threshold, normals, axes, frame)
        raw = encode_path(path)
        with self._use() as handle:
            _lib.lib().rgbd_capture_write_ply(handle, ctypes.byref(options), raw, 1 if ascii else 0)


# ---- loading -------------------------------------------------------------------------------


def load_capture(json_path: PathLike, image_path: Optional[PathLike] = None) -> Capture:
    """Loads a capture from its JSON file and photo (JPEG or HEIC, recognised by content).

    A Portrait photo (a HEIC or JPEG holding a depth image and Apple's depth metadata,
    recognised by content) is a capture by itself: ``load_capture("IMG_1234.HEIC")``.

    Args:
        json_path: the capture's JSON (calibration and depth map), or a Portrait photo.
        image_path: the color photo; by default the one beside the JSON with the same stem
            (``.jpg``/``.jpeg``, else ``.heic``/``.heif``, any case).

    Raises:
        RGBDError: the files cannot be read, or are not a valid capture (the message names
            the file and key).
    """
    json_raw = encode_path(json_path, "json_path")
    image_raw = None if image_path is None else encode_path(image_path, "image_path")
    out = _lib.RgbdCaptureP()
    _lib.lib().rgbd_capture_load(json_raw, image_raw, ctypes.byref(out))
    name = Path(os.fsdecode(json_raw)).stem
    return Capture(out, name, os.fsdecode(json_raw), None if image_raw is None else os.fsdecode(image_raw))


def load_photo_bytes(photo_bytes: Any, name: Optional[str] = None) -> Capture:
    """Loads a Portrait photo (HEIC or JPEG with a depth image) from its file's bytes alone.

    ``photo_bytes`` may be any contiguous bytes-like object; ``name`` is used in error
    messages. A photo without a depth image raises ``RGBDError`` ("... holds no depth image").
    """
    data = as_bytes(photo_bytes, "photo_bytes")
    name_raw = None if name is None else encode_text(name, "name")
    out = _lib.RgbdCaptureP()
    _lib.lib().rgbd_capture_load_photo_memory(pointer(data, ctypes.c_uint8), data.size, name_raw, ctypes.byref(out))
    return Capture(out, "memory" if name is None else Path(name).stem)


def load_capture_bytes(json_bytes: Any, jpeg_bytes: Any, name: Optional[str] = None) -> Capture:
    """Loads a capture from bytes in memory: the JSON text and the photo file's bytes (JPEG or HEIC).

    Both may be any contiguous bytes-like object (bytes, bytearray, memoryview, mmap); they
    are borrowed for the call, not copied by Python. ``name`` is used in error messages.
    """
    json_data = as_bytes(json_bytes, "json_bytes")
    jpeg_data = as_bytes(jpeg_bytes, "jpeg_bytes")
    name_raw = None if name is None else encode_text(name, "name")
    out = _lib.RgbdCaptureP()
    _lib.lib().rgbd_capture_load_memory(
        pointer(json_data, ctypes.c_uint8), json_data.size, pointer(jpeg_data, ctypes.c_uint8), jpeg_data.size,
        name_raw, ctypes.byref(out))
    return Capture(out, "memory" if name is None else name)
