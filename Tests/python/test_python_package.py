"""Tests of the `rgbd` Python package (python/) against the real C library (issue 4).

Run with `python3 -m pytest -q Tests/python` (requirements: Tests/python/requirements.txt).
The package is imported from <repo>/python (put at the front of sys.path by pytest.ini's
pythonpath, and given to child interpreters through PYTHONPATH, so no install is needed);
it finds the library as it does for users: $RGBD_LIBRARY (test.sh: the shipped build of
Scripts/build-library.sh), else next to the package, else the repository's builds
(.build/dist/release/, .build/release/). The CLI is $RGBD_BIN, else <repo>/.build/release/rgbd. A missing library or binary is a failure, never a skip.

What is checked: every function of rgbd.h is declared exactly as the header says; results
equal the CLI's outputs bit for bit; shapes, dtypes and NaN conventions; 1000 load/rectify
cycles without memory growth; 4 threads on one capture give the single-threaded results;
corrupt inputs raise RGBDError (in a subprocess, proving the interpreter survives);
rectify_image against the capture's own rectification; a C program built against rgbd.h
alone; the library search outside the repository; the examples (process pool, Dask) work.
(Building, installing and using the package from a wheel: test_packaging.py.)
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import gc
import json
import math
import os
import pickle
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
import tifffile
from plyfile import PlyData

REPO = Path(__file__).resolve().parents[2]
PYTHON_DIR = REPO / "python"

import rgbd  # (from <repo>/python: Tests/python/pytest.ini's pythonpath)
from rgbd import _lib

HEADER = REPO / "Sources" / "CRGBD" / "include" / "rgbd.h"
SAMPLE = REPO / "Examples" / "sample" / "shot.json"
SAMPLE_JPEG = SAMPLE.with_suffix(".jpg")
C_PROGRAM = REPO / "Tests" / "c" / "uses_header.c"
EXAMPLES = REPO / "Examples" / "python"
XYZ, RGB, NXYZ = ("x", "y", "z"), ("red", "green", "blue"), ("nx", "ny", "nz")


# ---------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="session")
def library():
    """The library path the package uses (a failure, not a skip, if there is none)."""
    try:
        found = rgbd.find_library()
        rgbd.library_version()
    except rgbd.LibraryNotFoundError as error:
        pytest.fail(f"the rgbd library is not available: {error}", pytrace=False)
    loaded = Path(rgbd.library_path())
    assert loaded == found, f"loaded {loaded}, but find_library() says {found}"
    return loaded


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("python_package")


def run(*args, timeout=600, env=None, cwd=None):
    """Runs a command; a non-zero exit is a test failure showing its output."""
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=cwd)
    if proc.returncode != 0:
        pytest.fail(f"`{' '.join(map(str, args))}` exited {proc.returncode}:\n{proc.stderr}{proc.stdout}",
                    pytrace=False)
    return proc


@pytest.fixture(scope="module")
def cli_rectified(rgbd_bin, workdir):
    """(directory, stem) of `rgbd rectify SAMPLE`'s outputs."""
    out = workdir / "rect"
    run(rgbd_bin, "rectify", SAMPLE, "-o", out, "-q")
    return out, SAMPLE.stem


@pytest.fixture(scope="module")
def cli_cloud(rgbd_bin, workdir):
    """cli_cloud(*flags) -> path of `rgbd cloud SAMPLE -o X.ply *flags` (cached)."""
    cache = {}

    def make(*flags):
        if flags not in cache:
            name = "cloud" + "".join(f.replace("-", "_").replace(".", "p") for f in flags)
            out = workdir / f"{name}.ply"
            run(rgbd_bin, "cloud", SAMPLE, "-o", out, "-q", *flags)
            cache[flags] = out
        return cache[flags]

    return make


@pytest.fixture(scope="module")
def cap(library):
    with rgbd.load_capture(str(SAMPLE)) as capture:
        yield capture


def vertices(path):
    return PlyData.read(str(path))["vertex"].data


def stack(v, names):
    return np.stack([v[n] for n in names], axis=1)


def sample_json():
    return json.loads(SAMPLE.read_text())


# ---------------------------------------------------------------------------- the ABI

_C_TYPES = {
    "void": None,
    "int": ctypes.c_int,
    "const char *": ctypes.c_char_p,
    "char *": ctypes.c_char_p,
    "int32_t": ctypes.c_int32,
    "size_t": ctypes.c_size_t,
    "float": ctypes.c_float,
    "int32_t *": ctypes.POINTER(ctypes.c_int32),
    "double *": ctypes.POINTER(ctypes.c_double),
    "float *": ctypes.POINTER(ctypes.c_float),
    "uint8_t *": ctypes.POINTER(ctypes.c_uint8),
    "size_t *": ctypes.POINTER(ctypes.c_size_t),
    "rgbd_capture *": _lib.RgbdCaptureP,
    "rgbd_capture **": ctypes.POINTER(_lib.RgbdCaptureP),
    "rgbd_intrinsics *": ctypes.POINTER(_lib.RgbdIntrinsics),
    "rgbd_cloud_options *": ctypes.POINTER(_lib.RgbdCloudOptions),
    "rgbd_lens *": ctypes.POINTER(_lib.RgbdLens),
    "rgbd_rectifier *": _lib.RgbdRectifierP,
    "rgbd_rectifier **": ctypes.POINTER(_lib.RgbdRectifierP),
    "rgbd_scene *": _lib.RgbdSceneP,
    "rgbd_scene **": ctypes.POINTER(_lib.RgbdSceneP),
    "rgbd_frame_info *": ctypes.POINTER(_lib.RgbdFrameInfo),
    "rgbd_rectify_options *": ctypes.POINTER(_lib.RgbdRectifyOptions),
    "char **": ctypes.POINTER(ctypes.c_char_p),
    "rgbd_export_options *": ctypes.POINTER(_lib.RgbdExportOptions),
    "uint32_t *": ctypes.POINTER(ctypes.c_uint32),
    "rgbd_fuse_options *": ctypes.POINTER(_lib.RgbdFuseOptions),
    "rgbd_mesh_write_options *": ctypes.POINTER(_lib.RgbdMeshWriteOptions),
    "rgbd_textured_mesh *": _lib.RgbdTexturedMeshP,
    "rgbd_textured_mesh **": ctypes.POINTER(_lib.RgbdTexturedMeshP),
    "rgbd_mesh *": _lib.RgbdMeshP,
    "rgbd_mesh **": ctypes.POINTER(_lib.RgbdMeshP),
    "rgbd_refine_options *": ctypes.POINTER(_lib.RgbdRefineOptions),
    "rgbd_refine_report *": ctypes.POINTER(_lib.RgbdRefineReport),
    "double": ctypes.c_double,
    "char *const *": ctypes.POINTER(ctypes.c_char_p),
    "rgbd_tag *": ctypes.POINTER(_lib.RgbdTag),
    "rgbd_geo *": ctypes.POINTER(_lib.RgbdGeo),
}


def _c_type(declaration, is_return=False):
    """The ctypes type of a C parameter declaration (its name dropped) or return type."""
    text = re.sub(r"\s+", " ", declaration).strip()
    if not is_return and text != "void":
        text = re.sub(r"\s*\b\w+$", "", text)          # drop the parameter's name
    text = re.sub(r"\s*\*", " *", text).replace("* *", "**").strip()
    key = text[len("const "):] if text.startswith("const ") and text != "const char *" else text
    assert key in _C_TYPES, f"no ctypes mapping for C type {declaration!r} ({key!r})"
    return _C_TYPES[key]


def header_functions():
    """{name: (restype, [argtypes])} of every function rgbd.h declares."""
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.S)
    functions = {}
    for match in re.finditer(r"^([A-Za-z_][\w \t\*]*?)\b(rgbd_\w+)\s*\(([^)]*)\)\s*;", text, flags=re.M):
        ret, name, params = match.groups()
        params = [p for p in (s.strip() for s in params.split(",")) if p and p != "void"]
        functions[name] = (_c_type(ret, is_return=True), [_c_type(p) for p in params])
    return functions


def test_every_header_function_is_declared_exactly(library):
    functions = header_functions()
    assert len(functions) >= 20, f"parsed only {sorted(functions)} from {HEADER}"
    assert set(functions) == set(_lib.FUNCTIONS), \
        f"header vs package: missing {set(functions) - set(_lib.FUNCTIONS)}, extra {set(_lib.FUNCTIONS) - set(functions)}"
    loaded = _lib.lib()
    for name, (restype, argtypes) in functions.items():
        function = getattr(loaded, name)
        assert function.restype == restype, f"{name}: restype {function.restype} vs header {restype}"
        assert list(function.argtypes) == argtypes, f"{name}: argtypes {function.argtypes} vs header {argtypes}"


