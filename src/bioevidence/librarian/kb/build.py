"""``kb build | merge | list | stats``: knowledge bases from bibliographies.

:func:`build_kb` runs the full-text ladder (:mod:`.acquire`) for every entry not already in the
ledger (resume), pins every tier into ``KB/snapshots``, then assembles: the entries' documents
into the local index (``KB/index``) and their sentence-aligned chunks into dense vectors
(``KB/index/dense``, encoded in batches by :func:`bioevidence.execute.map_batches` through
:func:`.vectors.build_dense`). Progress is reported through ``progress(event)`` dictionaries;
the CLI renders them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from ...sources.bibtex import read_bibliography
from ...sources.catalogue import CATALOGUE_NAME, Catalogue
from ...sources.store import SnapshotStore
from ..corpus import Doc, DocPassage, Unit, read_unit
from .layout import TIERS, EntryRecord, KnowledgeBase

__all__ = ["BuildReport", "build_kb", "kb_stats", "merge_kbs", "record_doc"]

Event = dict[str, Any]


@dataclass
class BuildReport:
    kb: str
    entries: list[EntryRecord]
    acquired: int  # entries run through the ladder by this build (the others were resumed)
    failed_blocks: list[tuple[str, int, str]]  # (file, line, reason) of unparsable BibTeX blocks
    docs: int
    chunks: int
    encoded: int
    seconds: float

    def tiers(self) -> dict[str, int]:
        return {t: sum(1 for e in self.entries if e.tier == t) for t in TIERS}

    def to_json(self) -> dict[str, Any]:
        return {"kb": self.kb, "entries": len(self.entries), "acquired": self.acquired, "tiers": self.tiers(),
                "docs": self.docs, "chunks": self.chunks, "encoded": self.encoded,
                "failed_blocks": [{"file": f, "line": n, "reason": r} for f, n, r in self.failed_blocks],
                "seconds": round(self.seconds, 2)}


def _text_passage(pid: str, kind: str, section: str, fields: tuple[str, ...], raw: str) -> DocPassage:
    """A passage of plain text as printed (whitespace collapsed), segmented as JATS passages are."""
    from ...text.jats_inline import match_form
    from ...text.tokens import plain_markers
    from ..corpus import passage_spans

    text = " ".join(raw.split())
    markers = tuple(plain_markers(text))
    return DocPassage(pid, kind, section, fields, text, passage_spans(text, markers), match_form(text, markers, ()),
                      (), "abstract" if kind == "abstract" else "")


def record_doc(record: EntryRecord, store: SnapshotStore, catalogue: Catalogue, folder: Path) -> Doc:
    """The document of one entry, from its pinned bytes (re-hashed on read)."""
    from ...text.normalize import normalize
    from ...text.plain import paragraphs

    doc: Doc | None = None
    if record.work and record.format != "text":  # a local text catalogued for the gate is read as text
        work = catalogue.get(record.work)
        if work is None:
            raise ConfigurationError(f"entry {record.key} names work {record.work}, which {folder} does not "
                                     "catalogue; rebuild the knowledge base")
        doc = read_unit(Unit("snapshot", str(folder), work=work), {str(folder): store})
    elif record.format == "jats":
        from ..corpus import read_jats

        doc = read_jats(store.read(record.sha256), source=str(folder / record.sha256), sha256=record.sha256)
    if doc is None:
        doc = Doc(doc_id="", title=normalize(record.title), source=str(folder / record.sha256), sha256=record.sha256,
                  kind="abstract")
        data = store.read(record.sha256)
        if record.format == "text":
            doc.kind = "fulltext"
            for n, para in enumerate(paragraphs(data.decode("utf-8"))):
                doc.passages.append(_text_passage(f"p{n + 1}", "paragraph", "Body", ("BODY",), para))
        elif record.format == "abstract-text":
            doc.passages.append(_text_passage("abstract", "abstract", "Abstract", ("ABSTRACT",), data.decode("utf-8")))
    ids = {i.split(":", 1)[0]: i.split(":", 1)[1] for i in reversed(record.ids)}
    doc.pmid = doc.pmid or ids.get("pmid")
    doc.pmcid = doc.pmcid or ids.get("pmcid")
    doc.doi = doc.doi or ids.get("doi")
    doc.title = doc.title or normalize(record.title)
    doc.authors = doc.authors or list(record.authors)
    doc.year = doc.year or record.year
    doc.journal = doc.journal or record.journal
    if not doc.doc_id or (not record.work and doc.doc_id == Path(doc.source).name.split(".")[0]):
        doc.doc_id = record.ids[0] if record.ids else f"bib:{record.key}"
    return doc


def _pinner_factory(store: SnapshotStore, catalogue: Catalogue, resolver: str) -> Callable[[], Any]:
    state: dict[str, Any] = {}

    def make() -> Any:
        if "pinner" not in state:
            from ...sources.http import HttpClient, HttpConfig
            from ...sources.pin import Pinner

            state["http"] = HttpClient(HttpConfig.from_env())
            state["pinner"] = Pinner(store, catalogue, state["http"], resolver=resolver)
        return state["pinner"]

    make.close = lambda: state["http"].close() if "http" in state else None  # type: ignore[attr-defined]
    return make


KB_LOCK = ".kb.lock"  # held by kb build and kb merge for the whole run


def build_kb(bibliographies: Sequence[Path | str], kb_dir: Path | str, *, snapshot_dir: Path | str | None = None,
             offline: bool = False, resolver: str = "europepmc", scheduler: Any = None, workers: int = 1,
             progress: Callable[[Event], None] | None = None, network: Callable[[], Any] | None = None,
             files_root: Path | str | None = None) -> BuildReport:
    """Add the entries of ``bibliographies`` (``.bib`` files or lists of identifiers) to the
    knowledge base in ``kb_dir`` and rebuild its indexes (see module docstring).

    ``snapshot_dir``: pinned works used first, with no network; ``offline``: no network at all
    (entries not pinned anywhere stop at their abstract or metadata). ``network`` replaces the
    default Pinner factory (tests pass one built on a loopback server's client). ``files_root``: the
    folder entries' ``file`` fields may name files in (default: each bibliography's own folder)."""
    from ...io import folder_lock

    with folder_lock(kb_dir, KB_LOCK, wait=False, what="the knowledge base"):  # one writer: never a lost entry
        return _build_kb(bibliographies, kb_dir, snapshot_dir=snapshot_dir, offline=offline, resolver=resolver,
                         scheduler=scheduler, workers=workers, progress=progress, network=network,
                         files_root=files_root)


def _build_kb(bibliographies: Sequence[Path | str], kb_dir: Path | str, *, snapshot_dir: Path | str | None,
              offline: bool, resolver: str, scheduler: Any, workers: int, progress: Callable[[Event], None] | None,
              network: Callable[[], Any] | None, files_root: Path | str | None) -> BuildReport:
    from .acquire import Acquirer, entry_fingerprint

    start = time.perf_counter()
    emit = progress or (lambda event: None)
    kb = KnowledgeBase(kb_dir)
    kb.root.mkdir(parents=True, exist_ok=True)
    store = SnapshotStore(kb.snapshots)
    catalogue = Catalogue.load(kb.snapshots / CATALOGUE_NAME)
    pinned = None
    if snapshot_dir is not None:
        folder = Path(snapshot_dir)
        if not (folder / CATALOGUE_NAME).is_file():
            raise ConfigurationError(f"--snapshot-dir {folder} holds no {CATALOGUE_NAME}; pin works with "
                                     "`bioevidence ground` or `bioevidence sources pin-local`")
        pinned = (SnapshotStore(folder), Catalogue.load(folder / CATALOGUE_NAME))
    factory = None if offline else network or _pinner_factory(store, catalogue, resolver)
    acquirer = Acquirer(store, catalogue, pinned=pinned, network=factory, resolver=resolver)
    done = kb.records()
    entries: list[tuple[str, Any]] = []
    failed: list[tuple[str, int, str]] = []
    for path in bibliographies:
        bib = read_bibliography(path, files_root=files_root)
        entries.extend((str(path), e) for e in bib.entries)
        failed.extend((str(path), line, reason) for line, reason in bib.failed)
    for source, line, reason in failed:
        emit({"event": "unparsable", "file": source, "line": line, "reason": reason})
    acquired = 0
    order: list[str] = []
    try:
        for n, (source, entry) in enumerate(entries, 1):
            order.append(entry.key)
            old = done.get(entry.key)
            if old is not None and old.fingerprint == entry_fingerprint(entry) and store.has(old.sha256):
                emit({"event": "entry", "n": n, "total": len(entries), "record": old, "resumed": True})
                continue
            record = acquirer.acquire(entry, source)
            catalogue.save(kb.snapshots / CATALOGUE_NAME)  # before the ledger: a resumed entry finds its work
            kb.append(record)
            done[record.key] = record
            acquired += 1
            emit({"event": "entry", "n": n, "total": len(entries), "record": record, "resumed": False})
    finally:
        close = getattr(factory, "close", None)
        if close is not None:
            close()
    keep = [done[k] for k in dict.fromkeys(order)] + [r for k, r in done.items() if k not in set(order)]
    kb.rewrite(keep)
    return _assemble(kb, keep, acquired, failed, start, scheduler, workers, emit)


def _assemble(kb: KnowledgeBase, records: list[EntryRecord], acquired: int, failed: list[tuple[str, int, str]],
              start: float, scheduler: Any, workers: int, emit: Callable[[Event], None]) -> BuildReport:
    from datetime import UTC, datetime

    from ..dense import DEFAULT_MODEL
    from ..index import build_index
    from .chunks import CHUNK_VERSION
    from .vectors import build_dense

    store = SnapshotStore(kb.snapshots)
    catalogue = Catalogue.load(kb.snapshots / CATALOGUE_NAME)
    emit({"event": "stage", "stage": "index", "entries": len(records)})
    docs = [record_doc(r, store, catalogue, kb.snapshots) for r in records]
    if not docs:
        raise ConfigurationError("the knowledge base has no entries; give a bibliography with entries")
    stats = build_index([], kb.index, docs=docs)

    def encoded(done: int, total: int) -> None:
        emit({"event": "encode", "done": done, "total": total})

    dense = build_dense(kb.index, cache=kb.cache, scheduler=scheduler, workers=workers, progress=encoded)
    kb.write_meta(model=DEFAULT_MODEL, chunker=CHUNK_VERSION, entries=len(records), docs=stats.docs,
                  chunks=dense.chunks, updated_at=datetime.now(UTC).replace(microsecond=0).isoformat())
    return BuildReport(str(kb.root), records, acquired, failed, stats.docs, dense.chunks, dense.encoded,
                       time.perf_counter() - start)


def merge_kbs(sources: Iterable[Path | str], kb_dir: Path | str, *, scheduler: Any = None,
              progress: Callable[[Event], None] | None = None) -> BuildReport:
    """One knowledge base holding the entries of ``sources`` (pinned bytes copied, vectors reused
    from their caches, duplicates by key kept once: the first source wins). A vector cache, or a
    file in it, that is a symlink (or leads out of its knowledge base) is not read."""
    from ...io import folder_lock

    with folder_lock(kb_dir, KB_LOCK, wait=False, what="the knowledge base"):
        return _merge_kbs(sources, kb_dir, scheduler=scheduler, progress=progress)


def _merge_kbs(sources: Iterable[Path | str], kb_dir: Path | str, *, scheduler: Any,
               progress: Callable[[Event], None] | None) -> BuildReport:
    from ...io import atomic_write_bytes

    start = time.perf_counter()
    out = KnowledgeBase(kb_dir)
    out.root.mkdir(parents=True, exist_ok=True)
    store = SnapshotStore(out.snapshots)
    catalogue = Catalogue.load(out.snapshots / CATALOGUE_NAME)
    records = out.records()
    for src in sources:
        kb = KnowledgeBase(src).require()
        if kb.root.resolve() == out.root.resolve():
            raise ConfigurationError(f"{src} is the output knowledge base; merge into a new folder")
        src_store = SnapshotStore(kb.snapshots)
        src_cat = Catalogue.load(kb.snapshots / CATALOGUE_NAME)
        for sha, path in src_store.entries():
            if not store.has(sha):
                ext = path.name[64:].removesuffix(".gz").lstrip(".")
                store.put(src_store.read(sha), ext=ext)
        for work in src_cat:
            if work.key not in catalogue:
                catalogue.add(work)
        for rec in kb:
            records.setdefault(rec.key, rec)
        if kb.cache.is_dir() and not kb.cache.is_symlink():
            from ...io import read_limited
            from ...paths import inside

            out.cache.mkdir(parents=True, exist_ok=True)
            for f in kb.cache.glob("*.npy"):
                # a cache file (or the folder) linked out of the source knowledge base is not copied
                if f.is_symlink() or not inside(f, kb.root) or (out.cache / f.name).exists():
                    continue
                atomic_write_bytes(out.cache / f.name, read_limited(f, within=kb.root))
    catalogue.save(out.snapshots / CATALOGUE_NAME)
    out.rewrite(records.values())
    return _assemble(out, list(records.values()), 0, [], start, scheduler, 1, progress or (lambda e: None))


def kb_stats(kb_dir: Path | str) -> dict[str, Any]:
    """Counts by tier and by route, documents, chunks, sizes on disk."""
    kb = KnowledgeBase(kb_dir).require()
    records = list(kb)
    size = sum(f.stat().st_size for f in kb.root.rglob("*") if f.is_file())
    via: dict[str, int] = {}
    for r in records:
        via[r.via] = via.get(r.via, 0) + 1
    meta = kb.meta()
    return {"kb": str(kb.root), "entries": len(records),
            "tiers": {t: sum(1 for r in records if r.tier == t) for t in TIERS}, "via": dict(sorted(via.items())),
            "docs": meta.get("docs"), "chunks": meta.get("chunks"), "model": meta.get("model"),
            "chunker": meta.get("chunker"), "bytes_on_disk": size, "updated_at": meta.get("updated_at")}
