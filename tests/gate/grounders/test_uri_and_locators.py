"""A record must cite the pinned work it quotes (issue 24): its ``uri`` names that work and its
locator is a place in it. Real CIViC papers, through the literature grounder and ``validate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.gate.grounders.literature import LiteratureGrounder
from builders import claim_record

PMID = "24586605"
QUOTE = "The institutional ethics committee Tübingen approved the study (ethic vote 047/2013BO2)."


@pytest.fixture(scope="module")
def grounder(corpus_dir: Path, cache_dir: Path) -> LiteratureGrounder:
    return LiteratureGrounder.from_directory(corpus_dir, cache_root=cache_dir)


@pytest.fixture(scope="module")
def paper(corpus_dir: Path) -> dict[str, Any]:
    import gzip

    work = json.loads((corpus_dir / "literature.json").read_text())["works"][f"pmid:{PMID}"]
    summary = json.loads(gzip.decompress((corpus_dir / f"{work['metadata_sha256']}.json.gz").read_bytes()))
    return {"sha": work["fulltext_sha256"], "title": summary["result"][PMID]["title"]}


def _record(paper: dict[str, Any], uri: str | None = None, locator: str = "body", quote: str = QUOTE) -> dict[str, Any]:
    rec = claim_record(0, PMID, paper["sha"], paper["title"], quote)
    if uri is not None:
        rec["source_artifacts"][0]["uri"] = uri
    rec["evidence_items"][0]["locator"] = locator
    return rec


@pytest.mark.parametrize("uri", ["file:///etc/passwd", "javascript:alert(1)", "https://example.org/paper.pdf",
                                 "not an identifier"])
def test_a_uri_that_names_no_work_is_bev017_naming_the_pinned_one(grounder: LiteratureGrounder,
                                                                  paper: dict[str, Any], uri: str) -> None:
    result = grounder.ground(_record(paper, uri))
    (f,) = [f for f in result.findings if f.field_path == "$.source_artifacts[0].uri"]
    assert f.rule_id == "BEV017" and f"pins, pmid:{PMID}" in f.message and f.fix and f.fix.value == f"pmid:{PMID}"
    assert result.verified == frozenset()


@pytest.mark.parametrize("uri", [f"pmid:{PMID}", f"https://pubmed.ncbi.nlm.nih.gov/{PMID}/",
                                 f"https://europepmc.org/article/MED/{PMID}", f"PMID: {PMID}"])
def test_every_spelling_of_the_works_identifier_is_accepted(grounder: LiteratureGrounder, paper: dict[str, Any],
                                                            uri: str) -> None:
    result = grounder.ground(_record(paper, uri))
    assert result.findings == [] and result.verified == {"e"}, [f.message for f in result.findings]


@pytest.mark.parametrize(("locator", "why"), [("../../etc/passwd", "file path"), ("/etc/passwd", "file path"),
                                               ("C:\\Windows\\win.ini", "file path"),
                                               ("javascript:alert(1)", "javascript: URI"),
                                               ("file:///tmp/x#n309", "file: URI"), ("results\x07", "control")])
def test_a_locator_that_is_no_place_in_a_paper_is_bev024(grounder: LiteratureGrounder, paper: dict[str, Any],
                                                         locator: str, why: str) -> None:
    result = grounder.ground(_record(paper, locator=locator))
    (f,) = result.findings
    assert f.rule_id == "BEV024" and why in f.message and "#n309" in f.message and result.verified == frozenset()


@pytest.mark.parametrize(("locator", "words"), [("#n99999", "anchor #n99999 names no passage"),
                                                (f"pmid:{PMID}#n99999", "anchor #n99999 names no passage"),
                                                ("page 5", "names no place"), ("Section 2.1", "names no place")])
def test_a_locator_naming_no_place_of_the_paper_is_a_warning_with_the_right_one(
        grounder: LiteratureGrounder, paper: dict[str, Any], locator: str, words: str) -> None:
    result = grounder.ground(_record(paper, locator=locator))
    (f,) = result.findings
    assert f.rule_id == "BEV030" and f.severity == "warning" and words in f.message and f.fix is not None
    assert result.verified == {"e"}  # a true quote is never rejected for its locator
    fixed = grounder.ground(_record(paper, locator=str(f.fix.value)))
    assert fixed.findings == [] and fixed.verified == {"e"}, (f.fix.value, [g.message for g in fixed.findings])


@pytest.mark.parametrize("locator", ["full text", "article", f"pmid:{PMID}", f"pmid:{PMID}#n309",
                                     "Materials and Methods"])
def test_locators_naming_the_place_or_the_whole_paper_are_silent(grounder: LiteratureGrounder,
                                                                 paper: dict[str, Any], locator: str) -> None:
    result = grounder.ground(_record(paper, locator=locator))
    assert result.findings == [] and result.verified == {"e"}, [f.message for f in result.findings]


def test_validate_rejects_a_forged_uri_and_says_which_work_the_bytes_are(corpus_dir: Path, paper: dict[str, Any],
                                                                         tmp_path: Path) -> None:
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(_record(paper, "file:///etc/passwd")), encoding="utf-8")
    res = CliRunner().invoke(cli, ["validate", str(path), "--snapshot-dir", str(corpus_dir), "--format", "text"])
    assert res.exit_code == 1 and "REJECTED" in res.output and f"pmid:{PMID}" in res.output, res.output
