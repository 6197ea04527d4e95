"""Decision tests for ranking and fusion (issue 30): each fails when a rank, a score order, a fused
result or a section label is wrong, written for the mutants `tools/mutation.py ranking` left alive.

Fusion is pure arithmetic, so it is checked on small inputs whose fused scores are worked out here
from the formulas of ``fusion``'s docstring. Ranking is checked on real papers: every sentence the
librarian scores for real CIViC statements is re-ranked and compared with an oracle written from
``ranking``'s docstring (score formula and greedy diversity), and the section labels are checked on
every passage of the pinned CIViC snapshots against the headings read by hand.
"""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from bioevidence.librarian.analysis import analyze
from bioevidence.librarian.fusion import (
    DENSE_WEIGHT,
    FusionSpec,
    convex,
    fuse_lists,
    perspicacite_hybrid,
    rrf,
    sw_rrf,
)
from bioevidence.librarian.index import LocalIndex
from bioevidence.librarian.librarian import Librarian
from bioevidence.librarian.ranking import DEFAULT, Candidate, Weights, cues, rank, relevance, section_type, sectioned


def _sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


# ------------------------------------------------------------------ fusion: exact small inputs

def test_equal_fused_scores_keep_the_order_of_first_appearance() -> None:
    """a and b swap ranks between two lists, so each fuses to 1/61 + 1/62: the tie keeps a first."""
    lists = [[("a", 0.9), ("b", 0.9)], [("b", 0.9), ("a", 0.9)]]
    for fused in (rrf(lists), sw_rrf(lists)):
        assert [k for k, _ in fused] == ["a", "b"]
        assert fused[0][1] == fused[1][1]
    assert [k for k, _ in rrf([[("x", 1.0)], [("y", 1.0)]])] == ["x", "y"]


def test_sw_rrf_weights_scale_each_list() -> None:
    fused = dict(sw_rrf([[("a", 0.9)], [("b", 0.9)]], weights=[1.0, 3.0]))
    assert fused["a"] == pytest.approx(_sig(3.0) / 61)
    assert fused["b"] == pytest.approx(3 * _sig(3.0) / 61)
    assert [k for k, _ in sw_rrf([[("a", 0.9)], [("b", 0.9)]], weights=[1.0, 3.0])] == ["b", "a"]


def test_convex_refuses_a_weight_count_that_differs_from_the_list_count() -> None:
    with pytest.raises(ValueError):
        convex([[("a", 1.0)], [("b", 1.0)]], [1.0])


def test_convex_keeps_a_keys_best_score_when_a_list_names_it_twice() -> None:
    # min-max of 10, 5, 0: a → 1.0 (and 0.0 at its second listing), b → 0.5
    assert dict(convex([[("a", 10.0), ("b", 5.0), ("a", 0.0)]], [1.0])) == {"a": 1.0, "b": 0.5}


def test_perspicacite_hybrid_gives_a_candidate_missing_from_bm25_the_lowest_bm25() -> None:
    out = perspicacite_hybrid([("a", 0.9), ("b", 0.8), ("c", 0.7)], {"b": 0.5, "c": 0.2})
    # vector min-max: a 1, b 0.5, c 0; BM25 a 0 (missing), b 0.5, c 0.2 → min-max a 0, b 1, c 0.4
    # combined: a 0.5, b 0.75, c 0.2 → min-max: b 1, a 0.3/0.55 = 6/11, c 0
    assert [k for k, _ in out] == ["b", "a", "c"]
    assert dict(out) == {"b": 1.0, "a": pytest.approx(6 / 11), "c": 0.0}


LEX = [(1, 4.0), (2, 2.0)]
DENSE = [(2, 0.9), (3, 0.5)]


