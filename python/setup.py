"""Build hook of the rgbd Python package: builds the rgbd C library and ships it inside.

``pip install ./python`` and ``pip wheel ./python`` (from a clone of the rgbd repository,
with the Swift toolchain and the system libraries of ``Scripts/bootstrap.sh``) run the
repository's ``Scripts/build-library.sh --cli``, which builds ``libRGBDKit.so``
(``libRGBDKit.dylib`` on macOS) and the ``rgbd`` command with SwiftPM in ``.build/dist/``
(a second or two when that build is up to date), and copy both into the package: the
binary as ``rgbd/bin/rgbd``, which the ``rgbd`` command the package installs
(``[project.scripts]``, ``rgbd/_cli.py``) runs. The wheel is tagged
for this platform (``py3-none-<platform>``): the Python code is pure (ctypes, any Python
3), the library is native code.

Editable installs (``pip install -e ./python``) build the library too but copy nothing:
the package then finds it in the repository's build folders (``rgbd.find_library``).
Everything else is in ``pyproject.toml``.
"""

import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
BUILD_SCRIPT = HERE.parent / "Scripts" / "build-library.sh"
LIBRARY = "libRGBDKit.dylib" if sys.platform == "darwin" else "libRGBDKit.so"


def build_library() -> Path:
    """Runs Scripts/build-library.sh --cli; the folder holding the library and the rgbd
    binary it built."""
    if not BUILD_SCRIPT.is_file():
        sys.exit(f"rgbd: {BUILD_SCRIPT} not found. The package is built from python/ inside a "
                 "clone of the rgbd repository (the C library is built with the Swift toolchain): "
                 "pip install ./python, or pip wheel ./python")
    print(f"rgbd: building the C library ({BUILD_SCRIPT})", file=sys.stderr, flush=True)
    # SwiftPM's output goes to stderr (pip shows it with -v or when the build fails);
    # the script prints the product folder on stdout.
    proc = subprocess.run(["bash", str(BUILD_SCRIPT), "--cli"], stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"rgbd: {BUILD_SCRIPT} failed (exit status {proc.returncode}); its output is above")
    lines = proc.stdout.strip().splitlines()
    folder = Path(lines[-1] if lines else "")
    for name in (LIBRARY, "rgbd"):
        if not (folder / name).is_file():
            sys.exit(f"rgbd: {BUILD_SCRIPT} reported success, but there is no {folder / name}")
    return folder


class BuildPyWithLibrary(build_py):
    """build_py, plus the C library and the rgbd binary built and copied into the package
    (the binary as rgbd/bin/rgbd, which the ``rgbd`` command, rgbd/_cli.py, runs)."""

    def run(self):
        super().run()
        folder = build_library()
        if not self.editable_mode:
            package = Path(self.build_lib) / "rgbd"
            (package / "bin").mkdir(parents=True, exist_ok=True)
            shutil.copy2(folder / LIBRARY, package / LIBRARY)
            shutil.copy2(folder / "rgbd", package / "bin" / "rgbd")


class DistributionWithLibrary(Distribution):
    """Holds native code (the library): installed into platlib, the wheel is not pure."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """A wheel for this platform, for any Python 3: py3-none-<platform>."""

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(distclass=DistributionWithLibrary,
      cmdclass={"build_py": BuildPyWithLibrary, "bdist_wheel": PlatformWheel})
