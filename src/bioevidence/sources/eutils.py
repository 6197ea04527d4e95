"""NCBI E-utilities client: esearch, esummary (JSON), efetch pubmed XML and efetch db=pmc JATS.

Every request carries NCBI's ``tool`` and ``email`` (and ``api_key`` when ``NCBI_API_KEY`` is
set, which raises the rate limit from 3 to 10 requests per second). The URLs recorded in the
catalogue never contain the API key.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from ..errors import ConfigurationError, InputError
from .http import HttpClient, HttpResponse
from .shapes import ESUMMARY, validator
from .xmlsafe import parse_xml, text_of

__all__ = ["EUtils"]

JSON = ("application/json", "text/json")
XML = ("text/xml", "application/xml")


def _digits(value: str, what: str) -> str:
    value = value.strip()
    if value.upper().startswith("PMC"):
        value = value[3:]
    if not value.isdigit():
        raise ConfigurationError(f"{what} {value!r} must be digits")
    return value.lstrip("0") or "0"


class EUtils:
    """NCBI E-utilities over :class:`HttpClient` (base URL from ``BIOEVIDENCE_EUTILS_URL``)."""

    service = "eutils"

    def __init__(self, http: HttpClient) -> None:
        self.http = http
        self.base = http.config.url(self.service)

    def _params(self, params: dict[str, Any]) -> dict[str, Any]:
        out = dict(params)
        out["tool"] = self.http.config.tool
        if self.http.config.email:
            out["email"] = self.http.config.email
        return out

    def public_url(self, endpoint: str, params: dict[str, Any]) -> str:
        """The URL recorded in the catalogue (no API key)."""
        return f"{self.base}/{endpoint}?{urlencode(self._params(params))}"

    def _get(
        self, endpoint: str, params: dict[str, Any], accept: tuple[str, ...], validate: Any, refresh: bool
    ) -> HttpResponse:
        full = self._params(params)
        if self.http.config.ncbi_api_key:
            full["api_key"] = self.http.config.ncbi_api_key
        return self.http.get(
            f"{self.base}/{endpoint}",
            full,
            service=self.service,
            accept=accept,
            validate=validate,
            use_cache=not refresh,
        )

    def esearch(self, term: str, *, db: str = "pubmed", retmax: int = 100, refresh: bool = False) -> list[str]:
        """The ids matching ``term`` (XML response)."""
        response = self._get("esearch.fcgi", {"db": db, "term": term, "retmax": retmax}, XML, parse_xml, refresh)
        root = parse_xml(response.content, file=response.url)
        if root.tag != "eSearchResult":
            raise InputError(f"expected eSearchResult, got {root.tag}", file=response.url)
        return [text_of(e) for e in root.iterfind("IdList/Id")]

    def esummary_params(self, pmid: str) -> dict[str, Any]:
        return {"db": "pubmed", "id": _digits(pmid, "PMID"), "retmode": "json"}

    def esummary(self, pmid: str, *, refresh: bool = False) -> HttpResponse:
        """The esummary JSON of one PubMed record (the bytes pinned as its metadata), of the shape
        :data:`~bioevidence.sources.shapes.ESUMMARY` (else a ``RetrievalError``, reason ``malformed``)."""
        return self._get("esummary.fcgi", self.esummary_params(pmid), JSON, validator(ESUMMARY), refresh)

    def efetch_pubmed_params(self, pmid: str) -> dict[str, Any]:
        return {"db": "pubmed", "id": _digits(pmid, "PMID"), "retmode": "xml"}

    def efetch_pubmed(self, pmid: str, *, refresh: bool = False) -> HttpResponse:
        """PubMed XML (abstract, publication types, RetractionIn / ExpressionOfConcernIn)."""
        return self._get("efetch.fcgi", self.efetch_pubmed_params(pmid), XML, parse_xml, refresh)

    def efetch_pmc_params(self, pmcid: str) -> dict[str, Any]:
        return {"db": "pmc", "id": _digits(pmcid, "PMCID"), "retmode": "xml"}

    def efetch_pmc(self, pmcid: str, *, refresh: bool = False) -> HttpResponse:
        """PMC JATS XML of one article (``pmcid`` with or without the ``PMC`` prefix)."""
        return self._get("efetch.fcgi", self.efetch_pmc_params(pmcid), XML, parse_xml, refresh)
