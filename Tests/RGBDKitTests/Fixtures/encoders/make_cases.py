#!/usr/bin/env python3
"""Inputs for LZFSETests and ZIPArchiveTests, made at test time by independent encoders:
the PyPI `lzfse` package (Apple's reference encoder) and Python's own `zipfile`.

    make_cases.py lzfse OUTDIR   writes NAME.raw, NAME.lzfse (and NAME.v1.lzfse: the same
                                 stream with its bvx2 headers rewritten as bvx1) and
                                 manifest.json: each case's block magics, read here
    make_cases.py zip OUTDIR     writes archives and manifest.json: each archive's entries
                                 (name, size, CRC, method, the file holding the content)

Deterministic (seeded); run by the Swift tests through $RGBD_TEST_PYTHON.
"""
import io
import json
import math
import random
import struct
import sys
import zipfile
from pathlib import Path

import lzfse


def blocks(stream):
    """The block magics of an LZFSE stream, walking its headers (the format's sizes)."""
    magics, at = [], 0
    while True:
        magic = stream[at:at + 4].decode("latin-1")
        magics.append(magic)
        if magic == "bvx$":
            return magics
        if magic == "bvx-":
            at += 8 + struct.unpack_from("<I", stream, at + 4)[0]
        elif magic == "bvxn":
            at += 12 + struct.unpack_from("<I", stream, at + 8)[0]
        elif magic == "bvx2":
            v0, v1, v2 = struct.unpack_from("<QQQ", stream, at + 8)
            at += (v2 & 0xFFFFFFFF) + ((v0 >> 20) & 0xFFFFF) + ((v1 >> 40) & 0xFFFFF)
        else:
            raise ValueError(f"unexpected block {magic!r}")


def v2_to_v1(stream):
    """The stream with every bvx2 block's header rewritten in the bvx1 layout (the
    reference's uncompressed-table header, 772 bytes); payloads unchanged."""
    out, at = bytearray(), 0
    while True:
        magic = stream[at:at + 4]
        if magic == b"bvx$":
            return bytes(out + magic)
        if magic != b"bvx2":
            size = {b"bvx-": 8 + struct.unpack_from("<I", stream, at + 4)[0],
                    b"bvxn": 12 + struct.unpack_from("<I", stream, at + 8)[0]}[magic]
            out += stream[at:at + size]
            at += size
            continue
        raw, = struct.unpack_from("<I", stream, at + 4)
        v0, v1, v2 = struct.unpack_from("<QQQ", stream, at + 8)
        field = lambda v, lo, n: (v >> lo) & ((1 << n) - 1)
        header_size = field(v2, 0, 32)
        freq = decode_freq(stream[at + 32:at + header_size])
        lit_payload, lmd_payload = field(v0, 20, 20), field(v1, 40, 20)
        header = struct.pack("<4sIIIIII", b"bvx1", raw, lit_payload + lmd_payload, field(v0, 0, 20),
                             field(v0, 40, 20), lit_payload, lmd_payload)
        header += struct.pack("<i4H", field(v0, 60, 3) - 7, *(field(v1, 10 * i, 10) for i in range(4)))
        header += struct.pack("<i3H", field(v1, 60, 3) - 7, field(v2, 32, 10), field(v2, 42, 10), field(v2, 52, 10))
        header += struct.pack("<360H", *freq) + b"\0\0"
        assert len(header) == 772
        out += header + stream[at + header_size:at + header_size + lit_payload + lmd_payload]
        at += header_size + lit_payload + lmd_payload


def decode_freq(packed):
    """bvx2's packed frequency tables (360 values, variable-length codes, LSB first)."""
    if not packed:
        return [0] * 360
    bits = int.from_bytes(packed, "little")
    values = []
    for _ in range(360):
        if bits & 1 == 0:
            width, value = 2, (bits >> 1) & 1
        elif bits & 2 == 0:
            width, value = 3, 2 + ((bits >> 2) & 1)
        elif bits & 4 == 0:
            width, value = 5, 4 + ((bits >> 3) & 3)
        elif bits & 8 == 0:
            width, value = 8, 8 + ((bits >> 4) & 15)
        else:
            width, value = 14, 24 + ((bits >> 4) & 1023)
        values.append(value)
        bits >>= width
    return values


def text(rng, size):
    words = ["depth", "frame", "camera", "intrinsic", "the", "of", "scan", "metres", "point", "cloud",
             "record", "lidar", "confidence", "rgbd", "and", "a", "pose", "timestamp"]
    out, length = [], 0
    while length < size:
        out.append(rng.choice(words) + rng.choice([" ", " ", ", ", ".\n"]))
        length += len(out[-1])
    return "".join(out).encode()[:size]


def depth_map(width=256, height=192, holes=True):
    """A smooth float32 depth map in metres, with NaN holes (as Record3D stores it)."""
    values = []
    for y in range(height):
        for x in range(width):
            d = 1.5 + 0.4 * math.sin(x / 40) * math.cos(y / 30) + 0.002 * x
            if holes and (x - 0.7 * width) ** 2 + (y - 0.31 * height) ** 2 < width * height / 328:
                d = float("nan")
            values.append(d)
    return struct.pack(f"<{len(values)}f", *values)


