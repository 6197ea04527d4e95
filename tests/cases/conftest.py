"""The reference validator's real-data cases read the peer's unpacked sdist in place
(tools/cases/common.py). Outside CI they skip with the reason when it is absent; under CI they fail."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

from cases.common import CaseUnavailable, peer_sdist


@pytest.fixture(scope="session")
def sdist() -> Path:
    try:
        return peer_sdist()
    except CaseUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(str(exc))
        pytest.skip(str(exc))
