"""JATS full text as passages: what a quote may be taken from, and what a librarian may show.

:func:`parse_jats` turns pinned JATS bytes (a PMC ``pmc-articleset`` or a bare ``article``) into
an :class:`Article`: the title, the abstract, and the body as an ordered tuple of
:class:`Passage` (paragraphs with their section, section titles, figure captions, tables (one
passage per table, cells separated so a quote never spans two cells) and table footnotes),
plus back matter (acknowledgements, funding, notes) flagged so a librarian can drop it with
:meth:`Article.passages_for`. The reference list is not a passage.

Parsing is safe: no DTD loading, no entity resolution, no network (``resolve_entities=False,
no_network=True, load_dtd=False``). Inline ``<xref ref-type="bibr">`` markers (bracketed,
parenthesised or superscript) are kept in a passage's ``text`` but replaced by
:data:`~bioevidence.text.normalize.CITATION` in its ``match`` form, and their texts are listed
in ``Article.markers`` so a quote that copied them can still be matched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from .normalize import CITATION, marker_key, normalize

#: Section types a librarian drops by default (no claims are quoted from them).
BACK_MATTER = frozenset({
    "acknowledgements", "funding", "references", "competing-interests", "author-contributions",
    "data-availability", "supplementary-material", "abbreviations", "notes",
})

_SECTION_TYPES = (
    ("intro", re.compile(r"^(intro|background)", re.I)),
    ("methods", re.compile(r"method|materials|patients and|study design|experimental procedures", re.I)),
    ("results", re.compile(r"^results?\b|^findings", re.I)),
    ("discussion", re.compile(r"^discussion", re.I)),
    ("conclusions", re.compile(r"^conclu", re.I)),
    ("acknowledgements", re.compile(r"acknowledg", re.I)),
    ("funding", re.compile(r"funding|financial support|grant", re.I)),
    ("competing-interests", re.compile(r"competing|conflicts? of interest|disclosure|coi", re.I)),
    ("author-contributions", re.compile(r"author.{0,3}contribution|author-contrib", re.I)),
    ("data-availability", re.compile(r"data.availability|availability of data", re.I)),
    ("supplementary-material", re.compile(r"supplementary|supporting information", re.I)),
    ("abbreviations", re.compile(r"abbreviations", re.I)),
)


@dataclass(frozen=True, slots=True)
class Passage:
    """One unit of text a quote can be taken from.

    ``kind``: ``title``, ``abstract``, ``section-title``, ``paragraph``, ``caption`` (figure),
    ``table`` (caption and cells; cells separated by line breaks in ``match``), ``table-foot``.
    ``section``: the heading path (``"Results / EGFR mutations"``); ``section_type``: a
    normalised type (``intro``, ``methods``, ``results``, ``discussion``, ``conclusions``,
    ``abstract``, back-matter types of :data:`BACK_MATTER`, or ``""``).
    ``text``: readable text with whitespace collapsed; ``match``: canonical form for matching.
    """

    id: str
    kind: str
    section: str
    section_type: str
    text: str
    match: str

    @property
    def back_matter(self) -> bool:
        return self.section_type in BACK_MATTER


@dataclass(frozen=True, slots=True)
class Article:
    title: str
    passages: tuple[Passage, ...]
    ids: dict[str, str] = field(default_factory=dict)
    markers: frozenset[str] = frozenset()

    def by_id(self, passage_id: str) -> Passage | None:
        for passage in self.passages:
            if passage.id == passage_id:
                return passage
        return None

    def passages_for(self, *, kinds: Iterable[str] | None = None, back_matter: bool = False) -> list[Passage]:
        """Passages a librarian shows: by default every kind, without back matter."""
        wanted = frozenset(kinds) if kinds is not None else None
        return [p for p in self.passages
                if (back_matter or not p.back_matter) and (wanted is None or p.kind in wanted)]


def _local(el: Any) -> str:
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


_BLOCKS = frozenset({"p", "fig", "table-wrap", "list", "boxed-text", "sec", "table-wrap-foot",
                     "def-list", "disp-quote", "fn"})
_SKIP = frozenset({"annotation", "object-id", "alt-text"})
_SPACE = re.compile(r"\s+")


def _is_citation_sup(el: Any) -> bool:
    """A ``<sup>`` holding only bibliography xrefs and separators (a superscript citation)."""
    refs = [c for c in el if _local(c) == "xref"]
    if not refs or any(c.get("ref-type") != "bibr" for c in refs) or len(refs) != len(el):
        return False
    rest = (el.text or "") + "".join(c.tail or "" for c in refs)
    return not re.sub(r"[\s,;\-\u2013\u2014\[\]()]", "", rest)


class _Text:
    """Collects an element's text twice: readable, and with citation markers as placeholders."""

    def __init__(self) -> None:
        self.plain: list[str] = []
        self.match: list[str] = []
        self.markers: list[str] = []

    def add(self, text: str | None) -> None:
        if text:
            self.plain.append(text)
            self.match.append(text)

    def walk(self, el: Any, skip_blocks: bool = True) -> None:
        self.add(el.text)
        for child in el:
            tag = _local(child)
            if (tag == "xref" and child.get("ref-type") == "bibr") or (tag == "sup" and _is_citation_sup(child)):
                label = "".join(child.itertext())
                self.plain.append(label)
                self.match.append(CITATION)
                self.markers.append(label)
            elif (skip_blocks and tag in _BLOCKS) or tag in _SKIP:
                pass
            else:
                self.walk(child, skip_blocks)
            self.add(child.tail)

    def result(self) -> tuple[str, str]:
        plain = _SPACE.sub(" ", "".join(self.plain)).strip()
        return plain, normalize("".join(self.match))


