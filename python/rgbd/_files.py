"""Writing ``rgbd rectify``'s output files from Python (``rgbd_rectify_files``)."""

from __future__ import annotations

import ctypes
from typing import Optional

from . import _lib
from ._types import RectifyResult
from ._util import PathLike, encode_path, real

_ALIGN = {None: _lib.RGBD_ALIGN_NONE, "depth": _lib.RGBD_ALIGN_DEPTH, "color": _lib.RGBD_ALIGN_COLOR}


def rectify_files(
    json_path: PathLike,
    directory: PathLike,
    image_path: Optional[PathLike] = None,
    *,
    align_to: Optional[str] = None,
    upright: bool = False,
    crop_valid: bool = False,
    small_png: bool = False,
    max_blend_step: float = 0.05,
    max_valid_depth: float = 1000.0,
) -> RectifyResult:
    """Does what ``rgbd rectify`` does for one capture: writes into ``directory``
    ``NAME.color.png``, ``NAME.depth.png`` (16-bit millimeters), ``NAME.depth.tiff``
    (float32 meters), ``NAME.intrinsics.json`` (the sidecar, with a Portrait photo's
    ``depth_accuracy``) and a Portrait photo's ``NAME.matte.png``, all or none.

    Args:
        json_path: the capture's JSON, or a Portrait photo (a capture by itself).
        directory: where the files go (created if missing).
        image_path: the photo, if not the one beside the JSON.
        align_to: ``"depth"`` or ``"color"``: color and depth (and matte) pixel-aligned at
            the depth map's or the photo's size (``--align-to``); None: each at its own size.
        upright: turn outputs and intrinsics as the photo asks to be shown (``--upright``).
        crop_valid: crop to the largest rectangle of valid pixels (``--crop valid``).
        small_png: smaller, much slower PNGs (``--small-png``).
        max_blend_step: rectification's relative depth step (``--max-blend-step``).
        max_valid_depth: meters; deeper values are no depth (``--max-valid-depth``).

    Raises:
        RGBDError: as :func:`load_capture`, or a file cannot be written.
        ValueError: ``align_to`` is not None, ``"depth"`` or ``"color"``.
    """
    if align_to not in _ALIGN:
        raise ValueError(f"align_to must be None, 'depth' or 'color', not {align_to!r}")
    options = _lib.RgbdRectifyOptions()
    _lib.lib().rgbd_rectify_options_default(ctypes.byref(options))
    options.align_to = _ALIGN[align_to]
    options.upright = 1 if upright else 0
    options.crop_valid = 1 if crop_valid else 0
    options.small_png = 1 if small_png else 0
    options.max_blend_step = real(max_blend_step, "max_blend_step")
    options.max_valid_depth = real(max_valid_depth, "max_valid_depth")
    warnings = ctypes.c_char_p()
    _lib.lib().rgbd_rectify_files(
        encode_path(json_path, "json_path"),
        None if image_path is None else encode_path(image_path, "image_path"),
        encode_path(directory, "directory"),
        ctypes.byref(options),
        ctypes.byref(warnings),
    )
    text = (warnings.value or b"").decode("utf-8", errors="replace")
    return RectifyResult(warnings=[line for line in text.split("\n") if line])
