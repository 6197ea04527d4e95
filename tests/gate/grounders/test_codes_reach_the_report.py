"""Grounder findings reach the report: the codes the other tests here check one grounder at a time
(BEV014, BEV022, BEV024, BEV025, BEV028) come out of ``Validator.validate`` with that grounder wired
in, on complete records, with the decision they call for. On the same real data: the pinned CIViC
papers and their sentences, the CIViC evidence items (for the reference table) and the Cell Ontology
release; the negated sentence for the cue checker is invented.
"""

from __future__ import annotations

import copy
import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

from bioevidence.gate.grounders.config import GrounderOptions, build_grounders, parse_term_roots
from bioevidence.gate.grounders.crosscheck import ReferenceGrounder
from bioevidence.gate.grounders.cues import CueChecker
from bioevidence.gate.grounders.literature import LiteratureGrounder
from bioevidence.gate.validator import Validator
from bioevidence.sources.catalogue import Catalogue
from builders import claim_record

REPO = Path(__file__).resolve().parents[3]


def codes(report: Any) -> set[str]:
    return {f.rule_id for f in report.findings}


def good(papers: dict[str, dict[str, Any]]) -> list[str]:
    return sorted(p for p, v in papers.items() if not v["retracted"])


def test_a_quote_stopping_before_a_negation_is_bev028_in_the_report(papers: dict, corpus_dir: Path,
                                                                     cache_dir: Path) -> None:
    validator = Validator("literature-claim",
                          grounders=[LiteratureGrounder.from_directory(corpus_dir, cache_root=cache_dir)])
    for pmid in good(papers):
        for sentence in (s for paragraph in papers[pmid]["paragraphs"] for s in paragraph):
            match = re.search(r" (not|without|except) ", sentence)
            if match and len(sentence[:match.start()].split()) >= 6:
                cut = sentence[:match.start()]
                report = validator.validate(claim_record(1, pmid, papers[pmid]["sha"], papers[pmid]["title"], cut))
                assert "BEV028" in codes(report) and report.overall_status == "review_required"
                whole = validator.validate(claim_record(2, pmid, papers[pmid]["sha"], papers[pmid]["title"], sentence))
                assert "BEV028" not in codes(whole)
                return
    raise AssertionError("no pinned sentence with a negation after its sixth word")


def test_tampered_pinned_bytes_are_bev014_and_reject_the_record(papers: dict, corpus_dir: Path, tmp_path: Path,
                                                               cache_dir: Path) -> None:
    pmid = good(papers)[0]
    work = Catalogue.load(corpus_dir)[f"pmid:{pmid}"]
    shutil.copy(corpus_dir / "literature.json", tmp_path / "literature.json")
    shutil.copy(corpus_dir / f"{work.metadata_sha256}.json.gz", tmp_path)
    data = gzip.decompress((corpus_dir / f"{work.fulltext_sha256}.xml.gz").read_bytes())
    (tmp_path / f"{work.fulltext_sha256}.xml.gz").write_bytes(gzip.compress(data.replace(b"the ", b"thy ", 1)))
    validator = Validator("literature-claim",
                          grounders=[LiteratureGrounder.from_directory(tmp_path, cache_root=cache_dir)])
    record = claim_record(1, pmid, papers[pmid]["sha"], papers[pmid]["title"], papers[pmid]["paragraphs"][0][0])
    report = validator.validate(record)
    assert "BEV014" in codes(report) and report.overall_status == "rejected" and not report.verified


def test_a_negated_quote_for_a_positive_claim_is_bev022_in_the_report(papers: dict) -> None:
    pmid = good(papers)[0]
    record = claim_record(1, pmid, papers[pmid]["sha"], papers[pmid]["title"],
                          "KRAS mutation did not predict response in mice.")
    report = Validator("literature-claim", grounders=[CueChecker()]).validate(record)
    assert "BEV022" in codes(report) and not report.admitted


def test_a_non_cell_type_term_as_a_cell_type_is_bev024_in_the_report(shared_data: Path, cache_dir: Path) -> None:
    options = GrounderOptions(ontologies=(shared_data / "references" / "cl_2026-06-08.obo.gz",),
                              term_roots=parse_term_roots(["cell_type=CL:0000000"]), cache_root=cache_dir)
    validator = Validator("cell-type", grounders=build_grounders(options))
    label = json.loads((REPO / "examples" / "labels" / "01_b_cell.json").read_text(encoding="utf-8"))
    assert validator.validate(label).admitted  # the example as written
    wrong = copy.deepcopy(label)
    wrong["statement"]["object"].update({"id": "UBERON:0000061", "label": "anatomical structure"})
    report = validator.validate(wrong)
    assert "BEV024" in codes(report) and report.overall_status == "rejected"


def test_a_reference_asserting_the_opposite_is_bev025_in_the_report(shared_data: Path, papers: dict,
                                                                   tmp_path: Path) -> None:
    directions: dict[tuple[str, str], set[str]] = {}
    with gzip.open(shared_data / "civic_corpus" / "civic-evidence.jsonl.gz", "rt") as handle:
        for line in handle:
            row = json.loads(line)
            if row["molecular_profile"] and row["disease"]:
                directions.setdefault((row["molecular_profile"], row["disease"]), set()).add(row["evidence_direction"])
    against = sorted(pair for pair, seen in directions.items() if seen == {"Does Not Support"})
    assert against
    table = tmp_path / "civic_directions.tsv"
    table.write_text("subject\tpredicate\tobject\n" + "".join(f"{p}\tnot_associated_with\t{d}\n" for p, d in against))
    profile, disease = against[0]
    pmid = good(papers)[0]
    record = claim_record(1, pmid, papers[pmid]["sha"], papers[pmid]["title"], papers[pmid]["paragraphs"][0][0])
    record["statement"]["subject"]["label"] = profile
    record["statement"]["object"]["label"] = disease
    report = Validator("literature-claim", grounders=[ReferenceGrounder.from_file(table)]).validate(record)
    assert "BEV025" in codes(report) and not report.admitted