def _section_type(sec: Any, title: str, inherited: str) -> str:
    if inherited == "abstract":
        return inherited
    declared = (sec.get("sec-type") or "").lower()
    for name, pattern in _SECTION_TYPES:
        if declared and pattern.search(declared.replace("|", " ")):
            return name
    for name, pattern in _SECTION_TYPES:
        if pattern.search(title):
            return name
    return inherited


class _Builder:
    def __init__(self) -> None:
        self.passages: list[Passage] = []
        self.markers: set[str] = set()
        self.used: set[str] = set()

    def emit(self, el: Any, kind: str, section: str, stype: str, text: str, match: str) -> None:
        if not match:
            return
        pid = el.get("id") if el is not None else None
        if not pid or pid in self.used:
            pid = f"n{len(self.passages) + 1}"
        self.used.add(pid)
        self.passages.append(Passage(pid, kind, section, stype, text, match))

    def text_of(self, el: Any, skip_blocks: bool = True) -> tuple[str, str]:
        collector = _Text()
        collector.walk(el, skip_blocks)
        self.markers.update(marker_key(m) for m in collector.markers)
        return collector.result()

    def section(self, sec: Any, path: tuple[str, ...], stype: str) -> None:
        title_el = next((c for c in sec if _local(c) == "title"), None)
        title = self.text_of(title_el)[0] if title_el is not None else ""
        child_type = _section_type(sec, title, stype)
        child_path = (*path, title) if title else path
        if title_el is not None:
            self.emit(title_el, "section-title", " / ".join(child_path), child_type, *self.text_of(title_el))
        self.block(sec, child_path, child_type)

    def block(self, el: Any, path: tuple[str, ...], stype: str) -> None:
        """Emit passages for ``el``'s children in document order."""
        for child in el:
            tag = _local(child)
            if tag == "sec":
                self.section(child, path, stype)
            elif tag == "p":
                self.emit(child, "paragraph", " / ".join(path), stype, *self.text_of(child))
                self.block(child, path, stype)
            elif tag in ("fig", "supplementary-material", "media", "graphic", "chem-struct-wrap"):
                self.caption(child, "caption", path, stype)
            elif tag == "table-wrap":
                self.table(child, path, stype)
            elif tag in ("title", "label", "ref-list", "caption") or tag in _SKIP:
                continue
            else:
                self.block(child, path, stype)

    def caption(self, el: Any, kind: str, path: tuple[str, ...], stype: str) -> None:
        caption = next((c for c in el if _local(c) == "caption"), None)
        label = next((c for c in el if _local(c) == "label"), None)
        parts = [self.text_of(x) for x in (label, caption) if x is not None]
        if caption is not None:
            parts = [self.text_of(label)] if label is not None else []
            for c in caption:
                if _local(c) in ("title", "p"):
                    parts.append(self.text_of(c))
        text = " ".join(p[0] for p in parts if p[0])
        match = "\n".join(p[1] for p in parts if p[1])
        self.emit(el, kind, " / ".join(path), stype, text, match)

    def table(self, el: Any, path: tuple[str, ...], stype: str) -> None:
        cells: list[tuple[str, str]] = []
        for c in el:
            if _local(c) == "label":
                cells.append(self.text_of(c))
            elif _local(c) == "caption":
                cells.extend(self.text_of(x) for x in c if _local(x) in ("title", "p"))
        for cell in el.iter():
            if _local(cell) in ("td", "th"):
                cells.append(self.text_of(cell, skip_blocks=False))
        text = " | ".join(t for t, _ in cells if t)
        self.emit(el, "table", " / ".join(path), stype, text, "\n".join(m for _, m in cells if m))
        for foot in el:
            if _local(foot) == "table-wrap-foot":
                self.emit(foot, "table-foot", " / ".join(path), stype, *self.text_of(foot, skip_blocks=False))


