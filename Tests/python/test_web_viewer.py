"""rgbd fuse's web page (-o room.html) drawn by headless Chromium: the page reads its own
embedded glTF binary and camera path with the three.js it embeds, from file://, without a
server or a network, and draws them.

What is checked: the page reports it drew the surface (its body's data-state "ready") with
the vertices and triangles pygltflib reads from the .glb of the same fusion, and the scan's
camera positions; its screenshot is not blank and its drawn pixels have the mesh's colors
(the synthetic room's textures as the fusion colored its vertices), many of them; a scan
without color (white vertices) is drawn lit, in shades of grey; orbit, zoom, reset view (R
and the button), the camera path and the lighting switched change the picture as they
should (events sent in the page); and a
textured glTF put in the page in place of rgbd's (a square with a checkerboard image, as
the texture atlases will be) is drawn with its texture's two colors in checks.

Skipped without Chromium (CI installs none: `./Scripts/bootstrap.sh --interop` does) or
without three.js (Debian's libjs-three, which `./Scripts/bootstrap.sh` installs, or
$RGBD_THREE_DIR).
"""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pygltflib
import pytest
from plyfile import PlyData

import web_page

CHROMIUM = web_page.find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (./Scripts/bootstrap.sh --interop "
                                                          "installs it; or set RGBD_CHROMIUM)")
FRAMES = 24


@pytest.fixture(scope="module")
def fused(rgbd_bin, synth, tmp_path_factory):
    """The synthetic room fused to .html, .glb and .ply (the same fusion, three writers)."""
    d = tmp_path_factory.mktemp("web_viewer")
    subprocess.run([str(synth), "scan", "--layout", "stray", "--frames", str(FRAMES), "--size", "320x240",
                    "--video-preset", "ultrafast", "--depth-noise", "0.002", "-o", str(d), "--name", "room"],
                   check=True, capture_output=True)
    for ext in ("html", "glb", "ply"):
        run = subprocess.run([str(rgbd_bin), "fuse", str(d / "room"), "-o", str(d / f"room.{ext}"), "--voxel", "0.02",
                              "-q"], capture_output=True, text=True)
        if ext == "html" and run.returncode != 0 and "three.js" in run.stderr:
            pytest.skip(f"three.js is not installed: {run.stderr.strip()}")
        assert run.returncode == 0, run.stderr
    return d


def test_page_draws_the_surface_and_the_camera_path(fused):
    state, stats = web_page.page_state(CHROMIUM, fused / "room.html")
    assert state.get("state") == "ready", stats
    gltf = pygltflib.GLTF2().load(str(fused / "room.glb"))
    # Every primitive of the file (a textured mesh has one per atlas) is on the page.
    primitives = [p for mesh in gltf.meshes for p in mesh.primitives]
    assert int(state["vertices"]) == sum(gltf.accessors[p.attributes.POSITION].count for p in primitives) > 2000
    assert int(state["triangles"]) * 3 == sum(gltf.accessors[p.indices].count for p in primitives)
    assert int(state["cameras"]) == FRAMES
    assert f"{FRAMES} camera positions" in stats


def test_screenshot_shows_the_mesh_colors(fused):
    pixels = web_page.screenshot(CHROMIUM, fused / "room.html", fused / "room.png")
    assert pixels.shape == (600, 800, 3)
    vertex = PlyData.read(str(fused / "room.ply"))["vertex"]
    colors = np.stack([vertex["red"], vertex["green"], vertex["blue"]], axis=1)
    check = web_page.color_check(pixels, colors)
    print(f"web page screenshot: {check}")
    assert check["drawn"] > 0.05, check              # not blank: the surface covers part of the view
    assert check["overlap"] > 0.3, check             # drawn in the mesh's colors (unlit: as captured)
    assert check["distinct"] >= 20, check            # textured, not one flat color
    assert check["common_seen"] >= 0.5, check        # the mesh's most common colors are there


