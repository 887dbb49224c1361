"""Portrait photos with known geometry, as an iPhone stores them, for the tests.

    python Tests/python/portrait_files.py OUTDIR [--width 640 --height 480]

writes OUTDIR/portrait.heic, OUTDIR/portrait.jpg and OUTDIR/truth.json (the scene's
ground truth: intrinsics, coefficients, planes, lines).

No encoder at hand writes a depth image: libheif 1.15 has no API for auxiliary images,
and pillow-heif 1.8.1 reads depth images (`HeifImage.info["depth_images"]`) but has no way
to add one. So this module composes the files itself, from bitstreams pillow-heif encodes:

- HEIC: the primary image (item 1, `hvc1`; the other items are hidden), the depth image (item 2, `hvc1`, 8-bit
  monochrome, lossless so that the stored values are exact) with `auxC`
  `urn:mpeg:hevc:2015:auxid:2` and an `auxl` reference to item 1, the depth metadata as an
  XMP `mime` item (`application/rdf+xml`, item 3) linked to item 2 by `cdsc`, and a
  Portrait Effects Matte (item 4, `auxC urn:com:apple:photo:2018:aux:portraiteffectsmatte`).
- JPEG: the primary JPEG with an APP2 `MPF` index listing the depth JPEG (with the XMP in
  its APP1) and the matte JPEG, appended after it.

The scene (`Scene`): a camera with Apple's lens polynomial (`FORWARD` coefficients, whose
42-entry table rises to about +1.4 % at the corner and is not monotonic, and `INVERSE`
ones fitted to undo it within half a pixel, on a 12 MP photo too), a rectified image of straight black lines
on white at known positions, and a depth scene of fronto-parallel planes at 1, 1.25 and
2 m stored as disparity (1/m) over 0.5...1.0 in 8 bits: 0, 153 and 255 exactly.
Everything is deterministic.
"""

import argparse
import io
import json
import struct
from pathlib import Path

import numpy as np
import pillow_heif
from PIL import Image

PIXELDATAINFO = "http://ns.apple.com/pixeldatainfo/1.0/"
DEPTHDATA = "http://ns.apple.com/depthData/1.0/"
DEPTH_AUX = "urn:mpeg:hevc:2015:auxid:2"
MATTE_AUX = "urn:com:apple:photo:2018:aux:portraiteffectsmatte"

# Disparity range of the stored values (1/m): 0 -> 0.5 (2 m), 255 -> 1.0 (1 m).
DISPARITY_RANGE = (0.5, 1.0)
PLANES = {"far": 2.0, "middle": 1.25, "near": 1.0}


def lens_table(coefficients, pixel_size, center, width, height, count=42):
    """Apple's table of a lens polynomial, computed independently of rgbd (float64, then float32)."""
    cx, cy = center
    dx = max(cx, width - cx)
    dy = max(cy, height - cy)
    r_max = np.hypot(dx, dy) * pixel_size
    r = r_max * np.arange(count) / (count - 1)
    t = r * r
    p = np.zeros_like(t)
    for k, c in enumerate(coefficients):
        p += c * t ** k
    s = 1 + p / 100
    with np.errstate(divide="ignore"):
        table = np.where(s > 0, 1 / s - 1, 0.0)
    return table.astype(np.float32)


def apply_table(table, center, width, height, x, y):
    """rgbd's lookup-table model (docs/lens-model.md) on points x, y of a width x height image."""
    cx, cy = center
    r_max = np.hypot(max(cx, width - cx), max(cy, height - cy))
    vx, vy = x - cx, y - cy
    r = np.hypot(vx, vy)
    n = len(table)
    pos = np.minimum(r * (n - 1) / r_max, n - 1)
    i = np.minimum(pos.astype(np.int64), n - 2)
    f = pos - i
    mag = table[i].astype(np.float64) * (1 - f) + table[i + 1].astype(np.float64) * f
    mag = np.where(r < r_max, mag, float(table[-1]))
    return cx + vx * (1 + mag), cy + vy * (1 + mag)