def test_header_constants_match(library):
    defines = dict((m[0], int(m[1])) for m in re.findall(r"#define (RGBD_\w+) (\d+)", HEADER.read_text()))
    assert len(defines) >= 11, defines
    for name, value in defines.items():
        assert getattr(_lib, name) == value, name
    assert {s.name: int(s) for s in rgbd.Status} == {
        "OK": 0, "IO": 1, "INVALID_JSON": 2, "INVALID_CAPTURE": 3, "INVALID_IMAGE": 4, "INVALID_ARGUMENT": 5,
        "INVALID_SCENE": 6}


def test_struct_layouts_match_the_c_compiler(library, workdir):
    """sizeof/offsetof of the header's structs as cc computes them equal ctypes'."""
    structs = {"rgbd_intrinsics": _lib.RgbdIntrinsics, "rgbd_cloud_options": _lib.RgbdCloudOptions,
               "rgbd_lens": _lib.RgbdLens, "rgbd_frame_info": _lib.RgbdFrameInfo,
               "rgbd_export_options": _lib.RgbdExportOptions, "rgbd_tag": _lib.RgbdTag,
               "rgbd_geo": _lib.RgbdGeo, "rgbd_rectify_options": _lib.RgbdRectifyOptions,
               "rgbd_fuse_options": _lib.RgbdFuseOptions, "rgbd_refine_options": _lib.RgbdRefineOptions,
               "rgbd_refine_report": _lib.RgbdRefineReport, "rgbd_mesh_write_options": _lib.RgbdMeshWriteOptions}
    lines = []
    for c_name, py in structs.items():
        lines.append(f'printf("{c_name} sizeof %zu\\n", sizeof({c_name}));')
        for field, _ in py._fields_:
            lines.append(f'printf("{c_name} {field} %zu\\n", offsetof({c_name}, {field}));')
    source = workdir / "layout.c"
    source.write_text("#include <stddef.h>\n#include <stdio.h>\n#include \"rgbd.h\"\nint main(void) {\n"
                      + "\n".join(lines) + "\nreturn 0;\n}\n")
    binary = workdir / "layout"
    run("cc", "-std=c99", "-Wall", "-Werror", "-I", HEADER.parent, source, "-o", binary)
    expected = {}
    for c_name, py in structs.items():
        expected[f"{c_name} sizeof"] = ctypes.sizeof(py)
        for field, _ in py._fields_:
            expected[f"{c_name} {field}"] = getattr(py, field).offset
    got = dict(line.rsplit(" ", 1) for line in run(binary).stdout.splitlines())
    assert {k: int(v) for k, v in got.items()} == expected


def test_versions(library, rgbd_bin):
    version = rgbd.library_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    assert run(rgbd_bin, "--version").stdout.strip() == version
    assert rgbd.__version__ == version, \
        "the package version (python/rgbd/__init__.py) differs from the library's: release them together"


def test_library_found_by_the_documented_rules(library):
    if os.environ.get(_lib.LIBRARY_ENV):
        assert library == Path(os.path.abspath(os.environ[_lib.LIBRARY_ENV]))
    else:
        assert library in _lib.candidate_paths()
    candidates = _lib.candidate_paths()
    assert candidates[0].parent == PYTHON_DIR / "rgbd"
    builds = [REPO / ".build" / "dist" / "release" / "libRGBDKit.so", REPO / ".build" / "release" / "libRGBDKit.so"]
    assert all(path in candidates for path in builds)
    # The repository's builds: the most recently built library first.
    existing = [path for path in candidates if path.is_file() and REPO / ".build" in path.parents]
    times = [path.stat().st_mtime for path in existing]
    assert times == sorted(times, reverse=True)


# ---------------------------------------------------------------------------- equal to the CLI

def test_rectified_color_equals_cli_png(cap, cli_rectified):
    out, stem = cli_rectified
    png = cv2.imread(str(out / f"{stem}.color.png"), cv2.IMREAD_UNCHANGED)
    assert png is not None and png.dtype == np.uint8 and png.ndim == 3 and png.shape[2] == 3
    np.testing.assert_array_equal(cap.rectified_color(), cv2.cvtColor(png, cv2.COLOR_BGR2RGB))


def test_rectified_depth_equals_cli_tiff(cap, cli_rectified):
    out, stem = cli_rectified
    tiff = tifffile.imread(out / f"{stem}.depth.tiff")
    depth = cap.rectified_depth()
    assert tiff.dtype == np.float32 and tiff.shape == depth.shape
    np.testing.assert_array_equal(np.isnan(depth), np.isnan(tiff))
    assert np.array_equal(depth, tiff, equal_nan=True)


def test_rectified_depth_agrees_with_cli_millimeter_png(cap, cli_rectified):
    out, stem = cli_rectified
    png = cv2.imread(str(out / f"{stem}.depth.png"), cv2.IMREAD_UNCHANGED)
    depth = cap.rectified_depth()
    np.testing.assert_array_equal(png == 0, np.isnan(depth))
    valid = ~np.isnan(depth)
    assert np.abs(png[valid] / 1000.0 - depth[valid]).max() <= 0.0005 + 1e-6


def test_intrinsics_equal_cli_sidecar(cap, cli_rectified):
    out, stem = cli_rectified
    sidecar = json.loads((out / f"{stem}.intrinsics.json").read_text())
    k = cap.intrinsics
    assert k.depth.as_dict() == {key: sidecar[key] for key in ("width", "height", "intrinsic_matrix")}
    assert k.depth.as_dict() == sidecar["depth"]
    assert k.color.as_dict() == sidecar["color"]
    m = np.array(sidecar["color"]["intrinsic_matrix"]).reshape(3, 3).T       # column-major
    np.testing.assert_array_equal(k.color.matrix, m)
    assert (k.color.width, k.color.height) == cap.color_size
    assert (k.depth.width, k.depth.height) == cap.depth_size


@pytest.mark.parametrize("options, flags", [
    ({}, ()),
    ({"keep_edges": True}, ("--keep-edges",)),
    ({"normals": True, "axes": "opengl"}, ("--normals", "--axes", "opengl")),
    ({"stride": 3, "min_depth": 1.7, "max_depth": 2.9, "edge_threshold": 0.02},
     ("--stride", "3", "--min-depth", "1.7", "--max-depth", "2.9", "--flying-pixel-step", "0.02")),
])
def test_point_cloud_equals_cli_ply(cap, cli_cloud, options, flags):
    v = vertices(cli_cloud(*flags))
    result = cap.point_cloud(**options)
    assert len(result) == (3 if options.get("normals") else 2)
    points, colors = result[0], result[1]
    assert len(points) == len(v) > 0
    np.testing.assert_array_equal(points, stack(v, XYZ))
    np.testing.assert_array_equal(colors, stack(v, RGB))
    if options.get("normals"):
        np.testing.assert_array_equal(result[2], stack(v, NXYZ))
    assert cap.point_cloud_count(**{k: o for k, o in options.items() if k != "normals"}) == len(points)


@pytest.mark.parametrize("ascii_", [False, True])
def test_capture_write_ply_is_the_cli_file(cap, cli_cloud, workdir, ascii_):
    flags = ("--normals",) + (("--ascii",) if ascii_ else ())
    path = workdir / f"capture_{ascii_}.ply"
    cap.write_ply(path, ascii=ascii_, normals=True)
    assert path.read_bytes() == cli_cloud(*flags).read_bytes()


def test_write_ply_round_trip(cap, workdir):
    points, colors, normals = cap.point_cloud(normals=True)
    for ascii_ in (False, True):
        path = workdir / f"any_{ascii_}.ply"
        rgbd.write_ply(path, points, colors, normals, ascii=ascii_)
        ply = PlyData.read(str(path))
        assert ply.text == ascii_
        v = ply["vertex"].data
        assert v.dtype.names == XYZ + RGB + NXYZ
        np.testing.assert_array_equal(stack(v, XYZ), points)
        np.testing.assert_array_equal(stack(v, RGB), colors)
        np.testing.assert_array_equal(stack(v, NXYZ), normals)
    # No colors: white; no normals: no normal properties; float64 points are converted.
    path = workdir / "white.ply"
    rgbd.write_ply(path, points.astype(np.float64))
    v = vertices(path)
    assert v.dtype.names == XYZ + RGB
    assert (stack(v, RGB) == 255).all()
    np.testing.assert_array_equal(stack(v, XYZ), points)
    # Non-contiguous input and an empty cloud.
    rgbd.write_ply(workdir / "strided.ply", np.asfortranarray(points[::2]), colors[::2])
    np.testing.assert_array_equal(stack(vertices(workdir / "strided.ply"), XYZ), points[::2])
    rgbd.write_ply(workdir / "empty.ply", np.zeros((0, 3), np.float32))
    assert len(vertices(workdir / "empty.ply")) == 0


