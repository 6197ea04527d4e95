"""The gate cannot be walked around: a paper is grounded whatever its declared type, and nothing
with publication evidence is admitted unchecked by default (issue 10, points 6 and 7).

Real records citing real CIViC papers (PMID 15696205 and others in ``civic_corpus/snapshots``),
through the Python API and through ``bioevidence validate`` (click's CliRunner).
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bioevidence import validate
from bioevidence.cli import cli
from bioevidence.errors import ConfigurationError
from bioevidence.gate.grounders.config import GrounderOptions, build_grounders
from bioevidence.gate.profiles import parse_profile
from bioevidence.gate.validator import Validator
from builders import claim_record


@pytest.fixture(scope="module")
def grounders(corpus_dir: Path, cache_dir: Path) -> list[Any]:
    return build_grounders(GrounderOptions(snapshot_dir=corpus_dir, cache_root=cache_dir))


@pytest.fixture(scope="module")
def one(papers: dict[str, dict[str, Any]], corpus_dir: Path) -> dict[str, Any]:
    """A true record: the first sentence of the first text-only ``sec/p`` of the first good paper
    (read with plain lxml)."""
    import gzip
    import re

    from lxml import etree

    pmid = sorted(p for p, v in papers.items() if not v["retracted"])[0]
    paper = papers[pmid]
    root = etree.fromstring(gzip.decompress((corpus_dir / f"{paper['sha']}.xml.gz").read_bytes()),
                            etree.XMLParser(resolve_entities=False, no_network=True))
    text = next(" ".join(p.text.split()) for p in root.iterfind(".//body//sec/p")
                if not len(p) and p.text and len(p.text.split()) > 12)
    sentence = re.split(r"(?<=[a-z0-9]\.) (?=[A-Z])", text)[0]
    return claim_record(0, pmid, paper["sha"], paper["title"], sentence)


def codes(report: Any) -> set[str]:
    return {f.rule_id for f in report.findings}


def _declared(rec: dict[str, Any], source_type: str) -> dict[str, Any]:
    out = copy.deepcopy(rec)
    out["source_artifacts"][0]["source_type"] = source_type
    return out


def _misquoted(rec: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(rec)
    text = out["evidence_items"][0]["extracted_text"]
    words = text.split()
    out["evidence_items"][0]["extracted_text"] = " ".join([*words[:3], "never", *words[3:]])
    return out


def test_the_true_record_is_admitted(one: dict[str, Any], grounders: list[Any]) -> None:
    report = Validator("literature-claim", grounders=grounders).validate(one)
    assert report.overall_status == "admitted", [f.message for f in report.findings]
    assert report.verified == {"e"}


@pytest.mark.parametrize("declared", ["web_page", "dataset_snapshot", "local_file", "registry_snapshot"])
def test_a_paper_declared_another_type_is_rejected_and_its_quote_still_checked(
        one: dict[str, Any], grounders: list[Any], declared: str) -> None:
    validator = Validator("literature-claim", grounders=grounders)
    report = validator.validate(_declared(one, declared))
    assert report.overall_status == "rejected" and "BEV033" in codes(report)
    (bev033,) = [f for f in report.findings if f.rule_id == "BEV033"]
    assert declared in bev033.message and bev033.fix is not None and bev033.fix.value == "publication"
    assert not report.verified  # never verified through a contradicted type
    misquote = validator.validate(_misquoted(_declared(one, declared)))
    assert {"BEV033", "BEV017"} <= codes(misquote)  # the quote is checked against the paper all the same


def test_a_paper_named_only_by_its_pinned_hash_is_grounded(one: dict[str, Any], grounders: list[Any]) -> None:
    """No identifier, another declared type, but the sha256 is the pinned full text of a catalogued paper."""
    rec = _declared(one, "web_page")
    rec["source_artifacts"][0]["uri"] = "https://example.org/some/page"
    validator = Validator("literature-claim", grounders=grounders)
    report = validator.validate(rec)
    assert "BEV033" in codes(report) and "pinned snapshot of pmid:" in next(
        f.message for f in report.findings if f.rule_id == "BEV033")
    assert "BEV017" in codes(validator.validate(_misquoted(rec)))


def test_a_pinned_jats_article_no_catalogue_lists_is_read_and_never_admitted(
        one: dict[str, Any], corpus_dir: Path, tmp_path: Path, cache_dir: Path) -> None:
    sha = one["source_artifacts"][0]["sha256"]
    shutil.copy(corpus_dir / f"{sha}.xml.gz", tmp_path)
    (tmp_path / "literature.json").write_text(json.dumps({"version": 1, "works": {}}))
    validator = Validator("literature-claim", grounders=build_grounders(GrounderOptions(
        snapshot_dir=tmp_path, cache_root=cache_dir)))
    rec = copy.deepcopy(one)
    del rec["source_artifacts"][0]["uri"]
    report = validator.validate(rec)
    assert report.overall_status == "review_required" and report.reason_codes() == ["BEV015"]  # existence unpinned
    assert "BEV017" in codes(validator.validate(_misquoted(rec)))  # but its quotes are checked


def test_a_dataset_doi_with_pinned_data_bytes_is_left_to_the_bytes_grounder(
        one: dict[str, Any], tmp_path: Path, cache_dir: Path) -> None:
    from bioevidence.sources.store import SnapshotStore

    sha = SnapshotStore(tmp_path).put(b"gene\tcluster\tlogfc\nCD8A\t3\t2.41\n", "tsv")
    (tmp_path / "literature.json").write_text(json.dumps({"version": 1, "works": {}}))
    rec = _declared(one, "dataset_snapshot")
    rec["source_artifacts"][0].update(uri="doi:10.5281/zenodo.1234567", sha256=sha, observed_sha256=sha)
    rec["statement"]["evidence_lines"][0]["direction"] = "supports"
    report = Validator("general", grounders=build_grounders(GrounderOptions(
        snapshot_dir=tmp_path, cache_root=cache_dir))).validate({**rec, "profile_id": "general"})
    assert not codes(report) & {"BEV029", "BEV033", "BEV015"}, [f.message for f in report.findings]


def test_without_a_literature_source_publication_evidence_goes_to_review(one: dict[str, Any]) -> None:
    report = validate(one)
    assert report.overall_status == "review_required"
    (f,) = [f for f in report.findings if f.rule_id == "BEV029"]
    assert f.severity == "review" and f.message.startswith("1 quote was not checked against its paper")
    assert "bioevidence ground" in f.message and "--snapshot-dir" in f.message
    two = copy.deepcopy(one)
    two["evidence_items"].append({**two["evidence_items"][0], "id": "e2"})
    two["statement"]["evidence_lines"][0]["evidence_item_ids"].append("e2")
    assert "2 quotes were not checked" in next(x.message for x in validate(two).findings if x.rule_id == "BEV029")
    # an explicit choice gives 0.8.0's decision, and the report says grounding was off
    off = validate(one, grounding=False)
    assert off.overall_status == "admitted" and off.to_dict()["grounding_off"] is True
    with pytest.raises(ConfigurationError, match="no grounders"):
        Validator("literature-claim", grounders=[object()], grounding=False)  # type: ignore[list-item]


def test_a_source_bytes_grounder_alone_is_not_a_literature_source(one: dict[str, Any], corpus_dir: Path,
                                                                   tmp_path: Path) -> None:
    sha = one["source_artifacts"][0]["sha256"]
    shutil.copy(corpus_dir / f"{sha}.xml.gz", tmp_path)  # a folder with the bytes but no literature.json
    report = Validator("literature-claim", grounders=build_grounders(GrounderOptions(
        snapshot_dir=tmp_path))).validate(one)
    assert "BEV029" in codes(report) and report.overall_status == "review_required"


def _cli(tmp_path: Path, rec: dict[str, Any], *args: str, env: dict[str, str] | None = None) -> Any:
    path = tmp_path / "record.json"
    path.write_text(json.dumps(rec))
    return CliRunner().invoke(cli, ["validate", str(path), *args], env=env)


@pytest.mark.parametrize("fmt", ["json", "jsonl", "text", "markdown", "sarif"])
def test_the_cli_sends_unchecked_quotes_to_review_in_every_format(one: dict[str, Any], tmp_path: Path,
                                                                  fmt: str) -> None:
    result = _cli(tmp_path, one, "--format", fmt, env={"BIOEVIDENCE_STORE": "", "BIOEVIDENCE_HOME": str(tmp_path)})
    assert result.exit_code == 2, result.output
    assert "BEV029" in result.stdout
    if fmt in ("json", "jsonl", "sarif"):
        assert "not checked against its paper" in result.stdout


def test_no_grounding_is_explicit_recorded_and_exclusive(one: dict[str, Any], tmp_path: Path,
                                                         corpus_dir: Path) -> None:
    result = _cli(tmp_path, one, "--no-grounding", env={"BIOEVIDENCE_STORE": ""})
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["overall_status"] == "admitted" and report["grounding_off"] is True and "grounding" not in report
    both = _cli(tmp_path, one, "--no-grounding", "--snapshot-dir", str(corpus_dir))
    assert both.exit_code == 3 and "--no-grounding" in both.output


def test_the_home_store_grounds_when_no_flag_is_given(one: dict[str, Any], tmp_path: Path,
                                                      corpus_dir: Path) -> None:
    result = _cli(tmp_path, one, env={"BIOEVIDENCE_STORE": str(corpus_dir)})
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["overall_status"] == "admitted" and report["grounding"][1].startswith("literature:")
    assert report["quote_locations"][0]["part"] == "body"
    bad = _cli(tmp_path, _misquoted(one), env={"BIOEVIDENCE_STORE": str(corpus_dir)})
    assert bad.exit_code == 1 and "BEV017" in bad.stdout


def test_a_profile_restricting_quote_parts_sends_other_parts_to_review(
        papers: dict[str, dict[str, Any]], grounders: list[Any], repo: Path) -> None:
    """The title of a cited work is verified (with a note) but the profile quotes only body and abstract."""
    from bioevidence.gate.grounders.literature import LiteratureGrounder

    literature = next(g for g in grounders if isinstance(g, LiteratureGrounder))
    pmid = sorted(p for p, v in papers.items() if not v["retracted"])[0]
    work = literature.catalogue.get(f"pmid:{pmid}")
    paper = literature.paper(work, literature.metadata(work))
    assert paper is not None
    ref = next(p for p in paper.passages if p.part == "references" and p.cited and
               len(p.text[p.cited[0]:p.cited[1]].split()) >= 6)
    rec = claim_record(0, pmid, papers[pmid]["sha"], papers[pmid]["title"], ref.text[ref.cited[0]:ref.cited[1]])
    default = Validator("literature-claim", grounders=grounders).validate(rec)
    assert default.overall_status == "admitted"
    (note,) = [f for f in default.findings if f.rule_id == "BEV031"]
    assert note.severity == "info" and "from the reference list: the title of a cited work" in note.message
    assert default.quotes[0].part == "references"
    text = (repo / "profiles" / "literature-claim.yaml").read_text() + "quote_parts: [body, abstract]\n"
    strict = parse_profile(text.encode(), source="strict.yaml")
    report = Validator(strict, grounders=grounders).validate(rec)
    assert report.overall_status == "review_required" and "BEV032" in report.reason_codes()
    assert "references" in next(f.message for f in report.findings if f.rule_id == "BEV032")


def test_local_jats_files_are_pinned_as_their_own_metadata_and_ground_quotes(shared_data: Path,
                                                                            tmp_path: Path) -> None:
    """``sources pin-local``: a PLOS paper from jats/, catalogued by its DOI, its sentence verified."""
    import re

    from lxml import etree

    path = shared_data / "jats" / "plos" / "journal.pbio.1000359.xml"
    snapshots = tmp_path / "snapshots"
    result = CliRunner().invoke(cli, ["sources", "pin-local", str(path), "--snapshot-dir", str(snapshots)])
    assert result.exit_code == 0, result.output
    key, sha, _ = result.stdout.strip().split("\t")
    root = etree.fromstring(path.read_bytes(), etree.XMLParser(resolve_entities=False, no_network=True))
    doi = root.findtext(".//article-id[@pub-id-type='doi']")
    assert key == f"doi:{doi.lower()}"
    title = " ".join("".join(root.find(".//article-title").itertext()).split())
    text = next(" ".join("".join(p.itertext()).split()) for p in root.iterfind(".//body//sec/p")
                if all(c.tag in ("italic", "bold") for c in p.iter() if c is not p) and len("".join(
                    p.itertext()).split()) > 12)
    sentence = re.split(r"(?<=[a-z0-9]\.) (?=[A-Z])", text)[0]
    rec = claim_record(0, "1", sha, title, sentence)
    rec["source_artifacts"][0]["uri"] = key
    report = validate({**rec, "profile_id": "general"}, grounders=build_grounders(GrounderOptions(
        snapshot_dir=snapshots)))
    assert report.overall_status == "admitted", [f.message for f in report.findings]
    assert "BEV017" in {f.rule_id for f in validate({**_misquoted(rec), "profile_id": "general"},
                                                     grounders=build_grounders(GrounderOptions(
                                                         snapshot_dir=snapshots))).findings}
