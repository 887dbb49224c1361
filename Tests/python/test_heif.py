"""HEIC / HEIF photos: the real rgbd binary and the Python package on files made at test time.

The HEIC files are encoded losslessly (RGB as is, 4:4:4, identity matrix) by libheif's
`heif-enc` from the pixels another decoder (Pillow) gives for the sample's JPEG, so rgbd
must produce exactly what it produces from the JPEG. Transformations (irot, imir, clap)
are added to the files by editing their boxes (heif_boxes.py): rgbd must ignore them.
"""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import heif_boxes

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "Examples" / "sample"


def heif_enc(*args):
    tool = shutil.which("heif-enc")
    if tool is None:
        pytest.fail("heif-enc not found (Scripts/bootstrap.sh installs libheif-examples)", pytrace=False)
    subprocess.run([tool, *map(str, args)], check=True, capture_output=True, timeout=120)


def lossless_heic(pixels, path, bit_depth=None):
    """Encodes an RGB array (uint8, or uint16 with bit_depth) losslessly as HEIC."""
    source = path.with_suffix(".src.png")
    if pixels.dtype == np.uint16:
        # 16-bit RGB PNG through Pillow's raw writer is not supported: write with cv2.
        import cv2
        cv2.imwrite(str(source), pixels[:, :, ::-1])
    else:
        Image.fromarray(pixels).save(source)
    extra = ["-b", str(bit_depth)] if bit_depth else []
    heif_enc("-L", "-p", "chroma=444", "--matrix_coefficients=0", *extra, "-o", path, source)
    source.unlink()
    return path


@pytest.fixture(scope="module")
def sample_pixels():
    """The sample JPEG decoded by Pillow (not by rgbd's TurboJPEG wrapper)."""
    return np.asarray(Image.open(SAMPLE / "shot.jpg").convert("RGB"))


@pytest.fixture(scope="module")
def heic_capture(tmp_path_factory, sample_pixels):
    """A capture directory holding shot.json and shot.heic (no JPEG)."""
    directory = tmp_path_factory.mktemp("heic")
    shutil.copy(SAMPLE / "shot.json", directory / "shot.json")
    lossless_heic(sample_pixels, directory / "shot.heic")
    return directory


@pytest.fixture(scope="module")
def jpeg_outputs(tmp_path_factory, rgbd_bin):
    out = tmp_path_factory.mktemp("jpeg-out")
    subprocess.run([str(rgbd_bin), "rectify", str(SAMPLE / "shot.json"), "-o", str(out), "-q"], check=True)
    return out


def rectify(rgbd_bin, json, out, *extra):
    return subprocess.run([str(rgbd_bin), "rectify", str(json), "-o", str(out), "-q", *extra],
                          capture_output=True, text=True, timeout=120)


def png(path):
    return np.asarray(Image.open(path))


def test_heic_beside_the_json_gives_the_jpegs_rectified_pixels(rgbd_bin, heic_capture, jpeg_outputs, tmp_path):
    run = rectify(rgbd_bin, heic_capture / "shot.json", tmp_path)
    assert run.returncode == 0, run.stderr
    for name in ("shot.color.png", "shot.depth.png"):
        np.testing.assert_array_equal(png(tmp_path / name), png(jpeg_outputs / name), err_msg=name)


def test_transformations_are_not_applied(rgbd_bin, heic_capture, jpeg_outputs, tmp_path):
    plain = (heic_capture / "shot.heic").read_bytes()
    for name, prop in [("irot", heif_boxes.irot(1)), ("imir", heif_boxes.imir(0)),
                       ("clap", heif_boxes.clap(1000, 750))]:
        edited = heif_boxes.add_property(plain, prop)
        image = tmp_path / f"{name}.heic"
        image.write_bytes(edited)
        # Another reader applies it (so the file really carries it) ...
        import pillow_heif
        shown = np.asarray(pillow_heif.open_heif(str(image)))
        assert shown.shape != (1008, 1344, 3) or not np.array_equal(shown, np.asarray(
            pillow_heif.open_heif(str(heic_capture / "shot.heic")))), name
        # ... rgbd does not: the same pixels as without it.
        out = tmp_path / f"out-{name}"
        run = rectify(rgbd_bin, heic_capture / "shot.json", out, "--image", str(image))
        assert run.returncode == 0, (name, run.stderr)
        np.testing.assert_array_equal(png(out / "shot.color.png"), png(jpeg_outputs / "shot.color.png"),
                                      err_msg=name)


