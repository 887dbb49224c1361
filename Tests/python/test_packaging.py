"""Tests of what a user installs (issue 8): the Python wheel, Scripts/install.sh, and the
Swift package as another package's dependency. Each runs the real thing from a fresh
clone of the repository, where nothing is built yet.

Run by Scripts/test.sh (with the other tests of Tests/python). They are slow for unit
tests (about two minutes: the clone is built from scratch, and the example package
builds RGBDKit again) and need the Swift toolchain, git, a C compiler, pkg-config and
network access for pip (setuptools in pip's build environment, numpy).

The clone is `git clone` of this repository plus the uncommitted changes of its tracked
files: untracked files and build folders never reach it. Programs run from temporary
folders, with RGBD_LIBRARY, RGBD_BIN, PYTHONPATH and LD_LIBRARY_PATH removed from their
environment, so nothing points into the repository or the clone unless the test says so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest
from plyfile import PlyData

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "Examples" / "sample" / "shot.json"
TRUTH = json.loads((REPO / "Examples" / "sample" / "shot.truth.json").read_text())
LINUX = sys.platform.startswith("linux")
LIBRARY = "libRGBDKit.so" if LINUX else "libRGBDKit.dylib"
VERSION = (REPO / "VERSION").read_text().strip()


def clean_env(**extra):
    """The test process's environment without anything that points at a library, a binary
    or a Python package."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("RGBD_LIBRARY", "RGBD_BIN", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV",
                        "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH")}
    env.update(extra)
    return env


def run(*args, cwd=None, env=None, timeout=1200):
    """Runs a command; a non-zero exit is a test failure showing its output."""
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd,
                          env=clean_env() if env is None else env, timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"`{' '.join(map(str, args))}` exited {proc.returncode}:\n{proc.stderr[-6000:]}"
                    f"{proc.stdout[-3000:]}", pytrace=False)
    return proc


def venv(path: Path) -> Path:
    """A new virtual environment (of the interpreter running the tests); its python."""
    run(sys.executable, "-m", "venv", path)
    return path / "bin" / "python"


def sample_copy(folder: Path) -> Path:
    """The sample capture copied into `folder`; the JSON's path."""
    folder.mkdir(parents=True, exist_ok=True)
    for suffix in (".json", ".jpg"):
        shutil.copy(SAMPLE.with_suffix(suffix), folder / f"shot{suffix}")
    return folder / "shot.json"


def dynamic_section(path: Path) -> str:
    return run("readelf", "-d", path).stdout


def check_self_contained(path: Path):
    """Linux: no Swift runtime among the NEEDED libraries, RUNPATH $ORIGIN."""
    if not LINUX:
        return
    section = dynamic_section(path)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", section)
    assert needed and not [n for n in needed if "swift" in n.lower() or "Foundation" in n], needed
    assert re.search(r"\((RUNPATH|RPATH)\)\s+Library r(un)?path: \[\$ORIGIN\]", section), section


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A fresh clone of the repository (named rgbd, as SwiftPM's package identity), with
    the uncommitted changes of tracked files applied and committed."""
    root = tmp_path_factory.mktemp("clone") / "rgbd"
    run("git", "clone", "--quiet", "--no-hardlinks", REPO, root)
    diff = subprocess.run(["git", "-C", str(REPO), "diff", "HEAD", "--binary"], capture_output=True,
                          check=True).stdout
    if diff:
        subprocess.run(["git", "-C", str(root), "apply", "--whitespace=nowarn"], input=diff, check=True)
        run("git", "-C", root, "-c", "user.name=test", "-c", "user.email=test@localhost", "commit",
            "--quiet", "-am", "uncommitted changes of the repository under test")
    assert not (root / ".build").exists()
    return root


@pytest.fixture(scope="module")
def reference():
    """The rectified depth and point count of the sample from the package under test
    (python/ of this repository, on the library test.sh gives it)."""
    import rgbd
    with rgbd.load_capture(str(SAMPLE)) as cap:
        return {"depth": cap.rectified_depth(), "points": cap.point_cloud_count()}


# ---------------------------------------------------------------------------- Python

PROBE = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    import rgbd
    cap = rgbd.load_capture("shot.json")
    np.save("depth.npy", cap.rectified_depth())
    k = cap.intrinsics.depth
    maps = []
    if os.path.exists("/proc/self/maps"):
        with open("/proc/self/maps") as f:
            maps = sorted({line.split(None, 5)[5].strip() for line in f if len(line.split(None, 5)) == 6})
    print(json.dumps({
        "package": rgbd.__file__, "library": rgbd.library_path(), "version": rgbd.library_version(),
        "intrinsics": [k.fx, k.fy, k.cx, k.cy, k.width, k.height], "points": cap.point_cloud_count(),
        "modules": sorted(m.__file__ for m in list(sys.modules.values()) if getattr(m, "__file__", None)),
        "maps": maps}))
""")


