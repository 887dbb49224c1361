#!/usr/bin/env python3
"""Optional interop check of `rgbd fuse`'s meshes and web page in Blender and a browser (not
run by the tests).

    .venv/bin/python Scripts/interop_mesh.py [--rgbd BIN] [--keep DIR] [--frames N] [--size WxH] [--voxel M]
                                             [--screenshot PNG]

Makes a synthetic scan (`rgbd-synth scan`, the Stray layout), fuses it to room.glb,
room.obj and room.html, then:

- **Blender** (headless: `blender -b --factory-startup --python-expr ...`) imports the GLB
  with its glTF importer and the OBJ with its OBJ importer: each must give the file's
  vertex and triangle counts, the file's bounds (Blender's axes: +Z up, (x, y, z) of glTF ->
  (x, -z, y)), and a color attribute whose mean (linear) is the file's (COLOR_0, or the
  OBJ's sRGB colors decoded). The GLB import is rendered with Cycles on the CPU (its
  material: the importer's, which uses COLOR_0): the picture must not be empty and must
  show many colors.
- **Chromium** (headless, WebGL on SwiftShader) opens room.html from file://: the page must
  report it drew the GLB's vertices and triangles and the scan's camera positions, and its
  screenshot must not be blank and must show the mesh's colors (Tests/python/web_page.py).
  It also draws room.obj with three.js's own OBJ loader (from the three.js rgbd uses,
  $RGBD_THREE_DIR or Debian's libjs-three) in a page made here: three vertices per triangle
  (that loader does not share vertices), vertex colors read, the mesh's colors shown.

Exits 1 on a mismatch. Blender and Chromium are large installs, so they are not test
requirements (`./Scripts/bootstrap.sh --interop` installs both): without either, this
prints how to install it, checks what it can and exits 0; without both, it exits 0 at
once. Needs numpy and Pillow (the repository's .venv has them; Scripts/common.sh's
use_venv with Tests/python/requirements.txt makes it). Debian 12's Blender 3.4.1 imports
glTF with numpy (Debian's python3-numpy, which --interop installs) and its importer still
uses `np.bool`, gone since NumPy 1.24 (Debian 12's): the Blender script restores that
alias before importing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "Tests" / "python"))

BLENDER_SCRIPT = r'''
import bpy, json, sys
import numpy
if not hasattr(numpy, "bool"):
    numpy.bool = bool   # Debian 12's Blender 3.4.1 glTF importer uses np.bool (gone in NumPy 1.24)
glb, obj, render = sys.argv[sys.argv.index("--") + 1:]

def clear():
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o, do_unlink=True)

def summary(kind):
    meshes = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    result = {"objects": len(meshes), "vertices": 0, "faces": 0, "triangles": 0, "min": [1e30] * 3, "max": [-1e30] * 3,
              "color_attributes": [], "color_mean": None}
    sums, count = [0.0, 0.0, 0.0], 0
    for o in meshes:
        m = o.data
        result["vertices"] += len(m.vertices)
        result["faces"] += len(m.polygons)
        result["triangles"] += sum(len(p.vertices) - 2 for p in m.polygons)
        for v in m.vertices:
            p = o.matrix_world @ v.co
            for k in range(3):
                result["min"][k] = min(result["min"][k], p[k])
                result["max"][k] = max(result["max"][k], p[k])
        result["color_attributes"] += [[a.name, a.domain, a.data_type] for a in m.color_attributes]
        if len(m.color_attributes):
            a = m.color_attributes[0]
            per_vertex = [None] * len(m.vertices)
            if a.domain == "POINT":
                for i, d in enumerate(a.data):
                    per_vertex[i] = d.color
            else:
                for loop in m.loops:
                    per_vertex[loop.vertex_index] = a.data[loop.index].color
            for c in per_vertex:
                if c is not None:
                    for k in range(3):
                        sums[k] += c[k]
                    count += 1
    if count:
        result["color_mean"] = [s / count for s in sums]
    print("RGBD_INTEROP " + kind + " " + json.dumps(result), flush=True)
    return meshes

clear()
bpy.ops.import_scene.gltf(filepath=glb)
meshes = summary("glb")
# A Cycles render of the GLB as imported (its material reads COLOR_0), on the CPU.
scene = bpy.context.scene
import mathutils
points = [o.matrix_world @ v.co for o in meshes for v in o.data.vertices]
low = mathutils.Vector([min(p[k] for p in points) for k in range(3)])
high = mathutils.Vector([max(p[k] for p in points) for k in range(3)])
center, radius = (low + high) / 2, max((high - low).length / 2, 1e-3)
camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
scene.collection.objects.link(camera)
scene.camera = camera
direction = mathutils.Vector((0.3, -0.6, 1.0)).normalized()   # mostly from above: Cycles draws the walls' backs too
camera.data.angle = 1.0
camera.location = center + direction * radius * 2.0
camera.rotation_euler = (-direction).to_track_quat("-Z", "Y").to_euler()
camera.data.clip_end = radius * 10
world = bpy.data.worlds.new("white") if scene.world is None else scene.world
scene.world = world
world.use_nodes = True
background = world.node_tree.nodes.get("Background")
background.inputs[0].default_value = (1, 1, 1, 1)
background.inputs[1].default_value = 1.0
scene.render.engine = "CYCLES"
scene.cycles.device = "CPU"
scene.cycles.samples = 16
scene.cycles.use_denoising = False
scene.view_settings.view_transform = "Standard"
scene.render.film_transparent = True
scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 400, 300, 100
scene.render.image_settings.file_format = "PNG"
scene.render.image_settings.color_mode = "RGBA"
scene.render.filepath = render
bpy.ops.render.render(write_still=True)
clear()
bpy.ops.wm.obj_import(filepath=obj)
summary("obj")
'''


def glb_contents(path):
    """POSITION, COLOR_0 (linear, 0..1) and the index count, read from the GLB's chunks."""
    import numpy as np
    data = Path(path).read_bytes()
    magic, version, length = struct.unpack_from("<III", data, 0)
    assert magic == 0x46546C67 and version == 2 and length == len(data), "not a glTF 2.0 binary"
    json_length, _ = struct.unpack_from("<II", data, 12)
    gltf = json.loads(data[20:20 + json_length])
    binary = data[20 + json_length + 8:]
    primitive = gltf["meshes"][0]["primitives"][0]
    kinds = {5126: np.float32, 5123: np.uint16, 5125: np.uint32}
    widths = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}

    def array(index):
        accessor = gltf["accessors"][index]
        view = gltf["bufferViews"][accessor["bufferView"]]
        width = widths[accessor["type"]]
        values = np.frombuffer(binary, dtype=kinds[accessor["componentType"]], count=accessor["count"] * width,
                               offset=view.get("byteOffset", 0) + accessor.get("byteOffset", 0))
        return values.reshape(accessor["count"], width)

    colors = array(primitive["attributes"]["COLOR_0"]).astype(np.float64)[:, :3]
    if gltf["accessors"][primitive["attributes"]["COLOR_0"]].get("normalized"):
        colors /= np.iinfo(np.uint16).max
    return array(primitive["attributes"]["POSITION"]), colors, gltf["accessors"][primitive["indices"]]["count"]


