"""Papers an agent found, into the corpus: ``pin`` (by identifier), ``add_to_index`` and ``corpus``.

* ``pin`` is ``bioevidence ground`` without a record: the same :class:`~bioevidence.sources.pin.Pinner`
  (NCBI E-utilities, Europe PMC, Crossref, with each service's rate limits), the same store and
  catalogue, then the gate reloaded so the next ``validate_record`` and ``get_passage`` see the work.
* ``add_to_index`` is ``bioevidence index build`` over the sources the index was built from plus the
  server's store (:func:`~bioevidence.librarian.index.build_index`): papers pinned since are indexed
  from their pinned bytes, so what ``ask`` returns verifies against the store. It builds beside the
  index and swaps the new files in (never rewriting a file another reader has mapped), under a lock.
* ``corpus`` says what the store and the index hold: counts, a page of works, one work by identifier.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, InputError, excerpt
from .services import Services

INDEX_LOCK = ".bioevidence-index.lock"


def _parsed(ident: str) -> Any:
    from ..sources.identifiers import parse_identifier

    parsed = parse_identifier(ident.strip())
    if parsed is None:
        raise InputError(f"{excerpt(ident)} is not a paper id; write pmid:N, pmcid:PMCN or doi:10.…")
    return parsed


def _pinned_as(work: Any) -> str:
    return "fulltext" if work.fulltext_sha256 else "abstract" if work.abstract_sha256 else "metadata"


def _identities(work: Any) -> set[str]:
    return {ident.key for ident in work.ids}


def _work_view(work: Any, store: Any, indexed: set[str] | None, titles: dict[str, str]) -> dict[str, Any]:
    """One catalogued work as the tools show it (its title from the index, else its pinned metadata)."""
    from ..errors import BioevidenceError
    from ..sources.metadata import parse_metadata

    title = next((titles[k] for k in _identities(work) if k in titles), None)
    year, exists = None, True
    if title is None:
        try:
            meta = parse_metadata(store.read(work.metadata_sha256), want=work.key)
            title, year, exists = meta.title or None, meta.year, meta.found
        except BioevidenceError:
            title = None  # bytes missing or changed: the gate reports it when a record cites the work
    out: dict[str, Any] = {"id": work.key, "ids": sorted(_identities(work) - {work.key}), "title": title,
                           "pinned": _pinned_as(work), "sha256": work.pinned_sha256,
                           "retrieved_at": str(work.extra.get("refreshed_at") or work.retrieved_at)}
    if year is not None:
        out["year"] = year
    if not exists:  # catalogued as `ground` does, with the resolver's answer that there is no such work
        out["not_found"] = True
    if indexed is not None:
        out["indexed"] = bool(_identities(work) & indexed)
    for flag in ("retracted", "expression_of_concern"):
        if work.extra.get(flag):
            out[flag] = True
    return out


@dataclass(frozen=True)
class Indexed:
    """The indexed papers: their identities (``pmid:…``, ``pmcid:…``, ``doi:…``, doc ids), titles and doc ids."""

    keys: set[str]
    titles: dict[str, str]
    doc_ids: list[str]


def _index_docs(services: Services) -> Indexed | None:
    """What the server's index holds, or ``None`` when it has no index (yet)."""
    from ..librarian.index import LocalIndex

    if services.config.index is None or not (Path(services.config.index) / "index.sqlite").is_file():
        return None
    index = LocalIndex(services.config.index)
    try:
        out = Indexed(set(), {}, [])
        for doc in index.docs:
            ids = {doc.doc_id, f"pmid:{doc.pmid}" if doc.pmid else "", f"pmcid:{(doc.pmcid or '').upper()}"
                   if doc.pmcid else "", f"doi:{doc.doi.lower()}" if doc.doi else ""} - {""}
            out.keys.update(ids)
            out.titles.update(dict.fromkeys(ids, doc.title))
            out.doc_ids.append(doc.doc_id)
        return out
    finally:
        index.close()


# -- pin ------------------------------------------------------------------------------------------

def pin(services: Services, works: list[str], refresh: bool = False) -> dict[str, Any]:
    """Pin works by identifier into the server's store (see module docstring)."""
    from ..sources.catalogue import Catalogue
    from ..sources.ground import GroundSummary
    from ..sources.identifiers import parse_identifier
    from ..sources.pin import Pinner
    from ..sources.store import SnapshotStore

    folder = services.store_dir("pin")
    wanted: dict[str, str] = {}  # one per work, however it is spelled (as Pinner.pin_many counts them)
    for asked in works:
        wanted.setdefault(str(parse_identifier(asked.strip()) or asked.strip()), asked.strip())
    with services.ground_lock:
        store, catalogue = SnapshotStore(folder), Catalogue.load(folder)
        pinner = Pinner(store, catalogue, services.http(), resolver=services.config.resolver)
        results = pinner.pin_many(list(wanted.values()), refresh=refresh)
        catalogue.save(folder)
        summary = GroundSummary()
        for result in results:
            summary.add(result)
        if summary.pinned or summary.no_fulltext or refresh:
            services.reload()  # the gate and get_passage see the new works from the next call on
    index = _index_docs(services)
    indexed, titles = (index.keys, index.titles) if index is not None else (None, {})
    shown = []
    for asked, result in zip(wanted.values(), results, strict=True):
        row: dict[str, Any] = {"asked": asked, "status": result.status}
        if result.error:
            row["error"] = result.error
        if result.work is not None and result.status != "not_found":
            row.update(_work_view(result.work, store, indexed, titles))
        shown.append(row)
    return {"works": shown, **summary.to_json(),
            "complete": all(r.status in ("pinned", "known", "no_fulltext", "kept") for r in results)}


