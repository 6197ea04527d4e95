"""JATS full text as passages: every part of an article a reader can read, and quote.

:func:`parse_jats` turns pinned JATS bytes (a PMC ``pmc-articleset`` or a bare ``article``) into
an :class:`Article` whose passages cover the whole article, each tagged with its **part**:

=================  ==========================================================================
part               what
=================  ==========================================================================
``title``          article title, subtitle, translated titles
``abstract``       every abstract (structured, graphical, teaser, author summary, digest, …)
``body``           body paragraphs, section titles, lists, boxed text, quotes, definitions
``caption``        figure, table and box captions
``table``          table cells (one passage per table; a quote never spans two cells)
``footnote``       table footnotes, footnotes (``fn-group``), author notes
``back-matter``    acknowledgements, funding, competing interests, author contributions,
                   data availability, appendices, glossary, notes
``supplementary``  supplementary-material captions
``references``     the reference list, one passage per cited work (its title marked)
``sub-article``    decision letters, author responses and other sub-articles
=================  ==========================================================================

A passage's ``text`` is readable text as printed (inline markup flattened, whitespace collapsed),
citation markers included; ``markers`` gives their spans (``<xref ref-type="bibr">``, superscript
citations, plain ``[12]`` and ``(Smith et al., 2001)``) and ``breaks`` the offsets no quote may
cross (between table cells, after a caption's label). ``match`` is the canonical form with
citation markers removed (what the librarian shows and cuts sentences from).

Passage ids are the element's ``id`` or ``n<position>`` (the element's place in document order),
the scheme bioai-evidence-validator 0.8.0 uses for paragraphs and titles, so its ``…#n12``
locators still name the same text; ``aliases`` lists the 0.8.0 ids a passage covers.

Parsing is safe: no DTD loading, no entity resolution, no network.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import InputError

#: Section types a librarian drops by default (no claims are quoted from them).
BACK_MATTER = frozenset({
    "acknowledgements", "funding", "references", "competing-interests", "author-contributions",
    "data-availability", "supplementary-material", "abbreviations", "notes", "appendix", "footnotes",
})

#: Every part, in the order a quote found in several places is attributed (main text first).
PARTS = ("title", "abstract", "body", "caption", "table", "footnote", "back-matter", "supplementary",
         "references", "sub-article")

#: Parts whose quotes are verified with an ``info`` note naming the part (BEV031).
NOTED_PARTS = frozenset(PARTS) - {"title", "abstract", "body"}


@dataclass(frozen=True, slots=True)
class Passage:
    """One unit of text a quote can be taken from (see module docstring).

    ``kind`` is the element it comes from: ``title``, ``subtitle``, ``abstract``, ``paragraph``,
    ``section-title``, ``list-item``, ``definition``, ``boxed-text``, ``quote``, ``figure-caption``,
    ``table-caption``, ``box-caption``, ``table``, ``table-footnote``, ``footnote``,
    ``author-note``, ``supplementary-caption``, ``reference``. ``section`` is the heading path
    (``"Results / EGFR mutations"``); ``section_type`` a normalised type (``intro``, ``methods``,
    ``results``, ``discussion``, ``conclusions``, ``abstract``, back-matter types, or ``""``);
    ``label`` the printed label (``Table 2``, ``Figure 3``, ``12`` for a reference); ``cited``
    the span of the cited work's title in a reference.
    """

    id: str
    kind: str
    section: str
    section_type: str
    text: str
    match: str
    part: str = "body"
    label: str = ""
    markers: tuple[tuple[int, int], ...] = ()
    breaks: tuple[int, ...] = ()
    aliases: tuple[str, ...] = ()
    cited: tuple[int, int] | None = None
    scripts: tuple[tuple[int, int, str], ...] = ()  # printed <sup>/<sub> spans in ``text`` (not citations)

    @property
    def back_matter(self) -> bool:
        return self.section_type in BACK_MATTER or self.part in ("back-matter", "references", "footnote",
                                                                  "supplementary")

    def describe(self) -> str:
        """Where the passage is, for a person: ``the reference list (12)``, ``Table 2``, ``Results``."""
        if self.part == "references":
            return f"the reference list ({self.label})" if self.label else "the reference list"
        if self.label:
            return self.label
        if self.part in ("title", "abstract"):
            return f"the {self.part}"
        return self.section or self.part


@dataclass(frozen=True, slots=True)
class Article:
    title: str
    passages: tuple[Passage, ...]
    ids: dict[str, str] = field(default_factory=dict)
    markers: frozenset[str] = frozenset()

    def by_id(self, passage_id: str) -> Passage | None:
        """The passage with this id; else the first one that answers to it (a section id, or the
        0.8.0 position of an element nested in it)."""
        for passage in self.passages:
            if passage.id == passage_id:
                return passage
        for passage in self.passages:
            if passage_id in passage.aliases:
                return passage
        return None

    def passages_for(self, *, kinds: Iterable[str] | None = None, parts: Iterable[str] | None = None,
                     back_matter: bool = False) -> list[Passage]:
        """Passages a librarian shows: by default every kind, without back matter."""
        wanted = frozenset(kinds) if kinds is not None else None
        wanted_parts = frozenset(parts) if parts is not None else None
        return [p for p in self.passages
                if (back_matter or not p.back_matter) and (wanted is None or p.kind in wanted)
                and (wanted_parts is None or p.part in wanted_parts)]


def parse_jats(data: bytes, *, source: str | None = None) -> Article:
    """Parse JATS bytes into an :class:`Article`; malformed XML is an ``InputError`` naming the source."""
    from lxml import etree

    from .jats_walk import Walker, local

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise InputError(f"JATS full text is not well-formed XML ({exc}); re-pin the full text",
                         file=source) from exc
    article = root if local(root) == "article" else next(
        (el for el in root.iter() if local(el) == "article"), None)
    if article is None:
        raise InputError("no <article> element in the JATS full text; pin a PMC JATS article", file=source)
    walker = Walker(root)
    walker.article(article)
    return Article(title=walker.title, passages=tuple(walker.passages), ids=walker.ids,
                   markers=frozenset(walker.marker_keys))


def is_jats(data: bytes) -> bool:
    """Whether bytes look like a JATS article (a cheap sniff of the first few kilobytes)."""
    head = data[:4096].lstrip()
    return head.startswith(b"<") and (b"<article" in head or b"<pmc-articleset" in head)
