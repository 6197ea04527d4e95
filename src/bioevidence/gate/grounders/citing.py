"""The quote check of the literature grounder: one evidence item against its pinned paper.

:func:`check_quote` returns the findings for an item's quote (``extracted_text``) and, when the
quote is the paper's text, where it is (:class:`~bioevidence.gate.grounding.QuoteLocation`):

* no pinned text → BEV015; fewer than five words → BEV015;
* in the paper, cleanly cut at word edges → verified; and
  - not where the locator says, or the locator (an anchor, words) names no place of the paper →
    BEV030 warning naming the right locator (verdict unchanged);
  - a locator that is no place in a paper at all (a file path, a ``file:``/``javascript:`` URI)
    → BEV024 (rejected: the record points somewhere else than the pinned work);
  - outside the title, abstract and body → BEV031 note naming the part ("from the reference
    list: the title of a cited work");
  - stopping mid-sentence just before a negation or restriction → BEV028 (review);
* starting or ending inside a word of the paper → BEV017 naming the whole word; a dropped
  negating prefix (``in-``, ``un-``, ``non-``, ``ir-``, ``im-``, ``dis-``) is named a reversal;
* not in the paper → BEV017 naming the closest passage and what differs (fix: ``requote``).
"""

from __future__ import annotations

from typing import Any

from ...errors import excerpt
from ...sources.identifiers import parse_identifier
from ...text.normalize import normalize, word_count
from ..findings import Finding, Fix
from ..grounding import QuoteLocation, finding
from .locators import Target, not_a_place, suggest, target
from .quotes import Hit, PaperText

MIN_QUOTE_WORDS = 5

_PART_NOTES = {
    "caption": "a caption",
    "table": "a table's cells",
    "footnote": "a footnote",
    "back-matter": "the back matter",
    "supplementary": "a supplementary-material caption",
    "sub-article": "a sub-article",
    "references": "the reference list",
}


def _part_note(hit: Hit) -> str:
    passage = hit.passage
    where = _PART_NOTES[passage.part]
    if passage.part == "references":
        what = "the title of a cited work" if hit.in_cited_title else "an entry of the bibliography"
        ref = f" (reference {passage.label})" if passage.label else ""
        return f"the quote is from the reference list: {what}{ref}, not a finding of this paper"
    if passage.part == "caption":
        kind = {"figure-caption": "a figure caption", "table-caption": "a table caption",
                "box-caption": "a box caption"}.get(passage.kind, where)
        return f"the quote is from {kind}" + (f" ({passage.label})" if passage.label else "")
    if passage.part == "back-matter":
        name = passage.section.split(" / ")[0] if passage.section else passage.section_type
        return f"the quote is from the back matter ({name})" if name else "the quote is from the back matter"
    if passage.part == "footnote" and passage.kind == "author-note":
        return "the quote is from an author note"
    label = f" ({passage.label})" if passage.label else ""
    return f"the quote is from {where}{label}"


