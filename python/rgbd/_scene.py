"""Scenes: scans of many frames with poses (Stray Scanner, Record3D), through rgbd.h's rgbd_scene_*."""

from __future__ import annotations

import ctypes
import math
import os
from typing import Any, Iterator, Optional, Sequence, Tuple, Union, overload

import numpy as np

from . import _lib
from ._handle import Handle
from ._tags import family_code, size_meters
from ._types import Frame, Intrinsics, Mesh, TexturedMesh
from ._util import PathLike, encode_path, frame_constant

__all__ = ["Scene", "load_scene", "register"]


class Scene(Handle):
    """A scan opened by :func:`load_scene`: ``len(scene)`` frames (those with depth and a
    pose), iterated in order (each read once: a video is decoded in one pass) or indexed
    (``scene[i]``, ``scene[-1]``; sought when out of order).

    A scene keeps its place in the scan, so it is for one thread at a time (calls are
    serialized by a lock). Close it with :meth:`close` or a ``with`` block.
    """

    def __init__(self, handle: Any, path: str) -> None:
        super().__init__(handle)
        #: The scan's path.
        self.path = path
        count = ctypes.c_size_t()
        cw, ch, dw, dh = (ctypes.c_int32() for _ in range(4))
        _lib.lib().rgbd_scene_info(handle, ctypes.byref(count), ctypes.byref(cw), ctypes.byref(ch),
                                   ctypes.byref(dw), ctypes.byref(dh))
        self._count = count.value
        #: ``(width, height)`` of color frames, None for a depth-only scene.
        self.color_size: Optional[Tuple[int, int]] = (cw.value, ch.value) if cw.value > 0 else None
        #: ``(width, height)`` of depth maps.
        self.depth_size: Tuple[int, int] = (dw.value, dh.value)

    # ---- lifetime (rgbd._handle.Handle): calls one at a time ---------------------------------

    _destroy_function = "rgbd_scene_destroy"
    _serialized = True
    _pickle_message = ("rgbd.Scene cannot be pickled (it wraps a handle of the C library); "
                       "pass the scan's path to the worker and open it there")

    def _closed_message(self) -> str:
        return "the scene is closed"

    def __len__(self) -> int:
        return self._count

    def _position(self, i: int) -> int:
        if not isinstance(i, (int, np.integer)):
            raise TypeError(f"frame indices are integers, not {type(i).__name__}")
        j = int(i) + (self._count if i < 0 else 0)
        if not 0 <= j < self._count:
            raise IndexError(f"frame {i} of a scene of {self._count} frames")
        return j

    def pose(self, i: int) -> np.ndarray:
        """Frame ``i``'s 4×4 camera-to-world pose (OpenCV camera axes), without reading pixels."""
        return self._info(self._position(i))[2]

    def _info(self, j: int) -> Tuple[int, Optional[float], np.ndarray, Intrinsics, Intrinsics]:
        info = _lib.RgbdFrameInfo()
        with self._use() as handle:
            _lib.lib().rgbd_scene_frame_info(handle, j, ctypes.byref(info))
        pose = np.array(info.pose[:], dtype=np.float64).reshape(4, 4)
        time = None if math.isnan(info.time) else float(info.time)
        return int(info.index), time, pose, Intrinsics._from_c(info.color), Intrinsics._from_c(info.depth)

    def frame(self, i: int, color: bool = True) -> Frame:
        """Frame ``i`` with its pixels (``color=False`` skips decoding the color frame)."""
        j = self._position(i)
        index, time, pose, color_k, depth_k = self._info(j)
        dw, dh = self.depth_size
        depth = np.empty((dh, dw), np.float32)
        confidence = np.empty((dh, dw), np.uint8)
        rgb = None
        if color and self.color_size is not None:
            cw, ch = self.color_size
            rgb = np.empty((ch, cw, 3), np.uint8)
        f32, u8 = ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_uint8)
        with self._use() as handle:
            _lib.lib().rgbd_scene_read_frame(
                handle, j, depth.ctypes.data_as(f32), depth.size, confidence.ctypes.data_as(u8), confidence.size,
                None if rgb is None else rgb.ctypes.data_as(u8), 0 if rgb is None else rgb.size)
        has_confidence = not bool((confidence == 255).all())
        return Frame(index, time, pose, color_k, depth_k, depth, confidence if has_confidence else None, rgb)

    @overload
    def __getitem__(self, i: int) -> Frame: ...

    @overload
    def __getitem__(self, i: slice) -> list: ...

    def __getitem__(self, i: Union[int, slice]) -> Union[Frame, list]:
        if isinstance(i, slice):
            return [self.frame(j) for j in range(*i.indices(self._count))]
        return self.frame(i)

    def __iter__(self) -> Iterator[Frame]:
        for j in range(self._count):
            yield self.frame(j)

    def export(self, directory: PathLike, format: str = "nerfstudio", *, every: int = 1,
               max_frames: Optional[int] = None, sharpest: bool = False, image_format: Optional[str] = None,
               jpeg_quality: int = 93, downscale: int = 1, min_confidence: int = 2, text: bool = False,
               overwrite: bool = False, frame: str = "camera", depth_size: Optional[str] = None) -> int:
        """Exports the scene into the folder ``directory`` in a trainer's or reconstruction
        system's layout (as ``rgbd export``; docs/export.md) and returns the number of
        frames exported.

        ``format``: ``"nerfstudio"``, ``"colmap"``, ``"3dgs"``, ``"open3d"`` or ``"tum"``.
        Frames: ``every`` N-th, at most ``max_frames`` spread evenly, or with ``sharpest``
        the sharpest of each window. ``image_format``: ``"jpeg"`` or ``"png"`` (None: PNG
        for tum, JPEG otherwise); ``downscale`` shrinks the images by a whole factor;
        depth below ``min_confidence`` is written as unknown; ``text`` writes COLMAP
        models as text. The folder is written whole or not at all; one that is not empty
        is refused, and ``overwrite`` replaces only a folder an earlier export wrote (never
        the scan or a folder holding it). ``frame``: ``"camera"`` keeps the scene's world,
        ``"level"`` turns a gravity-aligned world (Stray Scanner's, a Record3D file's that
        ``rgbd info`` calls so) to z up; a scene of
        registered captures also takes ``"level"`` and ``"enu"`` from its photos' EXIF
        (docs/geo.md). ``depth_size``: nerfstudio's depth images at ``"sensor"`` size (the
        depth map's, the default; nerfstudio resizes them as it loads them) or ``"image"``
        size (the color images'); None = the layout's own.

        Raises:
            RGBDError: bad options, a destination that is a file or a folder that is not
                empty, a frame that cannot be read, or a failed write (the message names it).
        """
        options = _lib.RgbdExportOptions()
        _lib.lib().rgbd_export_options_default(ctypes.byref(options))
        images = {None: _lib.RGBD_EXPORT_IMAGES_DEFAULT, "jpeg": _lib.RGBD_EXPORT_IMAGES_JPEG,
                  "png": _lib.RGBD_EXPORT_IMAGES_PNG}
        if image_format not in images:
            raise ValueError(f"image_format is 'jpeg', 'png' or None, not {image_format!r}")
        options.every = every
        options.max_frames = max_frames or 0
        options.sharpest = int(bool(sharpest))
        options.image_format = images[image_format]
        options.jpeg_quality = jpeg_quality
        options.downscale = downscale
        options.min_confidence = min_confidence
        options.colmap_text = int(bool(text))
        options.overwrite = int(bool(overwrite))
        options.frame = frame_constant(frame)
        depths = {None: _lib.RGBD_EXPORT_DEPTH_DEFAULT, "sensor": _lib.RGBD_EXPORT_DEPTH_SENSOR,
                  "image": _lib.RGBD_EXPORT_DEPTH_IMAGE}
        if depth_size not in depths:
            raise ValueError(f"depth_size is 'sensor', 'image' or None, not {depth_size!r}")
        options.depth_size = depths[depth_size]
        frames = ctypes.c_size_t()
        raw = encode_path(directory, "directory")
        with self._use() as handle:
            _lib.lib().rgbd_scene_export(handle, raw, format.encode(), ctypes.byref(options),
                                         ctypes.byref(frames))
        return frames.value

    def fuse(self, voxel: Optional[float] = None, trunc: Optional[float] = None, min_depth: float = 0.0,
             max_depth: float = math.inf, min_confidence: int = 2, keep_edges: bool = False,
             flying_pixel_step: float = 0.05, every: int = 1, min_fragment: int = 0,
             max_memory: Optional[int] = None, frame: str = "camera", *,
             min_weight: Optional[float] = None, triangles: Optional[int] = None,
             max_error: Optional[float] = None,
             edge_threshold: Optional[float] = None, max_memory_mb: Optional[int] = None) -> Mesh:
        """Fuses the scene's frames into one surface, as ``rgbd fuse`` does (docs/fuse.md):
        a TSDF volume on a sparse block hash (``voxel`` meters, truncation ``trunc``,
        default 4 voxels), then marching cubes. Without ``voxel`` the library chooses it from
        the scene's depth (a depth pixel's width at the median depth, 0.002 to 0.02 m: about
        2 mm for an object at 30 cm, 1 cm for a room); the mesh's ``comments`` say which and why.

        Returns a :class:`Mesh` of numpy arrays in the scene's world. Depth is used when its
        confidence is at least ``min_confidence`` (0..2, default 2: high only), it lies within
        ``min_depth``..``max_depth`` and it passes the flying-pixel filter
        (``flying_pixel_step``; ``keep_edges`` turns it off); ``every`` takes every N-th frame,
        ``min_fragment`` drops pieces of fewer triangles, ``max_memory`` (MB) bounds the
        TSDF volume (default half the machine's memory; frames and the mesh take more).
        A voxel is meshed when the depths it saw weigh at least ``min_weight`` full-weight
        views (default (0.003 m / voxel)², as ``rgbd fuse``'s ``--min-weight``; 0 meshes every
        observed voxel; docs/fuse.md). ``triangles`` (a count) and ``max_error`` (meters)
        simplify the mesh as ``--triangles`` and ``--max-error`` do (both: whichever stops
        first); the comments then say from how many triangles and with what error.
        The names are ``rgbd fuse``'s options; ``edge_threshold`` and ``max_memory_mb``, their
        earlier names, are still taken. The mesh writes itself (:meth:`Mesh.write`) as
        ``rgbd fuse`` writes it, header comments included. ``frame="level"`` fuses a gravity-aligned
        scene (Stray Scanner's, a Record3D file's that ``rgbd info`` calls so) with z up, the volume's axes level; a scene of registered
        captures also takes ``"level"`` and ``"enu"`` from its photos' EXIF (docs/geo.md).

        Raises:
            RGBDError: bad options, an unreadable frame, a frame beyond the volume's reach or
                one that would exceed the memory budget (the message names it).
        """
        lib = _lib.lib()
        options = _lib.RgbdFuseOptions()
        lib.rgbd_fuse_options_default(ctypes.byref(options))
        options.voxel = 0.0 if voxel is None else voxel
        options.trunc = 0.0 if trunc is None else trunc
        options.min_depth = min_depth
        options.max_depth = max_depth
        options.min_confidence = min_confidence
        options.keep_edges = 1 if keep_edges else 0
        if edge_threshold is not None:
            flying_pixel_step = edge_threshold
        if max_memory_mb is not None:
            max_memory = max_memory_mb
        options.edge_threshold = flying_pixel_step
        options.every = every
        options.min_fragment = min_fragment
        options.max_memory_mb = 0 if max_memory is None else max_memory
        options.frame = frame_constant(frame)
        options.min_weight = -1.0 if min_weight is None else min_weight
        options.triangles = 0 if triangles is None else triangles
        options.max_error = 0.0 if max_error is None else max_error
        if min_weight is not None and not min_weight >= 0:
            raise ValueError("min_weight must be 0 or more full-weight views (None: the default)")
        if triangles is not None and triangles < 1:
            raise ValueError("triangles must be at least 1 (None: no count)")
        if max_error is not None and not max_error > 0:
            raise ValueError("max_error must be a positive distance in meters (None: no bound)")
        mesh = _lib.RgbdMeshP()
        with self._use() as handle:
            lib.rgbd_scene_fuse(handle, ctypes.byref(options), ctypes.byref(mesh))
        fused = _FusedMesh(mesh)
        with fused._use() as mesh:
            vertices, faces = ctypes.c_size_t(), ctypes.c_size_t()
            lib.rgbd_mesh_counts(mesh, ctypes.byref(vertices), ctypes.byref(faces))
            nv, nf = vertices.value, faces.value
            positions = np.empty((nv, 3), np.float32)
            colors = np.empty((nv, 3), np.uint8)
            normals = np.empty((nv, 3), np.float32)
            triangles = np.empty((nf, 3), np.uint32)
            f32, u8 = ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_uint8)
            lib.rgbd_mesh_copy(mesh, positions.ctypes.data_as(f32), colors.ctypes.data_as(u8),
                               normals.ctypes.data_as(f32), nv,
                               triangles.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)), nf)
            length = ctypes.c_size_t()
            lib.rgbd_mesh_comments(mesh, None, 0, ctypes.byref(length))
            text = ctypes.create_string_buffer(length.value + 1)
            lib.rgbd_mesh_comments(mesh, text, length.value + 1, ctypes.byref(length))
        comments = tuple(text.value.decode("utf-8", errors="replace").split("\n")) if length.value else ()
        return Mesh(positions, triangles, colors, normals, comments, fused)

    def refine(self, voxel: Optional[float] = None, min_depth: float = 0.0, max_depth: float = math.inf,
               min_confidence: int = 2, max_memory: Optional[int] = None) -> Tuple[np.ndarray, dict]:
        """Refines the scene's camera poses against its depth, as ``rgbd refine`` does
        (docs/cli.md): each frame aligned to the surface fused from the frames before it,
        started from the recorded motion, which is kept where the depth leaves a direction
        free. The scene keeps its poses; give the result to :meth:`set_poses` (or
        :func:`load_scene`'s ``poses``) to use them.

        Returns ``(poses, report)``: an ``(N, 4, 4)`` float64 array of camera-to-world poses
        (OpenCV camera axes, the scene's world) in frame order, and a dict with ``frames``,
        ``tracked``, ``undecided`` (frames where the recorded motion was kept in some
        direction), ``corrected`` (jumps undone), ``residual_before``, ``residual_after``
        (median distances of the depth to the model, meters), ``voxel`` and ``truncation``.

        Raises:
            RGBDError: bad options, a scene of fewer than two frames, an unreadable frame.
        """
        lib = _lib.lib()
        options = _lib.RgbdRefineOptions()
        lib.rgbd_refine_options_default(ctypes.byref(options))
        options.voxel = 0.0 if voxel is None else voxel
        options.min_depth = min_depth
        options.max_depth = max_depth
        options.min_confidence = min_confidence
        options.max_memory_mb = 0 if max_memory is None else max_memory
        report = _lib.RgbdRefineReport()
        with self._use() as handle:
            poses = np.empty((self._count, 4, 4), np.float64)
            lib.rgbd_scene_refine(handle, ctypes.byref(options), poses.ctypes.data_as(_lib.c_double_p), self._count,
                                  ctypes.byref(report))
        return poses, {name: getattr(report, name) for name, _ in report._fields_}

    def set_poses(self, poses: Union[np.ndarray, PathLike], source: Optional[str] = None) -> int:
        """Uses other camera poses for this scene from now on: an ``(N, 4, 4)`` array (one
        camera-to-world pose per frame, OpenCV camera axes, as :meth:`refine` returns), or
        the path of a trajectory file (TUM format, as ``rgbd refine`` writes it), matched to
        the frames by time; frames without a pose in the file are left out (``len(scene)``
        drops). What is made from the scene says where its poses came from (``source``).

        Returns the number of frames left out (0 for an array).

        Raises:
            RGBDError: a file that matches no frame or is malformed (the message names the
                file and line); an array of another length, a non-finite number or a
                rotation that is not one.
        """
        lib = _lib.lib()
        missing = ctypes.c_size_t(0)
        with self._use() as handle:
            if isinstance(poses, np.ndarray):
                array = np.ascontiguousarray(poses, dtype=np.float64)
                if array.ndim != 3 or array.shape[1:] != (4, 4):
                    raise ValueError(f"poses must be an (N, 4, 4) array, not {array.shape}")
                lib.rgbd_scene_set_poses(handle, array.ctypes.data_as(_lib.c_double_p), array.shape[0],
                                         None if source is None else source.encode())
            else:
                lib.rgbd_scene_load_poses(handle, encode_path(poses, "poses"), ctypes.byref(missing))
            count = ctypes.c_size_t()
            lib.rgbd_scene_info(handle, ctypes.byref(count), None, None, None, None)
            self._count = count.value
        return missing.value

    def __repr__(self) -> str:
        return f"Scene({self.path!r}, {self._count} frames, color {self.color_size}, depth {self.depth_size})"