# ---------------------------------------------------------------------------- shapes, dtypes, NaN

def test_shapes_dtypes_and_nan_conventions(cap):
    (cw, ch), (dw, dh) = cap.color_size, cap.depth_size
    assert (cw, ch) == (1344, 1008) and (dw, dh) == (256, 192)
    for array, shape, dtype in ((cap.color, (ch, cw, 3), np.uint8), (cap.rectified_color(), (ch, cw, 3), np.uint8),
                                (cap.depth, (dh, dw), np.float32), (cap.rectified_depth(), (dh, dw), np.float32)):
        assert array.shape == shape and array.dtype == dtype and array.flags.c_contiguous
    for depth in (cap.depth, cap.rectified_depth()):
        holes = np.isnan(depth)
        assert 0 < holes.sum() < depth.size / 10, "the sample has a few holes, as NaN"
        assert np.isfinite(depth[~holes]).all() and (depth[~holes] > 0).all(), "no 0/negative/inf depths"
    points, colors, normals = cap.point_cloud(normals=True)
    n = len(points)
    assert points.shape == (n, 3) and points.dtype == np.float32 and points.flags.c_contiguous
    assert colors.shape == (n, 3) and colors.dtype == np.uint8
    assert normals.shape == (n, 3) and normals.dtype == np.float32
    assert np.isfinite(points).all() and (points[:, 2] > 0).all(), "no NaN points; in front of the camera"
    assert np.allclose(np.linalg.norm(normals, axis=1), 1, atol=1e-4)
    kept = cap.point_cloud_count(keep_edges=True)
    assert kept == np.count_nonzero(~np.isnan(cap.rectified_depth())), "keep_edges: one point per valid pixel"
    opengl = cap.point_cloud(axes="opengl")[0]
    np.testing.assert_array_equal(opengl, points * np.float32([1, -1, -1]))


def test_captured_images_equal_the_inputs(cap):
    doc = sample_json()
    rows = [[math.nan if v is None or v <= 0 else v for v in row] for row in doc["depth_data"]]
    assert np.array_equal(cap.depth, np.array(rows, dtype=np.float32), equal_nan=True)
    jpeg = cv2.cvtColor(cv2.imread(str(SAMPLE_JPEG), cv2.IMREAD_UNCHANGED), cv2.COLOR_BGR2RGB)
    np.testing.assert_array_equal(cap.color, jpeg)       # both libjpeg-turbo, same decode
    assert not cap.color.flags.writeable and not cap.depth.flags.writeable
    assert cap.color is cap.color, "as-captured arrays are read once and kept"


def test_calibration_accessors(cap):
    calibration = sample_json()["calibration_data"]
    assert cap.reference_size == tuple(calibration["intrinsic_matrix_reference_dimensions"])
    assert cap.distortion_center == tuple(calibration["lens_distortion_center"])
    for table, key in ((cap.lookup_table, "lens_distortion_lookup_table"),
                       (cap.inverse_lookup_table, "inverse_lens_distortion_lookup_table")):
        assert table.dtype == np.float32
        np.testing.assert_array_equal(table, np.array(calibration[key], dtype=np.float32))
    k = cap.reference_intrinsics
    columns = calibration["intrinsic_matrix"]                 # nested arrays are columns
    assert (k.fx, k.fy, k.cx, k.cy) == (columns[0][0], columns[1][1], columns[2][0], columns[2][1])
    assert (k.width, k.height) == cap.reference_size
    lens = cap.lens
    assert lens.reference_size == cap.reference_size and lens.distortion_center == cap.distortion_center


def test_rectified_arrays_are_new_or_out(cap):
    a, b = cap.rectified_depth(), cap.rectified_depth()
    assert a is not b and not np.shares_memory(a, b) and a.flags.writeable
    out = np.full(cap.rectified_color().shape, 7, np.uint8)
    assert cap.rectified_color(out=out) is out
    np.testing.assert_array_equal(out, cap.rectified_color())
    for bad in (np.empty((10, 10, 3), np.uint8), np.empty(out.shape, np.float32),
                np.empty(out.shape[::-1], np.uint8).T):
        with pytest.raises(ValueError):
            cap.rectified_color(out=bad)
    with pytest.raises(TypeError):
        cap.rectified_depth(out=[0.0] * 10)


def test_load_capture_bytes_equals_load_capture(cap, library):
    mem = rgbd.load_capture_bytes(SAMPLE.read_bytes(), bytearray(SAMPLE_JPEG.read_bytes()), name="from-memory")
    assert mem.name == "from-memory" and mem.json_path is None
    np.testing.assert_array_equal(mem.rectified_color(), cap.rectified_color())
    assert np.array_equal(mem.rectified_depth(), cap.rectified_depth(), equal_nan=True)
    np.testing.assert_array_equal(mem.point_cloud()[0], cap.point_cloud()[0])
    explicit = rgbd.load_capture(SAMPLE, image_path=SAMPLE_JPEG)           # pathlib paths too
    np.testing.assert_array_equal(explicit.color, cap.color)


def test_lifetime_close_and_context_manager(library):
    capture = rgbd.load_capture(SAMPLE)
    assert not capture.closed and "shot" in repr(capture)
    capture.close()
    capture.close()                                                         # idempotent
    assert capture.closed and "closed" in repr(capture)
    for use in (capture.rectified_depth, lambda: capture.intrinsics, capture.point_cloud):
        with pytest.raises(ValueError, match="closed"):
            use()
    with rgbd.load_capture(SAMPLE) as capture:
        capture.rectified_depth()
    assert capture.closed
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(rgbd.load_capture(SAMPLE))
    # Errors cross process boundaries (ProcessPoolExecutor pickles them).
    error = pickle.loads(pickle.dumps(rgbd.RGBDError("x.json: bad", rgbd.Status.INVALID_CAPTURE)))
    assert error.message == "x.json: bad" and error.status is rgbd.Status.INVALID_CAPTURE


# ---------------------------------------------------------------------------- memory

def _rss_mib():
    """Resident set size in MiB, after returning free heap pages to the system (glibc's
    malloc_trim, when there) so that allocator caching does not read as growth."""
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):
        pass
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_1000_load_rectify_cycles_do_not_grow_memory(library, capsys):
    def cycles(n):
        for _ in range(n):
            capture = rgbd.load_capture(SAMPLE)
            capture.rectified_depth()
            capture.rectified_color()
            del capture

    start = time.perf_counter()
    cycles(100)
    warm = _rss_mib()
    middle = time.perf_counter()
    samples = []
    for _ in range(10):
        cycles(100)
        samples.append(_rss_mib())
    elapsed = time.perf_counter() - middle
    after = samples[-1]
    with capsys.disabled():
        print(f"\n[memory] RSS after 100 warm-up cycles {warm:.1f} MiB, after 1000 more {after:.1f} MiB "
              f"(growth {after - warm:+.2f} MiB; every 100 cycles: {' '.join(f'{s:.1f}' for s in samples)}); "
              f"{elapsed:.1f} s for 1000 cycles ({elapsed:.1f} ms per load+rectify, warm-up {middle - start:.1f} s)")
    assert after - warm < 20, f"RSS grew by {after - warm:.1f} MiB over 1000 load/rectify cycles: {samples}"


# ---------------------------------------------------------------------------- threads

def _results(capture):
    points, colors, normals = capture.point_cloud(normals=True)
    return (capture.rectified_color(), capture.rectified_depth(), points, colors, normals,
            capture.point_cloud(stride=2, keep_edges=True)[0])


def _same(a, b):
    return all(np.array_equal(x, y, equal_nan=(x.dtype.kind == "f")) for x, y in zip(a, b))


