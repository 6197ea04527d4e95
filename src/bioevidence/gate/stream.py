"""A batch validated as a stream: records read, validated and reported one window at a time.

``validate`` over a JSONL batch of any size holds one window of records and their reports (20,000
by default), whatever the input's length: :func:`stream` reads jobs lazily
(:func:`~bioevidence.gate.inputs.read_jobs` streams JSONL lines), validates each window with
:func:`~bioevidence.gate.batch.run` (forked workers on this machine, as for any batch) and hands the
window's report lines to ``write`` in input order. With ``skip`` the first jobs are read but not
validated: ``--resume`` passes the number of report lines an interrupted run already wrote
(:class:`~bioevidence.io.ResumableOutput`), so the output ends as an uninterrupted run's would.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any

from .batch import Result, run
from .inputs import Job

__all__ = ["WINDOW", "status_of_line", "stream"]

WINDOW = 20_000  # records held at once (about 10 KB of report each: ~200 MB at most)


def status_of_line(line: bytes | str) -> str:
    """The status a written report line holds (``error`` for an error line)."""
    data = json.loads(line)
    return "error" if "error" in data else str(data.get("overall_status", "error"))


def stream(jobs: Iterable[Job], gate: Any, write: Callable[[str], None], *, workers: int | None = None,
           skip: int = 0, window: int = WINDOW, on_error: Callable[[Result], None] | None = None,
           progress: Callable[[int, float], None] | None = None) -> Counter[str]:
    """Validate ``jobs`` in windows and ``write`` each window's report lines; the statuses counted.

    ``progress(records done, records per second)`` after each window."""
    it = iter(jobs)
    for _ in islice(it, skip):  # already reported by the interrupted run
        pass
    counts: Counter[str] = Counter()
    done, t0 = skip, time.perf_counter()
    while chunk := list(islice(it, window)):
        results = run(chunk, gate, workers=workers)
        write("".join(r.text + "\n" for r in results))
        for r in results:
            counts[r.status] += 1
            if r.error is not None and on_error is not None:
                on_error(r)
        done += len(chunk)
        if progress is not None:
            progress(done, (done - skip) / max(time.perf_counter() - t0, 1e-9))
    return counts
