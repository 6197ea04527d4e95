"""Facts about a work, re-parsed from pinned resolver bytes (never from the catalogue).

:func:`parse_metadata` takes the bytes as pinned and recognises:

* NCBI esummary JSON (``{"header": {"type": "esummary"}, "result": {...}}``);
* Europe PMC search JSON (a whole ``/search`` page, ``resultType=core`` or ``lite``) or a single
  result object from it;
* Crossref work JSON (``{"message-type": "work", "message": {...}}``) or its bare ``message``;
* PubMed efetch XML (``<PubmedArticleSet>``), parsed by :mod:`bioevidence.sources.pubmed`;
* a JATS article (resolver ``local``: a file pinned as its own metadata), by
  :mod:`bioevidence.sources.jats_meta`.

JSON is checked against the service's shape (:mod:`bioevidence.sources.shapes`) first: a field of
the wrong type is one ``InputError`` naming it, and the parsers below read the checked types.

Retraction rules follow the reference (validator §3.3): NCBI publication type "Retracted
Publication" or a "Retraction in" reference; Europe PMC publication type "retracted
publication" or a comment/correction whose type starts with "retraction in"; Crossref any
``updated-by``/``update-to`` of type "retraction". Expressions of concern are reported
separately (``expression_of_concern`` with the notice named), never as retractions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..io import parse_json
from .identifiers import PublicationId, parse_identifier
from .shapes import CROSSREF, CROSSREF_MESSAGE, ESUMMARY, EUROPEPMC, EUROPEPMC_RESULT, Bad, check, whole_number, year

__all__ = ["Notice", "WorkMetadata", "parse_metadata"]

_YEAR = re.compile(r"(1[5-9][0-9]{2}|2[0-9]{3})")
_TAGS = re.compile(r"<[^>]{0,200}>")


@dataclass(frozen=True)
class Notice:
    """A retraction or expression-of-concern notice: its kind, its id when known, its citation."""

    kind: str  # "retraction" | "expression_of_concern"
    id: str | None = None
    citation: str = ""

    def __str__(self) -> str:
        return self.id or self.citation or self.kind


@dataclass(frozen=True)
class WorkMetadata:
    """What a resolver said about one work."""

    source: str  # "ncbi" | "europepmc" | "crossref" | "pubmed" | "local"
    found: bool
    ids: tuple[PublicationId, ...] = ()
    title: str = ""
    year: int | None = None
    journal: str = ""
    authors: tuple[str, ...] = ()
    abstract: str | None = None
    publication_types: tuple[str, ...] = ()
    retracted: bool = False
    retraction_notices: tuple[Notice, ...] = ()
    expression_of_concern: bool = False
    concern_notices: tuple[Notice, ...] = ()
    is_retraction_notice: bool = False
    open_access: bool | None = None
    license: str | None = None
    cited_by: int | None = None
    error: str | None = None

    def id_of(self, scheme: str) -> PublicationId | None:
        return next((i for i in self.ids if i.scheme == scheme), None)

    @property
    def pmid(self) -> str | None:
        ident = self.id_of("pmid")
        return ident.value if ident else None

    @property
    def pmcid(self) -> str | None:
        ident = self.id_of("pmcid")
        return ident.value if ident else None

    @property
    def doi(self) -> str | None:
        ident = self.id_of("doi")
        return ident.value if ident else None



def status_flags(types: tuple[str, ...], retractions: list[Notice], concerns: list[Notice]) -> dict[str, Any]:
    """Retraction and expression-of-concern fields of ``WorkMetadata``, from the publication types and
    the notices a resolver linked (the same rule for every resolver)."""
    lowered = {t.lower() for t in types}
    return {
        "retracted": "retracted publication" in lowered or bool(retractions),
        "retraction_notices": tuple(retractions),
        "expression_of_concern": "expression of concern" in lowered or bool(concerns),
        "concern_notices": tuple(concerns),
        "is_retraction_notice": "retraction of publication" in lowered,
    }

def _ids(*raw: object) -> tuple[PublicationId, ...]:
    out: list[PublicationId] = []
    for value in raw:
        parsed = parse_identifier(value)
        if parsed is not None and parsed not in out:
            out.append(parsed)
    return tuple(out)


def _year(text: object) -> int | None:
    match = _YEAR.search(str(text or ""))
    return int(match.group(1)) if match else None


def _clean(text: object) -> str:
    return " ".join(_TAGS.sub("", str(text or "")).split())


def _license(text: object) -> str | None:
    value = " ".join(str(text or "").lower().replace("-", " ").split())
    if not value:
        return None
    if value in ("cc0", "cc zero", "cc0 1.0", "public domain"):
        return "cc0"
    if value in ("cc by", "cc by 4.0", "cc by 3.0", "cc by 2.0", "cc by 2.5"):
        return "cc by"
    return value


# -- NCBI esummary JSON -----------------------------------------------------------------------
def _ncbi(doc: dict[str, Any], want: PublicationId | None) -> WorkMetadata:
    """An esummary answer of the shape ``ESUMMARY`` (checked by :func:`parse_metadata`)."""
    result = doc.get("result")
    if result is None:  # NCBI's own error answer
        return WorkMetadata("ncbi", False, error=doc.get("error") or "; ".join(doc.get("esummaryresult", []))
                            or "esummary has no result")
    uids: list[str] = result["uids"]
    uid = want.value if want is not None and want.scheme == "pmid" and want.value in uids else None
    uid = uid or (uids[0] if uids else None)
    if uid is None:
        return WorkMetadata("ncbi", False, error="no summary")
    entry: dict[str, Any] = result[uid]
    if "error" in entry:
        return WorkMetadata("ncbi", False, ids=_ids(f"pmid:{uid}"), error=entry["error"])
    raw_ids: list[object] = [f"pmid:{uid}"]
    for aid in entry.get("articleids", []):
        kind, value = aid.get("idtype"), aid.get("value", "")
        if kind == "pmc":
            raw_ids.append(f"pmcid:{value}")
        elif kind == "doi":
            raw_ids.append(f"doi:{value}")
    types = tuple(entry.get("pubtype", []))
    retractions: list[Notice] = []
    concerns: list[Notice] = []
    for ref in entry.get("references", []):
        kind = ref.get("reftype", "").lower()
        notice_id = f"pmid:{whole_number(ref['pmid'])}" if ref.get("pmid") else None
        if kind.startswith("retraction in"):
            retractions.append(Notice("retraction", notice_id, ref.get("refsource", "")))
        elif kind.startswith("expression of concern in"):
            concerns.append(Notice("expression_of_concern", notice_id, ref.get("refsource", "")))
    return WorkMetadata(
        "ncbi",
        True,
        ids=_ids(*raw_ids),
        title=_clean(entry.get("title")),
        year=_year(entry.get("pubdate")) or _year(entry.get("sortpubdate")),
        journal=entry.get("fulljournalname") or entry.get("source") or "",
        authors=tuple(a["name"] for a in entry.get("authors", []) if a.get("name")),
        publication_types=types,
        **status_flags(types, retractions, concerns),
    )


# -- Europe PMC -------------------------------------------------------------------------------
def europepmc_result(result: dict[str, Any]) -> WorkMetadata:
    """Parse one Europe PMC ``resultList.result`` item (``core`` or ``lite``) of the shape
    ``EUROPEPMC_RESULT`` (checked by the caller: :func:`parse_metadata`, or the search client)."""
    types_raw = result.get("pubTypeList", {}).get("pubType") or result.get("pubType") or []
    if isinstance(types_raw, str):
        types_raw = [t.strip() for t in types_raw.split(";")]
    types = tuple(t for t in types_raw if t)
    retractions: list[Notice] = []
    concerns: list[Notice] = []
    for cc in result.get("commentCorrectionList", {}).get("commentCorrection", []):
        kind = cc.get("type", "").lower()
        notice_id = canonical_source_id(cc.get("source"), cc.get("id"))
        if kind.startswith("retraction in"):
            retractions.append(Notice("retraction", notice_id, cc.get("reference", "")))
        elif kind.startswith("expression of concern in"):
            concerns.append(Notice("expression_of_concern", notice_id, cc.get("reference", "")))
    authors: tuple[str, ...]
    author_list = result.get("authorList", {}).get("author")
    if author_list is not None:
        authors = tuple(a.get("fullName") or a.get("collectiveName") or "" for a in author_list)
    else:
        authors = tuple(a.strip() for a in result.get("authorString", "").rstrip(".").split(",") if a.strip())
    journal_info = result.get("journalInfo", {})
    journal = journal_info.get("journal", {}).get("title") or result.get("journalTitle") or ""
    pmcid = result.get("pmcid")
    oa = result.get("isOpenAccess")
    return WorkMetadata(
        "europepmc",
        True,
        ids=_ids(
            f"pmid:{result['pmid']}" if result.get("pmid") else None,
            f"pmcid:{pmcid}" if pmcid else None,
            f"doi:{result['doi']}" if result.get("doi") else None,
        ),
        title=_clean(result.get("title")),
        year=year(result.get("pubYear", "")) or year(journal_info.get("yearOfPublication", "")),
        journal=journal,
        authors=tuple(a for a in authors if a),
        abstract=_clean(result["abstractText"]) if result.get("abstractText") else None,
        publication_types=types,
        **status_flags(types, retractions, concerns),
        open_access=None if oa is None else (oa == "Y" and bool(pmcid)),
        license=_license(result.get("license")),
        cited_by=whole_number(result["citedByCount"]) if "citedByCount" in result else None,
    )


def canonical_source_id(source: object, ident: object) -> str | None:
    """Europe PMC ``(source, id)`` -> canonical key (``MED``/``PMID`` ids are PMIDs, ``PMC`` PMCIDs)."""
    if not ident:
        return None
    if source in ("MED", None):
        parsed = parse_identifier(f"pmid:{ident}")
    elif source == "PMC":
        parsed = parse_identifier(f"pmcid:{ident}")
    else:
        return f"{str(source).lower()}:{ident}"
    return parsed.key if parsed else None


def _europepmc(doc: dict[str, Any], want: PublicationId | None) -> WorkMetadata:
    results = doc["resultList"]["result"]
    chosen: dict[str, Any] | None = None
    for item in results:
        if want is None:
            chosen = item
            break
        if want in europepmc_result(item).ids:
            chosen = item
            break
    if chosen is None:
        return WorkMetadata(
            "europepmc", False, ids=(want,) if want else (), error=f"no match among {len(results)} results"
        )
    return europepmc_result(chosen)


# -- Crossref ---------------------------------------------------------------------------------
def _crossref(msg: dict[str, Any]) -> WorkMetadata:
    """A Crossref work ``message`` of the shape ``CROSSREF_MESSAGE`` (checked by :func:`parse_metadata`)."""
    title = msg.get("title") or []
    journal = msg.get("container-title") or []
    published = None
    for key in ("published-print", "published-online", "published", "issued", "created"):
        parts = msg.get(key, {}).get("date-parts") or []
        published = _crossref_year(parts[0][0]) if parts and parts[0] else None
        if published is not None:
            break
    authors = tuple(
        " ".join(p for p in (a.get("given"), a.get("family")) if p) or a.get("name", "")
        for a in msg.get("author", [])
    )
    retractions: list[Notice] = []
    concerns: list[Notice] = []
    for field_name in ("updated-by", "update-to"):
        for upd in msg.get(field_name, []):
            kind = upd.get("type", "").lower().replace("_", "-")
            doi = parse_identifier(f"doi:{upd['DOI']}") if upd.get("DOI") else None
            label = upd.get("label") or upd.get("type") or ""
            if kind in ("retraction", "removal", "withdrawal"):
                if field_name == "updated-by":
                    retractions.append(Notice("retraction", doi.key if doi else None, label))
            elif kind == "expression-of-concern" and field_name == "updated-by":
                concerns.append(Notice("expression_of_concern", doi.key if doi else None, label))
    is_notice = (
        any(u.get("type", "").lower() == "retraction" for u in msg.get("update-to", []))
        or msg.get("type", "").lower() == "retraction"
    )
    abstract = _clean(msg["abstract"]) if msg.get("abstract") else None
    lic = msg["license"][0].get("URL") if msg.get("license") else None
    return WorkMetadata(
        "crossref",
        True,
        ids=_ids(f"doi:{msg['DOI']}" if msg.get("DOI") else None),
        title=_clean(title[0] if isinstance(title, list) and title else title),
        year=published,
        journal=journal[0] if isinstance(journal, list) and journal else journal or "",
        authors=tuple(a for a in authors if a),
        abstract=abstract,
        publication_types=(msg["type"],) if msg.get("type") else (),
        retracted=bool(retractions) or (is_notice and not msg.get("update-to")),
        retraction_notices=tuple(retractions),
        expression_of_concern=bool(concerns),
        concern_notices=tuple(concerns),
        is_retraction_notice=is_notice,
        license=_crossref_license(lic),
        cited_by=whole_number(msg["is-referenced-by-count"]) if "is-referenced-by-count" in msg else None,
    )


def _crossref_year(value: object) -> int | None:
    """The year of a Crossref ``date-parts`` (``[[2019, 3]]``); Crossref writes ``[[null]]`` for an unknown
    date, so anything that is not a year is ``None`` and the next date field is read."""
    try:
        return year(value) if type(value) is int else None
    except Bad:
        return None


def _crossref_license(url: object) -> str | None:
    text = str(url or "").lower()
    if not text:
        return None
    if "publicdomain/zero" in text:
        return "cc0"
    if "creativecommons.org/licenses/by/" in text:
        return "cc by"
    return "other"


def parse_metadata(data: bytes, *, want: object = None, file: str | None = None) -> WorkMetadata:
    """Parse pinned resolver bytes (see module docstring); ``want`` picks one work from a list.

    Raises ``InputError`` when the bytes are none of the known formats.
    """
    wanted = parse_identifier(want) if want is not None else None
    head = data.lstrip()[:1]
    if head == b"<":
        from ..text.jats import is_jats

        if is_jats(data):
            from .jats_meta import parse_jats_metadata

            return parse_jats_metadata(data, file=file)
        from .pubmed import parse_pubmed_xml

        return parse_pubmed_xml(data, want=wanted, file=file)
    doc = parse_json(data, file=file)
    if isinstance(doc, dict):
        header, result = doc.get("header"), doc.get("result")
        if (isinstance(header, dict) and header.get("type") == "esummary") or (
                isinstance(result, dict) and "uids" in result):
            return _ncbi(check(doc, ESUMMARY, file=file), wanted)
        if "resultList" in doc:
            return _europepmc(check(doc, EUROPEPMC, file=file), wanted)
        if "message" in doc and ("message-type" in doc or "status" in doc):
            return _crossref(check(doc, CROSSREF, file=file)["message"])
        if "DOI" in doc and ("title" in doc or "type" in doc):
            return _crossref(check(doc, CROSSREF_MESSAGE, file=file))
        if "pubYear" in doc or "pmid" in doc or "pmcid" in doc:
            return europepmc_result(check(doc, EUROPEPMC_RESULT, file=file))
    raise InputError(
        "pinned metadata is not NCBI esummary, Europe PMC search, Crossref work JSON or PubMed XML; "
        "pin it again with `bioevidence ground --refresh`",
        file=file,
    )