def test_four_threads_on_one_capture_equal_single_threaded(library, capsys):
    with rgbd.load_capture(SAMPLE) as single:
        expected = _results(single)
    rounds, workers = 5, 4
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for _ in range(rounds):
            # A fresh capture each round, so the threads race on its first (lazy) rectification.
            shared = rgbd.load_capture(SAMPLE)
            barrier = threading.Barrier(workers)

            def work(own):
                barrier.wait()
                if own:                          # half the threads load their own capture too
                    with rgbd.load_capture(SAMPLE) as capture:
                        mine = _results(capture)
                    assert _same(mine, expected)
                return _results(shared)

            for result in pool.map(work, [i % 2 == 0 for i in range(workers)]):
                assert _same(result, expected), "a thread's results differ from the single-threaded run"
            shared.close()
    with capsys.disabled():
        print(f"\n[threads] {rounds} rounds × {workers} threads on one capture: "
              f"{time.perf_counter() - start:.2f} s, identical to the single-threaded run")


def test_close_waits_for_calls_in_other_threads(library):
    capture = rgbd.load_capture(SAMPLE)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(capture.point_cloud, stride=1 + i % 3) for i in range(16)]
        time.sleep(0.01)
        capture.close()
        for future in futures:                  # each either finished or saw a closed capture
            try:
                points, _ = future.result()
                assert len(points) > 0
            except ValueError as error:
                assert "closed" in str(error)


# ---------------------------------------------------------------------------- corrupt inputs

_CORRUPT_SCRIPT = r'''
import json, math, os, sys
import numpy as np
import rgbd
sample, work = sys.argv[1], sys.argv[2]
json_bytes = open(sample, "rb").read()
jpeg_bytes = open(sample[:-5] + ".jpg", "rb").read()
doc = json.loads(json_bytes)

def variant(edit):
    d = json.loads(json_bytes)
    edit(d)
    return json.dumps(d).encode()

def ragged(d): d["depth_data"][5] = d["depth_data"][5][:-3]
def string_depth(d): d["depth_data"][3][3] = "x"
def empty_depth(d): d["depth_data"] = []
def short_table(d): d["calibration_data"]["lens_distortion_lookup_table"] = [0.0]
def nan_table(d): d["calibration_data"]["lens_distortion_lookup_table"] = [float("nan")] * 42
def transposed(d): d["calibration_data"]["intrinsic_matrix_reference_dimensions"] = [3024, 4032]
def bad_matrix(d): d["calibration_data"]["intrinsic_matrix"] = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
def no_calibration(d): del d["calibration_data"]

def write(name, data):
    path = os.path.join(work, name)
    open(path, "wb").write(data)
    return path

cut_json = write("cut.json", json_bytes[: len(json_bytes) // 2])
write("cut.jpg", jpeg_bytes)
empty_json = write("empty.json", b"")
write("empty.jpg", jpeg_bytes)
blank_json = write("blank.json", b" \n\t ")
write("blank.jpg", jpeg_bytes)
depth_at = json_bytes.index(b'"depth_data"')
number_at = json_bytes.index(b".", depth_at)
row_end = json_bytes.index(b"]", depth_at)
calibration_at = json_bytes.index(b"lens_distortion_lookup_table")
rows = json.loads(json_bytes)["depth_data"]
b64 = dict(json.loads(json_bytes), depth_data=__import__("base64").b64encode(
    np.asarray(rows, np.float32).tobytes()).decode(), depth_width=len(rows[0]), depth_height=len(rows))
b64_bytes = json.dumps(b64).encode()
after_depth = json.dumps(dict(depth_data=rows, calibration_data=doc["calibration_data"])).encode()
rng = np.random.default_rng(4)
garbled = bytearray(jpeg_bytes)
garbled[len(garbled) // 3: len(garbled) // 3 + 4000] = rng.bytes(4000)
cases = {
    "truncated_json_file": lambda: rgbd.load_capture(cut_json),
    "truncated_json": lambda: rgbd.load_capture_bytes(json_bytes[: len(json_bytes) // 2], jpeg_bytes),
    "empty_json_file": lambda: rgbd.load_capture(empty_json),
    "blank_json_file": lambda: rgbd.load_capture(blank_json),
    "json_cut_in_calibration": lambda: rgbd.load_capture_bytes(json_bytes[: calibration_at + 40], jpeg_bytes),
    "json_cut_in_a_number": lambda: rgbd.load_capture_bytes(json_bytes[: number_at + 1], jpeg_bytes),
    "json_cut_in_a_row": lambda: rgbd.load_capture_bytes(json_bytes[: row_end + 2], jpeg_bytes),
    "json_cut_in_base64": lambda: rgbd.load_capture_bytes(b64_bytes[: b64_bytes.index(b"depth_data") + 100], jpeg_bytes),
    "json_cut_after_depth": lambda: rgbd.load_capture_bytes(after_depth[: len(after_depth) - 30], jpeg_bytes),
    "ragged_depth_rows": lambda: rgbd.load_capture_bytes(variant(ragged), jpeg_bytes),
    "string_in_depth": lambda: rgbd.load_capture_bytes(variant(string_depth), jpeg_bytes),
    "empty_depth": lambda: rgbd.load_capture_bytes(variant(empty_depth), jpeg_bytes),
    "short_table": lambda: rgbd.load_capture_bytes(variant(short_table), jpeg_bytes),
    "nan_table": lambda: rgbd.load_capture_bytes(variant(nan_table), jpeg_bytes),
    "transposed_reference": lambda: rgbd.load_capture_bytes(variant(transposed), jpeg_bytes),
    "bad_matrix": lambda: rgbd.load_capture_bytes(variant(bad_matrix), jpeg_bytes),
    "no_calibration": lambda: rgbd.load_capture_bytes(variant(no_calibration), jpeg_bytes),
    "truncated_jpeg": lambda: rgbd.load_capture_bytes(json_bytes, jpeg_bytes[: len(jpeg_bytes) // 2]),
    "tiny_jpeg": lambda: rgbd.load_capture_bytes(json_bytes, jpeg_bytes[:100]),
    "garbled_jpeg": lambda: rgbd.load_capture_bytes(json_bytes, bytes(garbled)).rectified_color(),
    "random_bytes": lambda: rgbd.load_capture_bytes(rng.bytes(5000), rng.bytes(5000)),
    "random_jpeg": lambda: rgbd.load_capture_bytes(json_bytes, rng.bytes(5000)),
    "empty_bytes": lambda: rgbd.load_capture_bytes(b"", b""),
    "empty_jpeg": lambda: rgbd.load_capture_bytes(json_bytes, b""),
    "json_null": lambda: rgbd.load_capture_bytes(b"null", jpeg_bytes),
    "json_array": lambda: rgbd.load_capture_bytes(b"[1, 2]", jpeg_bytes),
    "missing_json": lambda: rgbd.load_capture(os.path.join(work, "missing.json")),
    "missing_image": lambda: rgbd.load_capture(sample, os.path.join(work, "missing.jpg")),
    "directory_as_json": lambda: rgbd.load_capture(work),
    "jpeg_as_json": lambda: rgbd.load_capture(sample[:-5] + ".jpg", sample[:-5] + ".jpg"),
    "stride_0": lambda: rgbd.load_capture(sample).point_cloud(stride=0),
    "negative_min_depth": lambda: rgbd.load_capture(sample).point_cloud(min_depth=-1),
    "nan_edge_threshold": lambda: rgbd.load_capture(sample).point_cloud(edge_threshold=float("nan")),
    "ply_into_a_file": lambda: rgbd.load_capture(sample).write_ply(os.path.join(sample, "x.ply")),
    "write_ply_into_a_file": lambda: rgbd.write_ply(os.path.join(sample, "x.ply"), np.zeros((1, 3))),
    "rectify_zero_reference": lambda: rgbd.rectify_image(np.zeros((8, 8), np.uint8), (0, 0), (1, 1), [0, 0]),
    "rectify_short_table": lambda: rgbd.rectify_image(np.zeros((8, 8), np.uint8), (8, 8), (4, 4), [0]),
    "rectify_nan_center": lambda: rgbd.rectify_image(np.zeros((8, 8), np.uint8), (8, 8), (math.nan, 4), [0, 0]),
    "rectify_inf_table": lambda: rgbd.rectify_image(np.zeros((8, 8), np.float32), (8, 8), (4, 4), [0, math.inf]),
    "rectify_negative_step": lambda: rgbd.rectify_image(np.zeros((8, 8), np.float32), (8, 8), (4, 4), [0, 0], -1),
}
results = {}
for name, case in cases.items():
    try:
        case()
        results[name] = ["no error", None, ""]
    except rgbd.RGBDError as error:
        results[name] = ["RGBDError", int(error.status), error.message]
    except Exception as error:
        results[name] = [type(error).__name__, None, str(error)]
print(json.dumps(results))
'''

