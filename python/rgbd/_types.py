"""The package's values: plain data (numpy arrays and numbers) that outlive any handle of
the library and pickle as they are. Captures, scenes and the tag finder make them; nothing
here holds a handle."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from . import _lib
from ._util import PathLike, encode_path

__all__ = ["Intrinsics", "CaptureIntrinsics", "AlignedPair", "Lens", "Frame", "Mesh", "Tag", "RectifyResult"]


@dataclass(frozen=True)
class Intrinsics:
    """Pinhole intrinsics (OpenCV model) in pixels of a ``width`` × ``height`` image.

    Pixel coordinates are integer pixel indices (the center of the top-left pixel is 0, 0).
    """

    fx: float
    fy: float
    cx: float
    cy: float
    width: int
    height: int

    @property
    def matrix(self) -> np.ndarray:
        """The 3×3 camera matrix ``[[fx, 0, cx], [0, fy, cy], [0, 0, 1]]`` (float64, a new array)."""
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    def as_dict(self) -> Dict[str, Any]:
        """``{"width", "height", "intrinsic_matrix"}`` as Open3D's ``read_pinhole_camera_intrinsic``
        reads it (the matrix as 9 numbers, column-major), the layout of rgbd's sidecar."""
        return {
            "width": self.width,
            "height": self.height,
            "intrinsic_matrix": [self.fx, 0.0, 0.0, 0.0, self.fy, 0.0, self.cx, self.cy, 1.0],
        }

    @classmethod
    def _from_c(cls, k: _lib.RgbdIntrinsics) -> "Intrinsics":
        return cls(k.fx, k.fy, k.cx, k.cy, int(k.width), int(k.height))


class CaptureIntrinsics(NamedTuple):
    """The intrinsics of a capture's rectified images: ``color`` and ``depth``."""

    color: Intrinsics
    depth: Intrinsics


class AlignedPair(NamedTuple):
    """A capture's rectified color and depth on one pixel grid (:meth:`Capture.aligned`).

    Pixel ``(u, v)`` of ``color`` (H×W×3 uint8 RGB) and of ``depth`` (H×W float32 meters,
    NaN = no depth) sees the same point; ``intrinsics`` describes both.
    """

    color: np.ndarray
    depth: np.ndarray
    intrinsics: Intrinsics


class Lens(NamedTuple):
    """The calibration values :func:`rgbd.rectify_image` takes, from one capture.

    ``rgbd.rectify_image(frame, *cap.lens)`` rectifies another frame of the same camera.
    """

    reference_size: Tuple[int, int]
    distortion_center: Tuple[float, float]
    lookup_table: np.ndarray


@dataclass(frozen=True)
class Frame:
    """One frame of a scene: the vocabulary captures and scenes share.

    ``pose`` is the 4×4 camera-to-world matrix with OpenCV camera axes (x right, y down,
    z forward) in the scene's world: ``p_world = pose[:3, :3] @ p_camera + pose[:3, 3]``.
    """

    #: The frame's number in the scan (its file names, its video frame).
    index: int
    #: Seconds since the scan's first frame (None when the scan has no timestamps).
    time: Optional[float]
    #: (4, 4) float64, camera-to-world, OpenCV camera axes.
    pose: np.ndarray
    #: Intrinsics of ``color`` (at the color size).
    color_intrinsics: Intrinsics
    #: Intrinsics of ``depth`` (the same camera at the depth map's size).
    intrinsics: Intrinsics
    #: (h, w) float32 meters, NaN = no depth.
    depth: np.ndarray
    #: (h, w) uint8, ARKit confidence 0 low / 1 medium / 2 high; None when the scan has none.
    confidence: Optional[np.ndarray]
    #: (H, W, 3) uint8 RGB; None for a depth-only scene or when read without color.
    color: Optional[np.ndarray]

    def __repr__(self) -> str:
        def shape(a: Optional[np.ndarray]) -> str:
            return "None" if a is None else "×".join(str(n) for n in a.shape)
        time = "None" if self.time is None else f"{self.time:.3f} s"
        return (f"Frame(index={self.index}, time={time}, position={np.round(self.pose[:3, 3], 3).tolist()}, "
                f"depth {shape(self.depth)}, confidence {shape(self.confidence)}, color {shape(self.color)})")


