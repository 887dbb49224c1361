#!/usr/bin/env python3
"""Texturing against the generator's truth (issue 38): the textured mesh and the
vertex-colored meshes of the same fusion rendered from viewpoints that are not among the
scan's frames, each compared with the generator's true image there.

    texture_quality.py SCAN --rgbd RGBD --synth RGBD_SYNTH --out DIR [--views N]

SCAN is a synthetic Stray Scanner scan (rgbd-synth scan, its NAME.truth.json beside it).
The novel views: rgbd-synth renders the same room along the same path with N frames over
the same duration (a Record3D EXR + JPG folder, JPEG quality as the generator writes it),
so that their times fall between the scan's frames; the first (time 0, the scan's first
frame too) is left out. Three meshes from the same binary and fusion:

- `textured.glb`: `rgbd fuse SCAN -o textured.glb` at its defaults (simplified within the
  voxel, textured);
- `vertex.glb`: `--texture-size 0`, the full fused mesh with its vertex colors;
- `vertex_simplified.glb`: `--texture-size 0 --max-error VOXEL`, the textured mesh's
  geometry with vertex colors.

Each is ray cast (Open3D's RaycastingScene) through every pixel of each novel view's
camera, placed in the glTF axes by the asset's `extras.rgbd.matrix`; a textured hit takes
the atlas's color at its interpolated texture coordinate (bilinear), a vertex-colored hit
the barycentric mix of its vertices' colors (COLOR_0, linear, encoded back to sRGB). PSNR
over the pixels every mesh hits, against the true image (8-bit sRGB, all three channels).

When the room has AprilTags on its walls (`rgbd-synth scan --wall-tags`: the truth's
`room.wall_tags`), each render and each true image is searched for them with the AprilTag
library's detector (pupil-apriltags: the C library rgbd's detector wraps, with rgbd's
settings: tag36h11, decimate 2, no blur, edges refined; a miss is pixels no mesh hit left
black): tags_truth counts the (view, tag) pairs the true images decode where every mesh
covers the tag's four corners (IDs of the room's tags only; a tag on a wall the scan saw
too far away for its depth is in no mesh), tags_NAME those of them the render of mesh NAME
decodes too.

Prints `timing NAME VALUE ms` lines on stderr (the harness's in-process metrics; the
values are decibels, bytes, ratios and seconds, not milliseconds): psnr_textured_db,
psnr_vertex_db, psnr_vertex_simplified_db, gain_db (textured − full vertex-colored),
gain_simplified_db, glb_bytes, ply_bytes, glb_ply_ratio, fuse_s (the PLY, fusion only),
textured_s (the textured .glb: fusion, simplification, texturing, writing), extra_ratio
((textured_s − fuse_s) / fuse_s: simplifying and texturing against fusing), hit_pct; with
wall tags also tags_truth, tags_textured, tags_vertex, tags_vertex_simplified and
tags_textured_share (tags_textured / tags_truth).
"""

import argparse
import io
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
from PIL import Image

sys.dont_write_bytecode = True


def run(command):
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"texture_quality.py: {' '.join(command)} failed:\n{done.stderr}")
    return time.monotonic() - start, done.stderr


def read_glb(path):
    """Positions, per-triangle indices, texture coordinates and atlases (or vertex colors)."""
    import pygltflib
    gltf = pygltflib.GLTF2().load(str(path))
    blob = gltf.binary_blob()
    kinds = {pygltflib.FLOAT: np.float32, pygltflib.UNSIGNED_SHORT: np.uint16, pygltflib.UNSIGNED_INT: np.uint32}
    widths = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}

    def array(index):
        accessor = gltf.accessors[index]
        view = gltf.bufferViews[accessor.bufferView]
        data = np.frombuffer(blob, dtype=kinds[accessor.componentType], count=accessor.count * widths[accessor.type],
                             offset=view.byteOffset + (accessor.byteOffset or 0))
        return data.reshape(accessor.count, widths[accessor.type]) if widths[accessor.type] > 1 else data

    primitives = gltf.meshes[0].primitives
    attributes = primitives[0].attributes
    faces, pages = [], []
    for primitive in primitives:
        f = array(primitive.indices).reshape(-1, 3)
        faces.append(f)
        pages.append(np.full(len(f), primitive.material, dtype=np.int32))
    mesh = {"matrix": np.array(gltf.asset.extras["rgbd"]["matrix"], dtype=np.float64).reshape(3, 3),
            "positions": array(attributes.POSITION).astype(np.float32), "faces": np.concatenate(faces).astype(np.uint32),
            "pages": np.concatenate(pages), "comments": gltf.asset.extras["rgbd"]["comments"]}
    if attributes.TEXCOORD_0 is not None:
        mesh["uv"] = array(attributes.TEXCOORD_0).astype(np.float64)
        atlases = []
        for material in gltf.materials:
            image = gltf.images[gltf.textures[material.pbrMetallicRoughness.baseColorTexture.index].source]
            view = gltf.bufferViews[image.bufferView]
            atlases.append(np.asarray(Image.open(io.BytesIO(blob[view.byteOffset:view.byteOffset + view.byteLength])).convert("RGB"),
                                      dtype=np.float64))
        mesh["atlases"] = atlases
    else:
        linear = array(attributes.COLOR_0)[:, :3].astype(np.float64) / 65535
        mesh["colors"] = 255 * np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)
    return mesh


