"""Executors on this machine: in this process, or in forked processes sharing the loaded context.

The fork executor loads the context once in the parent, then forks: children inherit it and the
batches copy-on-write (``gc.freeze()`` first, so their garbage collector never touches, and
copies, the inherited heap) and are sent only batch indexes.
"""

from __future__ import annotations

import gc
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from ..errors import BioevidenceError
from . import BatchFailed, Progress, Recipe, loaded

B = TypeVar("B")
R = TypeVar("R")


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _failure(index: int, exc: BaseException) -> BatchFailed:
    from ..extras import missing_extra

    exc = missing_extra(exc) or exc  # an optional module absent: the error names its extra
    if isinstance(exc, BioevidenceError):
        return BatchFailed(index, f"batch {index + 1} failed: {exc.message}", exc)
    return BatchFailed(index, f"batch {index + 1} failed: {type(exc).__name__}: {exc}")


class SerialExecutor:
    name = "serial"
    workers = 1

    def batch_size(self, items: int, base: int) -> int:
        return base

    def map(self, task: Callable[[Any, B], R], recipe: Recipe[Any], batches: Sequence[B], *,
            progress: Progress | None = None) -> Iterator[R | BatchFailed]:
        context = loaded(recipe)
        for index, batch in enumerate(batches):
            try:
                result: R | BatchFailed = task(context, batch)
            except Exception as exc:  # fail closed: the caller turns this into errors for the batch
                result = _failure(index, exc)
            yield result
            if progress is not None:
                progress(index + 1, len(batches))


# Set in the parent just before forking; children read them (inherited, never pickled).
_STATE: tuple[Callable[[Any, Any], Any], Any, Sequence[Any]] | None = None


def _run_index(index: int) -> Any:
    assert _STATE is not None
    task, context, batches = _STATE
    return task(context, batches[index])


class ForkExecutor:
    name = "fork"

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def batch_size(self, items: int, base: int) -> int:
        return base

    def map(self, task: Callable[[Any, B], R], recipe: Recipe[Any], batches: Sequence[B], *,
            progress: Progress | None = None) -> Iterator[R | BatchFailed]:
        global _STATE
        context = loaded(recipe)
        if len(batches) <= 1:
            yield from SerialExecutor().map(task, recipe, batches, progress=progress)
            return
        _STATE = (task, context, batches)
        gc.freeze()
        try:
            with multiprocessing.get_context("fork").Pool(min(self.workers, len(batches))) as pool:
                results = pool.imap(_run_index, range(len(batches)))
                for index in range(len(batches)):
                    try:
                        result: R | BatchFailed = next(results)
                    except Exception as exc:  # a task that raised: errors for its batch, never a drop
                        result = _failure(index, exc)
                    yield result
                    if progress is not None:
                        progress(index + 1, len(batches))
        finally:
            gc.unfreeze()
            _STATE = None
