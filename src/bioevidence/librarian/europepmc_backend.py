"""The live Europe PMC backend: the same :class:`~bioevidence.librarian.backend.Backend` interface
as the local index, through the pin stage's client (no network code here).

* ``search(query, limit)``: the query is validated with the shared field catalogue, then run
  with ``resultType=core`` and cursorMark paging until ``limit`` results (Europe PMC's relevance
  order becomes a rank score). Responses go through the HTTP client's cache.
* ``materialise(docs, folder)``: for one question's deduplicated pool, fetch open full text by
  PMCID in parallel (``{PMCID}/fullTextXML``; a 404 or any retrieval error falls back to the
  abstract), pin every byte used into the :class:`~bioevidence.sources.store.SnapshotStore`
  (full text once per PMCID; abstracts with the exact search page they came in), and index the
  pool as a small local index, so paragraph ranking, the judge and the evidence items work as
  for a local corpus and every item names the SHA-256 of the pinned bytes it was cut from.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import BioevidenceError, InputError
from .backend import Hit
from .corpus import Doc, abstract_passage, read_jats
from .index import DocInfo, LocalIndex, build_index
from .query import validate

__all__ = ["EuropePMCBackend"]


@dataclass
class _Found:
    info: DocInfo
    meta: Any  # WorkMetadata
    raw: dict[str, Any]
    page_sha: str


def _doc_id(meta: Any) -> str:
    if meta.pmid:
        return f"pmid:{meta.pmid}"
    if meta.pmcid:
        return f"pmcid:{meta.pmcid.upper()}"
    doi = meta.id_of("doi")
    return f"doi:{doi.value.lower()}" if doi else f"epmc:{meta.title[:40]}"


class EuropePMCBackend:
    """Search Europe PMC live (see module docstring); safe to call from several threads."""

    def __init__(self, client: Any, store: Any, *, page_size: int = 50, max_pages: int = 4,
                 synonym: bool = False, fetch_workers: int = 12,
                 progress: Callable[[str], None] | None = None) -> None:
        self.client = client  # bioevidence.sources.europepmc.EuropePMC
        self.store = store  # bioevidence.sources.store.SnapshotStore
        self.page_size = page_size
        self.max_pages = max_pages
        self.synonym = synonym
        self.fetch_workers = fetch_workers
        self.progress = progress or (lambda message: None)
        self._found: dict[str, _Found] = {}
        self._fulltext: dict[str, str | None] = {}  # PMCID -> pinned sha256 (None: no open full text)
        self._lock = threading.Lock()
        self.requests = {"search": 0, "fulltext": 0}

    @classmethod
    def from_env(cls, store_dir: Path | str, *, cache_dir: Path | str | None = None,
                 **kwargs: Any) -> EuropePMCBackend:
        """A backend over ``BIOEVIDENCE_EUROPEPMC_URL`` (default: the public service), pinning into
        ``store_dir`` and caching responses in ``cache_dir`` (default ``store_dir/http-cache``)."""
        from ..sources.europepmc import EuropePMC
        from ..sources.http import HttpClient, HttpConfig
        from ..sources.store import SnapshotStore

        store_dir = Path(store_dir)
        cache = Path(cache_dir) if cache_dir is not None else store_dir / "http-cache"
        http = HttpClient(HttpConfig.from_env(cache_dir=cache))
        return cls(EuropePMC(http), SnapshotStore(store_dir), **kwargs)

    # ------------------------------------------------------------ search
    def search(self, query: str, *, limit: int = 50) -> list[Hit]:
        """Validate and run ``query``; hits in Europe PMC relevance order (score 10 / (rank + 10))."""
        result = validate(query)
        if not result.valid:
            raise InputError(f"invalid query {query!r}: " + "; ".join(result.errors), query=query)
        size = max(1, min(self.page_size, limit))
        found = self.client.search(query, max_results=limit, max_pages=self.max_pages, page_size=size,
                                   result_type="core", synonym=self.synonym)
        with self._lock:
            self.requests["search"] += len(found.pages)
        hits: list[Hit] = []
        for page in found.pages:
            page_sha = self.store.put(page.raw, ".json")  # abstracts are cut from these exact bytes
            for meta, raw in zip(page.results, page.items, strict=True):  # items: checked by the client
                if len(hits) >= limit:
                    break
                hits.append(Hit(self._register(meta, raw, page_sha), 10.0 / (len(hits) + 10), query))
        return hits

    def _register(self, meta: Any, raw: dict[str, Any], page_sha: str) -> DocInfo:
        doc_id = _doc_id(meta)
        with self._lock:
            known = self._found.get(doc_id)
            if known is not None:
                return known.info
            doi = meta.id_of("doi")
            info = DocInfo(
                idx=len(self._found), doc_id=doc_id, pmid=meta.pmid, pmcid=meta.pmcid.upper() if meta.pmcid else None,
                doi=doi.value.lower() if doi else None, title=meta.title, authors=list(meta.authors),
                journal=meta.journal, year=meta.year, keywords=[], sha256=page_sha, source="europepmc",
                kind="abstract", retrieved_at=None, retracted=meta.retracted, concern=meta.expression_of_concern,
                notices=tuple(str(n) for n in (*meta.retraction_notices, *meta.concern_notices)))
            self._found[doc_id] = _Found(info, meta, raw, page_sha)
            return info

    # ------------------------------------------------------------ full text and the pool index
    @staticmethod
    def _has_free_text(raw: dict[str, Any]) -> bool:
        """Of a result object of the shape ``EUROPEPMC_RESULT`` (:mod:`bioevidence.sources.shapes`)."""
        urls = raw.get("fullTextUrlList", {}).get("fullTextUrl", [])
        return (raw.get("inEPMC") == "Y" or raw.get("isOpenAccess") == "Y"
                or bool(raw.get("fullTextIdList", {}).get("fullTextId"))
                or any(u.get("availabilityCode") == "OA" for u in urls))

    def _fulltext_sha(self, pmcid: str) -> str | None:
        """The pinned sha256 of the JATS of ``pmcid`` (fetched and pinned once), or ``None``."""
        with self._lock:
            if pmcid in self._fulltext:
                return self._fulltext[pmcid]
        try:
            response = self.client.fulltext_xml(pmcid)
            sha: str | None = self.store.put(response.content, ".xml")
        except BioevidenceError:
            sha = None  # 404 (no open full text) or a retrieval failure: the abstract is used
        with self._lock:
            self.requests["fulltext"] += 1
            self._fulltext[pmcid] = sha
        return sha

    def _doc(self, info: DocInfo) -> Doc | None:
        found = self._found[info.doc_id]
        if info.pmcid and self._has_free_text(found.raw):
            sha = self._fulltext_sha(info.pmcid)
            if sha is not None:
                try:
                    doc = read_jats(self.store.read(sha), source=f"europepmc:{info.pmcid}", sha256=sha)
                except InputError:
                    doc = None
                if doc is not None and doc.passages:
                    doc.doc_id, doc.title = info.doc_id, info.title or doc.title
                    doc.pmid, doc.pmcid, doc.doi = info.pmid, info.pmcid, info.doi or doc.doi
                    doc.authors = info.authors or doc.authors
                    doc.journal, doc.year = info.journal or doc.journal, info.year or doc.year
                    doc.retracted, doc.concern, doc.notices = info.retracted, info.concern, list(info.notices)
                    return doc
        abstract = found.meta.abstract
        if not abstract:
            return None
        doc = Doc(doc_id=info.doc_id, title=info.title, source="europepmc", sha256=found.page_sha, kind="abstract",
                  pmid=info.pmid, pmcid=info.pmcid, doi=info.doi, authors=list(info.authors), journal=info.journal,
                  year=info.year, retracted=info.retracted, concern=info.concern, notices=list(info.notices))
        doc.passages.append(abstract_passage(abstract))
        return doc

    def materialise(self, docs: Sequence[DocInfo], folder: Path | str) -> LocalIndex | None:
        """Index the pool ``docs`` (full text where open, else abstracts) into ``folder``."""
        self.progress(f"fetching full text · {len(docs)} papers")
        with ThreadPoolExecutor(max_workers=self.fetch_workers) as pool:
            built = [d for d in pool.map(self._doc, docs) if d is not None]
        if not built:
            return None
        build_index([], folder, docs=built)
        return LocalIndex(folder)
