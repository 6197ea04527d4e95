"""A doc's marked regions: ``<!-- reproduce: STEP -->`` and ``<!-- /reproduce: STEP -->`` on lines of their
own around the markdown a step prints (markdown renders HTML comments invisibly). A step without a region
owns its whole file (docs/cases/*.md)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


class RegionError(Exception):
    """A region's markers are missing, repeated or out of order."""


def start_marker(name: str) -> str:
    return f"<!-- reproduce: {name} -->"


def end_marker(name: str) -> str:
    return f"<!-- /reproduce: {name} -->"


def _bounds(lines: list[str], name: str, where: str) -> tuple[int, int]:
    """Indexes of the start and end marker lines of ``name`` in ``lines``."""
    starts = [i for i, line in enumerate(lines) if line.strip() == start_marker(name)]
    ends = [i for i, line in enumerate(lines) if line.strip() == end_marker(name)]
    if len(starts) != 1 or len(ends) != 1:
        raise RegionError(f"{where}: expected one {start_marker(name)} and one {end_marker(name)}, "
                          f"found {len(starts)} and {len(ends)}")
    if ends[0] < starts[0]:
        raise RegionError(f"{where}: {end_marker(name)} comes before {start_marker(name)}")
    return starts[0], ends[0]


def read(text: str, name: str | None, where: str = "doc") -> str:
    """The region's text between its marker lines (the whole text when ``name`` is None)."""
    if name is None:
        return text
    lines = text.splitlines(keepends=True)
    start, end = _bounds(lines, name, where)
    return "".join(lines[start + 1:end])


def replace(text: str, name: str | None, body: str, where: str = "doc") -> str:
    """``text`` with the region's content replaced by ``body`` (the whole text when ``name`` is None)."""
    if name is None:
        return body
    if body and not body.endswith("\n"):
        body += "\n"
    lines = text.splitlines(keepends=True)
    start, end = _bounds(lines, name, where)
    return "".join(lines[:start + 1]) + body + "".join(lines[end:])


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
