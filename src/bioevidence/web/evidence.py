"""Each evidence quote of a record inside its pinned passage, for the record page.

Everything here is read through the literature grounder the gate uses (``LiteratureGrounder``):
``catalogue.get``, ``metadata`` and ``paper`` read the pinned, re-hashed bytes; a verified
quote's place comes from the report's ``quote_locations``; an unverified one is looked for with
``PaperText.locate`` and, when it is not in the paper, explained with ``inside_word`` and
``closest``. No second matcher: what the page shows is what the gate decided on.

A long record is shown a page of items at a time (``indexes``): only the papers those items cite
are read, and the closest passage of a quote that is not in its paper (a word diff over the whole
paper, the costly part) is computed only when asked for (``closest=False`` leaves it to
:func:`item_view`, which the record page calls for one item on demand).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import BioevidenceError
from ..gate.report import Report
from .redact import public

__all__ = ["ItemView", "Notice", "SourceView", "evidence_view", "item_view"]

#: Characters of a passage shown on each side of a quote (the rest is elided).
CONTEXT = 900


@dataclass(frozen=True, slots=True)
class Notice:
    kind: str  # retraction | expression_of_concern
    text: str


@dataclass(frozen=True, slots=True)
class SourceView:
    id: str
    uri: str
    title: str
    source_type: str
    pinned: str  # what is pinned: "full text", "abstract only", "not in the snapshot catalogue", …
    pinned_title: str | None = None
    notices: tuple[Notice, ...] = ()
    problem: str | None = None  # the pinned bytes could not be read


@dataclass(frozen=True, slots=True)
class ItemView:
    """One evidence item: its quote and where (or whether) it is in the paper."""

    id: str
    direction: str
    locator: str
    quote: str
    evidence_type: str
    method: str
    source_id: str
    verified: bool
    state: str  # verified | in-paper | cut-word | not-found | no-paper | not-literature
    where: str = ""  # the passage's place for a person ("Results", "Table 2", "the abstract")
    part: str = ""
    passage_id: str = ""
    before: str = ""  # the passage around the quote: before + match + after
    match: str = ""
    after: str = ""
    cut_word: str = ""  # a quote cut inside a word: the whole word, and the part left out
    cut_part: str = ""
    cut_where: str = ""
    reversal: bool = False
    closest_where: str = ""
    closest_excerpt: str = ""
    closest_description: str = ""
    differences: tuple[tuple[str, str], ...] = ()
    findings: tuple[Any, ...] = field(default_factory=tuple)
    index: int = 0  # its place among the record's evidence items (0-based)
    closest_pending: bool = False  # not in the paper, and the closest passage was not computed (on demand)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _literature(grounders: list[Any]) -> Any:
    from ..gate.grounders.literature import LiteratureGrounder

    return next((g for g in grounders if isinstance(g, LiteratureGrounder)), None)


def _work(grounder: Any, source: dict[str, Any]) -> Any:
    work = grounder.catalogue.get(source.get("uri")) if source.get("uri") else None
    sha = source.get("sha256")
    if work is None and isinstance(sha, str):
        work = next((w for w in grounder.catalogue if sha in w.hashes), None)
    return work


def _cut(text: str, start: int, end: int) -> tuple[str, str, str]:
    before, match, after = text[:start], text[start:end], text[end:]
    if len(before) > CONTEXT:
        before = "… " + before[-CONTEXT:].split(" ", 1)[-1]
    if len(after) > CONTEXT:
        after = after[:CONTEXT].rsplit(" ", 1)[0] + " …"
    return before, match, after


def evidence_view(record: dict[str, Any], report: Report, grounders: list[Any], *,
                  indexes: Iterable[int] | None = None, closest: bool = True
                  ) -> tuple[list[SourceView], list[ItemView]]:
    """The sources (with retraction and concern notices) and the evidence items of ``record`` at
    ``indexes`` (default: every one); ``closest=False`` leaves the closest passage for later."""
    grounder = _literature(grounders)
    raw_items = _list(record.get("evidence_items"))
    wanted = range(len(raw_items)) if indexes is None else [i for i in indexes if 0 <= i < len(raw_items)]
    cited = {str(raw_items[i].get("source_artifact_id")) for i in wanted if isinstance(raw_items[i], dict)}
    sources: list[SourceView] = []
    papers: dict[str, Any] = {}
    for source in _list(record.get("source_artifacts")):
        if isinstance(source, dict):
            view, paper = _source(grounder, source, read=str(source.get("id")) in cited)
            sources.append(view)
            if paper is not None:
                papers[view.id] = paper
    pinned = {s.id for s in sources if grounder is not None and s.pinned != "not in the snapshot catalogue"}
    by_path = _findings_by_item(report)
    direction = _directions(record)
    located = {q.item_id: q for q in report.quotes}
    items: list[ItemView] = []
    for index in wanted:
        item = raw_items[index]
        if not isinstance(item, dict):
            continue
        items.append(_item(item, index, direction, papers, located, report, tuple(by_path.get(index, ())),
                           str(item.get("source_artifact_id")) in pinned, closest))
    return sources, items


def item_view(record: dict[str, Any], report: Report, grounders: list[Any], index: int) -> ItemView | None:
    """One evidence item in full, its closest passage computed (``None`` when there is no such item)."""
    _, items = evidence_view(record, report, grounders, indexes=[index], closest=True)
    return items[0] if items else None


def _source(grounder: Any, source: dict[str, Any], *, read: bool) -> tuple[SourceView, Any]:
    """A source as the page shows it, and its paper when ``read`` (one of the shown items cites it)."""
    sid = str(source.get("id"))
    base: dict[str, Any] = {"id": sid, "uri": str(source.get("uri") or ""), "title": str(source.get("title") or ""),
                            "source_type": str(source.get("source_type") or "")}
    if grounder is None:
        return SourceView(**base, pinned="no literature snapshot configured (serve --snapshot-dir)"), None
    work = _work(grounder, source)
    if work is None:
        return SourceView(**base, pinned="not in the snapshot catalogue"), None
    paper = None
    try:
        meta = grounder.metadata(work)
        if read and meta.found:
            paper = grounder.paper(work, meta)
    except BioevidenceError as exc:
        return SourceView(**base, pinned=work.key, problem=public(exc.message)), None
    notices: list[Notice] = []
    if meta.retracted:
        named = ", ".join(str(n) for n in meta.retraction_notices) or "see PubMed"
        notices.append(Notice("retraction", f"Retracted (notice: {named})"))
    if meta.expression_of_concern:
        named = ", ".join(str(n) for n in meta.concern_notices) or "see PubMed"
        notices.append(Notice("expression_of_concern", f"Expression of concern (notice: {named})"))
    if not meta.found:
        what = "no such work according to the pinned metadata"
    elif read and paper is None:
        what = "no open text pinned"
    elif read:
        what = "full text" if work.fulltext_sha256 else "abstract only"
    else:  # not read for this page: what the catalogue pins
        what = "full text" if work.fulltext_sha256 else (
            "abstract only" if work.abstract_sha256 or meta.abstract else "no open text pinned")
    return SourceView(**base, pinned=f"{work.key}: {what}", pinned_title=meta.title, notices=tuple(notices)), paper


def _findings_by_item(report: Report) -> dict[int, list[Any]]:
    by_path: dict[int, list[Any]] = {}
    for f in report.findings:
        if f.field_path.startswith("$.evidence_items["):
            try:
                index = int(f.field_path[len("$.evidence_items["):].split("]", 1)[0])
            except ValueError:
                continue
            by_path.setdefault(index, []).append(f)
    return by_path


def _directions(record: dict[str, Any]) -> dict[str, str]:
    raw = record.get("statement")
    statement: dict[str, Any] = raw if isinstance(raw, dict) else {}
    out: dict[str, str] = {}
    for line in statement.get("evidence_lines") or []:
        if isinstance(line, dict):
            for item_id in line.get("evidence_item_ids") or []:
                out.setdefault(str(item_id), str(line.get("direction") or ""))
    return out


def _item(item: dict[str, Any], index: int, direction: dict[str, str], papers: dict[str, Any],
          located: dict[str, Any], report: Report, findings: tuple[Any, ...], literature: bool,
          closest_now: bool) -> ItemView:
    from ..gate.grounders.locators import target

    item_id = str(item.get("id"))
    quote = item.get("extracted_text") if isinstance(item.get("extracted_text"), str) else ""
    base: dict[str, Any] = {
            "id": item_id, "direction": direction.get(item_id, ""), "locator": str(item.get("locator") or ""),
            "quote": quote, "evidence_type": str(item.get("evidence_type") or ""),
            "method": str(item.get("extraction_method") or ""), "source_id": str(item.get("source_artifact_id")),
            "verified": item_id in report.verified, "findings": findings, "index": index}
    paper = papers.get(base["source_id"])
    if paper is None:
        return ItemView(**base, state="no-paper" if literature else "not-literature")
    location = located.get(item_id)
    if location is not None:
        passage = paper.passage(location.passage)
        if passage is not None and 0 <= location.start < location.end <= len(passage.text):
            before, match, after = _cut(passage.text, location.start, location.end)
            return ItemView(**base, state="verified", where=passage.describe(), part=passage.part,
                            passage_id=passage.id, before=before, match=match, after=after)
    named = target(item.get("locator"), paper.passages)
    hit = paper.locate(quote, named.indexes if named is not None else ())
    if hit is not None:
        before, match, after = _cut(hit.passage.text, hit.start, hit.end)
        common: dict[str, Any] = {"where": hit.passage.describe(), "part": hit.passage.part,
                                  "passage_id": hit.passage.id, "before": before, "match": match, "after": after}
        if hit.boundary.ok:
            return ItemView(**base, state="in-paper", **common)
        return ItemView(**base, state="cut-word", cut_word=hit.boundary.word, cut_part=hit.boundary.cut,
                        cut_where=hit.boundary.where, reversal=hit.boundary.negation, **common)
    inside = paper.inside_word(quote)
    if inside is not None:
        passage, boundary = inside
        return ItemView(**base, state="cut-word", where=passage.describe(), part=passage.part, passage_id=passage.id,
                        cut_word=boundary.word, cut_part=boundary.cut, cut_where=boundary.where,
                        reversal=boundary.negation)
    if not closest_now:
        return ItemView(**base, state="not-found", closest_pending=True)
    closest = paper.closest(quote)
    if closest is None:
        return ItemView(**base, state="not-found")
    return ItemView(**base, state="not-found", closest_where=closest.passage.describe(),
                    closest_excerpt=closest.excerpt, closest_description=closest.describe(),
                    differences=closest.differences, part=closest.passage.part, passage_id=closest.passage.id)
