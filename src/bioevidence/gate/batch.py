"""Validate many records in one process (or several, for large batches), keeping input order.

Each record becomes a ``Result``: its place (file, line), its status and its report as one
compact JSON line. Workers send back only those lines (cheap to move between processes);
the full ``Report`` is decoded again only when an output format needs it.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from ..errors import InputError
from ..io import dumps_line
from .inputs import Job
from .report import Report
from .validator import Validator

PARALLEL_THRESHOLD = 2000
CHUNK = 250


@dataclass(slots=True)
class Result:
    file: str
    line: int | None
    status: str  # admitted | review_required | rejected | error
    text: str  # the located report (or error) as one compact JSON line
    error: InputError | None = None
    _report: Report | None = field(default=None, repr=False)

    @property
    def report(self) -> Report | None:
        if self.status == "error":
            return None
        if self._report is None:
            data = json.loads(self.text)
            data.pop("file", None)
            data.pop("line", None)
            self._report = Report.from_dict(data)
        return self._report

    def located(self) -> dict[str, Any]:
        return dict(json.loads(self.text))


def process(validator: Validator, job: Job) -> Result:
    """Parse and validate one job; an input error becomes an error result, never an exception."""
    try:
        report = validator.validate(job.parse())
    except InputError as exc:
        error = InputError(exc.message, file=job.file, line=job.line)
        text = dumps_line({"file": job.file, "line": job.line, "error": error.kind, "message": error.message})
        return Result(job.file, job.line, "error", text, error)
    located = {"file": job.file, "line": job.line}
    located.update(report.to_dict())
    return Result(job.file, job.line, report.overall_status, dumps_line(located), None, report)


_WORKER: Validator | None = None


def _work(chunk: list[Job]) -> list[Result]:
    assert _WORKER is not None
    out = [process(_WORKER, job) for job in chunk]
    for result in out:
        result._report = None  # send the JSON line only
    return out


def _chunks(jobs: Iterable[Job], size: int) -> Iterator[list[Job]]:
    it = iter(jobs)
    while chunk := list(islice(it, size)):
        yield chunk


def run(jobs: list[Job], validator: Validator, *, workers: int | None = None) -> list[Result]:
    """Validate ``jobs`` in input order. With ``workers`` > 1, forked processes share the loaded
    validator (grounder indexes included) copy-on-write; by default large batches use every core."""
    if workers is None:
        workers = min(os.cpu_count() or 1, 8) if len(jobs) >= PARALLEL_THRESHOLD else 1
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [process(validator, job) for job in jobs]
    global _WORKER
    _WORKER = validator
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            results: list[Result] = []
            for part in pool.imap(_work, _chunks(jobs, CHUNK)):
                results.extend(part)
            return results
    finally:
        _WORKER = None