def probe(python: Path, folder: Path) -> dict:
    """Runs PROBE with `python` in `folder` (a copy of the sample beside it)."""
    sample_copy(folder)
    (folder / "probe.py").write_text(PROBE)
    return json.loads(run(python, "probe.py", cwd=folder).stdout)


def check_probe(result: dict, folder: Path, reference):
    truth = TRUTH["depth_intrinsics"]
    assert result["version"] == VERSION
    assert result["intrinsics"][4:] == [truth["width"], truth["height"]]
    np.testing.assert_allclose(result["intrinsics"][:4], [truth["fx"], truth["fy"], truth["cx"], truth["cy"]],
                               rtol=1e-12)
    assert result["points"] == reference["points"]
    assert np.array_equal(np.load(folder / "depth.npy"), reference["depth"], equal_nan=True)


@pytest.fixture(scope="module")
def wheel(clone, tmp_path_factory):
    """`pip wheel ./python` in the clone, where nothing was built: the wheel, copied away."""
    work = tmp_path_factory.mktemp("wheel")
    python = venv(work / "build-venv")
    run(python, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", work / "wheelhouse", "./python", cwd=clone)
    wheels = list((work / "wheelhouse").glob("*.whl"))
    assert len(wheels) == 1, wheels
    elsewhere = work / "elsewhere"
    elsewhere.mkdir()
    return Path(shutil.copy(wheels[0], elsewhere))


def test_wheel_has_a_platform_tag_and_the_library(wheel):
    match = re.fullmatch(rf"rgbd-{re.escape(VERSION)}-py3-none-(\w+)\.whl", wheel.name)
    assert match, wheel.name
    platform = match.group(1)
    if LINUX:
        assert platform == sysconfig.get_platform().replace("-", "_").replace(".", "_")
    else:  # macOS: macosx_<deployment target>_<arch>
        assert platform.startswith("macosx_") and platform.endswith(("arm64", "x86_64", "universal2")), platform
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(f"rgbd-{VERSION}.dist-info/WHEEL").decode()
    assert f"rgbd/{LIBRARY}" in names and "rgbd/__init__.py" in names and "rgbd/py.typed" in names
    assert "Root-Is-Purelib: false" in metadata
    assert f"Tag: py3-none-{platform}" in metadata.splitlines()


def test_wheel_works_outside_the_repository(wheel, clone, tmp_path, reference):
    python = venv(tmp_path / "venv")
    run(python, "-m", "pip", "install", "--quiet", wheel, cwd=tmp_path)
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))").stdout.strip())
    installed = site / "rgbd" / LIBRARY
    check_self_contained(installed)

    folder = tmp_path / "run"
    result = probe(python, folder)
    check_probe(result, folder, reference)
    assert Path(result["library"]).resolve() == installed.resolve()
    assert Path(result["package"]).resolve().parent == (site / "rgbd").resolve()
    # Nothing the process imported or mapped comes from the repository or the clone.
    for path in result["modules"] + result["maps"]:
        for tree in (REPO, clone):
            assert not path.startswith(str(tree) + os.sep), f"the process uses {path}, inside {tree}"