def invert_table(table, center, width, height, x, y, iterations=60):
    """The points p with apply_table(p) = (x, y), by fixed-point iteration on the radius."""
    cx, cy = center
    vx, vy = x - cx, y - cy
    target = np.hypot(vx, vy)
    rho = target.copy()
    for _ in range(iterations):
        px = cx + vx * np.divide(rho, target, out=np.zeros_like(rho), where=target > 0)
        py = cy + vy * np.divide(rho, target, out=np.zeros_like(rho), where=target > 0)
        qx, qy = apply_table(table, center, width, height, px, py)
        mapped = np.hypot(qx - cx, qy - cy)
        mag = np.divide(mapped, rho, out=np.ones_like(rho), where=rho > 0) - 1
        rho = target / (1 + mag)
    scale = np.divide(rho, target, out=np.ones_like(rho), where=target > 0)
    return cx + vx * scale, cy + vy * scale


class Scene:
    """The camera, lens and scene of the test photos, for a reference image of width x height."""

    def __init__(self, width=640, height=480):
        self.width, self.height = width, height
        s = width / 640
        self.fx = self.fy = 520.0 * s
        self.cx, self.cy = 322.5 * s, 238.25 * s
        self.center = (318.75 * s, 243.5 * s)          # LensDistortionCenterOffsetX/Y
        r_px = np.hypot(max(self.center[0], width - self.center[0]), max(self.center[1], height - self.center[1]))
        self.pixel_size = 4.8 / r_px                   # r_max = 4.8 mm, as on a phone's main camera
        R = r_px * self.pixel_size
        # P(r) = -(3.3989 u - 2.2377 u^2 + 0.2588 u^3) percent, u = (r / r_max)^2: the
        # table rises to +1.456 % near the corner and falls back to +1.44 % at it (not
        # monotonic, flat at the end, like a real phone's), 36.6 px on a 12 MP photo.
        self.forward = [float(f"{c:.6e}") for c in (0.0, -3.3989 / R**2, 2.2377 / R**4, -0.2588 / R**6, 0.0, 0.0, 0.0, 0.0)]
        self.table = lens_table(self.forward, self.pixel_size, self.center, width, height)
        self.inverse = self._fit_inverse(R)
        self.inverse_table = lens_table(self.inverse, self.pixel_size, self.center, width, height)
        self.depth_width, self.depth_height = width // 4, height // 4
        # Lines of the rectified image (pixel coordinates of the reference image).
        self.rows = [round(height * k / 8) + 0.25 for k in range(1, 8)]
        self.columns = [round(width * k / 10) - 0.5 for k in range(1, 10)]

    def _fit_inverse(self, R):
        """Coefficients whose table undoes the forward table: P_inv(r_d) with
        1/(1 + P_inv/100) - 1 = r_u/r_d - 1 where r_u (1 + t(r_u)) = r_d."""
        rd = np.linspace(1e-3, 1.0, 400) * R
        # rectified radius of each distorted radius, from the forward polynomial itself
        ru = rd.copy()
        for _ in range(100):
            t = ru * ru
            p = sum(c * t**k for k, c in enumerate(self.forward))
            mag = 1 / (1 + p / 100) - 1
            ru = rd / (1 + mag)
        ti = ru / rd - 1
        p_inv = 100 * (1 / (1 + ti) - 1)
        rho2 = (rd / R) ** 2
        basis = np.stack([rho2**k for k in range(1, 6)], axis=1)
        fit, *_ = np.linalg.lstsq(basis, p_inv, rcond=None)
        return [0.0] + [float(f"{c / R**(2 * (k + 1)):.6e}") for k, c in enumerate(fit)] + [0.0, 0.0]

    def rectified_to_distorted(self, width, height, x, y):
        """Where rectified point (x, y) of a width x height image lies in the captured image."""
        c = (self.center[0] * width / self.width, self.center[1] * height / self.height)
        return apply_table(self.table, c, width, height, x, y)

    def distorted_to_rectified(self, width, height, x, y):
        c = (self.center[0] * width / self.width, self.center[1] * height / self.height)
        return invert_table(self.table, c, width, height, x, y)

    def color(self):
        """The captured (distorted) color image: dark lines (Gaussian profile, sigma 1.2 px)
        at `rows` and `columns` of the rectified image, on a light background with a
        tint that varies smoothly."""
        w, h = self.width, self.height
        y, x = np.mgrid[0:h, 0:w].astype(np.float64)
        ux, uy = self.distorted_to_rectified(w, h, x, y)
        ink = np.zeros_like(ux)
        for r in self.rows:
            ink = np.maximum(ink, np.exp(-0.5 * ((uy - r) / 1.2) ** 2))
        for c in self.columns:
            ink = np.maximum(ink, np.exp(-0.5 * ((ux - c) / 1.2) ** 2))
        base = np.stack([220 + 20 * ux / w, 225 + 15 * uy / h, np.full_like(ux, 230.0)], axis=-1)
        rgb = base * (1 - ink[..., None]) + 20 * ink[..., None]
        return np.clip(np.rint(rgb), 0, 255).astype(np.uint8)

    def plane_of(self, ux, uy):
        """Depth (m) of the rectified reference point: near square in the middle, far right third."""
        w, h = self.width, self.height
        depth = np.full(ux.shape, PLANES["middle"])
        depth = np.where(ux >= 2 * w / 3, PLANES["far"], depth)
        near = (np.abs(ux - 0.4 * w) < 0.15 * w) & (np.abs(uy - 0.5 * h) < 0.2 * h)
        return np.where(near, PLANES["near"], depth)

    def depth_stored(self):
        """The depth image: 8-bit disparity of the plane each captured depth pixel sees."""
        w, h = self.depth_width, self.depth_height
        y, x = np.mgrid[0:h, 0:w].astype(np.float64)
        ux, uy = self.distorted_to_rectified(w, h, x, y)
        depth = self.plane_of(ux * self.width / w, uy * self.height / h)
        lo, hi = DISPARITY_RANGE
        return np.rint((1 / depth - lo) / (hi - lo) * 255).astype(np.uint8)

    def depth_meters(self, stored):
        lo, hi = DISPARITY_RANGE
        disparity = lo + stored.astype(np.float64) * (hi - lo) / 255
        return np.where(disparity > 0, 1 / disparity, np.nan).astype(np.float32)

    def matte(self):
        """A person mask: 255 inside the near square (at twice the depth map's size)."""
        w, h = 2 * self.depth_width, 2 * self.depth_height
        y, x = np.mgrid[0:h, 0:w].astype(np.float64)
        ux, uy = self.distorted_to_rectified(w, h, x, y)
        ux, uy = ux * self.width / w, uy * self.height / h
        return (self.plane_of(ux, uy) == PLANES["near"]).astype(np.uint8) * 255

    def xmp(self, element_form=True, prefixes=("apdi", "depthData"), accuracy="relative"):
        """The depth image's XMP: fields as elements (lists as rdf:Seq) or as attributes."""
        pdi, dd = prefixes
        matrix = [self.fx, 0, 0, 0, self.fy, 0, self.cx, self.cy, 1]
        fields = [
            (pdi, "AuxiliaryImageType", "disparity"), (pdi, "StoredFormat", "L008"), (pdi, "NativeFormat", "1751411059"),
            (pdi, "IntMinValue", 0), (pdi, "IntMaxValue", 255),
            (pdi, "FloatMinValue", DISPARITY_RANGE[0]), (pdi, "FloatMaxValue", DISPARITY_RANGE[1]),
            (dd, "Accuracy", accuracy), (dd, "Quality", "high"), (dd, "Filtered", "true"),
            (dd, "IntrinsicMatrix", matrix),
            (dd, "IntrinsicMatrixReferenceWidth", self.width), (dd, "IntrinsicMatrixReferenceHeight", self.height),
            (dd, "LensDistortionCenterOffsetX", self.center[0]), (dd, "LensDistortionCenterOffsetY", self.center[1]),
            (dd, "PixelSize", self.pixel_size),
            (dd, "LensDistortionCoefficients", self.forward), (dd, "InverseLensDistortionCoefficients", self.inverse),
            (dd, "ExtrinsicMatrix", [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0]),
        ]

        def text(v):
            return repr(float(v)) if isinstance(v, float) else str(v)

        head = (f'<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="XMP Core 6.0.0">\n'
                f' <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n'
                f'  <rdf:Description rdf:about="" xmlns:{pdi}="{PIXELDATAINFO}" xmlns:{dd}="{DEPTHDATA}"')
        if element_form:
            body = []
            for prefix, name, value in fields:
                if isinstance(value, list):
                    items = "".join(f"<rdf:li>{text(v)}</rdf:li>" for v in value)
                    body.append(f"   <{prefix}:{name}><rdf:Seq>{items}</rdf:Seq></{prefix}:{name}>")
                else:
                    body.append(f"   <{prefix}:{name}>{text(value)}</{prefix}:{name}>")
            xml = head + ">\n" + "\n".join(body) + "\n  </rdf:Description>\n </rdf:RDF>\n</x:xmpmeta>\n"
        else:
            attrs = []
            for prefix, name, value in fields:
                value = " ".join(text(v) for v in value) if isinstance(value, list) else text(value)
                attrs.append(f'\n    {prefix}:{name}="{value}"')
            xml = head + "".join(attrs) + "/>\n </rdf:RDF>\n</x:xmpmeta>\n"
        return xml.encode()

    def truth(self):
        return {
            "width": self.width, "height": self.height, "depth_width": self.depth_width,
            "depth_height": self.depth_height, "fx": self.fx, "fy": self.fy, "cx": self.cx, "cy": self.cy,
            "center": list(self.center), "pixel_size": self.pixel_size, "forward": self.forward,
            "inverse": self.inverse, "rows": self.rows, "columns": self.columns, "planes": PLANES,
            "table": [float(v) for v in self.table], "inverse_table": [float(v) for v in self.inverse_table],
        }

    def capture_json(self, stored):
        """The equivalent capture JSON (the tutorial's layout): the same calibration with
        the tables computed here, and the depth in meters."""
        depth = self.depth_meters(stored)
        return {
            "calibration_data": {
                "intrinsic_matrix": [self.fx, 0, 0, 0, self.fy, 0, self.cx, self.cy, 1],
                "intrinsic_matrix_reference_dimensions": [self.width, self.height],
                "lens_distortion_center": list(self.center),
                "pixel_size": self.pixel_size,
                "lens_distortion_lookup_table": [float(v) for v in self.table],
                "inverse_lens_distortion_lookup_table": [float(v) for v in self.inverse_table],
            },
            "depth_data": [[float(v) for v in row] for row in depth],
        }