def test_fuse_lists_sw_rrf_uses_the_specs_k_threshold_and_steepness() -> None:
    fused = dict(fuse_lists(LEX, DENSE, FusionSpec("sw_rrf", k=10.0, threshold=0.5, steepness=5.0)))
    # lexical min-max: 1 → 1.0 (rank 1), 2 → 0.0 (rank 2); dense on Chroma's scale 1/(1 + (1 − cos)):
    # 2 → 1/1.1 (rank 1), 3 → 1/1.5 (rank 2)
    assert fused[1] == pytest.approx(_sig((1.0 - 0.5) * 5) / 11)
    assert fused[2] == pytest.approx(_sig((0.0 - 0.5) * 5) / 12 + _sig((1 / 1.1 - 0.5) * 5) / 11)
    assert fused[3] == pytest.approx(_sig((1 / 1.5 - 0.5) * 5) / 12)


def test_fuse_lists_rrf_weighs_lexical_by_one_minus_the_dense_weight() -> None:
    fused = dict(fuse_lists(LEX, DENSE, FusionSpec("rrf", dense_weight=0.25, k=10.0)))
    assert fused == {1: pytest.approx(0.75 / 11), 2: pytest.approx(0.75 / 12 + 0.25 / 11),
                     3: pytest.approx(0.25 / 12)}


def test_fuse_lists_convex_weighs_lexical_by_one_minus_the_dense_weight() -> None:
    fused = fuse_lists(LEX, DENSE, FusionSpec("convex", dense_weight=0.25))
    # lexical min-max 1 → 1, 2 → 0; dense min-max 2 → 1, 3 → 0
    assert fused == [(1, pytest.approx(0.75)), (2, pytest.approx(0.25)), (3, 0.0)]


def test_a_spec_takes_the_weight_tuned_for_the_indexs_model() -> None:
    assert FusionSpec().for_model("all-MiniLM-L6-v2").dense_weight == DENSE_WEIGHT["all-MiniLM-L6-v2"] == 0.4
    assert FusionSpec().for_model("bge-small-en-v1.5").dense_weight == 0.7
    # an unknown model gets the default model's weight; a weight given is kept
    assert FusionSpec().for_model("some-other-model").dense_weight == DENSE_WEIGHT["bge-small-en-v1.5"]
    given = FusionSpec(dense_weight=0.3)
    assert given.for_model("all-MiniLM-L6-v2") is given


# ------------------------------------------------------------------ ranking: relevance and cues

def test_relevance_is_bm25_with_k1_1_2_and_b_0_3_over_the_sentence() -> None:
    terms = ["braf", "v600e", "braf", "melanoma"]
    weights = {"braf": 2.0, "melanoma": 1.0, "egfr": 5.0}
    k1, b, avg = 1.2, 0.3, 16.0
    norm = k1 * (1 - b + b * len(terms) / avg)  # 1.2 × 0.775 = 0.93

    def part(w: float, tf: int) -> float:
        return w * tf * (k1 + 1) / (tf + norm)

    assert norm == pytest.approx(0.93)
    assert relevance(terms, weights) == pytest.approx(part(2.0, 2) + part(1.0, 1))
    assert relevance(terms, weights) == pytest.approx(8.8 / 2.93 + 2.2 / 1.93)
    assert relevance(terms, {"egfr": 1.0}) == 0.0


@cache
def _scifact_sentence(shared: str, doc_id: str, i: int) -> str:
    with gzip.open(Path(shared) / "claims" / "scifact" / "corpus.jsonl.gz", "rt") as fh:
        for line in fh:
            row = json.loads(line)
            if str(row["doc_id"]) == doc_id:
                return str(row["abstract"][i])
    raise AssertionError(f"no SciFact doc {doc_id}")


@pytest.mark.parametrize(("doc_id", "i", "start", "expected"), [
    ("18670", 8, "These data demonstrate that ASM", (True, False, False)),  # demonstrate, correlated
    ("104130", 3, "The identity and regulating niche", (False, False, True)),  # unknown
    ("104130", 0, "Bone tissue undergoes constant", (False, False, False)),
    ("327319", 6, "ZINC retains its original 3D roots", (False, True, False)),  # "3d": a number, one digit
])
def test_finding_number_and_background_cues_of_real_sentences(shared_data: Path, doc_id: str, i: int,
                                                              start: str, expected: tuple[bool, bool, bool]) -> None:
    sentence = _scifact_sentence(str(shared_data), doc_id, i)
    assert sentence.startswith(start)
    assert cues(analyze(sentence)) == expected


