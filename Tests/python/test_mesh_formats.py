"""rgbd fuse's meshes as glTF 2.0 binary (-o room.glb) and OBJ (-o room.obj), read by tools
independent of rgbd: pygltflib (the GLB's JSON and binary chunk, accessor by accessor) and
trimesh (both files loaded as meshes).

What is checked: the GLB's and the OBJ's vertices are the PLY's (the same fusion written by
the same binary) in glTF's axes, as the asset's extras state the mapping; they lie on the
synthetic room's true surfaces; a gravity-aligned scan has its floor level (+Y up); the
normals are unit; COLOR_0 is the PLY's colors made linear; the OBJ has the PLY's vertex
colors; options that cannot be written are one line and nothing.
"""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pygltflib
import pytest
import trimesh
from plyfile import PlyData

from synthetic_room import room_distance


@pytest.fixture(scope="module")
def scan(synth, tmp_path_factory):
    d = tmp_path_factory.mktemp("mesh_formats")
    subprocess.run([str(synth), "scan", "--layout", "stray", "--frames", "12", "--size", "320x240",
                    "--video-preset", "ultrafast", "--depth-noise", "0.002", "-o", str(d), "--name", "room"],
                   check=True, capture_output=True)
    return d


def fuse(rgbd_bin, scan, name, *extra):
    out = scan / name
    run = subprocess.run([str(rgbd_bin), "fuse", str(scan / "room"), "-o", str(out), "--voxel", "0.02", "-q", *extra],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return out


def read_ply(path):
    vertex = PlyData.read(str(path))["vertex"]
    positions = np.stack([vertex["x"], vertex["y"], vertex["z"]], axis=1)
    colors = np.stack([vertex["red"], vertex["green"], vertex["blue"]], axis=1)
    faces = np.stack(PlyData.read(str(path))["face"]["vertex_indices"]).astype(np.int64)
    return positions, colors, faces


def read_glb(path):
    """pygltflib's reading: the asset's extras and each attribute's array."""
    gltf = pygltflib.GLTF2().load(str(path))
    blob = gltf.binary_blob()
    kinds = {pygltflib.FLOAT: np.float32, pygltflib.UNSIGNED_SHORT: np.uint16, pygltflib.UNSIGNED_INT: np.uint32}
    widths = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}

    def array(index):
        accessor = gltf.accessors[index]
        view = gltf.bufferViews[accessor.bufferView]
        data = np.frombuffer(blob, dtype=kinds[accessor.componentType], count=accessor.count * widths[accessor.type],
                             offset=view.byteOffset + (accessor.byteOffset or 0))
        return data.reshape(accessor.count, widths[accessor.type]) if widths[accessor.type] > 1 else data

    primitive = gltf.meshes[0].primitives[0]
    attributes = primitive.attributes
    return gltf, {"position": array(attributes.POSITION), "normal": array(attributes.NORMAL),
                  "color": array(attributes.COLOR_0), "faces": array(primitive.indices).reshape(-1, 3),
                  "position_accessor": gltf.accessors[attributes.POSITION]}


def to_srgb(linear):
    c = linear.astype(np.float64) / 65535
    return np.round(255 * np.where(c <= 0.0031308, 12.92 * c, 1.055 * c ** (1 / 2.4) - 0.055))


def test_glb_holds_the_ply_in_gltf_axes(rgbd_bin, scan):
    positions, colors, faces = read_ply(fuse(rgbd_bin, scan, "room.ply"))
    gltf, glb = read_glb(fuse(rgbd_bin, scan, "room.glb", "--texture-size", "0"))
    assert gltf.asset.version == "2.0" and gltf.asset.generator.startswith("rgbd ")
    extras = gltf.asset.extras["rgbd"]
    # Stray Scanner's world is ARKit's: +y up, right-handed, which glTF's axes are already.
    matrix = np.array(extras["matrix"]).reshape(3, 3)
    assert np.array_equal(matrix, np.eye(3)) and "gravity's up" in extras["axes"]
    assert extras["units"] == "meters"
    assert any(line.startswith("voxel 0.02 m") for line in extras["comments"])
    assert len(positions) > 5000 and len(faces) > 8000
    assert np.array_equal(glb["position"], positions @ matrix.T)
    assert np.array_equal(glb["faces"], faces)
    accessor = glb["position_accessor"]
    assert np.allclose(accessor.min, glb["position"].min(axis=0)) and np.allclose(accessor.max, glb["position"].max(axis=0))
    # Unit normals; colors the PLY's, decoded to linear (back to sRGB within one level).
    assert np.allclose(np.linalg.norm(glb["normal"], axis=1), 1, atol=1e-5)
    assert np.abs(to_srgb(glb["color"][:, :3]) - colors).max() <= 1
    assert (glb["color"][:, 3] == 65535).all()
    # On the true surfaces.
    truth = json.loads((scan / "room.truth.json").read_text())
    distances = room_distance(glb["position"].astype(np.float64), truth)
    assert np.median(distances) < 0.002, np.median(distances)


