"""Facts about a work, re-parsed from pinned resolver bytes (never from the catalogue).

:func:`parse_metadata` takes the bytes as pinned and recognises:

* NCBI esummary JSON (``{"header": {"type": "esummary"}, "result": {...}}``);
* Europe PMC search JSON (a whole ``/search`` page, ``resultType=core`` or ``lite``) or a single
  result object from it;
* Crossref work JSON (``{"message-type": "work", "message": {...}}``) or its bare ``message``;
* PubMed efetch XML (``<PubmedArticleSet>``), parsed by :mod:`bioevidence.sources.pubmed`;
* a JATS article (resolver ``local``: a file pinned as its own metadata), by
  :mod:`bioevidence.sources.jats_meta`.

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
    result = doc.get("result")
    if not isinstance(result, dict):
        return WorkMetadata("ncbi", False, error=str(doc.get("error") or "esummary has no result"))
    uids = [u for u in result.get("uids", []) if isinstance(u, str)]
    uid = want.value if want is not None and want.scheme == "pmid" and want.value in uids else None
    uid = uid or (uids[0] if uids else None)
    entry = result.get(uid) if uid else None
    if not isinstance(entry, dict):
        return WorkMetadata("ncbi", False, ids=_ids(f"pmid:{uid}") if uid else (), error="no summary")
    if "error" in entry:
        return WorkMetadata("ncbi", False, ids=_ids(f"pmid:{uid}"), error=str(entry["error"]))
    raw_ids: list[object] = [f"pmid:{uid}"]
    for aid in entry.get("articleids", []) or []:
        kind, value = aid.get("idtype"), str(aid.get("value", ""))
        if kind == "pmc":
            raw_ids.append(f"pmcid:{value}")
        elif kind == "doi":
            raw_ids.append(f"doi:{value}")
    types = tuple(str(t) for t in entry.get("pubtype", []) or [])
    retractions: list[Notice] = []
    concerns: list[Notice] = []
    for ref in entry.get("references", []) or []:
        kind = str(ref.get("reftype", "")).lower()
        notice_id = f"pmid:{ref['pmid']}" if ref.get("pmid") else None
        if kind.startswith("retraction in"):
            retractions.append(Notice("retraction", notice_id, str(ref.get("refsource", ""))))
        elif kind.startswith("expression of concern in"):
            concerns.append(Notice("expression_of_concern", notice_id, str(ref.get("refsource", ""))))
    return WorkMetadata(
        "ncbi",
        True,
        ids=_ids(*raw_ids),
        title=_clean(entry.get("title")),
        year=_year(entry.get("pubdate")) or _year(entry.get("sortpubdate")),
        journal=str(entry.get("fulljournalname") or entry.get("source") or ""),
        authors=tuple(str(a.get("name")) for a in entry.get("authors", []) or [] if a.get("name")),
        publication_types=types,
        **status_flags(types, retractions, concerns),
    )


# -- Europe PMC -------------------------------------------------------------------------------
def europepmc_result(result: dict[str, Any]) -> WorkMetadata:
    """Parse one Europe PMC ``resultList.result`` item (``core`` or ``lite``)."""
    types_raw = (result.get("pubTypeList") or {}).get("pubType") or result.get("pubType") or []
    if isinstance(types_raw, str):
        types_raw = [t.strip() for t in types_raw.split(";")]
    types = tuple(str(t) for t in types_raw if t)
    retractions: list[Notice] = []
    concerns: list[Notice] = []
    for cc in (result.get("commentCorrectionList") or {}).get("commentCorrection", []) or []:
        kind = str(cc.get("type", "")).lower()
        notice_id = canonical_source_id(cc.get("source"), cc.get("id"))
        if kind.startswith("retraction in"):
            retractions.append(Notice("retraction", notice_id, str(cc.get("reference", ""))))
        elif kind.startswith("expression of concern in"):
            concerns.append(Notice("expression_of_concern", notice_id, str(cc.get("reference", ""))))
    authors: tuple[str, ...]
    author_list = (result.get("authorList") or {}).get("author")
    if isinstance(author_list, list):
        authors = tuple(str(a.get("fullName") or a.get("collectiveName") or "") for a in author_list)
    else:
        authors = tuple(a.strip() for a in str(result.get("authorString", "")).rstrip(".").split(",") if a.strip())
    journal_info = result.get("journalInfo") or {}
    journal = str((journal_info.get("journal") or {}).get("title") or result.get("journalTitle") or "")
    pmcid = result.get("pmcid")
    oa = result.get("isOpenAccess")
    cited = result.get("citedByCount")
    return WorkMetadata(
        "europepmc",
        True,
        ids=_ids(
            f"pmid:{result['pmid']}" if result.get("pmid") else None,
            f"pmcid:{pmcid}" if pmcid else None,
            f"doi:{result['doi']}" if result.get("doi") else None,
        ),
        title=_clean(result.get("title")),
        year=_year(result.get("pubYear")) or _year(journal_info.get("yearOfPublication")),
        journal=journal,
        authors=tuple(a for a in authors if a),
        abstract=_clean(result["abstractText"]) if result.get("abstractText") else None,
        publication_types=types,
        **status_flags(types, retractions, concerns),
        open_access=None if oa is None else (oa == "Y" and bool(pmcid)),
        license=_license(result.get("license")),
        cited_by=int(cited) if isinstance(cited, int | str) and str(cited).isdigit() else None,
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
    results = (doc.get("resultList") or {}).get("result") or []
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
    title = msg.get("title") or []
    journal = msg.get("container-title") or []
    year = None
    for key in ("published-print", "published-online", "published", "issued", "created"):
        parts = (msg.get(key) or {}).get("date-parts") or []
        if parts and parts[0] and isinstance(parts[0][0], int):
            year = parts[0][0]
            break
    authors = tuple(
        " ".join(p for p in (a.get("given"), a.get("family")) if p) or str(a.get("name", ""))
        for a in msg.get("author", []) or []
    )
    retractions: list[Notice] = []
    concerns: list[Notice] = []
    for field_name in ("updated-by", "update-to"):
        for upd in msg.get(field_name, []) or []:
            kind = str(upd.get("type", "")).lower().replace("_", "-")
            doi = parse_identifier(f"doi:{upd['DOI']}") if upd.get("DOI") else None
            label = str(upd.get("label") or upd.get("type") or "")
            if kind in ("retraction", "removal", "withdrawal"):
                if field_name == "updated-by":
                    retractions.append(Notice("retraction", doi.key if doi else None, label))
            elif kind == "expression-of-concern" and field_name == "updated-by":
                concerns.append(Notice("expression_of_concern", doi.key if doi else None, label))
    is_notice = (
        any(str(u.get("type", "")).lower() == "retraction" for u in msg.get("update-to", []) or [])
        or str(msg.get("type", "")).lower() == "retraction"
    )
    abstract = _clean(msg["abstract"]) if msg.get("abstract") else None
    lic = (msg.get("license") or [{}])[0].get("URL") if msg.get("license") else None
    return WorkMetadata(
        "crossref",
        True,
        ids=_ids(f"doi:{msg['DOI']}" if msg.get("DOI") else None),
        title=_clean(title[0] if isinstance(title, list) and title else title),
        year=year,
        journal=str(journal[0] if isinstance(journal, list) and journal else journal or ""),
        authors=tuple(a for a in authors if a),
        abstract=abstract,
        publication_types=(str(msg.get("type", "")),) if msg.get("type") else (),
        retracted=bool(retractions) or (is_notice and not msg.get("update-to")),
        retraction_notices=tuple(retractions),
        expression_of_concern=bool(concerns),
        concern_notices=tuple(concerns),
        is_retraction_notice=is_notice,
        license=_crossref_license(lic),
        cited_by=cited if isinstance(cited := msg.get("is-referenced-by-count"), int) else None,
    )


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
        header = doc.get("header") or {}
        is_esummary = isinstance(header, dict) and header.get("type") == "esummary"
        if is_esummary or ("result" in doc and "uids" in (doc.get("result") or {})):
            return _ncbi(doc, wanted)
        if "resultList" in doc:
            return _europepmc(doc, wanted)
        if doc.get("message-type") == "work" and isinstance(doc.get("message"), dict):
            return _crossref(doc["message"])
        if "DOI" in doc and ("title" in doc or "type" in doc):
            return _crossref(doc)
        if "pubYear" in doc or "pmid" in doc or "pmcid" in doc:
            return europepmc_result(doc)
    raise InputError(
        "pinned metadata is not NCBI esummary, Europe PMC search, Crossref work JSON or PubMed XML; "
        "pin it again with `bioevidence ground --refresh`",
        file=file,
    )
