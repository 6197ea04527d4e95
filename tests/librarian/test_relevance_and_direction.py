"""Issue 23: relevance before stance, the stance model's labels in `ask`, and the answer's direction.

Real sentences of the pinned CIViC corpus and SciFact; gold labels from SciFact (held-out part of
train) and CIViC's evidence directions. The gold tests fail when the labels are inverted
(supports <-> contradicts) or always "supports", and when the direction ignores the labels.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bioevidence.librarian.answering import answer_question
from bioevidence.librarian.direction import decide, paper_stances
from bioevidence.librarian.index import LocalIndex
from bioevidence.librarian.lexicon import default_lexicon
from bioevidence.librarian.librarian import Librarian
from bioevidence.librarian.relevance import Topic, judge_relevance, sites
from bioevidence.librarian.render import render
from bioevidence.librarian.stance import claim_of
from bioevidence.meaning import available, unavailable

# No stance weights ship today (docs/stance.md); the model's own figures run when a build holds them,
# and what a reader sees without them (every relevant sentence "undetermined") is tested below.
needs_weights = pytest.mark.skipif(not available(), reason=f"no stance model here: {unavailable()}")

pytestmark = pytest.mark.heavy(seconds=10)  # started first under xdist (tests/conftest.py)

KRAS = "Do KRAS mutations predict resistance to EGFR tyrosine kinase inhibitors in lung cancer?"
CD44 = "Is CD44v6 expression associated with poor prognosis in ovarian cancer?"
VHL = "Is VHL inactivation associated with outcome in renal cell carcinoma?"
SOX10 = "Is SOX10 expression higher in CNS_NBL than in other embryonal tumours?"
PIK3CA = "Are PIK3CA mutations associated with response to chemotherapy in breast cancer?"
# the deciding sentence of the demo question (Pao et al. 2005, PMID 15696205), badged contradicts before
KRAS_DECIDING = "All 17 tumors with EGFR mutations responded to gefitinib or erlotinib, while all nine tumors"


def _sentence(index: LocalIndex, start: str) -> tuple[Any, str]:
    """The passage and the sentence of the index that starts with ``start``."""
    for doc in index.docs:
        for row in index.passages(doc.idx):
            for a, b in row.sentences:
                if row.text[a:b].startswith(start):
                    return row, row.text[a:b]
    raise AssertionError(f"no sentence starts with {start!r}")


CASES = [  # (question, the sentence's first words, relevant, words of the reason)
    (CD44, "There is still insufficient information about HSP110", False, "gastric cancer, not ovarian cancer"),
    (CD44, "Previously some groups demonstrated that CD44 variant 6", True, ""),
    (CD44, "CD44s and CD44v6 expression in the tumor tissues was evaluated", False, "methods section"),
    (VHL, "We searched PUBMED, MEDLINE and EMBASE", False, "methods boilerplate"),
    (KRAS, KRAS_DECIDING, True, ""),
    (KRAS, "We sought to determine whether mutations in KRAS could be used", False, "aims"),
    (KRAS, "EGFR and KRAS Mutation Status in Lung Adenocarcinomas Sensitive or Refractory", False,
     "table caption that states no finding"),
    (KRAS, "We show that drugs that selectively inhibit BRAF drive RAS-dependent", False, "about BRAF, not KRAS"),
    (KRAS, "Approximately 45% of metastatic colorectal cancer (mCRC) patients with wild-type KRAS", False,
     "colorectal cancer, not lung cancer"),
    (KRAS, "KRAS mutation is especially predominant in colon (40–45%), NSCLC", True, ""),
    (SOX10, "FOXR2 and SOX10 expression levels were significantly higher in CNS_NBL", True, ""),
    (PIK3CA, "Types of PIK3CA mutations that were detected", False, "table caption"),
]


@pytest.mark.parametrize(("question", "start", "relevant", "why"), CASES,
                         ids=[f"{c[1][:40]}-{'relevant' if c[2] else 'not'}" for c in CASES])
def test_relevance_of_real_sentences_of_the_civic_corpus(civic_index: Path, question: str, start: str,
                                                         relevant: bool, why: str) -> None:
    row, sentence = _sentence(LocalIndex(civic_index), start)
    verdict = judge_relevance(sentence, row, Topic.of(question, default_lexicon()))
    assert verdict.relevant is relevant and why in verdict.reason, verdict


def test_sites_are_compared_in_broad_groups() -> None:
    assert sites("non-small cell lung cancer") == sites("NSCLC") == sites("lung adenocarcinomas") == {"lung"}
    assert sites("kidney, liver, and colon cancers") == {"renal", "liver", "colorectal"}
    assert sites("lung function and liver metastases") == frozenset()  # not cancers of those sites


def test_relevance_keeps_scifact_rationales_and_removes_some_of_the_rest(shared_data: Path) -> None:
    """On every SciFact train claim's cited abstracts: at most 2% of the gold rationale sentences
    are judged not relevant (0.8% measured), while the rule does remove some of the other
    sentences (4.3% measured)."""
    docs: dict[str, list[str]] = {}
    with gzip.open(shared_data / "claims" / "scifact" / "corpus.jsonl.gz", "rt") as fh:
        for line in fh:
            d = json.loads(line)
            docs[str(d["doc_id"])] = d["abstract"]
    row = SimpleNamespace(kind="abstract", section="Abstract", section_type="abstract")
    lexicon = default_lexicon()
    gold = [0, 0]
    other = [0, 0]
    for line in (shared_data / "claims" / "scifact" / "claims_train.jsonl").read_text().splitlines():
        claim = json.loads(line)
        topic = Topic.of(claim["claim"], lexicon)
        for doc_id, sets in claim["evidence"].items():
            rationale = {i for s in sets for i in s["sentences"]}
            for i, sentence in enumerate(docs[doc_id]):
                tally = gold if i in rationale else other
                tally[0] += not judge_relevance(sentence, row, topic).relevant
                tally[1] += 1
    assert gold[1] > 1000 and gold[0] / gold[1] <= 0.02, gold
    assert other[0] / other[1] >= 0.02, other


def test_questions_are_read_as_claims() -> None:
    assert claim_of(KRAS) == "KRAS mutations predict resistance to EGFR tyrosine kinase inhibitors in lung cancer."
    assert claim_of("Is BRAF V600E associated with melanoma?") == "BRAF V600E associated with melanoma."
    statement = "BRAF V600E confers sensitivity to vemurafenib."
    assert claim_of(statement) == statement


def test_ask_labels_relevant_sentences_with_the_model_and_the_others_neutral(civic_index: Path) -> None:
    answer = Librarian(civic_index).ask(KRAS, top_k=25)
    items = answer.items()
    off = [i for i in items if not i["relevant"]]
    on = [i for i in items if i["relevant"]]
    assert off and on  # the KRAS question's 25 sentences include methods, captions, other genes
    assert all(i["stance"] == "neutral" and i["stance_by"] == "relevance" and i["relevance"]
               and i["stance_confidence"] is None for i in off)
    if available():
        assert all(i["stance_by"] == "model" and 0.0 < i["stance_confidence"] <= 1.0 and i["relevance"] is None
                   and i["stance"] in ("supports", "contradicts", "neutral", "undetermined") for i in on)
    else:  # no direction is made up: relevant sentences say "undetermined", and why
        assert all(i["stance_by"] == "unavailable" and i["stance_confidence"] is None and i["relevance"] is None
                   and i["stance"] == "undetermined" for i in on)
        assert "no direction labels" in answer.debug["stance"]
        cited, _, _ = answer_question(answer)
        assert cited.direction in ("undetermined", "insufficient"), cited.verdict


def test_with_a_model_each_relevant_sentence_carries_its_label_and_the_answer_its_direction(
        civic_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``answer --format json`` with ``BIOEVIDENCE_STANCE_MODEL`` naming the word-vote model of
    tests/stance_fixture.py (the real runtime, answers worked out by hand): every relevant sentence has
    that model's label for the question read as a claim, with its confidence; every other one stays
    neutral by relevance; the direction is the one the labels decide, and at least one question gets a
    direction shown (the model path is not silently skipped)."""
    from click.testing import CliRunner

    import stance_fixture as fx
    from bioevidence.cli import cli
    from bioevidence.meaning.model import ENV

    monkeypatch.setenv(ENV, str(fx.build(tmp_path / "stance")))
    shown = set()
    for question in (KRAS, CD44, VHL, PIK3CA):
        result = CliRunner().invoke(cli, ["answer", question, "--index", str(civic_index), "--format", "json"])
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        claim = claim_of(question)
        items = out["items"]
        assert items and any(i["relevant"] for i in items)
        for item in items:
            if not item["relevant"]:
                assert (item["stance"], item["stance_by"]) == ("neutral", "relevance")
                continue
            want, confidence = fx.expected_label(claim, item["text"])
            assert (item["stance"], item["stance_by"], item["stance_confidence"]) == (
                want, "model", round(confidence, 4)), item["text"][:80]
        verdict = out["answer"]
        counts = _badge_counts(items, verdict["admitted_items"])
        assert verdict["papers_by_stance"] == counts
        s, c = counts["supports"], counts["contradicts"]  # the rule of docs/librarian.md, two to one
        want_direction = ("supports" if s and s >= 2 * c else "contradicts" if c and c >= 2 * s else "mixed" if s and c
                          else "undetermined" if counts["undetermined"] + counts["neutral"] else "insufficient")
        assert verdict["direction"] == want_direction, (question, counts)
        shown.add(verdict["direction"])
    assert shown & {"supports", "contradicts", "mixed"}, shown


