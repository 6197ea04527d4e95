"""Validate many records in one process (or several, for large batches), keeping input order.

Each record becomes a ``Result``: its place (file, line), its status and its report as one
compact JSON line. Workers send back only those lines (cheap to move between processes);
the full ``Report`` is decoded again only when an output format needs it.
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
from dataclasses import dataclass, field
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
        record, floats = job.parse()
        report = validator.validate(record, floats=floats)
    except InputError as exc:
        error = InputError(exc.message, file=job.file, line=job.line)
        text = dumps_line({"file": job.file, "line": job.line, "error": error.kind, "message": error.message})
        return Result(job.file, job.line, "error", text, error)
    located = {"file": job.file, "line": job.line}
    located.update(report.to_dict())
    return Result(job.file, job.line, report.overall_status, dumps_line(located), None, report)


# Set before forking: workers inherit the loaded validator and the jobs (copy-on-write) and are
# sent only index ranges; they send back (status, JSON line, error message) per record.
_WORKER: Validator | None = None
_JOBS: list[Job] = []


def _work(span: tuple[int, int]) -> list[tuple[str, str, str | None]]:
    assert _WORKER is not None
    out = []
    for job in _JOBS[span[0]:span[1]]:
        result = process(_WORKER, job)
        out.append((result.status, result.text, result.error.message if result.error else None))
    return out


def run(jobs: list[Job], validator: Validator, *, workers: int | None = None) -> list[Result]:
    """Validate ``jobs`` in input order. With ``workers`` > 1, forked processes share the loaded
    validator (grounder indexes included) and the jobs copy-on-write; by default large batches use
    every core."""
    if workers is None:
        workers = min(os.cpu_count() or 1, 8) if len(jobs) >= PARALLEL_THRESHOLD else 1
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [process(validator, job) for job in jobs]
    global _WORKER, _JOBS
    _WORKER, _JOBS = validator, jobs
    gc.freeze()  # children's garbage collector then never walks (and copies) the inherited heap
    try:
        spans = [(i, min(i + CHUNK, len(jobs))) for i in range(0, len(jobs), CHUNK)]
        results: list[Result] = []
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            for (first, _), part in zip(spans, pool.imap(_work, spans), strict=True):
                for offset, (status, text, message) in enumerate(part):
                    job = jobs[first + offset]
                    error = InputError(message, file=job.file, line=job.line) if message is not None else None
                    results.append(Result(job.file, job.line, status, text, error))
        return results
    finally:
        gc.unfreeze()
        _WORKER, _JOBS = None, []
