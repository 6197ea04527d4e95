"""Pinned reference releases (ontologies, gene sets) declared in ``grounders/*.yaml``.

A declaration has exactly these keys::

    name, version, url, file, sha256, sha256_of, uncompressed_sha256, licence, format

``sha256`` is of the file exactly as stored (``sha256_of: compressed-file`` for ``.gz``,
``file`` for an uncompressed file); ``uncompressed_sha256`` is of the bytes inside, which is
what an upstream URL usually serves. Local copies live in ``$BIOEVIDENCE_HOME/releases``
(default ``~/.cache/bioevidence/releases``). :func:`release_path` is what grounders call: it
never downloads, and re-hashes the copy (once per process) before returning its path.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigurationError, InputError, IntegrityError, SourceError
from ..io import atomic_write_bytes, iter_gunzip, parse_yaml, read_limited
from ..limits import size_limit
from ..paths import safe_child
from .store import check_sha256

RELEASE_DEADLINE = 900.0

if TYPE_CHECKING:  # pragma: no cover
    from .http import HttpClient

__all__ = ["Release", "declarations_dir", "load_releases", "pull", "release_path", "releases_home"]

KEYS = frozenset({"name", "version", "url", "file", "sha256", "sha256_of", "uncompressed_sha256", "licence", "format"})
SHA256_OF = ("compressed-file", "file")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$")
MAX_RELEASE_BYTES = 2 * 1024 * 1024 * 1024


@dataclass(frozen=True)
class Release:
    name: str
    version: str
    url: str
    file: str
    sha256: str
    sha256_of: str
    uncompressed_sha256: str
    licence: str
    format: str
    declared_in: str = ""

    @property
    def compressed(self) -> bool:
        return self.sha256_of == "compressed-file"


def declarations_dir() -> Path:
    """``$BIOEVIDENCE_GROUNDERS_DIR``, else the packaged ``_data/grounders``, else the repo's ``grounders/``."""
    env = os.environ.get("BIOEVIDENCE_GROUNDERS_DIR")
    if env:
        return Path(env)
    packaged = Path(__file__).resolve().parents[1] / "_data" / "grounders"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "grounders"


def releases_home() -> Path:
    """Where verified local copies live: ``$BIOEVIDENCE_HOME/releases`` or ``~/.cache/bioevidence/releases``."""
    home = os.environ.get("BIOEVIDENCE_HOME")
    base = Path(home) if home else Path.home() / ".cache" / "bioevidence"
    return base / "releases"


def parse_release(data: bytes, *, file: str) -> Release:
    raw = parse_yaml(data, file=file, what="release declaration")
    if not isinstance(raw, dict):
        raise ConfigurationError(f"{file}: a release declaration is a mapping of {', '.join(sorted(KEYS))}")
    missing, unknown = KEYS - set(raw), set(raw) - KEYS
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(sorted(missing))}")
        if unknown:
            parts.append(f"unknown {', '.join(sorted(unknown))}")
        raise ConfigurationError(f"{file}: {'; '.join(parts)} (allowed keys: {', '.join(sorted(KEYS))})")
    values = {k: raw[k] for k in KEYS}
    for key, value in values.items():
        if not isinstance(value, str) or not value.strip():
            raise ConfigurationError(f'{file}: {key} must be a non-empty string (quote versions like "2026-06-08")')
    if not _NAME.match(values["name"]):
        raise ConfigurationError(f"{file}: name {values['name']!r} must be lower-case letters, digits, - or _")
    if not _FILE.match(values["file"]):
        raise ConfigurationError(f"{file}: file {values['file']!r} must be a plain file name")
    if values["sha256_of"] not in SHA256_OF:
        raise ConfigurationError(f"{file}: sha256_of must be one of {', '.join(SHA256_OF)}")
    if values["sha256_of"] == "compressed-file" and not values["file"].endswith(".gz"):
        raise ConfigurationError(f"{file}: sha256_of is compressed-file but file does not end in .gz")
    check_sha256(values["sha256"], what=f"{file}: sha256")
    check_sha256(values["uncompressed_sha256"], what=f"{file}: uncompressed_sha256")
    return Release(**values, declared_in=file)


def load_releases(folder: Path | None = None) -> dict[str, Release]:
    """Every declaration in ``folder`` (default :func:`declarations_dir`), by name."""
    folder = folder or declarations_dir()
    out: dict[str, Release] = {}
    for path in sorted(Path(folder).glob("*.yaml")):
        release = parse_release(read_limited(path), file=str(path))
        if release.name in out:
            raise ConfigurationError(
                f"release {release.name!r} is declared twice ({out[release.name].declared_in}, {path})"
            )
        out[release.name] = release
    return out