@needs_weights
def test_the_kras_deciding_sentence_is_not_badged_contradicts(civic_index: Path) -> None:
    """The issue's example: for the demo question, "All 17 tumors with EGFR mutations responded …, while
    all nine tumors with KRAS mutations did not" supports the claim; it was badged contradicts."""
    from bioevidence.meaning import load_model

    row, sentence = _sentence(LocalIndex(civic_index), KRAS_DECIDING)
    assert judge_relevance(sentence, row, Topic.of(KRAS, default_lexicon())).relevant
    (label,) = load_model().label(claim_of(KRAS), [sentence])
    assert label.stance != "contradicts", label


# -- gold labels: SciFact held-out claims --------------------------------------------------------

@needs_weights
def test_shown_directions_agree_with_scifact_gold_labels(scifact_full: Path, shared_data: Path) -> None:
    """Held-out SciFact train claims (id divisible by 3, never trained on): the librarian's shown
    directions on returned gold rationale sentences are right at least 3 times in 4, and some
    contradicting rationales are labelled contradicts. Inverted labels would be right about one time
    in ten; "always supports" catches no contradiction."""
    claims = [json.loads(x) for x in (shared_data / "claims" / "scifact" / "claims_train.jsonl").read_text()
              .splitlines() if x.strip()]
    held = [c for c in claims if c["id"] % 3 == 0 and c["evidence"]]
    contradicting = [c for c in held if any(s["label"] == "CONTRADICT" for sets in c["evidence"].values()
                                            for s in sets)]
    chosen = contradicting[:30] + [c for c in held if c not in contradicting][:30]
    lib = Librarian(scifact_full)
    right = wrong = caught = 0
    for claim in chosen:
        gold = {(d, i): {"SUPPORT": "supports", "CONTRADICT": "contradicts"}[s["label"]]
                for d, sets in claim["evidence"].items() for s in sets for i in s["sentences"]}
        for item in lib.ask(claim["claim"]).items():
            label = next((gold[(item["doc_id"], i)] for i in item["sentences"] if (item["doc_id"], i) in gold), None)
            if label is None or item["stance"] not in ("supports", "contradicts"):
                continue
            right += item["stance"] == label
            wrong += item["stance"] != label
            caught += label == item["stance"] == "contradicts"
    assert right + wrong >= 20, (right, wrong)
    assert right / (right + wrong) >= 0.75, (right, wrong)
    assert caught >= 3, caught