# Appended to a copy of the page: once it has drawn, orbit, zoom, reset, toggle the path and
# the lighting as a user would (mouse and wheel events on the canvas, keys on the window,
# the buttons clicked) and record a digest of the canvas after each step in the body.
DRIVER = r"""
<script>
(function () {
  function digest() {
    var data = document.querySelector('canvas').toDataURL('image/png'), h = 0;
    for (var i = 0; i < data.length; i++) h = (h * 31 + data.charCodeAt(i)) | 0;
    return String(h);
  }
  function pointer(type, target, x, y) {
    var modern = parseInt(THREE.REVISION, 10) >= 125, Kind = modern ? PointerEvent : MouseEvent;
    var name = modern ? type.replace('mouse', 'pointer') : type;
    target.dispatchEvent(new Kind(name, { bubbles: true, cancelable: true, clientX: x, clientY: y, button: 0,
                                          buttons: type === 'mouseup' ? 0 : 1, pointerId: 1, pointerType: 'mouse', isPrimary: true }));
  }
  function drag(canvas) {
    pointer('mousedown', canvas, 400, 350);
    pointer('mousemove', document, 440, 360);
    pointer('mousemove', document, 480, 370);
    pointer('mouseup', document, 480, 370);
  }
  function key(k) { window.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true })); }
  var timer = setInterval(function () {
    if (document.body.getAttribute('data-state') !== 'ready') return;
    clearInterval(timer);
    var canvas = document.querySelector('canvas'), steps = {};
    steps.initial = digest();
    drag(canvas); steps.orbited = digest();
    canvas.dispatchEvent(new WheelEvent('wheel', { deltaY: -300, deltaMode: 0, bubbles: true, cancelable: true }));
    steps.zoomed = digest();
    key('r'); steps.reset = digest();
    key('c'); steps.pathHidden = digest();
    key('c'); steps.pathShown = digest();
    key('l'); steps.toggledLighting = digest();
    key('l'); drag(canvas); steps.orbitedAgain = digest();
    document.getElementById('reset').click(); steps.resetButton = digest();
    document.body.setAttribute('data-steps', JSON.stringify(steps).replace(/"/g, "'"));
  }, 50);
})();
</script>
"""


def test_controls_orbit_zoom_and_reset(fused):
    """Orbit (drag) and zoom (wheel) change the view; R and the Reset view button bring back
    the first one exactly; C hides and shows the path, L switches the lighting."""
    page = (fused / "room.html").read_text()
    (fused / "driven.html").write_text(page.replace("</body>", DRIVER + "</body>"))
    state, stats = web_page.page_state(CHROMIUM, fused / "driven.html")
    assert state.get("state") == "ready" and "steps" in state, (state, stats)
    steps = json.loads(state["steps"].replace("'", '"'))
    print(f"controls: {steps}")
    initial = steps["initial"]
    assert steps["orbited"] != initial and steps["zoomed"] not in (initial, steps["orbited"]), steps
    assert steps["reset"] == initial, steps
    assert steps["pathHidden"] != initial and steps["pathShown"] == initial, steps
    assert steps["toggledLighting"] != initial, steps
    assert steps["orbitedAgain"] != initial and steps["resetButton"] == initial, steps


