"""The ``rgbd`` command a ``pip install`` of the package puts on ``PATH``: the rgbd binary
itself, shipped inside the package beside the library (``rgbd/bin/rgbd``), run in place
of this process (``os.execv``), so it takes the same arguments, prints the same and exits
with the same status as an ``rgbd`` installed by ``Scripts/install.sh``.

An editable install (``pip install -e ./python``) ships no binary: the command runs the
one in the repository's build folders, as the package finds the library there.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

from . import _lib

BINARY_ENV = "RGBD_BIN"


def candidate_binaries() -> List[Path]:
    """Where the binary is looked for when ``RGBD_BIN`` is not set, in order: inside the
    package (``rgbd/bin/rgbd``, where the wheel puts it), then the build folders of the
    repository the package sits in (``.build/dist/release/rgbd`` of
    ``Scripts/build-library.sh --cli``, ``.build/release/rgbd``), the newest first."""
    paths = [_lib._PACKAGE_DIR / "bin" / "rgbd"]
    for root in _lib._repository_roots(_lib._PACKAGE_DIR):
        builds = [root / ".build" / "dist" / "release" / "rgbd", root / ".build" / "release" / "rgbd"]
        paths += sorted(builds, key=lambda p: -_lib._modification_time(p))
    return paths


def find_binary() -> Optional[Path]:
    """The rgbd binary to run: ``$RGBD_BIN`` if set, else the first executable file of
    :func:`candidate_binaries`; None if there is none."""
    env = os.environ.get(BINARY_ENV)
    if env:
        return Path(env)
    return next((p for p in candidate_binaries() if p.is_file() and os.access(p, os.X_OK)), None)


def main() -> None:
    """Runs the rgbd binary with this process's arguments (never returns when it is found)."""
    binary = find_binary()
    if binary is None:
        looked = "\n  ".join(str(p) for p in candidate_binaries())
        sys.exit("rgbd: the rgbd binary was not found. Looked for:\n"
                 f"  ${BINARY_ENV} (not set)\n  {looked}\n"
                 "Install the package with `pip install ./python` (it builds the binary and ships it "
                 "inside the package), or build it with Scripts/build-library.sh --cli.")
    try:
        os.execv(str(binary), [str(binary)] + sys.argv[1:])
    except OSError as error:
        sys.exit(f"rgbd: cannot run {binary}: {error.strerror}")


if __name__ == "__main__":
    main()
