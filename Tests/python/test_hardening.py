"""Issue 28's reproducers through the Python package (the shipped library): each crafted
file (a few hundred bytes, a sparse file or a FIFO, made here) raises one RGBDError of one
line naming the file (and the key, for calibration values), in a child interpreter
limited to 200 MB of private memory that survives and then loads a sound capture (the
rest of a batch); a FIFO is answered within a second.

Run with `python3 -m pytest -q Tests/python` ($RGBD_LIBRARY: the library to load).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import rgbd

REPO = Path(__file__).resolve().parents[2]
PYTHON_DIR = REPO / "python"
SAMPLE = REPO / "Examples" / "sample" / "shot.json"
SAMPLE_JPEG = SAMPLE.with_suffix(".jpg")


@pytest.fixture(scope="session")
def library():
    """The library the package loads (a failure, not a skip, if there is none)."""
    try:
        rgbd.library_version()
    except rgbd.LibraryNotFoundError as error:
        pytest.fail(f"the rgbd library is not available: {error}", pytrace=False)
    return Path(rgbd.library_path())


def _png(width, height):
    """A 16-bit gray PNG claiming width × height, with 64 zero bytes of image data."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 16, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
            + chunk(b"IEND", b""))


def _tiff(width, height):
    """A 150-byte float32 TIFF claiming width × height, one uncompressed strip of 16 bytes."""
    entries = [(256, 4, 1, width), (257, 4, 1, height), (258, 3, 1, 32), (259, 3, 1, 1), (262, 3, 1, 1),
               (273, 4, 1, 8), (277, 3, 1, 1), (278, 4, 1, height), (279, 4, 1, 16), (339, 3, 1, 3)]
    ifd = struct.pack("<H", len(entries)) + b"".join(struct.pack("<HHII", *e) for e in entries) + struct.pack("<I", 0)
    return b"II*\0" + struct.pack("<I", 8 + 16) + b"\0" * 16 + ifd


def _sample():
    return json.loads(SAMPLE.read_text())


def _write_capture(directory, document, photo=True):
    (directory / "bad.json").write_text(document if isinstance(document, str) else json.dumps(document))
    if photo:
        shutil.copy(SAMPLE_JPEG, directory / "bad.jpg")
    return directory / "bad.json"


def _depth_beside(name, data):
    def make(directory):
        document = _sample()
        del document["depth_data"]
        path = _write_capture(directory, document)
        (directory / name).write_bytes(data)
        return path
    return make


def _calibration(change):
    def make(directory):
        document = _sample()
        change(document["calibration_data"])
        return _write_capture(directory, document)
    return make


def _pixel_size(text):
    def make(directory):
        raw = json.dumps(_sample())
        assert '"pixel_size": 0.0014' in raw
        return _write_capture(directory, raw.replace('"pixel_size": 0.0014', '"pixel_size": ' + text))
    return make


def _sparse(size):
    def make(directory):
        path = _write_capture(directory, _sample(), photo=False)
        with open(directory / "bad.jpg", "wb") as photo:
            photo.truncate(size)
        return path
    return make


def _fifo(name):
    def make(directory):
        if name.endswith(".json"):
            shutil.copy(SAMPLE_JPEG, directory / "bad.jpg")
        else:
            _write_capture(directory, _sample(), photo=False)
        os.mkfifo(directory / name)
        return directory / ("bad.json" if not name.endswith(".heic") else name)
    return make


def _portrait(field, value):
    """A Portrait HEIC whose depth XMP has `field` (an attribute) set to `value`."""
    def make(directory):
        import re
        import portrait_files as pf
        scene = pf.Scene(128, 96)
        xmp = scene.xmp(False, ("p", "q")).decode()
        if field == "fx":
            changed = re.sub(r'(IntrinsicMatrix=")[^ ]*', lambda m: m.group(1) + value, xmp, count=1)
        else:
            changed = re.sub(f'({field}=")[^"]*', lambda m: m.group(1) + value, xmp, count=1)
        assert changed != xmp
        path = directory / "bad.heic"
        path.write_bytes(pf.compose_heic(scene.color(), scene.depth_stored(), changed.encode()))
        return path
    return make