def test_depth_only_surface_is_lit(fused, rgbd_bin, tmp_path):
    """A scan without color gives white vertices: the page starts lit, so the surface is
    shaded grey (unlit, it would be one flat white)."""
    shutil.copytree(fused / "room", tmp_path / "room", ignore=shutil.ignore_patterns("rgb.mp4"))
    run = subprocess.run([str(rgbd_bin), "fuse", str(tmp_path / "room"), "-o", str(tmp_path / "white.html"),
                          "--voxel", "0.02", "-q"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    state, stats = web_page.page_state(CHROMIUM, tmp_path / "white.html")
    assert state.get("state") == "ready", stats
    shown = web_page.drawn(web_page.screenshot(CHROMIUM, tmp_path / "white.html", tmp_path / "white.png"))
    grey = (shown.max(axis=1) - shown.min(axis=1) <= 6).mean()
    saturated = (shown.min(axis=1) >= 250).mean()
    levels = len(np.unique(shown.mean(axis=1).astype(int) // 8))
    print(f"depth-only page: {len(shown)} pixels drawn, {grey:.0%} grey, {saturated:.0%} white, {levels} levels")
    assert len(shown) > 0.05 * 470 * 800 and grey > 0.95, (len(shown), grey)
    assert saturated < 0.2 and levels >= 6, (saturated, levels)


def textured_square_glb():
    """A 2 m square facing +Z with a 4x4 checkerboard texture (PNG) of magenta and green."""
    from PIL import Image
    cells = (np.indices((64, 64)) // 16).sum(axis=0) % 2
    image = np.where(cells[..., None] == 1, np.array([255, 0, 255], np.uint8), np.array([0, 200, 0], np.uint8))
    png = io.BytesIO()
    Image.fromarray(image.astype(np.uint8)).save(png, format="PNG")
    positions = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], np.float32)
    uvs = np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float32)
    indices = np.array([0, 1, 2, 0, 2, 3], np.uint16)
    parts = [positions.tobytes(), uvs.tobytes(), indices.tobytes() + b"\0\0", png.getvalue()]
    offsets = np.cumsum([0] + [len(p) for p in parts]).tolist()
    views = [{"buffer": 0, "byteOffset": offsets[i], "byteLength": len(parts[i]) - (2 if i == 2 else 0)}
             for i in range(4)]
    gltf = {
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "TEXCOORD_0": 1}, "indices": 2, "material": 0}]}],
        "materials": [{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}, "metallicFactor": 0,
                                                "roughnessFactor": 1}}],
        "textures": [{"source": 0, "sampler": 0}], "samplers": [{"magFilter": 9728, "minFilter": 9728}],
        "images": [{"bufferView": 3, "mimeType": "image/png"}],
        "buffers": [{"byteLength": offsets[-1]}], "bufferViews": views,
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3", "min": [-1, -1, 0], "max": [1, 1, 0]},
            {"bufferView": 1, "componentType": 5126, "count": 4, "type": "VEC2"},
            {"bufferView": 2, "componentType": 5123, "count": 6, "type": "SCALAR"},
        ],
    }
    text = json.dumps(gltf).encode()
    text += b" " * (-len(text) % 4)
    binary = b"".join(parts)
    binary += b"\0" * (-len(binary) % 4)
    return (struct.pack("<III", 0x46546C67, 2, 12 + 8 + len(text) + 8 + len(binary))
            + struct.pack("<II", len(text), 0x4E4F534A) + text + struct.pack("<II", len(binary), 0x004E4942) + binary)


def test_page_draws_a_textured_glb(fused):
    """The page's loader and materials with a texture: rgbd's page with its glTF replaced."""
    page = (fused / "room.html").read_text()
    page, n = re.subn(r'(<script type="application/octet-stream" id="rgbd-glb">)[^<]*(</script>)',
                      lambda m: m.group(1) + base64.b64encode(textured_square_glb()).decode() + m.group(2), page)
    assert n == 1
    page, n = re.subn(r'(<script type="application/json" id="rgbd-camera-path">)[^<]*(</script>)',
                      lambda m: m.group(1) + "[]" + m.group(2), page)
    assert n == 1
    (fused / "square.html").write_text(page)
    state, stats = web_page.page_state(CHROMIUM, fused / "square.html")
    assert state.get("state") == "ready" and state["vertices"] == "4" and state["triangles"] == "2", stats
    pixels = web_page.screenshot(CHROMIUM, fused / "square.html", fused / "square.png").astype(np.int32)
    magenta = (np.abs(pixels - [255, 0, 255]).max(axis=2) <= 12)
    green = (np.abs(pixels - [0, 200, 0]).max(axis=2) <= 12)
    assert magenta.mean() > 0.05 and green.mean() > 0.05, (magenta.mean(), green.mean())
    # In checks: along the middle row the color changes between magenta and green several times.
    row = np.where(magenta[400], 1, np.where(green[400], 2, 0))
    row = row[row > 0]
    assert np.count_nonzero(np.diff(row)) >= 2, row
