"""A JATS article's own front matter as :class:`~bioevidence.sources.metadata.WorkMetadata`.

For works pinned from local files (resolver ``local``): the full text is its own metadata. Read:
ids (``article-id`` pmid, pmcid / pmc, doi), title, journal, year, authors, the article type, and
what the article itself says about retraction and concern: a ``related-article`` of type
``retraction-forward`` / ``retracted-by`` marks it retracted, ``concern-forward`` /
``object-of-concern`` an expression of concern; an ``article-type="retraction"`` is a notice.
What a resolver knows later (a retraction after the file was pinned) is not in the file:
``bioevidence ground`` with an identifier pins the resolver's record instead.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from .identifiers import PublicationId, parse_identifier
from .metadata import Notice, WorkMetadata, _year, status_flags

__all__ = ["parse_jats_metadata"]

_RETRACTED = ("retraction-forward", "retracted-by", "retraction")
_CONCERN = ("concern-forward", "object-of-concern", "expression-of-concern")


def _local(el: Any) -> str:
    return el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else ""


def _text(el: Any) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def parse_jats_metadata(data: bytes, *, file: str | None = None) -> WorkMetadata:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise InputError(f"JATS full text is not well-formed XML ({exc}); re-pin it", file=file) from exc
    article = root if _local(root) == "article" else next((e for e in root.iter() if _local(e) == "article"), None)
    if article is None:
        raise InputError("no <article> element in the JATS file", file=file)
    meta = next((e for e in article.iter() if _local(e) == "article-meta"), None)
    ids: list[PublicationId] = []
    title = journal = ""
    year = None
    authors: list[str] = []
    retractions: list[Notice] = []
    concerns: list[Notice] = []
    if meta is not None:
        for el in meta.iter():
            tag = _local(el)
            if tag == "article-id":
                kind = (el.get("pub-id-type") or "").lower()
                value = (el.text or "").strip()
                scheme = {"pmid": "pmid", "pmcid": "pmcid", "pmc": "pmcid", "doi": "doi"}.get(kind)
                parsed = parse_identifier(f"{scheme}:{value}") if scheme and value else None
                if parsed is not None and parsed not in ids:
                    ids.append(parsed)
            elif tag == "article-title" and not title and _local(el.getparent()) == "title-group":
                title = _text(el)
            elif tag == "pub-date" and year is None:
                year = _year(_text(next((c for c in el if _local(c) == "year"), None)))
            elif tag == "contrib" and el.get("contrib-type", "author") == "author":
                surname = next((c for c in el.iter() if _local(c) == "surname"), None)
                if surname is not None:
                    authors.append(_text(surname))
    for el in article.iter():
        tag = _local(el)
        if tag == "journal-title" and not journal:
            journal = _text(el)
        elif tag == "related-article":
            kind = (el.get("related-article-type") or "").lower()
            href = el.get("{http://www.w3.org/1999/xlink}href") or ""
            notice = Notice("retraction" if kind in _RETRACTED else "expression_of_concern",
                            href.replace("info:doi/", "doi:") or None, _text(el))
            if kind in _RETRACTED:
                retractions.append(notice)
            elif kind in _CONCERN:
                concerns.append(notice)
    article_type = (article.get("article-type") or "").lower()
    types = ("Retraction of Publication",) if article_type == "retraction" else (
        (article_type,) if article_type else ())
    return WorkMetadata(source="local", found=bool(title or ids), ids=tuple(ids), title=title, year=year,
                        journal=journal, authors=tuple(authors), publication_types=types,
                        **status_flags(types, retractions, concerns))
