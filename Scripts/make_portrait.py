"""Makes a Portrait HEIC from a capture, and the same photo as a JSON + HEIC capture, for the
Portrait benchmark (Benchmarks/cases.toml, case portrait).

    python Scripts/make_portrait.py CAPTURE.json PHOTO.jpg OUTDIR [--quality 75]

Writes OUTDIR/portrait.heic (the photo as one HEVC image, its depth map as an 8-bit
disparity depth image with Apple's depth XMP, composed by Tests/python/portrait_files.py, the tests' helper)
and OUTDIR/portrait-json.json, the same calibration (the tables computed from the XMP's
coefficients) and depth (meters, as the Portrait photo stores them) as a capture JSON,
to be rectified with --image portrait.heic: the two paths decode the same photo.
"""

import argparse
import io
import json
import sys
from pathlib import Path

import numpy as np
import pillow_heif
from PIL import Image

sys.dont_write_bytecode = True  # importing the shared module must not leave Tests/python/__pycache__
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Tests" / "python"))
import portrait_files as pf  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("photo")
    ap.add_argument("out")
    ap.add_argument("--quality", type=int, default=75)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    capture = json.loads(Path(args.capture).read_text())
    calibration = capture["calibration_data"]
    pixels = np.asarray(Image.open(args.photo).convert("RGB"))
    h, w = pixels.shape[:2]
    depth = np.array(capture["depth_data"], dtype=np.float64)
    valid = np.isfinite(depth) & (depth > 0)
    near, far = float(depth[valid].min()), float(depth[valid].max())
    lo, hi = 1 / far, 1 / near
    stored = np.where(valid, np.rint((1 / np.where(valid, depth, 1) - lo) / (hi - lo) * 255), 0).astype(np.uint8)

    # A scene object carrying this capture's calibration (the lens: portrait_files' coefficients).
    scene = pf.Scene(w, h)
    m = calibration["intrinsic_matrix"]
    flat = [v for row in m for v in row] if isinstance(m[0], list) else m
    ref_w, ref_h = calibration["intrinsic_matrix_reference_dimensions"]
    sx, sy = w / ref_w, h / ref_h
    scene.fx, scene.fy, scene.cx, scene.cy = flat[0] * sx, flat[4] * sy, flat[6] * sx, flat[7] * sy
    xmp = scene.xmp(True).replace(b"<apdi:FloatMinValue>0.5<", f"<apdi:FloatMinValue>{lo!r}<".encode())
    xmp = xmp.replace(b"<apdi:FloatMaxValue>1.0<", f"<apdi:FloatMaxValue>{hi!r}<".encode())

    heif = pillow_heif.from_bytes(mode="RGB", size=(w, h), data=pixels.tobytes())
    buffer = io.BytesIO()
    heif.save(buffer, quality=args.quality)
    primary = pf.single_image_item(buffer.getvalue())
    depth_item = pf.single_image_item(pf.encode_heic(stored, True))
    heic = pf.compose_items(primary, depth_item, xmp)
    (out / "portrait.heic").write_bytes(heic)

    disparity = lo + stored.astype(np.float64) * (hi - lo) / 255
    meters = np.where(disparity > 0, 1 / disparity, np.nan).astype(np.float32)
    equivalent = {
        "calibration_data": {
            "intrinsic_matrix": [scene.fx, 0, 0, 0, scene.fy, 0, scene.cx, scene.cy, 1],
            "intrinsic_matrix_reference_dimensions": [w, h],
            "lens_distortion_center": list(scene.center),
            "pixel_size": scene.pixel_size,
            "lens_distortion_lookup_table": [float(v) for v in scene.table],
            "inverse_lens_distortion_lookup_table": [float(v) for v in scene.inverse_table],
        },
        "depth_data": [[float(v) for v in row] for row in meters],
    }
    (out / "portrait-json.json").write_text(json.dumps(equivalent))


if __name__ == "__main__":
    main()
