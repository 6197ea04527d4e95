"""Inline JATS text for :mod:`bioevidence.text.jats_walk`: an element's content, flattened.

:class:`TextBuilder` flattens an element's inline content into readable text, recording
citation-marker spans and breaks as it goes; :func:`match_form` is the matching form the grounders
compare quotes in. The element-name sets here say which elements are blocks, skipped, citations or
cited titles, shared with the walk.
"""

from __future__ import annotations

import re
from typing import Any

from .normalize import CITATION, normalize
from .tokens import plain_markers

_SECTION_TYPES = (
    ("intro", re.compile(r"^(intro|background)", re.I)),
    ("methods", re.compile(r"method|materials|patients and|study design|experimental procedures", re.I)),
    ("results", re.compile(r"^results?\b|^findings", re.I)),
    ("discussion", re.compile(r"^discussion", re.I)),
    ("conclusions", re.compile(r"^conclu", re.I)),
    ("acknowledgements", re.compile(r"acknowledg", re.I)),
    ("funding", re.compile(r"funding|financial (support|disclosure)|grant|supported-by", re.I)),
    ("competing-interests", re.compile(r"competing|conflicts? of interest|conflict|disclosure|coi", re.I)),
    ("author-contributions", re.compile(r"author.{0,3}contribution|author-contrib|^con$", re.I)),
    ("data-availability", re.compile(r"data.availability|availability of data|datasets", re.I)),
    ("supplementary-material", re.compile(r"supplementary|supporting information", re.I)),
    ("abbreviations", re.compile(r"abbreviations", re.I)),
    ("appendix", re.compile(r"^appendix", re.I)),
)
BACK_TYPES = {"acknowledgements", "funding", "competing-interests", "author-contributions", "data-availability",
               "abbreviations", "appendix", "notes"}
# Elements that are their own passages, skipped inside a paragraph's text.
_BLOCKS = frozenset({"p", "fig", "fig-group", "table-wrap", "table-wrap-group", "list", "boxed-text", "sec",
                     "table-wrap-foot", "def-list", "disp-quote", "fn", "statement", "supplementary-material",
                     "disp-formula", "disp-formula-group", "chem-struct-wrap", "speech", "verse-group",
                     "array", "ref-list", "media"})
LISTS = frozenset({"list", "def-list"})
SKIP = frozenset({"annotation", "object-id", "alt-text", "tex-math", "permissions", "long-desc", "graphic",
                   "inline-graphic", "private-char", "target", "custom-meta-group", "kwd-group",
                   "self-uri", "counts", "history", "pub-date", "article-categories"})
_SPACE = re.compile(r"\s+")
CITED_TITLE = ("article-title", "chapter-title", "data-title", "part-title", "source")
CITATIONS = frozenset({"mixed-citation", "element-citation", "nlm-citation", "citation"})
FN_TYPES = {"con": "author-contributions", "conflict": "competing-interests", "coi-statement": "competing-interests",
             "financial-disclosure": "funding", "supported-by": "funding", "funding": "funding",
             "data-availability": "data-availability"}


def local(el: Any) -> str:
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def section_type(sec: Any, title: str, inherited: str) -> str:
    if inherited == "abstract":
        return inherited
    declared = (sec.get("sec-type") or "").lower() if sec is not None else ""
    for name, pattern in _SECTION_TYPES:
        if declared and pattern.search(declared.replace("|", " ")):
            return name
    for name, pattern in _SECTION_TYPES:
        if pattern.search(title):
            return name
    return inherited


def _is_citation_sup(el: Any) -> bool:
    """A ``<sup>`` holding only bibliography xrefs and separators (a superscript citation)."""
    refs = [c for c in el if local(c) == "xref"]
    if not refs or any(c.get("ref-type") != "bibr" for c in refs) or len(refs) != len(el):
        return False
    rest = (el.text or "") + "".join(c.tail or "" for c in refs)
    return not re.sub(r"[\s,;\-\u2013\u2014\[\]()]", "", rest)


