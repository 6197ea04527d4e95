"""The ``--scheduler`` option shared by the batch commands, and their batch progress bar."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

SCHEDULER_HELP = ("Run the batches on Dask: local[:N] (N worker processes on this machine) or a scheduler "
                  "address such as tcp://10.0.0.5:8786 (needs pip install 'bioevidence[dask]'; see docs/scale.md).")


def _checked(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """The address is checked (its form, a scheduler answering there) before the command does any work:
    ``kb build --scheduler unreachable`` used to write the knowledge base first."""
    if value is not None and not ctx.resilient_parsing:
        from ..execute.cluster import check_scheduler

        check_scheduler(value)
    return value


def scheduler_option(f: Any) -> Any:
    return click.option("--scheduler", metavar="ADDRESS|local[:N]", help=SCHEDULER_HELP, callback=_checked)(f)


@contextmanager
def stream_progress(total_bytes: int) -> Iterator[Callable[[int, int, float], None] | None]:
    """A rich bar on stderr for a streamed batch, when stderr is a terminal: the input read (bytes,
    so the ETA holds for a file of unknown record count), records done and records a second; else
    ``None`` (silent: a log or a pipe gets no bar)."""
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("validating"), BarColumn(), TextColumn("{task.fields[records]:,} records"),
               TextColumn("{task.fields[rate]:,.0f} records/s"), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("validating", total=total_bytes or None, records=0, rate=0.0)

        def advance(read: int, done: int, rate: float) -> None:
            progress.update(task, completed=read, records=done, rate=rate)

        yield advance


@contextmanager
def batch_progress(label: str, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on stderr counting batches, when ``enabled`` and stderr is a terminal;
    else ``None`` (no callback: the library runs as it does without one)."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(label, total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield advance
