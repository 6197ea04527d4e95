"""Validate many records in one process, in several (large batches) or on a Dask cluster, keeping input order.

Each record becomes a ``Result``: its place (file, line), its status and its report as one
compact JSON line. Workers send back only those lines (cheap to move between processes);
the full ``Report`` is decoded again only when an output format needs it. Cutting into batches
and choosing where they run is :mod:`bioevidence.execute`'s job, the same for every batch API.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import BioevidenceError, ClusterError, ConfigurationError, InputError
from ..execute import BatchFailed, Progress, Ready, Recipe, map_batches
from ..io import dumps_line
from ..limits import usable_cpus
from .inputs import Job
from .report import Report
from .spec import GateSpec
from .validator import Validator

PARALLEL_THRESHOLD = 2000
CHUNK = 250


@dataclass(slots=True)
class Result:
    file: str
    line: int | None
    status: str  # admitted | review_required | rejected | error
    text: str  # the located report (or error) as one compact JSON line
    error: BioevidenceError | None = None  # InputError, or ClusterError for a batch no worker finished
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

    def __reduce__(self) -> tuple[Any, ...]:
        # Between processes a result travels as its JSON line (the report is decoded again if needed).
        return (Result, (self.file, self.line, self.status, self.text, self.error))


def shown_line(job: Job, exc: InputError | None = None) -> int:
    """The ``line`` an output names, always a number: the JSONL line, else the line a parser named
    in a whole file's error, else 1 (a whole file's record starts on its first line)."""
    if job.line is not None:
        return job.line
    return exc.line if exc is not None and isinstance(exc.line, int) and exc.line > 0 else 1


def process(validator: Validator, job: Job) -> Result:
    """Parse and validate one job; an input error becomes an error result, never an exception."""
    try:
        record, floats = job.parse()
        report = validator.validate(record, floats=floats)
    except InputError as exc:
        line = shown_line(job, exc)
        error = InputError(exc.message, file=job.file, line=line)
        text = dumps_line({"file": job.file, "line": line, "error": error.kind, "message": error.message})
        return Result(job.file, job.line, "error", text, error)
    located = {"file": job.file, "line": shown_line(job)}
    located.update(report.to_dict())
    return Result(job.file, job.line, report.overall_status, dumps_line(located), None, report)


def _validate_batch(validator: Validator, jobs: Sequence[Job]) -> list[Result]:
    """The task each worker runs: one result per record (sent back as its JSON line only)."""
    return [process(validator, job) for job in jobs]


def _failed(job: Job, message: str) -> Result:
    error = ClusterError(message, file=job.file, line=shown_line(job))
    text = dumps_line({"file": job.file, "line": shown_line(job), "error": error.kind, "message": message})
    return Result(job.file, job.line, "error", text, error)


def default_workers(records: int) -> int:
    """Forked workers for a batch of ``records`` on this machine: one for a small batch, else the CPUs
    this process may use (:func:`~bioevidence.limits.usable_cpus`: its allocation, not the node), at most 8."""
    return min(usable_cpus(), 8) if records >= PARALLEL_THRESHOLD else 1


def run(jobs: list[Job], validator: Validator | GateSpec, *, workers: int | None = None, scheduler: Any = None,
        progress: Progress | None = None, batch_size: int | None = None) -> list[Result]:
    """Validate ``jobs``; results in input order.

    Without ``scheduler`` the work stays on this machine: with ``workers`` > 1, forked processes
    share the loaded validator (grounder indexes included) and the jobs copy-on-write; by default
    large batches use every core. With ``scheduler`` (``"local"``, ``"local:N"``, a Dask scheduler
    address or a ``distributed.Client``) batches go to Dask workers, which need ``validator`` as a
    :class:`~bioevidence.gate.spec.GateSpec` to load the same gate themselves. A batch no worker
    could finish becomes an ``error`` result for each of its records (``cluster_error``): a record is
    never dropped, and never admitted by a failure. ``progress(done, total)`` counts batches;
    ``batch_size`` overrides the executor's choice (250 records here, more on a cluster).
    """
    if scheduler is not None and workers is not None:
        raise ConfigurationError("use --workers / workers= (this machine) or --scheduler / scheduler= (Dask), not both")
    if workers is None:
        workers = default_workers(len(jobs))
    recipe: Recipe[Validator] = validator if isinstance(validator, GateSpec) else Ready(validator)
    results: list[Result] = []
    for part, outcome in map_batches(_validate_batch, recipe, jobs, scheduler=scheduler, workers=workers, base=CHUNK,
                                     batch_size=batch_size, progress=progress):
        if isinstance(outcome, BatchFailed):
            results.extend(_failed(job, outcome.message) for job in part)
            continue
        results.extend(outcome)
    return results
