"""Grounders end to end, through ``Validator`` and ``bioevidence validate`` (click's CliRunner), on real data.

* CIViC: complete ``literature-claim`` records quoting a real sentence of each paper are admitted
  for ``research_summary`` with ``--snapshot-dir`` (zero false blocks); controls are not.
* CL and HGNC: wrong labels are rejected, naming the correction; also from a profile's
  ``grounders:`` section with no flags.
* A paper without open full text: the quote is verified against its pinned PubMed abstract.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from lxml import etree

from bioevidence.cli import cli
from bioevidence.gate.grounders.literature import LiteratureGrounder
from bioevidence.gate.validator import Validator
from bioevidence.sources.catalogue import Catalogue, Work
from bioevidence.sources.store import SnapshotStore
from builders import claim_record


@pytest.fixture()
def cache_env(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BIOEVIDENCE_CACHE", str(cache_dir))
    return cache_dir


def run_validate(tmp_path: Path, records: list[dict[str, Any]], *args: str) -> tuple[int, list[dict[str, Any]]]:
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = CliRunner().invoke(cli, ["validate", str(path), "--format", "jsonl", "--workers", "1", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    reports = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert len(reports) == len(records), result.output
    return result.exit_code, reports


def test_true_civic_quotes_are_admitted_through_the_cli(papers: dict, corpus_dir: Path, tmp_path: Path,
                                                        cache_env: Path) -> None:
    good = sorted(p for p, v in papers.items() if not v["retracted"])
    records = [claim_record(i, pmid, papers[pmid]["sha"], papers[pmid]["title"], papers[pmid]["paragraphs"][0][0])
               for i, pmid in enumerate(good)]
    assert len(records) >= 100
    code, reports = run_validate(tmp_path, records, "--profile", "literature-claim", "--snapshot-dir", str(corpus_dir))
    blocked = [(r["record_id"], [f["message"] for f in r["findings"]]) for r in reports
               if r["overall_status"] != "admitted"]
    assert blocked == [] and code == 0
    assert reports[0]["grounding"][0] == "source-bytes" and reports[0]["grounding"][1].startswith("literature:")


def _control(sentence: str) -> str:
    verb = re.search(r"\b(is|was|were|are)\b", sentence)
    return sentence[:verb.end()] + " not" + sentence[verb.end():] if verb else "Not " + sentence


def test_controls_are_never_admitted_through_the_validator(papers: dict, corpus_dir: Path, manifest: dict,
                                                           cache_dir: Path) -> None:
    grounders = [LiteratureGrounder.from_directory(corpus_dir, cache_root=cache_dir)]
    from bioevidence.gate.grounders.snapshots import SourceBytesGrounder

    validator = Validator("literature-claim", grounders=[SourceBytesGrounder(grounders[0].store), *grounders])
    good = sorted(p for p, v in papers.items() if not v["retracted"])
    controls = []
    for i, pmid in enumerate(good[:40]):
        p = papers[pmid]
        sentence = p["paragraphs"][0][0]
        controls.append(claim_record(i, pmid, p["sha"], p["title"], _control(sentence)))
        controls.append(claim_record(i, good[i + 1], p["sha"], p["title"], sentence))  # another paper's PMID
        controls.append(claim_record(i, pmid, "0" * 64, p["title"], sentence))  # bytes not pinned
    for i, fake in enumerate(manifest["nonexistent_pmids"]):
        controls.append(claim_record(i, fake, papers[good[0]]["sha"], "A title", papers[good[0]]["paragraphs"][0][0]))
    for i, pmid in enumerate(manifest["retracted"]):
        work = Catalogue.load(corpus_dir)[f"pmid:{pmid}"]
        controls.append(claim_record(i, pmid, work.pinned_sha256, "A title", "a quote of more than five words"))
    admitted = [r["record_id"] for r in controls if validator.validate(r).overall_status == "admitted"]
    assert admitted == [] and len(controls) >= 150


def hgnc_symbol(shared_data: Path, hgnc_id: str) -> tuple[str, list[str]]:
    """The approved symbol and previous symbols of ``hgnc_id``, read from the HGNC TSV directly."""
    with gzip.open(shared_data / "references" / "hgnc_complete_set_2026-09-30.tsv.gz", "rt") as handle:
        header = handle.readline().rstrip("\n").split("\t")
        for line in handle:
            row = dict(zip(header, line.rstrip("\n").split("\t"), strict=False))
            if row["hgnc_id"] == hgnc_id:
                return row["symbol"], [s.strip('"') for s in row["prev_symbol"].split("|") if s]
    raise AssertionError(hgnc_id)


def label_record(cell_id: str, cell_label: str) -> dict[str, Any]:
    return {
        "record_id": "cells:1", "profile_id": "dataset-label", "requested_uses": ["reference_annotation"],
        "statement": {"id": "s", "statement_status": "proposed", "predicate": "has_label",
                      "subject": {"id": "sample:1", "label": "sample 1", "entity_type": "sample"},
                      "object": {"id": cell_id, "label": cell_label, "entity_type": "cell_type"},
                      "scope": ["NCBITaxon:9606"],
                      "evidence_lines": [{"id": "l", "direction": "supports", "evidence_item_ids": ["e1", "e2"]}]},
        "source_artifacts": [{"id": "t", "title": "annotations", "source_type": "dataset_snapshot",
                              "uri": "https://example.org/annotations.tsv", "version": "1",
                              "retrieved_at": "2026-09-29T00:00:00Z", "sha256": "ab" * 32,
                              "observed_sha256": "ab" * 32}],
        "evidence_items": [
            {"id": "e1", "source_artifact_id": "t", "locator": "cluster=3;gene=CD8A", "extracted_text": "cluster 3",
             "evidence_type": "curated_label", "extraction_method": "manual_curation", "scope": ["NCBITaxon:9606"]},
            {"id": "e2", "source_artifact_id": "t", "locator": "cluster=3;gene=CD8", "extracted_text": "sample 1",
             "evidence_type": "sample_link", "extraction_method": "deterministic_parser",
             "scope": ["NCBITaxon:9606"]}],
        "adjudications": [],
    }


def obo_name(shared_data: Path, term_id: str) -> str:
    with gzip.open(shared_data / "references" / "cl_2026-06-08.obo.gz", "rt") as handle:
        text = handle.read()
    match = re.search(rf"\n\[Term\]\nid: {re.escape(term_id)}\nname: ([^\n]+)", text)
    assert match is not None
    return match.group(1)


def test_wrong_cell_labels_and_gene_symbols_are_rejected_naming_the_correction(
        shared_data: Path, tmp_path: Path, cache_env: Path) -> None:
    refs = shared_data / "references"
    cd8a, previous = hgnc_symbol(shared_data, "HGNC:1706")
    assert cd8a == "CD8A" and "CD8" in previous
    t_cell = obo_name(shared_data, "CL:0000084")
    good, wrong = label_record("CL:0000084", t_cell), label_record("CL:0000084", "B cell")
    code, (ok, bad) = run_validate(tmp_path, [good, wrong], "--ontology", str(refs / "cl_2026-06-08.obo.gz"),
                                   "--term-root", "cell_type=CL:0000000", "--genes",
                                   str(refs / "hgnc_complete_set_2026-09-30.tsv.gz"))
    assert code == 1 and bad["overall_status"] == "rejected"
    by_code = {f["rule_id"]: f for f in bad["findings"]}
    assert f"'{t_cell}'" in by_code["BEV017"]["message"] and by_code["BEV017"]["fix"]["value"] == t_cell
    # the previous symbol CD8 in a locator names the approved symbol, in both records
    (symbol,) = [f for f in ok["findings"] if f["rule_id"] == "BEV023"]
    assert "CD8A" in symbol["message"] and symbol["fix"]["value"] == "cluster=3;gene=CD8A"


def test_a_profile_grounders_section_needs_no_flags(shared_data: Path, tmp_path: Path, cache_env: Path,
                                                    repo: Path) -> None:
    refs = shared_data / "references"
    profile = (repo / "profiles" / "dataset-label.yaml").read_text().replace("id: dataset-label", "id: cells-test")
    profile += ("grounders:\n"
                f"  ontologies: [{refs / 'cl_2026-06-08.obo.gz'}]\n"
                "  term_roots: {cell_type: \"CL:0000000\"}\n"
                f"  genes: [{refs / 'hgnc_complete_set_2026-09-30.tsv.gz'}]\n")
    path = tmp_path / "cells.yaml"
    path.write_text(profile)
    record = label_record("CL:0000084", "B cell")
    record["profile_id"] = "cells-test"
    code, (report,) = run_validate(tmp_path, [record], "--profile", str(path))
    assert code == 1 and report["grounding"] == ["ontology:CL@2026-06-08", "genes:HGNC@2026-09-30"]
    assert {"BEV017", "BEV023"} <= {f["rule_id"] for f in report["findings"]}


def test_a_paper_without_open_full_text_is_verified_against_its_pinned_abstract(
        shared_data: Path, tmp_path: Path, cache_dir: Path) -> None:
    data = (shared_data / "api_responses" / "pubmed_efetch" / "32051057.xml").read_bytes()
    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))
    abstract = " ".join("".join(root.find(".//AbstractText").itertext()).split())
    title = " ".join("".join(root.find(".//ArticleTitle").itertext()).split())
    sentence = re.split(r"(?<=\.) (?=[A-Z])", abstract)[0]
    store = SnapshotStore(tmp_path)
    sha = store.put(data, "xml")
    catalogue = Catalogue()
    catalogue.add(Work("pmid:32051057", "ncbi", sha, None, None, "2026-09-29T00:00:00+00:00",
                       abstract_sha256=sha))
    catalogue.save(tmp_path)
    grounder = LiteratureGrounder.from_directory(tmp_path, cache_root=cache_dir)
    ok = grounder.ground(claim_record(0, "32051057", sha, title, sentence))
    # verified; its locator said "body", so a warning names where it is: the abstract
    assert [(f.rule_id, f.fix.value if f.fix else None) for f in ok.findings] == [("BEV030", "abstract")]
    assert ok.verified == {"e"}
    digit = re.search(r"\d", sentence)
    words = sentence.split()
    changed = sentence.replace(words[len(words) // 2], "never", 1) if digit is None else \
        sentence[:digit.start()] + str((int(digit.group()) + 1) % 10) + sentence[digit.end():]
    bad = grounder.ground(claim_record(0, "32051057", sha, title, changed))
    assert [f.rule_id for f in bad.findings] == ["BEV017"] and not bad.verified
    assert "abstract" in bad.findings[0].message
