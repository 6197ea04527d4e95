"""What the evidence says: each paper's stance, and the answer's direction decided from them.

Pure functions of the ranked sentences (:class:`~.results.Span`) and the item numbers the gate
admitted; :mod:`.answering` builds the cited answer from them.

**A paper's stance** is that of its best-ranked admitted sentence that is relevant
(:mod:`.relevance`) and shows a direction (``supports`` or ``contradicts``: the stance model shows
one only above the confidence threshold chosen on held-out data, else ``undetermined``). A paper
whose relevant admitted sentences show no direction is ``undetermined`` when one of them is,
else ``neutral``; a paper none of whose admitted sentences is relevant is ``off_topic``.

**The answer's direction** (:data:`DIRECTIONS`), with ``S`` and ``C`` the papers that support and
contradict:

* ``insufficient``: no admitted sentence is relevant (nothing about the question was found);
* ``undetermined``: relevant sentences were found, but no paper shows a direction (``S = C = 0``);
* ``supports``: ``S ≥ 1`` and ``S ≥ 2·C`` (supporting papers outnumber contradicting ones at
  least two to one, or none contradicts);
* ``contradicts``: ``C ≥ 1`` and ``C ≥ 2·S``;
* ``mixed``: both sides present and neither outnumbers the other two to one.

**The deciding sentences** come first in the answer: for ``supports`` the supporting papers'
sentences, then the contradicting ones; the reverse for ``contradicts``; for ``mixed`` both sides,
the supporting first; for ``undetermined`` the best relevant sentences, so a reader sees what was
found. The verdict counts papers exactly as :func:`paper_stances` does, so its numbers always match
the badges of the sentences below it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import plural

__all__ = ["DIRECTIONS", "PAPER_STANCES", "Decision", "decide", "paper_stances", "verdict_line"]

DIRECTIONS = ("supports", "contradicts", "mixed", "undetermined", "insufficient")
PAPER_STANCES = ("supports", "contradicts", "undetermined", "neutral", "off_topic")
OUTNUMBER = 2  # a side decides when it has at least this many times the other side's papers

_HEADLINE = {"supports": "Supported", "contradicts": "Contradicted", "mixed": "Mixed evidence",
             "undetermined": "Direction not determined", "insufficient": "Insufficient evidence"}


@dataclass
class Decision:
    direction: str  # one of DIRECTIONS
    stances: dict[int, str]  # paper index -> its stance (PAPER_STANCES)
    counts: dict[str, int]  # papers by stance, every key of PAPER_STANCES
    deciding: list[int] = field(default_factory=list)  # item numbers of the sentences that decided, in order
    verdict: str = ""  # the direction in words, with the counts


def paper_stances(spans: Sequence[Any], admitted: Sequence[int]) -> dict[int, str]:
    """Each paper's stance (see module docstring); ``spans`` in rank order, item ``n`` is ``spans[n-1]``."""
    allowed = set(admitted)
    out: dict[int, str] = {}
    for n, span in enumerate(spans, 1):
        if n not in allowed:
            continue
        now = out.get(span.paper)
        if not span.relevant:
            out.setdefault(span.paper, "off_topic")
            continue
        if now in ("supports", "contradicts"):
            continue
        if span.stance in ("supports", "contradicts"):
            out[span.paper] = span.stance
        elif span.stance == "undetermined" or now == "undetermined":
            out[span.paper] = "undetermined"
        else:
            out[span.paper] = "neutral"
    return out


def _counts(stances: dict[int, str]) -> dict[str, int]:
    return {k: sum(1 for v in stances.values() if v == k) for k in PAPER_STANCES}


def direction_of(counts: dict[str, int]) -> str:
    """The answer's direction from papers counted by stance (see module docstring)."""
    s, c = counts["supports"], counts["contradicts"]
    if s and s >= OUTNUMBER * c:
        return "supports"
    if c and c >= OUTNUMBER * s:
        return "contradicts"
    if s and c:
        return "mixed"
    relevant = counts["undetermined"] + counts["neutral"]
    return "undetermined" if relevant else "insufficient"


def verdict_line(counts: dict[str, int]) -> str:
    """Papers by stance in words: "3 papers support, 1 contradicts, 2 neutral, 1 undetermined"."""
    parts = [f"{plural(counts['supports'], 'paper', 'papers')} support{'s' if counts['supports'] == 1 else ''}",
             f"{counts['contradicts']} contradict{'s' if counts['contradicts'] == 1 else ''}"]
    for key, word in (("undetermined", "undetermined"), ("neutral", "neutral"),
                      ("off_topic", "not about the question")):
        if counts.get(key):
            parts.append(f"{counts[key]} {word}")
    return ", ".join(parts)


def _wording(direction: str, counts: dict[str, int]) -> str:
    head = _HEADLINE[direction]
    if direction == "insufficient":
        tail = " (every sentence found is off the question)" if counts["off_topic"] else ""
        return f"{head}: no admitted sentence of the pinned papers is about the question{tail}."
    if direction == "undetermined":
        n = counts["undetermined"] + counts["neutral"]
        kinds = ", ".join(f"{counts[k]} {w}" for k, w in (("undetermined", "undetermined"), ("neutral", "neutral"),
                                                          ("off_topic", "not about the question")) if counts[k])
        return (f"{head}: {plural(n, 'paper addresses', 'papers address')} the question, but no sentence shows "
                f"a direction the stance model is confident of ({kinds}).")
    return f"{head}: {verdict_line(counts)}."


def decide(spans: Sequence[Any], admitted: Sequence[int], max_papers: int = 3, per_paper: int = 2) -> Decision:
    """The answer's direction, its verdict and the sentences that decided it (see module docstring);
    at most ``max_papers`` papers a side and ``per_paper`` sentences a paper are named."""
    stances = paper_stances(spans, admitted)
    counts = _counts(stances)
    direction = direction_of(counts)
    order = {"supports": ("supports", "contradicts"), "contradicts": ("contradicts", "supports"),
             "mixed": ("supports", "contradicts"), "undetermined": ("undetermined", "neutral"),
             "insufficient": ()}[direction]
    allowed = set(admitted)
    deciding: list[int] = []
    for side in order:
        shown: list[int] = []
        for n, span in enumerate(spans, 1):
            if n not in allowed or not span.relevant or stances.get(span.paper) != side or span.stance != side:
                continue
            if span.paper not in shown:
                if len(shown) >= max_papers:
                    continue
                shown.append(span.paper)
            if sum(1 for m in deciding if spans[m - 1].paper == span.paper) < per_paper:
                deciding.append(n)
        if direction == "undetermined" and deciding:
            break  # the undetermined papers' sentences; neutral ones only when there are none
    return Decision(direction, stances, counts, deciding, _wording(direction, counts))