# ----------------------------------------------------------------------------- HEIC

def _box(kind, payload):
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


def _full_box(kind, version, flags, payload):
    return _box(kind, struct.pack(">I", (version << 24) | flags) + payload)


def _children(data, start, end):
    pos = start
    while pos + 8 <= end:
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        header = 8
        if size == 1:
            size, header = struct.unpack(">Q", data[pos + 8:pos + 16])[0], 16
        elif size == 0:
            size = end - pos
        yield kind, pos, pos + header, pos + size
        pos += size


def _child(data, start, end, kind):
    for k, box, payload, box_end in _children(data, start, end):
        if k == kind:
            return box, payload, box_end
    raise ValueError(f"no {kind!r} box")


def single_image_item(heic):
    """(properties, coded data) of the primary item of a one-image HEIC written by
    pillow-heif: the property boxes associated with it (hvcC, ispe, colr, pixi, ...) and
    its HEVC data."""
    _, meta, meta_end = _child(heic, 0, len(heic), b"meta")
    meta += 4
    _, pitm, _ = _child(heic, meta, meta_end, b"pitm")
    primary = struct.unpack(">H", heic[pitm + 4:pitm + 6])[0]
    _, iprp, iprp_end = _child(heic, meta, meta_end, b"iprp")
    _, ipco, ipco_end = _child(heic, iprp, iprp_end, b"ipco")
    properties = [heic[box:end] for _, box, _, end in _children(heic, ipco, ipco_end)]
    _, ipma, _ = _child(heic, iprp, iprp_end, b"ipma")
    version, flags = heic[ipma], int.from_bytes(heic[ipma + 1:ipma + 4], "big")
    pos = ipma + 4
    count = struct.unpack(">I", heic[pos:pos + 4])[0]
    pos += 4
    mine = []
    for _ in range(count):
        id_size = 2 if version < 1 else 4
        item = int.from_bytes(heic[pos:pos + id_size], "big")
        n = heic[pos + id_size]
        pos += id_size + 1
        for _ in range(n):
            if flags & 1:
                index = struct.unpack(">H", heic[pos:pos + 2])[0] & 0x7FFF
                pos += 2
            else:
                index = heic[pos] & 0x7F
                pos += 1
            if item == primary and index:
                mine.append(properties[index - 1])
    _, iloc, _ = _child(heic, meta, meta_end, b"iloc")
    version = heic[iloc]
    pos = iloc + 4
    offset_size, length_size = heic[pos] >> 4, heic[pos] & 15
    base_size, index_size = heic[pos + 1] >> 4, (heic[pos + 1] & 15 if version else 0)
    pos += 2
    count = int.from_bytes(heic[pos:pos + (2 if version < 2 else 4)], "big")
    pos += 2 if version < 2 else 4

    def read(n):
        nonlocal pos
        value = int.from_bytes(heic[pos:pos + n], "big") if n else 0
        pos += n
        return value

    for _ in range(count):
        item = read(2 if version < 2 else 4)
        method = read(2) & 15 if version in (1, 2) else 0
        read(2)
        base = read(base_size)
        extents = read(2)
        data = b""
        for _ in range(extents):
            read(index_size)
            offset = read(offset_size)
            length = read(length_size)
            data += heic[base + offset:base + offset + length]
        if item == primary:
            if method != 0:
                raise ValueError("unexpected iloc construction method")
            return mine, data
    raise ValueError("no iloc entry for the primary item")


