"""A batch on a Dask cluster with a shared filesystem: records and reports never pass through the
scheduler or the client's memory.

The client cuts the inputs into **shards** (:func:`plan`): byte ranges of the JSONL files cut at
line ends (it only counts newlines, a block at a time) and groups of whole JSON/YAML files. Each
worker reads its shard itself (:func:`validate_shard`), validates it with the same
:func:`~bioevidence.gate.batch.process` as one process, and writes its **part** beside the output
(``OUT.parts/part-000012.jsonl``, atomically, one report line per record as ``validate`` writes
them) with a small summary (``part-000012.json``: statuses counted, the error lines for stderr).
The client appends the parts to ``OUT.partial`` in shard order (:func:`merge`) and renames it to
``OUT`` at the end, so the output is the bytes one process writes, and the client's memory does not
depend on the input. A shard no worker could finish is reported by the client, record by record
(``cluster_error``), never dropped.

Resuming (``--resume``): the parts folder keeps the run's fingerprint (``run.json``); a part whose
summary is there is not run again.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, error_payload
from ..writes import atomic_open, atomic_write_text
from .batch import _failed, process
from .inputs import Job, read_jobs
from .validator import Validator

__all__ = ["PartDone", "Piece", "Shard", "merge", "parts_folder", "plan", "shard_bytes", "validate_shard"]

MIN_SHARDS = 64  # where the input allows, so workers that join late still get work
SHARD_MIN = 4 << 20  # bytes: a task's fixed cost (~30 ms on the scheduler) stays a few percent
SHARD_MAX = 64 << 20
BLOCK = 1 << 20
SHARD_ENV = "BIOEVIDENCE_SHARD_BYTES"  # a fixed shard size in bytes (tests, tuning); else shard_bytes()


@dataclass(frozen=True)
class Piece:
    """One file or one line range of a JSONL file (``stop`` -1: the whole file)."""

    path: str
    start: int = 0
    stop: int = -1
    first_line: int = 1


@dataclass(frozen=True)
class Shard:
    index: int
    pieces: tuple[Piece, ...]
    folder: str  # the parts folder, on the shared filesystem
    workspace: str | None = None

    @property
    def part(self) -> Path:
        return Path(self.folder) / f"part-{self.index:06d}.jsonl"

    @property
    def summary(self) -> Path:
        return Path(self.folder) / f"part-{self.index:06d}.json"

    def jobs(self) -> Iterator[Job]:
        workspace = Path(self.workspace) if self.workspace else None
        for piece in self.pieces:
            lines = None if piece.stop < 0 else (piece.start, piece.stop, piece.first_line)
            yield from read_jobs(Path(piece.path), workspace=workspace, lines=lines)


@dataclass
class PartDone:
    """What the client needs of a finished shard: its records, their statuses, its stderr lines."""

    records: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)  # error payloads, in input order

    def to_json(self) -> str:
        return json.dumps({"records": self.records, "counts": self.counts, "errors": self.errors}) + "\n"

    @classmethod
    def read(cls, path: Path) -> PartDone:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(int(data["records"]), dict(data["counts"]), list(data["errors"]))


def shard_bytes(total: int) -> int:
    """Bytes a shard spans for ``total`` input bytes: ``total / 64`` within 4–64 MB (from the work,
    never from the workers present)."""
    return min(SHARD_MAX, max(SHARD_MIN, total // MIN_SHARDS))


def _cuts(path: Path, target: int) -> Iterator[tuple[int, int, int]]:
    """``(start, stop, first line)`` of consecutive ranges of a file, each ending at a line end at or
    after ``target`` bytes from its start (the last at the end of the file)."""
    start, first, pos, newlines = 0, 1, 0, 0
    with open(path, "rb") as handle:
        while block := handle.read(BLOCK):
            offset = 0
            while (want := start + target - 1 - pos) < len(block):
                end = block.find(b"\n", max(want, offset))
                if end < 0:
                    break
                newlines += block.count(b"\n", offset, end + 1)
                yield start, pos + end + 1, first
                start, first, offset = pos + end + 1, newlines + 1, end + 1
            newlines += block.count(b"\n", offset)
            pos += len(block)
    if pos > start:
        yield start, pos, first


def plan(files: Sequence[Path], folder: Path, *, workspace: Path | None = None,
         target: int | None = None) -> list[Shard]:
    """The shards of ``files`` in input order (JSONL files cut in ranges, other files grouped)."""
    sizes = [f.stat().st_size if f.is_file() else 0 for f in files]
    target = target or int(os.environ.get(SHARD_ENV) or 0) or shard_bytes(sum(sizes))
    shards: list[Shard] = []
    group: list[Piece] = []
    held = 0

    def close() -> None:
        nonlocal group, held
        if group:
            shards.append(Shard(len(shards), tuple(group), str(folder), str(workspace) if workspace else None))
            group, held = [], 0

    for f, size in zip(files, sizes, strict=True):
        if f.suffix.lower() == ".jsonl" and f.is_file() and size > 0:
            close()
            for start, stop, first in _cuts(f, target):
                shards.append(Shard(len(shards), (Piece(str(f), start, stop, first),), str(folder),
                                    str(workspace) if workspace else None))
            continue
        group.append(Piece(str(f)))
        held += size
        if held >= target:
            close()
    close()
    return shards


def _write_part(shard: Shard, results: Iterator[Any]) -> PartDone:
    done = PartDone()
    counts: Counter[str] = Counter()
    with atomic_open(shard.part) as handle:
        for r in results:
            handle.write(r.text.encode("utf-8") + b"\n")
            counts[r.status] += 1
            done.records += 1
            if r.error is not None:
                done.errors.append(error_payload(r.error, file=r.file, line=r.line))
    done.counts = dict(counts)
    atomic_write_text(shard.summary, done.to_json())  # written last: the part is whole when this is there
    return done


def validate_shard(validator: Validator, shard: Shard) -> PartDone:
    """The task each worker runs: read the shard, validate each record, write the part; the summary."""
    return _write_part(shard, (process(validator, job) for job in shard.jobs()))


def parts_folder(output: Path) -> Path:
    return output.with_name(output.name + ".parts")


def start_parts(folder: Path, fingerprint: str, *, resume: bool) -> set[int]:
    """Prepare the parts folder; the shards already done (with ``resume`` and the same fingerprint)."""
    card = folder / "run.json"
    if resume and card.is_file():
        try:
            before = json.loads(card.read_text(encoding="utf-8")).get("fingerprint")
        except (OSError, ValueError, AttributeError):
            before = None
        if before != fingerprint:
            raise InputError("--resume: the interrupted run was asked something else (other inputs, options or "
                             "version); run again without --resume to start over", file=str(card))
        return {int(p.name[5:11]) for p in folder.glob("part-*.json") if p.name[5:11].isdigit()}
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    atomic_write_text(card, json.dumps({"fingerprint": fingerprint}) + "\n")
    return set()


def merge(shards: Sequence[Shard], outcomes: Iterator[PartDone | str], append: Callable[[Path], None],
          shown: Callable[[dict[str, Any]], None]) -> Counter[str]:
    """Append each shard's part in order; ``outcomes`` gives, per shard in order, its summary or the
    message of a shard no worker finished (the client then writes that part itself, each record a
    ``cluster_error``). ``shown(payload)`` for each error line. The statuses counted."""
    counts: Counter[str] = Counter()
    for shard, outcome in zip(shards, outcomes, strict=True):
        if isinstance(outcome, str):
            message = outcome
            outcome = _write_part(shard, (_failed(job, message) for job in shard.jobs()))
        append(shard.part)
        counts.update(outcome.counts)
        for payload in outcome.errors:
            shown(payload)
    return counts


def finish_parts(folder: Path) -> None:
    """Remove the parts folder once the output is whole."""
    shutil.rmtree(folder, ignore_errors=True)
    if folder.exists():  # pragma: no cover - a file system refusing removal
        os.rmdir(folder)
