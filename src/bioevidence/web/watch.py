"""The running server's re-check of the review queue's ledger, off the request path.

The server verifies the whole ledger when it starts (a tampered file never serves). While it runs,
another connection may write the file: the ``bioevidence review`` commands, the server's own other
threads, or someone editing it outside bioevidence. A thread of its own polls ``PRAGMA
data_version`` (it changes whenever another connection commits) every ``every`` seconds and, when
the file changed, verifies the whole ledger again (:meth:`ReviewQueue.verify`); a problem makes every
page answer 503 naming it. A check takes about 0.4 s of a core over 10,000 entries, so after one the
thread waits at least four times as long as it took (at most a fifth of a core while reviewers
write), and no request ever waits for it: run on the request path, the check held the page that
triggered it for 12–23 s behind 50 reviewers' threads (tools/bench_web.py, 2026-12-06).

A check that cannot run (the file unreadable, an internal error) counts as a problem: the server
fails closed. The thread holds the watch only weakly and ends when the server's state is gone.
"""

from __future__ import annotations

import threading
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..loop.queue import ReviewQueue

__all__ = ["LedgerWatch"]

#: after a check, the thread waits at least this many times as long as the check took
PAUSE_FACTOR = 4.0
#: the shortest wait between two looks at the file, whatever ``every`` says
MIN_POLL = 0.05


class LedgerWatch:
    """Re-verifies the ledger of the queue at ``path`` after other connections write it (module docstring)."""

    def __init__(self, path: Path, every: float) -> None:
        self.path = path
        self.every = every
        #: the first problem the last check found (or why it could not run); None while intact
        self.altered: str | None = None
        #: completed checks (tests wait on it), and the seconds the last one took (the next pause follows it)
        self.checks = 0
        self.last_seconds = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=_watch, args=(weakref.ref(self), self._stop), daemon=True,
                                        name="ledger-check")
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """End the thread (it also ends by itself once this watch is garbage)."""
        self._stop.set()
        self._thread.join(timeout)

    def __del__(self) -> None:
        self._stop.set()


def _watch(ref: weakref.ReferenceType[LedgerWatch], stop: threading.Event) -> None:
    watch = ref()
    if watch is None:
        return
    every = watch.every
    del watch
    queue: ReviewQueue | None = None
    seen: int | None = None  # None: the first poll always checks (a write may follow the start-up check)
    every = max(every, MIN_POLL)
    pause = every
    try:
        while not stop.wait(pause):
            watch = ref()
            if watch is None:
                return
            try:  # the strong reference lives only for this look, never across the wait
                queue, seen, pause = _look(watch, queue, seen, every)
                if watch.altered is not None:
                    return  # the pages stay stopped until the server is restarted on a good file
            finally:
                del watch
    finally:
        if queue is not None:
            queue.close()


def _look(watch: LedgerWatch, queue: ReviewQueue | None, seen: int | None,
          every: float) -> tuple[ReviewQueue | None, int | None, float]:
    """One look at the file (opened at the first): verify it when another connection has written it since
    ``seen``; the open queue, the data version now seen and the pause before the next look."""
    from ..loop.queue import ReviewQueue

    try:
        if queue is None:
            queue = ReviewQueue(watch.path, verify=False)
        version = queue.db.execute("PRAGMA data_version").fetchone()[0]
        if version == seen:
            return queue, seen, every
        started = time.monotonic()
        state = queue.verify()
        watch.last_seconds = time.monotonic() - started
        seen = version
        if not state.intact:
            watch.altered = state.problems[0]
    except Exception as exc:  # fail closed: a check that cannot run stops the pages too
        watch.altered = f"its ledger could not be checked: {type(exc).__name__}: {exc}"
    watch.checks += 1
    return queue, seen, max(every, PAUSE_FACTOR * watch.last_seconds)