_EXPECTED_STATUS = {
    # A JSON cut short is not valid JSON, wherever the cut falls (issue 27: a cut in the
    # depth map once gave INVALID_CAPTURE, an empty file INVALID_JSON).
    "truncated_json_file": rgbd.Status.INVALID_JSON,
    "truncated_json": rgbd.Status.INVALID_JSON,
    "empty_json_file": rgbd.Status.INVALID_JSON,
    "blank_json_file": rgbd.Status.INVALID_JSON,
    "json_cut_in_calibration": rgbd.Status.INVALID_JSON,
    "json_cut_in_a_number": rgbd.Status.INVALID_JSON,
    "json_cut_in_a_row": rgbd.Status.INVALID_JSON,
    "json_cut_in_base64": rgbd.Status.INVALID_JSON,
    "json_cut_after_depth": rgbd.Status.INVALID_JSON,
    "ragged_depth_rows": rgbd.Status.INVALID_CAPTURE,
    "string_in_depth": rgbd.Status.INVALID_CAPTURE,
    "empty_depth": rgbd.Status.INVALID_CAPTURE,
    "short_table": rgbd.Status.INVALID_CAPTURE,
    "nan_table": rgbd.Status.INVALID_CAPTURE,
    # Reference dimensions transposed while the principal point and the image agree: the
    # JSON key is what is wrong, not the image.
    "transposed_reference": rgbd.Status.INVALID_CAPTURE,
    "bad_matrix": rgbd.Status.INVALID_CAPTURE,
    "no_calibration": rgbd.Status.INVALID_CAPTURE,
    "truncated_jpeg": rgbd.Status.INVALID_IMAGE,
    "tiny_jpeg": rgbd.Status.INVALID_IMAGE,
    "garbled_jpeg": rgbd.Status.INVALID_IMAGE,
    "random_bytes": rgbd.Status.INVALID_JSON,
    "random_jpeg": rgbd.Status.INVALID_IMAGE,
    "empty_bytes": rgbd.Status.INVALID_JSON,
    "empty_jpeg": rgbd.Status.INVALID_IMAGE,
    "json_null": None,                        # INVALID_JSON or INVALID_CAPTURE
    "json_array": rgbd.Status.INVALID_CAPTURE,
    "missing_json": rgbd.Status.IO,
    "missing_image": rgbd.Status.IO,
    "directory_as_json": None,
    "jpeg_as_json": rgbd.Status.INVALID_JSON,
    "stride_0": rgbd.Status.INVALID_ARGUMENT,
    "negative_min_depth": rgbd.Status.INVALID_ARGUMENT,
    "nan_edge_threshold": rgbd.Status.INVALID_ARGUMENT,
    "ply_into_a_file": rgbd.Status.IO,
    "write_ply_into_a_file": rgbd.Status.IO,
    "rectify_zero_reference": rgbd.Status.INVALID_ARGUMENT,
    "rectify_short_table": rgbd.Status.INVALID_ARGUMENT,
    "rectify_nan_center": rgbd.Status.INVALID_ARGUMENT,
    "rectify_inf_table": rgbd.Status.INVALID_ARGUMENT,
    "rectify_negative_step": rgbd.Status.INVALID_ARGUMENT,
}


def _no_core_dumps():
    """preexec_fn of children that might crash: no core file (in a checkout or elsewhere)."""
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _child_env(**extra):
    """The environment of a child interpreter that imports rgbd from <repo>/python."""
    return {**os.environ, "PYTHONPATH": str(PYTHON_DIR), **extra}


@pytest.fixture(scope="module")
def corrupt_results(library, tmp_path_factory):
    """Every corrupt case, run in a child interpreter that must exit 0 (no crash)."""
    work = tmp_path_factory.mktemp("corrupt")
    proc = subprocess.run([sys.executable, "-c", _CORRUPT_SCRIPT, str(SAMPLE), str(work)],
                          capture_output=True, text=True, timeout=300, cwd=work, env=_child_env(),
                          preexec_fn=_no_core_dumps)
    assert proc.returncode == 0, \
        f"the interpreter running the corrupt inputs died with status {proc.returncode}:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", sorted(_EXPECTED_STATUS))
def test_corrupt_input_raises_rgbd_error(corrupt_results, case):
    kind, status, message = corrupt_results[case]
    assert kind == "RGBDError", f"{case}: expected RGBDError, got {kind}: {message}"
    expected = _EXPECTED_STATUS[case]
    if expected is not None:
        assert status == expected, f"{case}: status {status} ({message}), expected {expected!r}"
    assert message and "\n" not in message, f"{case}: message should be one line: {message!r}"


def test_errors_name_the_file_and_key(library, tmp_path):
    doc = sample_json()
    doc["depth_data"][5] = doc["depth_data"][5][:-3]
    path = tmp_path / "ragged.json"
    path.write_text(json.dumps(doc))
    shutil.copy(SAMPLE_JPEG, tmp_path / "ragged.jpg")
    with pytest.raises(rgbd.RGBDError) as info:
        rgbd.load_capture(path)
    error = info.value
    assert isinstance(error, Exception) and error.status == rgbd.Status.INVALID_CAPTURE
    assert str(error) == error.message
    assert "ragged.json" in error.message and "depth_data" in error.message and "row 5" in error.message
    with pytest.raises(rgbd.RGBDError, match="named-in-message"):
        rgbd.load_capture_bytes(b"{", SAMPLE_JPEG.read_bytes(), name="named-in-message")
    # Keys are read as json-c reads them: an escaped spelling beside the plain one is a duplicate.
    text = SAMPLE.read_text()
    both = text[:text.rindex("}")] + ', "depth\\u005fdata": [[1]]}'
    with pytest.raises(rgbd.RGBDError) as info:
        rgbd.load_capture_bytes(both.encode(), SAMPLE_JPEG.read_bytes(), name="both.json")
    assert info.value.status == rgbd.Status.INVALID_CAPTURE
    assert 'the key "depth_data" appears twice' in info.value.message and "both.json" in info.value.message
    escaped = text.replace('"depth_data"', '"depth\\u005fdata"', 1)
    with rgbd.load_capture_bytes(escaped.encode(), SAMPLE_JPEG.read_bytes()) as same, \
            rgbd.load_capture(SAMPLE) as original:
        assert np.array_equal(same.depth, original.depth, equal_nan=True)
    # A null in a table is named with its index (once "expected an array of numbers, found an array").
    doc = sample_json()
    doc["calibration_data"]["lens_distortion_lookup_table"][7] = None
    with pytest.raises(rgbd.RGBDError) as info:
        rgbd.load_capture_bytes(json.dumps(doc).encode(), SAMPLE_JPEG.read_bytes(), name="nulls.json")
    assert info.value.status == rgbd.Status.INVALID_CAPTURE
    assert info.value.message == \
        "nulls.json: calibration_data.lens_distortion_lookup_table[7]: expected a number, found null"


def test_python_side_argument_checks(cap):
    with pytest.raises(TypeError):
        rgbd.load_capture_bytes(SAMPLE.read_text(), SAMPLE_JPEG.read_bytes())        # str, not bytes
    with pytest.raises(TypeError):
        rgbd.load_capture(None)
    with pytest.raises(ValueError, match="NUL"):
        rgbd.load_capture(str(SAMPLE) + "\0.txt")
    with pytest.raises(ValueError):
        rgbd.load_capture("")
    with pytest.raises(ValueError, match="axes"):
        cap.point_cloud(axes="unity")
    with pytest.raises(ValueError):
        cap.point_cloud(stride=2**40)                                              # would wrap in int32
    with pytest.raises(ValueError):
        rgbd.write_ply("x.ply", np.zeros((4, 2)))
    with pytest.raises(ValueError):
        rgbd.write_ply("x.ply", np.zeros((4, 3)), colors=np.zeros((4, 3)))         # float colors
    with pytest.raises(ValueError):
        rgbd.write_ply("x.ply", np.zeros((4, 3)), colors=np.zeros((3, 3), np.uint8))
    with pytest.raises(ValueError):
        rgbd.write_ply("x.ply", np.zeros((4, 3)), normals=np.zeros((5, 3)))


