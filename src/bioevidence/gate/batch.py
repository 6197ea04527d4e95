"""Validate many records in one process (or two, for large batches), keeping input order."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable, Iterator
from itertools import islice

from ..errors import InputError
from .inputs import Entry
from .render import Result
from .validator import Validator

PARALLEL_THRESHOLD = 4000
CHUNK = 500

_WORKER_VALIDATOR: Validator | None = None


def _validate_entry(validator: Validator, entry: Entry) -> Result:
    if entry.error is not None:
        return Result(entry, None)
    try:
        return Result(entry, validator.validate(entry.record))
    except InputError as exc:
        bad = Entry(entry.file, entry.line, error=InputError(exc.message, file=entry.file, line=entry.line))
        return Result(bad, None)


def _work(chunk: list[Entry]) -> list[Result]:
    assert _WORKER_VALIDATOR is not None
    return [_validate_entry(_WORKER_VALIDATOR, e) for e in chunk]


def _chunks(entries: Iterable[Entry], size: int) -> Iterator[list[Entry]]:
    it = iter(entries)
    while chunk := list(islice(it, size)):
        yield chunk


def run(entries: list[Entry], validator: Validator, *, jobs: int | None = None) -> list[Result]:
    """Validate ``entries`` in order. ``jobs`` > 1 forks workers that share the loaded validator
    (grounder indexes included) copy-on-write; the default uses every core for large batches."""
    if jobs is None:
        jobs = min(os.cpu_count() or 1, 4) if len(entries) >= PARALLEL_THRESHOLD else 1
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [_validate_entry(validator, e) for e in entries]
    global _WORKER_VALIDATOR
    _WORKER_VALIDATOR = validator
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            out: list[Result] = []
            for part in pool.imap(_work, _chunks(entries, CHUNK)):
                out.extend(part)
            return out
    finally:
        _WORKER_VALIDATOR = None
