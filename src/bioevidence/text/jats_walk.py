"""The JATS walk behind :func:`bioevidence.text.jats.parse_jats`: elements in, passages out.

:class:`Walker` visits an article in document order (front matter, body, back matter, floats,
sub-articles) and emits one :class:`~bioevidence.text.jats.Passage` per readable unit, tagged
with its part (see :mod:`bioevidence.text.jats`). :class:`TextBuilder` flattens an element's
inline content into readable text, recording citation-marker spans and breaks as it goes.
"""

from __future__ import annotations

import re
from typing import Any

from .jats import Passage
from .normalize import CITATION, marker_key, normalize
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
_BACK_TYPES = {"acknowledgements", "funding", "competing-interests", "author-contributions", "data-availability",
               "abbreviations", "appendix", "notes"}
# Elements that are their own passages, skipped inside a paragraph's text.
_BLOCKS = frozenset({"p", "fig", "fig-group", "table-wrap", "table-wrap-group", "list", "boxed-text", "sec",
                     "table-wrap-foot", "def-list", "disp-quote", "fn", "statement", "supplementary-material",
                     "disp-formula", "disp-formula-group", "chem-struct-wrap", "speech", "verse-group",
                     "array", "ref-list", "media"})
_SKIP = frozenset({"annotation", "object-id", "alt-text", "tex-math", "permissions", "long-desc", "graphic",
                   "inline-graphic", "private-char", "target", "custom-meta-group", "kwd-group",
                   "self-uri", "counts", "history", "pub-date", "article-categories"})
