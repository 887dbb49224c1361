"""Tests of rgbd.Rectifier (issue 11: camera frames at video rate) against the real library.

What is checked: every frame layout equals rgbd.rectify_image bit for bit (1 to 4
channels, float32 depth with holes), strided numpy views read and written in place with
the bytes around them untouched, NV12 luminance equal to rectify_image and chroma equal
to a numpy bilinear resampling at the documented (left-sited) chroma positions, bad
arguments raising, 4 threads on one rectifier, the C example (Examples/c/rectify_nv12.c)
against the Python results, and the video example (Examples/python/rectify_video.py) on a
tiny generated lossless video.
"""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

import rgbd

REPO = Path(__file__).resolve().parents[2]
PYTHON_DIR = REPO / "python"

HEADER = REPO / "Sources" / "CRGBD" / "include" / "rgbd.h"
SAMPLE = REPO / "Examples" / "sample" / "shot.json"


@pytest.fixture(scope="module")
def lens():
    try:
        rgbd.library_version()
    except rgbd.LibraryNotFoundError as error:
        pytest.fail(f"the rgbd library is not available: {error}", pytrace=False)
    with rgbd.load_capture(str(SAMPLE)) as capture:
        return capture.lens


def random_frame(shape, seed, dtype=np.uint8):
    rng = np.random.default_rng(seed)
    if dtype == np.uint8:
        return rng.integers(0, 256, shape, dtype=np.uint8)
    depth = rng.uniform(0.4, 4.0, shape).astype(np.float32)
    depth[shape[0] // 3:shape[0] // 3 + 9, shape[1] // 2:shape[1] // 2 + 13] = np.nan   # a hole
    return depth


@pytest.mark.parametrize("size", [(640, 480), (333, 251)])
@pytest.mark.parametrize("layout", ["HxW", "HxWx1", "HxWx3", "HxWx4", "depth"])
def test_equals_rectify_image_bit_for_bit(lens, size, layout):
    width, height = size
    shape = {"HxW": (height, width), "HxWx1": (height, width, 1), "HxWx3": (height, width, 3),
             "HxWx4": (height, width, 4), "depth": (height, width)}[layout]
    frame = random_frame(shape, seed=width + len(layout), dtype=np.float32 if layout == "depth" else np.uint8)
    expected = rgbd.rectify_image(frame, *lens)
    with rgbd.Rectifier(lens, size) as rectifier:
        got = rectifier(frame)
        again = rectifier(frame, out=np.empty_like(frame))
    with rgbd.Rectifier(lens, size, max_map_bytes=0) as on_the_fly:
        computed = on_the_fly(frame)
    assert got.shape == frame.shape and got.dtype == frame.dtype
    assert np.array_equal(got, expected, equal_nan=True)
    assert np.array_equal(again, expected, equal_nan=True)
    assert np.array_equal(computed, expected, equal_nan=True)
    assert not np.array_equal(got, frame, equal_nan=True)          # the lens does move pixels
    if layout == "depth":
        assert np.isnan(got).any() and np.isfinite(got).mean() > 0.9


def test_two_channels_are_two_independent_planes(lens):
    # Interleaved CbCr: each channel is what rectify_image makes of it alone.
    frame = random_frame((240, 320, 2), seed=3)
    with rgbd.Rectifier(lens, (320, 240)) as rectifier:
        got = rectifier(frame)
    for k in range(2):
        assert np.array_equal(got[..., k], rgbd.rectify_image(np.ascontiguousarray(frame[..., k]), *lens))


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_strided_views_in_place_and_untouched_surroundings(lens, channels):
    width, height = 301, 203
    big = random_frame((height + 11, width + 17, channels), seed=channels)
    view = big[4:4 + height, 9:9 + width]                    # rows strided, pixels packed
    if channels == 1:
        view = view[..., 0].copy(order="C")                  # a 2-D plane...
        padded = np.zeros((height + 3, width + 29), np.uint8)
        padded[:height, :width] = view
        view = padded[:height, :width]                       # ...with padded rows
    expected = rgbd.rectify_image(np.ascontiguousarray(view), *lens)
    out_shape = (height + 6, width + 10) + ((channels,) if channels > 1 else ())
    canvas = np.full(out_shape, 77, np.uint8)
    target = canvas[3:3 + height, 5:5 + width]
    assert not target.flags.c_contiguous
    with rgbd.Rectifier(lens, (width, height)) as rectifier:
        result = rectifier(view, out=target)
    assert result is target
    assert np.array_equal(target, expected)
    mask = np.ones(canvas.shape[:2], bool)
    mask[3:3 + height, 5:5 + width] = False
    assert (canvas[mask] == 77).all()                        # nothing written around it
    # A view whose pixels are not packed is copied for reading, refused as out.
    with rgbd.Rectifier(lens, (width, height)) as rectifier:
        flipped = np.ascontiguousarray(view)[:, ::-1]
        assert np.array_equal(rectifier(flipped), rgbd.rectify_image(np.ascontiguousarray(flipped), *lens))
        with pytest.raises(ValueError):
            rectifier(view, out=np.empty_like(np.ascontiguousarray(view))[:, ::-1])


def chroma_reference(cbcr, lens, width, height, siting_x=0.0):
    """The CbCr plane resampled in float64 at the documented positions: chroma sample (i, j)
    is the luminance-grid point (2i, 2j + 1/2); the frame's lens (scaled to width × height)
    moves it to q, which is chroma-plane point (q.x / 2, (q.y − 1/2) / 2); bilinear there,
    black outside. siting_x = 1/2 gives centered chroma instead (2i + 1/2)."""
    (ref_w, ref_h), (cx, cy), table = lens
    table = np.asarray(table, np.float64)
    cx, cy = cx * width / ref_w, cy * height / ref_h
    r_max = np.hypot(max(cx, width - cx), max(cy, height - cy))
    ch, cw = cbcr.shape[:2]
    j, i = np.mgrid[0:ch, 0:cw].astype(np.float64)
    px, py = 2 * i + siting_x, 2 * j + 0.5
    dx, dy = px - cx, py - cy
    t = np.hypot(dx, dy) * (len(table) - 1) / r_max
    k = np.minimum(np.floor(t).astype(int), len(table) - 2)
    mag = np.where(t < len(table) - 1, table[k] + (t - k) * (table[k + 1] - table[k]), table[-1])
    sx, sy = (cx + dx * (1 + mag) - siting_x) / 2, (cy + dy * (1 + mag) - 0.5) / 2
    x0, y0 = np.floor(sx).astype(int), np.floor(sy).astype(int)
    ax, ay = (sx - x0)[..., None], (sy - y0)[..., None]
    out = np.zeros(cbcr.shape, np.float64)
    for ddx, ddy, w in [(0, 0, (1 - ax) * (1 - ay)), (1, 0, ax * (1 - ay)), (0, 1, (1 - ax) * ay), (1, 1, ax * ay)]:
        xs, ys = x0 + ddx, y0 + ddy
        inside = (xs >= 0) & (xs < cw) & (ys >= 0) & (ys < ch)
        out += np.where(inside[..., None], w * cbcr[np.clip(ys, 0, ch - 1), np.clip(xs, 0, cw - 1)], 0)
    return out


@pytest.mark.parametrize("size", [(640, 480), (321, 239)])
def test_nv12_planes(lens, size):
    width, height = size
    with rgbd.Rectifier(lens, size) as rectifier:
        cw, ch = rectifier.chroma_size
        assert (cw, ch) == ((width + 1) // 2, (height + 1) // 2)
        y = random_frame((height, width), seed=1)
        # A smooth chroma plane (resampling differences then stay within rounding).
        jj, ii = np.mgrid[0:ch, 0:cw]
        cbcr = np.stack([128 + 100 * np.sin(ii / 7.0) * np.cos(jj / 5.0), 128 + 90 * np.cos((ii + jj) / 9.0)],
                        axis=-1).round().astype(np.uint8)
        out_y, out_c = rectifier.nv12(y, cbcr)
        assert np.array_equal(out_y, rgbd.rectify_image(y, *lens))
        reference = chroma_reference(cbcr, lens, width, height)
        diff = np.abs(out_c.astype(np.float64) - reference)
        assert diff.max() <= 1.5 and diff.mean() < 0.3, (diff.max(), diff.mean())
        # One buffer as ffmpeg writes NV12 (Y rows, then CbCr rows), for even widths.
        if width % 2 == 0:
            whole = np.concatenate([y, cbcr.reshape(ch, 2 * cw)])
            y2, c2 = rectifier.nv12(whole)
            assert np.array_equal(y2, out_y) and np.array_equal(c2, out_c)
        # Into padded planes.
        py = np.full((height, width + 64), 9, np.uint8)
        pc = np.full((ch, cw + 32, 2), 9, np.uint8)
        rectifier.nv12(y, cbcr, out_y=py[:, :width], out_cbcr=pc[:, :cw])
        assert np.array_equal(py[:, :width], out_y) and np.array_equal(pc[:, :cw], out_c)
        assert (py[:, width:] == 9).all() and (pc[:, cw:] == 9).all()


def test_chroma_siting_matters():
    # The documented siting is the one implemented. With a real (mild) lens the sitings
    # differ by little (a displacement changes slowly across half a pixel); a strong lens
    # (mag 0.6 at the corners) shows it: centered chroma ((2i + 1/2, 2j + 1/2)) would differ
    # by many levels at edges.
    width, height = 640, 480
    strong = ((width, height), (321.3, 238.6), [0.6 * (k / 41) ** 2 for k in range(42)])
    with rgbd.Rectifier(strong, (width, height)) as rectifier:
        cw, ch = rectifier.chroma_size
        jj, ii = np.mgrid[0:ch, 0:cw]
        cbcr = np.repeat(((((ii // 6) + (jj // 6)) % 2) * 200).astype(np.uint8)[..., None], 2, axis=-1)
        _, out_c = rectifier.nv12(np.zeros((height, width), np.uint8), cbcr)
    left = chroma_reference(cbcr, strong, width, height)
    centered = chroma_reference(cbcr, strong, width, height, siting_x=0.5)
    assert np.abs(out_c - left).max() <= 2.5   # 1/128-pixel weights on 200-level edges: 200/128 + rounding
    assert np.abs(out_c - centered).max() > 10


def test_bad_arguments(lens):
    with rgbd.Rectifier(lens, (64, 48)) as rectifier:
        with pytest.raises(ValueError):
            rectifier(np.zeros((48, 65), np.uint8))           # another size
        with pytest.raises(ValueError):
            rectifier(np.zeros((48, 64, 5), np.uint8))        # 5 channels
        with pytest.raises(ValueError):
            rectifier(np.zeros((48, 64), np.uint16))
        with pytest.raises(ValueError):
            rectifier(np.zeros((48, 64, 3), np.uint8), out=np.zeros((48, 64, 4), np.uint8))
        frame = np.zeros((48, 64), np.uint8)
        with pytest.raises(rgbd.RGBDError):
            rectifier(frame, out=frame)                       # in place: overlapping buffers
        with pytest.raises(ValueError):
            rectifier.nv12(np.zeros((48, 64), np.uint8), np.zeros((24, 31, 2), np.uint8))
        with pytest.raises(ValueError):
            rectifier.nv12(np.zeros((71, 64), np.uint8))     # a whole frame one row short
    with pytest.raises(ValueError):
        rectifier(np.zeros((48, 64), np.uint8))               # closed
    with pytest.raises(rgbd.RGBDError):
        rgbd.Rectifier(((4032, 3024), (2016.0, 1512.0), [0.0]), (64, 48))    # a one-entry table
    with pytest.raises(rgbd.RGBDError):
        rgbd.Rectifier(lens, (3024, 4032))                    # the reference size transposed
    with pytest.raises(ValueError):
        rgbd.Rectifier(lens, (0, 48))


def test_threads_share_one_rectifier(lens):
    frames = [random_frame((480, 640, 4), seed=s) for s in range(8)]
    expected = [rgbd.rectify_image(f, *lens) for f in frames]
    with rgbd.Rectifier(lens, (640, 480)) as rectifier:
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            results = list(pool.map(rectifier, frames))
    assert all(np.array_equal(a, b) for a, b in zip(results, expected))


def test_memory_held(lens):
    with rgbd.Rectifier(lens, (1920, 1440)) as rectifier:
        maps = 4 * 1920 * 1440 + 4 * 960 * 720
        assert maps <= rectifier.bytes_held < maps + 4096
    with rgbd.Rectifier(lens, (1920, 1440), max_map_bytes=0) as rectifier:
        assert rectifier.bytes_held < 4096


def compile_example(tmp_path):
    if shutil.which("cc") is None:
        pytest.fail("no C compiler `cc` on PATH (install gcc or clang)", pytrace=False)
    library = Path(rgbd.library_path())
    binary = tmp_path / "rectify_nv12"
    link = [f"-L{library.parent}", f"-l{library.stem[3:]}"] if library.suffix == ".so" else [str(library)]
    subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", str(HEADER.parent),
                    str(REPO / "Examples" / "c" / "rectify_nv12.c"), *link, f"-Wl,-rpath,{library.parent}",
                    "-o", str(binary)], check=True, capture_output=True, text=True)
    return binary


def test_c_example_rectifies_nv12_like_python(lens, tmp_path):
    width, height, count = 96, 70, 3
    cw, ch = width // 2, height // 2
    frames = [(random_frame((height, width), seed=10 + n), random_frame((ch, cw, 2), seed=20 + n)) for n in range(count)]
    source = tmp_path / "in.nv12"
    source.write_bytes(b"".join(y.tobytes() + c.tobytes() for y, c in frames))
    binary = compile_example(tmp_path)
    target = tmp_path / "out.nv12"
    proc = subprocess.run([str(binary), str(SAMPLE), str(width), str(height), str(source), str(target)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"rectified {count} frames" in proc.stdout
    data = np.frombuffer(target.read_bytes(), np.uint8)
    frame_bytes = width * height + cw * ch * 2
    assert data.size == count * frame_bytes
    with rgbd.Rectifier(lens, (width, height)) as rectifier:
        for n, (y, c) in enumerate(frames):
            want_y, want_c = rectifier.nv12(y, c)
            got = data[n * frame_bytes:(n + 1) * frame_bytes]
            assert np.array_equal(got[:width * height].reshape(height, width), want_y)
            assert np.array_equal(got[width * height:].reshape(ch, cw, 2), want_c)
            assert np.array_equal(want_y, rgbd.rectify_image(y, *lens))
    # A bad argument is one line on stderr and a non-zero exit.
    proc = subprocess.run([str(binary), str(SAMPLE), "0", "70", str(source), str(target)], capture_output=True, text=True)
    assert proc.returncode != 0 and "WIDTH and HEIGHT" in proc.stderr


def test_video_example(lens, tmp_path):
    width, height, count = 160, 120, 5
    source = tmp_path / "in.mkv"
    writer = cv2.VideoWriter(str(source), cv2.VideoWriter_fourcc(*"FFV1"), 10, (width, height))
    assert writer.isOpened(), "OpenCV cannot write FFV1 (lossless) video"
    yy, xx = np.mgrid[0:height, 0:width]
    frames = []
    for n in range(count):
        frame = np.stack([(xx * 3 + n * 10) % 256, (yy * 5) % 256, ((xx // 10 + yy // 10 + n) % 2) * 255], axis=-1)
        frames.append(frame.astype(np.uint8))
        writer.write(frames[-1])
    writer.release()
    target = tmp_path / "out.mkv"
    env = {**os.environ, "PYTHONPATH": str(PYTHON_DIR)}
    proc = subprocess.run([sys.executable, str(REPO / "Examples" / "python" / "rectify_video.py"), str(SAMPLE),
                           str(source), str(target)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"rectified {count} frames of {width}x{height}" in proc.stdout
    video = cv2.VideoCapture(str(target))
    got = []
    while True:
        ok, frame = video.read()
        if not ok:
            break
        got.append(frame)
    assert len(got) == count
    for original, rectified in zip(frames, got):
        assert np.array_equal(rectified, rgbd.rectify_image(original, *lens))   # lossless both ways
