"""Where a run may read and write: one place for the path policies every command inherits.

* :func:`inside` / :func:`confine`: a path's real location (symlinks followed) within a folder; a
  record in a pull request that links to ``/etc/passwd`` is refused before a byte is read.
* :func:`refuse_output` / :func:`refuse_overwrite`: an output never lands on a file the run reads or
  in a pinned snapshot folder; :func:`refuse_overlap`: a folder a command rewrites holds no input;
  :func:`refuse_system_folder`: a server is not pointed at ``/``, a home folder or ``/etc``.
* :func:`safe_child`: a name from input stays inside its folder.

``bioevidence.cli.guard`` applies the output policies to every command before any work.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .errors import InputError

__all__ = ["confine", "inside", "refuse_output", "refuse_overlap", "refuse_overwrite", "refuse_system_folder",
           "safe_child", "same_file"]


def inside(path: Path | str, folder: Path | str) -> bool:
    """Whether the real location of ``path`` (symlinks followed, need not exist) is ``folder`` or below it."""
    real, base = Path(os.path.realpath(path)), Path(os.path.realpath(folder))
    return real == base or base in real.parents


def confine(path: Path | str, root: Path | str) -> Path:
    """The real path of ``path`` when it lies inside ``root`` (symlinks followed), else ``InputError``.

    A record in a pull request that is a symlink to ``/etc/passwd`` or a secrets file is refused
    here, before a byte of the target is read; the message does not say where the link points."""
    path = Path(path)
    if not inside(path, root):
        linked = any(p.is_symlink() for p in (path, *path.parents) if str(p) not in ("", "."))
        how = "is a symlink that leads outside" if linked else "is outside"
        raise InputError(f"{how} the workspace {root}; refused (commit the file itself, inside the workspace)",
                         file=str(path), problem="outside_workspace")
    return Path(os.path.realpath(path))


def same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(os.path.abspath(a)) == Path(os.path.abspath(b))


def refuse_overwrite(output: Path, protected: Iterable[Path], *, what: str = "--output") -> None:
    """Refuse to write ``output`` over any of ``protected`` (inputs, profile, schema)."""
    refuse_output(output, reads=protected, what=what)


def refuse_output(output: Path, *, reads: Iterable[Path | str] = (), folders: Iterable[Path | str] = (),
                  what: str = "--output") -> None:
    """Refuse an output path that is (or links to) a file the run reads, or lies in a pinned folder.

    ``reads``: every input file of the run (records, the ``--files-from`` list, profile, schema,
    ontologies, gene sets, reference tables, a draft's hashed sources); ``folders``: folders the run
    reads or pins (snapshot folders, whose every file is a pinned input, index and record folders).
    Every command passes it before any work (``bioevidence.cli.guard``)."""
    from .errors import ConfigurationError

    output = Path(output)
    for path in reads:
        if Path(path).exists() and same_file(output, Path(path)):
            raise ConfigurationError(f"{what} {output} would overwrite an input ({path}); choose another path")
    for folder in folders:
        if inside(output, folder):
            kind = "the pinned snapshot folder" if (Path(folder) / "literature.json").is_file() else "the folder"
            raise ConfigurationError(f"{what} {output} is inside {kind} {folder}, whose files this run reads; "
                                     "write the output elsewhere")
    real = Path(os.path.realpath(output))
    for folder in (real, *real.parents):
        if (folder / "literature.json").is_file():  # a pinned snapshot folder, named by the run or not
            raise ConfigurationError(f"{what} {output} is inside the pinned snapshot folder {folder}, whose files "
                                     "are pinned inputs; write the output elsewhere")


def refuse_overlap(folder: Path, paths: Iterable[Path | str], *, what: str) -> None:
    """Refuse a folder a command rewrites as a whole when it holds one of ``paths`` (what the run reads)."""
    from .errors import ConfigurationError

    for path in paths:
        if Path(path).exists() and inside(path, folder):
            raise ConfigurationError(f"{what} {folder} holds {path}, which this run reads; choose a folder "
                                     "that holds none of the inputs")


_SYSTEM = ("/etc", "/proc", "/sys", "/dev", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/run")


def refuse_system_folder(folder: Path | str, *, what: str) -> None:
    """Refuse a folder a server is told to read or write (``--workspace``, ``--snapshot-dir``) that is the
    filesystem root, a home folder itself, or inside the system's own folders (``/etc``, ``/proc`` …):
    a tool call could then read any file there by path."""
    from .errors import ConfigurationError

    real = Path(os.path.realpath(folder))
    system = [s for s in _SYSTEM if inside(real, s)]
    if real == Path(real.anchor) or real == Path(os.path.realpath(Path.home())) or system:
        where = "the filesystem root" if real == Path(real.anchor) else system[0] if system else "a home folder"
        raise ConfigurationError(f"{what} {folder} is {where}; give a folder made for it (e.g. ./records)")


def safe_child(folder: Path, name: str) -> Path:
    """``folder / name`` only when it stays inside ``folder`` (no ``..``, no absolute names)."""
    from .errors import ConfigurationError

    candidate = (folder / name).resolve()
    base = folder.resolve()
    if candidate != base and base not in candidate.parents:
        raise ConfigurationError(f"path {name!r} escapes its folder {folder}")
    return candidate