def get_release(name: str, folder: Path | None = None) -> Release:
    releases = load_releases(folder)
    if name not in releases:
        known = ", ".join(sorted(releases)) or "none"
        raise ConfigurationError(f"no release named {name!r} is declared (known: {known}); see grounders/*.yaml")
    return releases[name]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_bytes(release: Release, data: bytes, *, where: str) -> bool:
    """True when ``data`` is the stored form (``sha256``); False when it is the uncompressed form.
    Raises ``IntegrityError`` when it is neither."""
    digest = _sha(data)
    if digest == release.sha256:
        if release.compressed:
            inner = hashlib.sha256()
            try:  # streamed and capped: one chunk in memory (see bioevidence.limits, max_inflated)
                for chunk in iter_gunzip(io.BytesIO(data), size_limit("max_inflated"), name=where):
                    inner.update(chunk)
            except (EOFError, OSError, zlib.error) as exc:
                raise IntegrityError(f"{where} is not valid gzip", path=where) from exc
            if inner.hexdigest() != release.uncompressed_sha256:
                raise IntegrityError(f"{where}: uncompressed bytes do not match uncompressed_sha256", path=where)
        return True
    if digest == release.uncompressed_sha256:
        return False
    raise IntegrityError(
        f"{where} hashes to {digest}, not to the declared {release.name} {release.version} "
        f"({release.sha256} of the {release.sha256_of}); it is corrupted or a different release",
        sha256=release.sha256,
        path=where,
    )


_verified: dict[tuple[str, int, int], bool] = {}
_verified_lock = threading.Lock()


def _local_candidates(release: Release, home: Path) -> list[Path]:
    names = [release.file]
    if release.file.endswith(".gz"):
        names.append(release.file[:-3])
    return [safe_child(home, n) for n in names]


def release_path(name: str, *, home: Path | None = None, folder: Path | None = None) -> Path:
    """The verified local copy of release ``name``; ``SourceError`` naming the fix when absent."""
    release = get_release(name, folder)
    home = home or releases_home()
    for path in _local_candidates(release, home):
        if not path.is_file():
            continue
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        with _verified_lock:
            if key in _verified:
                return path
        check_bytes(release, read_limited(path, MAX_RELEASE_BYTES), where=str(path))
        with _verified_lock:
            _verified[key] = True
        return path
    raise SourceError(
        f"release {name} {release.version} is not pinned in {home}; run `bioevidence sources pull {name}` "
        f"(or `--from DIR` for a local mirror)",
        sha256=release.sha256,
        path=str(home),
    )


def pull(
    name: str,
    *,
    from_dir: Path | None = None,
    http: HttpClient | None = None,
    home: Path | None = None,
    folder: Path | None = None,
) -> Path:
    """Import release ``name`` from a local mirror (``from_dir``) or download it; verify; store atomically."""
    release = get_release(name, folder)
    home = home or releases_home()
    if from_dir is not None:
        # a mirror folder holding the pinned name (cl_2026-06-08.obo.gz) or the upstream one (cl.obo,
        # as downloaded), or that file itself; whichever it is, its bytes are checked against the pin
        upstream = release.url.rsplit("/", 1)[-1].split("?", 1)[0]
        names = [release.file, release.file.removesuffix(".gz"), upstream, f"{upstream}.gz"]
        given = Path(from_dir)
        if given.is_file():
            candidates = [given]
        else:
            candidates = [p for p in (safe_child(given, n) for n in dict.fromkeys(names) if n) if p.is_file()]
        if not candidates:
            raise InputError(f"{from_dir} holds none of {', '.join(dict.fromkeys(names))}; point --from at the "
                             "mirror folder or the downloaded file")
        source = candidates[0]
        data = read_limited(source, MAX_RELEASE_BYTES)
        where = str(source)
    else:
        from .http import HttpClient, HttpConfig

        # A release is large: 15 minutes unless BIOEVIDENCE_HTTP_DEADLINE says otherwise.
        deadline = None if os.environ.get("BIOEVIDENCE_HTTP_DEADLINE") else RELEASE_DEADLINE
        client = http or HttpClient(HttpConfig.from_env(max_bytes=MAX_RELEASE_BYTES, read_timeout=120.0,
                                                        deadline=deadline, cross_host_redirects=True))
        try:
            response = client.get(release.url, max_bytes=MAX_RELEASE_BYTES, use_cache=False)
        finally:
            if http is None:
                client.close()
        data, where = response.content, release.url
    stored_form = check_bytes(release, data, where=where)
    target = safe_child(home, release.file if stored_form else release.file.removesuffix(".gz"))
    atomic_write_bytes(target, data)
    return target
