"""civic-literature: 0.8.0's CIViC literature controls on our engine (tools/cases/civic_literature.py).

The case runs once (both engines: ours in process, 0.8.0 in its own interpreter); the targets are checked
against the peer's figures read from its committed results, and the committed table must be the one the
case prints now.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bioevidence import GrounderOptions, Validator, build_grounders, load_profile
from cases import civic_literature
from cases.civic_literature_records import (
    CONTROLS,
    Corpus,
    base_record,
    chosen_sentence,
    derived,
    parse_xml,
    part_sentences,
)
from cases.common import REPO, CaseResult, example

pytestmark = pytest.mark.heavy(seconds=45)


@pytest.fixture(scope="module")
def result(sdist: Path) -> CaseResult:
    return civic_literature.run(sdist)


@pytest.fixture(scope="module")
def peer(sdist: Path) -> dict[str, Any]:
    folder = example(sdist, "civic_literature")
    summary = json.loads((folder / "results" / "summary.json").read_text(encoding="utf-8"))
    rows = (folder / "results" / "controls.jsonl").read_text(encoding="utf-8").splitlines()
    return {"summary": summary, "rows": [json.loads(line) for line in rows]}


def test_no_control_admitted_and_every_one_detected_as_the_peer(result: CaseResult, peer: dict[str, Any]) -> None:
    theirs = peer["summary"]["controls"]
    ours = result.summary["controls"]
    for control in (*CONTROLS, "retracted_source"):
        assert ours[control]["n"] == theirs[control]["n"], control
        assert ours[control]["admitted"] == 0, control
        assert ours[control]["detected"] == theirs[control]["detected"] == theirs[control]["n"], control
    faults = result.summary["controlled_faults"]
    assert faults == {"admitted": 0, "n": sum(theirs[c]["n"] for c in CONTROLS)}
    assert result.summary["retracted"] == {"admitted": 0, "n": theirs["retracted_source"]["n"]}


def test_no_base_record_blocked_that_the_peer_admits(result: CaseResult, peer: dict[str, Any]) -> None:
    base = peer["summary"]["controls"]["base"]
    assert result.summary["base"] == {"admitted": base["n"] - base["false_blocks"], "n": base["n"]}
    assert result.summary["peer"]["base"] == result.summary["base"]


def test_the_rebuilt_records_are_the_peers(result: CaseResult, peer: dict[str, Any]) -> None:
    """Same (paper, control) rows as controls.jsonl, and 0.8.0 gives its committed outcome on every one."""
    rebuild = result.summary["rebuild"]
    assert rebuild["same_rows"] is True
    assert rebuild["peer_rerun_identical"] == rebuild["n"] == len(peer["rows"])


def test_whole_paper_quotes_are_printed_and_ours_verify_more(result: CaseResult) -> None:
    whole = result.summary["whole_paper_quotes"]
    assert whole["n"] >= 10 * civic_literature.PER_PART
    assert whole["verified_peer"] < whole["verified_ours"] <= whole["n"]
    assert f"| all parts | {whole['n']} | {whole['verified_ours']} | {whole['verified_peer']} |" in result.table
    for part in ("title", "abstract", "body", "figure caption", "table cell", "footnote", "back matter"):
        assert f"| {part} | " in result.table


def test_the_committed_table_is_the_regenerated_one(result: CaseResult) -> None:
    committed = (REPO / "docs" / "cases" / "civic-literature.md").read_text(encoding="utf-8")
    assert committed == result.table, "run: .venv/bin/python tools/reproduce.py civic-literature --write"
    assert result.table.startswith("# ") and result.table.endswith("\n")


def test_each_fault_is_caught_for_its_stated_reason(sdist: Path) -> None:
    """One paper's base record is verified; each derived fault is rejected with the finding that names it."""
    folder = example(sdist, "civic_literature")
    corpus = Corpus(folder)
    gate = Validator(load_profile(folder / "profile.yaml"),
                     grounders=build_grounders(GrounderOptions(snapshot_dir=corpus.snapshots)))
    pmid = next(p for p in corpus.papers if chosen_sentence(corpus.paper(p).jats, None) is not None)
    paper = corpus.paper(pmid)
    item = min(corpus.items[pmid], key=lambda row: int(row["evidence_id"]))
    quote = chosen_sentence(paper.jats, item["molecular_profile"].split()[0])
    assert quote is not None
    base = base_record(paper, item, f"#{quote[0]}", quote[1])
    report = gate.validate(corpus.pin(base))
    assert report.overall_status == "admitted" and "bioev:quote-1" in report.verified

    others = derived(base, next(p for p in corpus.papers if p != pmid), corpus.fakes[0])
    fake = gate.validate(corpus.pin(others["fabricated_identifier"] or {}))
    assert fake.overall_status == "rejected"
    assert [f.field_path for f in fake.findings if f.rule_id == "BEV016"] == ["$.source_artifacts[0].uri"]

    wrong = gate.validate(corpus.pin(others["real_identifier_wrong_paper"] or {}))
    assert wrong.overall_status == "rejected" and "BEV017" in wrong.reason_codes()

    altered = others["altered_quote"] or {}
    dropped = quote[1].split()[len(quote[1].split()) // 2]
    report = gate.validate(corpus.pin(altered))
    messages = [f.message for f in report.findings if f.rule_id == "BEV017"]
    assert report.overall_status == "rejected" and messages
    assert any(dropped.strip(".,;:()") in m for m in messages), messages

    for control in ("negation_flip", "species_swap"):
        changed = others[control]
        if changed is not None:
            report = gate.validate(corpus.pin(changed))
            assert report.overall_status == "rejected" and "BEV017" in report.reason_codes(), control

    # without the literature grounder nothing is verified: the base record is not admitted (BEV020)
    bytes_only = Validator(load_profile(folder / "profile.yaml"),
                           grounders=[g for g in build_grounders(GrounderOptions(snapshot_dir=corpus.snapshots))
                                      if not getattr(g, "grounds_literature", False)])
    assert bytes_only.validate(corpus.pin(base)).overall_status != "admitted"


def test_the_jats_reading_resolves_no_entity() -> None:
    hostile = (b'<?xml version="1.0"?><!DOCTYPE article [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
               b"<article><front><article-meta><title-group><article-title>A title of five words &x;"
               b"</article-title></title-group></article-meta></front></article>")
    root = parse_xml(hostile)
    assert "root:" not in "".join(root.itertext())
    assert part_sentences(hostile)["title"] == ["A title of five words"]
