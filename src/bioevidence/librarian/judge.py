"""The offline judge: scores sentences lexically against the question and its expansions.

No model. A sentence's score is the idf mass (corpus-wide, over passages) of the question's
terms it contains, synonym terms counted at half weight, divided by a mild length penalty.
Paper text is only ever scored, never interpreted: nothing in a paper changes what runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .analysis import analyze

__all__ = ["LexicalJudge", "QueryTerms"]


@dataclass(frozen=True)
class QueryTerms:
    weights: dict[str, float]  # stemmed term -> weight (idf × 1 or × synonym factor)

    @property
    def total(self) -> float:
        return sum(self.weights.values()) or 1.0

    @classmethod
    def build(cls, question: str, expansions: Sequence[str], idf: Mapping[str, float],
              synonym_factor: float = 0.5) -> QueryTerms:
        default = max(idf.values(), default=1.0)
        weights: dict[str, float] = {}
        for t in analyze(question):
            weights[t] = idf.get(t, default)
        for s in expansions:
            for t in analyze(s):
                weights.setdefault(t, synonym_factor * idf.get(t, default))
        return cls(weights)


@dataclass(frozen=True)
class LexicalJudge:
    """Accept sentences that share a question term and reach ``min_fraction`` of the question's
    term mass. The default (0.0: any shared term) is tuned on SciFact train: as a stricter
    filter the judge removed relevant papers (BEIR nDCG@10 -0.012 at 0.15)."""

    min_fraction: float = 0.0
    keep_ratio: float = 0.5  # within a paper, keep sentences scoring >= keep_ratio × the best one

    def score(self, sentence: str, terms: QueryTerms) -> float:
        toks = _terms(sentence)
        mass = sum(w for t, w in terms.weights.items() if t in toks)
        return mass / terms.total / (1.0 + 0.1 * math.log1p(max(len(toks) - 15, 0)))

    def accepts(self, score: float) -> bool:
        return score > 0 and score >= self.min_fraction


@lru_cache(maxsize=32_768)
def _terms(sentence: str) -> frozenset[str]:
    """The sentence's analysed terms; cached, as a batch of questions judges the same papers' sentences
    again and again (about 1 KB an entry)."""
    return frozenset(analyze(sentence))