# -- add_to_index ---------------------------------------------------------------------------------

def _sources(index_dir: Path, store: Path) -> list[Path]:
    from ..librarian.index import index_sources

    sources = []
    for path in index_sources(index_dir):
        if not path.exists():  # an index built before sources were recorded resolved may name them relatively
            raise ConfigurationError(f"the index {index_dir} was built from {excerpt(str(path))}, which this server "
                                     "cannot find; rebuild it with `bioevidence index build SOURCE... --index "
                                     f"{index_dir}` (sources are now recorded as absolute paths)")
        sources.append(path.resolve())
    if store.resolve() not in sources:
        sources.append(store.resolve())
    return sources


def _check_index_writable(index_dir: Path, sources: list[Path], services: Services) -> None:
    """The index is rewritten as a whole: never inside, or holding, what the server reads (``io``'s guard)."""
    from ..paths import refuse_output, refuse_overlap

    reads = [*sources, *(p for p in (services.config.workspace, services.config.queue) if p is not None)]
    refuse_output(index_dir, folders=[p for p in reads if p.is_dir()], what="--index")
    refuse_overlap(index_dir, reads, what="--index")
    if (index_dir / "dense").exists():
        raise ConfigurationError(f"the index {index_dir} has dense vectors, which add_to_index would leave stale; "
                                 "rebuild it with `bioevidence index build SOURCE... --index DIR --dense`")


def _swap_in(built: Path, index_dir: Path) -> None:
    """Move the new index's files into ``index_dir``: folders (the BM25 indexes) by rename, so a reader's
    mapped files stay valid until it reopens; files by ``os.replace``; ``index.sqlite`` last."""
    stamp = time.time_ns()
    old: list[Path] = []
    for child in sorted(built.iterdir(), key=lambda path: path.name == "index.sqlite"):
        target = index_dir / child.name
        if child.is_dir():
            if target.exists():
                old.append(target.rename(index_dir / f".{child.name}-old-{stamp}"))
            child.rename(target)
        else:
            child.replace(target)
    for folder in old:
        shutil.rmtree(folder, ignore_errors=True)


def add_to_index(services: Services) -> dict[str, Any]:
    """Index every work of the store the index does not hold yet (see module docstring)."""
    from ..io import folder_lock
    from ..librarian.index import build_index

    index_dir, store = services.index_dir(), services.store_dir("add_to_index")
    if not (store / "literature.json").is_file():
        raise InputError(f"the store {store} catalogues no work yet: pin works first (pin, ground or "
                         "`bioevidence ground`)")
    sources = _sources(index_dir, store)
    _check_index_writable(index_dir, sources, services)
    with services.ask_lock, folder_lock(index_dir, INDEX_LOCK, wait=False, what="the index"):
        before = _index_docs(services)
        built = index_dir / f".build-{time.time_ns()}"
        try:
            stats = build_index(sources, built)
            _swap_in(built, index_dir)
        finally:
            shutil.rmtree(built, ignore_errors=True)
        services.drop_librarian()
        after = _index_docs(services)
    assert after is not None
    known = set(before.doc_ids) if before is not None else set()
    return {"index": str(index_dir), "docs": stats.docs, "passages": stats.passages,
            "added": [d for d in after.doc_ids if d not in known], "sources": [str(s) for s in sources],
            "seconds": round(stats.seconds, 2)}


# -- corpus ---------------------------------------------------------------------------------------

def corpus(services: Services, work: str | None = None, offset: int = 0, limit: int = 20) -> dict[str, Any]:
    """What the store and the index hold: counts, a page of works (by key), or one work by identifier."""
    from ..sources.catalogue import Catalogue
    from ..sources.store import SnapshotStore

    folder = services.store_dir("corpus")
    catalogue, store = Catalogue.load(folder), SnapshotStore(folder)
    index = _index_docs(services)
    indexed, titles = (index.keys, index.titles) if index is not None else (None, {})
    works = sorted(catalogue, key=lambda w: w.key)
    counts: dict[str, Any] = {"works": len(works)}
    for kind in ("fulltext", "abstract", "metadata"):
        counts[kind] = sum(1 for w in works if _pinned_as(w) == kind)
    counts["retracted"] = sum(1 for w in works if w.extra.get("retracted"))
    if index is not None:
        counts["indexed_docs"] = len(index.doc_ids)
        counts["not_indexed"] = sum(1 for w in works if not _identities(w) & index.keys)
    out: dict[str, Any] = {"store": str(folder), "index": str(services.config.index) if services.config.index
                           else None, "counts": counts}
    if work is not None:
        found = catalogue.get(_parsed(work))
        out.update(found=found is not None, works=[_work_view(found, store, indexed, titles)] if found else [])
        return out
    page = works[offset:offset + limit]
    out.update(total=len(works), offset=offset, works=[_work_view(w, store, indexed, titles) for w in page])
    if offset + limit < len(works):
        out["next_offset"] = offset + limit
    return out

