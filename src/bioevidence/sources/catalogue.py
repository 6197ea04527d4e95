"""The reference catalogue ``literature.json``: which pinned bytes belong to which work.

Format (read and written exactly as the reference corpus has it, ``indent=2``, sorted keys,
trailing newline)::

    {"version": 1,
     "works": {"pmid:15696205": {"resolver": "ncbi",
                                  "metadata_sha256": "<sha>", "fulltext_sha256": "<sha>" | null,
                                  "abstract_sha256": "<sha>"       (optional),
                                  "license": "cc by" | "cc0" | "other" | null,
                                  "retrieved_at": "2026-09-29T01:12:31+00:00",
                                  "urls": ["https://…"],
                                  … optional extra keys (ids, retracted, refreshed_at, …)}}}

The catalogue only says which bytes to read; facts (title, retraction) are re-parsed from the
pinned bytes by :mod:`bioevidence.sources.metadata`. Every key is a canonical identifier
(:mod:`bioevidence.sources.identifiers`); a work may also list its other identifiers under the
optional ``ids`` key so it can be found by any of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..io import atomic_write_text, parse_json, read_limited
from .identifiers import PublicationId, parse_identifier
from .store import SHA256_RE

if TYPE_CHECKING:  # pragma: no cover
    from .store import SnapshotStore

CATALOGUE_NAME = "literature.json"
CATALOGUE_VERSION = 1
REQUIRED_KEYS = ("fulltext_sha256", "license", "metadata_sha256", "resolver", "retrieved_at", "urls")
RESOLVERS = ("ncbi", "europepmc", "crossref", "local")

__all__ = ["CATALOGUE_NAME", "Catalogue", "Work"]


@dataclass(frozen=True)
class Work:
    """One catalogue entry. ``extra`` holds optional keys beyond the reference format."""

    key: str
    resolver: str
    metadata_sha256: str
    fulltext_sha256: str | None
    license: str | None
    retrieved_at: str
    urls: tuple[str, ...] = ()
    abstract_sha256: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> PublicationId:
        parsed = parse_identifier(self.key)
        assert parsed is not None  # checked when the Work was built
        return parsed

    @property
    def ids(self) -> tuple[PublicationId, ...]:
        """The key and every identifier listed under ``extra['ids']``, canonical and unique."""
        out = [self.id]
        for raw in self.extra.get("ids", ()) or ():
            parsed = parse_identifier(raw)
            if parsed is not None and parsed not in out:
                out.append(parsed)
        return tuple(out)

    @property
    def pinned_sha256(self) -> str:
        """The hash a record pins: full text, else abstract, else metadata."""
        return self.fulltext_sha256 or self.abstract_sha256 or self.metadata_sha256

    @property
    def hashes(self) -> tuple[str, ...]:
        return tuple(h for h in (self.metadata_sha256, self.fulltext_sha256, self.abstract_sha256) if h)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.extra)
        out.update(
            {
                "fulltext_sha256": self.fulltext_sha256,
                "license": self.license,
                "metadata_sha256": self.metadata_sha256,
                "resolver": self.resolver,
                "retrieved_at": self.retrieved_at,
                "urls": list(self.urls),
            }
        )
        if self.abstract_sha256 is not None:
            out["abstract_sha256"] = self.abstract_sha256
        return out

    @classmethod
    def from_json(cls, key: str, value: Any, *, file: str | None = None) -> Work:
        where = f"works[{key!r}]"
        parsed = parse_identifier(key)
        if parsed is None or parsed.key != key:
            hint = f" (canonical form: {parsed.key!r})" if parsed else ""
            raise InputError(f"{where}: key is not a canonical pmid:/pmcid:/doi: identifier{hint}", file=file)
        if not isinstance(value, dict):
            raise InputError(f"{where} must be an object", file=file)
        missing = [k for k in REQUIRED_KEYS if k not in value]
        if missing:
            raise InputError(f"{where} lacks {', '.join(missing)}; re-run `bioevidence ground`", file=file)

        def sha(name: str, optional: bool) -> str | None:
            got = value.get(name)
            if got is None and optional:
                return None
            if not isinstance(got, str) or not SHA256_RE.match(got):
                raise InputError(f"{where}.{name} must be a 64-hex SHA-256, got {got!r}", file=file)
            return got

        def text(name: str, optional: bool) -> str | None:
            got = value.get(name)
            if got is None and optional:
                return None
            if not isinstance(got, str) or not got:
                raise InputError(f"{where}.{name} must be a non-empty string", file=file)
            return got

        urls = value["urls"]
        if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
            raise InputError(f"{where}.urls must be a list of strings", file=file)
        extra = {k: v for k, v in value.items() if k not in REQUIRED_KEYS and k != "abstract_sha256"}
        ids = extra.get("ids")
        if ids is not None and not (isinstance(ids, list) and all(isinstance(i, str) for i in ids)):
            raise InputError(f"{where}.ids must be a list of identifier strings", file=file)
        return cls(
            key=key,
            resolver=text("resolver", False) or "",
            metadata_sha256=sha("metadata_sha256", False) or "",
            fulltext_sha256=sha("fulltext_sha256", True),
            abstract_sha256=sha("abstract_sha256", True),
            license=text("license", True),
            retrieved_at=text("retrieved_at", False) or "",
            urls=tuple(urls),
            extra=extra,
        )


def catalogue_path(path: Path | str) -> Path:
    """The catalogue file ``path`` names: an existing file or a ``.json`` name is the file itself;
    anything else is a snapshot folder (existing or not: ``--snapshot-dir new/`` that pins nothing
    still makes ``new/`` a folder), whose catalogue is ``<folder>/literature.json``."""
    path = Path(path)
    if path.is_file() or (path.suffix.casefold() == ".json" and not path.is_dir()):
        return path
    return path / CATALOGUE_NAME


def _stamp(path: Path) -> tuple[int, int, int]:
    """What changes when anyone rewrites the file (atomic writes replace the inode)."""
    info = path.stat()
    return info.st_ino, info.st_mtime_ns, info.st_size


class Catalogue:
    """The works of one snapshot folder, looked up by any of their identifiers."""

    def __init__(self, works: Mapping[str, Work] | None = None, *, version: int = CATALOGUE_VERSION) -> None:
        self.version = version
        self._works: dict[str, Work] = {}
        self._alias: dict[PublicationId, str] = {}
        self._seen: dict[Path, tuple[int, int, int]] = {}  # file -> its stamp when this catalogue read or wrote it
        for work in (works or {}).values():
            self.add(work)

    # -- persistence ------------------------------------------------------------------------
    @classmethod
    def load(cls, path: Path | str) -> Catalogue:
        """Read a catalogue file (or ``<folder>/literature.json``); a missing file is an empty one."""
        path = catalogue_path(path)
        if not path.exists():
            return cls()
        stamp = _stamp(path)
        catalogue = cls.from_bytes(read_limited(path), file=str(path))
        catalogue._seen[path] = stamp
        return catalogue

    @classmethod
    def from_bytes(cls, data: bytes, *, file: str | None = None) -> Catalogue:
        raw = parse_json(data, file=file)
        if not isinstance(raw, dict) or set(raw) - {"version", "works"} or "works" not in raw:
            raise InputError('a catalogue is {"version": 1, "works": {...}} and nothing else', file=file)
        if raw.get("version") != CATALOGUE_VERSION:
            raise InputError(
                f"catalogue version {raw.get('version')!r} is not supported (expected {CATALOGUE_VERSION}); "
                "upgrade bioevidence",
                file=file,
            )
        if not isinstance(raw["works"], dict):
            raise InputError("catalogue 'works' must be an object keyed by identifier", file=file)
        return cls({k: Work.from_json(k, v, file=file) for k, v in raw["works"].items()})

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "works": {k: self._works[k].to_json() for k in sorted(self._works)}}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def save(self, path: Path | str) -> Path:
        """Write atomically (temporary file + rename) to :func:`catalogue_path` (a folder, made when
        missing, means ``<folder>/literature.json``).

        Two processes pinning into one folder both keep their works: under the folder's lock, the
        works the file holds that this catalogue lacks (another writer's, since this one last read or
        wrote it: the file's inode, time and size tell) are added first, then the union is written. A
        work is never dropped by a save, and a save with no other writer does not re-read the file
        (``kb build`` saves once per entry)."""
        from ..io import folder_lock

        path = catalogue_path(path)
        with folder_lock(path.parent, f".{path.name}.lock"):
            if path.is_file() and _stamp(path) != self._seen.get(path):  # another writer's since we looked
                for work in Catalogue.load(path):
                    if work.key not in self._works:
                        self.add(work)
            atomic_write_text(path, self.dumps())
            self._seen[path] = _stamp(path)
        return path

    # -- access -----------------------------------------------------------------------------
    def add(self, work: Work) -> None:
        """Add or replace ``work`` (keyed by ``work.key``); its other ids become aliases."""
        old = self._works.get(work.key)
        if old is not None:
            for ident in old.ids:
                if self._alias.get(ident) == work.key:
                    del self._alias[ident]
        self._works[work.key] = work
        for ident in work.ids:
            self._alias.setdefault(ident, work.key)
        self._alias[work.id] = work.key

    def learn_ids(self, store: SnapshotStore) -> int:
        """Let every work be found by the identifiers its own pinned metadata names.

        A catalogue written by bioai-evidence-validator 0.8.0 keys each work by its PMID alone; the
        DOI and PMCID are only in the pinned resolver bytes. Each work's metadata is re-read (its hash
        checked) and the identifiers it names that no other work holds become the work's ``ids``, so
        ``get("doi:…")`` finds a work pinned by PMID. A work whose bytes are missing or unreadable is
        left as it is. Returns how many identifiers were added."""
        from dataclasses import replace

        from ..errors import BioevidenceError
        from .metadata import parse_metadata

        added = 0
        for key in sorted(self._works):
            work = self._works[key]
            if not work.metadata_sha256:
                continue
            try:
                meta = parse_metadata(store.read(work.metadata_sha256), want=work.key)
            except (BioevidenceError, OSError, ValueError):
                continue
            if not meta.found or work.id not in meta.ids:
                continue  # bytes about another work are never a reason to file this one under its ids
            new = [i for i in meta.ids if i not in work.ids and self._alias.get(i, key) == key]
            if new:
                ids = [*(i.key for i in work.ids[1:]), *(i.key for i in new)]
                self.add(replace(work, extra={**work.extra, "ids": ids}))
                added += len(new)
        return added

    def get(self, ident: object) -> Work | None:
        """The work known by ``ident`` (any spelling of any of its identifiers), or ``None``."""
        parsed = parse_identifier(ident)
        if parsed is None:
            return None
        key = self._alias.get(parsed)
        return None if key is None else self._works.get(key)

    def __getitem__(self, ident: object) -> Work:
        work = self.get(ident)
        if work is None:
            raise KeyError(ident)
        return work

    def __contains__(self, ident: object) -> bool:
        return self.get(ident) is not None

    def __iter__(self) -> Iterator[Work]:
        return iter(self._works[k] for k in sorted(self._works))

    def __len__(self) -> int:
        return len(self._works)

    def hashes(self) -> set[str]:
        """Every hash the catalogue references."""
        return {h for work in self._works.values() for h in work.hashes}
