"""The JATS walk behind :func:`bioevidence.text.jats.parse_jats`: elements in, passages out.

:class:`Walker` visits an article in document order (front matter, body, back matter, floats,
sub-articles) and emits one :class:`~bioevidence.text.jats.Passage` per readable unit, tagged
with its part (see :mod:`bioevidence.text.jats`). The inline text of each unit comes from
:class:`~bioevidence.text.jats_inline.TextBuilder`.
"""

from __future__ import annotations

from typing import Any

from .jats import Passage
from .jats_inline import (
    BACK_TYPES,
    CITATIONS,
    CITED_TITLE,
    FN_TYPES,
    LISTS,
    SKIP,
    TextBuilder,
    local,
    match_form,
    punctuated,
    section_type,
)
from .normalize import marker_key


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
            if local(sub) in ("p", "title", "article-title", "list-item", "def-item"):
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
            span = next((builder.spans[t] for t in CITED_TITLE if t in builder.spans), None)
            if span is not None and span[1] > span[0]:
                cited = (span[0], min(span[1], len(text)))
        passage = Passage(self._id(el), kind, section, stype, text, match_form(text, markers, breaks), part,
                          label, markers, breaks, self._aliases(el if alias_root is None else alias_root), cited,
                          builder.script_spans(text))
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
        if front is not None:  # notes beside article-meta (Wiley: conflicts, funding) read as back matter
            self.back([c for c in front if local(c) == "notes"])
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
        if part == "back-matter" and child_type not in BACK_TYPES and child_type != "supplementary-material":
            child_type = "notes"
        if part in ("body", "back-matter") and child_type == "supplementary-material":
            part = "supplementary"
        elif part == "body" and child_type in BACK_TYPES:
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
        for child in el:
            if only is not None and child is not only:
                continue
            tag = local(child)
            if tag == "sec":
                self.section(child, path, stype, part)
            elif tag == "p":
                self.paragraph(child, path, stype, part, "abstract" if part == "abstract" else "paragraph")
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
            elif tag in ("title", "label", "caption", "abstract") or tag in SKIP:
                continue
            else:
                self.block(child, path, stype, part)

    def paragraph(self, p: Any, path: tuple[str, ...], stype: str, part: str, kind: str) -> None:
        """A paragraph and the blocks inside it. Its own lists (a primer list inside one ``<p>``)
        are read as part of its text, items separated by a space, as a reader sees them and as
        0.8.0's reader joins them, so a quote running from the paragraph into its list verifies;
        the items are not passages of their own too (their ids locate the paragraph)."""
        builder = TextBuilder(lists=True)
        builder.walk(p)
        self.emit(p, builder, part=part, kind=kind, section=" / ".join(path), stype=stype)
        for child in p:
            if local(child) in LISTS:
                for sub in child.iter():  # blocks inside the list's items (a figure) stay their own
                    if local(sub) == "p":
                        self.block(sub, path, stype, part)
            else:
                self.block(p, path, stype, part, only=child)

    def nested(self, el: Any, path: tuple[str, ...], stype: str, part: str) -> None:
        """Blocks inside a figure, box or supplementary item besides its caption (a figure's
        source-data files, a medium's own caption), and lists inside its caption's paragraphs."""
        for child in el:
            tag = local(child)
            if tag == "caption":
                for c in child:
                    if local(c) == "p":
                        self.block(c, path, stype, part)
            elif tag in ("label", "title", "p") or tag in SKIP:
                continue
            else:
                self.block(el, path, stype, part, only=child)

    def inner(self, el: Any, path: tuple[str, ...], stype: str, part: str, kind: str) -> None:
        """Paragraphs of a box or quote, as passages of ``kind``."""
        for child in el:
            tag = local(child)
            if tag == "p":
                self.paragraph(child, path, stype, part, kind)
            elif tag in ("caption", "label", "title") or tag in SKIP:
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
                    if stag == "def" and any(local(c) == "p" for c in sub):  # <def><p>expansion</p></def>
                        for para in sub:
                            builder.separate()
                            builder.walk(para) if local(para) == "p" else builder.child(para, blocks=False)
                            builder.add(para.tail)
                        builder.add(sub.tail)
                    elif stag in ("p", "term", "def", "label"):
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
                                  self._aliases(next((c for c in el.iter() if local(c) == "table"), el)), None,
                                  builder.script_spans(text))
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
        stype = FN_TYPES.get(fn_type, "footnotes")
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
            for citation in (c for c in ref if local(c) in CITATIONS):
                builder = TextBuilder()
                if local(citation) == "mixed-citation" and punctuated(citation):
                    builder.walk(citation)
                else:
                    builder.walk_spaced(citation)
                self.emit(citation if citation.get("id") else ref, builder, part="references", kind="reference",
                          section="References", stype="references", label=label or (ref.get("id") or ""))