@dataclass(frozen=True)
class Mesh:
    """A fused surface (:meth:`Scene.fuse`): numpy arrays in the scene's world, meters."""

    #: (N, 3) float32 vertex positions.
    vertices: np.ndarray
    #: (M, 3) uint32 vertex indices per triangle, counter-clockwise seen from the observed side.
    faces: np.ndarray
    #: (N, 3) uint8 RGB per vertex (white for a depth-only scene).
    colors: np.ndarray
    #: (N, 3) float32 unit normals per vertex, toward the observed side.
    normals: np.ndarray
    #: Where the surface comes from and how it was made (the PLY header's comments).
    comments: Tuple[str, ...] = ()
    #: The library's fusion this mesh was copied from (with its scene, for texturing), or
    #: None for a mesh made from arrays. It holds a second copy of the surface until this
    #: Mesh is garbage-collected; ``Mesh(m.vertices, m.faces, m.colors, m.normals, m.comments)``
    #: keeps the arrays alone.
    _fused: Any = field(default=None, repr=False, compare=False)

    def write(self, path: PathLike, ascii: bool = False, *, texture_size: Optional[int] = 4096,
              max_memory: Optional[int] = None) -> Optional[float]:
        """Writes the mesh to ``path`` as ``rgbd fuse`` writes it, atomically, the format by the
        extension: ``.ply`` (vertex colors, binary or with ``ascii`` ASCII, its comments in
        the header, the scene's world), and for a mesh :meth:`Scene.fuse` returned also
        ``.glb`` (glTF 2.0 binary), ``.obj`` (with ``NAME.mtl`` and ``NAME.jpg`` beside it) and
        ``.html`` (a self-contained web page of that glTF; needs three.js), those in glTF's
        axes (+Y up). A ``.glb``, ``.obj`` or ``.html`` of a scene with color is textured from
        the scene's frames (as fused, with the poses it had then) in atlases of
        ``texture_size`` pixels a side (64 to 16384; ``0`` or ``None``: vertex colors), the mesh
        first simplified within one voxel unless ``fuse`` simplified it; ``max_memory`` (MB)
        bounds the atlases (default half the machine's memory). An ``.obj`` never replaces a
        ``NAME.mtl`` or image beside it that rgbd did not write.

        Returns the textured fraction of the surface's area (0 to 1), or None for vertex colors.

        Raises:
            ValueError: another extension, arrays of the wrong shape, bad options.
            RGBDError: the file cannot be written, a face names a missing vertex, three.js
                is missing for ``.html``, a file beside an ``.obj`` is not rgbd's.
        """
        raw = encode_path(path, "path")
        name = os.fsdecode(raw).lower()
        if texture_size is not None and texture_size != 0 and not 64 <= texture_size <= 16384:
            raise ValueError("texture_size must be 64 to 16384 pixels (0 or None: vertex colors)")
        if max_memory is not None and max_memory < 1:
            raise ValueError("max_memory must be a positive number of MB (None: half the machine's memory)")
        if self._fused is not None:
            if not name.endswith((".ply", ".glb", ".obj", ".html")):
                raise ValueError(f"{os.fsdecode(raw)}: a fused mesh is written as .ply, .glb, .obj or .html")
            return self._fused.write(raw, ascii=ascii, texture_size=texture_size or 0, max_memory=max_memory or 0)
        if not name.endswith(".ply"):
            raise ValueError(f"{os.fsdecode(raw)}: a mesh made from arrays is written as .ply "
                             "(the mesh Scene.fuse returns also writes .glb, .obj and .html)")
        vertices = np.ascontiguousarray(self.vertices, np.float32)
        colors = np.ascontiguousarray(self.colors, np.uint8)
        normals = np.ascontiguousarray(self.normals, np.float32)
        faces = np.ascontiguousarray(self.faces, np.uint32)
        n = len(vertices)
        if vertices.shape != (n, 3) or colors.shape != (n, 3) or normals.shape != (n, 3) or faces.ndim != 2 \
                or faces.shape[1] != 3:
            raise ValueError("vertices, colors and normals are (N, 3) arrays and faces an (M, 3) array")
        f32, u8 = ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_uint8)
        _lib.lib().rgbd_write_mesh_ply(raw, vertices.ctypes.data_as(f32), colors.ctypes.data_as(u8),
                                       normals.ctypes.data_as(f32), n,
                                       faces.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)), len(faces),
                                       "\n".join(self.comments).encode(), int(bool(ascii)))
        return None

    def textured(self, texture_size: int = 4096, *, max_memory: Optional[int] = None) -> "TexturedMesh":
        """The mesh textured from the scene's frames as :meth:`write` textures a ``.glb``
        (simplified within one voxel first unless ``fuse`` simplified it), as arrays:
        a :class:`TexturedMesh`. ``texture_size``: the atlases' side, 64 to 16384 pixels;
        ``max_memory`` (MB) bounds them.

        Raises:
            ValueError: a mesh made from arrays (no scene to take the texture from), bad options.
            RGBDError: the scene has no color, or a frame cannot be read.
        """
        if not 64 <= texture_size <= 16384:
            raise ValueError("texture_size must be 64 to 16384 pixels")
        if max_memory is not None and max_memory < 1:
            raise ValueError("max_memory must be a positive number of MB (None: half the machine's memory)")
        if self._fused is None:
            raise ValueError("a mesh made from arrays has no scene to take a texture from: texture the mesh Scene.fuse returns")
        return self._fused.texture(texture_size=texture_size, max_memory=max_memory or 0)

    def __reduce__(self) -> Any:
        # Pickled as its arrays: the library's handle stays in this process.
        return (Mesh, (self.vertices, self.faces, self.colors, self.normals, self.comments))

    def __repr__(self) -> str:
        return f"Mesh({len(self.vertices)} vertices, {len(self.faces)} triangles)"