@pytest.mark.parametrize("image, error", [
    (np.zeros((8, 8), np.float64), ValueError),
    (np.zeros((8, 8), np.uint16), ValueError),
    (np.zeros((8, 8), np.int32), ValueError),
    (np.zeros((8, 8, 2), np.uint8), ValueError),
    (np.zeros((8, 8, 5), np.uint8), ValueError),
    (np.zeros((8,), np.uint8), ValueError),
    (np.zeros((2, 8, 8, 3), np.uint8), ValueError),
    (np.zeros((8, 8, 1), np.float32), ValueError),
    (np.zeros((0, 8), np.uint8), ValueError),
    ([[1, 2], [3, 4]], ValueError),                        # a list of ints is int64
])
def test_rectify_image_rejects_wrong_dtypes_and_shapes(cap, image, error):
    with pytest.raises(error):
        rgbd.rectify_image(image, *cap.lens)


def test_rectify_image_argument_checks(cap):
    image = np.zeros((16, 16, 3), np.uint8)
    with pytest.raises(ValueError):
        rgbd.rectify_image(image, (4032,), (1, 1), [0, 0])
    with pytest.raises(ValueError):
        rgbd.rectify_image(image, (4032, 3024), (1, 1), np.zeros((2, 2), np.float32))
    with pytest.raises(TypeError):
        rgbd.rectify_image(image, (4032.5, 3024), (1, 1), [0, 0])
    with pytest.raises(ValueError):
        rgbd.rectify_image(image, *cap.lens, out=np.zeros((16, 16, 4), np.uint8))
    with pytest.raises(ValueError, match="overlap"):
        rgbd.rectify_image(image, *cap.lens, out=image)


def test_too_small_buffers_are_refused_by_the_library(cap):
    """Python never passes a short buffer; the raw C calls prove the library checks anyway
    (their status, which the table's errcheck raises as RGBDError's, and rgbd_last_error())."""
    loaded = _lib.lib()
    short = np.empty(10, np.uint8)
    handle = cap._handle
    with pytest.raises(rgbd.RGBDError) as error:
        loaded.rgbd_capture_rectified_color(handle, short.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), short.size)
    assert error.value.status == rgbd.Status.INVALID_ARGUMENT
    assert b"rgb" in loaded.rgbd_last_error()
    count = cap.point_cloud_count()
    points = np.empty((count, 3), np.float32)
    colors = np.empty((count, 3), np.uint8)
    written = ctypes.c_size_t(12345)
    with pytest.raises(rgbd.RGBDError) as error:
        loaded.rgbd_capture_point_cloud(
            handle, None, points.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
            colors.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), None, count - 1, ctypes.byref(written))
    assert error.value.status == rgbd.Status.INVALID_ARGUMENT and written.value == 12345, \
        "outputs written only on success"
    with pytest.raises(rgbd.RGBDError) as error:
        loaded.rgbd_capture_rectified_depth(None, None, 0)
    assert error.value.status == rgbd.Status.INVALID_ARGUMENT
    assert loaded.rgbd_last_error() == b"capture is NULL"
    loaded.rgbd_capture_destroy(None)


_HUGE_CENTER_SCRIPT = r'''
import json, sys
import rgbd
doc = json.load(open(sys.argv[1]))
doc["calibration_data"]["lens_distortion_center"] = [1e100, 1e100]
try:
    rgbd.load_capture_bytes(json.dumps(doc).encode(), open(sys.argv[1][:-5] + ".jpg", "rb").read()).rectified_depth()
except rgbd.RGBDError as error:
    print("RGBDError:", error)
'''