# ------------------------------------------------------------------ ranking: section labels

# every structured-abstract heading of the pinned CIViC snapshots, labelled by hand from the rule of
# ``section_type`` (results / conclusions / methods / intro words, else "abstract")
HEADINGS = {
    "results": "results", "result": "results", "principal findings": "results", "findings": "results",
    "methods and findings": "results",
    "conclusion": "conclusions", "conclusions": "conclusions",
    "methods": "methods", "method": "methods", "design": "methods", "experimental design": "methods",
    "materials and methods": "methods", "patients and methods": "methods",
    "electronic supplementary material": "methods",  # "material": a methods word, whatever the heading means
    "background": "intro", "backgrounds": "intro", "purpose": "intro", "introduction": "intro",
    "objective": "intro", "background and objective": "intro", "aim of the study": "intro",
    "significance": "abstract", "case presentation": "abstract", "trial registration": "abstract",
    "highlights": "abstract", "case preparation": "abstract", "data sources": "abstract",
    "eligibility criteria for selecting studies": "abstract", "背景与目的": "abstract", "方法": "abstract",
    "结果": "abstract", "结论": "abstract",
}


def test_every_passage_of_the_civic_snapshots_gets_its_section_label(civic_index: Path) -> None:
    index = LocalIndex(civic_index)
    seen: dict[str, int] = {}
    kinds: set[tuple[str, str, bool]] = set()
    for doc in index.docs:
        for row in index.passages(doc.idx):
            structured = row.section_type == "abstract" and "/" in row.section
            if structured:
                heading = row.section.rsplit("/", 1)[1].strip().lower()
                assert heading in HEADINGS, row.section
                assert section_type(row) == HEADINGS[heading], row.section
                seen[HEADINGS[heading]] = seen.get(HEADINGS[heading], 0) + 1
            elif row.kind == "abstract":
                assert section_type(row) == "abstract", (doc.doc_id, row.section)
            else:  # a body passage keeps the type its section was given ("" when none was)
                assert section_type(row) == row.section_type, (doc.doc_id, row.section)
            # sectioned: any body passage, and an abstract only when it has headings
            assert sectioned(row) is (row.kind != "abstract" or structured), (doc.doc_id, row.section)
            kinds.add((row.kind, row.section_type, "/" in row.section))
    assert set(seen) == {"results", "conclusions", "methods", "intro", "abstract"}
    # the cases the labels branch on are all present in the snapshots
    assert {("abstract", "abstract", True), ("abstract", "abstract", False), ("paragraph", "", False),
            ("paragraph", "results", True), ("paragraph", "discussion", False)} <= kinds


@dataclass
class _Row:
    section_type: str
    section: str
    kind: str = "abstract"


@pytest.mark.parametrize(("heading", "expected"), [
    ("INTERPRETATION", "conclusions"),  # The Lancet's heading for conclusions
    ("Context", "intro"),  # JAMA's heading for background
    ("Patients", "methods"),
])
def test_structured_abstract_headings_absent_from_the_snapshots(heading: str, expected: str) -> None:
    """Headings of major journals that the pinned papers do not use (so no real passage shows them)."""
    assert section_type(_Row("abstract", f"Abstract/ {heading}")) == expected


@pytest.mark.parametrize(("kind", "expected"), [("abstract", "abstract"), ("paragraph", "")])
def test_a_row_whose_index_recorded_no_section_type_falls_back_on_its_kind(kind: str, expected: str) -> None:
    """Rows of an index that recorded no section type (``PassageRow.section_type`` defaults to "")."""
    assert section_type(_Row("", "", kind)) == expected