def test_format_is_recognised_by_content(rgbd_bin, heic_capture, jpeg_outputs, tmp_path):
    named_jpg = tmp_path / "really-heic.jpg"
    shutil.copy(heic_capture / "shot.heic", named_jpg)
    named_heic = tmp_path / "really-jpeg.HEIC"
    shutil.copy(SAMPLE / "shot.jpg", named_heic)
    for image in (named_jpg, named_heic):
        # (An output folder is never named like a file: out-really-heic-jpg.)
        out = tmp_path / ("out-" + image.name.replace(".", "-"))
        run = rectify(rgbd_bin, SAMPLE / "shot.json", out, "--image", str(image))
        assert run.returncode == 0, run.stderr
        np.testing.assert_array_equal(png(out / "shot.color.png"), png(jpeg_outputs / "shot.color.png"))


def test_a_directory_of_heic_captures_is_a_batch(rgbd_bin, heic_capture, tmp_path):
    run = subprocess.run([str(rgbd_bin), "rectify", str(heic_capture), "-o", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "shot.color.png", "shot.depth.png", "shot.depth.tiff", "shot.intrinsics.json"]


def test_ten_bit_heic_is_converted_to_8_bit(rgbd_bin, sample_pixels, tmp_path):
    # 10-bit values whose top 8 bits are the sample's pixels: converted to 8 bits they
    # must come back within one step (libheif rounds, the top bits truncate).
    ten = (sample_pixels.astype(np.uint16) << 8) | 0x80
    image = lossless_heic(ten, tmp_path / "ten.heic", bit_depth=10)
    import pillow_heif
    assert pillow_heif.open_heif(str(image), convert_hdr_to_8bit=False).info["bit_depth"] == 10
    shutil.copy(SAMPLE / "shot.json", tmp_path / "ten.json")
    import rgbd
    capture = rgbd.load_capture(tmp_path / "ten.json", image)
    color = capture.color
    assert color.dtype == np.uint8 and color.shape == sample_pixels.shape
    assert np.abs(color.astype(int) - sample_pixels).max() <= 1


def test_transposed_heic_is_the_same_clear_error(rgbd_bin, sample_pixels, tmp_path):
    image = lossless_heic(np.ascontiguousarray(np.transpose(sample_pixels, (1, 0, 2))), tmp_path / "turned.heic")
    run = rectify(rgbd_bin, SAMPLE / "shot.json", tmp_path / "out", "--image", str(image))
    assert run.returncode == 1
    lines = [line for line in run.stderr.splitlines() if "error" in line]
    assert len(lines) == 1 and "turned.heic" in lines[0] and "transposed" in lines[0], run.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_corrupt_heic_is_one_clear_line(rgbd_bin, heic_capture, tmp_path):
    data = (heic_capture / "shot.heic").read_bytes()
    cut = tmp_path / "cut.heic"
    cut.write_bytes(data[: len(data) // 2])
    run = rectify(rgbd_bin, SAMPLE / "shot.json", tmp_path / "out", "--image", str(cut))
    assert run.returncode == 1
    lines = [line for line in run.stderr.splitlines() if "error" in line]
    assert len(lines) == 1 and "cut.heic" in lines[0], run.stderr
    junk = tmp_path / "junk.heic"
    junk.write_bytes(b"\x00\x01\x02\x03 not an image")
    run = rectify(rgbd_bin, SAMPLE / "shot.json", tmp_path / "out", "--image", str(junk))
    assert run.returncode == 1 and "not a JPEG or HEIF image" in run.stderr, run.stderr


def test_python_loads_heic_from_memory(heic_capture, jpeg_outputs):
    import rgbd
    capture = rgbd.load_capture_bytes((heic_capture / "shot.json").read_bytes(),
                                      (heic_capture / "shot.heic").read_bytes(), name="shot")
    np.testing.assert_array_equal(capture.rectified_color(), png(jpeg_outputs / "shot.color.png"))
    from_file = rgbd.load_capture(heic_capture / "shot.json")
    np.testing.assert_array_equal(from_file.color, capture.color)


def test_grid_heic_decodes_whole(rgbd_bin, sample_pixels, jpeg_outputs, tmp_path):
    """A tiled image (as iPhones write: a grid of HEVC tiles), here 256-px tiles made by
    pillow-heif, lossless: rgbd decodes the whole picture, tile seams included."""
    import pillow_heif
    height, width, _ = sample_pixels.shape
    heif = pillow_heif.from_bytes(mode="RGB", size=(width, height), data=sample_pixels.tobytes())
    image = tmp_path / "grid.heic"
    heif.save(str(image), quality=-1, chroma=444, matrix_coefficients=0, tile_size=256)
    assert b"grid" in image.read_bytes()[:4096], "pillow-heif wrote no grid item"
    run = rectify(rgbd_bin, SAMPLE / "shot.json", tmp_path / "out", "--image", str(image))
    assert run.returncode == 0, run.stderr
    np.testing.assert_array_equal(png(tmp_path / "out" / "shot.color.png"), png(jpeg_outputs / "shot.color.png"))


def _forged_ispe(data, width, height):
    data = bytearray(data)
    at = data.index(b"ispe")
    # ispe: size, type, version/flags (4), width (4), height (4).
    data[at + 8:at + 16] = width.to_bytes(4, "big") + height.to_bytes(4, "big")
    return bytes(data)


def test_forged_heic_size_is_refused_before_decoding(rgbd_bin, sample_pixels, heic_capture, tmp_path):
    """A HEIC whose `ispe` claims 12000×9000 (the sample's 4:3 aspect, beyond any camera)
    in a few kilobytes is refused from its numbers, before libheif allocates; one whose
    claim its stream contradicts is refused after decoding that stream."""
    import pillow_heif
    small = np.ascontiguousarray(sample_pixels[::84, ::84])  # 16×12
    heif = pillow_heif.from_bytes(mode="RGB", size=(small.shape[1], small.shape[0]), data=small.tobytes())
    tiny = tmp_path / "tiny.heic"
    heif.save(str(tiny), quality=50)
    forged = tmp_path / "forged.heic"
    forged.write_bytes(_forged_ispe(tiny.read_bytes(), 12000, 9000))
    run = rectify(rgbd_bin, SAMPLE / "shot.json", tmp_path / "out", "--image", str(forged))
    assert run.returncode == 1, run.stderr
    lines = [line for line in run.stderr.splitlines() if "error" in line]
    assert len(lines) == 1 and "forged.heic" in lines[0] and "12000×9000" in lines[0], run.stderr
    assert "less than a real photo" in lines[0], run.stderr

    contradicted = tmp_path / "contradicted.heic"
    contradicted.write_bytes(_forged_ispe((heic_capture / "shot.heic").read_bytes(), 4032, 3024))
    run = rectify(rgbd_bin, SAMPLE / "shot.json", tmp_path / "out", "--image", str(contradicted))
    assert run.returncode == 1, run.stderr
    lines = [line for line in run.stderr.splitlines() if "error" in line]
    assert len(lines) == 1 and "contradicted.heic" in lines[0] and "4032×3024" in lines[0], run.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
