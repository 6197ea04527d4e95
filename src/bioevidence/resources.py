"""Where packaged data lives: ``profiles/``, ``schemas/`` and ``grounders/``.

In a wheel they are shipped inside the package as ``bioevidence/_data/<kind>``; in a source
checkout (editable install, tests) they are the folders at the repository root.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@cache
def data_dir(kind: str) -> Path:
    """The folder holding packaged ``kind`` files (``profiles``, ``schemas`` or ``grounders``)."""
    for candidate in (_PACKAGE / "_data" / kind, _PACKAGE.parents[1] / kind):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"packaged folder {kind!r} not found; reinstall bioevidence")


def schema_file(name: str) -> Path:
    return data_dir("schemas") / name