def test_absurd_distortion_center_does_not_crash(library, tmp_path):
    # Once a crash (a NaN table index read out of bounds): now rejected when reading.
    proc = subprocess.run([sys.executable, "-c", _HUGE_CENTER_SCRIPT, str(SAMPLE)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=_child_env(),
                          preexec_fn=_no_core_dumps)
    assert proc.returncode == 0, f"the interpreter died with status {proc.returncode}"
    assert "RGBDError" in proc.stdout and "lens_distortion_center" in proc.stdout, proc.stdout
    with pytest.raises(rgbd.RGBDError, match="far outside"):
        rgbd.rectify_image(np.zeros((10, 10), np.uint8), (4032, 3024), (1e50, 0), [0, 0.01])


_HUGE_CAPACITY_SCRIPT = r'''
import ctypes, sys
import numpy as np
import rgbd
from rgbd import _lib
cap = rgbd.load_capture(sys.argv[1])
n = cap.point_cloud_count()
points, colors, written = np.empty((n, 3), np.float32), np.empty((n, 3), np.uint8), ctypes.c_size_t()
try:
    status = _lib.lib().rgbd_capture_point_cloud(
        cap._handle, None, points.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
        colors.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), None, 2**62, ctypes.byref(written))
except rgbd.RGBDError as error:  # the table's errcheck: any status but RGBD_OK
    status = int(error.status)
print(status, _lib.lib().rgbd_last_error())
'''


def test_absurd_capacity_does_not_crash(library, tmp_path):
    # Once a crash (an overflow trap in capacity * 3): now RGBD_ERROR_INVALID_ARGUMENT.
    proc = subprocess.run([sys.executable, "-c", _HUGE_CAPACITY_SCRIPT, str(SAMPLE)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=_child_env(),
                          preexec_fn=_no_core_dumps)
    assert proc.returncode == 0, f"the interpreter died with status {proc.returncode}"
    assert proc.stdout.startswith("5 ") and "capacity" in proc.stdout, proc.stdout


# ---------------------------------------------------------------------------- rectify_image

def test_rectify_image_with_the_capture_calibration(cap):
    np.testing.assert_array_equal(rgbd.rectify_image(cap.color, *cap.lens), cap.rectified_color())
    depth = rgbd.rectify_image(cap.depth, *cap.lens)
    assert depth.dtype == np.float32
    assert np.array_equal(depth, cap.rectified_depth(), equal_nan=True)
    # Any memory layout (copied to C order only when needed), and out=.
    np.testing.assert_array_equal(rgbd.rectify_image(np.asfortranarray(cap.color), *cap.lens),
                                  cap.rectified_color())
    out = np.empty_like(cap.rectified_color())
    assert rgbd.rectify_image(cap.color, *cap.lens, out=out) is out
    # Channels are independent: each channel alone, or with an alpha, gives the same values.
    red = rgbd.rectify_image(cap.color[:, :, 0], *cap.lens)
    np.testing.assert_array_equal(red, cap.rectified_color()[:, :, 0])
    red1 = rgbd.rectify_image(cap.color[:, :, :1], *cap.lens)
    assert red1.shape == cap.color.shape[:2] + (1,)
    np.testing.assert_array_equal(red1[:, :, 0], red)
    rgba = np.dstack([cap.color, np.full(cap.color.shape[:2], 255, np.uint8)])
    rectified_rgba = rgbd.rectify_image(rgba, *cap.lens)
    np.testing.assert_array_equal(rectified_rgba[:, :, :3], cap.rectified_color())
    # The depth edge threshold is the max_relative_step argument (default 0.05 = the capture's).
    assert np.array_equal(rgbd.rectify_image(cap.depth, *cap.lens, max_relative_step=0), depth, equal_nan=True)


def test_rectify_image_zero_table_gives_the_input_back(cap):
    zero = np.zeros(42, np.float32)
    rng = np.random.default_rng(7)
    for image in (cap.color, cap.color[:, :, 1], cap.color[:, :, :1].copy(),
                  rng.integers(0, 256, (37, 53, 4), dtype=np.uint8)):
        result = rgbd.rectify_image(image, cap.reference_size, cap.distortion_center, zero)
        assert result.shape == image.shape and result.dtype == np.uint8 and result is not image
        np.testing.assert_array_equal(result, image)
    for depth in (cap.depth, cap.rectified_depth()):
        result = rgbd.rectify_image(depth, cap.reference_size, cap.distortion_center, zero)
        assert np.array_equal(result, depth, equal_nan=True)


# ------------------------------------------------------------------ forged JPEG headers

def _claiming(width, height, jpeg):
    """`jpeg` with the size in its SOF0 header replaced (a forged or corrupt header)."""
    forged = bytearray(jpeg)
    sof = forged.index(b"\xff\xc0")
    forged[sof + 5:sof + 9] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return bytes(forged)


_FORGED_SCRIPT = r'''
import json, os, sys
import rgbd
sample, jpeg = sys.argv[1], open(sys.argv[2], "rb").read()
try:
    if sys.argv[3] == "bytes":
        rgbd.load_capture_bytes(open(sample, "rb").read(), jpeg, name="forged").point_cloud()
    else:
        rgbd.load_capture(sample, sys.argv[2]).point_cloud()
    print(json.dumps(["no error", None, ""]))
except rgbd.RGBDError as error:
    print(json.dumps(["RGBDError", int(error.status), error.message]))
'''


def _limit_private_memory():
    """preexec_fn: at most 200 MB of private writable memory (RLIMIT_DATA: heap, anonymous
    mappings, thread stacks), so an allocation beyond fails and kills the child. (A
    spawned child's ru_maxrss starts from its parent's peak, pytest's: no measure.)"""
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_DATA, (200_000_000, 200_000_000))


@pytest.mark.parametrize("case", ["tiny", "plausible", "portrait", "sound"])
@pytest.mark.parametrize("how", ["bytes", "path"])
def test_forged_jpeg_headers_cost_no_memory(library, tmp_path, case, how):
    # Once ~580 MB and a full decode for a few kilobytes claiming 16000×12000: now refused
    # from the header (too few bytes for the pixels, or a transposed size) or by a 1/8-scale
    # trial decoding, in a child interpreter limited to 200 MB of private memory (in which
    # the sample itself loads).
    rng = np.random.default_rng(9)
    shape = (18, 24, 3) if case == "tiny" else (480, 640, 3)
    ok, jpeg = cv2.imencode(".jpg", rng.integers(0, 256, shape, dtype=np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert ok
    width, height = (12000, 16000) if case == "portrait" else (16000, 12000)
    path = tmp_path / "forged.jpg"
    path.write_bytes(SAMPLE_JPEG.read_bytes() if case == "sound" else _claiming(width, height, jpeg.tobytes()))
    env = _child_env(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", _FORGED_SCRIPT, str(SAMPLE), str(path), how],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env,
                          preexec_fn=_limit_private_memory)
    assert proc.returncode == 0, f"the interpreter died with status {proc.returncode}:\n{proc.stderr[-2000:]}"
    kind, code, message = json.loads(proc.stdout.strip().splitlines()[-1])
    if case == "sound":
        assert kind == "no error", message
        return
    assert kind == "RGBDError" and code == rgbd.Status.INVALID_IMAGE, (kind, code, message)
    expected = {"tiny": "16000×12000 pixels in", "plausible": "cannot decode JPEG", "portrait": "transposed"}[case]
    assert expected in message, message


def test_big_photo_with_a_bad_json_costs_no_memory(library, rgbd_bin, tmp_path):
    # A real 48 MP photo (what some iPhones take) beside a broken JSON: the JSON is read
    # first for a photo this large, so the capture is refused before the 144 MB of pixels
    # (and the rectified copy) exist, in a process limited to 200 MB of private memory.
    y, x = np.mgrid[0:6000, 0:8000]
    pixels = np.stack([(x // 32) % 256, (y // 24) % 256, ((x + y) // 64) % 256], axis=2).astype(np.uint8)
    ok, jpeg = cv2.imencode(".jpg", pixels, [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    del pixels, x, y
    image = tmp_path / "big.jpg"
    image.write_bytes(jpeg.tobytes())
    text = (SAMPLE).read_text()
    broken = tmp_path / "big.json"
    broken.write_text(text[: len(text) // 2])
    env = _child_env(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", _FORGED_SCRIPT, str(broken), str(image), "path"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env,
                          preexec_fn=_limit_private_memory)
    assert proc.returncode == 0, f"the interpreter died with status {proc.returncode}:\n{proc.stderr[-2000:]}"
    kind, code, message = json.loads(proc.stdout.strip().splitlines()[-1])
    assert kind == "RGBDError" and "big.json" in message, (kind, code, message)
    assert code in (rgbd.Status.INVALID_JSON, rgbd.Status.INVALID_CAPTURE), (kind, code, message)
    for command in ("rectify", "cloud"):
        run = subprocess.run([str(rgbd_bin), command, str(broken), "--image", str(image), "-o", str(tmp_path / "out")],
                             capture_output=True, text=True, timeout=120, preexec_fn=_limit_private_memory)
        errors = [line for line in run.stderr.splitlines() if "error" in line]
        assert run.returncode == 1 and len(errors) == 1 and "big.json" in errors[0], (command, run.stderr)


# ---------------------------------------------------------------------------- C program

@pytest.fixture(scope="module")
def c_program(library, workdir):
    """Tests/c/uses_header.c compiled against rgbd.h alone and linked with the library."""
    if shutil.which("cc") is None:
        pytest.fail("no C compiler `cc` on PATH (install gcc or clang)", pytrace=False)
    binary = workdir / "uses_header"
    directory = library.parent
    if library.name.startswith("lib") and library.suffix == ".so":
        link = [f"-L{directory}", f"-l{library.stem[3:]}"]
    else:
        link = [str(library)]
    run("cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", HEADER.parent, C_PROGRAM,
        *link, f"-Wl,-rpath,{directory}", "-lm", "-o", binary)
    return binary


def test_c_threads_on_one_handle_equal_single_threaded(library, workdir):
    # Tests/c/threads.c: 4 pthreads on one handle, cloud options alternating under them
    # (Scripts/sanitize.sh runs the same program under ThreadSanitizer).
    if shutil.which("cc") is None:
        pytest.fail("no C compiler `cc` on PATH (install gcc or clang)", pytrace=False)
    binary = workdir / "threads"
    directory = library.parent
    link = [f"-L{directory}", f"-l{library.stem[3:]}"] if library.suffix == ".so" else [str(library)]
    run("cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-pthread", "-I", HEADER.parent,
        REPO / "Tests" / "c" / "threads.c", *link, f"-Wl,-rpath,{directory}", "-lm", "-o", binary)
    proc = run(binary, SAMPLE)
    assert "all checks passed" in proc.stdout


def test_c_program_uses_the_header_alone(c_program, cli_cloud, cli_rectified):
    out, stem = cli_rectified
    sidecar = json.loads((out / f"{stem}.intrinsics.json").read_text())
    k = sidecar["depth"]["intrinsic_matrix"]
    points = len(vertices(cli_cloud()))
    proc = run(c_program, SAMPLE, points, k[0], k[4], k[6], k[7])
    assert "all checks passed" in proc.stdout


# ------------------------------------------------- a color image smaller than the depth map

_SMALL_COLOR_SCRIPT = r'''
import json, sys
import numpy as np
import rgbd
cap = rgbd.load_capture(sys.argv[1])
count = cap.point_cloud_count()
kept = cap.point_cloud_count(keep_edges=True)
points, colors = cap.point_cloud()
valid = int(np.isfinite(cap.rectified_depth()).sum())
print(json.dumps({"count": count, "kept": kept, "points": len(points), "valid": valid,
                  "colors": sorted(set(map(tuple, colors.tolist())))}))
'''


@pytest.fixture(scope="module")
def small_color_capture(workdir):
    """The sample's JSON (depth 256×192) beside a one-color 64×48 JPEG, and that JPEG's
    decoded color (the ground truth of every point's color)."""
    directory = workdir / "small_color"
    directory.mkdir()
    shutil.copy(SAMPLE, directory / "shot.json")
    image = np.zeros((48, 64, 3), np.uint8)
    image[:] = (90, 40, 200)  # BGR
    ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 100])
    assert ok
    (directory / "shot.jpg").write_bytes(jpeg.tobytes())
    decoded = cv2.imdecode(jpeg, cv2.IMREAD_COLOR)[:, :, ::-1].reshape(-1, 3)
    assert (decoded == decoded[0]).all()
    return directory / "shot.json", tuple(int(c) for c in decoded[0])


def test_point_cloud_of_a_color_image_smaller_than_the_depth_map(library, small_color_capture, tmp_path):
    # Once killed the interpreter (a precondition trap in the area average): now each
    # depth pixel takes the nearest color pixel. Run in a child, so a crash is a failure.
    path, solid = small_color_capture
    proc = subprocess.run([sys.executable, "-c", _SMALL_COLOR_SCRIPT, str(path)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=_child_env(),
                          preexec_fn=_no_core_dumps)
    assert proc.returncode == 0, f"the interpreter died with status {proc.returncode}:\n{proc.stderr[-2000:]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["count"] == result["points"] and 0 < result["count"] <= result["kept"]
    assert result["kept"] == result["valid"]  # with edges kept, every valid depth pixel
    assert result["colors"] == [list(solid)], "a one-color photo colors every point with its color"


def test_c_program_on_a_color_image_smaller_than_the_depth_map(c_program, small_color_capture):
    path, _ = small_color_capture
    proc = run(c_program, path)
    assert "all checks passed" in proc.stdout


# ---------------------------------------------------------------------------- packaging

def test_library_search_outside_the_repository(library, tmp_path):
    """The package's sources outside any repository (building and installing it is
    test_packaging.py's): the documented search order and its errors."""
    target = tmp_path / "site"
    shutil.copytree(PYTHON_DIR / "rgbd", target / "rgbd", ignore=shutil.ignore_patterns(
        "__pycache__", "*.so", "*.dylib"))
    probe = textwrap.dedent("""
        import sys, rgbd
        try:
            cap = rgbd.load_capture(sys.argv[1])
            print("OK", rgbd.library_path(), cap.rectified_depth().shape)
        except rgbd.LibraryNotFoundError as error:
            print("NOTFOUND", error)
    """)
    env = {k: v for k, v in os.environ.items() if k != _lib.LIBRARY_ENV}
    env["PYTHONPATH"] = str(target)

    def probe_with(extra):
        result = run(sys.executable, "-c", probe, SAMPLE, env={**env, **extra}, cwd=tmp_path)
        return result.stdout.strip()

    # Outside the repository, without $RGBD_LIBRARY: a clear error listing the places.
    text = probe_with({})
    assert text.startswith("NOTFOUND") and "RGBD_LIBRARY" in text and str(target / "rgbd") in text, text
    assert "pip install ./python" in text, text
    # $RGBD_LIBRARY.
    assert probe_with({_lib.LIBRARY_ENV: str(library)}) == f"OK {library} (192, 256)"
    bad = tmp_path / "missing.so"
    text = probe_with({_lib.LIBRARY_ENV: str(bad)})
    assert text.startswith("NOTFOUND") and str(bad) in text, text
    # Next to the package, renamed librgbd.so.
    shutil.copy(library, target / "rgbd" / "librgbd.so")
    assert probe_with({}) == f"OK {target / 'rgbd' / 'librgbd.so'} (192, 256)"


# ---------------------------------------------------------------------------- examples

@pytest.fixture(scope="module")
def capture_dir(tmp_path_factory):
    """A directory with 3 copies of the sample (a, b, c) and one broken capture."""
    directory = tmp_path_factory.mktemp("captures")
    for name in ("a", "b", "c"):
        shutil.copy(SAMPLE, directory / f"{name}.json")
        shutil.copy(SAMPLE_JPEG, directory / f"{name}.jpg")
    return directory


def check_batch_outputs(out, cap, cli_cloud):
    """NAME.npz holds the capture's rectified images and intrinsics; NAME.ply is `rgbd cloud`'s file."""
    def without_source(data):
        return re.sub(rb"comment source [^\n]*\n", b"", data)

    expected_ply = without_source(cli_cloud().read_bytes())
    for name in ("a", "b", "c"):
        with np.load(out / f"{name}.npz") as data:
            np.testing.assert_array_equal(data["color"], cap.rectified_color())
            assert np.array_equal(data["depth"], cap.rectified_depth(), equal_nan=True)
            np.testing.assert_array_equal(data["depth_intrinsics"], cap.intrinsics.depth.matrix)
            np.testing.assert_array_equal(data["color_intrinsics"], cap.intrinsics.color.matrix)
        # Byte-identical to `rgbd cloud`'s PLY but for the header's source comment.
        assert without_source((out / f"{name}.ply").read_bytes()) == expected_ply, name


def test_batch_process_pool_example(cap, cli_cloud, capture_dir, tmp_path, capsys):
    out = tmp_path / "out"
    start = time.perf_counter()
    proc = run(sys.executable, EXAMPLES / "batch_process_pool.py", capture_dir, "-o", out, "--workers", "2",
               env=_child_env())
    elapsed = time.perf_counter() - start
    assert proc.stdout.count("ok") >= 3, proc.stdout
    check_batch_outputs(out, cap, cli_cloud)
    with capsys.disabled():
        print(f"\n[examples] batch_process_pool.py, 3 captures, 2 processes: {elapsed:.1f} s")


def test_batch_dask_example(cap, cli_cloud, capture_dir, tmp_path, capsys):
    try:
        import dask.distributed  # noqa: F401
    except ImportError as error:
        pytest.fail(f"dask[distributed] is not installed ({error}): "
                    "python3 -m pip install -r Tests/python/requirements.txt", pytrace=False)
    out = tmp_path / "out"
    start = time.perf_counter()
    proc = run(sys.executable, EXAMPLES / "batch_dask.py", capture_dir, "-o", out, "--workers", "2",
               "--threads", env=_child_env())
    elapsed = time.perf_counter() - start
    assert proc.stdout.count("ok") >= 3, proc.stdout
    check_batch_outputs(out, cap, cli_cloud)
    with capsys.disabled():
        print(f"\n[examples] batch_dask.py, 3 captures, LocalCluster of 2 workers: {elapsed:.1f} s")


def test_batch_dask_example_on_a_scheduler_address(cap, cli_cloud, capture_dir, tmp_path, monkeypatch, capsys):
    """--scheduler ADDRESS, as on a real cluster: a scheduler on 127.0.0.1 with 2 worker processes."""
    try:
        from dask.distributed import LocalCluster
    except ImportError as error:
        pytest.fail(f"dask[distributed] is not installed ({error}): "
                    "python3 -m pip install -r Tests/python/requirements.txt", pytrace=False)
    monkeypatch.setenv("PYTHONPATH", str(PYTHON_DIR))          # the workers import rgbd from python/
    out = tmp_path / "out"
    start = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        proc = run(sys.executable, EXAMPLES / "batch_dask.py", capture_dir, "-o", out,
                   "--scheduler", cluster.scheduler_address)
    elapsed = time.perf_counter() - start
    assert proc.stdout.count("ok") >= 3, proc.stdout
    check_batch_outputs(out, cap, cli_cloud)
    with capsys.disabled():
        print(f"\n[examples] batch_dask.py --scheduler (2 worker processes on 127.0.0.1): {elapsed:.1f} s "
              "including the cluster's start")


def test_batch_example_reports_a_broken_capture(capture_dir, tmp_path):
    broken = tmp_path / "in"
    shutil.copytree(capture_dir, broken)
    (broken / "b.json").write_text("{")
    proc = subprocess.run([sys.executable, EXAMPLES / "batch_process_pool.py", broken, "-o", tmp_path / "out",
                           "--workers", "2"], capture_output=True, text=True, timeout=300,
                          env=_child_env())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "b.json" in proc.stderr and (tmp_path / "out" / "a.ply").is_file() \
        and (tmp_path / "out" / "c.ply").is_file()


def test_rectify_and_view_example(tmp_path):
    try:
        import matplotlib  # noqa: F401
    except ImportError as error:
        pytest.fail(f"matplotlib is not installed ({error}): "
                    "python3 -m pip install -r Tests/python/requirements.txt", pytrace=False)
    png = tmp_path / "view.png"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "MPLBACKEND")}
    env["PYTHONPATH"] = str(PYTHON_DIR)
    run(sys.executable, EXAMPLES / "rectify_and_view.py", SAMPLE, "-o", png, env=env)
    image = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
    assert image is not None and image.shape[0] > 300 and image.shape[1] > 300


def test_export_open3d_example(tmp_path):
    ply = tmp_path / "open3d.ply"
    env = _child_env()
    proc = run(sys.executable, EXAMPLES / "export_open3d.py", SAMPLE, "-o", ply, env=env)
    try:
        import open3d  # noqa: F401
    except ImportError:
        assert "pip install open3d" in proc.stdout + proc.stderr     # exits 0 with a hint
        return
    v = vertices(ply)
    assert len(v) > 0 and {"nx", "ny", "nz"} <= set(v.dtype.names)


@pytest.mark.parametrize("name, content", [
    ("soi-then-garbage.jpg", b"\xff\xd8\xfe\x00AB"),  # starts like a JPEG (SOI), is not one
    ("empty.heic", b""),
])
def test_broken_photos_are_refused_alike_by_python_and_the_cli(library, rgbd_bin, tmp_path, name, content):
    """One sniffer and one way into a capture: Python's error for a broken photo is the CLI's line."""
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(rgbd.RGBDError) as info:
        rgbd.load_capture(path)
    proc = subprocess.run([str(rgbd_bin), "info", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    line = next(l for l in proc.stderr.splitlines() if l.startswith("rgbd: error:"))
    assert line == f"rgbd: error: {info.value.message}", (line, info.value.message)
    assert str(path) in info.value.message


def test_library_messages_name_python_arguments(library, tmp_path):
    """A message that points at an argument names it as Python does (image_path), never a CLI flag."""
    doc = sample_json()
    path = tmp_path / "alone.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(rgbd.RGBDError) as info:
        rgbd.load_capture(path)
    message = info.value.message
    assert "no image beside it" in message and message.endswith("(image_path)"), message
    assert "--" not in message, message
