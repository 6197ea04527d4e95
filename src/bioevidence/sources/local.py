"""Pin local JATS files into a snapshot folder: the file is its own metadata (resolver ``local``).

``pin_local(paths, folder)`` stores each file by SHA-256 (gzip, ``mtime=0``), adds a catalogue
work keyed by the article's first identifier (doi, else pmid, else pmcid, from its own
``article-id`` elements) with every identifier listed under ``ids``, and saves
``literature.json`` atomically. No network. A file with no identifier cannot be cited and is an
``InputError`` naming it. What a resolver would add later (a retraction after the file was
written) is not in the file: pin such works with ``bioevidence ground`` instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from ..errors import InputError
from ..io import gunzip_limited, read_limited
from ..limits import size_limit
from .catalogue import CATALOGUE_NAME, Catalogue, Work
from .jats_meta import parse_jats_metadata
from .pin import jats_access
from .store import SnapshotStore

__all__ = ["pin_local"]


def pin_local(paths: Iterable[Path | str], folder: Path | str, *, now: str | None = None) -> list[Work]:
    """Pin JATS files (plain or ``.gz``) into ``folder``; returns the works, in input order."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    store = SnapshotStore(folder)
    catalogue = Catalogue.load(folder / CATALOGUE_NAME)
    when = now or datetime.now(UTC).replace(microsecond=0).isoformat()
    works: list[Work] = []
    for raw_path in paths:
        path = Path(raw_path)
        data = read_limited(path)
        if path.name.endswith(".gz"):
            data = gunzip_limited(data, size_limit("max_inflated"), name=str(path))  # the one capped reader
        meta = parse_jats_metadata(data, file=str(path))
        order = sorted(meta.ids, key=lambda i: ("doi", "pmid", "pmcid").index(i.scheme))
        if not order:
            raise InputError("the JATS file has no article-id (doi, pmid or pmcid), so no record can cite it",
                             file=str(path))
        sha = store.put(data, ext="xml")
        _open, licence = jats_access(data)
        work = Work(key=order[0].key, resolver="local", metadata_sha256=sha, fulltext_sha256=sha, license=licence,
                    retrieved_at=when, urls=(path.resolve().as_uri(),),
                    extra={"ids": [i.key for i in order[1:]]} if len(order) > 1 else {})
        catalogue.add(work)
        works.append(work)
    catalogue.save(folder / CATALOGUE_NAME)
    return works
