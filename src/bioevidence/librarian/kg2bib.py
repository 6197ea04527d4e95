"""KG2Bib: from keywords to a bibliography that ``kb build`` reads back.

``search_bib(keywords, source="dblp"|"europepmc")`` returns :class:`~bioevidence.sources.bibtex.BibEntry`
values; :func:`~bioevidence.sources.bibtex.to_bibtex` writes them. DBLP goes through
:class:`~bioevidence.sources.dblp.DBLP` (SPARQL, whole-word title scoring, OpenCitations counts,
authors in order); Europe PMC through the pin stage's :class:`~bioevidence.sources.europepmc.EuropePMC`
client (a validated query of the keywords, ``resultType=core``, so abstracts come along).
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigurationError
from ..sources.bibtex import BibEntry, cite_key
from ..sources.identifiers import parse_identifier

__all__ = ["europepmc_query", "search_bib"]


def europepmc_query(text: str, years: tuple[int | None, int | None] = (None, None)) -> str:
    """The keywords as a Europe PMC query (words only, implicit AND) with an optional year window."""
    from ..sources.dblp import keywords
    from .query import validate

    words = keywords(text)
    if not words:
        raise ConfigurationError("no usable keywords; give a few words of the topic")
    query = " ".join(f'"{w}"' if "-" in w else w for w in words)  # a hyphenated name is one phrase
    lo, hi = years
    if lo is not None or hi is not None:
        query = f"({query}) AND PUB_YEAR:[{lo or 1800} TO {hi or 2100}]"
    result = validate(query)
    if not result.valid:  # pragma: no cover - words and a range always validate
        raise ConfigurationError(f"keywords gave an invalid query: {'; '.join(result.errors)}")
    return query


def _unique(key: str, used: set[str]) -> str:
    out, n = key, 1
    while out in used:
        n += 1
        out = f"{key}{chr(96 + n)}" if n <= 26 else f"{key}_{n}"
    used.add(out)
    return out


def search_bib(keywords: str, *, source: str = "dblp", limit: int = 20,
               years: tuple[int | None, int | None] = (None, None), http: Any = None) -> list[BibEntry]:
    """Works matching ``keywords`` as bibliography entries (``http``: an ``HttpClient``; default
    one from the environment, closed after)."""
    from ..sources.http import HttpClient, HttpConfig

    own = http is None
    client = http or HttpClient(HttpConfig.from_env())
    used: set[str] = set()
    out: list[BibEntry] = []
    try:
        if source == "dblp":
            from ..sources.dblp import DBLP

            for w in DBLP(client).search(keywords, limit=limit, years=years):
                doi = parse_identifier(f"doi:{w.doi}") if w.doi else None
                key = _unique(cite_key(w.authors, w.year, w.iri.rsplit("/", 1)[-1]), used)
                out.append(BibEntry(key=key, entry_type=w.entry_type, title=w.title, authors=w.authors, year=w.year,
                                    journal=w.venue, ids=(doi,) if doi else (), url=w.iri,
                                    extra={"note": f"dblp score {w.score}, {w.citations} citations"}))
        elif source == "europepmc":
            from ..sources.europepmc import EuropePMC

            result = EuropePMC(client).search(europepmc_query(keywords, years), max_results=limit,
                                              page_size=min(100, limit))
            for m in result.results:
                ids = tuple(sorted(m.ids, key=lambda i: ("doi", "pmid", "pmcid", "ppr").index(i.scheme)
                                   if i.scheme in ("doi", "pmid", "pmcid") else 9))
                key = _unique(cite_key(list(m.authors), m.year, ids[0].key if ids else "work"), used)
                out.append(BibEntry(key=key, title=m.title, authors=tuple(m.authors), year=m.year, journal=m.journal,
                                    abstract=m.abstract or "", ids=tuple(i for i in ids if i.scheme in
                                                                         ("doi", "pmid", "pmcid"))))
        else:
            raise ConfigurationError(f"--source {source!r} is not dblp or europepmc")
    finally:
        if own:
            client.close()
    return out
