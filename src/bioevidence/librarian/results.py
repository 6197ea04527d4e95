"""What ``Librarian.ask`` returns: papers, and sentences ranked across them, each a verbatim quote.

:class:`Answer` holds the candidate papers (best first) and the ranked sentences
(:class:`Span`: a byte-exact slice of a pinned passage, whether it is about the question, and its
stance toward the question read as a claim, with the stance model's confidence).
:meth:`Answer.items` and :meth:`Answer.to_json` are what the CLI prints and the record builder
(:mod:`bioevidence.librarian.records`) turns into an evidence record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .index import DocInfo, PassageRow
from .planner import Plan

__all__ = ["Answer", "Paper", "Span", "artifact_id", "uri"]


@dataclass
class Span:
    passage: PassageRow
    sentences: list[int]
    text: str
    score: float
    paper: int = -1  # index into ``Answer.papers``
    stance: str = "neutral"  # supports | contradicts | neutral | undetermined: toward the question read as a claim
    stance_by: str = ""  # "model" (the offline stance model) | "relevance" (not about the question) | "llm"
    # | "unavailable" (no stance model here: the sentence is undetermined)
    stance_confidence: float | None = None  # the stance model's confidence in the label shown
    relevant: bool = True  # about the question (librarian.relevance); False: neutral, never counted
    relevance: str = ""  # why not relevant, in words ("" when relevant)

    @property
    def start(self) -> int:
        return self.passage.sentences[self.sentences[0]][0]

    @property
    def end(self) -> int:
        return self.passage.sentences[self.sentences[-1]][1]

    @property
    def scripts(self) -> list[list[Any]]:
        """The paper's superscripts and subscripts inside :attr:`text`, as ``[start, end, "sup"|"sub"]``
        offsets into it (display only: the text itself stays the verbatim slice)."""
        lo, hi = self.start, self.end
        return [[max(a, lo) - lo, min(b, hi) - lo, kind] for a, b, kind in self.passage.scripts if a < hi and b > lo]


@dataclass
class Paper:
    doc: DocInfo
    fused: float
    subquery: str
    score: float = 0.0
    spans: list[Span] = field(default_factory=list)
    accepted: bool = False
    #: the fused score of the question's own subqueries when RM3 feedback re-ordered the pool (None:
    #: ``fused``): the paper's prior in the sentence ranking, which feedback built from one paper's
    #: words must not tilt toward that paper's sentences
    base: float | None = None
    prior: float = 0.0  # the paper's weight in the sentence ranking (``score`` with ``base``)
    scored: list[tuple[float, PassageRow, int]] = field(default_factory=list, repr=False)


def uri(d: DocInfo) -> str:
    if d.pmid:
        return f"pmid:{d.pmid}"
    if d.pmcid:
        return f"pmcid:{d.pmcid}"
    if d.doi:
        return f"doi:{d.doi}"
    return d.doc_id if ":" in d.doc_id else f"doc:{d.doc_id}"


def artifact_id(d: DocInfo) -> str:
    return f"src:{uri(d)}"


@dataclass
class Answer:
    question: str
    plan: Plan
    papers: list[Paper]
    fallback: str | None = None
    debug: dict[str, Any] = field(default_factory=dict)
    scope: tuple[str, ...] = ("literature",)
    ranked: list[Span] = field(default_factory=list)  # sentences across the pool, best first
    withheld: list[Paper] = field(default_factory=list)  # retracted papers left out (include_retracted=False)
    candidates: list[Any] = field(default_factory=list, repr=False)  # every ranked sentence (ranking.Candidate)
    provenance: dict[str, Any] = field(default_factory=dict)  # tool version, index, the releases the plan read

    def items(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for span in self.ranked:
            paper = self.papers[span.paper]
            d = paper.doc
            out.append({
                "rank": len(out) + 1, "doc_id": d.doc_id, "pmid": d.pmid, "pmcid": d.pmcid, "doi": d.doi,
                "title": d.title, "authors": d.authors, "journal": d.journal, "year": d.year,
                "text": span.text, "scripts": span.scripts, "sentences": span.sentences,
                "paragraph_id": span.passage.pid,
                "start": span.start, "end": span.end, "section": span.passage.section,
                "locator": f"{uri(d)}#{span.passage.pid}", "sha256": d.sha256, "retrieved_at": d.retrieved_at,
                "subquery": paper.subquery,
                "score": round(paper.score, 4), "sentence_score": round(span.score, 4),
                "paper_rank": span.paper + 1, "stance": span.stance, "stance_by": span.stance_by,
                "stance_confidence": span.stance_confidence, "relevant": span.relevant,
                "relevance": span.relevance or None,
                "source_artifact_id": artifact_id(d), "retracted": d.retracted,
                "expression_of_concern": d.concern, "notices": list(d.notices),
            })
        return out

    def to_json(self) -> dict[str, Any]:
        items = self.items()
        artifacts: dict[str, dict[str, Any]] = {}
        for span in self.ranked:
            d = self.papers[span.paper].doc
            artifacts.setdefault(artifact_id(d), {
                "id": artifact_id(d), "title": d.title or d.doc_id, "source_type": "publication",
                "uri": uri(d), "version": f"sha256:{d.sha256[:12]}",
                "retrieved_at": d.retrieved_at or "1970-01-01T00:00:00Z", "sha256": d.sha256,
            })
        evidence = [{
            "id": f"ev:{it['rank']}", "source_artifact_id": it["source_artifact_id"], "locator": it["locator"],
            "extracted_text": it["text"], "evidence_type": "literature_quote",
            "extraction_method": "deterministic_parser", "scope": list(self.scope),
        } for it in items]
        papers = [{"rank": n + 1, "doc_id": p.doc.doc_id, "title": p.doc.title, "year": p.doc.year,
                   "journal": p.doc.journal, "pmid": p.doc.pmid, "pmcid": p.doc.pmcid, "doi": p.doc.doi,
                   "score": round(p.score, 4), "retracted": p.doc.retracted,
                   "expression_of_concern": p.doc.concern, "notices": list(p.doc.notices)}
                  for n, p in enumerate(self.papers)]
        withheld = [{"doc_id": p.doc.doc_id, "title": p.doc.title, "notices": list(p.doc.notices)}
                    for p in self.withheld]
        return {"question": self.question, "fallback": self.fallback, "plan": self.plan.to_json(),
                "items": items, "papers": papers, "withheld_retracted": withheld,
                "source_artifacts": list(artifacts.values()), "evidence_items": evidence,
                "provenance": self.provenance, "debug": self.debug}
