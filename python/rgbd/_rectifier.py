"""A reusable rectifier for the frames of one camera at one frame size (video, camera streams)."""

from __future__ import annotations

import ctypes
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from . import _lib
from ._handle import Handle
from ._image import lens_struct
from ._util import int32, pair, pointer, real

__all__ = ["Rectifier"]


def _plane(array: np.ndarray, height: int, width: int, pixel_bytes: int) -> Tuple[int, int]:
    """``(row_bytes, size)`` of an array whose rows the library can use in place, or (0, 0).

    In place means: rows at a positive stride of at least a row, each row's pixels packed.
    """
    if array.ndim not in (2, 3) or array.shape[0] != height or array.shape[1] != width:
        return 0, 0
    item = array.itemsize
    packed_pixels = array.strides[1] == pixel_bytes and (array.ndim == 2 or array.strides[2] == item)
    row_bytes = array.strides[0]
    if not packed_pixels or row_bytes < width * pixel_bytes:
        return 0, 0
    return row_bytes, (height - 1) * row_bytes + width * pixel_bytes


class Rectifier(Handle):
    """Rectifies the frames of one camera at one frame size, created once for any number of frames.

    ``rgbd.Rectifier(lens, (width, height))`` with ``lens`` a capture's :attr:`Capture.lens`
    (or any ``(reference_size, distortion_center, lookup_table)``), then call it on each
    frame: ``rectified = rectifier(frame)`` or ``rectifier(frame, out=buffer)``. Results are
    those of :func:`rgbd.rectify_image` bit for bit; the rectifier keeps the source position
    of every pixel (:attr:`bytes_held`) so a frame costs only the resampling.

    Frames: uint8 ``H×W`` (luminance, masks), ``H×W×C`` with C = 1 to 4 (2: interleaved
    CbCr; 3: RGB/BGR; 4: BGRA/RGBA), float32 ``H×W`` depth in meters (NaN = no depth, never
    blended across depth edges); NV12 with :meth:`nv12`. Arrays whose rows are strided
    (a crop of a larger array, a padded buffer) are read and written in place as long as
    each row's pixels are packed; other layouts are copied.

    Immutable and safe to call from several threads at once (ctypes releases the GIL; each
    call also spreads its rows over all cores). :meth:`close` (or a ``with`` block) releases
    the library's handle; it is also released when the object is garbage-collected.
    """

    def __init__(
        self,
        lens: Any,
        size: Sequence[int],
        max_relative_step: float = 0.05,
        *,
        max_map_bytes: int = _lib.RGBD_RECTIFIER_MAP_BYTES_DEFAULT,
    ) -> None:
        """Creates the rectifier (``rgbd_rectifier_create``).

        Args:
            lens: ``(reference_size, distortion_center, lookup_table)``, e.g. ``capture.lens``.
            size: ``(width, height)`` of the frames.
            max_relative_step: depth only, as :func:`rgbd.rectify_image`.
            max_map_bytes: the most memory kept for precomputed positions (default 64 MiB;
                0 computes them for every frame).

        Raises:
            RGBDError: the library rejected the calibration values or the size.
        """
        try:
            reference_size, distortion_center, lookup_table = lens
        except (TypeError, ValueError):
            raise ValueError("lens must be (reference_size, distortion_center, lookup_table), e.g. capture.lens") from None
        c_lens, table = lens_struct(  # table: c_lens points into it; alive until the call
            reference_size, distortion_center, lookup_table)
        width, height = pair(size, "size")
        self._width = int32(width, "width", minimum=1)
        self._height = int32(height, "height", minimum=1)
        if isinstance(max_map_bytes, bool) or not isinstance(max_map_bytes, int) or max_map_bytes < 0:
            raise ValueError(f"max_map_bytes must be a non-negative int, not {max_map_bytes!r}")
        handle = _lib.RgbdRectifierP()
        lib = _lib.lib()
        lib.rgbd_rectifier_create(ctypes.byref(c_lens), self._width, self._height,
                                  real(max_relative_step, "max_relative_step"),
                                  min(max_map_bytes, 2**63 - 1), ctypes.byref(handle))
        super().__init__(handle)
        held, cw, ch = ctypes.c_size_t(), ctypes.c_int32(), ctypes.c_int32()
        lib.rgbd_rectifier_info(handle, ctypes.byref(held), ctypes.byref(cw), ctypes.byref(ch))
        self._bytes_held = held.value
        self._chroma_size = (cw.value, ch.value)

    # ---- lifetime (rgbd._handle.Handle) ------------------------------------------------------

    _destroy_function = "rgbd_rectifier_destroy"
    _pickle_message = ("rgbd.Rectifier cannot be pickled (it wraps a handle of the C library); "
                       "create one per process")

    def _closed_message(self) -> str:
        return "the rectifier is closed"

    def __repr__(self) -> str:
        state = " (closed)" if self._closed else f", holds {self._bytes_held} bytes"
        return f"<rgbd.Rectifier {self._width}×{self._height}{state}>"

    # ---- properties ----------------------------------------------------------------------

    @property
    def size(self) -> Tuple[int, int]:
        """``(width, height)`` of the frames."""
        return self._width, self._height

    @property
    def chroma_size(self) -> Tuple[int, int]:
        """``(width, height)`` of an NV12 frame's CbCr plane: ``((width + 1) // 2, (height + 1) // 2)``."""
        return self._chroma_size

    @property
    def bytes_held(self) -> int:
        """Bytes of memory the rectifier keeps (its precomputed positions and the lens table)."""
        return self._bytes_held

    # ---- frames ------------------------------------------------------------------------

    def _layout(self, image: np.ndarray, what: str) -> int:
        """Channels of a frame (0 for float32 depth), its shape checked."""
        height, width = self._height, self._width
        if image.dtype == np.uint8:
            if image.ndim == 2:
                channels = 1
            elif image.ndim == 3 and 1 <= image.shape[2] <= 4:
                channels = image.shape[2]
            else:
                raise ValueError(f"{what}: a uint8 frame must be H×W or H×W×C with C 1 to 4, not of shape {image.shape}")
        elif image.dtype == np.float32:
            if image.ndim != 2:
                raise ValueError(f"{what}: a float32 depth map must be H×W, not of shape {image.shape}")
            channels = 0
        else:
            raise ValueError(f"{what} must be uint8 (1 to 4 channels) or float32 depth, not {image.dtype}")
        if image.shape[:2] != (height, width):
            raise ValueError(f"{what} is {image.shape[1]}×{image.shape[0]} (W×H), the rectifier is for {width}×{height}")
        return channels

    @staticmethod
    def _source(image: np.ndarray, height: int, width: int, pixel_bytes: int) -> Tuple[np.ndarray, int, int]:
        """The frame as the library reads it, copied only if its rows are not usable in place."""
        row_bytes, size = _plane(image, height, width, pixel_bytes)
        if not row_bytes:
            image = np.ascontiguousarray(image)
            row_bytes, size = _plane(image, height, width, pixel_bytes)
        return image, row_bytes, size

    @staticmethod
    def _destination(out: Optional[np.ndarray], shape: Tuple[int, ...], dtype: Any, pixel_bytes: int,
                     what: str) -> Tuple[np.ndarray, int, int]:
        """``out`` checked (shape, dtype, writable, rows usable in place) or a new array."""
        if out is None:
            out = np.empty(shape, dtype=dtype)
        elif not isinstance(out, np.ndarray):
            raise TypeError(f"{what} must be a numpy.ndarray, not {type(out).__name__}")
        if out.dtype != np.dtype(dtype) or out.shape != tuple(shape):
            raise ValueError(f"{what} must be {np.dtype(dtype)} of shape {tuple(shape)}, not {out.dtype} {out.shape}")
        if not out.flags.writeable:
            raise ValueError(f"{what} must be writable")
        row_bytes, size = _plane(out, shape[0], shape[1], pixel_bytes)
        if not row_bytes:
            raise ValueError(f"{what} must have rows at a positive stride with each row's pixels packed "
                             f"(strides {out.strides})")
        return out, row_bytes, size

    def __call__(self, image: Any, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Rectifies one frame; returns a new array or ``out`` (same shape and dtype, not
        overlapping ``image``; strided rows allowed)."""
        if not isinstance(image, np.ndarray):
            image = np.asarray(image)
        channels = self._layout(image, "image")
        height, width = self._height, self._width
        pixel_bytes = channels or 4
        source, src_row, src_size = self._source(image, height, width, pixel_bytes)
        result, dst_row, dst_size = self._destination(out, image.shape, image.dtype, pixel_bytes, "out")
        lib = _lib.lib()
        with self._use() as handle:
            if channels:
                lib.rgbd_rectifier_apply_u8(handle, channels, pointer(source, ctypes.c_uint8), src_row, src_size,
                                            pointer(result, ctypes.c_uint8), dst_row, dst_size)
            else:
                lib.rgbd_rectifier_apply_f32(handle, pointer(source, ctypes.c_float), src_row, src_size,
                                             pointer(result, ctypes.c_float), dst_row, dst_size)
        return result

    def nv12(
        self,
        y: Any,
        cbcr: Optional[Any] = None,
        *,
        out_y: Optional[np.ndarray] = None,
        out_cbcr: Optional[np.ndarray] = None,
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Rectifies an NV12 frame (``420v``/``420f``) in one call, without converting it to RGB.

        Args:
            y: the luminance plane, uint8 ``H×W``; or, with ``cbcr`` None, the whole frame as
                one uint8 array of ``H + (H + 1)//2`` rows of W bytes (Y rows then CbCr rows,
                as ``ffmpeg -pix_fmt nv12`` writes it; W even).
            cbcr: the chroma plane, uint8 ``(H+1)//2 × (W+1)//2 × 2`` (Cb, Cr).
            out_y, out_cbcr: optional planes to write into (strided rows allowed).

        Chroma sample ``(i, j)`` stands for the luminance-grid point ``(2i, 2j + 1/2)``
        (left-sited, ``kCVImageBufferChromaLocation_Left``), so the chroma plane is
        rectified with the same lens seen on its own grid.

        Returns:
            ``(y, cbcr)``: the rectified planes (``out_y``/``out_cbcr`` if given).
        """
        height, width = self._height, self._width
        cw, ch = self._chroma_size
        y = y if isinstance(y, np.ndarray) else np.asarray(y)
        if cbcr is None:
            if width % 2 or y.dtype != np.uint8 or y.shape != (height + ch, width):
                raise ValueError(f"a whole NV12 frame must be uint8 of shape ({height + ch}, {width}) "
                                 f"(an even width), not {y.dtype} {y.shape}; or pass the planes apart")
            y, cbcr = y[:height], y[height:].reshape(ch, cw, 2)
        cbcr = cbcr if isinstance(cbcr, np.ndarray) else np.asarray(cbcr)
        if y.dtype != np.uint8 or y.shape != (height, width):
            raise ValueError(f"y must be uint8 of shape ({height}, {width}), not {y.dtype} {y.shape}")
        if cbcr.dtype != np.uint8 or cbcr.shape != (ch, cw, 2):
            raise ValueError(f"cbcr must be uint8 of shape ({ch}, {cw}, 2), not {cbcr.dtype} {cbcr.shape}")
        ys, ys_row, ys_size = self._source(y, height, width, 1)
        cs, cs_row, cs_size = self._source(cbcr, ch, cw, 2)
        yd, yd_row, yd_size = self._destination(out_y, (height, width), np.uint8, 1, "out_y")
        cd, cd_row, cd_size = self._destination(out_cbcr, (ch, cw, 2), np.uint8, 2, "out_cbcr")
        u8 = ctypes.c_uint8
        with self._use() as handle:
            _lib.lib().rgbd_rectifier_apply_nv12(
                handle, pointer(ys, u8), ys_row, ys_size, pointer(cs, u8), cs_row, cs_size,
                pointer(yd, u8), yd_row, yd_size, pointer(cd, u8), cd_row, cd_size)
        return yd, cd
