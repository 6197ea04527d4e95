"""A quote and title cited under the wrong PMID, with the paper that holds both pinned in the same
folder (issue 24 item 6): the finding names that paper and the fix is to cite it, in the grounder,
in every report format and in ``revise()`` feedback. Real CIViC papers."""

from __future__ import annotations

import copy
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.gate.grounders.literature import LiteratureGrounder
from bioevidence.gate.validator import Validator
from bioevidence.loop.revise import revise
from builders import claim_record

HOLDER = "22292935"  # PIK3CA amplification in gastric cancer
WRONG = "15696205"  # KRAS and gefitinib/erlotinib resistance: another pinned paper
QUOTE = ("PIK3CA amplification was closely associated with increased phosphorylated Akt (p-Akt) level.")
SECOND = "PIK3CA amplification was significantly positively associated with cancer-related death."


@pytest.fixture(scope="module")
def grounder(corpus_dir: Path, cache_dir: Path) -> LiteratureGrounder:
    return LiteratureGrounder.from_directory(corpus_dir, cache_root=cache_dir)


def _work(corpus_dir: Path, pmid: str) -> dict[str, str]:
    work = json.loads((corpus_dir / "literature.json").read_text())["works"][f"pmid:{pmid}"]
    summary = json.loads(gzip.decompress((corpus_dir / f"{work['metadata_sha256']}.json.gz").read_bytes()))
    return {"sha": work["fulltext_sha256"], "title": summary["result"][pmid]["title"]}


@pytest.fixture(scope="module")
def papers(corpus_dir: Path) -> dict[str, dict[str, str]]:
    return {p: _work(corpus_dir, p) for p in (HOLDER, WRONG)}


def _misattributed(papers: dict[str, dict[str, str]], *quotes: str) -> dict[str, Any]:
    """The holder's title and quotes, cited under the other paper's PMID and pinned hash."""
    rec = claim_record(0, WRONG, papers[WRONG]["sha"], papers[HOLDER]["title"], quotes[0])
    rec["evidence_items"][0]["locator"] = "abstract"
    for n, quote in enumerate(quotes[1:], 2):
        item = copy.deepcopy(rec["evidence_items"][0])
        item.update(id=f"e{n}", extracted_text=quote)
        rec["evidence_items"].append(item)
        rec["statement"]["evidence_lines"][0]["evidence_item_ids"].append(f"e{n}")
    return rec


def test_the_finding_names_the_paper_that_holds_quote_and_title(grounder: LiteratureGrounder,
                                                                 papers: dict[str, dict[str, str]]) -> None:
    result = grounder.ground(_misattributed(papers, QUOTE))
    by_path = {f.field_path: f for f in result.findings}
    uri = by_path["$.source_artifacts[0].uri"]
    assert uri.rule_id == "BEV017" and f"the quote and title are pmid:{HOLDER}'s" in uri.message
    assert f"not pmid:{WRONG}'s" in uri.message and uri.fix and uri.fix.value == f"pmid:{HOLDER}"
    sha = by_path["$.source_artifacts[0].sha256"]
    assert sha.fix and sha.fix.value == papers[HOLDER]["sha"]
    # neither wrong fix: the other paper's title, or a requote from a paper that does not say it
    assert "$.source_artifacts[0].title" not in by_path and "$.evidence_items[0].extracted_text" not in by_path
    assert result.verified == frozenset()


def test_two_quotes_are_counted_and_the_corrected_record_is_admitted(grounder: LiteratureGrounder,
                                                                     papers: dict[str, dict[str, str]]) -> None:
    result = grounder.ground(_misattributed(papers, QUOTE, SECOND))
    (uri,) = [f for f in result.findings if f.field_path.endswith(".uri")]
    assert f"2 quotes and the title are pmid:{HOLDER}'s" in uri.message
    fixed = claim_record(0, HOLDER, papers[HOLDER]["sha"], papers[HOLDER]["title"], QUOTE)
    fixed["evidence_items"][0]["locator"] = "abstract"
    assert grounder.ground(fixed).findings == [] and grounder.ground(fixed).verified == {"e"}


def test_a_quote_the_titled_paper_does_not_hold_gets_the_ordinary_findings(grounder: LiteratureGrounder,
                                                                          papers: dict[str, dict[str, str]]) -> None:
    """Only when the other paper holds every quote is the record said to cite the wrong paper."""
    invented = "PIK3CA amplification was never associated with phosphorylated Akt in any of the tumours."
    result = grounder.ground(_misattributed(papers, QUOTE, invented))
    paths = {f.field_path: f.rule_id for f in result.findings}
    assert paths.get("$.source_artifacts[0].title") == "BEV017"
    assert not any(f"pmid:{HOLDER}'s" in f.message for f in result.findings)
    assert result.verified == frozenset()


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "sarif"])
def test_every_format_names_the_holder(corpus_dir: Path, papers: dict[str, dict[str, str]], tmp_path: Path,
                                       fmt: str) -> None:
    path = tmp_path / "claim.json"
    path.write_text(json.dumps(_misattributed(papers, QUOTE)), encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(path), "--snapshot-dir", str(corpus_dir), "--format", fmt])
    assert result.exit_code == 1, result.output
    assert f"pmid:{HOLDER}'s" in result.output and f"pmid:{HOLDER}" in result.output


def test_revise_feedback_says_to_cite_the_holder_and_round_two_is_admitted(
        grounder: LiteratureGrounder, papers: dict[str, dict[str, str]]) -> None:
    told: list[list[str]] = []

    def propose(feedback: list[str]) -> dict[str, Any]:
        told.append(list(feedback))
        if not feedback:
            return _misattributed(papers, QUOTE)
        text = " ".join(feedback)
        uri = re.search(r"set the uri to \"?(pmid:\d+)", text)
        sha = re.search(r"set the sha256 to \"?([0-9a-f]{64})", text)
        assert uri and sha, feedback
        rec = _misattributed(papers, QUOTE)
        rec["source_artifacts"][0].update(uri=uri.group(1), sha256=sha.group(1), observed_sha256=sha.group(1))
        return rec

    attempts = revise(propose, Validator("literature-claim", grounders=[grounder]))
    assert [a.outcome for a in attempts] == ["feedback", "admitted"], [a.feedback for a in attempts]
    assert any(f"pmid:{HOLDER}'s" in line for line in attempts[0].feedback)