def obj_contents(path):
    """The OBJ's positions, sRGB colors (0..1) and triangle count."""
    import numpy as np
    vertices, faces = [], 0
    with open(path) as f:
        for line in f:
            if line.startswith("v "):
                vertices.append([float(x) for x in line.split()[1:7]])
            elif line.startswith("f "):
                faces += len(line.split()) - 3
    v = np.array(vertices)
    return v[:, :3], v[:, 3:6], faces


def to_blender(low, high):
    """glTF's bounds (+Y up) in Blender's axes (+Z up): (x, y, z) -> (x, -z, y)."""
    return [low[0], -high[2], low[1]], [high[0], -low[2], high[1]]


def srgb_to_linear(c):
    import numpy as np
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


OBJ_VIEWER = r"""
(function () {
  'use strict';
  var body = document.body;
  try {
    var group = new THREE.OBJLoader().parse(document.getElementById('obj').textContent);
    var vertices = 0, colored = true;
    group.traverse(function (o) {
      if (!o.isMesh) return;
      vertices += o.geometry.attributes.position.count;
      colored = colored && !!o.geometry.attributes.color;
      // The file's colors as they are (sRGB), unlit: no output conversion either.
      o.material = new THREE.MeshBasicMaterial({ vertexColors: THREE.VertexColors !== undefined ? THREE.VertexColors : true });
    });
    var renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    renderer.setSize(window.innerWidth, window.innerHeight);
    renderer.setClearColor(0x1e2127);
    body.appendChild(renderer.domElement);
    var scene = new THREE.Scene();
    scene.add(group);
    var box = new THREE.Box3().setFromObject(group), center = new THREE.Vector3(), size = new THREE.Vector3();
    box.getCenter(center); box.getSize(size);
    var radius = Math.max(size.length() / 2, 0.001);
    var camera = new THREE.PerspectiveCamera(50, window.innerWidth / window.innerHeight, radius / 1000, radius * 30);
    camera.position.copy(center).addScaledVector(new THREE.Vector3(0.5, 0.8, 1).normalize(), radius / Math.sin(25 * Math.PI / 180));
    camera.lookAt(center);
    renderer.render(scene, camera);
    body.setAttribute('data-vertices', String(vertices));
    body.setAttribute('data-colored', String(colored));
    body.setAttribute('data-state', 'ready');
  } catch (e) {
    body.setAttribute('data-state', 'error');
    body.textContent = String(e && e.message ? e.message : e);
  }
})();
"""


