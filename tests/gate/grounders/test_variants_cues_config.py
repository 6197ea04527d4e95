"""Variant grounder on an invented two-line assembly report; cues; the grounder factory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bioevidence.errors import ConfigurationError
from bioevidence.gate.grounders.config import GrounderOptions, build_grounders, parse_term_roots
from bioevidence.gate.grounders.cues import CueChecker
from bioevidence.gate.grounders.variants import VariantGrounder, parse_assembly_report

REPORT = (b"# Assembly name:  GRCh38.p14\n# Sequence-Name\tSequence-Role\tAssigned-Molecule\t"
          b"Assigned-Molecule-Location/Type\tGenBank-Accn\tRelationship\tRefSeq-Accn\tAssembly-Unit\t"
          b"Sequence-Length\tUCSC-style-name\n"
          b"7\tassembled-molecule\t7\tChromosome\tCM000669.2\t=\tNC_000007.14\tPrimary Assembly\t159345973\tchr7\n")


def variant_record(hgvs: str, scope: str = "GRCh38") -> dict[str, Any]:
    return {"requested_uses": ["u"], "statement": {"subject": {"id": hgvs, "label": "v", "entity_type": "variant"},
                                                    "scope": [scope]}, "evidence_items": []}


@pytest.fixture()
def variants() -> VariantGrounder:
    return VariantGrounder([parse_assembly_report(REPORT)])


@pytest.mark.parametrize("hgvs,scope,codes", [
    ("NC_000007.14:g.140753336A>T", "GRCh38", []),
    ("NC_000007.14:g.140753336A>T", "hg19", ["BEV017"]),
    ("NC_000007:g.140753336A>T", "GRCh38", ["BEV024"]),
    ("BRAF V600E", "GRCh38", ["BEV024"]),
    ("NC_000007.13:g.140453136A>T", "GRCh38", ["BEV016"]),
    ("NC_000007.14:g.159345974A>T", "GRCh38", ["BEV016"]),
    ("NM_004333.6:c.1799T>A", "GRCh38", []),
], ids=["ok", "wrong-build", "unversioned", "not-hgvs", "unpinned-version", "beyond-end", "transcript-form-only"])
def test_variant_rules(variants: VariantGrounder, hgvs: str, scope: str, codes: list[str]) -> None:
    assert [f.rule_id for f in variants.ground(variant_record(hgvs, scope)).findings] == codes


def test_negated_quote_for_positive_claim_goes_to_review() -> None:
    record = {"requested_uses": ["u"], "statement": {"predicate": "associated_with", "scope": ["NCBITaxon:9606"],
                                                      "evidence_lines": [{"direction": "supports",
                                                                          "evidence_item_ids": ["e"]}]},
              "evidence_items": [{"id": "e", "extracted_text": "KRAS mutation did not predict response in mice."}]}
    codes = [f.rule_id for f in CueChecker().ground(record).findings]
    assert codes == ["BEV022", "BEV022"]


def test_factory_builds_named_grounders(shared_data: Path, cache_dir: Path) -> None:
    options = GrounderOptions(
        snapshot_dir=shared_data / "civic_corpus" / "snapshots",
        ontologies=(shared_data / "references" / "cl_2026-06-08.obo.gz",),
        term_roots=parse_term_roots(["cell_type=CL:0000000"]),
        genes=(shared_data / "references" / "hgnc_complete_set_2026-09-30.tsv.gz",), cues=True, cache_root=cache_dir)
    names = [g.name for g in build_grounders(options)]
    assert names[0] == "source-bytes" and names[1].startswith("literature:snapshots@")
    assert names[2:] == ["ontology:CL@2026-06-08", "genes:HGNC@2026-09-30", "semantic-cues"]


def test_factory_rejects_bad_options() -> None:
    with pytest.raises(ConfigurationError):
        parse_term_roots(["cell_type"])
    with pytest.raises(ConfigurationError):
        build_grounders(GrounderOptions(term_roots={"cell_type": "CL:0000000"}))


@pytest.mark.parametrize("predicate, flagged", [
    ("associated_with", True), ("supports_significance", True), ("annotated_with", True),
    ("not_associated_with", False), ("does_not_support", False),
    # CIViC "Does Not Support" items as 0.8.0's civic_literature case writes them: a negated sentence agrees
    ("does_not_support_significance", False), ("has_no_effect_on", False), ("lacks", False),
])
def test_a_negative_predicate_is_known_by_its_words(predicate: str, flagged: bool) -> None:
    record = {"requested_uses": ["u"], "statement": {"predicate": predicate, "scope": [],
                                                      "evidence_lines": [{"direction": "supports",
                                                                          "evidence_item_ids": ["e"]}]},
              "evidence_items": [{"id": "e", "extracted_text": "The mutation was not associated with response."}]}
    codes = [f.rule_id for f in CueChecker().ground(record).findings]
    assert codes == (["BEV022"] if flagged else [])