def lzfse_cases(out):
    rng = random.Random(1)
    cases = {
        "empty": b"",
        "five-bytes": b"12345",
        "text-300": text(rng, 300),
        "text-4000": text(rng, 4000),
        "zeros-4000": bytes(4000),
        "random-3000": rng.randbytes(3000),
        "random-200000": rng.randbytes(200000),
        "zeros-1000000": bytes(1000000),
        "depth-256x192": depth_map(),
        "confidence-256x192": bytes(rng.choice([2, 2, 2, 1, 0]) for _ in range(256 * 192)),
        "text-3000000": text(rng, 3000000),
        "mixed-5000000": b"".join(rng.randbytes(rng.randrange(1, 2000)) * rng.randrange(1, 5)
                                  for _ in range(3000))[:5000000],
    }
    manifest = {}
    for name, raw in cases.items():
        stream = lzfse.compress(raw)
        assert not raw or lzfse.decompress(stream) == raw  # (its decoder refuses an empty output)
        (out / f"{name}.raw").write_bytes(raw)
        (out / f"{name}.lzfse").write_bytes(stream)
        manifest[name] = {"blocks": blocks(stream)}
        if "bvx2" in manifest[name]["blocks"]:
            (out / f"{name}.v1.lzfse").write_bytes(v2_to_v1(stream))
            manifest[name]["v1"] = True
    (out / "manifest.json").write_text(json.dumps(manifest))


def zip_cases(out):
    rng = random.Random(2)
    contents = {
        "metadata": json.dumps({"w": 256, "h": 192, "K": [212.0, 0, 0, 0, 212.0, 0, 128.0, 96.0, 1]}).encode(),
        "empty.txt": b"",
        "rgbd/0.jpg": rng.randbytes(50000),
        "rgbd/0.depth": lzfse.compress(depth_map()),
        "rgbd/0.conf": lzfse.compress(bytes(rng.choice([2, 2, 1, 0]) for _ in range(256 * 192))),
        "text/long.txt": text(rng, 1500000),
        "dir/": b"",
    }
    data = out / "contents"
    data.mkdir()
    files = {}
    for i, (name, raw) in enumerate(contents.items()):
        files[name] = f"contents/{i}"
        (out / files[name]).write_bytes(raw)

    manifest = {}

    class Unseekable(io.RawIOBase):
        """A file zipfile cannot seek in: it writes data descriptors (flag 8) instead
        of going back to the local headers."""
        def __init__(self, f):
            self.f = f

        def writable(self):
            return True

        def write(self, b):
            return self.f.write(b)

    def archive(file, method, force_zip64=False, comment=b"", names=None, streamed=False):
        names = names or list(contents)
        target = Unseekable(open(out / file, "wb")) if streamed else out / file
        with zipfile.ZipFile(target, "w", compression=method, allowZip64=True) as z:
            for name in names:
                info = zipfile.ZipInfo(name, date_time=(2024, 5, 1, 12, 0, 0))
                info.compress_type = method
                with z.open(info, "w", force_zip64=force_zip64) as f:
                    f.write(contents[name])
            z.comment = comment
        if streamed:
            target.f.close()
        with zipfile.ZipFile(out / file) as z:
            manifest[file] = [{"name": i.filename, "size": i.file_size, "crc": i.CRC, "method": i.compress_type,
                               "compressed": i.compress_size, "content": files[i.filename]} for i in z.infolist()]

    archive("stored.zip", zipfile.ZIP_STORED)
    archive("deflated.zip", zipfile.ZIP_DEFLATED)
    archive("zip64.zip", zipfile.ZIP_DEFLATED, force_zip64=True)
    archive("comment.zip", zipfile.ZIP_DEFLATED, comment=b"Record3D scan \xe2\x80\x94 a comment of the archive")
    archive("bzip2.zip", zipfile.ZIP_BZIP2, names=["metadata", "text/long.txt"])
    archive("streamed.zip", zipfile.ZIP_DEFLATED, streamed=True)

    # More entries than 16 bits count: the ZIP64 end record and its locator.
    with zipfile.ZipFile(out / "many.zip", "w", compression=zipfile.ZIP_STORED) as z:
        for i in range(70000):
            z.writestr(zipfile.ZipInfo(f"rgbd/{i}.conf", date_time=(2024, 5, 1, 12, 0, 0)), f"entry {i}\n" * (i % 7))
    manifest["many.zip"] = {"count": 70000}
    (out / "manifest.json").write_text(json.dumps(manifest))


if __name__ == "__main__":
    kind, directory = sys.argv[1], Path(sys.argv[2])
    directory.mkdir(parents=True, exist_ok=True)
    {"lzfse": lzfse_cases, "zip": zip_cases}[kind](directory)