def bilinear(image, x, y):
    h, w = image.shape[:2]
    x = np.clip(x, 0, w - 1)
    y = np.clip(y, 0, h - 1)
    x0 = np.floor(x).astype(int)
    y0 = np.floor(y).astype(int)
    x1 = np.minimum(x0 + 1, w - 1)
    y1 = np.minimum(y0 + 1, h - 1)
    fx = (x - x0)[:, None]
    fy = (y - y0)[:, None]
    top = image[y0, x0] * (1 - fx) + image[y0, x1] * fx
    bottom = image[y1, x0] * (1 - fx) + image[y1, x1] * fx
    return top * (1 - fy) + bottom * fy


def render(mesh, c2w, camera):
    """Colors (H*W, 3) and a hit mask of `mesh` seen by the camera `c2w` (rgbd's world)."""
    import open3d as o3d
    scene = o3d.t.geometry.RaycastingScene()
    scene.add_triangles(o3d.core.Tensor(mesh["positions"]), o3d.core.Tensor(mesh["faces"]))
    w, h = camera["width"], camera["height"]
    u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    d = np.stack([(u - camera["cx"]) / camera["fx"], (v - camera["cy"]) / camera["fy"], np.ones_like(u)], axis=-1).reshape(-1, 3)
    m = mesh["matrix"]
    directions = d @ (m @ c2w[:3, :3]).T
    origin = m @ c2w[:3, 3]
    rays = np.concatenate([np.broadcast_to(origin, directions.shape), directions], axis=1).astype(np.float32)
    hit = scene.cast_rays(o3d.core.Tensor(rays))
    ids = hit["primitive_ids"].numpy().astype(np.int64)
    mask = np.isfinite(hit["t_hit"].numpy()) & (ids < len(mesh["faces"]))
    bary = hit["primitive_uvs"].numpy().astype(np.float64)
    colors = np.zeros((len(ids), 3))
    f = mesh["faces"][ids[mask]].astype(np.int64)
    w1, w2 = bary[mask, 0:1], bary[mask, 1:2]
    w0 = 1 - w1 - w2
    if "uv" in mesh:
        uv = mesh["uv"][f[:, 0]] * w0 + mesh["uv"][f[:, 1]] * w1 + mesh["uv"][f[:, 2]] * w2
        pages = mesh["pages"][ids[mask]]
        out = np.zeros((len(f), 3))
        for p, atlas in enumerate(mesh["atlases"]):
            sel = pages == p
            side = atlas.shape[0]
            out[sel] = bilinear(atlas, uv[sel, 0] * side - 0.5, uv[sel, 1] * side - 0.5)
        colors[mask] = out
    else:
        c = mesh["colors"]
        colors[mask] = c[f[:, 0]] * w0 + c[f[:, 1]] * w1 + c[f[:, 2]] * w2
    return colors, mask


