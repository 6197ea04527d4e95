"""Ontology and gene grounders on the real Cell Ontology 2026-06-08 and HGNC 2026-09-30.

Expected values were read from the release files themselves (``grep -A12 'id: CL:0000173'``,
``awk '$2=="ERBB2"'`` on the HGNC TSV).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bioevidence.gate.grounders.genes import GeneGrounder
from bioevidence.gate.grounders.obo import label_key, load_ontology
from bioevidence.gate.grounders.ontology import OntologyGrounder


def cell_record(curie: str, label: str, kind: str = "cell_type") -> dict[str, Any]:
    return {"requested_uses": ["reference_annotation"], "statement": {
        "subject": {"id": "SAMPLE:1", "label": "sample 1", "entity_type": "sample"},
        "object": {"id": curie, "label": label, "entity_type": kind}, "scope": ["NCBITaxon:9606"]},
        "evidence_items": []}


@pytest.fixture(scope="session")
def cl(cell_ontology):  # type: ignore[no-untyped-def]
    return OntologyGrounder([cell_ontology], {"cell_type": "CL:0000000"})


def test_name_carries_the_release(cl: OntologyGrounder) -> None:
    assert cl.name == "ontology:CL@2026-06-08"


@pytest.mark.parametrize("curie,label", [("CL:0000173", "pancreatic D cell"), ("CL:0000173", "pancreatic delta cell"),
                                         ("CL:0000084", "T cells"), ("CL:0000084", "t-cell")])
def test_names_exact_synonyms_case_punctuation_and_plural_are_accepted(cl: OntologyGrounder, curie: str,
                                                                        label: str) -> None:
    assert cl.ground(cell_record(curie, label)).findings == []


@pytest.mark.parametrize("tag, codes", [("CL:v2026-06-08", []), ("CL:2026-06-08", []), ("CL:v2025-01-01", ["BEV017"]),
                                        ("CL:0000236", []), ("CL:9999999", ["BEV016"])])
def test_a_scope_release_tag_pins_the_release_and_names_no_term(cl: OntologyGrounder, tag: str,
                                                               codes: list[str]) -> None:
    """0.8.0's VBO case writes the release in the scope (``VBO:v2026-04-15``): the pinned release passes,
    another release is BEV017 with the pinned one as fix; a term id in the scope is still a term."""
    record = cell_record("CL:0000236", "B cell")
    record["statement"]["scope"] = ["NCBITaxon:9606", tag]
    found = [f for f in cl.ground(record).findings if f.field_path.startswith("$.statement.scope")]
    assert [f.rule_id for f in found] == codes
    if codes == ["BEV017"]:
        assert "2025-01-01" in found[0].message and found[0].fix is not None
        assert found[0].fix.value == "CL:v2026-06-08"


def test_a_label_of_another_term_names_that_term(cl: OntologyGrounder) -> None:
    (f,) = cl.ground(cell_record("CL:0000169", "pancreatic delta cell")).findings
    assert f.rule_id == "BEV017"
    assert "'pancreatic delta cell' is an exact synonym of CL:0000173 (pancreatic D cell)" in f.message
    assert f.fix is not None and f.fix.value == "type B pancreatic cell"
    (g,) = cl.ground(cell_record("CL:0000084", "B cell")).findings
    assert "'B cell' is the name of CL:0000236 (B cell)" in g.message


def test_obsolete_terms_name_their_replacement(cl: OntologyGrounder) -> None:
    (f,) = cl.ground(cell_record("CL:0000003", "native cell")).findings
    assert f.rule_id == "BEV023" and f.fix is not None and f.fix.value == "CL:0000000"
    (g,) = cl.ground(cell_record("CL:0000004", "cell by organism")).findings
    assert g.rule_id == "BEV023" and "consider CL:0000000 (cell)" in g.message


def test_non_cell_types_as_cell_type_are_wrong_kind(cl: OntologyGrounder) -> None:
    (f,) = cl.ground(cell_record("UBERON:0000061", "anatomical structure")).findings
    assert f.rule_id == "BEV024"
    (g,) = cl.ground(cell_record("GO:0005623", "cell")).findings
    assert g.rule_id == "BEV024" and g.fix is not None and g.fix.value == "CL:0000000"


def test_unknown_terms_name_the_closest_labels(cl: OntologyGrounder) -> None:
    (f,) = cl.ground(cell_record("CL:9999999", "T cel")).findings
    assert f.rule_id == "BEV016" and "CL:0000084 (T cell)" in f.message


def test_locator_keys_under_a_root_are_checked(cl: OntologyGrounder) -> None:
    record = cell_record("CL:0000084", "T cell")
    record["evidence_items"] = [{"locator": "cluster=3;cell_type=UBERON:0000061"}]
    (f,) = cl.ground(record).findings
    assert f.rule_id == "BEV024" and f.field_path == "$.evidence_items[0].locator"


def test_the_index_loads_back_from_the_disk_cache(shared_data: Path, cache_dir: Path, cell_ontology) -> None:  # type: ignore[no-untyped-def]
    again = load_ontology(shared_data / "references" / "cl_2026-06-08.obo.gz", cache_root=cache_dir)
    assert again.terms == cell_ontology.terms and any((cache_dir / "obo-file").iterdir())
    # the index carries the hash of the uncompressed release, as grounders/cl.yaml declares it
    assert again.sha256 == "7e19b4aef8e7fe7720b0c4474c6a5b8713c904ea9ab7b7d5d96f2cb28b8fc51f"


def test_a_changed_genes_file_never_reuses_a_cached_index(tmp_path: Path, cache_dir: Path) -> None:
    from bioevidence.gate.grounders.genes import load_genes

    header = "hgnc_id\tsymbol\tname\tstatus\talias_symbol\tprev_symbol\n"
    path = tmp_path / "hgnc_complete_set_2026-01-01.txt"
    path.write_text(header + "HGNC:1\tAAA\tgene a\tApproved\t\tOLDA\n")
    assert load_genes([path], cache_root=cache_dir).previous == {"OLDA": ("HGNC:1",)}
    path.write_text(header + "HGNC:1\tAAA\tgene a\tApproved\t\tOLDB\n")
    assert load_genes([path], cache_root=cache_dir).previous == {"OLDB": ("HGNC:1",)}


def test_label_key_drops_only_a_plain_plural() -> None:
    assert label_key("T cells") == "t cell" and label_key("glass") == "glass" and label_key("B-Cell") == "b cell"


def gene_record(curie: str, label: str, scope: str = "NCBITaxon:9606") -> dict[str, Any]:
    return {"requested_uses": ["u"], "statement": {"subject": {"id": curie, "label": label, "entity_type": "gene"},
                                                    "scope": [scope]}, "evidence_items": []}


@pytest.fixture(scope="session")
def genes(hgnc):  # type: ignore[no-untyped-def]
    return GeneGrounder(hgnc)


@pytest.mark.parametrize("symbol,what,approved", [("NGL", "a previous symbol", "ERBB2"),
                                                  ("HER2", "an alias", "ERBB2"),
                                                  ("ABCC7", "a previous symbol", "CFTR"),
                                                  ("CD8", "a previous symbol", "CD8A")])
def test_previous_symbols_and_aliases_name_the_approved_symbol(genes: GeneGrounder, symbol: str, what: str,
                                                               approved: str) -> None:
    (f,) = genes.ground(gene_record("NCBIGene:0", symbol)).findings
    assert f.rule_id == "BEV023" and what in f.message and f.fix is not None and f.fix.value == approved


def test_approved_symbols_and_ids_pass(genes: GeneGrounder) -> None:
    assert genes.name == "genes:HGNC@2026-09-30"
    assert genes.ground(gene_record("HGNC:3430", "ERBB2")).findings == []


def test_wrong_case_unknown_and_mismatched(genes: GeneGrounder) -> None:
    (case,) = genes.ground(gene_record("NCBIGene:0", "Erbb2")).findings
    assert case.rule_id == "BEV023" and case.fix is not None and case.fix.value == "ERBB2"
    (unknown,) = genes.ground(gene_record("NCBIGene:0", "KRAZ")).findings
    assert unknown.rule_id == "BEV016" and "KRAS" in unknown.message
    (wrong,) = genes.ground(gene_record("HGNC:3430", "KRAS")).findings
    assert wrong.rule_id == "BEV017" and "HGNC:6407" in wrong.message


def test_withdrawn_then_reused_symbol(genes: GeneGrounder) -> None:
    (f,) = genes.ground(gene_record("HGNC:5304", "HTT")).findings
    assert f.rule_id == "BEV023" and "HGNC:4851" in f.message and "HGNC:11050" in f.message


def test_non_human_scope_cannot_be_confirmed(genes: GeneGrounder) -> None:
    (f,) = genes.ground(gene_record("HGNC:3430", "ERBB2", "NCBITaxon:10090")).findings
    assert f.rule_id == "BEV015"


# -- ids of the wrong form for their place (issue 24: 0.8.0 rejects these, we admitted them) --------

@pytest.mark.parametrize("curie", ["CL_0000236", "B cell", "0000236", "CL0000236", "cl:0000236", " CL:0000236"])
def test_a_cell_type_id_that_is_not_a_cl_curie_is_wrong_form_and_names_the_term(cl: OntologyGrounder,
                                                                                 curie: str) -> None:
    (f,) = cl.ground(cell_record(curie, "B cell")).findings
    assert f.rule_id == "BEV024" and f.field_path == "$.statement.object.id", f
    assert "CL:<local id>" in f.message and "CL:0000236 (B cell)" in f.message
    assert f.fix is not None and f.fix.value == "CL:0000236"


def test_a_malformed_cell_type_id_without_a_label_names_the_id_it_reads_as(cl: OntologyGrounder) -> None:
    record = cell_record("CL_0000084", "x")
    del record["statement"]["object"]["label"]
    (f,) = cl.ground(record).findings
    assert f.rule_id == "BEV024" and "CL:0000084 (T cell)" in f.message and f.fix and f.fix.value == "CL:0000084"
    (g,) = cl.ground(cell_record("not an id", "no such cell")).findings
    assert g.rule_id == "BEV024" and g.fix is None  # nothing to name: the message says the form


def test_a_wrong_case_prefix_of_a_loaded_ontology_is_wrong_form_anywhere(cl: OntologyGrounder) -> None:
    (f,) = cl.ground(cell_record("cl:0000236", "B cell", kind="cell")).findings  # no root for "cell"
    assert f.rule_id == "BEV024" and "writes its prefix as 'cl'" in f.message and f.fix.value == "CL:0000236"


@pytest.mark.parametrize("curie", ["hgnc:1097", "HGNC_1097", "HGNC1097", "1097", "BRAF", "Hgnc:1097"])
def test_a_gene_id_not_written_hgnc_number_is_wrong_form_and_names_the_gene(genes: GeneGrounder,
                                                                            curie: str) -> None:
    (f,) = genes.ground(gene_record(curie, "BRAF")).findings
    assert f.rule_id == "BEV024" and "HGNC:<number>" in f.message and "HGNC:1097 (BRAF)" in f.message, f
    assert f.fix is not None and f.fix.value == "HGNC:1097"


def test_gene_ids_of_other_namespaces_are_left_to_their_grounders(genes: GeneGrounder) -> None:
    assert genes.ground(gene_record("NCBIGene:673", "BRAF")).findings == []
    assert genes.ground(gene_record("HGNC:1097", "BRAF")).findings == []