def test_every_scifact_abstract_is_an_abstract_without_headings(scifact_small: Path) -> None:
    index = LocalIndex(scifact_small / "index")
    rows = [r for d in index.docs[:50] for r in index.passages(d.idx)]
    assert rows and all(r.kind == "abstract" for r in rows)
    assert all(section_type(r) == "abstract" and not sectioned(r) for r in rows)


# ------------------------------------------------------------------ ranking: the oracle on real papers

def _oracle_scores(cands: list[Candidate], w: Weights) -> list[float]:
    """Each candidate's score as the module docstring states it, computed independently."""
    top = max(c.paper_score for c in cands)
    best: dict[int, float] = {}
    for c in cands:
        best[c.paper] = max(c.relevance, best.get(c.paper, c.relevance))
    out = []
    for c in cands:
        own = c.relevance / best[c.paper] if best[c.paper] else 0.0
        prior = (w.finding if c.finding else 0.0) + (w.number if c.number else 0.0) + (
            w.background if c.background else 0.0)
        if c.sectioned or c.section_type != "abstract":
            prior += w.priors.get(c.section_type, 0.0)
        else:  # an abstract without headings: findings come late, its first sentence is background
            prior += w.position * c.position + (w.first if c.sentence == 0 else 0.0)
        s = w.paper * c.paper_score / (top or 1.0) + w.sentence * own + prior
        out.append(s if math.isfinite(s) else 0.0)
    return out


def _oracle_order(cands: list[Candidate], w: Weights, limit: int | None = None,
                  max_papers: int | None = None) -> list[tuple[int, int, int]]:
    """Greedy picks: each paper's best remaining sentence less its paper's diversity cost, the highest
    taken; ties to the lower paper (within a paper: higher score, then reading order)."""
    scores = _oracle_scores(cands, w)
    remaining: dict[int, list[int]] = {}
    for i in range(len(cands)):
        remaining.setdefault(cands[i].paper, []).append(i)
    for queue in remaining.values():
        queue.sort(key=lambda i: (-scores[i], cands[i].row.ord, cands[i].sentence), reverse=True)  # best last
    taken: dict[int, int] = {}
    order: list[tuple[int, int, int]] = []
    while limit is None or len(order) < limit:
        heads = [(scores[q[-1]] - w.diversity * taken.get(p, 0), -p) for p, q in remaining.items()
                 if q and (p in taken or max_papers is None or len(taken) < max_papers)]
        if not heads:
            break
        p = -max(heads)[1]
        i = remaining[p].pop()
        taken[p] = taken.get(p, 0) + 1
        order.append(_key(cands[i]))
    return order


def _key(c: Candidate) -> tuple[int, int, int]:
    return c.paper, c.row.pidx, c.sentence