# -- the answer's direction -----------------------------------------------------------------------

def _relabel(answer: Any, stances: list[str]) -> None:
    for span, stance in zip(answer.ranked, stances, strict=True):
        span.stance, span.relevant = stance, True


def test_the_direction_follows_the_labels(civic_index: Path) -> None:
    """On a real answer (the KRAS question, 20 sentences from several papers) relabelled by hand:
    the direction is the labels' (flipping every label flips it), never a constant."""
    answer = Librarian(civic_index).ask(KRAS, top_k=20, papers=5)
    n = len(answer.ranked)
    admitted = list(range(1, n + 1))
    papers = sorted({s.paper for s in answer.ranked})
    assert len(papers) >= 3
    _relabel(answer, ["supports"] * n)
    assert decide(answer.ranked, admitted).direction == "supports"
    _relabel(answer, ["contradicts"] * n)
    assert decide(answer.ranked, admitted).direction == "contradicts"
    _relabel(answer, ["undetermined"] * n)
    assert decide(answer.ranked, admitted).direction == "undetermined"
    _relabel(answer, ["neutral"] * n)
    assert decide(answer.ranked, admitted).direction == "undetermined"  # relevant, no direction
    for span in answer.ranked:
        span.relevant = False
    assert decide(answer.ranked, admitted).direction == "insufficient"
    # one paper each way: mixed; the first paper's best sentence decides its stance
    first, second = papers[0], papers[1]
    _relabel(answer, ["supports" if s.paper == first else "contradicts" if s.paper == second else "neutral"
                      for s in answer.ranked])
    decision = decide(answer.ranked, admitted)
    assert decision.direction == "mixed" and decision.counts["supports"] == decision.counts["contradicts"] == 1
    deciding = [answer.ranked[m - 1].stance for m in decision.deciding]
    assert deciding == sorted(deciding, key=("supports", "contradicts").index) and set(deciding) == {
        "supports", "contradicts"}
    # three papers support, one contradicts: supports, the supporting sentences first
    _relabel(answer, ["contradicts" if s.paper == first else "supports" for s in answer.ranked])
    decision = decide(answer.ranked, admitted)
    assert decision.counts["contradicts"] == 1 and decision.counts["supports"] == len(papers) - 1 >= 2
    assert decision.direction == "supports" and answer.ranked[decision.deciding[0] - 1].stance == "supports"