def check_quote(item: dict[str, Any], path: str, paper: PaperText, uses: list[str]
                ) -> tuple[list[Finding], QuoteLocation | None]:
    quote = item.get("extracted_text")
    quote = quote if isinstance(quote, str) else ""
    text_path = f"{path}.extracted_text"
    canonical = normalize(quote)
    if word_count(canonical, canonical=True, up_to=MIN_QUOTE_WORDS) < MIN_QUOTE_WORDS:
        return [finding("BEV015", f"the quote has fewer than {MIN_QUOTE_WORDS} words, too short to confirm; "
                        "quote at least one full clause", text_path, uses)], None
    locator = item.get("locator")
    hostile = not_a_place(locator)
    named = None if hostile else target(locator, paper.passages, paper.anchors())
    hit = paper.locate(quote, named.indexes if named is not None else ())
    if hit is not None and not hit.boundary.ok:
        return [_cut_word(hit.boundary, text_path, uses, hit.text)], None
    if hit is None:
        return [_not_found(quote, paper, text_path, path, uses)], None
    out: list[Finding] = []
    index = paper.index_of(hit.passage)
    if hostile is not None:
        right = hit.passage.section.split(" / ")[0] if hit.passage.section else hit.passage.part
        out.append(finding("BEV024", f"the locator {excerpt(str(locator), 60)} is no place in a paper ({hostile}); "
                           f"the quote is in {hit.passage.describe()} (#{hit.passage.id})", f"{path}.locator", uses,
                           Fix("replace", f"{path}.locator", right)))
    elif named is None and _names_something(locator):
        right = suggest(str(locator), Target(frozenset(), "section", str(locator)), hit.passage)
        out.append(finding("BEV030", f"the locator {excerpt(str(locator), 60)} names no place the grounder can find "
                           f"in the paper; the quote is in {hit.passage.describe()} (#{hit.passage.id}), so the "
                           f"locator could be '{right}'", f"{path}.locator", uses,
                           Fix("replace", f"{path}.locator", right)))
    elif named is not None and not named.indexes and named.how == "anchor":
        right = suggest(str(locator), named, hit.passage)
        out.append(finding("BEV030", f"the locator's anchor #{named.named} names no passage of the paper; the quote "
                           f"is in {hit.passage.describe()} (#{hit.passage.id}); the locator should be '{right}'",
                           f"{path}.locator", uses, Fix("replace", f"{path}.locator", right)))
    elif named is not None and index not in named.indexes:
        right = suggest(str(locator), named, hit.passage)
        said = f"#{named.named}" if named.how == "anchor" else f"'{named.named}'"
        out.append(finding("BEV030", f"the quote is not at {said} but in {hit.passage.describe()} "
                           f"(#{hit.passage.id}); the locator should be '{right}'", f"{path}.locator", uses,
                           Fix("replace", f"{path}.locator", right)))
    if hit.passage.part in _PART_NOTES:
        out.append(finding("BEV031", _part_note(hit), text_path, uses))
    cue = paper.cut_before_cue(hit)
    if cue is not None:
        rest, extended = cue
        out.append(finding("BEV028", f"the quote stops mid-sentence just before '{rest}'; the full sentence "
                           "may restrict or negate it", text_path, uses,
                           Fix("requote", text_path, extended, f"the sentence continues '{rest}'")))
    item_id = item.get("id")
    location = QuoteLocation(item_id if isinstance(item_id, str) else "", hit.passage.part, hit.passage.id,
                             hit.passage.kind, hit.passage.section, hit.passage.label, hit.start, hit.end)
    return out, location


def _names_something(locator: object) -> bool:
    """A locator that claims a place (not empty, not just the work's identifier or URL)."""
    if not isinstance(locator, str) or not locator.strip():
        return False
    head = locator.strip().split("#", 1)[0].strip()
    return parse_identifier(head) is None and not head.lower().startswith(("http://", "https://"))


def _cut_word(boundary: Any, text_path: str, uses: list[str], matched: str) -> Finding:
    word, cut = boundary.word, boundary.cut
    whole = cut + matched if boundary.where == "starts" else matched + cut
    if boundary.negation:
        return finding("BEV017", f"the quote starts inside '{word}': it drops the negating prefix '{cut}', "
                       "which reverses the paper's meaning", text_path, uses,
                       Fix("requote", text_path, whole, f"quote the whole word '{word}'"))
    if boundary.where == "starts":
        kept = word[len(cut):] if word.startswith(cut) else word
        message = f"the quote starts inside '{word}' ('{kept}' is cut from '{word}')"
    else:
        kept = word[:len(word) - len(cut)] if cut and word.endswith(cut) else word
        message = f"the quote ends inside '{word}' ('{kept}' is cut from '{word}')"
    return finding("BEV017", message + "; a quote starts and ends at word boundaries", text_path, uses,
                   Fix("requote", text_path, whole, f"quote the whole word '{word}'"))


def _not_found(quote: str, paper: PaperText, text_path: str, path: str, uses: list[str]) -> Finding:
    inside = paper.inside_word(quote)
    if inside is not None:
        return _cut_word(inside[1], text_path, uses, normalize(quote).rstrip(" ."))
    if "..." in normalize(quote) or "\u2026" in quote:
        return finding("BEV017", "the quote leaves words out ('...'); quote one continuous passage, or split it "
                       "into several evidence items", text_path, uses)
    closest = paper.closest(quote)
    if closest is None or closest.ratio < 0.5:
        return finding("BEV017", "the quote is not in the paper, and no passage is close to it", text_path, uses,
                       Fix("remove", path, detail="quote a passage of the paper"))
    detail = closest.describe()
    return finding("BEV017", f"the quote is not in the paper: {detail}", text_path, uses,
                   Fix("requote", text_path, closest.excerpt, detail))