def test_trimesh_loads_the_glb(rgbd_bin, scan):
    path = fuse(rgbd_bin, scan, "loaded.glb", "--texture-size", "0")
    _, glb = read_glb(path)
    mesh = trimesh.load(str(path), force="mesh", process=False)
    assert len(mesh.vertices) == len(glb["position"]) and len(mesh.faces) == len(glb["faces"])
    assert np.array_equal(np.asarray(mesh.vertices, dtype=np.float32), glb["position"])
    assert np.array_equal(mesh.faces, glb["faces"])


def test_level_frame_stands_the_floor_level_in_gltf(rgbd_bin, scan):
    gltf, glb = read_glb(fuse(rgbd_bin, scan, "level.glb", "--frame", "level", "--texture-size", "0"))
    extras = gltf.asset.extras["rgbd"]
    # The level frame (z up) turned so that its up is glTF's +Y: (x, y, z) -> (x, z, -y).
    assert np.array_equal(np.array(extras["matrix"]).reshape(3, 3), [[1, 0, 0], [0, 0, 1], [0, -1, 0]])
    truth = json.loads((scan / "room.truth.json").read_text())
    p = glb["position"].astype(np.float64)
    # Level with +Y up, for this scan it is ARKit's world again: on the true surfaces.
    assert np.median(room_distance(p, truth)) < 0.002
    floor_y = min(truth["room"]["min_corner"][1] + np.array(truth["world_from_room"])[1][3], 0.0)
    floor = p[np.abs(p[:, 1] - floor_y) < 0.05]
    assert len(floor) > 500
    assert np.median(np.abs(floor[:, 1] - floor_y)) < 0.002
    assert (p[:, 1] > floor_y - 0.03).all(), "nothing below the floor"


def test_obj_loads_in_trimesh_with_its_colors(rgbd_bin, scan):
    positions, colors, faces = read_ply(fuse(rgbd_bin, scan, "ref.ply"))
    path = fuse(rgbd_bin, scan, "room.obj", "--texture-size", "0")
    text = path.read_text()
    assert "# axes: the scan's gravity-aligned world" in text
    # Vertex colors alone: no material (with one, trimesh drops the vertex colors).
    assert "mtllib" not in text and not (scan / "room.mtl").exists()
    mesh = trimesh.load(str(path), force="mesh", process=False, maintain_order=True)
    assert len(mesh.vertices) == len(positions) and len(mesh.faces) == len(faces)
    # The text's shortest decimals read back as the same float32 values.
    assert np.array_equal(np.asarray(mesh.vertices, dtype=np.float32), positions)
    assert np.array_equal(mesh.faces, faces)
    vertex_colors = np.asarray(mesh.visual.vertex_colors)[:, :3].astype(int)
    assert np.abs(vertex_colors - colors).max() <= 1
    assert np.allclose(np.linalg.norm(mesh.vertex_normals, axis=1), 1, atol=1e-4)


@pytest.mark.parametrize("name, extra", [("cloud.glb", ["--cloud"]), ("ascii.obj", ["--ascii"]),
                                         ("zero.glb", ["--triangles", "0"]), ("seven.glb", ["--texture-size", "7"]),
                                         ("huge.obj", ["--texture-size", "20000"]), ("tex.ply", ["--texture-size", "1024"])])
def test_refused_options_write_nothing(rgbd_bin, scan, name, extra):
    run = subprocess.run([str(rgbd_bin), "fuse", str(scan / "room"), "-o", str(scan / name), "--voxel", "0.02", *extra],
                         capture_output=True, text=True)
    assert run.returncode == 64, run.stderr
    assert sum(line.startswith("Error: ") for line in run.stderr.splitlines()) == 1, run.stderr
    assert not (scan / name).exists()


def atlas_images(gltf):
    """The GLB's embedded atlases (PIL images), by image index."""
    import io

    from PIL import Image
    blob = gltf.binary_blob()
    images = []
    for image in gltf.images:
        view = gltf.bufferViews[image.bufferView]
        images.append(Image.open(io.BytesIO(blob[view.byteOffset:view.byteOffset + view.byteLength])).convert("RGB"))
    return images