def encode_heic(pixels, lossless):
    mode = "RGB" if pixels.ndim == 3 else "L"
    heif = pillow_heif.from_bytes(mode=mode, size=(pixels.shape[1], pixels.shape[0]), data=pixels.tobytes())
    out = io.BytesIO()
    if lossless:
        heif.save(out, quality=-1, chroma=444)
    else:
        heif.save(out, quality=92)
    return out.getvalue()


def compose_heic(color, depth, xmp, matte=None, lossless_color=False):
    """A Portrait HEIC: color (H x W x 3 uint8), depth (h x w uint8) with the XMP, an optional matte."""
    matte_item = None if matte is None else single_image_item(encode_heic(matte, True))
    return compose_items(single_image_item(encode_heic(color, lossless_color)),
                         single_image_item(encode_heic(depth, True)), xmp, matte_item)


def compose_items(primary, depth, xmp, matte=None):
    """A Portrait HEIC from (properties, data) of the primary, depth and matte images."""
    items = [("hvc1", *primary)]
    depth_props, depth_data = depth
    auxc_depth = _full_box(b"auxC", 0, 0, DEPTH_AUX.encode() + b"\0")
    items.append(("hvc1", depth_props + [auxc_depth], depth_data))
    items.append(("mime", [], xmp))
    if matte is not None:
        matte_props, matte_data = matte
        items.append(("hvc1", matte_props + [_full_box(b"auxC", 0, 0, MATTE_AUX.encode() + b"\0")], matte_data))

    ftyp = _box(b"ftyp", b"heic" + struct.pack(">I", 0) + b"mif1heicmiaf")
    hdlr = _full_box(b"hdlr", 0, 0, struct.pack(">I", 0) + b"pict" + bytes(12) + b"\0")
    pitm = _full_box(b"pitm", 0, 0, struct.pack(">H", 1))
    infes = b""
    for number, (kind, _, _) in enumerate(items, start=1):
        payload = struct.pack(">HH", number, 0) + kind.encode() + b"\0"
        if kind == "mime":
            payload += b"application/rdf+xml\0"
        # Items other than the primary are hidden (flag 1), as an iPhone marks them.
        infes += _full_box(b"infe", 2, 0 if number == 1 else 1, payload)
    iinf = _full_box(b"iinf", 0, 0, struct.pack(">H", len(items)) + infes)
    refs = _box(b"auxl", struct.pack(">HHH", 2, 1, 1)) + _box(b"cdsc", struct.pack(">HHH", 3, 1, 2))
    if matte is not None:
        refs += _box(b"auxl", struct.pack(">HHH", 4, 1, 1))
    iref = _full_box(b"iref", 0, 0, refs)
    # Properties: each item's own boxes, in order.
    ipco_boxes, associations = [], []
    for number, (_, props, _) in enumerate(items, start=1):
        indices = []
        for prop in props:
            ipco_boxes.append(prop)
            indices.append(len(ipco_boxes))
        associations.append((number, indices))
    ipco = _box(b"ipco", b"".join(ipco_boxes))
    ipma_payload = struct.pack(">I", sum(1 for _, i in associations if i))
    for number, indices in associations:
        if not indices:
            continue
        ipma_payload += struct.pack(">HB", number, len(indices))
        for index in indices:
            essential = 0x80 if not _is_descriptive(ipco_boxes[index - 1]) else 0
            ipma_payload += bytes([essential | index])
    iprp = _box(b"iprp", ipco + _full_box(b"ipma", 0, 0, ipma_payload))

    def iloc(mdat_start):
        payload = bytes([0x44, 0x00]) + struct.pack(">H", len(items))
        offset = mdat_start
        for number, (_, _, data) in enumerate(items, start=1):
            payload += struct.pack(">HHHII", number, 0, 1, offset, len(data))
            offset += len(data)
        return _full_box(b"iloc", 0, 0, payload)

    def meta(mdat_start):
        return _full_box(b"meta", 0, 0, hdlr + pitm + iloc(mdat_start) + iinf + iref + iprp)

    size = len(ftyp) + len(meta(0)) + 8
    mdat = _box(b"mdat", b"".join(data for _, _, data in items))
    return ftyp + meta(size) + mdat


