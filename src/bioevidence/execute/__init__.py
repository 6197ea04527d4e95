"""The one place that cuts work into batches, runs them on an executor and gathers results in order.

Every batch API (:func:`bioevidence.gate.batch.run`, :func:`bioevidence.sources.ground.ground`,
:func:`bioevidence.librarian.index.build_index`) calls ``executor.map(task, recipe, batches)``:

* ``task(context, batch) -> result`` is a module-level function (workers import it by name);
* ``recipe`` says how to load ``context`` (a validator, a catalogue): it is small and picklable,
  and its ``key`` (a SHA-256) names what ``load()`` returns, so each process loads a key once;
* results come back one per batch, **in batch order**; a batch that could not be run comes
  back as :class:`BatchFailed` (the caller turns it into errors for those items: never a drop).

Executors (chosen by :func:`open_executor`):

=========  ===================================================================================
serial     this process
fork       forked processes of this machine; the context is loaded once, before forking, and
           inherited copy-on-write with the batches (children receive only batch indexes)
dask       the workers of a Dask cluster (``pip install 'bioevidence[dask]'``): ``local[:N]``
           starts a ``LocalCluster`` of N worker processes on 127.0.0.1, any other string is a
           scheduler address; see :mod:`bioevidence.execute.cluster`
=========  ===================================================================================

A new batch API (``kb build``, say) plugs in with one call, :func:`map_batches`: write a task
function and a recipe, and iterate ``(batch, result)`` pairs in input order.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from ..errors import BioevidenceError

__all__ = ["BatchFailed", "Executor", "Ready", "Recipe", "cut", "loaded", "map_batches", "open_executor"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
B = TypeVar("B")
R = TypeVar("R")

Progress = Callable[[int, int], None]  # (batches done, batches in all)


class Recipe(Protocol[T_co]):
    """How a worker loads a task's context. ``key``: SHA-256 naming what ``load()`` returns."""

    @property
    def key(self) -> str: ...

    def load(self) -> T_co: ...


@dataclass(frozen=True, eq=False)
class Ready(Generic[T]):
    """A context already loaded in this process (a ``Validator`` built by the caller). It runs on
    the serial and fork executors only: it cannot be sent to a cluster."""

    value: T

    @property
    def key(self) -> str:
        return f"ready:{id(self.value)}"

    def load(self) -> T:
        return self.value


@dataclass(frozen=True)
class BatchFailed:
    """A batch no worker could finish (its task kept raising, or kept losing its worker).
    ``error`` is the task's own exception when it was one of ours (callers may re-raise it)."""

    index: int
    message: str
    error: BioevidenceError | None = None


class Executor(Protocol):
    name: str  # serial | fork | dask

    @property
    def workers(self) -> int:
        """How many batches run at once."""
        ...

    def batch_size(self, items: int, base: int) -> int:
        """Items per batch for ``items`` items, ``base`` being the task's natural batch size."""
        ...

    def map(self, task: Callable[[Any, B], R], recipe: Recipe[Any], batches: Sequence[B], *,
            progress: Progress | None = None) -> Iterator[R | BatchFailed]:
        """Run ``task(context, batch)`` for every batch; yield the results in batch order."""
        ...


def cut(items: Sequence[T], size: int) -> list[Sequence[T]]:
    """``items`` in consecutive batches of ``size`` (the last may be shorter)."""
    size = max(1, size)
    return [items[i:i + size] for i in range(0, len(items), size)]


# Contexts loaded in this process, by recipe key: a worker loads each validator, catalogue or
# profile once and reuses it for every batch (the on-disk index caches are keyed by SHA-256 too).
_LOADED: dict[str, Any] = {}
_LOCK = threading.Lock()
_KEEP = 4  # a long-lived worker keeps the last few contexts, not every one it ever saw


def loaded(recipe: Recipe[T]) -> T:
    """The context ``recipe`` names, loaded once per process (thread-safe). A ``Ready`` context is
    the caller's own object: returned as is, never kept here."""
    if isinstance(recipe, Ready):
        return recipe.value
    key = recipe.key
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        value = recipe.load()
        while len(_LOADED) >= _KEEP:
            _LOADED.pop(next(iter(_LOADED)))
        _LOADED[key] = value
        return value


def digest(*parts: str | bytes) -> str:
    """SHA-256 over length-prefixed parts (for recipe keys)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


@contextmanager
def open_executor(scheduler: Any = None, workers: int = 1) -> Iterator[Executor]:
    """The executor for ``scheduler`` (``None``: this machine, ``workers`` processes; ``"local"``,
    ``"local:N"``, a scheduler address or a ``distributed.Client``: Dask), closed on exit."""
    if scheduler is None:
        from .local import ForkExecutor, SerialExecutor, can_fork

        yield ForkExecutor(workers) if workers > 1 and can_fork() else SerialExecutor()
        return
    from .cluster import DaskExecutor

    executor = DaskExecutor.connect(scheduler)
    try:
        yield executor
    finally:
        executor.close()


def map_batches(task: Callable[[Any, B], R], recipe: Recipe[Any], items: Sequence[Any], *, scheduler: Any = None,
                workers: int = 1, base: int = 250, batch_size: int | None = None,
                progress: Progress | None = None) -> Iterator[tuple[Sequence[Any], R | BatchFailed]]:
    """The one call of every batch API: cut ``items`` into batches (``batch_size``, else the
    executor's choice from ``base``), run ``task(context, batch)`` on the executor ``scheduler`` and
    ``workers`` name, and yield ``(batch, result)`` in input order; the executor closes at the end.
    ``task`` gets the batch as a sequence of items (``B`` is that sequence type)."""
    with open_executor(scheduler, workers) as executor:
        batches: Sequence[Any] = cut(items, batch_size or executor.batch_size(len(items), base))
        yield from zip(batches, executor.map(task, recipe, batches, progress=progress), strict=True)
