"""Pinning works: resolve an identifier, pin metadata and open full text, update the catalogue.

Resolvers:

* ``ncbi`` (the reference default, for PMIDs): esummary JSON is the metadata; when it names a
  PMCID, ``efetch db=pmc`` JATS is the full text if it has a ``body`` and no
  ``restricted-by``; otherwise the PubMed efetch XML is pinned as the abstract.
* ``europepmc`` (PMCIDs, DOIs, or PMIDs on request): the ``resultType=core`` search page is
  the metadata; ``fullTextXML`` is the full text when the work is open access with a PMCID.
* ``crossref``: DOIs Europe PMC does not know; the work JSON is the metadata.

The record pins the full-text hash, else the abstract hash, else the metadata hash.
:class:`Pinner` is thread-safe; :meth:`Pinner.pin_many` runs works concurrently (the HTTP
layer enforces each service's rate and concurrency limits) and reports progress through a
callback.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..errors import BioevidenceError, ConfigurationError, RetrievalError
from .catalogue import Catalogue, Work
from .identifiers import PublicationId, parse_identifier
from .metadata import parse_metadata
from .store import SnapshotStore

if TYPE_CHECKING:  # pragma: no cover
    from .http import HttpClient

__all__ = ["PinResult", "Pinner", "jats_access"]

RESOLVERS = ("ncbi", "europepmc")


@dataclass(frozen=True)
class PinResult:
    """What happened to one identifier: ``status`` is ``pinned``, ``known`` (already in the
    catalogue), ``no_fulltext``, ``not_found``, ``kept`` (a refresh answered worse than the pin, which
    stays; ``error`` says how) or ``failed`` (with ``error``)."""

    ident: str
    status: str
    work: Work | None = None
    error: str | None = None


def jats_access(data: bytes) -> tuple[bool, str | None]:
    """``(open, licence)`` of a JATS article: open when it has a ``body`` and no ``restricted-by``;
    licence ``cc0``, ``cc by`` (unrestricted CC BY only) or ``other`` from the licence elements."""
    from .xmlsafe import parse_xml

    root = parse_xml(data)
    has_body = any(el.tag == "body" for el in root.iter("body"))
    restricted = any(True for _ in root.iter("restricted-by"))
    hrefs: list[str] = []
    for lic in root.iter("license"):
        for child in lic.iter():
            for raw_key, value in child.attrib.items():
                key = raw_key if isinstance(raw_key, str) else raw_key.decode()
                if key.endswith("href") or key in ("license-type", "content-type"):
                    hrefs.append(str(value).lower().strip())
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag.endswith("license_ref") and child.text:
                hrefs.append(child.text.lower().strip())
    hrefs = [h.replace("cc0license", "cc0").replace("ccbylicense", "cc by") for h in hrefs]
    licence: str | None = None
    if any("publicdomain/zero" in h or h == "cc0" for h in hrefs):
        licence = "cc0"
    elif any("creativecommons.org/licenses/by/" in h or h in ("cc by", "cc-by") for h in hrefs):
        licence = "cc by"
    elif hrefs or any(True for _ in root.iter("license")):
        licence = "other"
    return has_body and not restricted, licence


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


class Pinner:
    """Pins works into ``store`` and records them in ``catalogue`` (see module docstring)."""

    def __init__(
        self,
        store: SnapshotStore,
        catalogue: Catalogue,
        http: HttpClient,
        *,
        resolver: str = "ncbi",
        clock: Callable[[], str] = _now,
    ) -> None:
        if resolver not in RESOLVERS:
            raise ConfigurationError(f"resolver must be one of {', '.join(RESOLVERS)}, got {resolver!r}")
        from .crossref import Crossref
        from .europepmc import EuropePMC
        from .eutils import EUtils

        self.store, self.catalogue, self.http = store, catalogue, http
        self.resolver = resolver
        self.clock = clock
        self.eutils, self.europepmc, self.crossref = EUtils(http), EuropePMC(http), Crossref(http)
        self._lock = threading.Lock()

    # -- one work ---------------------------------------------------------------------------
    def pin(self, ident: object, *, refresh: bool = False) -> PinResult:
        parsed = parse_identifier(ident)
        if parsed is None:
            return PinResult(str(ident), "failed", error=f"{ident!r} is not a pmid:, pmcid: or doi: identifier")
        with self._lock:
            known = self.catalogue.get(parsed)
        if known is not None and not refresh and all(self.store.has(h) for h in known.hashes):
            return PinResult(parsed.key, "known", known)
        try:
            if parsed.scheme == "pmid" and self.resolver == "ncbi":
                work = self._pin_ncbi(parsed, refresh)
            else:
                work = self._pin_europepmc(parsed, refresh)
        except BioevidenceError as exc:
            return PinResult(parsed.key, "failed", error=exc.message)
        meta = parse_metadata(self.store.read(work.metadata_sha256), want=work.key)
        if known is not None and refresh:
            worse = self._worse(known, work, meta.found)
            if worse is not None:  # the new bytes stay in the store; the catalogue keeps the earlier pin
                return PinResult(parsed.key, "kept", known,
                                 error=f"the refresh answer {worse}; kept the pin retrieved {known.retrieved_at}")
            extra = dict(work.extra)
            extra["refreshed_at"] = work.retrieved_at
            first = known.extra.get("first_retrieved_at", known.retrieved_at)
            extra["first_retrieved_at"] = first
            work = replace(work, extra=extra)
        with self._lock:
            self.catalogue.add(work)
        if not meta.found:
            return PinResult(parsed.key, "not_found", work, error=meta.error)
        return PinResult(parsed.key, "pinned" if work.fulltext_sha256 else "no_fulltext", work)

    def _worse(self, known: Work, new: Work, found: bool) -> str | None:
        """Why ``new`` (a refresh's answer) is worse than the pinned ``known``, or ``None`` when it is
        complete and valid: a refresh switches only to an answer that keeps what the pin had."""
        old_found = self.store.has(known.metadata_sha256) and parse_metadata(
            self.store.read(known.metadata_sha256), want=known.key).found
        if old_found and not found:
            return "does not describe the work (e.g. 'cannot get document summary')"
        if known.fulltext_sha256 and not new.fulltext_sha256:
            return "has no open full text, which the pin has"
        if known.abstract_sha256 and not (new.fulltext_sha256 or new.abstract_sha256):
            return "has no abstract, which the pin has"
        return None

    def _extra(self, key: PublicationId, ids: Iterable[PublicationId], meta: Any) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        others = [i.key for i in ids if i != key]
        if others:
            extra["ids"] = others
        if meta.retracted:
            extra["retracted"] = True
        if meta.expression_of_concern:
            extra["expression_of_concern"] = [str(n) for n in meta.concern_notices] or True
        return extra

    def _pin_ncbi(self, ident: PublicationId, refresh: bool) -> Work:
        retrieved = self.clock()
        summary = self.eutils.esummary(ident.value, refresh=refresh)
        urls = [self.eutils.public_url("esummary.fcgi", self.eutils.esummary_params(ident.value))]
        meta = parse_metadata(summary.content, want=ident)  # checked before pinned (a cached answer too)
        metadata_sha = self.store.put(summary.content, ext="json")
        fulltext_sha: str | None = None
        abstract_sha: str | None = None
        licence: str | None = None
        if meta.found and meta.pmcid:
            try:
                jats = self.eutils.efetch_pmc(meta.pmcid, refresh=refresh)
            except RetrievalError as exc:
                if exc.status != 404:
                    raise
            else:
                is_open, licence = jats_access(jats.content)
                if is_open:
                    fulltext_sha = self.store.put(jats.content, ext="xml")
                    urls.append(self.eutils.public_url("efetch.fcgi", self.eutils.efetch_pmc_params(meta.pmcid)))
                else:
                    licence = None
        if meta.found and fulltext_sha is None:
            pubmed = self.eutils.efetch_pubmed(ident.value, refresh=refresh)
            abstract = parse_metadata(pubmed.content, want=ident)
            if abstract.abstract:
                abstract_sha = self.store.put(pubmed.content, ext="xml")
                urls.append(self.eutils.public_url("efetch.fcgi", self.eutils.efetch_pubmed_params(ident.value)))
            meta = abstract if abstract.found else meta
        return Work(
            key=ident.key,
            resolver="ncbi",
            metadata_sha256=metadata_sha,
            fulltext_sha256=fulltext_sha,
            abstract_sha256=abstract_sha,
            license=licence,
            retrieved_at=retrieved,
            urls=tuple(urls),
            extra=self._extra(ident, meta.ids, meta),
        )

    def _pin_europepmc(self, ident: PublicationId, refresh: bool) -> Work:
        retrieved = self.clock()
        page = self.europepmc.lookup(ident, refresh=refresh)
        meta = parse_metadata(page.raw, want=ident)
        if not meta.found and ident.scheme == "doi":
            return self._pin_crossref(ident, refresh, retrieved)
        metadata_sha = self.store.put(page.raw, ext="json")
        urls = [page.url]
        fulltext_sha: str | None = None
        licence = meta.license
        abstract_sha: str | None = None
        if meta.found and meta.open_access and meta.pmcid:
            try:
                jats = self.europepmc.fulltext_xml(meta.pmcid, refresh=refresh)
            except RetrievalError as exc:
                if exc.status != 404:
                    raise
            else:
                is_open, jats_licence = jats_access(jats.content)
                if is_open:
                    fulltext_sha = self.store.put(jats.content, ext="xml")
                    urls.append(jats.url)
                    licence = jats_licence or licence
        return Work(
            key=ident.key,
            resolver="europepmc",
            metadata_sha256=metadata_sha,
            fulltext_sha256=fulltext_sha,
            abstract_sha256=abstract_sha,
            license=licence if fulltext_sha else None,
            retrieved_at=retrieved,
            urls=tuple(urls),
            extra=self._extra(ident, meta.ids, meta),
        )

    def _pin_crossref(self, ident: PublicationId, refresh: bool, retrieved: str) -> Work:
        response = self.crossref.work(ident.value, refresh=refresh)
        meta = parse_metadata(response.content, want=ident)
        return Work(
            key=ident.key,
            resolver="crossref",
            metadata_sha256=self.store.put(response.content, ext="json"),
            fulltext_sha256=None,
            license=None,
            retrieved_at=retrieved,
            urls=(response.url,),
            extra=self._extra(ident, meta.ids, meta),
        )

    # -- many works -------------------------------------------------------------------------
    def pin_many(
        self,
        idents: Iterable[object],
        *,
        refresh: bool = False,
        workers: int = 8,
        progress: Callable[[PinResult], None] | None = None,
    ) -> list[PinResult]:
        """Pin every identifier (duplicates once), in input order; ``progress`` sees each result."""
        unique: list[object] = []
        seen: set[str] = set()
        for ident in idents:
            key = str(parse_identifier(ident) or ident)
            if key not in seen:
                seen.add(key)
                unique.append(ident)

        def run(ident: object) -> PinResult:
            result = self.pin(ident, refresh=refresh)
            if progress is not None:
                progress(result)
            return result

        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            return list(pool.map(run, unique))
