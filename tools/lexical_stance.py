"""The lexical stance rule the librarian used before issue 23, kept only as the baseline
``tools/eval_stance.py`` prints beside the stance model (it is not in the package any more).

The question is read as a claim: its content terms, whether it is negated, and its direction words
(increase/decrease, sensitive/resistant, …). A sentence sharing less than ``min_overlap`` of the
claim's term weight is ``neutral``; otherwise it ``contradicts`` when its polarity differs from the
claim's or it uses the opposite direction word, else it ``supports``. It reads words, not meaning:
on SciFact it agreed with the gold labels about one time in four.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bioevidence.librarian.analysis import analyze, stem

if TYPE_CHECKING:  # pragma: no cover
    from bioevidence.librarian.judge import QueryTerms

__all__ = ["ClaimReading", "lexical_stance"]

_NEGATION = re.compile(
    r"\b(?:not|no|never|neither|nor|none|without|cannot|lack(?:s|ed|ing)?|absence|absent|fail(?:s|ed)? to|"
    r"did not|does not|do not|was not|were not|is not|are not|unable|unrelated|independent of|"
    r"no (?:significant|statistically significant)? ?(?:difference|association|correlation|effect|change)|"
    r"insignificant|non-?significant|n\.s\.)\b", re.I)
_PAIRS = [("increase", "decrease"), ("higher", "lower"), ("more", "less"), ("enhance", "reduce"),
          ("upregul", "downregul"), ("activ", "inhibit"), ("sensitiv", "resist"), ("improv", "wors"),
          ("better", "worse"), ("longer", "shorter"), ("greater", "smaller"), ("promot", "suppress"),
          ("positive", "negative"), ("gain", "loss"), ("benefit", "harm"), ("elevat", "lower"),
          ("induc", "prevent"), ("rise", "fall"), ("accelerat", "delay"), ("prolong", "shorten")]


# Phrases whose negation is a direction, not a null finding: "a lack of response" is resistance.
_AS_RESISTANCE = re.compile(r"\b(?:(?:a )?lack of|no|absence of|without|poor) (?:clinical )?"
                            r"(?:response|benefit|sensitivity)\b|\b(?:non-?respon\w*|unresponsive\w*|refractory)\b",
                            re.I)


def _reading(text: str) -> str:
    """The text with phrases that state resistance through a negation written as ``resistance``."""
    return _AS_RESISTANCE.sub("resistance", text)


def _polarity(text: str) -> bool:
    """True when the text states a negated or null finding."""
    return bool(_NEGATION.search(text))


def _directions(text: str) -> set[str]:
    """The direction words a text uses, as (pair index, side) keys."""
    low = text.lower()
    out: set[str] = set()
    for n, (a, b) in enumerate(_PAIRS):
        if re.search(rf"\b{a}", low):
            out.add(f"{n}a")
        if re.search(rf"\b{b}", low):
            out.add(f"{n}b")
    return out


@dataclass(frozen=True)
class ClaimReading:
    terms: dict[str, float]
    negated: bool
    directions: frozenset[str]

    @classmethod
    def of(cls, question: str, terms: QueryTerms | None = None) -> ClaimReading:
        own = set(analyze(question))  # the claim's own words: synonym expansions would dilute the overlap
        weights = {t: w for t, w in terms.weights.items() if t in own} if terms is not None else {t: 1.0 for t in own}
        for word in ("not", "no", "associ", "effect", "role"):
            weights.pop(stem(word), None)
        reading = _reading(question)
        return cls(weights, _polarity(reading), frozenset(_directions(reading)))


def lexical_stance(sentence: str, claim: ClaimReading, min_overlap: float = 0.65) -> str:
    """``supports`` | ``contradicts`` | ``neutral`` (see module docstring)."""
    # overlap against the claim's heaviest terms (half of them, at least three): a long question's
    # every word need not be in one sentence, its key ones must
    heaviest = sorted(claim.terms.values(), reverse=True)[:max(3, (len(claim.terms) + 1) // 2)]
    total = sum(heaviest) or 1.0
    tokens = set(analyze(sentence))
    overlap = min(1.0, sum(w for t, w in claim.terms.items() if t in tokens) / total)
    if overlap < min_overlap:
        return "neutral"
    reading = _reading(sentence)
    if _polarity(reading) != claim.negated:
        return "contradicts"
    mine = _directions(reading)
    for key in claim.directions:
        other = key[:-1] + ("b" if key.endswith("a") else "a")
        if other in mine and key not in mine:
            return "contradicts"
    return "supports"