def three_directory():
    """three.js as rgbd finds it: $RGBD_THREE_DIR, else Debian's libjs-three."""
    given = os.environ.get("RGBD_THREE_DIR")
    return Path(given) if given else Path("/usr/share/javascript/three")


def obj_page(obj, page, three):
    """A page that draws `obj` with three.js's own OBJ loader (not rgbd's viewer): the OBJ
    inline (its comment lines left out, so that nothing in them can end the element)."""
    text = "".join(line for line in open(obj) if not line.startswith("#"))
    scripts = "".join(f"<script>\n{(three / name).read_text()}\n</script>\n"
                      for name in ("build/three.min.js", "examples/js/loaders/OBJLoader.js"))
    Path(page).write_text(
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><style>html, body { margin: 0; height: 100%; '
        'overflow: hidden; background: #1e2127; } canvas { display: block; }</style></head>\n'
        f'<body data-state="loading">\n<script type="text/plain" id="obj">\n{text}</script>\n{scripts}'
        f"<script>{OBJ_VIEWER}</script>\n</body></html>\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rgbd", default=os.environ.get("RGBD_BIN", str(REPO / ".build/release/rgbd")))
    ap.add_argument("--keep", metavar="DIR", help="write the scan, meshes, page and pictures here (kept)")
    ap.add_argument("--frames", type=int, default=24)
    ap.add_argument("--voxel", default="0.02")
    ap.add_argument("--size", default="320x240", help="the synthetic video's frame size")
    ap.add_argument("--screenshot", metavar="PNG", help="also save the page's screenshot here at 960x600, "
                    "in 256 colors (docs/images/web-viewer.png is made so, with --frames 150 --size 480x360)")
    args = ap.parse_args()

    try:
        import numpy as np
        import PIL  # noqa: F401  (the screenshots' reading)
        import web_page
    except ImportError as err:
        print(f"interop_mesh: {err}: run it with the repository's environment, which has numpy and Pillow:\n"
              "  source Scripts/common.sh; use_venv Tests/python/requirements.txt; .venv/bin/python Scripts/interop_mesh.py")
        return 0
    blender = shutil.which(os.environ.get("RGBD_BLENDER", "blender"))
    chromium = web_page.find_chromium()
    if not blender and not chromium:
        print("interop_mesh: neither Blender nor Chromium is installed; nothing to check.\n"
              "Install them to run this check:  ./Scripts/bootstrap.sh --interop\n"
              "(Debian/Ubuntu: apt-get install blender python3-numpy chromium; macOS: brew install --cask blender chromium)")
        return 0

    rgbd = Path(args.rgbd)
    synth = rgbd.with_name("rgbd-synth")
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="rgbd-interop-mesh-"))
    work.mkdir(parents=True, exist_ok=True)
    failures = []

    def check(ok, what):
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            failures.append(what)

    try:
        subprocess.run([str(synth), "scan", "--layout", "stray", "--frames", str(args.frames), "--size", args.size,
                        "--video-preset", "ultrafast", "--depth-noise", "0.002", "-o", str(work), "--name", "room"],
                       check=True, capture_output=True)
        for ext in ("glb", "obj", "html"):
            run = subprocess.run([str(rgbd), "fuse", str(work / "room"), "-o", str(work / f"room.{ext}"),
                                  "--voxel", args.voxel, "-q"], capture_output=True, text=True)
            if run.returncode != 0:
                print(f"interop_mesh: rgbd fuse -o room.{ext} failed: {run.stderr.strip()}")
                return 1
        positions, linear, indices = glb_contents(work / "room.glb")
        obj_positions, obj_srgb, obj_triangles = obj_contents(work / "room.obj")
        print(f"room.glb: {len(positions)} vertices, {indices // 3} triangles; room.obj: {len(obj_positions)} vertices, "
              f"{obj_triangles} triangles; bounds (glTF axes) {np.round(positions.min(0).astype(float), 4).tolist()} .. "
              f"{np.round(positions.max(0).astype(float), 4).tolist()}")

        if blender:
            render = work / "blender.png"
            run = subprocess.run([blender, "-b", "--factory-startup", "--python-expr", BLENDER_SCRIPT, "--",
                                  str(work / "room.glb"), str(work / "room.obj"), str(render)],
                                 capture_output=True, text=True, timeout=1800)
            results = {}
            for line in run.stdout.splitlines():
                if line.startswith("RGBD_INTEROP "):
                    _, kind, text = line.split(" ", 2)
                    results[kind] = json.loads(text)
            version = next((line for line in run.stdout.splitlines() if line.startswith("Blender ")), "Blender")
            if set(results) != {"glb", "obj"}:
                hint = (" (Blender's glTF importer needs NumPy: apt-get install python3-numpy)"
                        if "No module named 'numpy'" in run.stdout + run.stderr else "")
                check(False, f"{version} imported the GLB and the OBJ (exit {run.returncode}){hint}: "
                              f"{(run.stdout + run.stderr)[-3000:]}")
            for kind, (p, colors_linear, triangles) in (("glb", (positions, linear, indices // 3)),
                                                       ("obj", (obj_positions, srgb_to_linear(obj_srgb), obj_triangles))):
                r = results.get(kind)
                if not r:
                    continue
                name = f"{version}, {'glTF' if kind == 'glb' else 'OBJ'} importer: room.{kind}"
                check(r["vertices"] == len(p) and r["triangles"] == triangles,
                      f"{name}: {r['vertices']} vertices, {r['triangles']} triangles (file: {len(p)}, {triangles})")
                low, high = to_blender(p.min(0), p.max(0))
                error = max(np.abs(np.array(r["min"]) - low).max(), np.abs(np.array(r["max"]) - high).max())
                check(error < 1e-5, f"{name}: bounds {np.round(r['min'], 4).tolist()} .. {np.round(r['max'], 4).tolist()} "
                                    f"(Blender's +Z up), the file's turned: largest difference {error:.2e} m")
                mean = colors_linear.mean(axis=0)
                got = r["color_mean"]
                check(got is not None and np.abs(np.array(got) - mean).max() < 0.01,
                      f"{name}: color attribute {r['color_attributes']}, mean (linear) "
                      f"{None if got is None else np.round(got, 4).tolist()} (file: {np.round(mean, 4).tolist()})")
            if render.is_file():
                from PIL import Image
                picture = np.asarray(Image.open(render).convert("RGBA"))
                covered = picture[..., 3] > 200
                rgb = picture[..., :3][covered]
                distinct = len(np.unique(rgb // 32, axis=0))
                check(covered.mean() > 0.05 and distinct >= 20,
                      f"{version} Cycles render of the GLB import ({render.name}): {covered.mean():.1%} of the picture "
                      f"covered, {distinct} distinct colors (of 512 bins)")
            elif "glb" in results:
                check(False, f"{version} rendered the GLB import: no picture ({run.stderr[-2000:]})")
        else:
            print("skip  Blender is not installed (./Scripts/bootstrap.sh --interop; Debian/Ubuntu: apt-get install "
                  "blender python3-numpy)")

        if chromium:
            version = subprocess.run([chromium, "--version"], capture_output=True, text=True).stdout.strip() or chromium
            state, stats = web_page.page_state(chromium, work / "room.html")
            check(state.get("state") == "ready" and state.get("vertices") == str(len(positions))
                  and state.get("triangles") == str(indices // 3) and state.get("cameras") == str(args.frames),
                  f"{version} headless, room.html from file://: state {state.get('state')}, '{stats}'")
            pixels = web_page.screenshot(chromium, work / "room.html", work / "chromium.png")
            srgb = np.round(255 * np.where(linear <= 0.0031308, 12.92 * linear,
                                           1.055 * linear ** (1 / 2.4) - 0.055)).astype(np.uint8)
            c = web_page.color_check(pixels, srgb)
            check(c["drawn"] > 0.05 and c["overlap"] > 0.3 and c["distinct"] >= 20,
                  f"{version} screenshot (chromium.png): {c['drawn']:.1%} drawn, color overlap with the mesh "
                  f"{c['overlap']:.2f}, {c['distinct']} distinct colors, {c['common_seen']:.0%} of the mesh's 10 commonest seen")
            three = three_directory()
            if (three / "examples/js/loaders/OBJLoader.js").is_file():
                obj_page(work / "room.obj", work / "obj.html", three)
                state, stats = web_page.page_state(chromium, work / "obj.html")
                check(state.get("state") == "ready" and state.get("vertices") == str(3 * obj_triangles)
                      and state.get("colored") == "true",
                      f"{version} headless, three.js's OBJLoader ({three}) on room.obj: state {state.get('state')}, "
                      f"{state.get('vertices')} vertices (unindexed: 3 x {obj_triangles} triangles), "
                      f"vertex colors {state.get('colored')}{'' if state.get('state') == 'ready' else ': ' + stats}")
                c = web_page.color_check(web_page.screenshot(chromium, work / "obj.html", work / "obj.png"),
                                         np.round(obj_srgb * 255).astype(np.uint8))
                check(c["drawn"] > 0.05 and c["overlap"] > 0.3 and c["distinct"] >= 20,
                      f"{version} screenshot of the OBJ (obj.png): {c['drawn']:.1%} drawn, color overlap with the "
                      f"mesh {c['overlap']:.2f}, {c['distinct']} distinct colors")
            else:
                print(f"skip  three.js's OBJLoader is not in {three} (Debian: apt-get install libjs-three)")
            if args.screenshot:
                from PIL import Image
                web_page.screenshot(chromium, work / "room.html", work / "docs.png", size=(960, 600))
                Image.open(work / "docs.png").convert("RGB").quantize(256, method=Image.Quantize.FASTOCTREE).save(
                    args.screenshot, optimize=True)
                print(f"wrote {args.screenshot}")
        else:
            print("skip  Chromium is not installed (./Scripts/bootstrap.sh --interop; Debian/Ubuntu: apt-get install chromium)")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept in {work}")
    if failures:
        print(f"interop_mesh: {len(failures)} mismatch(es)")
        return 1
    print("interop_mesh: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
