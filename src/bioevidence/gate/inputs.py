"""Reading record files for a batch: JSON, YAML and JSONL files, and folders of them.

Each record comes out as an ``Entry`` naming its file and (for JSONL) line; an unreadable
file or line becomes an ``Entry`` carrying the ``InputError`` instead of a record, so the rest
of the batch is still validated and reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import MAX_BYTES, parse_json, parse_yaml, read_limited

RECORD_SUFFIXES = (".json", ".yaml", ".yml", ".jsonl")


@dataclass(frozen=True, slots=True)
class Entry:
    file: str
    line: int | None
    record: Any = None
    error: InputError | None = None


def expand(paths: Iterable[str | Path]) -> list[Path]:
    """Files in the order given; folders expand recursively to sorted record files."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in RECORD_SUFFIXES)
            out.extend(found)
        else:
            out.append(path)
    return out


def read_entries(path: Path) -> Iterator[Entry]:
    """The records in one file (one for JSON/YAML, one per non-blank line for JSONL)."""
    name = str(path)
    try:
        data = read_limited(path, MAX_BYTES)
    except InputError as exc:
        yield Entry(name, None, error=exc)
        return
    suffix = path.suffix.lower()
    try:
        if suffix == ".jsonl":
            for number, raw in enumerate(data.split(b"\n"), start=1):
                if raw.strip():
                    try:
                        yield Entry(name, number, parse_json(raw, file=name, line=number))
                    except InputError as exc:
                        yield Entry(name, number, error=exc)
        elif suffix in (".yaml", ".yml"):
            yield Entry(name, None, parse_yaml(data, file=name, what="record YAML"))
        else:
            yield Entry(name, None, parse_json(data, file=name))
    except InputError as exc:
        yield Entry(name, None, error=exc)


def iter_entries(paths: Iterable[str | Path]) -> Iterator[Entry]:
    for path in expand(paths):
        yield from read_entries(path)
