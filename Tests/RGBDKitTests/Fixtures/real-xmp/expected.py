"""Recomputes the figures RealPortraitXMPTests.swift expects, independently of rgbd:
the XMP packets parsed with xml.etree, the lens tables and the lens model evaluated with
numpy (float32 tables, linear interpolation, the last entry beyond r_max).

    python expected.py          (numpy; run from this directory)
"""
import xml.etree.ElementTree as ET
import numpy as np

NS = {"apdi": "http://ns.apple.com/pixeldatainfo/1.0/", "depthData": "http://ns.apple.com/depthData/1.0/"}
FILES = ["pug.xmp", "heic_depth_data.xmp", "heic_face_data.xmp", "jpeg_depth_data.xmp"]


def fields(path):
    root = ET.parse(path).getroot()
    out = {}
    for element in root.iter():
        for prefix, uri in NS.items():
            if element.tag.startswith("{" + uri + "}"):
                name = element.tag[len(uri) + 2:]
                items = [li.text for li in element.iter("{http://www.w3.org/1999/02/22-rdf-syntax-ns#}li")]
                out[name] = [float(v) for v in items] if items else element.text.strip()
    return out


def fourcc(number):
    return int(number).to_bytes(4, "big").decode("ascii")


def table(coefficients, pixel_size, cx, cy, w, h, n=42):
    r_max = np.hypot(max(cx, w - cx), max(cy, h - cy)) * pixel_size
    r = r_max * np.arange(n) / (n - 1)
    t = r * r
    p = np.zeros_like(t)
    for c in reversed(coefficients):
        p = p * t + c
    s = 1 + p / 100
    return np.where(s > 0, 1 / s - 1, 0).astype(np.float32)


def model(tab, cx, cy, w, h, x, y):
    """Apple's lookup-table model on a w x h image: (q, |q - c|, r_max)."""
    r_max = np.hypot(max(cx, w - cx), max(cy, h - cy))
    vx, vy = x - cx, y - cy
    r = np.hypot(vx, vy)
    grid = np.linspace(0, r_max, len(tab))
    m = np.interp(r, grid, tab.astype(np.float64))  # clamps to the last entry beyond r_max
    return cx + vx * (1 + m), cy + vy * (1 + m), r_max


for name in FILES:
    f = fields(name)
    w, h = int(f["IntrinsicMatrixReferenceWidth"]), int(f["IntrinsicMatrixReferenceHeight"])
    cx, cy = float(f["LensDistortionCenterOffsetX"]), float(f["LensDistortionCenterOffsetY"])
    ps = float(f["PixelSize"])
    k = f["IntrinsicMatrix"]
    forward = table(f["LensDistortionCoefficients"], ps, cx, cy, w, h)
    inverse = table(f["InverseLensDistortionCoefficients"], ps, cx, cy, w, h)
    corners = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], dtype=np.float64)
    qx, qy, _ = model(forward, cx, cy, w, h, corners[:, 0], corners[:, 1])
    displacement = np.hypot(qx - corners[:, 0], qy - corners[:, 1])
    d = np.diff(forward.astype(np.float64))
    print(f"== {name}")
    print(f"  {f['AuxiliaryImageType']} stored {fourcc(f['StoredFormat'])} native {fourcc(f['NativeFormat'])} "
          f"accuracy {f['Accuracy']} reference {w}x{h} pixel {ps} coefficients {len(f['LensDistortionCoefficients'])}"
          f"/{len(f['InverseLensDistortionCoefficients'])} float {f['FloatMinValue']}..{f['FloatMaxValue']}")
    print(f"  fx/fy {k[0] / k[4]:.6f}; distortion center - principal point {np.hypot(cx - k[6], cy - k[7]):.3f} px "
          f"= {np.hypot(cx - k[6], cy - k[7]) / np.hypot(w, h) * 100:.3f} % of the diagonal; extrinsic {f.get('ExtrinsicMatrix')}")
    print(f"  table first {forward[0]!r} last {forward[-1]!r} max {forward.max()!r} at {forward.argmax()} "
          f"min {forward.min()!r} monotonic {bool((d >= 0).all() or (d <= 0).all())} all zero {bool((forward == 0).all())}")
    print(f"  inverse last {inverse[-1]!r} all zero {bool((inverse == 0).all())}")
    print(f"  corner displacement {', '.join(f'{v:.6f}' for v in displacement)} max {displacement.max():.6f} px")
    # Round trip forward then inverse on the 41 x 31 grid of rgbd info, split at the
    # inverse table's radius (where the inverse magnification is held at its last entry).
    x, y = np.meshgrid(np.arange(41) * (w - 1) / 40, np.arange(31) * (h - 1) / 30)
    qx, qy, r_max = model(forward, cx, cy, w, h, x, y)
    px, py, _ = model(inverse, cx, cy, w, h, qx, qy)
    error = np.hypot(px - x, py - y)
    inside = np.hypot(qx - cx, qy - cy) <= r_max
    print(f"  round trip: inside {inside.sum()} beyond {(~inside).sum()}; inside max {error[inside].max():.6f} "
          f"mean {error[inside].mean():.6f}; all points max {error.max():.6f}"
          + (f"; beyond max {error[~inside].max():.6f}" if (~inside).any() else ""))
