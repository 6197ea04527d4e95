"""Shared test fixtures.

Real-data tests read ``../shared/data`` (or ``$BIOEVIDENCE_SHARED_DATA``). When that folder is
absent (a user's clone) they skip with a clear message; under CI (``CI=true``) a missing folder
is a failure, never a skip.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Test helper modules (builders, loopback) live in tests/ and are imported by name.
sys.path.insert(0, str(Path(__file__).resolve().parent))


def shared_data_dir() -> Path:
    env = os.environ.get("BIOEVIDENCE_SHARED_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def skip_message(path: Path) -> str:
    """Why a real-data test skips, and how a contributor gets to run it."""
    return (f"real test data absent at {path}: put the project's shared data folder beside the clone "
            "(../shared/data) or set BIOEVIDENCE_SHARED_DATA=/path/to/data; its MANIFEST.tsv files name every "
            "file's source and sha256, and `python3 tools/test_data.py verify DIR` checks a copy")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of the real public data folder; skips (or fails under CI) when it is absent."""
    path = shared_data_dir()
    if not path.is_dir():
        message = skip_message(path)
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
