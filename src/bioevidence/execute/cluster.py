"""The Dask executor: batches run on the workers of a Dask cluster, results gathered in order.

``--scheduler`` / ``scheduler=`` takes:

* ``local`` or ``local:N``: a ``LocalCluster`` of N worker processes (default: one per core) on
  127.0.0.1, one thread each, started for the run and stopped after it;
* a scheduler address (``tcp://10.0.0.5:8786``, ``host:8786``): an existing cluster (dask-jobqueue
  on SLURM/PBS, Kubernetes, ``dask scheduler`` + ``dask worker``); see docs/scale.md;
* in Python, also a ``distributed.Client`` (used as is, left open) or a cluster object.

What a worker gets per batch: the task function (by name), the recipe of its context and the
batch. It loads the context once per recipe key (:func:`bioevidence.execute.loaded`), reads
pinned files from the paths the recipe names (a store shared by every machine), and returns the
batch's results; it writes nothing. Fault handling is Dask's: a batch whose task raises is retried
``RETRIES`` times; a batch whose worker dies is rescheduled on another worker, up to the
scheduler's ``distributed.scheduler.allowed-failures`` (3) deaths, then it is a
:class:`~bioevidence.execute.BatchFailed`. Losing the scheduler itself is a ``ClusterError``.

Every Dask and distributed error is translated here (:func:`translate`), nowhere else.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import pickle
import re
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from .._version import __version__
from ..errors import BioevidenceError, ClusterError, ConfigurationError
from ..limits import usable_cpus
from . import BatchFailed, Progress, Ready, Recipe, loaded

B = TypeVar("B")
R = TypeVar("R")

INSTALL_HINT = "pip install 'bioevidence[dask]'"
RETRIES = 2  # re-runs of a batch whose task raised (a worker's shared filesystem hiccup, say)
CONNECT_TIMEOUT = 10.0  # seconds to reach a scheduler
WINDOW = 8  # batches in flight per worker thread (the scheduler queues them; results wait here in order)
WAIT_ENV = "BIOEVIDENCE_DASK_WAIT"  # seconds to wait for the first worker to join (default 120)
HANDSHAKE_TIMEOUT = 10.0  # seconds for a scheduler to answer Dask's handshake (a silent port hung for ever)
HANDSHAKE_ENV = "BIOEVIDENCE_DASK_HANDSHAKE"  # seconds, overrides HANDSHAKE_TIMEOUT
OVERSUBSCRIBE_ENV = "BIOEVIDENCE_DASK_OVERSUBSCRIBE"  # 1: local:N may start more processes than cores
_LOCAL = re.compile(r"local(?::(\d+))?")
_ADDRESS = re.compile(r"(?:(?:tcp|tls|ws|wss)://)?[^\s:/@]+:\d{1,5}/?")


DASK_LOG_ENV = "BIOEVIDENCE_DASK_LOG"
GRACE_ENV = "BIOEVIDENCE_DASK_GRACE"  # seconds a lost scheduler may take to come back


class _JsonLines(logging.Handler):
    """Dask's log records as one JSON object a line on stderr, beside (never inside) our error lines."""

    def emit(self, record: logging.LogRecord) -> None:
        import json
        import sys

        try:
            sys.stderr.write(json.dumps({"log": "dask", "logger": record.name, "level": record.levelname,
                                         "message": record.getMessage()}) + "\n")
        except Exception:  # a log line must never break the run
            self.handleError(record)


def _route_dask_logs() -> None:
    """Dask's logging, decided once per process: with ``$BIOEVIDENCE_DASK_LOG=FILE`` everything from
    INFO up goes to FILE; otherwise only errors, as JSON lines on stderr, so a batch's stderr stays one
    JSON object a line. Worker processes this process starts inherit the level (``DASK_LOGGING__*``)."""
    target = os.environ.get(DASK_LOG_ENV)
    handler: logging.Handler = logging.FileHandler(target) if target else _JsonLines()
    if target:
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    roots = ("distributed", "dask", "tornado")
    for name in list(logging.root.manager.loggerDict):  # Dask's config gives some children their own handler
        if name.split(".")[0] in roots and "." in name:
            child = logging.getLogger(name)
            child.handlers[:] = []
            child.setLevel(logging.NOTSET)
            child.propagate = True
    for name in roots:
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(logging.INFO if target else logging.ERROR)
        logger.propagate = False


