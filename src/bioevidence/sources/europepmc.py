"""Europe PMC REST client: ``search`` (cursorMark paging) and ``{PMCID}/fullTextXML``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError
from ..io import parse_json
from .http import HttpClient, HttpResponse
from .identifiers import PublicationId
from .metadata import WorkMetadata, europepmc_result
from .shapes import EUROPEPMC, check, validator, whole_number
from .xmlsafe import parse_xml

__all__ = ["EuropePMC", "SearchPage", "SearchResult", "lookup_query"]

JSON = ("application/json",)
XML = ("application/xml", "text/xml")
MAX_PAGE_SIZE = 1000


@dataclass(frozen=True)
class SearchPage:
    """One page as received (``raw`` is the exact bytes) and parsed; ``items`` are the page's result
    objects as sent (of the shape :data:`~bioevidence.sources.shapes.EUROPEPMC_RESULT`), one per result."""

    raw: bytes
    url: str
    hit_count: int
    cursor: str
    next_cursor: str | None
    results: tuple[WorkMetadata, ...]
    items: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class SearchResult:
    hit_count: int
    results: tuple[WorkMetadata, ...]
    pages: tuple[SearchPage, ...]
    exhausted: bool


def lookup_query(ident: PublicationId) -> str:
    """The Europe PMC query that finds exactly one work by identifier."""
    if ident.scheme == "pmid":
        return f"EXT_ID:{ident.value} AND SRC:MED"
    if ident.scheme == "pmcid":
        return f"PMCID:{ident.value}"
    return f'DOI:"{ident.value}"'


def _page(raw: bytes, url: str, cursor: str) -> SearchPage:
    """The page of ``raw``, checked against :data:`~bioevidence.sources.shapes.EUROPEPMC` (an ``InputError``
    naming the field otherwise: a cached answer is checked too)."""
    doc = check(parse_json(raw, file=url), EUROPEPMC, file=url)
    items = tuple(doc["resultList"]["result"])
    hit_count = whole_number(doc.get("hitCount", 0), "hitCount")
    return SearchPage(raw, url, hit_count, cursor, doc.get("nextCursorMark") or None,
                      tuple(europepmc_result(r) for r in items), items)


class EuropePMC:
    """Europe PMC over :class:`HttpClient` (base URL from ``BIOEVIDENCE_EUROPEPMC_URL``)."""

    service = "europepmc"

    def __init__(self, http: HttpClient) -> None:
        self.http = http
        self.base = http.config.url(self.service)

    def _get(
        self, path: str, params: dict[str, Any], accept: tuple[str, ...], validate: Any, refresh: bool
    ) -> HttpResponse:
        return self.http.get(
            f"{self.base}/{path}", params, service=self.service, accept=accept, validate=validate, use_cache=not refresh
        )

    def search_page(
        self,
        query: str,
        *,
        cursor: str = "*",
        page_size: int = 100,
        result_type: str = "core",
        synonym: bool = False,
        sort: str | None = None,
        refresh: bool = False,
    ) -> SearchPage:
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise ConfigurationError(f"page_size must be 1..{MAX_PAGE_SIZE}, got {page_size}")
        params: dict[str, Any] = {
            "query": query,
            "format": "json",
            "resultType": result_type,
            "pageSize": page_size,
            "cursorMark": cursor,
            "synonym": "true" if synonym else "false",
        }
        if sort:
            params["sort"] = sort
        response = self._get("search", params, JSON, validator(EUROPEPMC), refresh)
        return _page(response.content, response.url, cursor)

    def iter_pages(self, query: str, *, max_pages: int | None = None, **kwargs: Any) -> Iterator[SearchPage]:
        """Pages following ``nextCursorMark`` until it stops changing, a page is empty, or ``max_pages``."""
        cursor = "*"
        seen: set[str] = set()
        count = 0
        while max_pages is None or count < max_pages:
            page = self.search_page(query, cursor=cursor, **kwargs)
            count += 1
            yield page
            seen.add(cursor)
            if not page.results or not page.next_cursor or page.next_cursor in seen:
                return
            cursor = page.next_cursor

    def search(
        self, query: str, *, max_results: int | None = None, max_pages: int | None = None, **kwargs: Any
    ) -> SearchResult:
        """All results of ``query`` (up to ``max_results`` / ``max_pages``)."""
        pages: list[SearchPage] = []
        results: list[WorkMetadata] = []
        exhausted = False
        hit_count = 0
        for page in self.iter_pages(query, max_pages=max_pages, **kwargs):
            pages.append(page)
            hit_count = page.hit_count
            results.extend(page.results)
            if max_results is not None and len(results) >= max_results:
                results = results[:max_results]
                break
        else:
            exhausted = not pages or not pages[-1].results or not pages[-1].next_cursor
            if pages and pages[-1].next_cursor and pages[-1].next_cursor == pages[-1].cursor:
                exhausted = True
        return SearchResult(hit_count, tuple(results), tuple(pages), exhausted)

    def lookup(self, ident: PublicationId, *, refresh: bool = False) -> SearchPage:
        """The ``resultType=core`` search page for one identifier (pinned as the work's metadata)."""
        return self.search_page(lookup_query(ident), page_size=25, refresh=refresh)

    def fulltext_xml(self, pmcid: str, *, refresh: bool = False) -> HttpResponse:
        """The JATS XML of an open-access article; 404 means no open full text."""
        if not pmcid.upper().startswith("PMC") or not pmcid[3:].isdigit():
            raise ConfigurationError(f"{pmcid!r} is not a PMCID like 'PMC1234567'")
        return self._get(f"{pmcid.upper()}/fullTextXML", {}, XML, parse_xml, refresh)
