"""Writes, in one place: outputs appear whole or not at all, with ordinary permissions.

* :func:`atomic_write_bytes` / :func:`atomic_write_text`: a temporary file in the target folder,
  fsynced and renamed into place, so a reader never sees half a file and a failed write keeps the
  previous one; the file gets the mode an ordinary write would give (:func:`output_mode`).
* :class:`ResumableOutput`: a long JSONL output written as it is made, renamed into place at the end
  and resumable after a crash (``validate --resume``).
* :func:`folder_lock`: one writer per folder among bioevidence processes.

Where outputs may go (off the run's inputs, out of pinned snapshot folders) is :mod:`bioevidence.paths`.
:mod:`bioevidence.io` re-exports these names, so either import works.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from .errors import InputError

__all__ = ["ResumableOutput", "atomic_open", "atomic_write_bytes", "atomic_write_text", "current_umask", "folder_lock",
           "output_mode"]


def current_umask() -> int:
    """The process umask, read without changing it where Linux allows (``/proc/self/status``);
    elsewhere set and restored at once."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def output_mode(path: Path) -> int:
    """The permission bits a written file gets: an existing file's own, else ``0o666`` less the umask
    (what ``open(path, "w")`` would give), never the ``0o600`` of a temporary file."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~current_umask()


@contextlib.contextmanager
def folder_lock(folder: Path | str, name: str = ".bioevidence.lock", *, wait: bool = True,
                what: str = "this folder") -> Iterator[None]:
    """An exclusive lock on ``folder`` shared by every bioevidence process on this machine (``flock``
    on ``folder/name``, released when the block ends or the process dies). ``wait``: block until the
    other writer is done (a catalogue save takes milliseconds); else refuse at once with a
    :class:`BusyError` naming ``what`` (a knowledge-base build takes minutes)."""
    import fcntl

    from .errors import BusyError

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / name, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError as exc:
            raise BusyError(f"another bioevidence process is writing {what} ({folder}); wait for it to finish, "
                            "or write to another folder", file=str(folder)) from exc
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextlib.contextmanager
def atomic_open(path: Path) -> Iterator[IO[bytes]]:
    """A binary handle whose bytes appear at ``path`` whole or not at all: written to a temporary file
    in the same folder, fsynced and renamed over ``path`` when the block ends without an error (and
    removed when it raises). For outputs written piece by piece (a worker's part of a sharded run).

    The file gets ordinary permissions (:func:`output_mode`: the umask for a new file, the old
    file's mode for a replaced one), so reports and artifacts are readable as any other output."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = output_mode(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and ``os.replace``
    (:func:`atomic_open`)."""
    with atomic_open(path) as handle:
        handle.write(data)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))



class ResumableOutput:
    """A long JSONL output written as it is made, atomic at the end, resumable after a crash.

    Lines go to ``PATH.partial`` (flushed and fsynced by :meth:`write`); :meth:`finish` renames it
    to ``PATH``, so ``PATH`` only ever holds a whole output. ``PATH.partial.json`` holds the run's
    ``fingerprint`` (what it was asked to do). With ``resume`` and a partial of the same fingerprint,
    its complete lines are kept (a line cut by the crash is dropped): :attr:`kept` counts them and
    :meth:`iter_kept` reads them back one at a time (memory stays flat however long the partial); a
    different fingerprint is refused, naming the fix. Without ``resume`` any partial is started over."""

    def __init__(self, path: Path, fingerprint: str, *, resume: bool = False) -> None:
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.card = self.path.with_name(self.path.name + ".partial.json")
        self.kept = 0
        self._kept_bytes = 0
        self._handle: IO[bytes]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if resume and self.partial.is_file():
            try:
                before = json.loads(self.card.read_text(encoding="utf-8")).get("fingerprint")
            except (OSError, ValueError, AttributeError):
                before = None
            if before != fingerprint:
                raise InputError("--resume: the interrupted run was asked something else (other inputs, options "
                                 "or version); run again without --resume to start over", file=str(self.partial))
            with open(self.partial, "rb") as handle:  # whole lines counted a block at a time
                while block := handle.read(1 << 20):
                    ends = block.count(b"\n")
                    if ends:
                        self.kept += ends
                        self._kept_bytes = handle.tell() - len(block) + block.rfind(b"\n") + 1
            self._handle = open(self.partial, "r+b")  # noqa: SIM115 - closed by finish/close
            self._handle.truncate(self._kept_bytes)
            self._handle.seek(self._kept_bytes)
        else:
            atomic_write_text(self.card, json.dumps({"fingerprint": fingerprint}) + "\n")
            self._handle = open(self.partial, "wb")  # noqa: SIM115 - closed by finish/close
            os.fchmod(self._handle.fileno(), output_mode(self.path))

    def write(self, text: str) -> None:
        self._handle.write(text.encode("utf-8"))
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def iter_kept(self) -> Iterator[bytes]:
        """The kept lines of a resumed partial, one at a time, without their newline."""
        with open(self.partial, "rb") as handle:
            for _ in range(self.kept):
                yield handle.readline().rstrip(b"\n")

    def append_file(self, path: Path) -> None:
        """Append the bytes of ``path`` (a worker's part, already whole lines), flushed and fsynced."""
        self._handle.flush()
        copied = 0
        with open(path, "rb") as part:
            size = os.fstat(part.fileno()).st_size
            with contextlib.suppress(AttributeError, OSError):  # in the kernel (Linux): no copy through here
                while copied < size and (step := os.copy_file_range(part.fileno(), self._handle.fileno(),
                                                                    size - copied)):
                    copied += step
            self._handle.seek(0, os.SEEK_END)  # the buffered handle learns where the kernel left the file
            if copied < size:  # elsewhere, or what the kernel did not copy: through a buffer
                part.seek(copied)
                shutil.copyfileobj(part, self._handle, 1 << 20)
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def finish(self) -> None:
        """The whole output in place: ``PATH.partial`` becomes ``PATH``, the card is removed."""
        self._handle.close()
        os.replace(self.partial, self.path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.card)

    def close(self) -> None:
        """Stop without finishing (the partial stays for ``--resume``)."""
        self._handle.close()