def _matrix(fx, cx=None):
    def change(calibration):
        calibration["intrinsic_matrix"][0][0] = fx
        if cx is not None:
            calibration["intrinsic_matrix"][2][0] = cx
    return change


# name: (maker, what the message must contain)
REPRODUCERS = {
    "png-1000000x1000000": (_depth_beside("bad.depth.png", _png(1_000_000, 1_000_000)),
                            ["bad.depth.png", "1000000×1000000"]),
    "tiff-200000x200000": (_depth_beside("bad.depth.tiff", _tiff(200_000, 200_000)),
                           ["bad.depth.tiff", "200000×200000"]),
    "tiff-32768x16384": (_depth_beside("bad.depth.tiff", _tiff(32768, 16384)), ["bad.depth.tiff", "32768×16384"]),
    "photo-1TiB-sparse": (_sparse(1 << 40), ["bad.jpg", "1099511627776 bytes"]),
    "photo-2GiB-sparse": (_sparse(2 << 30), ["bad.jpg", "2147483648 bytes"]),
    "focal-5e-324": (_calibration(_matrix(5e-324)), ["bad.json", "calibration_data.intrinsic_matrix", "5e-324"]),
    "focal-and-center-1e308": (_calibration(_matrix(1e308, 1e308)),
                               ["bad.json", "calibration_data.intrinsic_matrix", "1e+308"]),
    "pixel-size-1e309": (_pixel_size("1e309"), ["bad.json", "calibration_data.pixel_size", "1e309"]),
    "pixel-size-100000-digits": (_pixel_size("1" + "0" * 100_000),
                                 ["bad.json", "calibration_data.pixel_size", "beyond 64 bits"]),
    "portrait-focal-5e-324": (_portrait("fx", "5e-324"), ["bad.heic", "IntrinsicMatrix", "5e-324"]),
    "portrait-float-max-nan": (_portrait("FloatMaxValue", "NaN"), ["bad.heic", "FloatMaxValue", "NaN"]),
    "portrait-reference-width-nan": (_portrait("IntrinsicMatrixReferenceWidth", "NaN"),
                                     ["bad.heic", "IntrinsicMatrixReferenceWidth", "NaN"]),
    "fifo-photo": (_fifo("bad.jpg"), ["bad.jpg", "FIFO"]),
    "fifo-json": (_fifo("bad.json"), ["bad.json", "FIFO"]),
    "fifo-portrait": (_fifo("bad.heic"), ["bad.heic", "FIFO"]),
}

_SCRIPT = r'''
import json, sys, time
import rgbd
results = []
for path in sys.argv[1:]:
    start = time.monotonic()
    try:
        capture = rgbd.load_capture(path)
        count = capture.point_cloud_count()
        results.append(["ok", None, str(count), time.monotonic() - start])
    except rgbd.RGBDError as error:
        results.append(["RGBDError", int(error.status), error.message, time.monotonic() - start])
print(json.dumps(results))
'''


def _limit_private_memory():
    """preexec_fn: at most 200 MB of private writable memory (RLIMIT_DATA), no core file."""
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_DATA, (200_000_000, 200_000_000))


@pytest.mark.parametrize("case", sorted(REPRODUCERS))
def test_reproducer_raises_one_line_and_the_batch_goes_on(library, tmp_path, case):
    make, expected = REPRODUCERS[case]
    bad = make(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, str(bad), str(SAMPLE)],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env,
                          preexec_fn=_limit_private_memory)
    assert proc.returncode == 0, f"the interpreter died with status {proc.returncode}:\n{proc.stderr[-2000:]}"
    (kind, _status, message, seconds), sound = json.loads(proc.stdout.strip().splitlines()[-1])
    assert kind == "RGBDError", (kind, message)
    assert "\n" not in message and all(part in message for part in expected), message
    assert message.startswith(str(tmp_path)), message
    assert sound[0] == "ok" and int(sound[2]) > 0, sound
    if case.startswith("fifo"):
        assert seconds < 1, f"{case}: {seconds} s"
