"""The content-addressed snapshot store.

A store is one flat folder of files named ``<sha256>[.<ext>][.gz]`` where ``sha256`` is the
SHA-256 of the *uncompressed* bytes (``<sha>.xml.gz`` = gzip of the bytes hashing to ``<sha>``).
Names are never trusted: :meth:`SnapshotStore.read` re-hashes the bytes the first time it reads
a hash in this process (and caches only bytes that verified); :meth:`SnapshotStore.check` does
the same without keeping the bytes. Files are read and gunzipped as a stream and hashed while
streaming, with a cap on the inflated size (``max_inflated``, default 256 MiB, see
:mod:`bioevidence.limits`): a 1 MB gzip bomb that inflates to 1 GiB is refused (``LimitError``)
after at most the cap, and ``check``/``verify`` hold one chunk in memory whatever the file
says. A file that exists but cannot be read is a ``SourceAccessError`` (an operator's fault),
never "not pinned". Writes go through a temporary file
in the same folder and ``os.replace``, so several writers (threads or processes) may pin the same
bytes at once and a reader never sees half a file. Gzip is written with ``mtime=0`` so the same
bytes always give the same archive.

Other files in the folder (``literature.json``, ``.tmp`` leftovers, README) are ignored.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import threading
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..errors import ConfigurationError, IntegrityError, LimitError, SourceAccessError, SourceError
from ..io import CHUNK, atomic_write_bytes, iter_gunzip
from ..limits import format_size, size_limit

SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_EXT_RE = re.compile(r"^[a-z0-9]{1,16}$")
_NAME_RE = re.compile(r"^(?P<sha>[0-9a-f]{64})(?P<ext>(?:\.[a-z0-9]{1,16})?)(?P<gz>(?:\.gz)?)$")

__all__ = ["SHA256_RE", "Problem", "SnapshotStore", "check_sha256", "sha256_hex"]


def sha256_hex(data: bytes) -> str:
    """Lower-case hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def check_sha256(value: str, *, what: str = "sha256") -> str:
    """Return ``value`` when it is 64 lower-case hex characters, else raise ``ConfigurationError``."""
    if not isinstance(value, str) or not SHA256_RE.match(value):
        raise ConfigurationError(
            f"{what} {value!r} is not a SHA-256 (expected 64 lower-case hex characters); "
            "copy the hash exactly as printed by `sha256sum`"
        )
    return value


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a store: ``kind`` is ``missing``, ``corrupted``, ``truncated``, ``too_large``
    (inflates past the cap) or ``unreadable`` (permissions, I/O)."""

    kind: str
    sha256: str
    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.path}: {self.detail}"


def _iter_plain(handle: IO[bytes], limit: int, *, name: str) -> Iterator[bytes]:
    total = 0
    while chunk := handle.read(CHUNK):
        total += len(chunk)
        if total > limit:
            raise LimitError(f"{name} holds more than {format_size(limit)} (the max_inflated limit); if the file is "
                             "genuine raise the limit with --max-inflated or BIOEVIDENCE_MAX_INFLATED",
                             file=name, problem="too_large")
        yield chunk


class SnapshotStore:
    """A folder of content-addressed files (see module docstring)."""

    def __init__(self, root: Path | str, *, max_inflated: int | None = None,
                 files: Mapping[str, Path | str] | None = None) -> None:
        """``root``: the folder of hash-named files (where :meth:`put` writes). ``files``: pinned files
        kept where they lie, by the SHA-256 of their (uncompressed) bytes, e.g. a data release shipped
        as ``sample.jsonl.gz``; read and re-hashed exactly like the folder's own."""
        self.root = Path(root)
        self._files: dict[str, Path] = {}
        for sha, path in (files or {}).items():
            check_sha256(sha)
            self._files[sha] = Path(path)
        self.max_inflated = size_limit("max_inflated", max_inflated)
        self._refused: dict[str, LimitError] = {}  # files over the cap: refused again without inflating
        self._checked: set[str] = set()
        self._verified: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self.cache_limit = 256 * 1024 * 1024  # bytes kept in-process after verification
        self._cached_bytes = 0
        self._listing: dict[str, list[Path]] | None = None

    def __repr__(self) -> str:
        return f"SnapshotStore({str(self.root)!r})"

    # -- lookup -----------------------------------------------------------------------------
    def _scan(self) -> dict[str, list[Path]]:
        """One listing of the folder: sha256 -> its files, sorted."""
        listing: dict[str, list[Path]] = {}
        try:
            with os.scandir(self.root) as entries:
                for entry in entries:
                    match = _NAME_RE.match(entry.name)
                    if match and entry.is_file():
                        listing.setdefault(match.group("sha"), []).append(Path(entry.path))
        except OSError:
            listing = {}
        for paths in listing.values():
            paths.sort()
        for sha, path in self._files.items():
            listing.setdefault(sha, []).append(path)
        return listing

    def _candidates(self, sha: str) -> Iterator[Path]:
        """Files named for ``sha``, from a cached listing of the folder (rescanned on a miss, so
        files pinned meanwhile by another process are seen); a file gone since is skipped."""
        check_sha256(sha)
        with self._lock:
            if self._listing is None or sha not in self._listing:
                self._listing = self._scan()
            paths = list(self._listing.get(sha, ()))
        yield from (p for p in paths if p.is_file())

    def find(self, sha: str) -> Path | None:
        """The file holding ``sha`` (any extension, compressed or not), or ``None``."""
        for path in self._candidates(sha):
            return path
        return None

    def has(self, sha: str) -> bool:
        """Whether a file named for ``sha`` exists (its bytes are checked only when read)."""
        return self.find(sha) is not None

    def __contains__(self, sha: object) -> bool:
        return isinstance(sha, str) and bool(SHA256_RE.match(sha)) and self.has(sha)

    def path_for(self, sha: str, ext: str = "", compress: bool = True) -> Path:
        """The path ``put`` would write for these bytes."""
        check_sha256(sha)
        ext = ext.lstrip(".").lower()
        if ext and not _EXT_RE.match(ext):
            raise ConfigurationError(f"extension {ext!r} must be 1-16 lower-case letters or digits, e.g. 'xml'")
        name = sha + (f".{ext}" if ext else "") + (".gz" if compress else "")
        return self.root / name

    def entries(self) -> Iterator[tuple[str, Path]]:
        """Every ``(sha256, path)`` whose file name is a store name, sorted by name, then the ``files``
        given by hash."""
        found: list[tuple[str, Path]] = []
        if self.root.is_dir():
            for entry in sorted(self.root.iterdir()):
                match = _NAME_RE.match(entry.name)
                if match and entry.is_file():
                    found.append((match.group("sha"), entry))
        yield from found
        yield from sorted((sha, path) for sha, path in self._files.items() if path.is_file())

    # -- reading ----------------------------------------------------------------------------
    def read(self, sha: str) -> bytes:
        """The verified uncompressed bytes of ``sha``.

        Raises ``SourceError`` when no file holds it, ``IntegrityError`` when the file is
        truncated, not valid gzip, or its bytes hash to something else, ``LimitError`` when it
        inflates past ``max_inflated`` and ``SourceAccessError`` when it cannot be read.
        """
        check_sha256(sha)
        cached = self._verified.get(sha)
        if cached is not None:
            return cached
        data = self._load(sha, self._first(sha), keep=True)
        assert data is not None
        with self._lock:
            self._checked.add(sha)
            if len(data) + self._cached_bytes <= self.cache_limit and sha not in self._verified:
                self._verified[sha] = data
                self._cached_bytes += len(data)
        return data

    def check(self, sha: str) -> None:
        """Verify the pinned bytes of ``sha`` as :meth:`read` does, streaming, without keeping them
        (memory: one chunk); once per hash and process."""
        check_sha256(sha)
        if sha in self._checked or sha in self._verified:
            return
        self._load(sha, self._first(sha), keep=False)
        with self._lock:
            self._checked.add(sha)

    def _first(self, sha: str) -> Path:
        refused = self._refused.get(sha)
        if refused is not None:
            raise refused
        candidates = list(self._candidates(sha))
        if not candidates:
            raise SourceError(
                f"no pinned file for sha256 {sha} in {self.root}; run `bioevidence ground` "
                "to pin it or point --snapshot-dir at the folder that holds it",
                sha256=sha,
                path=str(self.root),
            )
        return candidates[0]

    def _load(self, sha: str, path: Path, *, keep: bool) -> bytes | None:
        try:
            data = self._stream(sha, path, self.max_inflated, keep=keep)
        except LimitError as exc:
            with self._lock:
                self._refused[sha] = exc
            raise
        return data

    @staticmethod
    def _stream(sha: str, path: Path, limit: int, *, keep: bool) -> bytes | None:
        """Read ``path`` (gunzipped when named ``.gz``) as a stream, hash it and compare with ``sha``."""
        try:
            handle = open(path, "rb")  # noqa: SIM115 - closed below, after the stream is drained
        except FileNotFoundError as exc:
            raise SourceError(f"{path.name} disappeared while being read; pin it again", sha256=sha,
                              path=str(path)) from exc
        except OSError as exc:
            raise SourceAccessError(
                f"pinned file {path.name} exists but cannot be read ({exc.strerror}); an operator must fix its "
                "permissions or restore it from a backup",
                sha256=sha, path=str(path), problem="unreadable") from exc
        digest = hashlib.sha256()
        out = bytearray() if keep else None
        with handle:
            chunks = iter_gunzip(handle, limit, name=path.name) if path.name.endswith(".gz") else \
                _iter_plain(handle, limit, name=path.name)
            try:
                for chunk in chunks:
                    digest.update(chunk)
                    if out is not None:
                        out += chunk
            except LimitError as exc:
                raise LimitError(f"pinned file {exc.message}", file=str(path), sha256=sha,
                                 problem="too_large") from exc
            except EOFError as exc:
                raise IntegrityError(
                    f"{path.name} is truncated gzip; delete it and pin it again (`bioevidence ground --refresh`)",
                    sha256=sha, path=str(path), problem="truncated") from exc
            except (gzip.BadGzipFile, zlib.error) as exc:
                raise IntegrityError(
                    f"{path.name} is not a valid gzip file ({exc}); delete it and pin it again",
                    sha256=sha, path=str(path), problem="corrupted") from exc
            except OSError as exc:
                raise SourceAccessError(
                    f"pinned file {path.name} cannot be read ({exc.strerror or exc}); an operator must restore it",
                    sha256=sha, path=str(path), problem="unreadable") from exc
        actual = digest.hexdigest()
        if actual != sha:
            raise IntegrityError(
                f"{path.name} holds bytes hashing to {actual}, not to its name; the file is corrupted: "
                "delete it and pin it again (bioevidence ground --refresh)",
                sha256=sha,
                path=str(path),
                problem="corrupted",
            )
        return bytes(out) if out is not None else None

    def forget(self) -> None:
        """Drop the in-process cache of verified bytes (the next read re-hashes)."""
        with self._lock:
            self._verified.clear()
            self._checked.clear()
            self._refused.clear()
            self._cached_bytes = 0

    # -- writing ----------------------------------------------------------------------------
    def put(self, data: bytes, ext: str = "", compress: bool = True) -> str:
        """Pin ``data`` and return its sha256; atomic and idempotent across writers."""
        if not isinstance(data, bytes | bytearray | memoryview):
            raise ConfigurationError(f"SnapshotStore.put takes bytes, not {type(data).__name__}")
        data = bytes(data)
        sha = sha256_hex(data)
        target = self.path_for(sha, ext, compress)
        existing = self.find(sha)
        if existing is not None:
            try:
                self._stream(sha, existing, max(len(data), 1), keep=False)
                return sha
            except (IntegrityError, LimitError):
                # A damaged copy is replaced by the good bytes we hold.
                if existing != target:
                    existing.unlink(missing_ok=True)
        payload = gzip.compress(data, compresslevel=6, mtime=0) if compress else data
        atomic_write_bytes(target, payload)  # temp file in the folder + os.replace: safe with several writers
        return sha

    # -- checking ---------------------------------------------------------------------------
    def verify(self, expected: list[str] | None = None) -> list[Problem]:
        """Re-hash every file (streaming: one chunk in memory); also report each hash in ``expected``
        that has no file."""
        problems: list[Problem] = []
        for sha, path in self.entries():
            try:
                self._stream(sha, path, self.max_inflated, keep=False)
            except IntegrityError as exc:
                kind = str(exc.context.get("problem", "corrupted"))
                problems.append(Problem(kind, sha, str(path), exc.message))
            except LimitError as exc:
                problems.append(Problem("too_large", sha, str(path), exc.message))
            except SourceAccessError as exc:
                problems.append(Problem("unreadable", sha, str(path), exc.message))
            except SourceError as exc:
                problems.append(Problem("missing", sha, str(path), exc.message))
        for sha in sorted(set(expected or ())):
            if check_sha256(sha) and self.find(sha) is None:
                problems.append(Problem("missing", sha, str(self.root / sha), "referenced but not in the store"))
        return problems


def home_store() -> Path | None:
    """The configured home snapshot folder, or ``None``: ``$BIOEVIDENCE_STORE``, else
    ``$BIOEVIDENCE_HOME/store`` when it holds a ``literature.json``. ``validate`` grounds
    publication evidence against it when no ``--snapshot-dir`` or profile grounder is given."""
    explicit = os.environ.get("BIOEVIDENCE_STORE")
    if explicit:
        return Path(explicit)
    home = os.environ.get("BIOEVIDENCE_HOME")
    if home and (Path(home) / "store" / "literature.json").is_file():
        return Path(home) / "store"
    return None