_SPACE = re.compile(r"\s+")
_CITED_TITLE = ("article-title", "chapter-title", "data-title", "part-title", "source")
_CITATIONS = frozenset({"mixed-citation", "element-citation", "nlm-citation", "citation"})
_FN_TYPES = {"con": "author-contributions", "conflict": "competing-interests", "coi-statement": "competing-interests",
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

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.space = True  # at the start, or after a space: a new space is dropped
        self.markers: list[tuple[int, int]] = []
        self.labels: list[str] = []
        self.breaks: list[int] = []
        self.spans: dict[str, tuple[int, int]] = {}

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
            if tag in ("xref", "sup") or tag in _SKIP or len(child) == 0:
                mark, start = len(self.parts), self.length
                self.child(child, blocks=False)
                if tag in _CITED_TITLE and tag not in self.spans:
                    span = self._added_since(mark, start)
                    if span[1] > span[0]:
                        self.spans[tag] = span
            else:
                mark, start = len(self.parts), self.length
                self.walk_spaced(child)
                if tag in _CITED_TITLE and tag not in self.spans:
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
        if tag in _SKIP or (not blocks and tag in _BLOCKS):
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
        if cell:
            self.cut()
        if tag in _CITED_TITLE and tag not in self.spans:
            span = self._added_since(mark, start)
            if span[1] > span[0]:
                self.spans[tag] = span

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


def _punctuated(citation: Any) -> bool:
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


class Walker:
    """Visits one article and collects its passages (see module docstring)."""

    def __init__(self, root: Any) -> None:
        self.passages: list[Passage] = []
        self.used: set[str] = set()
        self.marker_keys: set[str] = set()
        self.ids: dict[str, str] = {}
        self.title = ""
        self.scope: list[str] = []  # ids of the sections, figures, tables and boxes being walked
        self.position: dict[Any, int] = {}
        for index, el in enumerate(el for el in root.iter() if isinstance(el.tag, str)):
            self.position[el] = index

    # -- emitting ----------------------------------------------------------------------------
    def _id(self, el: Any) -> str:
        base = el.get("id") or f"n{self.position.get(el, len(self.passages))}"
        pid = base
        suffix = 2
        while pid in self.used:
            pid = f"{base}-{suffix}"
            suffix += 1
        self.used.add(pid)
        return pid

    def _aliases(self, el: Any) -> tuple[str, ...]:
        out = list(self.scope)
        for sub in el.iter():
            if local(sub) in ("p", "title", "article-title"):
                out.append(sub.get("id") or f"n{self.position.get(sub, -1)}")
        return tuple(dict.fromkeys(out))

    def emit(self, el: Any, builder: TextBuilder, *, part: str, kind: str, section: str, stype: str,
             label: str = "", alias_root: Any = None) -> Passage | None:
        text, markers, breaks = builder.result()
        if not text:
            return None
        self.marker_keys.update(marker_key(m) for m in builder.labels)
        cited = None
        if kind == "reference":
            span = next((builder.spans[t] for t in _CITED_TITLE if t in builder.spans), None)
            if span is not None and span[1] > span[0]:
                cited = (span[0], min(span[1], len(text)))
        passage = Passage(self._id(el), kind, section, stype, text, match_form(text, markers, breaks), part,
                          label, markers, breaks, self._aliases(el if alias_root is None else alias_root), cited)
        self.passages.append(passage)
        return passage

    def text(self, el: Any, *, part: str, kind: str, section: str, stype: str, label: str = "",
             blocks: bool = False) -> Passage | None:
        builder = TextBuilder()
        builder.walk(el, blocks=blocks)
        return self.emit(el, builder, part=part, kind=kind, section=section, stype=stype, label=label)

    # -- the article -------------------------------------------------------------------------
    def article(self, article: Any) -> None:
        front = next((c for c in article if local(c) == "front"), None)
        meta = next((c for c in front if local(c) == "article-meta"), None) if front is not None else None
        if meta is not None:
            self.front(meta, "title")
        for part in article:
            tag = local(part)
            if tag == "body":
                self.block(part, (), "", "body")
            elif tag == "back":
                self.back(part)
            elif tag == "floats-group":
                self.block(part, (), "", "body")
            elif tag == "sub-article":
                self.sub_article(part)

    def front(self, meta: Any, title_part: str) -> None:
        for el in meta:
            tag = local(el)
            if tag == "article-id" and el.get("pub-id-type") and el.text and title_part == "title":
                self.ids.setdefault(el.get("pub-id-type"), el.text.strip())
            elif tag == "title-group":
                for t in el.iter():
                    ttag = local(t)
                    if ttag in ("article-title", "subtitle", "trans-title", "trans-subtitle", "alt-title"):
                        if ttag == "alt-title":
                            continue
                        p = self.text(t, part=title_part, kind="title" if ttag == "article-title" else ttag,
                                      section="", stype="title")
                        if p is not None and ttag == "article-title" and not self.title and title_part == "title":
                            self.title = p.text
            elif tag == "author-notes":
                for note in el:
                    self.footnote(note, ("Author notes",), "author-note")
            elif tag in ("funding-group", "support-group"):
                groups = [el] if tag == "funding-group" else [g for g in el.iter() if local(g) == "funding-group"]
                for group in groups:
                    for child in group:
                        if local(child) in ("funding-statement", "award-group"):
                            builder = TextBuilder()
                            builder.walk_spaced(child) if local(child) == "award-group" else builder.walk(child)
                            self.emit(child, builder, part="back-matter", kind="funding", section="Funding",
                                      stype="funding")
        for el in meta:
            if local(el) in ("abstract", "trans-abstract"):
                heading = next((c for c in el if local(c) == "title"), None)
                name = " ".join("".join(heading.itertext()).split()) if heading is not None else "Abstract"
                for sec_title in (c for c in el if local(c) == "title"):
                    self.text(sec_title, part="abstract", kind="section-title", section=name, stype="abstract")
                p = self.text(el, part="abstract", kind="abstract", section=name, stype="abstract") \
                    if (el.text or "").strip() and not len(el) else None
                if p is None:
                    self.block(el, (name,), "abstract", "abstract")

    def back(self, back: Any) -> None:
        for child in back:
            tag = local(child)
            if tag == "ref-list":
                self.references(child)
            elif tag == "sec":
                self.section(child, (), "notes", "back-matter")
            elif tag == "fn-group":
                for fn in child.iter():
                    if local(fn) == "fn":
                        self.footnote(fn, ("Footnotes",), "footnote")
            elif tag in ("ack", "app-group", "app", "glossary", "notes", "bio"):
                stype = {"ack": "acknowledgements", "app-group": "appendix", "app": "appendix",
                         "glossary": "abbreviations"}.get(tag, "notes")
                heading = next((c for c in child if local(c) == "title"), None)
                name = " ".join("".join(heading.itertext()).split()) if heading is not None else stype
                if heading is not None:
                    self.text(heading, part="back-matter", kind="section-title", section=name, stype=stype)
                self.block(child, (name,), stype, "back-matter")
            elif tag in ("fig", "table-wrap", "supplementary-material", "boxed-text"):
                self.block(back, (), "notes", "back-matter", only=child)

    def sub_article(self, sub: Any) -> None:
        front = next((c for c in sub if local(c) in ("front-stub", "front")), None)
        name = sub.get("article-type") or "sub-article"
        if front is not None:
            meta = next((c for c in front if local(c) == "article-meta"), front)
            self.front(meta, "sub-article")
        for part in sub:
            tag = local(part)
            if tag == "body":
                self.block(part, (name,), "", "sub-article")
            elif tag == "back":
                self.back(part)
            elif tag == "sub-article":
                self.sub_article(part)

    # -- structure ---------------------------------------------------------------------------
    def section(self, sec: Any, path: tuple[str, ...], stype: str, part: str) -> None:
        title_el = next((c for c in sec if local(c) == "title"), None)
        title = " ".join("".join(title_el.itertext()).split()) if title_el is not None else ""
        child_type = section_type(sec, title, stype)
        if part == "back-matter" and child_type not in _BACK_TYPES and child_type != "supplementary-material":
            child_type = "notes"
        if part in ("body", "back-matter") and child_type == "supplementary-material":
            part = "supplementary"
        elif part == "body" and child_type in _BACK_TYPES:
            part = "back-matter"
        child_path = (*path, title) if title else path
        scoped = self._enter(sec)
        if title_el is not None:
            self.text(title_el, part=part, kind="section-title", section=" / ".join(child_path), stype=child_type)
        self.block(sec, child_path, child_type, part)
        self._leave(scoped)

    def _enter(self, el: Any) -> bool:
        ident = el.get("id")
        if ident:
            self.scope.append(ident)
        return bool(ident)

    def _leave(self, scoped: bool) -> None:
        if scoped:
            self.scope.pop()

    def block(self, el: Any, path: tuple[str, ...], stype: str, part: str, *, only: Any = None) -> None:
        """Emit passages for ``el``'s children in document order."""
        section = " / ".join(path)
        for child in el:
            if only is not None and child is not only:
                continue
            tag = local(child)
            if tag == "sec":
                self.section(child, path, stype, part)
            elif tag == "p":
                kind = "abstract" if part == "abstract" else "paragraph"
                self.text(child, part=part, kind=kind, section=section, stype=stype)
                self.block(child, path, stype, part)
            elif tag in ("list", "def-list"):
                self.list(child, path, stype, part)
            elif tag in ("boxed-text", "disp-quote", "statement", "speech", "verse-group"):
                self.caption(child, "box-caption", path, stype, "caption")
                for c in next((c for c in child if local(c) == "caption"), ()):
                    if local(c) == "p":
                        self.block(c, path, stype, "caption")
                inner = {"boxed-text": "boxed-text", "disp-quote": "quote"}.get(tag, "paragraph")
                scoped = self._enter(child)
                self.inner(child, path, stype, part, inner)
                self._leave(scoped)
            elif tag in ("fig", "fig-group", "chem-struct-wrap", "media", "graphic"):
                self.caption(child, "figure-caption", path, stype, "caption")
                self.nested(child, path, stype, "caption" if part != "supplementary" else part)
            elif tag == "supplementary-material":
                self.caption(child, "supplementary-caption", path, "supplementary-material", "supplementary")
                self.nested(child, path, "supplementary-material", "supplementary")
            elif tag in ("table-wrap", "table-wrap-group"):
                if tag == "table-wrap-group":
                    self.block(child, path, stype, part)
                else:
                    self.table(child, path, stype)
            elif tag == "fn-group":
                for fn in child.iter():
                    if local(fn) == "fn":
                        self.footnote(fn, path, "footnote")
            elif tag == "fn":
                self.footnote(child, path, "footnote")
            elif tag == "ref-list":
                self.references(child)
            elif tag in ("title", "label", "caption", "abstract") or tag in _SKIP:
                continue
            else:
                self.block(child, path, stype, part)

    def nested(self, el: Any, path: tuple[str, ...], stype: str, part: str) -> None:
        """Blocks inside a figure, box or supplementary item besides its caption (a figure's
        source-data files, a medium's own caption), and lists inside its caption's paragraphs."""
        for child in el:
            tag = local(child)
            if tag == "caption":
                for c in child:
                    if local(c) == "p":
                        self.block(c, path, stype, part)
            elif tag in ("label", "title", "p") or tag in _SKIP:
                continue
            else:
                self.block(el, path, stype, part, only=child)

    def inner(self, el: Any, path: tuple[str, ...], stype: str, part: str, kind: str) -> None:
        """Paragraphs of a box or quote, as passages of ``kind``."""
        section = " / ".join(path)
        for child in el:
            tag = local(child)
            if tag == "p":
                self.text(child, part=part, kind=kind, section=section, stype=stype)
                self.block(child, path, stype, part)
            elif tag in ("caption", "label", "title") or tag in _SKIP:
                continue
            elif tag == "sec":
                self.section(child, path, stype, part)
            else:
                self.block(el, path, stype, part, only=child)

    def list(self, el: Any, path: tuple[str, ...], stype: str, part: str) -> None:
        section = " / ".join(path)
        for item in el:
            tag = local(item)
            if tag == "title":
                self.text(item, part=part, kind="section-title", section=section, stype=stype)
            elif tag in ("list-item", "def-item"):
                builder = TextBuilder()
                for sub in item:
                    stag = local(sub)
                    if stag in ("list", "def-list"):
                        continue
                    if stag in ("p", "term", "def", "label"):
                        builder.separate()
                        builder.walk(sub)
                        builder.add(sub.tail)
                    else:
                        builder.child(sub, blocks=False)
                        builder.add(sub.tail)
                if not len(item):
                    builder.add(item.text)
                self.emit(item, builder, part=part, kind="list-item" if tag == "list-item" else "definition",
                          section=section, stype=stype)
                for sub in item:
                    if local(sub) in ("list", "def-list"):
                        self.list(sub, path, stype, part)
                    elif local(sub) == "p":
                        self.block(sub, path, stype, part)

    def caption(self, el: Any, kind: str, path: tuple[str, ...], stype: str, part: str) -> Passage | None:
        caption = next((c for c in el if local(c) == "caption"), None)
        label_el = next((c for c in el if local(c) == "label"), None)
        label = " ".join("".join(label_el.itertext()).split()).rstrip(".:") if label_el is not None else ""
        if caption is None:
            return None
        builder = TextBuilder()
        if label_el is not None:
            builder.walk(label_el)
            builder.cut()
        for c in caption:
            if local(c) in ("title", "p"):
                builder.separate()
                builder.walk(c)
        return self.emit(el, builder, part=part, kind=kind, section=" / ".join(path), stype=stype, label=label,
                         alias_root=caption)

    def table(self, el: Any, path: tuple[str, ...], stype: str) -> None:
        section = " / ".join(path)
        label = self.caption(el, "table-caption", path, stype, "caption")
        name = label.label if label is not None else ""
        if not name:
            label_el = next((c for c in el if local(c) == "label"), None)
            name = " ".join("".join(label_el.itertext()).split()).rstrip(".:") if label_el is not None else ""
        caption = next((c for c in el if local(c) == "caption"), None)
        for c in caption if caption is not None else ():
            if local(c) == "p":
                self.block(c, path, stype, "caption")
        scoped = self._enter(el)
        builder = TextBuilder()
        for table in el.iter():
            if local(table) in ("td", "th"):
                builder.cut()
                builder.walk(table, blocks=True)
        if builder.length:
            text, markers, breaks = builder.result()
            if text:
                self.marker_keys.update(marker_key(m) for m in builder.labels)
                passage = Passage(self._id_for_cells(el), "table", section, stype, text,
                                  match_form(text, markers, breaks), "table", name, markers, breaks,
                                  self._aliases(next((c for c in el.iter() if local(c) == "table"), el)), None)
                self.passages.append(passage)
        for foot in el:
            if local(foot) == "table-wrap-foot":
                notes = [c for c in foot.iter() if local(c) in ("p", "fn")]
                leaf = [c for c in notes if local(c) == "p"] or notes or [foot]
                for note in leaf:
                    self.text(note, part="footnote", kind="table-footnote", section=section, stype=stype,
                              label=name)
        self._leave(scoped)

    def _id_for_cells(self, el: Any) -> str:
        base = el.get("id") or f"n{self.position.get(el, len(self.passages))}"
        pid = f"{base}-cells"
        suffix = 2
        while pid in self.used:
            pid = f"{base}-cells-{suffix}"
            suffix += 1
        self.used.add(pid)
        return pid

    def footnote(self, fn: Any, path: tuple[str, ...], kind: str) -> None:
        tag = local(fn)
        fn_type = (fn.get("fn-type") or "").lower()
        stype = _FN_TYPES.get(fn_type, "footnotes")
        part = "back-matter" if stype != "footnotes" else "footnote"
        section = " / ".join(path)
        if tag not in ("fn", "corresp", "p", "fn-group"):
            return
        if tag == "fn-group":
            for sub in fn:
                self.footnote(sub, path, kind)
            return
        paragraphs = [c for c in fn if local(c) == "p"]
        if tag == "p" or not paragraphs:
            self.text(fn, part=part, kind=kind, section=section, stype=stype)
            if tag == "p":
                self.block(fn, path, stype, part)
            return
        for p in paragraphs:
            self.text(p, part=part, kind=kind, section=section, stype=stype)
            self.block(p, path, stype, part)

    def references(self, ref_list: Any) -> None:
        for ref in ref_list:
            tag = local(ref)
            if tag == "ref-list":
                self.references(ref)
                continue
            if tag != "ref":
                continue
            label_el = next((c for c in ref if local(c) == "label"), None)
            label = " ".join("".join(label_el.itertext()).split()).strip("[]().") if label_el is not None else ""
            for citation in (c for c in ref if local(c) in _CITATIONS):
                builder = TextBuilder()
                if local(citation) == "mixed-citation" and _punctuated(citation):
                    builder.walk(citation)
                else:
                    builder.walk_spaced(citation)
                self.emit(citation if citation.get("id") else ref, builder, part="references", kind="reference",
                          section="References", stype="references", label=label or (ref.get("id") or ""))
