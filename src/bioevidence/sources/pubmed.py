"""PubMed efetch XML (``<PubmedArticleSet>``) -> :class:`~bioevidence.sources.metadata.WorkMetadata`.

Reads publication types, ``CommentsCorrections`` ``RetractionIn`` / ``ExpressionOfConcernIn``
(and the older ``RetractionOf``), the abstract, ids, title, journal, year and authors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .identifiers import PublicationId, parse_identifier
from .metadata import Notice, WorkMetadata, _year, status_flags
from .xmlsafe import parse_xml, text_of

if TYPE_CHECKING:  # pragma: no cover
    from lxml import etree

__all__ = ["parse_pubmed_article", "parse_pubmed_articles", "parse_pubmed_xml"]


def parse_pubmed_article(article: etree._Element) -> WorkMetadata:
    """One ``<PubmedArticle>`` element."""
    citation = article.find("MedlineCitation")
    art = citation.find("Article") if citation is not None else None
    pmid = text_of(citation.find("PMID")) if citation is not None else ""
    raw_ids: list[str] = [f"pmid:{pmid}"] if pmid else []
    for aid in article.iterfind("PubmedData/ArticleIdList/ArticleId"):
        kind, value = aid.get("IdType"), text_of(aid)
        if kind == "pmc":
            raw_ids.append(f"pmcid:{value}")
        elif kind == "doi":
            raw_ids.append(f"doi:{value}")
    ids: list[PublicationId] = []
    for raw in raw_ids:
        parsed = parse_identifier(raw)
        if parsed is not None and parsed not in ids:
            ids.append(parsed)
    types = tuple(text_of(t) for t in art.iterfind("PublicationTypeList/PublicationType")) if art is not None else ()
    retractions: list[Notice] = []
    concerns: list[Notice] = []
    for cc in article.iter("CommentsCorrections"):
        ref_type = cc.get("RefType", "")
        ref_pmid = text_of(cc.find("PMID"))
        notice_id = f"pmid:{ref_pmid.lstrip('0')}" if ref_pmid.strip("0") else None
        source = text_of(cc.find("RefSource"))
        if ref_type == "RetractionIn":
            retractions.append(Notice("retraction", notice_id, source))
        elif ref_type == "ExpressionOfConcernIn":
            concerns.append(Notice("expression_of_concern", notice_id, source))
    abstract_parts = []
    if art is not None:
        for part in art.iterfind("Abstract/AbstractText"):
            label = part.get("Label")
            body = text_of(part)
            abstract_parts.append(f"{label}: {body}" if label else body)
    authors: list[str] = []
    if art is not None:
        for author in art.iterfind("AuthorList/Author"):
            name = " ".join(p for p in (text_of(author.find("LastName")), text_of(author.find("Initials"))) if p)
            authors.append(name or text_of(author.find("CollectiveName")))
    pubdate = art.find("Journal/JournalIssue/PubDate") if art is not None else None
    year = _year(text_of(pubdate.find("Year")) or text_of(pubdate.find("MedlineDate"))) if pubdate is not None else None
    return WorkMetadata(
        "pubmed",
        bool(pmid),
        ids=tuple(ids),
        title=text_of(art.find("ArticleTitle")) if art is not None else "",
        year=year,
        journal=text_of(art.find("Journal/Title")) if art is not None else "",
        authors=tuple(a for a in authors if a),
        abstract=" ".join(abstract_parts) or None,
        publication_types=types,
        **status_flags(types, retractions, concerns),
    )


def parse_pubmed_articles(data: bytes, *, file: str | None = None) -> list[WorkMetadata]:
    """Every ``<PubmedArticle>`` of an efetch response."""
    root = parse_xml(data, file=file)
    return [parse_pubmed_article(a) for a in root.iter("PubmedArticle")]


def parse_pubmed_xml(data: bytes, *, want: PublicationId | None = None, file: str | None = None) -> WorkMetadata:
    """The article ``want`` names (or the first) of an efetch response; ``found=False`` when absent."""
    articles = parse_pubmed_articles(data, file=file)
    for meta in articles:
        if want is None or want in meta.ids:
            return meta
    return WorkMetadata("pubmed", False, ids=(want,) if want else (), error=f"not among {len(articles)} articles")
