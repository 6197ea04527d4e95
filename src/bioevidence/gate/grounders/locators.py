"""Literature locators: where an evidence item says its quote is, and the right one when it is not.

A locator helps find the quote; it never rejects it. Understood forms:

* ``…#<id>``: a passage id (``#p12``, ``#n34``, the ids bioai-evidence-validator 0.8.0 gives),
  or the id of a section, figure, table or box (every passage inside it);
* plain words: a part (``abstract``, ``title``, ``references``, ``acknowledgements``, ``funding``,
  ``footnotes``, ``supplementary material``), a section type (``Results``, ``Methods``,
  ``Introduction``, ``Discussion``, ``Conclusions``), a section heading (``EGFR mutations and
  response``), or a label (``Table 2``, ``Fig. 3``, ``Figure S1``, ``Box 1``);
  a trailing ``, paragraph 3`` / ``p. 4`` is ignored, and so is a ``section=…`` key.

* the whole paper: ``full text``, ``article``, ``paper`` (every passage).

The work's own identifier (``pmid:15696205``, a PubMed URL) with no anchor names the whole work.
Anything else (``page 5``, ``Section 2.1``) names no place the grounder can find; the quote check
says so (BEV030, a warning with the locator that does). A locator that is no place in a paper at all
(:func:`not_a_place`: a file path, ``../``, a ``file:`` or ``javascript:`` URI, control characters) is
BEV024. :func:`suggest` writes the locator that names where the quote really is, in the style the
record used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...text.jats import Passage

_PART_WORDS = {
    "title": ("part", "title"), "article title": ("part", "title"),
    "abstract": ("part", "abstract"), "summary": ("part", "abstract"), "author summary": ("part", "abstract"),
    "body": ("part", "body"), "main text": ("part", "body"),
    "references": ("part", "references"), "reference list": ("part", "references"),
    "bibliography": ("part", "references"), "reference": ("part", "references"),
    "footnote": ("part", "footnote"), "footnotes": ("part", "footnote"), "author notes": ("part", "footnote"),
    "back matter": ("part", "back-matter"), "supplementary": ("part", "supplementary"),
    "supplementary material": ("part", "supplementary"), "supporting information": ("part", "supplementary"),
    "acknowledgements": ("type", "acknowledgements"), "acknowledgments": ("type", "acknowledgements"),
    "funding": ("type", "funding"), "competing interests": ("type", "competing-interests"),
    "conflict of interest": ("type", "competing-interests"), "author contributions": ("type", "author-contributions"),
    "data availability": ("type", "data-availability"),
    "introduction": ("type", "intro"), "background": ("type", "intro"), "intro": ("type", "intro"),
    "methods": ("type", "methods"), "materials and methods": ("type", "methods"), "method": ("type", "methods"),
    "results": ("type", "results"), "result": ("type", "results"), "findings": ("type", "results"),
    "discussion": ("type", "discussion"), "results and discussion": ("type", "results"),
    "full text": ("all", ""), "fulltext": ("all", ""), "full-text": ("all", ""), "article": ("all", ""),
    "paper": ("all", ""), "whole paper": ("all", ""), "whole text": ("all", ""),
    "conclusion": ("type", "conclusions"), "conclusions": ("type", "conclusions"),
}
_LABEL = re.compile(r"^(?:supplementary\s+|suppl\.?\s+|additional\s+file\s*)?"
                    r"(fig(?:ure)?s?\.?|tab(?:le)?s?\.?|box|scheme|appendix|s\d*\s*(?:fig|table))\s*[a-z]?\d+[a-z]?$",
                    re.I)
_TRAILER = re.compile(r"[,;]?\s*(?:(?:paragraph|para\.?|p\.|page|line|sentence)\s*\d+|\(\d+\))\s*$", re.I)
_SPACE = re.compile(r"[\s\u00a0]+")


def _key(text: str) -> str:
    """How names are compared: case-folded, punctuation dropped, ``fig`` → ``figure``, no spaces."""
    text = _SPACE.sub(" ", text).strip().casefold()
    text = re.sub(r"^(supplementary|suppl\.?)\s+", "s", text)
    text = re.sub(r"\bfigs?\b\.?|\bfigures?\b", "figure", text)
    text = re.sub(r"\btabs?\b\.?|\btables\b", "table", text)
    return re.sub(r"[^0-9a-z]", "", text)


@dataclass(frozen=True, slots=True)
class Target:
    """What a locator names: passage indexes (empty: it names something the paper lacks) and how."""

    indexes: frozenset[int]
    how: str  # "anchor" | "part" | "type" | "section" | "label"
    named: str  # the anchor or words as written


def anchors(passages: list[Passage]) -> dict[str, list[int]]:
    """Every passage id and alias, with the indexes of the passages it names (in order): what
    :func:`target` looks an anchor up in, built once per paper instead of a scan per locator."""
    out: dict[str, list[int]] = {}
    for i, p in enumerate(passages):
        for name in (p.id, *p.aliases):
            named = out.setdefault(name, [])
            if not named or named[-1] != i:
                named.append(i)
    return out


def _named(anchor: str, passages: list[Passage], by_id: dict[str, list[int]] | None) -> list[int]:
    """Indexes of the passages whose id is ``anchor`` or that list it among their aliases."""
    if by_id is not None:
        return by_id.get(anchor, [])
    return [i for i, p in enumerate(passages) if p.id == anchor or anchor in p.aliases]


def target(locator: object, passages: list[Passage], by_id: dict[str, list[int]] | None = None) -> Target | None:
    """The passages a locator names, or ``None`` when it names nothing a grounder can check.

    ``by_id``: :func:`anchors` of ``passages`` (looked up instead of scanning every passage)."""
    if not isinstance(locator, str) or not locator.strip():
        return None
    raw = locator.strip()
    if "#" in raw:
        anchor = raw.rsplit("#", 1)[1].strip()
        if anchor:
            hits = _named(anchor, passages, by_id)
            if hits:
                return Target(frozenset(hits), "anchor", anchor)
            words = _words_target(anchor, passages)
            return words if words is not None else Target(frozenset(), "anchor", anchor)
        raw = raw.rsplit("#", 1)[0]
    if "=" in raw and "://" not in raw:
        pairs = dict(part.partition("=")[::2] for part in raw.split(";") if "=" in part)
        value = pairs.get("section") or pairs.get("part") or pairs.get("passage") or pairs.get("paragraph")
        if not value:
            return None
        raw = value.strip()
        hits = _named(raw, passages, by_id)
        if hits:
            return Target(frozenset(hits), "anchor", raw)
    if "://" in raw or re.match(r"^(pmid|pmcid|doi):", raw, re.I):
        return None
    return _words_target(raw, passages)


_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):", re.I)
_CONTROL = re.compile("[\x00-\x1f\x7f]")
_PLACE_SCHEMES = frozenset({"pmid", "pmcid", "pmc", "doi", "http", "https", "urn", "section", "passage"})


def not_a_place(locator: object) -> str | None:
    """Why ``locator`` cannot be a place in a paper (``None`` when it may be one): a file path
    (``/etc/passwd``, ``../x``, ``~/x``, ``C:\\x``), a URI of a scheme that names no paper
    (``file:``, ``javascript:``, ``data:``), or control characters."""
    if not isinstance(locator, str):
        return None
    raw = locator.strip()
    if _CONTROL.search(raw) is not None:
        return "it holds control characters"
    head = raw.split("#", 1)[0]
    if head.startswith(("/", "~", "\\")) or re.match(r"^[A-Za-z]:\\", head) or \
            any(seg == ".." for seg in re.split(r"[/\\]", head)):
        return "it is a file path"
    scheme = _SCHEME.match(head)
    if scheme and "=" not in head.split(":", 1)[0] and scheme.group(1).lower() not in _PLACE_SCHEMES \
            and (head[scheme.end():].startswith("/") or scheme.group(1).lower() in ("javascript", "data", "file",
                                                                                     "vbscript", "about")):
        return f"it is a {scheme.group(1).lower()}: URI"
    return None


def _words_target(words: str, passages: list[Passage]) -> Target | None:
    text = _TRAILER.sub("", words).strip().strip(".:").strip()
    if not text:
        return None
    folded = _SPACE.sub(" ", text).casefold()
    if folded in _PART_WORDS:
        kind, value = _PART_WORDS[folded]
        if kind == "all":
            return Target(frozenset(range(len(passages))), "part", text)
        if kind == "part":
            hits = [i for i, p in enumerate(passages) if p.part == value]
        else:
            hits = [i for i, p in enumerate(passages) if p.section_type == value
                    or any(_key(s) == _key(text) for s in p.section.split(" / "))]
        return Target(frozenset(hits), kind, text)
    if _LABEL.match(text):
        key = _key(text)
        hits = [i for i, p in enumerate(passages) if p.label and _key(p.label) == key]
        return Target(frozenset(hits), "label", text)
    key = _key(text)
    if len(key) < 4:
        return None
    hits = [i for i, p in enumerate(passages) if any(_key(s) == key for s in p.section.split(" / ") if s)]
    return Target(frozenset(hits), "section", text) if hits else None


def suggest(locator: str, named: Target, passage: Passage) -> str:
    """The locator naming ``passage``, written in the style of ``locator``."""
    if named.how == "anchor" and "#" in locator:
        return locator.rsplit("#", 1)[0] + "#" + passage.id
    if named.how == "anchor":
        return passage.id
    if passage.part in ("title", "abstract", "references"):
        return passage.part
    if passage.label and (named.how == "label" or passage.part in ("caption", "table", "footnote", "supplementary")):
        return passage.label
    if passage.section:
        return passage.section.split(" / ")[0]
    return passage.label or passage.part