def test_textured_glb_loads_with_its_atlas(rgbd_bin, scan):
    """A .glb of a scan with color is textured by default: a base-color texture (JPEG,
    embedded), texture coordinates inside it; trimesh loads it textured; the texels where
    the triangles take their color are the frames' (not black)."""
    path = fuse(rgbd_bin, scan, "textured.glb", "--triangles", "20000")
    gltf = pygltflib.GLTF2().load(str(path))
    assert len(gltf.meshes[0].primitives) == len(gltf.materials) == len(gltf.images) == 1
    assert gltf.meshes[0].primitives[0].attributes.COLOR_0 is None
    material = gltf.materials[0].pbrMetallicRoughness
    assert material.baseColorTexture is not None
    image = gltf.images[gltf.textures[material.baseColorTexture.index].source]
    atlas = atlas_images(gltf)[0]
    assert image.mimeType == "image/jpeg" and atlas.size[0] == atlas.size[1] >= 64
    assert "textured from" in gltf.asset.extras["rgbd"]["comments"][-1]
    mesh = trimesh.load(str(path), force="mesh", process=False)
    assert isinstance(mesh.visual, trimesh.visual.TextureVisuals)
    uv = np.asarray(mesh.visual.uv)
    assert len(uv) == len(mesh.vertices) and (uv >= 0).all() and (uv <= 1).all()
    # Not black: the frames' colors reached the atlas where the triangles take theirs.
    pixels = np.asarray(atlas)
    u = np.clip((uv[:, 0] * atlas.size[0]).astype(int), 0, atlas.size[0] - 1)
    v = np.clip(((1 - uv[:, 1]) * atlas.size[1]).astype(int), 0, atlas.size[1] - 1)  # trimesh flips v on load
    assert (pixels[v, u].sum(axis=1) > 30).mean() > 0.9
    # Bled: no black texel anywhere (the unused space takes its neighbours' colors).
    assert (pixels.sum(axis=2) > 0).all()


def test_textured_glb_with_several_atlases(rgbd_bin, scan):
    """A side too small for the charts: one primitive, material and JPEG per atlas, every
    texture coordinate of a primitive inside its atlas, no texel black."""
    path = fuse(rgbd_bin, scan, "pages.glb", "--triangles", "20000", "--texture-size", "128")
    gltf = pygltflib.GLTF2().load(str(path))
    primitives = gltf.meshes[0].primitives
    assert len(primitives) > 1 and len(gltf.materials) == len(gltf.images) == len(primitives)
    assert sorted(p.material for p in primitives) == list(range(len(primitives)))
    atlases = atlas_images(gltf)
    assert all(a.size == (128, 128) for a in atlases)
    assert all((np.asarray(a).sum(axis=2) > 0).all() for a in atlases)
    loaded = trimesh.load(str(path), process=False)
    assert len(loaded.geometry) == len(primitives)


def test_textured_obj_has_its_material_and_atlas_beside(rgbd_bin, scan):
    """-o x.obj writes x.obj, x.mtl and x.jpg together; trimesh loads the OBJ with the
    atlas; its texture coordinates are the GLB's (OBJ counts v from the bottom). With
    several atlases: one material and x_k.jpg per atlas."""
    path = fuse(rgbd_bin, scan, "tex/room.obj", "--triangles", "20000", "--texture-size", "2048")
    assert (scan / "tex" / "room.mtl").read_text().rstrip().endswith("map_Kd room.jpg")
    assert (scan / "tex" / "room.jpg").is_file()
    mesh = trimesh.load(str(path), force="mesh", process=False, maintain_order=True)
    assert isinstance(mesh.visual, trimesh.visual.TextureVisuals) and mesh.visual.material.image is not None
    gltf = pygltflib.GLTF2().load(str(fuse(rgbd_bin, scan, "tex/room.glb", "--triangles", "20000", "--texture-size", "2048")))
    uv_accessor = gltf.accessors[gltf.meshes[0].primitives[0].attributes.TEXCOORD_0]
    view = gltf.bufferViews[uv_accessor.bufferView]
    uv = np.frombuffer(gltf.binary_blob(), dtype=np.float32, count=2 * uv_accessor.count, offset=view.byteOffset).reshape(-1, 2)
    obj_uv = np.array([[float(x) for x in line.split()[1:3]] for line in path.read_text().splitlines() if line.startswith("vt ")])
    assert obj_uv.shape == uv.shape
    assert np.allclose(obj_uv[:, 0], uv[:, 0]) and np.allclose(obj_uv[:, 1], 1 - uv[:, 1], atol=1e-6)
    pages = fuse(rgbd_bin, scan, "pages/room.obj", "--triangles", "20000", "--texture-size", "128")
    library = (scan / "pages" / "room.mtl").read_text()
    maps = [line.split()[1] for line in library.splitlines() if line.startswith("map_Kd")]
    assert len(maps) > 1 and maps == [f"room_{k}.jpg" for k in range(len(maps))]
    assert all((scan / "pages" / name).is_file() for name in maps)
    assert pages.read_text().count("usemtl ") == len(maps)


def test_atlas_beyond_the_memory_budget_writes_nothing(rgbd_bin, scan):
    """Atlases that would take more than --max-memory: one line naming it, exit 1, nothing
    written (this small scan's volume, 4 MB, fits; its atlas of 1024 px takes 10 MB while made)."""
    out = scan / "memory.glb"
    run = subprocess.run([str(rgbd_bin), "fuse", str(scan / "room"), "-o", str(out), "--voxel", "0.02", "-q",
                          "--max-memory", "6"], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "--max-memory" in lines[0] and "atlas" in lines[0], run.stderr
    assert not out.exists()
