"""Each evidence quote of a record inside its pinned passage, for the record page.

Everything here is read through the literature grounder the gate uses (``LiteratureGrounder``):
``catalogue.get``, ``metadata`` and ``paper`` read the pinned, re-hashed bytes; a verified
quote's place comes from the report's ``quote_locations``; an unverified one is looked for with
``PaperText.locate`` and, when it is not in the paper, explained with ``inside_word`` and
``closest``. No second matcher: what the page shows is what the gate decided on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import BioevidenceError
from ..gate.report import Report
from .redact import public

__all__ = ["ItemView", "Notice", "SourceView", "evidence_view"]

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


def evidence_view(record: dict[str, Any], report: Report, grounders: list[Any]
                  ) -> tuple[list[SourceView], list[ItemView]]:
    """The sources (with retraction and concern notices) and every evidence item of ``record``."""
    grounder = _literature(grounders)
    located = {q.item_id: q for q in report.quotes}
    sources: list[SourceView] = []
    papers: dict[str, Any] = {}
    raw_sources = _list(record.get("source_artifacts"))
    for source in raw_sources:
        if not isinstance(source, dict):
            continue
        sid = str(source.get("id"))
        base: dict[str, Any] = {"id": sid, "uri": str(source.get("uri") or ""), "title": str(source.get("title") or ""),
                "source_type": str(source.get("source_type") or "")}
        work = _work(grounder, source) if grounder is not None else None
        if grounder is None:
            sources.append(SourceView(**base, pinned="no literature snapshot configured (serve --snapshot-dir)"))
            continue
        if work is None:
            sources.append(SourceView(**base, pinned="not in the snapshot catalogue"))
            continue
        try:
            meta = grounder.metadata(work)
            paper = grounder.paper(work, meta) if meta.found else None
        except BioevidenceError as exc:
            sources.append(SourceView(**base, pinned=work.key, problem=public(exc.message)))
            continue
        notices: list[Notice] = []
        if meta.retracted:
            named = ", ".join(str(n) for n in meta.retraction_notices) or "see PubMed"
            notices.append(Notice("retraction", f"Retracted (notice: {named})"))
        if meta.expression_of_concern:
            named = ", ".join(str(n) for n in meta.concern_notices) or "see PubMed"
            notices.append(Notice("expression_of_concern", f"Expression of concern (notice: {named})"))
        what = ("full text" if work.fulltext_sha256 else "abstract only") if paper is not None else (
            "no such work according to the pinned metadata" if not meta.found else "no open text pinned")
        sources.append(SourceView(**base, pinned=f"{work.key}: {what}", pinned_title=meta.title,
                                  notices=tuple(notices)))
        if paper is not None:
            papers[sid] = paper
    by_path: dict[int, list[Any]] = {}
    for f in report.findings:
        if f.field_path.startswith("$.evidence_items["):
            try:
                index = int(f.field_path[len("$.evidence_items["):].split("]", 1)[0])
            except ValueError:
                continue
            by_path.setdefault(index, []).append(f)
    direction = _directions(record)
    items: list[ItemView] = []
    raw_items = _list(record.get("evidence_items"))
    for index, item in enumerate(raw_items):
        if not isinstance(item, dict):
            continue
        items.append(_item(item, index, direction, papers, located, report, tuple(by_path.get(index, ())),
                           grounder is not None and any(s.id == str(item.get("source_artifact_id")) and
                                                        s.pinned != "not in the snapshot catalogue"
                                                        for s in sources)))
    return sources, items


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
          located: dict[str, Any], report: Report, findings: tuple[Any, ...], literature: bool) -> ItemView:
    from ..gate.grounders.locators import target

    item_id = str(item.get("id"))
    quote = item.get("extracted_text") if isinstance(item.get("extracted_text"), str) else ""
    base: dict[str, Any] = {
            "id": item_id, "direction": direction.get(item_id, ""), "locator": str(item.get("locator") or ""),
            "quote": quote, "evidence_type": str(item.get("evidence_type") or ""),
            "method": str(item.get("extraction_method") or ""), "source_id": str(item.get("source_artifact_id")),
            "verified": item_id in report.verified, "findings": findings}
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
    closest = paper.closest(quote)
    if closest is None:
        return ItemView(**base, state="not-found")
    return ItemView(**base, state="not-found", closest_where=closest.passage.describe(),
                    closest_excerpt=closest.excerpt, closest_description=closest.describe(),
                    differences=closest.differences, part=closest.passage.part, passage_id=closest.passage.id)
