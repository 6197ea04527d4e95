"""The ``--scheduler`` option shared by the batch commands, and their batch progress bar."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

SCHEDULER_HELP = ("Run the batches on Dask: local[:N] (N worker processes on this machine) or a scheduler "
                  "address such as tcp://10.0.0.5:8786 (needs pip install 'bioevidence[dask]'; see docs/scale.md).")


_FROM_FILE = "bioevidence.scheduler_file"


def _from_file(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    """``--scheduler-file``: the address a Dask scheduler wrote (``dask scheduler --scheduler-file``,
    ``dask-mpi``, a SLURM script), kept for ``--scheduler`` to check and use."""
    if value is None or ctx.resilient_parsing:
        return
    import json
    import os
    import time

    from ..errors import ConfigurationError
    from ..execute.cluster import WAIT_ENV
    from ..io import read_limited

    # A batch script starts the scheduler and this command together: wait for the file as Dask's
    # own client does, up to $BIOEVIDENCE_DASK_WAIT seconds (the wait for a first worker).
    wait = float(os.environ.get(WAIT_ENV, "120"))
    deadline = time.monotonic() + wait
    while not (value.is_file() and value.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.2)
    if not value.is_file():
        raise ConfigurationError(f"no Dask scheduler file {value} appeared within {wait:g} s; start the scheduler "
                                 f"with dask scheduler --scheduler-file {value}, or raise ${WAIT_ENV}")
    try:
        address = json.loads(read_limited(value, 1 << 20)).get("address")
    except (ValueError, AttributeError) as exc:
        raise ConfigurationError(f"{value} is not a Dask scheduler file (JSON with an \"address\"): {exc}") from exc
    if not isinstance(address, str) or not address:
        raise ConfigurationError(f"{value} names no scheduler address (a Dask scheduler file holds "
                                 "{\"address\": \"tcp://HOST:PORT\", ...}); is the scheduler started?")
    ctx.meta[_FROM_FILE] = address


def _checked(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """The address is checked (its form, a scheduler answering there) before the command does any work:
    ``kb build --scheduler unreachable`` used to write the knowledge base first."""
    from_file = ctx.meta.get(_FROM_FILE)
    if value is not None and from_file is not None:
        raise click.UsageError("give --scheduler or --scheduler-file, not both")
    value = value if value is not None else from_file
    if value is not None and not ctx.resilient_parsing:
        from ..execute.cluster import check_scheduler

        check_scheduler(value)
    return value


def scheduler_option(f: Any) -> Any:
    f = click.option("--scheduler", metavar="ADDRESS|local[:N]", help=SCHEDULER_HELP, callback=_checked)(f)
    # processed before --scheduler (is_eager), so --scheduler's check sees the address it wrote
    return click.option("--scheduler-file", type=click.Path(dir_okay=False, path_type=Path), is_eager=True,
                        expose_value=False, callback=_from_file,
                        help="Read the scheduler's address from the JSON file a Dask scheduler writes "
                             "(dask scheduler --scheduler-file, dask-mpi, SLURM scripts).")(f)


@contextmanager
def stream_progress(total_bytes: int, every: float | None = None) -> Iterator[Callable[[int, int, float], None] | None]:
    """A rich bar on stderr for a streamed batch, when stderr is a terminal: the input read (bytes,
    so the ETA holds for a file of unknown record count), records done and records a second. Not on
    a terminal (a batch job's log): with ``every`` seconds, one JSON line at most that often
    (``{"progress": "validating", "records": N, "per_s": R, "input_share": S}``); else silent."""
    import sys

    if not sys.stderr.isatty():  # decided before rich is imported: `validate` in a pipe stays light
        if every is None:
            yield None
            return
        import json
        import time

        last = [time.monotonic()]

        def line(read: int, done: int, rate: float) -> None:
            now = time.monotonic()
            if now - last[0] >= every:
                last[0] = now
                share = round(read / total_bytes, 4) if total_bytes else None
                sys.stderr.write(json.dumps({"progress": "validating", "records": done, "per_s": round(rate),
                                             "input_share": share}) + "\n")
                sys.stderr.flush()

        yield line
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    columns = (TextColumn("validating"), BarColumn(), TextColumn("{task.fields[records]:,} records"),
               TextColumn("{task.fields[rate]:,.0f} records/s"), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("validating", total=total_bytes or None, records=0, rate=0.0)

        def advance(read: int, done: int, rate: float) -> None:
            progress.update(task, completed=read, records=done, rate=rate)

        yield advance


class _Lines:
    """Batch progress for a log (stderr not a terminal): one JSON line at most every ``every`` seconds,
    and one when the cluster is reached (its scheduler, dashboard link and workers)."""

    def __init__(self, label: str, every: float) -> None:
        import time

        self.label, self.every, self.started = label, every, time.monotonic()
        self.last = self.started

    def _write(self, line: dict[str, Any]) -> None:
        import json
        import sys

        sys.stderr.write(json.dumps(line) + "\n")
        sys.stderr.flush()

    def __call__(self, done: int, total: int) -> None:
        import time

        now = time.monotonic()
        if now - self.last < self.every and done < total:
            return
        self.last = now
        elapsed = now - self.started
        eta = round(elapsed / done * (total - done), 1) if done else None
        self._write({"progress": self.label, "batches": done, "of": total, "elapsed_s": round(elapsed, 1),
                     "eta_s": eta})

    def cluster(self, info: dict[str, Any]) -> None:
        self._write({"progress": "cluster", **info})


@contextmanager
def batch_progress(label: str, enabled: bool,
                   every: float | None = None) -> Iterator[Callable[[int, int], None] | None]:
    """Progress of a batch run on a cluster (``enabled``), counted in batches: a rich bar on stderr
    when it is a terminal (with the Dask dashboard's address above it); in a log, JSON lines at most
    every ``every`` seconds (:class:`_Lines`), or nothing without ``every``. ``None``: no callback, and
    the library runs as it does without one. A callback's optional ``cluster(info)`` method hears
    where the run went (``scheduler``, ``dashboard``, ``workers``) once connected."""
    if not enabled:
        yield None
        return
    import sys

    if not sys.stderr.isatty():
        yield _Lines(label, every) if every is not None else None
        return
    from rich.console import Console
    from rich.progress import Progress

    console = Console(stderr=True)
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(label, total=None)

        class _Bar:
            def __call__(self, done: int, total: int) -> None:
                progress.update(task, completed=done, total=total)

            def cluster(self, info: dict[str, Any]) -> None:
                where = info.get("dashboard") or "none (pip install bokeh where the scheduler runs)"
                progress.console.print(f"Dask scheduler {info.get('scheduler')}, {info.get('workers')} workers; "
                                       f"dashboard: {where}")

        yield _Bar()
