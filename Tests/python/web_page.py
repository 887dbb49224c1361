"""Headless Chromium on the web page `rgbd fuse -o room.html` writes: the page's state as it
reports it (its body's data-state, data-vertices, data-triangles, data-cameras) and a
screenshot, with the checks made on it. Shared by Tests/python/test_web_viewer.py and
Scripts/interop_mesh.py.

WebGL without a GPU (and without Vulkan): ANGLE on SwiftShader, Chromium's software
renderer (`--use-angle=swiftshader --enable-unsafe-swiftshader`); measured with Debian 12's
Chromium 156, where `--use-gl=swiftshader` gives no WebGL at all (the page reports it) and
`--disable-gpu` alone falls back to SwiftShader too. `--no-sandbox`: Chromium refuses to run
as root with its sandbox, as in containers and CI.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ["--headless", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--hide-scrollbars",
         "--mute-audio", "--no-first-run", "--disable-extensions", "--disable-background-networking"]
# The page's background (#1e2127) and panel (the top-left corner: a screenshot's checks leave it out).
BACKGROUND = np.array([0x1E, 0x21, 0x27])
PANEL_ROWS = 130


def find_chromium():
    """$RGBD_CHROMIUM, else the first Chromium or Chrome on PATH; None without one."""
    given = os.environ.get("RGBD_CHROMIUM")
    if given:
        return shutil.which(given) or (given if Path(given).is_file() else None)
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(chromium, html, extra, size, budget_ms=20000, timeout=240):
    # A fresh profile each time: nothing read from or written to the user's.
    with tempfile.TemporaryDirectory(prefix="rgbd-chromium-") as profile:
        command = [str(chromium), *FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
                   f"--virtual-time-budget={budget_ms}", *extra, Path(html).resolve().as_uri()]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def page_state(chromium, html, size=(800, 600)):
    """The page as drawn: its body's data-* attributes and the stats line's text."""
    run = _run(chromium, html, ["--dump-dom"], size)
    body = re.search(r"<body([^>]*)>", run.stdout)
    attributes = dict(re.findall(r'data-([a-z]+)="([^"]*)"', body.group(1))) if body else {}
    stats = re.search(r'<span id="stats">(.*?)</span>', run.stdout, re.S)
    return attributes, (stats.group(1) if stats else run.stderr[-2000:])


def screenshot(chromium, html, png, size=(800, 600)):
    """A PNG of the page at `size`; the pixels as an (H, W, 3) uint8 array."""
    from PIL import Image
    png = Path(png)
    png.unlink(missing_ok=True)
    run = _run(chromium, html, [f"--screenshot={png}"], size)
    if not png.is_file():
        raise RuntimeError(f"{chromium} wrote no screenshot (exit {run.returncode}): {run.stderr[-2000:]}")
    return np.asarray(Image.open(png).convert("RGB"))


def drawn(pixels):
    """The pixels below the panel that are not the background: what the page drew."""
    below = pixels[PANEL_ROWS:].reshape(-1, 3).astype(np.int32)
    return below[np.abs(below - BACKGROUND).max(axis=1) > 8]


def color_check(pixels, mesh_srgb, levels=8):
    """How a screenshot's drawn pixels compare with a mesh's colors (sRGB, (N, 3) uint8).

    Colors are put in levels³ bins. Returns the fraction of the area (below the panel)
    drawn, the overlap of the drawn pixels' and the mesh's vertices' color histograms (the
    sum of the bins' minima, 1 for the same distribution: measured 0.51 on the synthetic
    room's view, whose pixels weigh colors by area seen rather than by vertex; 0.12 with
    the drawn pixels' red and blue swapped, 0.05 made grey, 0.001 inverted), the number of
    distinct bins drawn, and the fraction of the mesh's ten most common bins that appear."""
    below = pixels[PANEL_ROWS:].reshape(-1, 3)
    shown = drawn(pixels)
    step = 256 // levels

    def histogram(colors):
        q = np.asarray(colors, dtype=np.int32).reshape(-1, 3) // step
        counts = np.bincount(q[:, 0] * levels * levels + q[:, 1] * levels + q[:, 2], minlength=levels ** 3)
        return counts / max(1, counts.sum())

    mesh, picture = histogram(mesh_srgb), histogram(shown)
    common = np.argsort(mesh)[::-1][:10]
    return {"drawn": len(shown) / len(below), "overlap": float(np.minimum(mesh, picture).sum()),
            "distinct": int(np.count_nonzero(picture)), "common_seen": float(np.mean(picture[common] > 0))}