def _import_distributed() -> Any:
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")  # read by distributed at import, here and in workers
    try:
        import distributed
    except ImportError as exc:
        raise ConfigurationError(f"--scheduler needs Dask, which is not installed: {INSTALL_HINT}") from exc
    if not getattr(_route_dask_logs, "done", False):
        _route_dask_logs()
        _route_dask_logs.done = True  # type: ignore[attr-defined]
    return distributed


def parse_scheduler(value: str) -> tuple[str, int | None]:
    """``("local", N or None)`` or ``("address", None)``; anything else is a ConfigurationError."""
    text = value.strip()
    match = _LOCAL.fullmatch(text)
    if match:
        n = int(match.group(1)) if match.group(1) else None
        if n is not None and n < 1:
            raise ConfigurationError(f"--scheduler {value!r}: local:N needs N ≥ 1 worker processes")
        return "local", n
    if _ADDRESS.fullmatch(text):
        return "address", None
    scheme = text.split("://", 1)[0] if "://" in text else None
    if scheme is not None:
        raise ConfigurationError(f"--scheduler {value!r}: {scheme}:// is not a Dask scheduler address for this "
                                 "command (tcp://, tls://, ws:// or wss:// host:port; in Python, pass a "
                                 "distributed.Client)")
    raise ConfigurationError(f"--scheduler {value!r} is neither local, local:N nor a scheduler address "
                             "such as tcp://10.0.0.5:8786")


def probe(address: str, timeout: float | None = None) -> None:
    """Dask's handshake with the scheduler at ``address``, within ``timeout`` seconds in all, or a
    ``ClusterError``: a port that accepts connections and never answers is refused instead of
    hanging the run (distributed's own ``timeout`` covers the connect, not the handshake)."""
    import asyncio

    _import_distributed()
    from distributed.comm import connect

    if timeout is None:
        try:
            timeout = float(os.environ.get(HANDSHAKE_ENV, HANDSHAKE_TIMEOUT))
        except ValueError as exc:
            raise ConfigurationError(f"${HANDSHAKE_ENV} must be a number of seconds") from exc

    async def handshake() -> None:
        comm = await asyncio.wait_for(connect(address, timeout=timeout), timeout)
        await comm.close()

    try:
        asyncio.run(handshake())
    except TimeoutError as exc:
        raise ClusterError(f"the Dask scheduler {address} did not answer within {timeout:g} s (nothing listening, "
                           "or not a Dask scheduler); check the address and that the scheduler is running",
                           retryable=True) from exc
    except (OSError, ValueError, TypeError, RuntimeError) as exc:
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise ClusterError(f"cannot reach the Dask scheduler {address} ({reason}); check the address, its "
                           "security settings (tls://) and that the scheduler is running", retryable=True) from exc


def check_scheduler(value: str) -> None:
    """What a command checks before any work: the value's form, and for an address that a Dask
    scheduler answers there (``probe``). ``local[:N]`` needs only Dask to be installed."""
    kind, _ = parse_scheduler(value)
    _import_distributed()
    if kind == "address":
        probe(value.strip())


MIN_BATCHES = 64  # batches a large run is cut into, whatever the cluster's size when it starts


