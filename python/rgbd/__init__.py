"""rgbd: rectify iPhone depth captures and back-project them to point clouds, from Python.

A thin ctypes layer over the rgbd C library (``rgbd.h``, ``libRGBDKit.so``, which
``pip install ./python`` builds and ships inside the package); images and clouds are
numpy arrays that the library writes in place. The library is found through
``$RGBD_LIBRARY``, next to this package, or in the build folders of the rgbd repository
the package sits in (see :func:`rgbd.find_library`), and is loaded on first use.

Example::

    import rgbd
    with rgbd.load_capture("shot.json") as cap:          # shot.jpg beside it
        color = cap.rectified_color()                   # H×W×3 uint8 RGB
        depth = cap.rectified_depth()                   # h×w float32 meters, NaN = no depth
        k = cap.intrinsics.depth.matrix                 # 3×3 of the rectified depth map
        points, colors = cap.point_cloud(max_depth=5)   # (N, 3) float32, (N, 3) uint8
        rgbd.write_ply("shot.ply", points, colors)

    rectifier = rgbd.Rectifier(cap.lens, (1920, 1440))   # once per camera and frame size
    y, cbcr = rectifier.nv12(y_plane, cbcr_plane)       # each NV12 video frame

    with rgbd.load_scene("scan/") as scene:            # Stray Scanner folder, Record3D .r3d
        for frame in scene:                             # color, depth, confidence, pose
            world = frame.pose[:3, :3] @ p + frame.pose[:3, 3]

Every failure the library reports raises :class:`RGBDError`, carrying its message and
status. All functions are safe to call from several threads at once (ctypes releases
the GIL during each call).
"""

from __future__ import annotations

from pathlib import Path as _Path

from . import _lib
from ._capture import Capture, load_capture, load_capture_bytes, load_photo_bytes
from ._errors import RGBDError, Status
from ._files import rectify_files
from ._image import rectify_image, write_ply
from ._lib import LibraryNotFoundError, find_library
from ._rectifier import Rectifier
from ._scene import Scene, load_scene, register
from ._types import AlignedPair, CaptureIntrinsics, Frame, Intrinsics, Lens, Mesh, RectifyResult, Tag, TexturedMesh

# rgbd/VERSION: in the repository a link to the top-level VERSION file, the one source
# of the version number (the library's rgbd_version() says the same); a file in the
# installed package.
__version__ = (_Path(__file__).resolve().parent / "VERSION").read_text(encoding="utf-8").strip()

__all__ = [
    "__version__",
    "library_version",
    "library_path",
    "find_library",
    "load_capture",
    "load_capture_bytes",
    "load_photo_bytes",
    "load_scene",
    "rectify_image",
    "rectify_files",
    "RectifyResult",
    "Rectifier",
    "write_ply",
    "Capture",
    "CaptureIntrinsics",
    "AlignedPair",
    "Intrinsics",
    "Lens",
    "Scene",
    "Frame",
    "Mesh",
    "TexturedMesh",
    "RGBDError",
    "Status",
    "LibraryNotFoundError",
    "Tag",
    "register",
]


def library_version() -> str:
    """The version of the loaded C library (``rgbd_version()``), e.g. ``"0.1.0"``.

    Loads the library if needed (raises :class:`LibraryNotFoundError` if it cannot).
    """
    return _lib.lib().rgbd_version().decode("utf-8")


def library_path() -> str:
    """The path of the C library in use (loading it if needed)."""
    _lib.lib()
    path = _lib.loaded_path()
    assert path is not None
    return path
