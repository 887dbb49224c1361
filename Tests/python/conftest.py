"""Fixtures shared by the Python tests: the repository, the sample, the rgbd binary."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def rgbd_bin():
    """The rgbd executable ($RGBD_BIN, else <repo>/.build/release/rgbd): a failure, not a skip, if missing."""
    env = os.environ.get("RGBD_BIN")
    path = Path(env) if env else REPO / ".build" / "release" / "rgbd"
    if not (path.is_file() and os.access(path, os.X_OK)):
        how = "$RGBD_BIN" if env else "<repo>/.build/release/rgbd (set RGBD_BIN to override)"
        pytest.fail(f"rgbd binary not found or not executable at {path} (from {how}); "
                    "build it with `swift build -c release` first", pytrace=False)
    return path


@pytest.fixture(scope="session")
def synth(rgbd_bin):
    """The rgbd-synth generator beside the rgbd binary: a failure, not a skip, if missing."""
    path = Path(rgbd_bin).with_name("rgbd-synth")
    if not path.is_file():
        pytest.fail(f"rgbd-synth not found beside {rgbd_bin}", pytrace=False)
    return path