def _badge_counts(items: list[dict[str, Any]], admitted: list[int]) -> dict[str, int]:
    """Papers counted from the badges shown: each paper by its first admitted relevant badge that
    shows a direction, else undetermined / neutral, else not about the question."""
    first: dict[str, str] = {}
    for item in items:
        if item["rank"] not in admitted:
            continue
        now = first.get(item["doc_id"])
        if not item["relevant"]:
            first.setdefault(item["doc_id"], "off_topic")
        elif now not in ("supports", "contradicts"):
            first[item["doc_id"]] = item["stance"] if item["stance"] in ("supports", "contradicts") else (
                "undetermined" if "undetermined" in (item["stance"], now) else "neutral")
    return {k: sum(1 for v in first.values() if v == k)
            for k in ("supports", "contradicts", "undetermined", "neutral", "off_topic")}


def test_the_verdict_never_disagrees_with_the_badges(civic_index: Path,
                                                     civic_statements: list[dict[str, str]]) -> None:
    """Over CIViC statements asked as questions: the papers the verdict counts are the papers the
    badges below it show, in every format."""
    lib = Librarian(civic_index)
    directions = set()
    for n, row in enumerate(civic_statements[::10]):
        answer = lib.ask(row["question"])
        if not answer.ranked:
            continue
        if not available():  # no stance weights ship (docs/stance.md): label the relevant sentences by hand
            cycle = ("supports", "contradicts", "neutral", "undetermined", "supports")
            for k, span in enumerate(answer.ranked):
                if span.relevant:
                    span.stance = cycle[(n + span.paper + k // 3) % len(cycle)]
        cited, _, _ = answer_question(answer)
        out = cited.to_json()
        assert out["papers_by_stance"] == _badge_counts(answer.items(), cited.admitted), row["question"]
        directions.add(out["direction"])
        result = answer.to_json()
        text = render(result, "text", out)
        assert f"Answer: {out['verdict']}" in text
        supports = re.search(r"(\d+) papers? supports?", out["verdict"])
        if supports:
            badged = {i["doc_id"] for i in answer.items() if i["stance"] == "supports" and i["relevant"]}
            assert int(supports.group(1)) <= len(badged)
        html = render(result, "html", out)
        assert f'data-direction="{out["direction"]}"' in html
    assert len(directions) >= 2, directions  # not one constant answer


def _civic_claims(shared_data: Path) -> list[tuple[str, str]]:
    """(question, gold direction) for the CIViC corpus's predictive and prognostic items, asked as the
    item's clinical significance (never with its verdict in it); Supports → supports, Does Not
    Support → contradicts (tools/civic_questions.py writes them the same way)."""
    out = []
    with gzip.open(shared_data / "civic_corpus" / "civic-evidence.jsonl.gz", "rt") as fh:
        for r in map(json.loads, fh):
            gold = {"Supports": "supports", "Does Not Support": "contradicts"}[r["evidence_direction"]]
            profile, disease, drugs = r["molecular_profile"], r["disease"], r["therapies"]
            if r["evidence_type"] == "Predictive" and drugs and r["significance"] in ("Sensitivity/Response",
                                                                                       "Resistance"):
                effect = "sensitivity" if r["significance"] == "Sensitivity/Response" else "resistance"
                out.append((f"Does {profile} confer {effect} to {drugs} in {disease}?", gold))
            elif r["evidence_type"] == "Prognostic" and r["significance"] == "Poor Outcome":
                out.append((f"Is {profile} associated with poor outcome in {disease}?", gold))
    return out


@needs_weights
def test_civic_answer_directions_follow_civic_more_than_they_oppose_it(civic_index: Path,
                                                                       shared_data: Path) -> None:
    """CIViC items asked as questions over the CIViC corpus: the answer's direction is CIViC's more
    often than the opposite, and the opposite at most one time in five. With the labels inverted,
    the opposite would win; with "always supports", every Does-Not-Support item is answered wrong."""
    lib = Librarian(civic_index)
    agree = opposite = 0
    for question, want in _civic_claims(shared_data)[::2]:
        cited, _, _ = answer_question(lib.ask(question))
        agree += cited.direction == want
        opposite += cited.direction == ({"supports": "contradicts", "contradicts": "supports"}[want])
    assert agree > 2 * opposite and opposite <= (agree + opposite + 1) / 5, (agree, opposite)


def test_paper_stance_is_its_best_ranked_relevant_directional_sentence() -> None:
    spans = [SimpleNamespace(paper=0, stance="neutral", relevant=False),
             SimpleNamespace(paper=0, stance="undetermined", relevant=True),
             SimpleNamespace(paper=0, stance="contradicts", relevant=True),
             SimpleNamespace(paper=0, stance="supports", relevant=True),
             SimpleNamespace(paper=1, stance="supports", relevant=False),
             SimpleNamespace(paper=2, stance="neutral", relevant=True),
             SimpleNamespace(paper=3, stance="supports", relevant=True)]
    assert paper_stances(spans, [1, 2, 3, 4, 5, 6, 7]) == {0: "contradicts", 1: "off_topic", 2: "neutral",
                                                           3: "supports"}
    assert paper_stances(spans, [1, 2, 4]) == {0: "supports"}  # only admitted sentences count
