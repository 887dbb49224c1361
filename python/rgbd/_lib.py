"""Finding and loading the rgbd shared library, and its ctypes declarations.

Everything here mirrors ``Sources/CRGBD/include/rgbd.h`` (the single source of truth for
the C ABI): the status codes, the structs and one ``argtypes``/``restype`` pair for every
function of the header. Every function that returns a status has an ``errcheck`` that
raises :class:`rgbd.RGBDError` (with ``rgbd_last_error()``, read on the calling thread
right after the call) for any status but ``RGBD_OK``, so callers never check one. The
library is loaded once, on first use, and is the only global state of the package.
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path
from typing import Any, List, Optional

from ._errors import (RGBD_ERROR_INVALID_ARGUMENT, RGBD_ERROR_INVALID_CAPTURE, RGBD_ERROR_INVALID_IMAGE,
                      RGBD_ERROR_INVALID_JSON, RGBD_ERROR_INVALID_SCENE, RGBD_ERROR_IO, RGBD_OK, error_for)

__all__ = [
    "RGBD_OK",
    "RGBD_ERROR_IO",
    "RGBD_ERROR_INVALID_JSON",
    "RGBD_ERROR_INVALID_CAPTURE",
    "RGBD_ERROR_INVALID_IMAGE",
    "RGBD_ERROR_INVALID_ARGUMENT",
    "RGBD_ERROR_INVALID_SCENE",
    "RGBD_INTRINSICS_REFERENCE",
    "RGBD_INTRINSICS_COLOR",
    "RGBD_INTRINSICS_DEPTH",
    "RGBD_AXES_OPENCV",
    "RGBD_AXES_OPENGL",
    "RGBD_RECTIFIER_MAP_BYTES_DEFAULT",
    "RGBD_ALIGN_NONE",
    "RGBD_FRAME_CAMERA",
    "RGBD_FRAME_LEVEL",
    "RGBD_FRAME_ENU",
    "RGBD_ALIGN_DEPTH",
    "RGBD_ALIGN_COLOR",
    "RgbdRectifyOptions",
    "RGBD_EXPORT_IMAGES_DEFAULT",
    "RGBD_EXPORT_IMAGES_JPEG",
    "RGBD_EXPORT_IMAGES_PNG",
    "RGBD_EXPORT_DEPTH_DEFAULT",
    "RGBD_EXPORT_DEPTH_SENSOR",
    "RGBD_EXPORT_DEPTH_IMAGE",
    "LIBRARY_ENV",
    "LIBRARY_NAMES",
    "LibraryNotFoundError",
    "RgbdIntrinsics",
    "RgbdCloudOptions",
    "RgbdFrameInfo",
    "RgbdExportOptions",
    "RgbdSceneP",
    "RgbdFuseOptions",
    "RgbdMeshP",
    "RgbdMeshWriteOptions",
    "RgbdTexturedMeshP",
    "RgbdRefineOptions",
    "RgbdRefineReport",
    "RgbdLens",
    "RgbdRectifierP",
    "candidate_paths",
    "find_library",
    "lib",
    "loaded_path",
    "FUNCTIONS",
]

# ---- Constants of rgbd.h ------------------------------------------------------------

# RGBD_OK and RGBD_ERROR_*: imported from _errors, which defines them beside the exception
# that carries them.

RGBD_INTRINSICS_REFERENCE = 0
RGBD_INTRINSICS_COLOR = 1
RGBD_INTRINSICS_DEPTH = 2

RGBD_AXES_OPENCV = 0
RGBD_AXES_OPENGL = 1

RGBD_RECTIFIER_MAP_BYTES_DEFAULT = 64 << 20

RGBD_ALIGN_NONE = 0
RGBD_ALIGN_DEPTH = 1
RGBD_ALIGN_COLOR = 2
RGBD_FRAME_CAMERA = 0
RGBD_FRAME_LEVEL = 1
RGBD_FRAME_ENU = 2
RGBD_EXPORT_IMAGES_DEFAULT = 0
RGBD_EXPORT_IMAGES_JPEG = 1
RGBD_EXPORT_IMAGES_PNG = 2

RGBD_EXPORT_DEPTH_DEFAULT = 0
RGBD_EXPORT_DEPTH_SENSOR = 1
RGBD_EXPORT_DEPTH_IMAGE = 2

RGBD_TAG_FAMILY_36H11 = 0
RGBD_TAG_FAMILY_STANDARD41H12 = 1

#: Environment variable naming the library file to load (takes precedence over the search).
LIBRARY_ENV = "RGBD_LIBRARY"

#: File names the library may have. SwiftPM names it libRGBDKit (the product name), a
#: packager may have renamed it librgbd.
LIBRARY_NAMES = ("libRGBDKit.so", "libRGBDKit.dylib", "librgbd.so", "librgbd.dylib")


class LibraryNotFoundError(OSError):
    """The rgbd shared library could not be found or loaded; the message says where it looked."""


# ---- Structs of rgbd.h ----------------------------------------------------------------

c_int32_p = ctypes.POINTER(ctypes.c_int32)
c_double_p = ctypes.POINTER(ctypes.c_double)
c_float_p = ctypes.POINTER(ctypes.c_float)
c_uint8_p = ctypes.POINTER(ctypes.c_uint8)
c_size_t_p = ctypes.POINTER(ctypes.c_size_t)


class RgbdCapture(ctypes.Structure):
    """``struct rgbd_capture``: opaque, only ever handled through a pointer."""


RgbdCaptureP = ctypes.POINTER(RgbdCapture)


class RgbdRectifier(ctypes.Structure):
    """``struct rgbd_rectifier``: opaque, only ever handled through a pointer."""


RgbdRectifierP = ctypes.POINTER(RgbdRectifier)


class RgbdScene(ctypes.Structure):
    """``struct rgbd_scene``: opaque, only ever handled through a pointer."""


RgbdSceneP = ctypes.POINTER(RgbdScene)


class RgbdIntrinsics(ctypes.Structure):
    """``rgbd_intrinsics``: pinhole intrinsics in pixels of a width × height image."""

    _fields_ = [
        ("fx", ctypes.c_double),
        ("fy", ctypes.c_double),
        ("cx", ctypes.c_double),
        ("cy", ctypes.c_double),
        ("width", ctypes.c_int32),
        ("height", ctypes.c_int32),
    ]


class RgbdFrameInfo(ctypes.Structure):
    """``rgbd_frame_info``: a scene frame's number, time, c2w pose (4×4 row-major, OpenCV
    camera axes) and intrinsics at the color and depth sizes."""

    _fields_ = [
        ("index", ctypes.c_int64),
        ("time", ctypes.c_double),
        ("pose", ctypes.c_double * 16),
        ("color", RgbdIntrinsics),
        ("depth", RgbdIntrinsics),
    ]


class RgbdExportOptions(ctypes.Structure):
    """``rgbd_export_options``: what ``rgbd_scene_export`` writes (``rgbd export``'s flags)."""

    _fields_ = [
        ("every", ctypes.c_int32),
        ("max_frames", ctypes.c_int32),
        ("sharpest", ctypes.c_int32),
        ("image_format", ctypes.c_int32),
        ("jpeg_quality", ctypes.c_int32),
        ("downscale", ctypes.c_int32),
        ("min_confidence", ctypes.c_int32),
        ("colmap_text", ctypes.c_int32),
        ("overwrite", ctypes.c_int32),
        ("frame", ctypes.c_int32),
        ("depth_size", ctypes.c_int32),
    ]


class RgbdTag(ctypes.Structure):
    """``rgbd_tag``: one AprilTag found in a capture (docs/markers.md)."""

    _fields_ = [
        ("id", ctypes.c_int32),
        ("duplicate_id", ctypes.c_int32),
        ("corners", ctypes.c_double * 8),
        ("center", ctypes.c_double * 2),
        ("decision_margin", ctypes.c_double),
        ("size", ctypes.c_double),
        ("tag_to_camera", ctypes.c_double * 16),
        ("corner_rms", ctypes.c_double),
        ("depth_rms", ctypes.c_double),
        ("depth_scale", ctypes.c_double),
    ]


class RgbdCloudOptions(ctypes.Structure):
    """``rgbd_cloud_options``: the options of back-projection (``rgbd cloud``'s flags)."""

    _fields_ = [
        ("min_depth", ctypes.c_float),
        ("max_depth", ctypes.c_float),
        ("stride", ctypes.c_int32),
        ("keep_edges", ctypes.c_int32),
        ("edge_threshold", ctypes.c_float),
        ("normals", ctypes.c_int32),
        ("axes", ctypes.c_int32),
        ("frame", ctypes.c_int32),
    ]


class RgbdGeo(ctypes.Structure):
    """``rgbd_geo``: what a photo's EXIF says about place, heading and gravity."""

    _fields_ = [
        ("has_location", ctypes.c_int32),
        ("latitude", ctypes.c_double),
        ("longitude", ctypes.c_double),
        ("altitude", ctypes.c_double),
        ("horizontal_error", ctypes.c_double),
        ("has_heading", ctypes.c_int32),
        ("heading", ctypes.c_double),
        ("heading_magnetic", ctypes.c_int32),
        ("has_gravity", ctypes.c_int32),
        ("down", ctypes.c_double * 3),
        ("pitch", ctypes.c_double),
        ("roll", ctypes.c_double),
        ("gravity_g", ctypes.c_double),
    ]


class RgbdRectifyOptions(ctypes.Structure):
    """``rgbd_rectify_options``: what ``rgbd_rectify_files`` does (``rgbd rectify``'s flags)."""

    _fields_ = [
        ("align_to", ctypes.c_int32),
        ("upright", ctypes.c_int32),
        ("crop_valid", ctypes.c_int32),
        ("small_png", ctypes.c_int32),
        ("max_blend_step", ctypes.c_float),
        ("max_valid_depth", ctypes.c_float),
    ]


class RgbdFuseOptions(ctypes.Structure):
    """``rgbd_fuse_options``: the options of fusion (``rgbd fuse``'s flags)."""

    _fields_ = [
        ("voxel", ctypes.c_double),
        ("trunc", ctypes.c_double),
        ("min_depth", ctypes.c_float),
        ("max_depth", ctypes.c_float),
        ("min_confidence", ctypes.c_int32),
        ("keep_edges", ctypes.c_int32),
        ("edge_threshold", ctypes.c_float),
        ("every", ctypes.c_int32),
        ("min_fragment", ctypes.c_int32),
        ("max_memory_mb", ctypes.c_int64),
        ("frame", ctypes.c_int32),
        ("min_weight", ctypes.c_double),
        ("triangles", ctypes.c_int64),
        ("max_error", ctypes.c_double),
    ]


class RgbdRefineOptions(ctypes.Structure):
    """``rgbd_refine_options``: the options of pose refinement (``rgbd refine``'s flags)."""

    _fields_ = [
        ("voxel", ctypes.c_double),
        ("min_depth", ctypes.c_float),
        ("max_depth", ctypes.c_float),
        ("min_confidence", ctypes.c_int32),
        ("max_memory_mb", ctypes.c_int64),
    ]


class RgbdRefineReport(ctypes.Structure):
    """``rgbd_refine_report``: what a refinement found."""

    _fields_ = [
        ("frames", ctypes.c_size_t),
        ("tracked", ctypes.c_size_t),
        ("undecided", ctypes.c_size_t),
        ("corrected", ctypes.c_size_t),
        ("residual_before", ctypes.c_double),
        ("residual_after", ctypes.c_double),
        ("voxel", ctypes.c_double),
        ("truncation", ctypes.c_double),
    ]


class RgbdMeshWriteOptions(ctypes.Structure):
    """``rgbd_mesh_write_options``: how a fused mesh is written (``rgbd fuse -o``)."""

    _fields_ = [
        ("texture_size", ctypes.c_int32),
        ("ascii", ctypes.c_int32),
        ("max_memory_mb", ctypes.c_int64),
    ]


class RgbdMesh(ctypes.Structure):
    """``struct rgbd_mesh``: opaque, only ever handled through a pointer."""


RgbdMeshP = ctypes.POINTER(RgbdMesh)


class RgbdTexturedMesh(ctypes.Structure):
    """``struct rgbd_textured_mesh``: opaque, only ever handled through a pointer."""


RgbdTexturedMeshP = ctypes.POINTER(RgbdTexturedMesh)


class RgbdLens(ctypes.Structure):
    """``rgbd_lens``: calibration values for rectifying arbitrary frames (table borrowed)."""

    _fields_ = [
        ("reference_width", ctypes.c_int32),
        ("reference_height", ctypes.c_int32),
        ("center_x", ctypes.c_double),
        ("center_y", ctypes.c_double),
        ("table", c_float_p),
        ("table_count", ctypes.c_size_t),
    ]


# ---- Function declarations (one line per function of rgbd.h, in its order) -----------

_c = ctypes
_SIGNATURES = {
    "rgbd_version": (_c.c_char_p, []),
    "rgbd_last_error": (_c.c_char_p, []),
    "rgbd_capture_load": (_c.c_int, [_c.c_char_p, _c.c_char_p, _c.POINTER(RgbdCaptureP)]),
    "rgbd_capture_load_memory": (
        _c.c_int,
        [c_uint8_p, _c.c_size_t, c_uint8_p, _c.c_size_t, _c.c_char_p, _c.POINTER(RgbdCaptureP)],
    ),
    "rgbd_capture_load_photo_memory": (_c.c_int, [c_uint8_p, _c.c_size_t, _c.c_char_p, _c.POINTER(RgbdCaptureP)]),
    "rgbd_capture_destroy": (None, [RgbdCaptureP]),
    "rgbd_capture_color_size": (_c.c_int, [RgbdCaptureP, c_int32_p, c_int32_p]),
    "rgbd_capture_depth_size": (_c.c_int, [RgbdCaptureP, c_int32_p, c_int32_p]),
    "rgbd_capture_reference_size": (_c.c_int, [RgbdCaptureP, c_int32_p, c_int32_p]),
    "rgbd_capture_intrinsics": (_c.c_int, [RgbdCaptureP, _c.c_int32, _c.POINTER(RgbdIntrinsics)]),
    "rgbd_capture_distortion_center": (_c.c_int, [RgbdCaptureP, c_double_p, c_double_p]),
    "rgbd_capture_lookup_table": (
        _c.c_int,
        [RgbdCaptureP, _c.c_int32, c_float_p, _c.c_size_t, c_size_t_p],
    ),
    "rgbd_capture_color": (_c.c_int, [RgbdCaptureP, c_uint8_p, _c.c_size_t]),
    "rgbd_capture_depth": (_c.c_int, [RgbdCaptureP, c_float_p, _c.c_size_t]),
    "rgbd_capture_rectified_color": (_c.c_int, [RgbdCaptureP, c_uint8_p, _c.c_size_t]),
    "rgbd_capture_rectified_depth": (_c.c_int, [RgbdCaptureP, c_float_p, _c.c_size_t]),
    "rgbd_capture_aligned": (
        _c.c_int,
        [RgbdCaptureP, _c.c_int32, c_uint8_p, _c.c_size_t, c_float_p, _c.c_size_t, _c.POINTER(RgbdIntrinsics)],
    ),
    "rgbd_cloud_options_default": (None, [_c.POINTER(RgbdCloudOptions)]),
    "rgbd_capture_geo": (_c.c_int, [RgbdCaptureP, _c.POINTER(RgbdGeo)]),
    "rgbd_capture_point_cloud_count": (
        _c.c_int,
        [RgbdCaptureP, _c.POINTER(RgbdCloudOptions), c_size_t_p],
    ),
    "rgbd_capture_point_cloud": (
        _c.c_int,
        [RgbdCaptureP, _c.POINTER(RgbdCloudOptions), c_float_p, c_uint8_p, c_float_p, _c.c_size_t, c_size_t_p],
    ),
    "rgbd_capture_write_ply": (
        _c.c_int,
        [RgbdCaptureP, _c.POINTER(RgbdCloudOptions), _c.c_char_p, _c.c_int32],
    ),
    "rgbd_write_ply": (
        _c.c_int,
        [_c.c_char_p, c_float_p, c_uint8_p, c_float_p, _c.c_size_t, _c.c_int32],
    ),
    "rgbd_capture_preview": (
        _c.c_int,
        [RgbdCaptureP, _c.c_int32, _c.c_float, _c.c_float, c_uint8_p, _c.c_size_t, c_int32_p, c_int32_p],
    ),
    "rgbd_capture_preview_upright": (
        _c.c_int,
        [RgbdCaptureP, _c.c_int32, _c.c_float, _c.c_float, _c.c_int32, c_uint8_p, _c.c_size_t, c_int32_p, c_int32_p],
    ),
    "rgbd_rectify_u8": (
        _c.c_int,
        [_c.POINTER(RgbdLens), c_uint8_p, _c.c_int32, _c.c_int32, _c.c_int32, c_uint8_p],
    ),
    "rgbd_rectify_f32": (
        _c.c_int,
        [_c.POINTER(RgbdLens), c_float_p, _c.c_int32, _c.c_int32, _c.c_float, c_float_p],
    ),
    "rgbd_rectifier_create": (
        _c.c_int,
        [_c.POINTER(RgbdLens), _c.c_int32, _c.c_int32, _c.c_float, _c.c_size_t, _c.POINTER(RgbdRectifierP)],
    ),
    "rgbd_rectifier_destroy": (None, [RgbdRectifierP]),
    "rgbd_rectifier_info": (_c.c_int, [RgbdRectifierP, c_size_t_p, c_int32_p, c_int32_p]),
    "rgbd_rectifier_apply_u8": (
        _c.c_int,
        [RgbdRectifierP, _c.c_int32, c_uint8_p, _c.c_size_t, _c.c_size_t, c_uint8_p, _c.c_size_t, _c.c_size_t],
    ),
    "rgbd_rectifier_apply_f32": (
        _c.c_int,
        [RgbdRectifierP, c_float_p, _c.c_size_t, _c.c_size_t, c_float_p, _c.c_size_t, _c.c_size_t],
    ),
    "rgbd_rectifier_apply_nv12": (
        _c.c_int,
        [RgbdRectifierP, c_uint8_p, _c.c_size_t, _c.c_size_t, c_uint8_p, _c.c_size_t, _c.c_size_t,
         c_uint8_p, _c.c_size_t, _c.c_size_t, c_uint8_p, _c.c_size_t, _c.c_size_t],
    ),
    "rgbd_rectify_options_default": (None, [_c.POINTER(RgbdRectifyOptions)]),
    "rgbd_rectify_files": (
        _c.c_int,
        [_c.c_char_p, _c.c_char_p, _c.c_char_p, _c.POINTER(RgbdRectifyOptions), _c.POINTER(_c.c_char_p)],
    ),
    "rgbd_capture_depth_accuracy": (_c.c_int, [RgbdCaptureP, _c.POINTER(_c.c_char_p)]),
    "rgbd_scene_open": (_c.c_int, [_c.c_char_p, _c.POINTER(RgbdSceneP)]),
    "rgbd_scene_destroy": (None, [RgbdSceneP]),
    "rgbd_scene_info": (_c.c_int, [RgbdSceneP, c_size_t_p, c_int32_p, c_int32_p, c_int32_p, c_int32_p]),
    "rgbd_scene_frame_info": (_c.c_int, [RgbdSceneP, _c.c_size_t, _c.POINTER(RgbdFrameInfo)]),
    "rgbd_scene_read_frame": (
        _c.c_int,
        [RgbdSceneP, _c.c_size_t, c_float_p, _c.c_size_t, c_uint8_p, _c.c_size_t, c_uint8_p, _c.c_size_t],
    ),
    "rgbd_export_options_default": (None, [_c.POINTER(RgbdExportOptions)]),
    "rgbd_scene_export": (
        _c.c_int,
        [RgbdSceneP, _c.c_char_p, _c.c_char_p, _c.POINTER(RgbdExportOptions), c_size_t_p],
    ),
    "rgbd_fuse_options_default": (None, [_c.POINTER(RgbdFuseOptions)]),
    "rgbd_scene_fuse": (_c.c_int, [RgbdSceneP, _c.POINTER(RgbdFuseOptions), _c.POINTER(RgbdMeshP)]),
    "rgbd_mesh_destroy": (None, [RgbdMeshP]),
    "rgbd_refine_options_default": (None, [_c.POINTER(RgbdRefineOptions)]),
    "rgbd_scene_refine": (
        _c.c_int,
        [RgbdSceneP, _c.POINTER(RgbdRefineOptions), c_double_p, _c.c_size_t, _c.POINTER(RgbdRefineReport)],
    ),
    "rgbd_scene_set_poses": (_c.c_int, [RgbdSceneP, c_double_p, _c.c_size_t, _c.c_char_p]),
    "rgbd_scene_load_poses": (_c.c_int, [RgbdSceneP, _c.c_char_p, c_size_t_p]),
    "rgbd_mesh_counts": (_c.c_int, [RgbdMeshP, c_size_t_p, c_size_t_p]),
    "rgbd_mesh_copy": (
        _c.c_int,
        [RgbdMeshP, c_float_p, c_uint8_p, c_float_p, _c.c_size_t, _c.POINTER(_c.c_uint32), _c.c_size_t],
    ),
    "rgbd_mesh_comments": (_c.c_int, [RgbdMeshP, _c.c_char_p, _c.c_size_t, c_size_t_p]),
    "rgbd_mesh_write_options_default": (None, [_c.POINTER(RgbdMeshWriteOptions)]),
    "rgbd_mesh_write": (_c.c_int, [RgbdMeshP, _c.c_char_p, _c.POINTER(RgbdMeshWriteOptions), c_double_p]),
    "rgbd_mesh_texture": (_c.c_int, [RgbdMeshP, _c.POINTER(RgbdMeshWriteOptions), _c.POINTER(RgbdTexturedMeshP)]),
    "rgbd_textured_mesh_destroy": (None, [RgbdTexturedMeshP]),
    "rgbd_textured_mesh_counts": (
        _c.c_int,
        [RgbdTexturedMeshP, c_size_t_p, c_size_t_p, c_size_t_p, c_size_t_p, c_double_p],
    ),
    "rgbd_textured_mesh_copy": (
        _c.c_int,
        [RgbdTexturedMeshP, c_float_p, c_float_p, c_float_p, _c.c_size_t, _c.POINTER(_c.c_uint32),
         _c.POINTER(_c.c_int32), _c.c_size_t],
    ),
    "rgbd_textured_mesh_atlas": (_c.c_int, [RgbdTexturedMeshP, _c.c_size_t, c_uint8_p, _c.c_size_t]),
    "rgbd_write_mesh_ply": (
        _c.c_int,
        [_c.c_char_p, c_float_p, c_uint8_p, c_float_p, _c.c_size_t, _c.POINTER(_c.c_uint32), _c.c_size_t,
         _c.c_char_p, _c.c_int32],
    ),
    "rgbd_capture_tags": (
        _c.c_int,
        [RgbdCaptureP, _c.c_int32, _c.c_double, _c.POINTER(RgbdTag), _c.c_size_t, c_size_t_p],
    ),
    "rgbd_register": (
        _c.c_int,
        [_c.POINTER(_c.c_char_p), _c.c_size_t, _c.c_int32, _c.c_double, _c.c_int32, _c.c_int32, _c.c_char_p,
         c_size_t_p],
    ),
}
del _c

#: The names of every function rgbd.h declares.
FUNCTIONS = tuple(_SIGNATURES)


# ---- Finding the library ---------------------------------------------------------------

_PACKAGE_DIR = Path(__file__).resolve().parent


def _repository_roots(start: Path) -> List[Path]:
    """Folders at or above ``start`` that hold a ``Package.swift`` (the Swift repository)."""
    return [folder for folder in (start, *start.parents) if (folder / "Package.swift").is_file()]


def _modification_time(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return float("-inf")


def candidate_paths() -> List[Path]:
    """Where the library is looked for when ``RGBD_LIBRARY`` is not set, in order.

    1. next to the package: the ``rgbd`` package folder (where ``pip install`` puts the
       library), then the folder that holds it;
    2. the build folders of the Swift repository the package sits in (found by walking up
       from the package to a folder with a ``Package.swift``; this is what an editable
       install or ``python/`` on ``sys.path`` uses): ``.build/dist/release/``
       (``Scripts/build-library.sh``, which the package's build hook runs) and
       ``.build/release/`` (``swift build -c release``, ``demo.sh``, ``test.sh``), the
       most recently built library first.
    """
    seen, paths = set(), []

    def add(path: Path) -> None:
        if path not in seen:
            seen.add(path)
            paths.append(path)

    for folder in (_PACKAGE_DIR, _PACKAGE_DIR.parent):
        for name in LIBRARY_NAMES:
            add(folder / name)
    for root in _repository_roots(_PACKAGE_DIR):
        builds = [root / ".build" / "dist" / "release" / name
                  for name in LIBRARY_NAMES] + [root / ".build" / "release" / name for name in LIBRARY_NAMES]
        # Stable sort: newest existing file first, missing ones keep their order at the end.
        for path in sorted(builds, key=lambda p: -_modification_time(p)):
            add(path)
    return paths


def find_library() -> Path:
    """The path of the library to load.

    ``$RGBD_LIBRARY`` if set (it must name an existing file), else the first existing file
    of :func:`candidate_paths`. Raises :class:`LibraryNotFoundError` listing every place
    looked at.
    """
    env = os.environ.get(LIBRARY_ENV)
    if env:
        path = Path(env).expanduser()
        if path.is_file():
            return Path(os.path.abspath(path))
        raise LibraryNotFoundError(
            f"${LIBRARY_ENV} is set to {env!r}, which is not a file; point it at libRGBDKit.so "
            f"or unset it"
        )
    candidates = candidate_paths()
    for path in candidates:
        if path.is_file():
            return path
    looked = "\n  ".join(str(p) for p in candidates)
    raise LibraryNotFoundError(
        "the rgbd shared library was not found. Looked for:\n"
        f"  ${LIBRARY_ENV} (not set)\n  {looked}\n"
        "Install the package with `pip install ./python` from the rgbd repository (it builds "
        "the library and ships it inside the package), or build the library with "
        f"Scripts/build-library.sh and set {LIBRARY_ENV} to its path."
    )


def _declare(library: ctypes.CDLL, path: Path) -> None:
    """Sets ``argtypes``/``restype`` of every function of rgbd.h on ``library``."""
    missing = [name for name in _SIGNATURES if not hasattr(library, name)]
    if missing:
        raise LibraryNotFoundError(
            f"{path} does not export {', '.join(missing)}: it is not a build of rgbd.h's library"
        )
    for name, (restype, argtypes) in _SIGNATURES.items():
        function = getattr(library, name)
        function.restype = restype
        function.argtypes = argtypes
        if restype is ctypes.c_int:
            function.errcheck = _status_check(library)


def _status_check(library: ctypes.CDLL) -> Any:
    """The ``errcheck`` of the functions that return a status: raises the call's
    :class:`rgbd.RGBDError` for any status but ``RGBD_OK`` (the message is thread-local and
    valid until the next failure: it is read here, on the calling thread, before anything
    else is called)."""
    last_error = library.rgbd_last_error

    def check(status: int, function: Any, arguments: Any) -> int:
        if status != RGBD_OK:
            raise error_for(status, last_error())
        return status

    return check


_lock = threading.Lock()
_library: Optional[ctypes.CDLL] = None


def lib() -> ctypes.CDLL:
    """The loaded library, with every function declared (loaded on the first call).

    ctypes releases the GIL during each call, so calls from several threads run in parallel.
    """
    global _library
    library = _library
    if library is not None:
        return library
    with _lock:
        if _library is None:
            path = find_library()
            try:
                loaded = ctypes.CDLL(str(path))
            except OSError as error:
                raise LibraryNotFoundError(
                    f"could not load {path}: {error}. It needs the system libraries "
                    "libturbojpeg, libpng16, libtiff, libjson-c, libheif, libde265, libcairo, libisal, libdeflate, "
                    "OpenEXR, zlib and libstdc++ (see `ldd` on the file; FFmpeg's libraries are loaded later, "
                    "when a scan video is read)"
                ) from error
            _declare(loaded, path)
            _library = loaded
        return _library


def loaded_path() -> Optional[str]:
    """The path of the loaded library, or None while it is not loaded yet."""
    library = _library
    return None if library is None else str(library._name)