def _parser() -> Any:
    from lxml import etree

    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                           remove_comments=True, remove_pis=True)


def parse_jats(data: bytes, *, source: str | None = None) -> Article:
    """Parse JATS bytes into an :class:`Article`; malformed XML is an ``InputError`` naming the source."""
    from lxml import etree

    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        raise InputError(f"JATS full text is not well-formed XML ({exc}); re-pin the full text",
                         file=source) from exc
    article = root if _local(root) == "article" else next(
        (el for el in root.iter() if _local(el) == "article"), None)
    if article is None:
        raise InputError("no <article> element in the JATS full text; pin a PMC JATS article", file=source)
    builder = _Builder()
    front = next((c for c in article if _local(c) == "front"), None)
    meta = next((c for c in front if _local(c) == "article-meta"), None) if front is not None else None
    title = ""
    ids: dict[str, str] = {}
    if meta is not None:
        for el in meta:
            tag = _local(el)
            if tag == "article-id" and el.get("pub-id-type") and el.text:
                ids.setdefault(el.get("pub-id-type"), el.text.strip())
            elif tag == "title-group":
                title_el = next((c for c in el if _local(c) == "article-title"), None)
                if title_el is not None:
                    title, match = builder.text_of(title_el)
                    builder.emit(title_el, "title", "", "title", title, match)
        for el in meta:
            if _local(el) in ("abstract", "trans-abstract"):
                for sec_title in (c for c in el if _local(c) == "title"):
                    builder.emit(sec_title, "section-title", "Abstract", "abstract", *builder.text_of(sec_title))
                builder.block(el, ("Abstract",), "abstract")
    for part in article:
        tag = _local(part)
        if tag == "body":
            builder.block(part, (), "")
        elif tag == "back":
            for child in part:
                ctag = _local(child)
                if ctag == "ref-list":
                    continue
                if ctag == "sec":
                    builder.section(child, (), "notes")
                    continue
                ctype = {"ack": "acknowledgements", "app-group": "supplementary-material",
                         "glossary": "abbreviations"}.get(ctag, "notes")
                builder.block(child, (), ctype)
    return Article(title=title, passages=tuple(builder.passages), ids=ids, markers=frozenset(builder.markers))
