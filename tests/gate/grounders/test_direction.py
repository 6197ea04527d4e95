"""The direction check and the default cues on real CIViC papers, through ``Validator`` and ``validate``.

Every quote here is a real sentence of a pinned CIViC paper (verified by the literature grounder), and
every claim is read from the paper's own CIViC evidence item: the gold direction of each pair is what
the sentence says about that claim, written down here by reading it, not by asking the model. The
gold pairs fail if the stance labels were inverted (the supporting sentences would be flagged) or
always "supports" (no contradicting sentence would be).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import stance_fixture as fx
from bioevidence.cli import cli
from bioevidence.gate.grounders.config import GrounderOptions, build_checks, build_grounders
from bioevidence.gate.grounders.cues import CueChecker
from bioevidence.gate.grounders.direction import DirectionChecker, clear_cache
from bioevidence.gate.profiles import parse_profile
from bioevidence.gate.validator import Validator
from bioevidence.meaning import available, unavailable
from bioevidence.meaning.model import ENV
from builders import claim_record

# the model needs its runtime (the librarian extra) and its weights, which no build ships today
# (docs/stance.md); the tests that need no model (a missing runtime, an error inside the check, the cues,
# the check's path with a labeller that reads the gold pairs) always run
needs_model = pytest.mark.skipif(not available(), reason=f"no stance model here: {unavailable()}")

# (pmid, CIViC molecular profile, the claim's object as CIViC states its significance, sentence)
SUPPORTING = [
    ("15696205", "KRAS G12/G13", "resistance to gefitinib or erlotinib in lung non-small cell carcinoma",
     "Here, we show that mutations in KRAS are associated with primary resistance to single-agent gefitinib or "
     "erlotinib."),
    ("15696205", "KRAS G12/G13", "resistance to gefitinib or erlotinib in lung non-small cell carcinoma",
     "We show that mutations in KRAS are associated with a lack of sensitivity to either drug."),
    ("22292935", "PIK3CA Amplification", "poor survival in gastric adenocarcinoma",
     "Importantly, Kaplan-Meier survival curves revealed that PIK3CA amplification was significantly positively "
     "associated with poor survival of gastric cancer patients."),
    ("22292935", "PIK3CA Amplification", "poor survival in gastric adenocarcinoma",
     "The patients with PIK3CA amplification had significantly shorter survival times than the patients without "
     "PIK3CA amplification (540.0 months vs. 794.4 months on average; P = 0.03) (Figure 4B)."),
    ("24594804", "BRAF V600E", "poor outcome in colorectal cancer",
     "These data suggest that BRAFV600E mutation could be used to supplement standard clinical and pathological "
     "staging for the better management of individual CRC patients, and could be considered as a poor prognostic "
     "marker for CRC."),
]
# the same papers' sentences that say the opposite of a claim (CIViC's "Does Not Support" items, and a
# supporting sentence read against the opposite claim)
CONTRADICTING = [
    ("18371219", "PIK3CA E545K", "resistance to anthracycline-based chemotherapy in breast cancer",
     "PIK3CA mutations are not associated with altered sensitivity to preoperative anthracycline-based or "
     "taxane-based chemotherapies in ER-positive and ER-negative breast tumors."),
    ("22479427", "PTEN R233*", "poor overall survival in glioblastoma",
     "Our study found that PTEN loss was not associated with worse overall survival in newly diagnosed GBM "
     "patients of the temozolomide era."),
    ("24586605", "BRAF V600E", "poor outcome in melanoma",
     "The BRAF-V600 mutational status was not associated with survival and no differences in overall survival "
     "were detected according to age, gender or to the cytotoxic agent used for therapy."),
    ("28103578", "VHL Mutation", "response to anti-VEGF therapy in renal cell carcinoma",
     "In conclusion, this meta-analysis demonstrates that VHL gene alteration is not associated with outcomes to "
     "VEGF-targeted therapy and OS in patients with clear cell RCC."),
    ("22292935", "PIK3CA Mutation", "poor survival in gastric cancer",
     "(A) Kaplan-Meier survival curves show that PIK3CA mutations were not associated with poor survival of the "
     "patients."),
    ("24367492", "CCND1 Amplification", "benefit from tamoxifen in breast cancer",
     "The presence of CCND1 amplification was not associated with an OS benefit of tamoxifen over placebo (data "
     "not shown)."),
    ("15696205", "KRAS G12/G13", "sensitivity to gefitinib or erlotinib in lung non-small cell carcinoma",
     "Here, we show that mutations in KRAS are associated with primary resistance to single-agent gefitinib or "
     "erlotinib."),
    ("22292935", "PIK3CA Amplification", "better survival in gastric adenocarcinoma",
     "Importantly, Kaplan-Meier survival curves revealed that PIK3CA amplification was significantly positively "
     "associated with poor survival of gastric cancer patients."),
]
NEGATED = ("24586605", "BRAF V600E", "melanoma",
           "The BRAF-V600 mutational status was not associated with survival and no differences in overall "
           "survival were detected according to age, gender or to the cytotoxic agent used for therapy.")
NO_CUES = build_checks(GrounderOptions(cues=False))


def civic_record(papers: dict[str, dict[str, Any]], pmid: str, subject: str, obj: str, quote: str,
                 direction: str = "supports") -> dict[str, Any]:
    rec = claim_record(0, pmid, papers[pmid]["sha"], papers[pmid]["title"], quote)
    statement = rec["statement"]
    statement["subject"] = {"id": "civic:MP", "label": subject, "entity_type": "variant"}
    statement["object"] = {"id": "civic:significance", "label": obj,
                           "entity_type": "disease" if " " not in obj else "phenotype"}
    statement["evidence_lines"][0]["direction"] = direction
    rec["evidence_items"][0]["locator"] = "full text"
    return rec


@pytest.fixture(scope="module")
def papers(corpus_dir: Path) -> dict[str, dict[str, Any]]:
    """Every pinned CIViC paper with full text: its full-text hash and its pinned PubMed title."""
    import gzip

    out = {}
    for key, work in json.loads((corpus_dir / "literature.json").read_text())["works"].items():
        if key.startswith("pmid:") and work.get("fulltext_sha256") and not work.get("retracted"):
            summary = json.loads(gzip.decompress((corpus_dir / f"{work['metadata_sha256']}.json.gz").read_bytes()))
            out[key[5:]] = {"sha": work["fulltext_sha256"], "title": summary["result"][key[5:]]["title"]}
    return out


@pytest.fixture(scope="module")
def grounders(corpus_dir: Path, cache_dir: Path) -> list[Any]:
    return build_grounders(GrounderOptions(snapshot_dir=corpus_dir, cache_root=cache_dir))


def codes(report: Any) -> set[str]:
    return {f.rule_id for f in report.findings}


def flagged(validator: Validator, papers: dict, pairs: Sequence[tuple[str, str, str, str]]) -> list[bool]:
    """Per pair, whether a supporting line citing its sentence gets BEV034 (every quote must verify)."""
    out = []
    for pmid, subject, obj, quote in pairs:
        report = validator.validate(civic_record(papers, pmid, subject, obj, quote))
        assert report.verified == {"e"}, (pmid, quote, [f.message for f in report.findings])
        out.append("BEV034" in codes(report))
    return out


# -- the claim a reader reads ------------------------------------------------------------------------

def test_the_claim_is_the_statement_read_with_its_labels() -> None:
    from bioevidence.gate.grounders.direction import claim_text

    def statement(predicate: str, subject: dict[str, str], obj: dict[str, str]) -> dict[str, Any]:
        return {"subject": subject, "predicate": predicate, "object": obj}

    braf = {"id": "HGNC:1097", "label": "BRAF V600E", "entity_type": "variant"}
    melanoma = {"id": "MONDO:0005105", "label": "melanoma", "entity_type": "disease"}
    assert claim_text(statement("associated_with", braf, melanoma)) == "BRAF V600E is associated with melanoma"
    assert claim_text(statement("contributes_to", braf, melanoma)) == "BRAF V600E contributes to melanoma"
    assert claim_text(statement("not_associated_with", braf, melanoma)) == "BRAF V600E is not associated with melanoma"
    assert claim_text(statement("RO:correlated_with", braf, melanoma)) == "BRAF V600E is correlated with melanoma"
    assert claim_text(statement("biolink:positivelyRegulates", braf, melanoma)) == \
        "BRAF V600E positively regulates melanoma"
    assert claim_text(statement("associated_with", {"id": "HGNC:1097", "label": " "}, melanoma)) == \
        "HGNC:1097 is associated with melanoma"  # the identifier only when there is no label
    assert claim_text({"predicate": "associated_with"}) is None


# -- genuine quotes stay admitted; contradicting ones go to review -----------------------------------

def test_genuine_civic_quotes_stay_admitted_with_the_default_checks(grounders: list[Any], papers: dict) -> None:
    validator = Validator(None, grounders=grounders)  # literature-claim: negation cue and direction auto
    for pmid, subject, obj, quote in SUPPORTING:
        report = validator.validate(civic_record(papers, pmid, subject, obj, quote))
        blocking = [(f.rule_id, f.message) for f in report.findings if f.severity in ("error", "review")]
        assert report.overall_status == "admitted" and report.verified == {"e"}, blocking


@needs_model
def test_a_supporting_line_citing_a_sentence_against_its_claim_goes_to_review(grounders: list[Any],
                                                                               papers: dict) -> None:
    validator = Validator("literature-claim", grounders=grounders, checks=NO_CUES)  # the direction check alone
    hits = flagged(validator, papers, CONTRADICTING)
    assert sum(hits) >= len(CONTRADICTING) // 2 + 1, list(zip(hits, [p[3][:60] for p in CONTRADICTING], strict=True))
    pmid, subject, obj, quote = next(p for p, hit in zip(CONTRADICTING, hits, strict=True) if hit)
    report = validator.validate(civic_record(papers, pmid, subject, obj, quote))
    (f,) = [f for f in report.findings if f.rule_id == "BEV034"]
    assert report.overall_status == "review_required" and f.severity == "review" and f.fix is None
    assert f.field_path == "$.evidence_items[0].extracted_text" and f.blocking_uses == ["research_summary"]
    assert "evidence line \"l\"" in f.message and "'contradicts'" in f.message and "confidence 0." in f.message
    assert quote[:40] in f.message and f"{subject} is associated with {obj}"[:60] in f.message


@needs_model
def test_supporting_sentences_are_never_flagged(grounders: list[Any], papers: dict) -> None:
    validator = Validator("literature-claim", grounders=grounders, checks=NO_CUES)
    assert flagged(validator, papers, SUPPORTING) == [False] * len(SUPPORTING)


@needs_model
def test_a_contradicting_line_citing_a_sentence_that_supports_the_claim_is_bev034(grounders: list[Any],
                                                                                 papers: dict) -> None:
    validator = Validator("literature-claim", grounders=grounders, checks=NO_CUES)
    found = 0
    for pmid, subject, obj, quote in SUPPORTING:
        report = validator.validate(civic_record(papers, pmid, subject, obj, quote, direction="contradicts"))
        assert "BEV004" in codes(report)  # a contradicting line is review anyway; BEV034 says why it is wrong
        if "BEV034" in codes(report):
            found += 1
            assert "cites this quote as contradicting" in next(f.message for f in report.findings
                                                               if f.rule_id == "BEV034")
    assert found >= len(SUPPORTING) // 2 + 1



class _Reader:
    """A labeller that reads the gold pairs above as they were written down (what each sentence says
    about its claim), at a fixed confidence; every other pair is neutral. The check's whole path on
    real papers (the quote verified, the claim read from the record, the line's direction compared)
    without the stance weights, which do not ship today (docs/stance.md)."""

    threshold = 0.8

    def __init__(self, confidence: float = 0.95) -> None:
        self.confidence, self.name = confidence, f"gold-reader-{confidence}"
        self.gold = [(obj, quote, "supports") for _, _, obj, quote in SUPPORTING] + [
            (obj, quote, "contradicts") for _, _, obj, quote in CONTRADICTING]

    def label(self, claim: str, sentences: Sequence[str]) -> list[Any]:
        from bioevidence.meaning.labels import StanceLabel

        out = []
        for sentence in sentences:
            stance = next((st for obj, quote, st in self.gold if quote == sentence and obj in claim), "neutral")
            rest = (1 - self.confidence) / 2
            probs = {"supports": (self.confidence, rest, rest), "contradicts": (rest, self.confidence, rest)}.get(
                stance, (rest, rest, self.confidence))
            out.append(StanceLabel(stance, self.confidence, probs))
        return out


def test_a_confident_reading_against_the_line_is_bev034_and_one_along_it_is_not(grounders: list[Any],
                                                                                papers: dict) -> None:
    validator = Validator("literature-claim", grounders=grounders, checks=[*NO_CUES, DirectionChecker(model=_Reader())])
    assert flagged(validator, papers, CONTRADICTING) == [True] * len(CONTRADICTING)
    assert flagged(validator, papers, SUPPORTING) == [False] * len(SUPPORTING)
    pmid, subject, obj, quote = CONTRADICTING[1]
    report = validator.validate(civic_record(papers, pmid, subject, obj, quote))
    (f,) = [f for f in report.findings if f.rule_id == "BEV034"]
    assert report.overall_status == "review_required" and f.severity == "review" and f.fix is None
    assert f.field_path == "$.evidence_items[0].extracted_text" and f.blocking_uses == ["research_summary"]
    assert "evidence line \"l\"" in f.message and "'contradicts'" in f.message and "confidence 0.95" in f.message
    assert "threshold 0.80" in f.message and quote[:40] in f.message
    # a contradicting line citing a supporting sentence: the same finding, the other way round
    pmid, subject, obj, quote = SUPPORTING[0]
    report = validator.validate(civic_record(papers, pmid, subject, obj, quote, direction="contradicts"))
    assert "cites this quote as contradicting" in next(f.message for f in report.findings if f.rule_id == "BEV034")


def test_a_reading_below_the_threshold_is_never_a_finding(grounders: list[Any], papers: dict) -> None:
    unsure = Validator("literature-claim", grounders=grounders, checks=[*NO_CUES, DirectionChecker(model=_Reader(0.6))])
    assert flagged(unsure, papers, CONTRADICTING) == [False] * len(CONTRADICTING)

class _Inverted:
    """The shipped model with supports and contradicts swapped (a wrong model the gold pairs must catch)."""

    def __init__(self, model: Any, constant: str | None = None) -> None:
        self.model, self.constant = model, constant
        self.name, self.threshold = f"{model.name}-mutated", model.threshold

    def label(self, claim: str, sentences: Sequence[str]) -> list[Any]:
        from dataclasses import replace

        swap = {"supports": "contradicts", "contradicts": "supports"}
        out = []
        for lab in self.model.label(claim, sentences):
            if self.constant is not None:
                out.append(replace(lab, stance=self.constant, confidence=1.0))
            else:
                out.append(replace(lab, stance=swap.get(lab.stance, lab.stance)))
        return out


@needs_model
@pytest.mark.parametrize("mutation", ["inverted", "always supports"])
def test_the_gold_pairs_catch_a_wrong_model(grounders: list[Any], papers: dict, mutation: str) -> None:
    from bioevidence.meaning import load_model

    wrong = _Inverted(load_model(), "supports" if mutation == "always supports" else None)
    validator = Validator("literature-claim", grounders=grounders, checks=[*NO_CUES, DirectionChecker(model=wrong)])
    contradicting_caught = sum(flagged(validator, papers, CONTRADICTING)) >= len(CONTRADICTING) // 2 + 1
    supporting_clean = not any(flagged(validator, papers, SUPPORTING))
    assert not (contradicting_caught and supporting_clean)


@needs_model
def test_only_verified_quotes_in_directional_lines_are_read(grounders: list[Any], papers: dict) -> None:
    pmid, subject, obj, quote = CONTRADICTING[1]
    validator = Validator("literature-claim", grounders=grounders, checks=NO_CUES)
    changed = validator.validate(civic_record(papers, pmid, subject, obj, quote.replace("overall", "total")))
    assert "BEV017" in codes(changed) and "BEV034" not in codes(changed)  # not the paper's text: not read
    neutral = validator.validate(civic_record(papers, pmid, subject, obj, quote, direction="neutral"))
    assert not ({"BEV034", "BEV035", "BEV036"} & codes(neutral))


# -- cues by default ---------------------------------------------------------------------------------

def _validate(tmp_path: Path, record: dict[str, Any], corpus_dir: Path, *flags: str) -> dict[str, Any]:
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    result = CliRunner().invoke(cli, ["validate", str(path), "--snapshot-dir", str(corpus_dir), *flags])
    assert result.exit_code in (0, 2), result.output
    report: dict[str, Any] = json.loads(result.stdout)
    assert report["overall_status"] == {0: "admitted", 2: "review_required"}[result.exit_code]
    return report


def test_a_negated_quote_for_a_positive_claim_goes_to_review_by_default(papers: dict, corpus_dir: Path,
                                                                        tmp_path: Path, cache_dir: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIOEVIDENCE_CACHE", str(cache_dir))
    record = civic_record(papers, *NEGATED)
    default = _validate(tmp_path, record, corpus_dir)
    (cue,) = [f for f in default["findings"] if f["rule_id"] == "BEV022"]
    assert default["overall_status"] == "review_required" and "'not associated'" in cue["message"]
    assert default["verified_evidence_item_ids"] == ["e"]
    # bioai-evidence-validator 0.8.0's decision: no cues and no direction check
    assert _validate(tmp_path, record, corpus_dir, "--no-cues", "--direction", "off")["overall_status"] == "admitted"
    assert "BEV022" not in {f["rule_id"] for f in _validate(tmp_path, record, corpus_dir, "--no-cues")["findings"]}
    # --cues still works where a profile runs none
    general = dict(record, profile_id="general")
    assert "BEV022" not in {f["rule_id"] for f in _validate(tmp_path, general, corpus_dir)["findings"]}
    assert "BEV022" in {f["rule_id"] for f in _validate(tmp_path, general, corpus_dir, "--cues")["findings"]}


# -- when the check cannot run ----------------------------------------------------------------------

REQUIRED = """\
id: literature-claim
version: "1"
description: literature claims whose direction must be checked
predicates: [associated_with]
subject_types: [variant]
object_types: [phenotype, disease]
uses:
  research_summary: {required_evidence_types: [publication_result], require_human_acceptance: false,
                     allow_llm_only: false, allow_string_match_only: false}
checks: {cues: false, direction: required}
"""


def test_without_the_runtime_auto_adds_a_note_and_required_goes_to_review(grounders: list[Any],
                                                                          papers: dict) -> None:
    record = civic_record(papers, *SUPPORTING[0])
    auto = Validator("literature-claim", grounders=grounders, checks=[DirectionChecker(model=None)]).validate(record)
    (note,) = [f for f in auto.findings if f.rule_id == "BEV036"]
    assert auto.overall_status == "admitted" and note.severity == "info" and note.blocking_uses == []
    assert "pip install 'bioevidence[librarian]'" in note.message
    required = parse_profile(REQUIRED.encode(), source="required.yaml")
    assert required.checks.direction == "required" and required.checks.cues == ()
    report = Validator(required, grounders=grounders, checks=[DirectionChecker(model=None)]).validate(record)
    (f,) = [f for f in report.findings if f.rule_id == "BEV035"]
    assert report.overall_status == "review_required" and "pip install 'bioevidence[librarian]'" in f.message
    forced = Validator("literature-claim", grounders=grounders,
                       checks=[DirectionChecker("required", model=None)]).validate(record)
    assert forced.overall_status == "review_required" and "BEV035" in codes(forced)  # --direction required
    off = Validator(required, grounders=grounders, checks=[DirectionChecker("off", model=None)]).validate(record)
    assert off.overall_status == "admitted" and not {"BEV035", "BEV036"} & codes(off)


class _Broken:
    name, threshold = "broken", 0.5

    def label(self, claim: str, sentences: Sequence[str]) -> list[Any]:
        raise RuntimeError("the session died")


def test_an_error_inside_the_check_fails_closed(grounders: list[Any], papers: dict) -> None:
    record = civic_record(papers, *SUPPORTING[1])
    report = Validator("literature-claim", grounders=grounders,
                       checks=[DirectionChecker(model=_Broken())]).validate(record)
    (f,) = [f for f in report.findings if f.rule_id == "BEV035"]
    assert report.overall_status == "review_required" and "RuntimeError: the session died" in f.message


def test_weights_that_fail_their_pinned_hash_fail_closed(grounders: list[Any], papers: dict,
                                                          tmp_path: Path) -> None:
    folder = fx.build(tmp_path / "stance")  # a model with known answers (tests/stance_fixture.py)
    record = civic_record(papers, *CONTRADICTING[0])
    intact = Validator("literature-claim", grounders=grounders, checks=[*NO_CUES, DirectionChecker(folder=folder)])
    assert "BEV034" in codes(intact.validate(record))  # the intact copy loads and reads the quote
    data = bytearray((folder / "model.onnx").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (folder / "model.onnx").write_bytes(bytes(data))
    report = Validator("literature-claim", grounders=grounders,
                       checks=[*NO_CUES, DirectionChecker(folder=folder)]).validate(record)
    (f,) = [f for f in report.findings if f.rule_id == "BEV035"]
    assert report.overall_status == "review_required" and "IntegrityError" in f.message
    assert "BEV034" not in codes(report)


def test_the_model_the_environment_names_is_the_one_validate_reads(papers: dict, corpus_dir: Path, tmp_path: Path,
                                                                   cache_dir: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``bioevidence validate`` with the built-in profile (direction ``auto``) and
    ``BIOEVIDENCE_STANCE_MODEL`` naming a model whose every answer the test works out: BEV034 exactly
    where that model reads a verified quote against its line, above the card's threshold; nothing else."""
    monkeypatch.setenv("BIOEVIDENCE_CACHE", str(cache_dir))
    monkeypatch.setenv(ENV, str(fx.build(tmp_path / "stance")))
    clear_cache()
    seen = set()
    for pmid, subject, obj, quote in SUPPORTING + CONTRADICTING:
        for direction in ("supports", "contradicts"):
            path = tmp_path / "record.json"
            path.write_text(json.dumps(civic_record(papers, pmid, subject, obj, quote, direction)))
            result = CliRunner().invoke(cli, ["validate", str(path), "--snapshot-dir", str(corpus_dir), "--no-cues"])
            report = json.loads(result.stdout)  # a contradicting line is rejected for lack of support: exit 1
            assert result.exit_code == {"admitted": 0, "rejected": 1, "review_required": 2}[report["overall_status"]]
            assert report["verified_evidence_item_ids"] == ["e"]
            stance, confidence = fx.expected_label(f"{subject} is associated with {obj}", quote)
            against = stance == ("contradicts" if direction == "supports" else "supports")
            hits = [f for f in report["findings"] if f["rule_id"] == "BEV034"]
            assert bool(hits) == against, (direction, stance, quote[:60])
            assert not [f for f in report["findings"] if f["rule_id"] in ("BEV035", "BEV036")]
            if hits:
                assert f"confidence {confidence:.2f}" in hits[0]["message"] and "threshold 0.60" in hits[0]["message"]
            seen.add((direction, stance))
    assert {("supports", "contradicts"), ("contradicts", "supports"), ("supports", "supports")} <= seen
    clear_cache()


# -- cost ----------------------------------------------------------------------------------------------

class _Counting:
    def __init__(self, model: Any) -> None:
        self.model, self.name, self.threshold, self.pairs = model, model.name, model.threshold, 0

    def label(self, claim: str, sentences: Sequence[str]) -> Any:
        self.pairs += len(sentences)
        return self.model.label(claim, sentences)


def test_labels_are_cached_per_claim_and_sentence(grounders: list[Any], papers: dict, tmp_path: Path) -> None:
    from bioevidence.meaning import StanceModel

    clear_cache()
    counting = _Counting(StanceModel(fx.build(tmp_path / "stance")))
    validator = Validator("literature-claim", grounders=grounders,
                          checks=[CueChecker(enabled=False), DirectionChecker(model=counting)])
    record = civic_record(papers, *CONTRADICTING[0])
    first = validator.validate(record)
    assert counting.pairs == 1
    assert validator.validate(record).findings == first.findings and counting.pairs == 1
    other = civic_record(papers, CONTRADICTING[0][0], "PIK3CA H1047R", *CONTRADICTING[0][2:])
    validator.validate(other)
    assert counting.pairs == 2  # another claim is another pair