def test_wheel_installs_the_rgbd_command(wheel, tmp_path, reference):
    """`pip install` of the wheel puts an `rgbd` command on the venv's PATH: the binary
    shipped in the package (self-contained, as install.sh's), which works from anywhere
    and says what the installed one says."""
    with zipfile.ZipFile(wheel) as archive:
        info = archive.getinfo("rgbd/bin/rgbd")
        entry_points = archive.read(f"rgbd-{VERSION}.dist-info/entry_points.txt").decode()
    assert info.external_attr >> 16 & 0o111, oct(info.external_attr >> 16)
    assert re.search(r"^\[console_scripts\]\s*\nrgbd = rgbd\._cli:main$", entry_points, re.M), entry_points
    python = venv(tmp_path / "venv")
    run(python, "-m", "pip", "install", "--quiet", wheel, cwd=tmp_path)
    command = python.parent / "rgbd"
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))").stdout.strip())
    check_self_contained(site / "rgbd" / "bin" / "rgbd")
    assert run(command, "--version").stdout.strip() == VERSION
    capture = sample_copy(tmp_path / "in")
    run(command, "cloud", capture, "-o", tmp_path / "cloud.ply", "-q", cwd=tmp_path)
    assert len(PlyData.read(str(tmp_path / "cloud.ply"))["vertex"].data) == reference["points"]
    # Its exit status and messages are the binary's: a usage error is 64, on stderr.
    usage = subprocess.run([str(command), "cloud"], capture_output=True, text=True, env=clean_env())
    assert usage.returncode == 64 and "Usage: rgbd cloud" in usage.stderr, (usage.returncode, usage.stderr)
    # On PATH as `rgbd`, from any folder.
    env = clean_env(PATH=f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    assert run("rgbd", "--version", env=env, cwd=tmp_path).stdout.strip() == VERSION


def readme_python_snippet() -> str:
    """The Python code block of README.md's "From C and Python" section."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## From C and Python"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_snippet_runs_with_the_installed_wheel(wheel, tmp_path, reference):
    python = venv(tmp_path / "venv")
    run(python, "-m", "pip", "install", "--quiet", wheel, cwd=tmp_path)
    folder = tmp_path / "anywhere"
    sample_copy(folder / "Examples" / "sample")
    snippet = readme_python_snippet()
    c, d = TRUTH["color_intrinsics"], TRUTH["depth_intrinsics"]
    check = textwrap.dedent(f"""
        assert color.shape == ({c['height']}, {c['width']}, 3) and depth.shape == ({d['height']}, {d['width']})
        assert points.shape == colors.shape == ({reference['points']}, 3)
        print("snippet ok")
    """)
    assert "snippet ok" in run(python, "-c", snippet + check, cwd=folder).stdout


def test_editable_install_uses_the_repository_build(clone, tmp_path, reference):
    python = venv(tmp_path / "venv")
    run(python, "-m", "pip", "install", "--quiet", "-e", "./python", cwd=clone)
    folder = tmp_path / "run"
    result = probe(python, folder)
    check_probe(result, folder, reference)
    assert Path(result["package"]).resolve() == (clone / "python" / "rgbd" / "__init__.py").resolve()
    assert Path(result["library"]).resolve() == (clone / ".build" / "dist" / "release" / LIBRARY).resolve()
    assert not list((clone / "python" / "rgbd").glob("*.so")), "an editable install copies no library"


# Distributions that provide a module the examples import, by module name.
PROVIDERS = {
    "cv2": {"opencv-python", "opencv-python-headless", "opencv-contrib-python", "opencv-contrib-python-headless"},
    "matplotlib": {"matplotlib"},
    "open3d": {"open3d"},
    "dask": {"dask"},
}


def test_examples_extra_covers_what_the_examples_import():
    """`pip install "./python[examples]"` gives every module Examples/python/*.py import
    (besides the standard library, numpy and rgbd): OpenCV's cv2 for rectify_video.py, ..."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        tomllib = pytest.importorskip("tomli")
    import ast
    if not hasattr(sys, "stdlib_module_names"):  # Python < 3.10
        pytest.skip("needs sys.stdlib_module_names (Python 3.10+)")
    project = tomllib.loads((REPO / "python" / "pyproject.toml").read_text())["project"]
    extra = {re.match(r"[A-Za-z0-9._-]+", requirement).group(0).lower()
             for requirement in project["optional-dependencies"]["examples"]}
    provided = {"numpy", "rgbd"} | {module for module, names in PROVIDERS.items() if names & extra}
    scripts = sorted((REPO / "Examples" / "python").glob("*.py"))
    assert scripts
    for script in scripts:
        for node in ast.walk(ast.parse(script.read_text())):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module]
            else:
                continue
            for module in (m.split(".")[0] for m in modules):
                if module in sys.stdlib_module_names or module == "__future__":
                    continue
                assert module in provided, (
                    f"{script.name} imports {module}, which python/pyproject.toml's examples extra "
                    f"does not provide (extra: {sorted(extra)}; known providers: {PROVIDERS.get(module)})")
    assert "cv2" in provided


# ---------------------------------------------------------------------------- install.sh

@pytest.fixture(scope="module")
def prefix(clone, tmp_path_factory):
    """./Scripts/install.sh PREFIX in the clone."""
    prefix = tmp_path_factory.mktemp("prefix") / "usr"
    run(clone / "Scripts" / "install.sh", prefix, cwd=tmp_path_factory.mktemp("cwd"))
    return prefix


def test_install_puts_everything_in_place(prefix):
    for path in ("bin/rgbd", f"lib/{LIBRARY}", "include/rgbd.h", "lib/pkgconfig/rgbd.pc"):
        assert (prefix / path).is_file(), path
    assert (prefix / "include" / "rgbd.h").read_bytes() == (REPO / "Sources" / "CRGBD" / "include" / "rgbd.h").read_bytes()
    check_self_contained(prefix / "lib" / LIBRARY)
    check_self_contained(prefix / "bin" / "rgbd")
    assert run(prefix / "bin" / "rgbd", "--version").stdout.strip() == VERSION


def test_installed_rgbd_runs(prefix, tmp_path, reference):
    capture = sample_copy(tmp_path / "in")
    run(prefix / "bin" / "rgbd", "cloud", capture, "-o", tmp_path / "cloud.ply", "-q", cwd=tmp_path)
    assert len(PlyData.read(str(tmp_path / "cloud.ply"))["vertex"].data) == reference["points"]


def test_pkg_config_builds_a_c_program_that_runs(prefix, tmp_path):
    if shutil.which("cc") is None or shutil.which("pkg-config") is None:
        pytest.fail("needs cc and pkg-config on PATH", pytrace=False)
    env = clean_env(PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    assert run("pkg-config", "--modversion", "rgbd", env=env).stdout.strip() == VERSION
    flags = run("pkg-config", "--cflags", "--libs", "rgbd", env=env).stdout.split()
    program = tmp_path / "uses_header"
    # Only what pkg-config says: no -I into the repository, no -L or rpath of ours.
    run("cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", REPO / "Tests" / "c" / "uses_header.c",
        *flags, "-lm", "-o", program, env=env)
    capture = sample_copy(tmp_path / "in")
    cloud = tmp_path / "cloud.ply"
    run(prefix / "bin" / "rgbd", "cloud", capture, "-o", cloud, "-q")
    points = len(PlyData.read(str(cloud))["vertex"].data)
    truth = TRUTH["depth_intrinsics"]
    proc = run(program, capture, points, truth["fx"], truth["fy"], truth["cx"], truth["cy"], cwd=tmp_path)
    assert "all checks passed" in proc.stdout
    if LINUX:
        assert f"[{LIBRARY}]" in dynamic_section(program)


@pytest.mark.parametrize("shell, path", [
    ("bash", "share/bash-completion/completions/rgbd"),
    ("zsh", "share/zsh/site-functions/_rgbd"),
    ("fish", "share/fish/vendor_completions.d/rgbd.fish"),
])
def test_completions_are_installed(prefix, shell, path):
    text = (prefix / path).read_text()
    assert text == run(prefix / "bin" / "rgbd", "--generate-completion-script", shell).stdout
    for subcommand in ("rectify", "cloud"):
        assert subcommand in text, f"{path} does not mention {subcommand}"
    if shutil.which(shell):
        run(shell, "-n", prefix / path)


SUBCOMMANDS = ("rectify", "cloud", "info", "preview", "fuse")


def tree(root: Path) -> set:
    """Every file and folder under `root`, relative, folders with a trailing slash."""
    return {str(p.relative_to(root)) + ("/" if p.is_dir() else "") for p in root.rglob("*")}


def test_uninstall_removes_exactly_what_install_put(clone, prefix, tmp_path):
    """install.sh into a prefix that already holds other software, then uninstall.sh:
    the prefix is as it was, file for file and folder for folder (also after two
    installs), and uninstalling again removes nothing."""
    root = tmp_path / "usr"
    for path in ("bin/other-tool", "lib/pkgconfig/zlib.pc", "include/zlib.h", "share/man/man1/other.1",
                 "share/rgbd-notes/keep.txt"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("not rgbd's\n")
    (root / "share" / "empty-before").mkdir()
    before = tree(root)
    for _ in range(2):
        run(clone / "Scripts" / "install.sh", root, cwd=tmp_path)
    installed = tree(root) - before
    for path in ("bin/rgbd", f"lib/{LIBRARY}", "include/rgbd.h", "lib/pkgconfig/rgbd.pc", "share/man/man1/rgbd.1",
                 "share/bash-completion/completions/rgbd", "share/zsh/site-functions/_rgbd",
                 "share/fish/vendor_completions.d/rgbd.fish"):
        assert path in installed, (path, sorted(installed))
    assert "share/fish/" in installed and "share/man/" not in installed
    proc = run(clone / "Scripts" / "uninstall.sh", root, cwd=tmp_path)
    assert tree(root) == before, (sorted(tree(root) - before), sorted(before - tree(root)))
    assert "rgbd removed from" in proc.stderr
    again = run(clone / "Scripts" / "uninstall.sh", root, cwd=tmp_path)
    assert tree(root) == before and "nothing of rgbd was installed" in again.stderr
    # A prefix install.sh made from nothing is left empty.
    fresh = tmp_path / "fresh"
    run(clone / "Scripts" / "install.sh", fresh, cwd=tmp_path)
    run(clone / "Scripts" / "uninstall.sh", fresh, cwd=tmp_path)
    assert tree(fresh) == set()


def test_manual_page_is_installed_and_renders(prefix):
    """PREFIX/share/man/man1/rgbd.1, made from the commands' help: man finds it through
    MANPATH, groff renders it without a warning, and it names every subcommand with
    its options."""
    page = prefix / "share" / "man" / "man1" / "rgbd.1"
    assert page.is_file()
    listed = run(prefix / "bin" / "rgbd", "--help").stdout.split("SUBCOMMANDS:")[1]
    assert all(re.search(rf"^  {name}\b", listed, re.M) for name in SUBCOMMANDS), listed
    if shutil.which("groff"):
        checked = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(page)], capture_output=True, text=True)
        assert checked.returncode == 0 and not checked.stderr, checked.stderr
    if shutil.which("man"):
        env = clean_env(MANPATH=str(prefix / "share" / "man"), MANWIDTH="80", MANPAGER="cat", PAGER="cat")
        rendered = run("man", "rgbd", env=env)
        assert not rendered.stderr.strip(), rendered.stderr
        assert run("man", "-l", page, env=env).stdout == rendered.stdout
        text = rendered.stdout
    elif shutil.which("groff"):
        text = run("groff", "-man", "-Tutf8", page).stdout
    else:
        pytest.fail("needs man or groff to render the page", pytrace=False)
    text = re.sub(r".\x08", "", text)
    assert "rgbd - Turn raw iPhone depth captures" in text
    for name in SUBCOMMANDS:
        assert f"rgbd {name}" in text, name
        help_text = run(prefix / "bin" / "rgbd", name, "--help").stdout
        for option in set(re.findall(r"--[a-z][a-z-]+", help_text)):
            assert option in text, (name, option)
    assert max(len(line) for line in text.splitlines()) <= 80


# ---------------------------------------------------------------------------- Swift


def test_package_has_no_unsafe_flags():
    """SwiftPM refuses unsafe flags in a versioned dependency."""
    manifest = run("swift", "package", "dump-package", cwd=REPO).stdout
    assert "unsafeFlags" not in manifest


def run_example(binary: Path, tmp_path: Path) -> str:
    capture = sample_copy(tmp_path / "in")
    return run(binary, capture, cwd=tmp_path).stdout


def check_example_output(text: str, reference):
    color, depth = TRUTH["color_intrinsics"], TRUTH["depth_intrinsics"]
    assert f"color: {color['width']}x{color['height']} -> rectified {color['width']}x{color['height']}" in text
    valid = int(np.count_nonzero(~np.isnan(reference["depth"])))
    assert (f"depth: {depth['width']}x{depth['height']} -> rectified {depth['width']}x{depth['height']}, "
            f"{valid} pixels with depth") in text
    fx, fy, cx, cy = map(float, re.search(r"depth intrinsics: fx (\S+) fy (\S+) cx (\S+) cy (\S+)", text).groups())
    np.testing.assert_allclose([fx, fy, cx, cy], [depth["fx"], depth["fy"], depth["cx"], depth["cy"]], rtol=1e-12)


def test_swift_example_package_builds_and_runs(clone, tmp_path, reference):
    """Examples/swift-package, as it is: rgbd by path."""
    scratch = tmp_path / "build"
    run("swift", "build", "-c", "release", "--package-path", clone / "Examples" / "swift-package",
        "--scratch-path", scratch)
    check_example_output(run_example(scratch / "release" / "rgbd-example", tmp_path), reference)


def test_swift_example_with_rgbd_as_a_versioned_dependency(clone, tmp_path, reference):
    """The example with `.package(url:from:)` on a tagged clone: what an app does."""
    run("git", "-C", clone, "tag", VERSION)
    app = tmp_path / "app"
    shutil.copytree(clone / "Examples" / "swift-package", app,
                    ignore=shutil.ignore_patterns(".build", "Package.resolved"))
    manifest = (app / "Package.swift").read_text()
    dependency = '.package(name: "rgbd", path: "../..")'
    assert dependency in manifest
    (app / "Package.swift").write_text(
        manifest.replace(dependency, f'.package(url: "{clone.as_uri()}", from: "{VERSION}")'))
    run("swift", "build", "-c", "release", "--package-path", app)
    check_example_output(run_example(app / ".build" / "release" / "rgbd-example", tmp_path), reference)
