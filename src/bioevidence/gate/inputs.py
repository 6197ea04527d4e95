"""Reading record files for a batch: JSON, YAML and JSONL files, and folders of them.

Files are split into ``Job``s (one per record: a whole JSON/YAML file, or one JSONL line) that
carry raw bytes; parsing happens where the record is validated (possibly in a worker
process). An unreadable file becomes a ``Job`` carrying its ``InputError``, so the rest of the
batch is still validated and reported. A record is a JSON object (a YAML mapping): an empty
file, a list or a scalar is an input error (exit 3), not a schema rejection. With a
``workspace``, a file whose real location (symlinks followed) is outside it is refused unread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import MAX_BYTES, iter_lines, parse_json_tracked, parse_yaml, read_limited

_KINDS = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "true or false"}

RECORD_SUFFIXES = (".json", ".yaml", ".yml", ".jsonl")


@dataclass(frozen=True, slots=True)
class Job:
    file: str
    line: int | None
    data: bytes = b""
    kind: str = "json"
    error: InputError | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        # Positional, not the dataclass's per-field state: 5x cheaper to send to another process.
        return (Job, (self.file, self.line, self.data, self.kind, self.error))

    def parse(self) -> tuple[Any, bool]:
        """The record this job holds and whether it may hold floats; ``InputError`` (naming file and
        line) when it is malformed."""
        if self.error is not None:
            raise self.error
        if self.line is None and not self.data.lstrip(b"\xef\xbb\xbf").strip():
            raise InputError("the file is empty: a record file holds one JSON object or YAML mapping",
                             file=self.file, line=1)
        if self.kind == "yaml":
            value, floats = parse_yaml(self.data, file=self.file, what="record YAML"), True
        else:
            value, floats = parse_json_tracked(self.data, file=self.file, line=self.line)
        if not isinstance(value, dict):
            held = "nothing (an empty document)" if value is None else _KINDS.get(type(value), type(value).__name__)
            what = "a YAML mapping" if self.kind == "yaml" else "a JSON object"
            place = "line" if self.line is not None else "file"
            raise InputError(f"a record must be {what}, but this {place} holds {held}; write one record per {place}",
                             file=self.file, line=self.line)
        return value, floats


def expand(paths: Iterable[str | Path]) -> list[Path]:
    """Files in the order given; folders expand recursively to sorted record files."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in RECORD_SUFFIXES))
        else:
            out.append(path)
    return out


def read_jobs(path: Path, *, workspace: Path | None = None, progress: Callable[[int], None] | None = None,
              lines: tuple[int, int, int] | None = None) -> Iterator[Job]:
    """The records of one file: one job for JSON/YAML, one per non-blank line for JSONL (read as
    they are needed, so a JSONL file of any size is held one line at a time; ``progress(bytes
    read)`` follows it). ``lines``: ``(start byte, stop byte, first line number)``, only that range
    of a JSONL file (a shard, :mod:`bioevidence.gate.shards`).

    With ``workspace``, a file that resolves outside it (a symlink to ``/etc/passwd``) is an
    error job, and its target is never read."""
    name = str(path)
    suffix = path.suffix.lower()
    try:
        if suffix == ".jsonl":  # streamed: any number of lines, each at most MAX_BYTES
            start, stop, first = lines if lines is not None else (0, None, 1)
            for number, raw in iter_lines(path, MAX_BYTES, within=workspace, progress=progress, start=start,
                                          stop=stop, first_line=first):
                if isinstance(raw, InputError):
                    yield Job(name, number, error=raw)
                elif raw.strip():
                    yield Job(name, number, raw)
            return
        data = read_limited(path, MAX_BYTES, within=workspace)
    except InputError as exc:
        yield Job(name, None, error=exc)
        return
    yield Job(name, None, data, "yaml" if suffix in (".yaml", ".yml") else "json")


def iter_jobs(paths: Iterable[str | Path], *, workspace: Path | None = None) -> Iterator[Job]:
    for path in expand(paths):
        yield from read_jobs(path, workspace=workspace)


def load_record(path: str | Path) -> dict[str, Any]:
    """One record from a ``.json``, ``.yaml`` or ``.yml`` file, read as strictly as ``validate``
    reads it (size cap, duplicate keys, NaN and bad UTF-8 refused); ``InputError`` naming the file
    and line when it is not one record. A ``.jsonl`` file holds many: use :func:`iter_jobs`."""
    path = Path(path)
    if path.suffix.lower() == ".jsonl":
        raise InputError("a .jsonl file holds one record per line; read it with bioevidence.gate.inputs.iter_jobs "
                         "or validate it with bioevidence validate", file=str(path))
    if path.is_dir():
        raise InputError("a folder, not a record file; give one .json or .yaml file", file=str(path))
    (job,) = read_jobs(path)
    record, _floats = job.parse()
    assert isinstance(record, dict)
    return record