def batch_size_for(items: int, base: int) -> int:
    """Items per cluster batch for ``items`` items (see :meth:`DaskExecutor.batch_size`)."""
    return max(base, min(8 * base, -(-items // MIN_BATCHES)))


def local_workers(n: int | None) -> int:
    """Worker processes for ``local[:N]``: N, capped at the cores unless ``$BIOEVIDENCE_DASK_OVERSUBSCRIBE=1``."""
    cores = usable_cpus()
    if n is None:
        return cores
    if n > cores and os.environ.get(OVERSUBSCRIBE_ENV) != "1":
        import sys

        sys.stderr.write(f"local:{n} asks for {n} worker processes on {cores} cores; starting {cores} "
                         f"(set {OVERSUBSCRIBE_ENV}=1 to start {n})\n")
        return cores
    return n


def _worker_version() -> str:
    from .. import __version__ as version

    return version


def _run_remote(task: Callable[[Any, Any], Any], recipe: Recipe[Any], batch: bytes, version: str) -> Any:
    """What a worker runs for one batch: same bioevidence as the client, context loaded once. The
    batch travels pickled once by the client, as one bytes object: the scheduler (which unpickles
    the tasks it is sent) then copies bytes instead of rebuilding thousands of records."""
    if version != __version__:
        raise ConfigurationError(f"this worker runs bioevidence {__version__} but the client {version}; install "
                                 "the same version on every worker")
    return task(loaded(recipe), pickle.loads(batch))


def translate(exc: BaseException, index: int, client: Any) -> BatchFailed:
    """A batch's upstream error as a BatchFailed; losing the scheduler raises ClusterError."""
    distributed = _import_distributed()
    if isinstance(exc, distributed.KilledWorker):
        return BatchFailed(index, f"batch {index + 1} was lost with every worker that ran it (each died: out of "
                                  "memory, or killed); it was not retried further. Validate those records "
                                  "alone, or give the workers more memory")
    # A cancelled batch was cancelled by the cluster, never by us while waiting (ours are cancelled only
    # when the run has already stopped): "scheduler-connection-lost" while the client still says it is
    # reconnecting. That is the run's failure, not its records'.
    cancelled = isinstance(exc, (asyncio.CancelledError, concurrent.futures.CancelledError)) or (
        type(exc).__name__.endswith("CancelledError"))
    if cancelled or client.status not in ("running", "connecting"):
        raise ClusterError(f"lost the Dask scheduler ({type(exc).__name__}: {exc}); no results were written; "
                           "check the scheduler and run again", retryable=True) from exc
    ours = exc if isinstance(exc, BioevidenceError) else None
    message = ours.message if ours is not None else f"{type(exc).__name__}: {exc}"
    return BatchFailed(index, f"batch {index + 1} failed on a worker after {RETRIES + 1} tries: {message}", ours)


class DaskExecutor:
    name = "dask"

    def __init__(self, client: Any, *, cluster: Any = None, owns_client: bool = True) -> None:
        self.client = client
        self.cluster = cluster
        self.owns_client = owns_client
        self.address = str(client.scheduler.address) if client.scheduler is not None else "?"

    @classmethod
    def connect(cls, scheduler: Any) -> DaskExecutor:
        """Start a LocalCluster (``local[:N]``) or connect to a scheduler; check the workers' version."""
        distributed = _import_distributed()
        if isinstance(scheduler, distributed.Client):
            executor = cls(scheduler, owns_client=False)
        elif not isinstance(scheduler, str):
            if not hasattr(scheduler, "scheduler_address"):
                raise ConfigurationError("scheduler= takes local, local:N, a scheduler address, a "
                                         "distributed.Client or a Dask cluster object")
            executor = cls(distributed.Client(scheduler, set_as_default=False))
        else:
            kind, n = parse_scheduler(scheduler)
            if kind == "local":
                try:
                    cluster = distributed.LocalCluster(
                        n_workers=local_workers(n), threads_per_worker=1, processes=True, host="127.0.0.1",
                        # CRITICAL: a worker's heartbeat failing while the cluster shuts down is logged at
                        # ERROR on stderr, among our JSON error lines (seen once in CI); our errors come back
                        # through the tasks' results, not Dask's logs
                        dashboard_address=":0", silence_logs=logging.CRITICAL)
                except (OSError, RuntimeError, TimeoutError) as exc:
                    raise ClusterError(f"could not start a local Dask cluster ({type(exc).__name__}: {exc}); check "
                                       "free memory and ports on 127.0.0.1, or use --workers", retryable=True) from exc
                executor = cls(distributed.Client(cluster, set_as_default=False), cluster=cluster)
            else:
                probe(scheduler.strip())  # a silent port is refused here, not after a hang
                try:
                    client = distributed.Client(scheduler.strip(), timeout=CONNECT_TIMEOUT, set_as_default=False)
                except (OSError, TimeoutError, ValueError, TypeError, RuntimeError) as exc:
                    raise ClusterError(f"cannot reach the Dask scheduler {scheduler} ({exc}); check the address "
                                       "and that the scheduler is running", retryable=True) from exc
                executor = cls(client)
        try:
            executor._check_workers()
        except BaseException:
            executor.close()
            raise
        return executor

    def _check_workers(self) -> None:
        wait = float(os.environ.get(WAIT_ENV, "120"))
        try:
            self.client.wait_for_workers(1, timeout=wait)
        except TimeoutError as exc:
            raise ClusterError(f"no Dask worker joined the scheduler {self.address} within {wait:g} s; start "
                               f"workers (dask worker {self.address}) or raise ${WAIT_ENV}", retryable=True) from exc
        try:
            versions = self.client.run(_worker_version)
        except ImportError as exc:
            raise ConfigurationError(f"a Dask worker of {self.address} cannot import bioevidence ({exc}); install "
                                     f"bioevidence {__version__} on every worker") from exc
        wrong = {addr: v for addr, v in versions.items() if v != __version__}
        if wrong:
            addr, version = next(iter(wrong.items()))
            raise ConfigurationError(f"Dask worker {addr} runs bioevidence {version}, this client {__version__}; "
                                     "install the same version on every worker")

    def dashboard_link(self) -> str | None:
        """The scheduler's dashboard address, or ``None`` when it serves none (its pages need bokeh
        where the scheduler runs: ``pip install bokeh``)."""
        try:
            link = self.client.dashboard_link
        except (KeyError, AttributeError, OSError, ValueError, TypeError):
            return None
        return str(link) if link else None

    @property
    def workers(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def batch_size(self, items: int, base: int) -> int:
        """From the work alone, never the workers present (a cluster still scaling up has few at
        connect, and batches cut for them would starve the rest): at least :data:`MIN_BATCHES` batches
        where the items allow, each between ``base`` and 8 × ``base``."""
        return batch_size_for(items, base)

    def map(self, task: Callable[[Any, B], R], recipe: Recipe[Any], batches: Sequence[B], *,
            progress: Progress | None = None) -> Iterator[R | BatchFailed]:
        if isinstance(recipe, Ready):
            raise ConfigurationError("a cluster run needs a recipe its workers can load (a GateSpec, not a loaded "
                                     "Validator): pass bioevidence.gate.spec.GateSpec instead")
        distributed = _import_distributed()
        client, run = self.client, uuid.uuid4().hex[:12]
        total = len(batches)
        position: dict[Any, int] = {}
        # Results are fetched by as_completed in the background (no blocking call per batch).
        pending = distributed.as_completed(loop=client.loop, with_results=True, raise_errors=False)
        ready: dict[int, R | BatchFailed] = {}
        submitted = emitted = done = 0

        def submit() -> None:
            nonlocal submitted
            payload = pickle.dumps(batches[submitted], protocol=pickle.HIGHEST_PROTOCOL)
            future = client.submit(_run_remote, task, recipe, payload, __version__, pure=False,
                                   retries=RETRIES, key=f"bioevidence-{task.__name__}-{run}-{submitted}")
            position[future] = submitted
            pending.add(future)
            submitted += 1

        workers = self.workers
        notice = getattr(progress, "cluster", None)  # an optional method of the progress callback
        if callable(notice):
            notice({"scheduler": self.address, "dashboard": self.dashboard_link(), "workers": workers,
                    "batches": total})
        try:
            while submitted < min(WINDOW * workers, total):
                submit()
            for future, value in self._completed(pending, position):
                index = position.pop(future)
                if future.status == "finished":
                    ready[index] = value
                else:
                    exc = future.exception() if future.status == "error" else value
                    ready[index] = translate(exc, index, client)
                future.release()
                done += 1
                if done % 64 == 0:
                    workers = self.workers  # workers may have joined (or left) the cluster
                while submitted < total and submitted - done < WINDOW * workers:
                    submit()
                if progress is not None:
                    progress(done, total)
                while emitted in ready:
                    yield ready.pop(emitted)
                    emitted += 1
        finally:
            for future in position:
                with contextlib.suppress(Exception):  # a closed client must not hide the ClusterError
                    future.cancel()

    def _completed(self, pending: Any, position: dict[Any, int]) -> Iterator[tuple[Any, Any]]:
        """``(future, result)`` as batches finish, with the scheduler watched while waiting: a client
        no longer running, or reconnecting for longer than ``$BIOEVIDENCE_DASK_GRACE`` seconds
        (default 60), is a :class:`ClusterError` (exit 3) instead of a wait that never ends."""
        grace = float(os.environ.get(GRACE_ENV, "60"))
        lost_since: float | None = None
        while position:
            got = pending.next_batch(block=False)
            if got:
                lost_since = None
                yield from got
                continue
            status = self.client.status
            if status == "running":
                lost_since = None
            elif status == "connecting" and (lost_since is None or time.monotonic() - lost_since < grace):
                lost_since = lost_since if lost_since is not None else time.monotonic()
            else:
                raise ClusterError(f"lost the Dask scheduler {self.address} (the client is {status}"
                                   f"{f' after {grace:g} s' if status == 'connecting' else ''}); no results "
                                   "were written; check the scheduler and run again", retryable=True)
            time.sleep(0.01)

    def close(self) -> None:
        if self.owns_client:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
