"""revise() driven by scripted proposers (plain functions) over real grounders and real data.

The Cell Ontology is the 2026-06-08 release; the paper is PMID 15696205 (Pao et al. 2005,
"KRAS mutations and primary resistance of lung adenocarcinomas to gefitinib or erlotinib")
from the pinned CIViC corpus.
"""

from __future__ import annotations

import asyncio
import copy
import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from bioevidence.gate.validator import Validator
from bioevidence.loop.revise import Ask, arevise, carry, revise, revision_flow, where
from builders import record

PMID = "15696205"
CONCLUSION = ("Our results suggest that treatment decisions regarding use of these kinase inhibitors might be "
              "improved by determining the mutational status of both EGFR and KRAS.")
MISQUOTE = ("Our results show that treatment decisions regarding use of these kinase inhibitors are "
            "improved by determining the mutational status of both EGFR and KRAS.")
SIMILAR = "Results with gefitinib and erlotinib were similar overall."


class Script:
    """A proposer that answers from a list of functions of the feedback, and records what it was told."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.told: list[list[str]] = []

    def __call__(self, feedback: list[str]) -> Any:
        self.told.append(list(feedback))
        answer = self.answers.pop(0)
        return answer(feedback) if callable(answer) else copy.deepcopy(answer)


# -- a wrong Cell Ontology id ------------------------------------------------------------------

def _cell_record(curie: str, label: str) -> dict[str, Any]:
    rec = record("dataset-label")
    rec["statement"]["object"] = {"id": curie, "label": label, "entity_type": "cell_type"}
    return rec


def test_wrong_cell_ontology_id_is_fixed_in_round_two_from_the_feedback(cl_grounder: Any) -> None:
    validator = Validator("dataset-label", grounders=[cl_grounder])

    def from_feedback(feedback: list[str]) -> dict[str, Any]:
        # a model reading the line: the label it meant belongs to another id, which the line names
        match = re.search(r"or cite (CL:\d{7})", " ".join(feedback))
        assert match is not None
        return _cell_record(match.group(1), "pancreatic D cell")

    propose = Script(_cell_record("CL:0002335", "pancreatic D cell"), from_feedback)
    attempts = revise(propose, validator)
    assert [a.outcome for a in attempts] == ["feedback", "admitted"]
    (line,) = attempts[0].feedback
    assert line.startswith("object CL:0002335: ")
    assert "CL:0000173 (pancreatic D cell)" in line and "brown preadipocyte" in line
    assert propose.told == [[], [line]]
    assert attempts[1].record is not None and attempts[1].record["statement"]["object"]["id"] == "CL:0000173"


def test_the_last_round_with_fixable_findings_left_is_exhausted_and_goes_to_a_person(cl_grounder: Any) -> None:
    wrong = _cell_record("CL:0002335", "pancreatic D cell")
    attempts = revise(Script(wrong, wrong), Validator("dataset-label", grounders=[cl_grounder]), rounds=2)
    assert [a.outcome for a in attempts] == ["feedback", "exhausted"]
    assert attempts[-1].to_person and attempts[-1].feedback == ()


# -- quotes from a real paper ------------------------------------------------------------------

@pytest.fixture(scope="module")
def paper(literature: Any) -> dict[str, str]:
    work = literature.catalogue.get(f"pmid:{PMID}")
    return {"sha": work.pinned_sha256, "title": literature.metadata(work).title}


def _paper_record(paper: dict[str, str], quotes: list[tuple[str, str, str]]) -> dict[str, Any]:
    """A literature-claim record citing PMID 15696205 with (locator, quote, direction) items."""
    rec = record("literature-claim")
    rec["statement"]["subject"] = {"id": "HGNC:6407", "label": "KRAS", "entity_type": "gene"}
    rec["statement"]["object"] = {"id": "MONDO:0005061", "label": "lung adenocarcinoma", "entity_type": "disease"}
    rec["source_artifacts"] = [{"id": "t:paper", "title": paper["title"], "source_type": "publication",
                                "uri": f"pmid:{PMID}", "version": "ncbi 2026", "retrieved_at": "2026-09-21T00:00:00Z",
                                "sha256": paper["sha"]}]
    items, lines = [], {}
    for n, (locator, quote, direction) in enumerate(quotes, 1):
        items.append({"id": f"t:item-{n}", "source_artifact_id": "t:paper", "locator": locator,
                      "extracted_text": quote, "evidence_type": "publication_result",
                      "extraction_method": "manual_curation", "scope": ["NCBITaxon:9606"]})
        lines.setdefault(direction, []).append(f"t:item-{n}")
    rec["evidence_items"] = items
    rec["statement"]["evidence_lines"] = [{"id": f"t:line-{d}", "direction": d, "evidence_item_ids": ids}
                                          for d, ids in lines.items()]
    return rec


def _requoted(feedback: list[str]) -> str:
    match = re.search(r'quote the passage verbatim: "([^"]+)"', " ".join(feedback))
    assert match is not None, feedback
    return match.group(1)


def test_misquote_is_fixed_from_the_closest_passage_feedback(literature: Any, paper: dict[str, str]) -> None:
    validator = Validator("literature-claim", grounders=[literature])
    propose = Script(_paper_record(paper, [("abstract#n7", MISQUOTE, "supports")]),
                     lambda fb: _paper_record(paper, [("abstract#n7", _requoted(fb), "supports")]))
    attempts = revise(propose, validator)
    assert [a.outcome for a in attempts] == ["feedback", "admitted"]
    (line,) = attempts[0].feedback
    assert line.startswith("evidence 1 (#n7): the quote is not in the paper")
    assert "might be improved" in line
    assert attempts[1].report is not None and attempts[1].report.verified == {"t:item-1"}


def test_dropped_verified_contradicting_evidence_is_carried_back(literature: Any, paper: dict[str, str]) -> None:
    validator = Validator("literature-claim", grounders=[literature])
    first = _paper_record(paper, [("abstract#n7", MISQUOTE, "supports"), ("results#n28", SIMILAR, "contradicts")])
    # the revision fixes the quote and quietly drops the evidence against the claim
    propose = Script(first, lambda fb: _paper_record(paper, [("abstract#n7", _requoted(fb), "supports")]))
    attempts = revise(propose, validator)
    assert [a.outcome for a in attempts] == ["feedback", "to_person"]
    assert not any("ontradict" in line for line in attempts[0].feedback)  # judgment is never fed back
    last = attempts[1]
    assert last.carried == ("t:item-2",)
    assert last.record is not None
    carried = next(i for i in last.record["evidence_items"] if i["id"] == "t:item-2")
    assert carried["extracted_text"] == SIMILAR
    lines = {line["direction"]: line["evidence_item_ids"] for line in last.record["statement"]["evidence_lines"]}
    assert lines["contradicts"] == ["t:item-2"]
    assert last.report is not None and "BEV004" in last.report.reason_codes() and last.reason == "judgment"


def test_a_contradiction_goes_to_a_person_and_is_not_fed_back(literature: Any, paper: dict[str, str]) -> None:
    validator = Validator("literature-claim", grounders=[literature])
    rec = _paper_record(paper, [("abstract#n7", CONCLUSION, "supports"), ("results#n28", SIMILAR, "contradicts")])
    propose = Script(rec)
    attempts = revise(propose, validator)
    assert [a.outcome for a in attempts] == ["to_person"]
    assert attempts[0].feedback == () and propose.told == [[]]
    assert attempts[0].routes == ("judgment",) and attempts[0].to_person


def test_a_paper_without_open_full_text_goes_to_a_person(civic_snapshots: Path, tmp_path: Path,
                                                         paper: dict[str, str]) -> None:
    """The same real paper pinned as the pin stage pins a closed-access one: metadata only."""
    from bioevidence.gate.grounders.literature import LiteratureGrounder

    catalogue = json.loads((civic_snapshots / "literature.json").read_text())
    work = dict(catalogue["works"][f"pmid:{PMID}"], fulltext_sha256=None, license=None)
    shutil.copy(civic_snapshots / f"{work['metadata_sha256']}.json.gz", tmp_path)
    (tmp_path / "literature.json").write_text(json.dumps({"version": 1, "works": {f"pmid:{PMID}": work}}))
    closed = dict(paper, sha=work["metadata_sha256"])
    validator = Validator("literature-claim", grounders=[LiteratureGrounder.from_directory(tmp_path)])
    propose = Script(_paper_record(closed, [("abstract#n7", CONCLUSION, "supports")]))
    attempts = revise(propose, validator)
    assert [a.outcome for a in attempts] == ["to_person"]
    assert attempts[0].reason == "cannot-confirm" and propose.told == [[]]
    assert gzip.decompress((tmp_path / f"{work['metadata_sha256']}.json.gz").read_bytes())  # real bytes used


# -- the generator core and its runners --------------------------------------------------------

def test_the_flow_yields_asks_and_receives_proposals_without_io() -> None:
    flow = revision_flow(Validator("general"), rounds=2)
    assert next(flow) == Ask(1, ())
    bad = record()
    bad["statement"]["scope"] = ["NCBITaxon:10090"]  # item scope no longer matches: BEV005, fixable
    ask = flow.send(bad)
    assert ask.round == 2
    assert ask.feedback == (
        "evidence line 1: Supporting evidence 't:item-1' has scope ['NCBITaxon:9606']; the statement's scope is "
        "['NCBITaxon:10090']. -- fix: set the scope of evidence 1 (row=1) to NCBITaxon:10090",
        "evidence lines: No resolved, scope-matched supporting evidence.")
    with pytest.raises(StopIteration) as stop:
        flow.send(record())
    assert [a.outcome for a in stop.value.value] == ["feedback", "admitted"]


def test_async_runner_drives_the_same_flow_and_builds_model_drafts() -> None:
    draft = {"profile": "general", "uses": ["training_data"],
             "statement": {"subject": {"id": "t:a", "label": "A", "type": "protein"}, "predicate": "binds",
                           "object": {"id": "t:b", "label": "B", "type": "protein"}, "scope": ["NCBITaxon:9606"]},
             "sources": [{"id": "s", "type": "dataset_snapshot", "title": "T", "version": "1",
                          "retrieved_at": "2026-09-21T00:00:00Z", "sha256": "ab" * 32}],
             "evidence": [{"source": "s", "locator": "row=1", "type": "x", "scope": ["NCBITaxon:9606"]}]}
    told: list[list[str]] = []

    async def propose(feedback: list[str]) -> Any:
        told.append(feedback)
        return {**draft, "method": "manual_curation"} if not told[:-1] else draft

    attempts = asyncio.run(arevise(propose, Validator("general")))
    # round 1: a model may not state the method (the pipeline sets it) -- fed back as one line
    assert attempts[0].record is None and attempts[0].error is not None and "method" in attempts[0].error
    assert told[1] == [f"draft: {attempts[0].error}"]
    # round 2: built with llm_extraction; training_data needs a person (policy), nothing fixable
    assert attempts[1].outcome == "to_person" and attempts[1].reason == "policy"
    assert attempts[1].record is not None
    assert attempts[1].record["evidence_items"][0]["extraction_method"] == "llm_extraction"


def test_a_proposer_that_stops_after_feedback_leaves_the_record_with_a_person() -> None:
    bad = record()
    bad["statement"]["scope"] = ["NCBITaxon:10090"]
    attempts = revise(Script(bad, None), Validator("general"))
    assert [a.outcome for a in attempts] == ["stopped"] and attempts[0].to_person
    assert attempts[0].feedback  # what it was told before it stopped


def test_changing_the_claim_while_a_contradiction_is_pending_goes_to_a_person() -> None:
    first = record()
    first["evidence_items"].append(dict(first["evidence_items"][0], id="t:item-2", locator="row=2"))
    first["statement"]["evidence_lines"].append({"id": "t:line-2", "direction": "contradicts",
                                                 "evidence_item_ids": ["t:item-2"]})
    first["statement"]["scope"] = ["NCBITaxon:10090"]  # fixable too, so the loop goes on
    second = record()
    second["statement"]["object"]["id"] = "t:process-b"
    attempts = revise(Script(first, second), Validator("general"))
    assert [a.outcome for a in attempts] == ["feedback", "to_person"]
    assert "claim changed" in attempts[1].reason


# -- carry and where, directly -----------------------------------------------------------------

def test_carry_only_while_the_claim_is_unchanged_and_puts_flipped_items_back() -> None:
    previous = record()
    flipped = copy.deepcopy(previous)
    flipped["statement"]["evidence_lines"][0]["direction"] = "contradicts"
    merged, put_back = carry(previous, {"t:item-1"}, flipped)
    assert put_back == ("t:item-1-2",)
    assert {line["direction"] for line in merged["statement"]["evidence_lines"]} == {"contradicts", "supports"}
    other = copy.deepcopy(previous)
    other["statement"]["predicate"] = "regulates"
    other["evidence_items"] = []
    assert carry(previous, {"t:item-1"}, other) == (other, ())


def test_carry_copies_the_source_when_the_revision_lacks_it() -> None:
    previous = record()
    revised = record()
    revised["source_artifacts"][0].update(id="t:source-2", sha256="cd" * 32)
    revised["evidence_items"][0].update(source_artifact_id="t:source-2")
    merged, put_back = carry(previous, {"t:item-1"}, revised)
    assert put_back == ("t:item-1-2",)
    assert [s["id"] for s in merged["source_artifacts"]] == ["t:source-2", "t:source-1"]
    assert merged["evidence_items"][-1]["source_artifact_id"] == "t:source-1"


@pytest.mark.parametrize(("path", "expected"), [
    ("$.evidence_items[0].extracted_text", "evidence 1 (row=1)"),
    ("$.source_artifacts[0].sha256", "source 1 (https://example.org/source)"),
    ("$.statement.object.label", "object t:process-a"),
    ("$.statement.evidence_lines[0]", "evidence line 1"),
    ("$.adjudications[1]", "review 2"),
    ("$.requested_uses", "requested uses"),
    ("$", "record"),
], ids=["evidence", "source", "object", "line", "review", "other", "root"])
def test_where_names_places_readably(path: str, expected: str) -> None:
    assert where(record(), path) == expected


def test_rounds_below_one_are_a_configuration_error() -> None:
    from bioevidence.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="at least 1"):
        revise(Script(record()), Validator("general"), rounds=0)
