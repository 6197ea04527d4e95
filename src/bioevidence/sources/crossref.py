"""Crossref REST client: ``/works/{DOI}`` (title, ``update-to`` / ``updated-by`` retractions).

Used for DOIs that Europe PMC and NCBI do not know. The contact email goes in ``mailto`` (and
the User-Agent) so requests join Crossref's polite pool.
"""

from __future__ import annotations

from urllib.parse import quote

from .http import HttpClient, HttpResponse
from .shapes import CROSSREF, validator

__all__ = ["Crossref"]

JSON = ("application/json",)


class Crossref:
    """Crossref over :class:`HttpClient` (base URL from ``BIOEVIDENCE_CROSSREF_URL``)."""

    service = "crossref"

    def __init__(self, http: HttpClient) -> None:
        self.http = http
        self.base = http.config.url(self.service)

    def work_url(self, doi: str) -> str:
        return f"{self.base}/works/{quote(doi, safe='/();:-._')}"

    def work(self, doi: str, *, refresh: bool = False) -> HttpResponse:
        """The work JSON for ``doi`` (404 when Crossref does not know it), of the shape
        :data:`~bioevidence.sources.shapes.CROSSREF` (else a ``RetrievalError``, reason ``malformed``)."""
        params = {"mailto": self.http.config.email} if self.http.config.email else {}
        return self.http.get(
            self.work_url(doi), params, service=self.service, accept=JSON, validate=validator(CROSSREF),
            use_cache=not refresh
        )