def _is_descriptive(prop):
    return prop[4:8] in (b"ispe", b"colr", b"pixi", b"pasp")


# ----------------------------------------------------------------------------- JPEG

def _segment(marker, payload):
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def encode_jpeg(pixels, quality):
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="JPEG", quality=quality, subsampling=0 if pixels.ndim == 3 else -1)
    return out.getvalue()


def with_xmp(jpeg, xmp):
    return jpeg[:2] + _segment(0xE1, b"http://ns.adobe.com/xap/1.0/\0" + xmp) + jpeg[2:]


def compose_jpeg(color, depth, xmp, matte=None, matte_xmp=None):
    """A Portrait JPEG: the primary with an APP2 MPF index, then the matte JPEG (if any)
    and the depth JPEG, each with its XMP in APP1. The matte comes first: only its XMP's
    subtype tells it from the depth image."""
    extra = [with_xmp(encode_jpeg(depth, 100), xmp)]
    if matte is not None:
        extra.insert(0, with_xmp(encode_jpeg(matte, 100), matte_xmp))
    primary = encode_jpeg(color, 95)
    count = 1 + len(extra)

    def mpf(sizes, offsets):
        ifd_entries = 3
        entries_offset = 8 + 2 + 12 * ifd_entries + 4
        tiff = b"II*\0" + struct.pack("<I", 8) + struct.pack("<H", ifd_entries)
        tiff += struct.pack("<HHI4s", 0xB000, 7, 4, b"0100")
        tiff += struct.pack("<HHII", 0xB001, 4, 1, count)
        tiff += struct.pack("<HHII", 0xB002, 7, 16 * count, entries_offset)
        tiff += struct.pack("<I", 0)
        for k in range(count):
            attribute = 0x20030000 if k == 0 else 0x00000000
            tiff += struct.pack("<IIIHH", attribute, sizes[k], offsets[k], 0, 0)
        return _segment(0xE2, b"MPF\0" + tiff)

    segment_size = len(mpf([0] * count, [0] * count))
    first_size = len(primary) + segment_size
    tiff_start = 2 + 4 + 4  # SOI, APP2 marker and length, "MPF\0"
    sizes, offsets, position = [first_size], [0], first_size
    for image in extra:
        sizes.append(len(image))
        offsets.append(position - tiff_start)
        position += len(image)
    return primary[:2] + mpf(sizes, offsets) + primary[2:] + b"".join(extra)


