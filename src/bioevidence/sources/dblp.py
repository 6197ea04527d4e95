"""DBLP through its SPARQL endpoint (``https://sparql.dblp.org/sparql``, ``BIOEVIDENCE_DBLP_SPARQL_URL``).

:meth:`DBLP.search` is Perspicacité's KG2Bib query, improved (reference study §3 and §10.4):

* keywords: lower-cased words of the query minus stop words and words of ≤ 2 characters, at most 8;
* **score** = the number of keywords found in the title as **whole words** (a regular expression
  with non-alphanumeric boundaries: ``net`` does not match ``network``), at least 1;
* **citations** = OpenCitations citations in the dblp KG (``cito:hasCitedEntity`` of the
  publication's ``dblp:omid``), both **optional**: a work without an OMID or a DOI is kept;
* ordered by score, then citations, then year (newest first), then IRI; an optional year window;
* a second query fetches the authors in signature order (``dblp:hasSignature`` /
  ``dblp:signatureOrdinal``) and the venue, so the ``.bib`` has full author lists.

Requests are GETs with the SPARQL ``query`` parameter and ``Accept:
application/sparql-results+json`` (standard SPARQL 1.1 protocol, also served by QLever), through
:class:`~bioevidence.sources.http.HttpClient` (retries, deadline, politeness, cache).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError
from ..io import parse_json
from .http import HttpClient
from .shapes import DBLP_SPARQL, check, validator, whole_number, year

__all__ = ["DBLP", "DblpWork", "keywords", "search_query"]

STOP = frozenset([
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "into", "is", "it",
    "its", "of", "on", "or", "that", "the", "their", "this", "to", "was", "were", "with", "using", "based",
    "via", "towards", "toward", "new", "study", "analysis", "approach", "method", "methods"
])
PREFIXES = """PREFIX dblp: <https://dblp.org/rdf/schema#>
PREFIX cito: <http://purl.org/spar/cito/>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
"""
ACCEPT = ("application/sparql-results+json", "application/json")


@dataclass(frozen=True)
class DblpWork:
    iri: str
    title: str
    year: int | None
    doi: str | None
    venue: str
    entry_type: str  # article | inproceedings | misc ...
    score: int
    citations: int
    authors: tuple[str, ...] = ()


# A word: letters and digits of any script (NF-κB, TNF-α, Müller), hyphenated parts kept together;
# what search_query accepts (lower-cased).
KEYWORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")


def _kept(part: str, original: str) -> bool:
    """A part worth matching on: not a stop word, and three characters or more unless it is an acronym
    (``NK``), holds a digit (``p53``) or a letter outside ASCII (``κB``, ``α``)."""
    if part in STOP:
        return False
    return len(part) > 2 or (len(original) > 1 and original.isupper()) or any(
        c.isdigit() or not c.isascii() for c in part)


def keywords(query: str, limit: int = 8) -> list[str]:
    """The query's words to match titles on, lower-cased, in order, unique.

    A hyphenated word is split into its parts when every part is an ordinary word of three letters or
    more (``pre-trained`` -> ``pre``, ``trained``) and kept whole otherwise (``NF-κB``, ``TNF-α``,
    ``COVID-19``), so the short parts of a name are never dropped. Letters of any script count."""
    words: list[str] = []
    for found in KEYWORD.finditer(query):
        original = found.group()
        parts = original.split("-")
        if len(parts) > 1 and not all(len(p) > 2 and p.isascii() and p.isalpha() for p in parts):
            words.append(original.lower())
            continue
        words += [p.lower() for p in parts if _kept(p.lower(), p)]
    unique = list(dict.fromkeys(words))[:limit]
    return unique or list(dict.fromkeys(w.lower() for w in KEYWORD.findall(query)))[:3]


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def search_query(words: list[str], *, limit: int, years: tuple[int | None, int | None] = (None, None)) -> str:
    """The scoring query (see module docstring); ``words`` come from :func:`keywords` (letters and
    digits of any script, joined by hyphens: nothing a regular expression or a literal reads specially)."""
    if not words or not all(KEYWORD.fullmatch(w) and w == w.lower() for w in words):
        raise InputError("keywords must be lower-case letters and digits; pass the text through keywords()")
    hits = " + ".join(f'IF(REGEX(?lt, {_literal(f"(^|[^a-z0-9]){w}([^a-z0-9]|$)")}), 1, 0)' for w in words)
    lo, hi = years
    window = ""
    if lo is not None or hi is not None:
        y = "xsd:integer(SUBSTR(STR(?year), 1, 4))"  # dblp years are xsd:gYear, which does not cast
        window = f"FILTER({y} >= {int(lo or 1800)} && {y} <= {int(hi or 2100)})"
    return f"""{PREFIXES}SELECT ?publ ?title ?year ?doi ?type ?score (COUNT(DISTINCT ?citation) AS ?cites) WHERE {{
  ?publ rdf:type dblp:Publication ; dblp:title ?title .
  OPTIONAL {{ ?publ dblp:yearOfPublication ?year }}
  OPTIONAL {{ ?publ dblp:doi ?doi }}
  OPTIONAL {{ ?publ dblp:bibtexType ?type }}
  BIND(LCASE(STR(?title)) AS ?lt)
  BIND(({hits}) AS ?score)
  FILTER(?score >= 1)
  {window}
  OPTIONAL {{ ?publ dblp:omid ?omid . ?citation rdf:type cito:Citation ; cito:hasCitedEntity ?omid }}
}}
GROUP BY ?publ ?title ?year ?doi ?type ?score
ORDER BY DESC(?score) DESC(?cites) DESC(?year) ?publ
LIMIT {int(limit)}"""


def authors_query(iris: list[str]) -> str:
    values = " ".join(f"<{i}>" for i in iris if re.fullmatch(r"https?://[^<>\"\s{}|\\^`]+", i))
    return f"""{PREFIXES}SELECT ?publ ?ord ?name ?venue WHERE {{
  VALUES ?publ {{ {values} }}
  OPTIONAL {{ ?publ dblp:hasSignature ?sig . ?sig dblp:signatureOrdinal ?ord ; dblp:signatureDblpName ?name }}
  OPTIONAL {{ ?publ dblp:publishedIn ?venue }}
}}"""


Binding = dict[str, dict[str, str]]  # variable -> {"type": ..., "value": ...}, as checked by DBLP_SPARQL


def _value(binding: Binding, name: str) -> str | None:
    cell = binding.get(name)
    return None if cell is None else cell["value"]


def _number(binding: Binding, name: str) -> int:
    value = _value(binding, name)
    return 0 if value is None else whole_number(value, f"{name}.value")


_TYPES = {"Article": "article", "Inproceedings": "inproceedings", "Book": "book", "Incollection": "incollection",
          "Informal": "misc", "Editorship": "proceedings", "Data": "misc", "Reference": "misc"}


class DBLP:
    """The DBLP SPARQL service over :class:`HttpClient` (service ``dblp``)."""

    service = "dblp"

    def __init__(self, http: HttpClient) -> None:
        self.http = http
        self.url = http.config.url(self.service) + "/sparql"

    def select(self, query: str) -> list[Binding]:
        """The bindings of a SELECT query (SPARQL 1.1 JSON results of the shape
        :data:`~bioevidence.sources.shapes.DBLP_SPARQL`, the values of ``score``, ``cites`` and ``ord``
        whole numbers and of ``year`` years); any other answer is one ``RetrievalError`` (reason
        ``malformed``) naming the field."""
        response = self.http.get(self.url, {"query": query}, service=self.service, accept=ACCEPT,
                                 validate=validator(DBLP_SPARQL, file=self.url))
        doc = check(parse_json(response.content, file=self.url), DBLP_SPARQL, file=self.url)
        return list(doc["results"]["bindings"])

    def search(self, text: str, *, limit: int = 20, years: tuple[int | None, int | None] = (None, None)
               ) -> list[DblpWork]:
        words = keywords(text)
        rows = self.select(search_query(words, limit=limit, years=years))
        works: list[DblpWork] = []
        for b in rows:
            doi = _value(b, "doi")
            kind = (_value(b, "type") or "").rsplit("#", 1)[-1].rsplit("/", 1)[-1]
            works.append(DblpWork(
                iri=_value(b, "publ") or "", title=" ".join((_value(b, "title") or "").split()),
                year=year(_value(b, "year") or "", "year.value"),
                doi=re.sub(r"^https?://(dx\.)?doi\.org/", "", doi).lower() if doi else None, venue="",
                entry_type=_TYPES.get(kind, "misc"), score=_number(b, "score"), citations=_number(b, "cites")))
        if not works:
            return works
        people: dict[str, list[tuple[int, str]]] = {}
        venues: dict[str, str] = {}
        for b in self.select(authors_query([w.iri for w in works])):
            iri = _value(b, "publ") or ""
            if _value(b, "name"):
                people.setdefault(iri, []).append((_number(b, "ord"), _value(b, "name") or ""))
            if _value(b, "venue"):
                venues.setdefault(iri, _value(b, "venue") or "")
        out = []
        for w in works:
            names = tuple(dict.fromkeys(n for _, n in sorted(people.get(w.iri, []))))
            names = tuple(re.sub(r"\s+\d{4}$", "", n) for n in names)  # dblp's homonym numbers ("Wei Wang 0001")
            out.append(DblpWork(w.iri, w.title, w.year, w.doi, venues.get(w.iri, ""), w.entry_type, w.score,
                                w.citations, names))
        return out
