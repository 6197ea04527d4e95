"""What every case shares: where the peer's sdist is, the result shape, tables and intervals."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SDIST_ENV = "BIOEVIDENCE_REFERENCE_SDIST"
DEFAULT_SDIST = REPO / ".ci" / "cache" / "reference-sdist"
HOW_TO_GET = ("unpack bioai-evidence-validator 0.8.0's sdist (`pip download --no-deps --no-binary :all: "
              "bioai-evidence-validator==0.8.0`) and set BIOEVIDENCE_REFERENCE_SDIST to its folder; "
              ".ci/run does both")


class CaseUnavailable(Exception):
    """The peer's sdist (or a file of it) is not here; the message says how to get it."""


@dataclass(frozen=True)
class CaseResult:
    """One case run: the markdown table the step prints (and docs/cases/NAME.md commits) and the
    ``--json`` summary."""

    name: str
    table: str
    summary: dict[str, Any] = field(default_factory=dict)


def peer_sdist() -> Path:
    """The unpacked sdist: ``$BIOEVIDENCE_REFERENCE_SDIST``, else ``.ci/cache/reference-sdist``."""
    configured = os.environ.get(SDIST_ENV)
    folder = Path(configured) if configured else DEFAULT_SDIST
    if not (folder / "examples").is_dir():
        raise CaseUnavailable(f"no peer sdist at {folder}: {HOW_TO_GET}")
    return folder


def example(sdist: Path, name: str) -> Path:
    folder = sdist / "examples" / name
    if not folder.is_dir():
        raise CaseUnavailable(f"{folder} is missing: the sdist is not bioai-evidence-validator 0.8.0's ({HOW_TO_GET})")
    return folder


def peer_summary(folder: Path) -> dict[str, Any]:
    """The peer's committed ``results/summary.json`` of a case folder."""
    path = folder / "results" / "summary.json"
    if not path.is_file():
        raise CaseUnavailable(f"{path} is missing ({HOW_TO_GET})")
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise CaseUnavailable(f"{path} is not a JSON object")
    return data


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval of k successes in n (both ends in [0, 1]); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denominator = 1 + z * z / n
    return max(0.0, (centre - half) / denominator), min(1.0, (centre + half) / denominator)


def rate(k: int, n: int) -> str:
    """``k/n = p% (lo–hi)`` with a Wilson 95% interval, as the peer prints rates."""
    if n == 0:
        return f"{k}/{n} = N/A"
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {100 * k / n:.2f}% ({100 * lo:.2f}–{100 * hi:.2f})"


def table(header: list[str], rows: list[list[Any]], right: set[int] | None = None) -> str:
    """A GitHub markdown table; columns in ``right`` are right-aligned (numbers)."""
    right = right or set()
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