@dataclass(frozen=True)
class TexturedMesh:
    """A fused surface textured from the scan's frames (:meth:`Mesh.textured`): vertices split
    where charts meet, each with its position, normal and texture coordinate; triangles
    with the atlas their color comes from; the atlases. Positions in the scene's world, meters."""

    #: (N, 3) float32 vertex positions.
    vertices: np.ndarray
    #: (N, 3) float32 unit normals.
    normals: np.ndarray
    #: (N, 2) float32 texture coordinates, glTF's: (0, 0) the atlas's top-left corner, (1, 1)
    #: its bottom-right one (OBJ's v is 1 - this v).
    uvs: np.ndarray
    #: (M, 3) uint32 vertex indices per triangle, counter-clockwise seen from the observed side.
    faces: np.ndarray
    #: (M,) int32: the atlas of each triangle.
    face_atlas: np.ndarray
    #: The atlases, each an (S, S, 3) uint8 RGB image (rows top first).
    atlases: Tuple[np.ndarray, ...]
    #: The share of the surface's area colored from a frame (the rest keeps its vertex colors
    #: in the atlas).
    coverage: float

    def __repr__(self) -> str:
        side = self.atlases[0].shape[0] if self.atlases else 0
        return (f"TexturedMesh({len(self.vertices)} vertices, {len(self.faces)} triangles, "
                f"{len(self.atlases)} atlas(es) of {side} px, {100 * self.coverage:.1f} % textured)")


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


class RectifyResult(NamedTuple):
    """What :func:`rectify_files` wrote, and what ``rgbd rectify`` would have warned about."""

    #: The warnings, one line each (discarded depth markers, an aspect ratio a crop explains,
    #: a mirroring orientation ``upright`` left as stored).
    warnings: List[str]
