"""Decision tests for the labels a reader sees and the answer's direction (issue 30), written for the
mutants `tools/mutation.py meaning` left alive.

Both are pure rules over a few numbers (a pair's three probabilities; the papers counted by
stance), so they are checked on small inputs whose expected label was worked out by hand from the
rules in the docstrings of ``meaning.labels`` and ``librarian.direction``. That the rules give the
right direction on real answers is shown by ``tests/librarian/test_relevance_and_direction.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from bioevidence.librarian.direction import PAPER_STANCES, decide, direction_of, paper_stances, verdict_line
from bioevidence.meaning.labels import StanceLabel
from bioevidence.meaning.labels import decide as label

# ------------------------------------------------------------------ one pair's label


def test_each_label_carries_the_probability_shown_and_all_three() -> None:
    assert label((0.85, 0.1, 0.05), 0.8) == StanceLabel("supports", 0.85, (0.85, 0.1, 0.05))
    assert label((0.05, 0.9, 0.05), 0.8) == StanceLabel("contradicts", 0.9, (0.05, 0.9, 0.05))
    assert label((0.3, 0.2, 0.5), 0.8) == StanceLabel("neutral", 0.5, (0.3, 0.2, 0.5))
    # undetermined: the confidence is the likelier direction's
    assert label((0.1, 0.6, 0.3), 0.8) == StanceLabel("undetermined", 0.6, (0.1, 0.6, 0.3))


def test_a_direction_exactly_at_the_threshold_is_shown() -> None:
    """Only a direction *below* the threshold is undetermined."""
    assert label((0.8, 0.15, 0.05), 0.8).stance == "supports"
    assert label((0.15, 0.8, 0.05), 0.8).stance == "contradicts"
    assert label((0.79, 0.16, 0.05), 0.8).stance == "undetermined"


def test_neutral_wins_a_tie_with_either_direction() -> None:
    assert label((0.45, 0.1, 0.45), 0.4).stance == "neutral"
    assert label((0.1, 0.45, 0.45), 0.4).stance == "neutral"


def test_a_tie_of_the_two_directions_is_read_as_supports() -> None:
    assert label((0.45, 0.45, 0.1), 0.4) == StanceLabel("supports", 0.45, (0.45, 0.45, 0.1))


def test_the_label_as_a_reader_gets_it() -> None:
    assert label((0.123456, 0.8, 0.076544), 0.5).as_dict() == {"stance": "contradicts", "confidence": 0.8}
    assert label((0.876544, 0.1, 0.023456), 0.5).as_dict() == {"stance": "supports", "confidence": 0.8765}


# ------------------------------------------------------------------ the papers' stances


@dataclass
class _Span:
    paper: int
    stance: str
    relevant: bool = True


def test_a_papers_stance_follows_the_documented_rules() -> None:
    spans = [
        _Span(0, "neutral"), _Span(0, "supports"), _Span(0, "contradicts"),  # 1-3: first direction decides
        _Span(1, "supports", relevant=False), _Span(1, "neutral"),  # 4-5: one relevant sentence: not off topic
        _Span(2, "undetermined"), _Span(2, "neutral"),  # 6-7: undetermined when one is
        _Span(3, "neutral"), _Span(3, "undetermined"),  # 8-9: in either order
        _Span(4, "contradicts", relevant=False),  # 10: nothing relevant
        _Span(5, "contradicts"),  # 11: not admitted
        _Span(6, "supports"), _Span(6, "neutral", relevant=False),  # 12-13: an off-topic sentence after
        _Span(7, "undetermined"), _Span(7, "contradicts"),  # 14-15: a direction after undetermined
        _Span(8, "neutral"), _Span(8, "neutral"),  # 16-17: neutral only
        _Span(9, "contradicts"), _Span(9, "supports"),  # 18-19: the first direction decides either way
    ]
    admitted = [n for n in range(1, len(spans) + 1) if n != 11]
    assert paper_stances(spans, admitted) == {0: "supports", 1: "neutral", 2: "undetermined", 3: "undetermined",
                                              4: "off_topic", 6: "supports", 7: "contradicts", 8: "neutral",
                                              9: "contradicts"}


# ------------------------------------------------------------------ the answer's direction


def _counts(s: int = 0, c: int = 0, u: int = 0, n: int = 0, off: int = 0) -> dict[str, int]:
    return dict(zip(PAPER_STANCES, (s, c, u, n, off), strict=True))


@pytest.mark.parametrize(("counts", "expected"), [
    (_counts(s=1), "supports"), (_counts(s=2, c=1), "supports"), (_counts(s=4, c=2), "supports"),
    (_counts(c=1), "contradicts"), (_counts(s=1, c=2), "contradicts"), (_counts(s=2, c=4, u=3), "contradicts"),
    (_counts(s=1, c=1), "mixed"), (_counts(s=3, c=2), "mixed"), (_counts(s=2, c=3), "mixed"),
    (_counts(u=1), "undetermined"), (_counts(n=1), "undetermined"), (_counts(u=1, n=1), "undetermined"),
    (_counts(n=2, off=3), "undetermined"),
    (_counts(off=2), "insufficient"), (_counts(), "insufficient"),
])
def test_the_direction_from_papers_counted_by_stance(counts: dict[str, int], expected: str) -> None:
    """S ≥ 1 and S ≥ 2·C supports; C ≥ 1 and C ≥ 2·S contradicts; both present otherwise mixed;
    else undetermined when a relevant paper shows no direction, insufficient when none is relevant."""
    assert direction_of(counts) == expected


def test_the_verdict_line_counts_papers_in_words() -> None:
    assert verdict_line(_counts(s=3, c=1, u=1, n=2)) == "3 papers support, 1 contradicts, 1 undetermined, 2 neutral"
    assert verdict_line(_counts(s=1, c=2, off=1)) == "1 paper supports, 2 contradict, 1 not about the question"
    assert verdict_line(_counts()) == "0 papers support, 0 contradict"


def test_the_deciding_sentences_of_a_supported_answer() -> None:
    spans = [
        _Span(0, "contradicts"),  # 1
        _Span(1, "supports"), _Span(1, "supports"), _Span(1, "supports"),  # 2-4: two a paper at most
        _Span(2, "neutral"), _Span(2, "supports"),  # 5-6
        _Span(3, "supports", relevant=False), _Span(3, "supports"),  # 7-8
        _Span(4, "supports"),  # 9: a fourth supporting paper (three a side at most)
        _Span(0, "contradicts"), _Span(0, "contradicts"),  # 10-11
        _Span(5, "supports"),  # 12: not admitted
    ]
    admitted = list(range(1, 12))
    d = decide(spans, admitted)
    assert d.stances == {0: "contradicts", 1: "supports", 2: "supports", 3: "supports", 4: "supports"}
    assert d.counts == _counts(s=4, c=1)
    assert d.direction == "supports"
    # supporting papers first (1, 2, 3: two sentences each at most, only supporting ones), then the other side
    assert d.deciding == [2, 3, 6, 8, 1, 10]
    assert d.verdict == "Supported: 4 papers support, 1 contradicts."
    assert decide(spans, admitted, max_papers=1, per_paper=1).deciding == [2, 1]
    # a paper past the limit is skipped, not the rest of its side
    assert decide([_Span(0, "supports"), _Span(1, "supports"), _Span(0, "supports")], [1, 2, 3],
                  max_papers=1).deciding == [1, 3]


def test_the_deciding_sentences_of_a_contradicted_and_of_a_mixed_answer() -> None:
    spans = [_Span(0, "supports"), _Span(1, "contradicts"), _Span(2, "contradicts"), _Span(1, "contradicts")]
    d = decide(spans, [1, 2, 3, 4])
    assert (d.direction, d.deciding) == ("contradicts", [2, 3, 4, 1])
    assert d.verdict == "Contradicted: 1 paper supports, 2 contradict."
    d = decide(spans[:2], [1, 2])
    assert (d.direction, d.deciding) == ("mixed", [1, 2])
    assert d.verdict == "Mixed evidence: 1 paper supports, 1 contradicts."


def test_an_undetermined_answer_shows_its_undetermined_sentences_else_its_neutral_ones() -> None:
    spans = [_Span(0, "neutral"), _Span(1, "undetermined"), _Span(0, "undetermined"), _Span(2, "neutral"),
             _Span(3, "neutral", relevant=False)]
    d = decide(spans, [1, 2, 3, 4, 5])
    assert d.stances == {0: "undetermined", 1: "undetermined", 2: "neutral", 3: "off_topic"}
    assert (d.direction, d.deciding) == ("undetermined", [2, 3])
    assert d.verdict == ("Direction not determined: 3 papers address the question, but no sentence shows a "
                         "direction the stance model is confident of (2 undetermined, 1 neutral, 1 not about "
                         "the question).")
    d = decide([_Span(0, "undetermined")], [1])
    assert d.verdict == ("Direction not determined: 1 paper addresses the question, but no sentence shows a "
                         "direction the stance model is confident of (1 undetermined).")
    d = decide([_Span(0, "neutral"), _Span(1, "neutral"), _Span(0, "neutral")], [1, 2, 3])
    assert (d.direction, d.deciding) == ("undetermined", [1, 2, 3])
    assert d.verdict == ("Direction not determined: 2 papers address the question, but no sentence shows a "
                         "direction the stance model is confident of (2 neutral).")


def test_an_answer_with_nothing_relevant_is_insufficient() -> None:
    d = decide([_Span(0, "supports", relevant=False)], [1])
    assert (d.direction, d.deciding) == ("insufficient", [])
    assert d.verdict == ("Insufficient evidence: no admitted sentence of the pinned papers is about the question "
                         "(every sentence found is off the question).")
    d = decide([_Span(0, "supports")], [])
    assert (d.direction, d.deciding, d.counts) == ("insufficient", [], _counts())
    assert d.verdict == "Insufficient evidence: no admitted sentence of the pinned papers is about the question."
