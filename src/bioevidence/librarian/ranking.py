"""Sentences ranked for the question across the whole pool, not in reading order.

Every sentence of every accepted paper's excerpt is a :class:`Candidate`. Its score is

    paper    × its paper's score, max-normalised over the pool
  + sentence × its own relevance (BM25 of the question's weighted terms over the sentence,
               ``k1`` 1.2, ``b`` 0.3), max-normalised within its paper
  + priors:  a finding (a results or conclusion word: "significantly", "associated",
             "increased", "showed", …) +0.2; a number +0.2; a background or methods word
             ("aim", "objective", "we investigated", …) −0.2; the first sentence of an
             abstract −0.2; in an abstract without headings, 0.4 × its relative position
             (findings come late); in a sectioned paper, results and conclusions +0.2,
             discussion +0.1, introduction and methods −0.2

and sentences are chosen greedily, each pick costing its paper ``diversity`` for every sentence
already chosen from it (the second paper's best sentence can come before the first paper's
fourth). :data:`DEFAULT` was tuned on SciFact train claims (``tools/eval_scifact.py``); the
figures, and what each part adds, are in docs/librarian.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .analysis import stem

__all__ = ["DEFAULT", "Candidate", "Weights", "cues", "rank", "relevance", "section_type", "sectioned"]

AVERAGE_SENTENCE_TERMS = 16.0  # analysed terms per sentence in SciFact abstracts (the BM25 length norm)
_FINDINGS = frozenset(stem(w) for w in (
    "significant", "significantly", "increase", "decrease", "associate", "reduce", "improve", "show", "found",
    "demonstrate", "suggest", "conclude", "indicate", "result", "reveal", "correlate", "predict", "higher",
    "lower"))
_BACKGROUND = frozenset(stem(w) for w in (
    "aim", "aims", "objective", "purpose", "background", "method", "methods", "design", "investigated",
    "examine", "evaluate", "assess", "determine", "unknown", "unclear"))


@dataclass(frozen=True)
class Weights:
    paper: float = 3.0
    sentence: float = 0.75
    finding: float = 0.2
    number: float = 0.2
    background: float = -0.2
    first: float = -0.2
    position: float = 0.4  # abstracts without headings: × relative position of the sentence
    diversity: float = 0.05
    priors: Mapping[str, float] = field(default_factory=lambda: {
        "results": 0.2, "conclusions": 0.2, "discussion": 0.1, "intro": -0.2, "methods": -0.2})


DEFAULT = Weights()


@dataclass
class Candidate:
    """One sentence of a candidate paper: where it is and what it scored."""

    paper: int  # index of the paper in the pool
    paper_score: float
    row: Any  # the index's PassageRow
    sentence: int  # index in ``row.sentences``
    relevance: float
    section_type: str = ""
    position: float = 0.0  # 0 (first) … 1 (last) within its passage
    sectioned: bool = True  # from a sectioned paper or a structured abstract
    finding: bool = False
    number: bool = False
    background: bool = False
    score: float = 0.0


def relevance(terms: Sequence[str], weights: Mapping[str, float]) -> float:
    """BM25 (``k1`` 1.2, ``b`` 0.3) of the question's weighted terms over a sentence's analysed terms."""
    tf: dict[str, int] = {}
    for t in terms:
        tf[t] = tf.get(t, 0) + 1
    norm = 1.2 * (0.7 + 0.3 * len(terms) / AVERAGE_SENTENCE_TERMS)
    return sum(w * tf[t] * 2.2 / (tf[t] + norm) for t, w in weights.items() if t in tf)


def cues(terms: Sequence[str]) -> tuple[bool, bool, bool]:
    """(finding, number, background) cues of a sentence's analysed terms."""
    present = set(terms)
    return bool(present & _FINDINGS), any(t[:1].isdigit() for t in present), bool(present & _BACKGROUND)


def _prior(c: Candidate, w: Weights) -> float:
    value = w.finding * c.finding + w.number * c.number + w.background * c.background
    if c.section_type == "abstract" and not c.sectioned:
        value += w.position * c.position + (w.first if c.sentence == 0 else 0.0)
    else:
        value += w.priors.get(c.section_type, 0.0)
    return value


def rank(candidates: Sequence[Candidate], weights: Weights = DEFAULT, limit: int | None = None,
         max_papers: int | None = None) -> list[Candidate]:
    """Candidates in the order they are shown (see module docstring); ``limit`` sentences at most,
    from ``max_papers`` papers at most."""
    if not candidates:
        return []
    top_paper = max(c.paper_score for c in candidates) or 1.0
    best: dict[int, float] = {}
    for c in candidates:
        best[c.paper] = max(best.get(c.paper, 0.0), c.relevance)
    for c in candidates:
        own = c.relevance / best[c.paper] if best[c.paper] > 0 else 0.0
        c.score = weights.paper * c.paper_score / top_paper + weights.sentence * own + _prior(c, weights)
        if not math.isfinite(c.score):
            c.score = 0.0
    by_paper: dict[int, list[Candidate]] = {}
    for c in sorted(candidates, key=lambda c: (-c.score, c.paper, c.row.ord, c.sentence)):
        by_paper.setdefault(c.paper, []).append(c)
    taken: dict[int, int] = {}
    out: list[Candidate] = []
    want = limit if limit is not None else len(candidates)
    while len(out) < want:
        pick: tuple[float, int] | None = None
        for paper, queue in by_paper.items():
            n = taken.get(paper, 0)
            if n >= len(queue) or (max_papers is not None and n == 0 and len(taken) >= max_papers):
                continue
            value = queue[n].score - weights.diversity * n
            if pick is None or value > pick[0] or (value == pick[0] and paper < pick[1]):
                pick = (value, paper)
        if pick is None:
            break
        paper = pick[1]
        out.append(by_paper[paper][taken.get(paper, 0)])
        taken[paper] = taken.get(paper, 0) + 1
    return out


def section_type(row: Any) -> str:
    """The passage's section type; inside a structured abstract, read from its heading."""
    if row.section_type != "abstract" or "/" not in row.section:
        return row.section_type or ("abstract" if row.kind == "abstract" else "")
    heading = row.section.rsplit("/", 1)[-1].lower()
    for name, words in (("results", ("result", "finding")), ("conclusions", ("conclu", "interpret")),
                        ("methods", ("method", "design", "patients", "material")),
                        ("intro", ("background", "introduction", "objective", "aim", "purpose", "context"))):
        if any(w in heading for w in words):
            return name
    return "abstract"


def sectioned(row: Any) -> bool:
    """True for a sentence of a sectioned paper or a structured abstract."""
    return row.kind != "abstract" or "/" in row.section