@pytest.fixture(scope="module")
def civic_candidates(civic_index: Path, civic_statements: list[dict[str, str]]) -> list[list[Candidate]]:
    """Every sentence the librarian scored for 6 CIViC statements (fresh copies, unranked)."""
    lib = Librarian(civic_index)
    pools = []
    for row in civic_statements[:: max(1, len(civic_statements) // 6)][:6]:
        answer = lib.ask(row["question"], include_retracted=True)
        pools.append([replace(c, score=0.0) for c in answer.candidates])
    return pools


def test_rank_orders_real_sentences_as_the_documented_formula_and_greedy_diversity(
        civic_candidates: list[list[Candidate]]) -> None:
    checked = 0
    branches: set[tuple[bool, str]] = set()
    for pool in civic_candidates:
        assert len({c.paper for c in pool}) >= 2
        for limit, max_papers in ((None, None), (10, None), (None, 3), (7, 2)):
            cands = [replace(c) for c in pool]
            got = rank(cands, DEFAULT, limit=limit, max_papers=max_papers)
            assert [_key(c) for c in got] == _oracle_order(pool, DEFAULT, limit, max_papers), (limit, max_papers)
            if limit is None and max_papers is None:
                assert len(got) == len(pool)
                assert [c.score for c in cands] == pytest.approx(_oracle_scores(pool, DEFAULT))
            checked += len(got)
        branches |= {(c.sectioned, c.section_type) for c in pool}
    assert checked > 1000
    # the pools reach both prior branches and the section priors
    assert (False, "abstract") in branches and {(True, "results"), (True, "methods")} <= branches


def test_a_question_about_a_real_paper_ranks_a_finding_above_its_methods(civic_candidates: list[list[Candidate]]
                                                                        ) -> None:
    """Within one paper and at equal relevance, a results sentence outranks a methods sentence (+0.2
    against −0.2), so the first sentence shown from a sectioned paper is never a methods sentence
    when a results sentence is as relevant."""
    pairs = 0
    for pool in civic_candidates:
        ranked = rank([replace(c) for c in pool])
        pos = {_key(c): n for n, c in enumerate(ranked)}
        by_paper: dict[int, list[Candidate]] = {}
        for c in ranked:
            by_paper.setdefault(c.paper, []).append(c)
        for cs in by_paper.values():
            for a in cs:
                for b in cs:
                    if (a.section_type, b.section_type) == ("results", "methods") and a.relevance == b.relevance \
                            and (a.finding, a.number, a.background) == (b.finding, b.number, b.background):
                        assert pos[_key(a)] < pos[_key(b)]
                        pairs += 1
    assert pairs > 0


# ------------------------------------------------------------------ ranking: exact small inputs

@dataclass(frozen=True)
class _R:
    ord: int
    pidx: int = 0


_FLAT = Weights(paper=1.0, sentence=0.5, finding=0.0, number=0.0, background=0.0, first=0.0, position=0.0,
                diversity=0.25, priors={})


def _c(paper: int, sentence: int, relevance: float, paper_score: float = 1.0, **kw: Any) -> Candidate:
    return Candidate(paper, paper_score, _R(sentence, paper), sentence, relevance, **kw)


def _order(cands: list[Candidate], w: Weights = _FLAT, **kw: Any) -> list[tuple[int, int]]:
    return [(c.paper, c.sentence) for c in rank(cands, w, **kw)]


def test_diversity_lets_the_second_papers_best_come_before_the_first_papers_second() -> None:
    # paper 0: 1 + 0.5·(1, 1, 0.5) = 1.5, 1.5, 1.25; paper 1 (half the paper score): 0.5 + 0.5 = 1.0
    cands = [_c(0, 0, 2.0), _c(0, 1, 2.0), _c(0, 2, 1.0), _c(1, 0, 3.0, paper_score=0.5)]
    # picks: 0/0 (1.5); then 0/1 at 1.5 − 0.25 = 1.25 against 1/0 at 1.0; then 0/2 at 1.25 − 0.5 = 0.75 < 1.0
    assert _order(cands) == [(0, 0), (0, 1), (1, 0), (0, 2)]
    assert [c.score for c in rank(cands, _FLAT)] == [1.5, 1.5, 1.0, 1.25]
    assert _order(cands, limit=2) == [(0, 0), (0, 1)]
    assert _order(cands, max_papers=1) == [(0, 0), (0, 1), (0, 2)]


def test_a_paper_whose_best_sentence_is_first_can_run_out_while_others_continue() -> None:
    # paper 1 has the best sentence but only one; paper 0 has three
    cands = [_c(0, 0, 1.0, paper_score=0.5), _c(0, 1, 1.0, paper_score=0.5), _c(0, 2, 1.0, paper_score=0.5),
             _c(1, 0, 1.0)]
    assert _order(cands) == [(1, 0), (0, 0), (0, 1), (0, 2)]


def test_ties_go_to_the_lower_paper() -> None:
    # equal values: paper 0 (1.5) takes one, its next (1.5 − 0.25) ties paper 1's best (1.25)
    cands = [_c(0, 0, 1.0), _c(0, 1, 1.0), _c(1, 0, 1.0, paper_score=0.75)]
    assert _order(cands) == [(0, 0), (0, 1), (1, 0)]
    # paper 1's best (1.5) comes first; then paper 0's best (1.25) ties paper 1's next (1.5 − 0.25)
    cands = [_c(1, 0, 1.0), _c(1, 1, 1.0), _c(0, 0, 1.0, paper_score=0.75)]
    assert _order(cands) == [(1, 0), (0, 0), (1, 1)]
    # two identical papers: the lower one first, then alternating by the diversity cost
    cands = [_c(1, 0, 1.0), _c(1, 1, 1.0), _c(0, 0, 1.0), _c(0, 1, 1.0)]
    assert _order(cands) == [(0, 0), (1, 0), (0, 1), (1, 1)]


def test_a_lower_paper_with_a_lower_value_does_not_win() -> None:
    cands = [_c(1, 0, 1.0), _c(0, 0, 1.0, paper_score=0.5)]
    assert _order(cands) == [(1, 0), (0, 0)]


def test_max_papers_stops_new_papers_but_not_more_sentences_from_chosen_ones() -> None:
    cands = [_c(0, 0, 1.0), _c(0, 1, 1.0), _c(0, 2, 1.0), _c(1, 0, 1.0, paper_score=0.75), _c(1, 1, 0.5, 0.75),
             _c(2, 0, 1.0, paper_score=0.5)]
    # scores: paper 0: 1.5 ×3; paper 1: 1.25, 1.0; paper 2: 1.0
    assert _order(cands, max_papers=2) == [(0, 0), (0, 1), (1, 0), (0, 2), (1, 1)]
    assert _order(cands, max_papers=3) == [(0, 0), (0, 1), (1, 0), (0, 2), (2, 0), (1, 1)]
    assert _order(cands, limit=3) == [(0, 0), (0, 1), (1, 0)]
    assert rank([], _FLAT) == []


def test_paper_scores_and_relevance_are_max_normalised() -> None:
    # paper scores 4 and 2 → 1 and 0.5; relevances within paper 0: 0.5 of 0.5 → 1, 0.25 → 0.5
    cands = [_c(0, 0, 0.5, paper_score=4.0), _c(0, 1, 0.25, paper_score=4.0), _c(1, 0, 0.3, paper_score=2.0)]
    ranked = rank(cands, _FLAT)
    assert [(c.paper, c.sentence, c.score) for c in ranked] == [(0, 0, 1.5), (0, 1, 1.25), (1, 0, 1.0)]
    # a paper none of whose sentences matches gets no sentence part, and all-zero paper scores none either
    zero = [_c(0, 0, 0.0, paper_score=0.0), _c(1, 0, 0.0, paper_score=0.0)]
    assert [c.score for c in rank(zero, _FLAT)] == [0.0, 0.0]
    # an unbounded relevance makes the score not a number: it counts as 0
    odd = [_c(0, 0, math.inf), _c(1, 0, 0.0, paper_score=0.5)]
    assert [(c.paper, c.score) for c in rank(odd, _FLAT)] == [(1, 0.5), (0, 0.0)]


def test_priors_of_the_documented_cues_and_sections() -> None:
    w = DEFAULT
    base = {"paper_score": 0.0}
    # an abstract without headings: 0.4 × position, −0.2 on its first sentence
    first = _c(0, 0, 0.0, section_type="abstract", position=0.0, sectioned=False, **base)
    late = _c(0, 3, 0.0, section_type="abstract", position=0.75, sectioned=False, finding=True, **base)
    structured = _c(0, 4, 0.0, section_type="abstract", position=0.5, sectioned=True, **base)
    results = _c(0, 5, 0.0, section_type="results", **base)
    methods = _c(0, 6, 0.0, section_type="methods", finding=True, number=True, **base)
    other = _c(0, 7, 0.0, section_type="", background=True, position=0.5, **base)
    cands = [first, late, structured, results, methods, other]
    rank(cands, w)
    assert [c.score for c in cands] == pytest.approx([-0.2, 0.2 + 0.3, 0.0, 0.2, -0.2 + 0.2 + 0.2, -0.2])
    # a sectioned passage's sentence 0 gets no first-sentence penalty
    assert rank([_c(0, 0, 0.0, section_type="results", **base)], w)[0].score == pytest.approx(0.2)