class _FusedMesh(Handle):
    """The library's fusion behind a :class:`Mesh` (``rgbd_mesh``): what writes it as
    ``rgbd fuse`` does, textured from the scene it was fused from."""

    _destroy_function = "rgbd_mesh_destroy"
    _pickle_message = "a fused mesh's library handle cannot be pickled: pickle its arrays"

    def _closed_message(self) -> str:
        return "the fused mesh's library handle is closed"

    def write(self, raw: bytes, *, ascii: bool, texture_size: int, max_memory: int) -> Optional[float]:
        """``rgbd_mesh_write``: the textured fraction of the area, or None for vertex colors."""
        lib = _lib.lib()
        options = _lib.RgbdMeshWriteOptions()
        lib.rgbd_mesh_write_options_default(ctypes.byref(options))
        options.texture_size = texture_size
        options.ascii = 1 if ascii else 0
        options.max_memory_mb = max_memory
        textured = ctypes.c_double()
        with self._use() as handle:
            lib.rgbd_mesh_write(handle, raw, ctypes.byref(options), ctypes.byref(textured))
        return None if textured.value < 0 else textured.value

    def texture(self, *, texture_size: int, max_memory: int) -> TexturedMesh:
        """``rgbd_mesh_texture``, its arrays copied out."""
        lib = _lib.lib()
        options = _lib.RgbdMeshWriteOptions()
        lib.rgbd_mesh_write_options_default(ctypes.byref(options))
        options.texture_size = texture_size
        options.max_memory_mb = max_memory
        out = _lib.RgbdTexturedMeshP()
        with self._use() as handle:
            lib.rgbd_mesh_texture(handle, ctypes.byref(options), ctypes.byref(out))
        try:
            counts = [ctypes.c_size_t() for _ in range(4)]
            coverage = ctypes.c_double()
            lib.rgbd_textured_mesh_counts(out, *(ctypes.byref(c) for c in counts), ctypes.byref(coverage))
            nv, nf, na, side = (c.value for c in counts)
            vertices = np.empty((nv, 3), np.float32)
            normals = np.empty((nv, 3), np.float32)
            uvs = np.empty((nv, 2), np.float32)
            faces = np.empty((nf, 3), np.uint32)
            face_atlas = np.empty(nf, np.int32)
            f32 = ctypes.POINTER(ctypes.c_float)
            lib.rgbd_textured_mesh_copy(out, vertices.ctypes.data_as(f32), normals.ctypes.data_as(f32),
                                        uvs.ctypes.data_as(f32), nv, faces.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)),
                                        face_atlas.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)), nf)
            atlases = []
            for k in range(na):
                atlas = np.empty((side, side, 3), np.uint8)
                lib.rgbd_textured_mesh_atlas(out, k, atlas.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), atlas.nbytes)
                atlases.append(atlas)
        finally:
            lib.rgbd_textured_mesh_destroy(out)
        return TexturedMesh(vertices, normals, uvs, faces, face_atlas, tuple(atlases), coverage.value)


def load_scene(path: PathLike, poses: Union[None, np.ndarray, PathLike] = None) -> Scene:
    """Opens a scan as a scene: a Stray Scanner folder, a Record3D ``.r3d`` file or its
    EXR + JPG export folder, recognised by content. ``poses`` (an ``(N, 4, 4)`` array or a
    trajectory file) replaces the scan's own poses (:meth:`Scene.set_poses`).

    Raises:
        RGBDError: not a scan rgbd reads, or a malformed one (the message names the file
            and frame); status ``Status.INVALID_SCENE`` for a scan's own errors.
    """
    raw = encode_path(path, "path")
    out = _lib.RgbdSceneP()
    _lib.lib().rgbd_scene_open(raw, ctypes.byref(out))
    scene = Scene(out, os.fsdecode(raw))
    if poses is not None:
        try:
            scene.set_poses(poses)
        except BaseException:
            scene.close()
            raise
    return scene


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
    _lib.lib().rgbd_register(array, len(paths), family_code(family), size_meters(tag_size), origin,
                             1 if metric_from_tags else 0, out, ctypes.byref(registered))
    return load_scene(os.fsdecode(out))
