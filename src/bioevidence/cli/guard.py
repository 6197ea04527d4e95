"""The one output guard every command passes before it does any work (issue 25, cause 1).

No output lands onto, or inside, anything the run reads or pins. The guard reads the command's
own parameters, so a command added later inherits it without a line of its own:

* **outputs** are the parameters named ``output``, ``output_dir``, ``records_dir``, ``out`` and
  ``out_dir`` (``-o``, ``--output-dir``, ``--records``, ``--out``), plus the folders a command
  rewrites as a whole (:data:`REWRITES`: ``index build --index``, ``kb build --kb``);
* **reads** are every other path-typed parameter (``click.Path`` or ``click.File``), and what they
  imply: a review queue's ``-wal`` and ``-shm`` files, an index's source folders (the pinned
  papers an ``ask`` or ``answer`` checks its quotes against).

An output file may not be a read file (the same file, through any link) nor lie inside a read
folder; a rewritten folder may not overlap a read folder either way. The test of a path is
:func:`bioevidence.paths.refuse_output` (one policy, in ``paths``); commands whose inputs are not
parameters (a record's profile file, a draft's hashed sources) call it again with those.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

__all__ = ["OUTPUTS", "REWRITES", "check_outputs", "guarded"]

OUTPUTS = frozenset({"output", "output_dir", "records_dir", "out", "out_dir"})
#: command path -> parameters naming folders the command rewrites as a whole
REWRITES: dict[str, frozenset[str]] = {
    "index build": frozenset({"index_dir"}),
    "kb build": frozenset({"kb_dir"}),
    "kb merge": frozenset({"kb_dir"}),
}
_OPTION = {"output": "--output", "output_dir": "--output-dir", "records_dir": "--records", "out": "--out",
           "out_dir": "--out-dir", "index_dir": "--index", "kb_dir": "--kb"}


def _values(value: Any) -> Iterator[Path]:
    for v in value if isinstance(value, (tuple, list)) else (value,):
        if v is None or v == "-":
            continue
        name = v if isinstance(v, (str, Path)) else getattr(v, "name", None)  # click.File: an open file
        if isinstance(name, (str, Path)) and str(name) not in ("", "-", "<stdin>", "<stdout>"):
            yield Path(name)


def index_folders(index_dir: Path) -> list[Path]:
    """The folders an index was built from (its pinned papers), read from its ``index.sqlite``."""
    db = index_dir / "index.sqlite"
    if not db.is_file():
        return []
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT value FROM meta WHERE key='sources'").fetchone()
            sources = [Path(s) for s in json.loads(row[0])] if row else []
            parents = [Path(r[0]).parent for r in con.execute("SELECT DISTINCT source FROM docs")]
        finally:
            con.close()
    except (sqlite3.Error, ValueError, TypeError):
        return []  # not ours to judge here: opening the index reports what is wrong with it
    found = {p if p.is_dir() else p.parent for p in [*sources, *parents] if str(p) not in ("", ".")}
    return sorted(p for p in found if p.is_dir())


def _reads(ctx: click.Context, skip: frozenset[str]) -> tuple[list[Path], list[Path]]:
    files: list[Path] = []
    folders: list[Path] = []
    for param in ctx.command.params:
        if param.name is None or param.name in skip or not isinstance(param.type, (click.Path, click.File)):
            continue
        for path in _values(ctx.params.get(param.name)):
            if path.is_dir():
                folders.append(path)
                if param.name == "index_dir":
                    folders.extend(index_folders(path))
            else:
                files.append(path)
                if param.name == "queue_path":
                    files.extend(path.with_name(path.name + suffix) for suffix in ("-wal", "-shm"))
    return files, folders


def check_outputs(ctx: click.Context) -> None:
    """Refuse (``ConfigurationError``, exit 3) an output of this invocation onto or inside what it reads."""
    from ..paths import refuse_output, refuse_overlap

    command = ctx.command_path.split(" ", 1)[1] if " " in ctx.command_path else ""
    rewrites = REWRITES.get(command, frozenset())
    outputs = [(name, path) for name in sorted(OUTPUTS | rewrites) for path in _values(ctx.params.get(name))]
    if not outputs:
        return
    files, folders = _reads(ctx, OUTPUTS | rewrites)
    for name, path in outputs:
        what = _OPTION.get(name, name)
        refuse_output(path, reads=files, folders=folders, what=what)
        if name in rewrites:
            refuse_overlap(path, [*folders, *files], what=what)


def guarded(command: click.Command) -> click.Command:
    """``command`` (and every command of a group, recursively) with :func:`check_outputs` run first."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            guarded(sub)
        return command
    inner: Callable[..., Any] | None = command.callback
    if inner is None or getattr(inner, "__bioevidence_guarded__", False):
        return command

    @functools.wraps(inner)
    def callback(*args: Any, **kwargs: Any) -> Any:
        check_outputs(click.get_current_context())
        return inner(*args, **kwargs)

    callback.__bioevidence_guarded__ = True  # type: ignore[attr-defined]
    command.callback = callback
    return command