def psnr(errors):
    mse = float(np.mean(np.square(errors)))
    return 10 * np.log10(255 ** 2 / mse) if mse > 0 else float("inf")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scan")
    ap.add_argument("--rgbd", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--views", type=int, default=9, help="novel frames rendered over the scan's duration (the first left out)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    scan = args.scan.rstrip("/")
    truth = json.load(open(scan + ".truth.json"))
    # The novel views: the same room and path, other times.
    novel_dir = os.path.join(args.out, "novel")
    duration = truth["frame_count"] / truth["fps"]
    camera = truth["color_camera"]
    size = f"{camera['width']}x{camera['height']}"
    tagged = ["--wall-tags"] if truth["room"].get("wall_tags") else []
    run([args.synth, "scan", "--layout", "r3d-exr", "--record3d-world", "arkit", "--frames", str(args.views + 1),
         "--fps", repr((args.views + 1) / duration), "--size", size, *tagged, "-o", novel_dir, "--name", "novel"])
    novel = json.load(open(os.path.join(novel_dir, "novel.truth.json")))
    assert novel["color_camera"] == camera, (novel["color_camera"], camera)
    assert novel["room"] == truth["room"], "the novel views' room differs from the scan's"
    # Poses: the novel scan's layout world -> the room -> the scan's world.
    scan_from_room = np.array(truth["world_from_room"], dtype=np.float64)
    novel_from_room = np.array(novel["world_from_room"], dtype=np.float64)
    scan_from_novel = scan_from_room @ np.linalg.inv(novel_from_room)

    ply = os.path.join(args.out, "fused.ply")
    fuse_s, _ = run([args.rgbd, "fuse", scan, "-o", ply, "-q"])
    textured_s, _ = run([args.rgbd, "fuse", scan, "-o", os.path.join(args.out, "textured.glb"), "-q"])
    run([args.rgbd, "fuse", scan, "-o", os.path.join(args.out, "vertex.glb"), "-q", "--texture-size", "0"])
    textured = read_glb(os.path.join(args.out, "textured.glb"))
    voxel = next(float(m.group(1)) for line in textured["comments"] if (m := re.match(r"voxel (\S+) m", line)))
    run([args.rgbd, "fuse", scan, "-o", os.path.join(args.out, "vertex_simplified.glb"), "-q", "--texture-size", "0",
         "--max-error", repr(voxel)])
    meshes = {"textured": textured, "vertex": read_glb(os.path.join(args.out, "vertex.glb")),
              "vertex_simplified": read_glb(os.path.join(args.out, "vertex_simplified.glb"))}
    errors = {name: [] for name in meshes}
    hits = total = 0
    tag_ids = {t["id"] for t in truth["room"].get("wall_tags", [])}
    detector = None
    if tag_ids:
        from pupil_apriltags import Detector
        detector = Detector(families="tag36h11", nthreads=1, quad_decimate=2.0, quad_sigma=0.0, refine_edges=1)
    tags = {name: 0 for name in ["truth", *meshes]}

    def decoded(image, covered=None):
        gray = np.clip(image @ np.array([0.299, 0.587, 0.114]), 0, 255).round().astype(np.uint8)
        found = set()
        for d in detector.detect(np.ascontiguousarray(gray)):
            corners = np.clip(np.round(d.corners).astype(int), 0, [gray.shape[1] - 1, gray.shape[0] - 1])
            if d.tag_id in tag_ids and (covered is None or covered[corners[:, 1], corners[:, 0]].all()):
                found.add(d.tag_id)
        return found
    for frame in novel["frames"][1:]:
        index = frame["index"] if "index" in frame else novel["frames"].index(frame)
        c2w = scan_from_novel @ np.array(frame["camera_to_world"], dtype=np.float64)
        true_image = np.asarray(Image.open(os.path.join(novel_dir, "novel", "rgb", f"{index}.jpg")).convert("RGB"), dtype=np.float64)
        rendered = {name: render(mesh, c2w, camera) for name, mesh in meshes.items()}
        both = np.logical_and.reduce([mask for _, mask in rendered.values()])
        hits += int(both.sum())
        total += both.size
        reference = true_image.reshape(-1, 3)[both]
        for name, (colors, _) in rendered.items():
            errors[name].append(colors[both] - reference)
        if detector is not None:
            # The tags the true image decodes where every mesh covers the tag's corners.
            seen = decoded(true_image, both.reshape(true_image.shape[:2]))
            tags["truth"] += len(seen)
            for name, (colors, _) in rendered.items():
                tags[name] += len(seen & decoded(colors.reshape(true_image.shape)))
    values = {f"psnr_{name}_db": psnr(np.concatenate(e)) for name, e in errors.items()}
    values["gain_db"] = values["psnr_textured_db"] - values["psnr_vertex_db"]
    values["gain_simplified_db"] = values["psnr_textured_db"] - values["psnr_vertex_simplified_db"]
    values["glb_bytes"] = os.path.getsize(os.path.join(args.out, "textured.glb"))
    values["ply_bytes"] = os.path.getsize(ply)
    values["glb_ply_ratio"] = values["glb_bytes"] / values["ply_bytes"]
    values["fuse_s"] = fuse_s
    values["textured_s"] = textured_s
    values["extra_ratio"] = (textured_s - fuse_s) / fuse_s
    values["hit_pct"] = 100 * hits / max(total, 1)
    if detector is not None:
        for name, count in tags.items():
            values[f"tags_{name}"] = count
        values["tags_textured_share"] = tags["textured"] / max(tags["truth"], 1)
    for name, value in values.items():
        print(f"timing {name} {value:.4f} ms", file=sys.stderr)
    print(f"{len(novel['frames']) - 1} novel views, {values['hit_pct']:.1f} % of pixels hit by all meshes: PSNR textured "
          f"{values['psnr_textured_db']:.2f} dB, vertex colors {values['psnr_vertex_db']:.2f} dB (simplified alike "
          f"{values['psnr_vertex_simplified_db']:.2f} dB): +{values['gain_db']:.2f} dB; .glb {values['glb_bytes']} bytes = "
          f"{values['glb_ply_ratio']:.3f}x the PLY's {values['ply_bytes']}; fuse {fuse_s:.2f} s, textured .glb {textured_s:.2f} s "
          f"(simplifying and texturing {values['extra_ratio']:.2f}x the fusion)", file=sys.stderr)
    if detector is not None:
        print(f"AprilTags decoded (view, tag): true images {tags['truth']}, of them textured {tags['textured']}, "
              f"vertex colors {tags['vertex']} (simplified alike {tags['vertex_simplified']})", file=sys.stderr)


if __name__ == "__main__":
    main()