def matte_xmp():
    """A matte's XMP as Apple writes it: AuxiliaryImageType `depth` with the subtype
    `portraiteffectsmatte` (so only the subtype tells it from the depth image)."""
    return (f'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
            f'<rdf:Description rdf:about="" xmlns:apdi="{PIXELDATAINFO}" '
            f'xmlns:portraitEffectsMatte="http://ns.apple.com/portraitEffectsMatte/1.0/">'
            f'<apdi:AuxiliaryImageSubType>portraiteffectsmatte</apdi:AuxiliaryImageSubType>'
            f'<apdi:NativeFormat>1278226488</apdi:NativeFormat><apdi:AuxiliaryImageType>depth</apdi:AuxiliaryImageType>'
            f'<apdi:StoredFormat>1278226488</apdi:StoredFormat>'
            f'<portraitEffectsMatte:PortraitEffectsMatteVersion>65537</portraitEffectsMatte:PortraitEffectsMatteVersion>'
            f'</rdf:Description></rdf:RDF></x:xmpmeta>').encode()


def write(directory, width=640, height=480, lossless_color=False, matte=True, accuracy="relative"):
    """Writes portrait.heic, portrait.jpg, portrait-equivalent.json (the same capture as a
    JSON, for the HEIC's depth) and truth.json into directory; returns the Scene."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    scene = Scene(width, height)
    color, stored = scene.color(), scene.depth_stored()
    m = scene.matte() if matte else None
    heic = compose_heic(color, stored, scene.xmp(True, ("apdi", "depthData"), accuracy), m, lossless_color)
    (directory / "portrait.heic").write_bytes(heic)
    jpeg = compose_jpeg(color, stored, scene.xmp(False, ("pdi", "dd"), accuracy), m, matte_xmp() if matte else None)
    (directory / "portrait.jpg").write_bytes(jpeg)
    (directory / "portrait-equivalent.json").write_text(json.dumps(scene.capture_json(stored)))
    (directory / "truth.json").write_text(json.dumps(scene.truth(), indent=1))
    return scene


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--width", type=int, default=640)
    ap.add_argument("--height", type=int, default=480)
    ap.add_argument("--lossless-color", action="store_true")
    ap.add_argument("--no-matte", action="store_true")
    args = ap.parse_args()
    write(args.out, args.width, args.height, args.lossless_color, not args.no_matte)


if __name__ == "__main__":
    main()