class TextBuilder:
    """Readable text of inline content, with whitespace collapsed as it is appended."""

    def __init__(self, *, lists: bool = False) -> None:
        self.lists = lists  # a paragraph's own lists are read as part of it (as a reader sees them)
        self.parts: list[str] = []
        self.length = 0
        self.space = True  # at the start, or after a space: a new space is dropped
        self.markers: list[tuple[int, int]] = []
        self.labels: list[str] = []
        self.breaks: list[int] = []
        self.spans: dict[str, tuple[int, int]] = {}
        self.scripts: list[tuple[int, int, str]] = []  # (start, end, "sup" | "sub") of printed super/subscripts

    def add(self, text: str | None) -> None:
        if not text:
            return
        for index, chunk in enumerate(_SPACE.split(text)):
            if index and not self.space:
                self.parts.append(" ")
                self.length += 1
                self.space = True
            if chunk:
                self.parts.append(chunk)
                self.length += len(chunk)
                self.space = False

    def walk_spaced(self, el: Any) -> None:
        """Like :meth:`walk`, with a space between elements (a structured citation's parts)."""
        self.add(el.text)
        for child in el:
            self.separate()
            tag = local(child)
            if tag in ("xref", "sup") or tag in SKIP or len(child) == 0:
                mark, start = len(self.parts), self.length
                self.child(child, blocks=False)
                if tag in CITED_TITLE and tag not in self.spans:
                    span = self._added_since(mark, start)
                    if span[1] > span[0]:
                        self.spans[tag] = span
            else:
                mark, start = len(self.parts), self.length
                self.walk_spaced(child)
                if tag in CITED_TITLE and tag not in self.spans:
                    span = self._added_since(mark, start)
                    if span[1] > span[0]:
                        self.spans[tag] = span
            self.add(child.tail)

    def _added_since(self, mark: int, start: int) -> tuple[int, int]:
        """The span of what was appended since parts index ``mark`` (offset ``start``), without a
        leading space the collapse put first."""
        if mark < len(self.parts) and self.parts[mark] == " ":
            start += 1
        return start, self.length

    def separate(self) -> None:
        """A space unless one is there (between cells, list items, citation elements)."""
        if not self.space:
            self.parts.append(" ")
            self.length += 1
            self.space = True

    def cut(self) -> None:
        """A break: no quote continues across this point."""
        self.separate()
        if self.length and (not self.breaks or self.breaks[-1] != self.length):
            self.breaks.append(self.length)

    def walk(self, el: Any, *, blocks: bool = False) -> None:
        """Append ``el``'s content (not its tail); nested blocks are skipped unless ``blocks``."""
        self.add(el.text)
        for child in el:
            self.child(child, blocks=blocks)
            self.add(child.tail)

    def walk_list(self, el: Any) -> None:
        """A list read into its paragraph: a space between items and between an item's label,
        paragraphs and terms (as :meth:`~bioevidence.text.jats_walk.Walker.list` reads an item)."""
        for item in el:
            tag = local(item)
            if tag in LISTS:
                self.walk_list(item)
            elif tag in ("list-item", "def-item", "title"):
                self.separate()
                if not len(item):
                    self.add(item.text)
                for sub in item:
                    if local(sub) in LISTS:
                        self.separate()
                        self.walk_list(sub)
                    elif local(sub) in ("p", "term", "def", "label"):
                        self.separate()
                        self.walk(sub)
                    else:
                        self.child(sub, blocks=False)
                    self.add(sub.tail)
            self.separate()

    def child(self, child: Any, *, blocks: bool) -> None:
        tag = local(child)
        if not tag:
            return
        if tag == "sup" and _is_citation_sup(child):
            # each xref its own marker: the separators between them are what a stripping pipeline leaves
            self.add(child.text)
            for ref in child:
                self.child(ref, blocks=blocks)
                self.add(ref.tail)
            return
        if tag == "xref" and child.get("ref-type") == "bibr":
            label = "".join(child.itertext())
            mark, start = len(self.parts), self.length
            self.add(label)
            span = self._added_since(mark, start)
            if span[1] > span[0]:
                self.markers.append(span)
                self.labels.append(label)
            return
        if tag in LISTS and self.lists and not blocks:
            self.separate()
            self.walk_list(child)
            self.separate()
            return
        if tag in SKIP or (not blocks and tag in _BLOCKS):
            return
        if tag == "break":
            self.separate()
            return
        if tag == "alternatives":
            math = next((c for c in child if local(c) == "math"), None)
            if math is not None:
                self.walk(math, blocks=blocks)
                return
        cell = tag in ("td", "th") and blocks
        if cell:
            self.cut()
        elif tag in ("list-item", "def-item", "term", "def") and blocks:
            self.separate()
        mark, start = len(self.parts), self.length
        self.walk(child, blocks=blocks)
        if tag in ("sup", "sub"):
            span = self._added_since(mark, start)
            if span[1] > span[0]:
                self.scripts.append((span[0], span[1], tag))
        if cell:
            self.cut()
        if tag in CITED_TITLE and tag not in self.spans:
            span = self._added_since(mark, start)
            if span[1] > span[0]:
                self.spans[tag] = span

    def script_spans(self, text: str) -> tuple[tuple[int, int, str], ...]:
        """Super/subscript spans in ``text`` (what :meth:`result` returned), without edge spaces."""
        out = []
        for a, b, kind in self.scripts:
            b = min(b, len(text))
            while a < b and text[a] == " ":
                a += 1
            while b > a and text[b - 1] == " ":
                b -= 1
            if a < b:
                out.append((a, b, kind))
        return tuple(out)

    def result(self) -> tuple[str, tuple[tuple[int, int], ...], tuple[int, ...]]:
        text = "".join(self.parts)
        stripped = text.rstrip()
        n = len(stripped)
        markers = [(a, min(b, n)) for a, b in self.markers if a < n]
        tagged = list(markers)
        for span in plain_markers(stripped):
            if not any(a < span[1] and span[0] < b for a, b in tagged):  # never overlapping a tagged one
                markers.append(span)
        breaks = tuple(b for b in self.breaks if 0 < b < n)
        return stripped, tuple(sorted(markers)), breaks


def punctuated(citation: Any) -> bool:
    """Whether a mixed citation prints its own separators (text between its elements)."""
    return any((child.tail or "").strip() for child in citation)


def match_form(text: str, markers: tuple[tuple[int, int], ...], breaks: tuple[int, ...]) -> str:
    """The canonical form with citation markers removed, breaks as line breaks (``Passage.match``)."""
    if not markers and not breaks:
        return normalize(text)
    pieces: list[str] = []
    last = 0
    cuts = sorted([(a, b, "m") for a, b in markers] + [(c, c, "b") for c in breaks])
    for a, b, kind in cuts:
        if a < last:
            continue
        pieces.append(text[last:a])
        pieces.append(CITATION if kind == "m" else "\n")
        last = b
    pieces.append(text[last:])
    lines = "".join(pieces).split("\n")
    return "\n".join(line for line in (normalize(part) for part in lines) if line)
