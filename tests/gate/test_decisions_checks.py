"""Issue 30: decisions in ``gate/checks.py`` that the mutation run of the gate group left untested.

Which sources count as papers for BEV029 (declared ``publication``, or a ``uri`` that is a paper's
identifier), what the finding says and blocks; which identifiers a release would check (docs/grounders.md:
the subject's and object's of a ``term_roots`` kind or prefix, of type ``gene`` or prefix ``HGNC``, and
``gene=`` locator values); and what counts as an independent review for BEV021 (docs/rules.md: a
non-human reviewer that made none of the evidence, the statement included, and only accepting).
Records are the examples' real records, edited where a case needs it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from bioevidence import Validator
from bioevidence.gate import checks
from bioevidence.gate.grounding import QuoteLocation
from bioevidence.gate.profiles import load_profile, parse_profile
from builders import adjudication, item, record

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CELL_TYPE_ROOTS = {"cell_type": "CL:0000000"}  # the built-in cell-type profile's term_roots


def _example(relative: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / relative).read_text(encoding="utf-8"))
    return data


def _quoted_claim() -> dict[str, Any]:
    """examples/claims/01_quoted.json: one quote from a paper declared publication, uri pmid:24571676."""
    return _example("claims/01_quoted.json")


# -- BEV029: publication evidence validated with no literature grounder ------------------------------------


def test_an_unchecked_quote_is_one_bev029_review_on_the_evidence_items_blocking_every_use() -> None:
    """The real quoted claim: one BEV029 finding, severity review, blocking the record's requested uses."""
    rec = _quoted_claim()
    (finding,) = checks.unchecked_publications(rec)
    assert finding.rule_id == "BEV029"
    assert finding.severity == "review"
    assert finding.blocking_uses == ["research_summary"]
    assert finding.field_path == "$.evidence_items"
    assert finding.message.startswith("1 quote was not checked against its paper: no literature source was given")


def test_a_source_declared_publication_is_a_paper_without_an_identifier_uri() -> None:
    """A declared publication counts as a paper even when its uri is a plain web address."""
    rec = _quoted_claim()
    rec["source_artifacts"][0]["uri"] = "https://example.org/preprint.pdf"
    assert [f.rule_id for f in checks.unchecked_publications(rec)] == ["BEV029"]
    del rec["source_artifacts"][0]["uri"]
    assert [f.rule_id for f in checks.unchecked_publications(rec)] == ["BEV029"]


@pytest.mark.parametrize("uri", ["pmid:24571676", "https://pubmed.ncbi.nlm.nih.gov/24571676/", "doi:10.1000/xyz"])
def test_a_source_whose_uri_is_a_paper_identifier_is_a_paper_whatever_its_declared_type(uri: str) -> None:
    """A pmid:/PubMed/doi: uri makes the source a paper even when it is declared web_page."""
    rec = _quoted_claim()
    rec["source_artifacts"][0]["source_type"] = "web_page"
    rec["source_artifacts"][0]["uri"] = uri
    assert [f.rule_id for f in checks.unchecked_publications(rec)] == ["BEV029"]


def test_evidence_from_a_source_that_is_no_paper_is_not_bev029() -> None:
    """A dataset snapshot at a web address is no paper: its evidence needs no literature grounder."""
    rec = _quoted_claim()
    rec["source_artifacts"][0]["source_type"] = "dataset_snapshot"
    rec["source_artifacts"][0]["uri"] = "https://example.org/bioevidence/quickstart"
    assert checks.unchecked_publications(rec) == []


def _cited_twice(texts: list[str | None]) -> dict[str, Any]:
    """The quoted claim with one evidence item per text, each citing the paper."""
    rec = _quoted_claim()
    base = rec["evidence_items"][0]
    rec["evidence_items"] = []
    for n, text in enumerate(texts):
        row = copy.deepcopy(base)
        row["id"] = f"{base['id']}-{n}"
        row["extracted_text"] = text
        rec["evidence_items"].append(row)
    rec["statement"]["evidence_lines"][0]["evidence_item_ids"] = [row["id"] for row in rec["evidence_items"]]
    return rec


@pytest.mark.parametrize(("texts", "what"), [
    pytest.param(["first quote.", "second quote."], "2 quotes were not checked against their papers", id="2-quotes"),
    pytest.param([None], "1 evidence item cites a paper that was not checked", id="1-item-no-quote"),
    pytest.param([None, "   "], "2 evidence items cite papers that were not checked", id="2-items-no-quote"),
    pytest.param([None, "the only quote."], "1 quote was not checked against its paper", id="1-quote-of-2"),
])
def test_bev029_counts_the_quotes_and_else_the_items_that_cite_papers(texts: list[str | None], what: str) -> None:
    """The finding counts non-blank quotes from papers; with none (null or blank), the citing items."""
    (finding,) = checks.unchecked_publications(_cited_twice(texts))
    assert finding.rule_id == "BEV029" and finding.severity == "review"
    assert finding.message.startswith(what + ": ")


# -- the identifiers an ontology or gene release would check -----------------------------------------------


def _labelled(subject: dict[str, str], obj: dict[str, str]) -> dict[str, Any]:
    """examples/labels/01_b_cell.json with the statement's subject and object replaced."""
    rec = _example("labels/01_b_cell.json")
    rec["statement"]["subject"] = subject
    rec["statement"]["object"] = obj
    return rec


def test_the_real_label_names_its_cell_ontology_term_and_no_gene() -> None:
    """examples/labels/01: the object CL:0000236 (a cell_type) is an ontology id; the sample is neither."""
    rec = _example("labels/01_b_cell.json")
    assert checks._identifiers(rec, "ontologies", CELL_TYPE_ROOTS) == ["CL:0000236"]
    assert checks._identifiers(rec, "genes", CELL_TYPE_ROOTS) == []


def test_an_entity_of_a_root_kind_is_checked_whatever_its_id_looks_like() -> None:
    """A cell_type written CL_0000236 (no CURIE prefix) is still an ontology term for the release to check."""
    rec = _labelled({"id": "example:sample-7", "label": "sample 7", "entity_type": "sample"},
                    {"id": "CL_0000236", "label": "B cell", "entity_type": "cell_type"})
    assert checks._identifiers(rec, "ontologies", CELL_TYPE_ROOTS) == ["CL_0000236"]


@pytest.mark.parametrize("value", ["CL:0000236", "cl:0000236"])
def test_an_id_with_a_root_prefix_is_checked_whatever_its_entity_type(value: str) -> None:
    """An id prefixed CL (any case) is an ontology term of the CL root even when its type is not cell_type."""
    rec = _labelled({"id": "example:sample-7", "label": "sample 7", "entity_type": "sample"},
                    {"id": value, "label": "B cell", "entity_type": "cell"})
    assert checks._identifiers(rec, "ontologies", CELL_TYPE_ROOTS) == [value]


def test_gene_identifiers_are_those_of_type_gene_or_prefix_hgnc() -> None:
    """Genes: an HGNC id typed protein and an NCBIGene id typed gene are both for the gene list to check."""
    rec = _labelled({"id": "HGNC:3430", "label": "ERBB2", "entity_type": "protein"},
                    {"id": "NCBIGene:2064", "label": "ERBB2", "entity_type": "gene"})
    assert checks._identifiers(rec, "genes", {}) == ["HGNC:3430", "NCBIGene:2064"]
    assert checks._identifiers(rec, "ontologies", CELL_TYPE_ROOTS) == []


def test_gene_locator_values_are_gene_identifiers_only() -> None:
    """examples/records/05: the locator cluster=3;gene=CD3E names a gene for the gene list, not for an ontology."""
    rec = _example("records/05_review_contradicted_label.json")
    assert checks._identifiers(rec, "genes", {}) == ["CD3E"]
    assert checks._identifiers(rec, "ontologies", CELL_TYPE_ROOTS) == ["CL:0000236"]


def test_a_cell_type_record_without_releases_gets_one_bev029_per_kind() -> None:
    """The cell-type profile names cl and hgnc: validated with no grounder, each kind's ids go to review."""
    rec = _example("records/05_review_contradicted_label.json")
    found = checks.unchecked_identifiers(rec, load_profile("cell-type"), [])
    assert [(f.rule_id, f.severity, f.blocking_uses) for f in found] == [
        ("BEV029", "review", rec["requested_uses"]), ("BEV029", "review", rec["requested_uses"])]
    assert found[0].message.startswith("the ontology term CL:0000236 was not checked")
    assert found[1].message.startswith("the gene identifier CD3E was not checked")


# -- BEV021: an independent review ------------------------------------------------------------------------

INDEPENDENT = """\
id: independent
version: "1"
description: curated annotations that an independent (non-human) reviewer must accept
predicates: []
subject_types: []
object_types: []
uses:
  knowledge_base:
    required_evidence_types: [curated_annotation]
    require_human_acceptance: false
    allow_llm_only: false
    allow_string_match_only: false
    require_independent_review: true
"""
USE = "knowledge_base"


@pytest.fixture
def independent(tmp_path: Path) -> Validator:
    path = tmp_path / "independent.yaml"
    path.write_text(INDEPENDENT, encoding="utf-8")
    return Validator(path)


def _reviewed(*reviews: dict[str, Any]) -> dict[str, Any]:
    """The general test record under the independent profile: a curator's item, a drafting model's statement."""
    rec = record("general", [USE], items=[item(1, created_by={"id": "orcid:0000-0002-0000-0002",
                                                               "agent_type": "human"})],
                 adjudications=list(reviews))
    rec["profile_id"] = "independent"
    rec["statement"]["created_by"] = {"id": "software:drafter", "name": "a drafting model", "agent_type": "software"}
    return rec


def test_an_accepting_software_reviewer_that_made_nothing_admits(independent: Validator) -> None:
    """The control: software:checker made no evidence and accepts, so the use is admitted."""
    report = independent.validate(_reviewed(adjudication(1, [USE], "accept", "software", "software:checker")))
    assert report.overall_status == "admitted", report.to_json()


def test_the_statement_author_is_not_an_independent_reviewer(independent: Validator) -> None:
    """The model that drafted the statement accepting its own statement is no independent review (BEV021)."""
    report = independent.validate(_reviewed(adjudication(1, [USE], "accept", "software", "software:drafter")))
    assert report.overall_status == "review_required"
    (finding,) = [f for f in report.findings if f.rule_id == "BEV021"]
    assert (finding.severity, finding.blocking_uses, finding.field_path) == ("review", [USE], "$.adjudications")
    assert report.decision(USE) == "review_required"


def test_a_human_acceptance_is_not_an_independent_non_human_review(independent: Validator) -> None:
    """A human's accept satisfies BEV010, not BEV021, which asks for a non-human reviewer."""
    report = independent.validate(_reviewed(adjudication(1, [USE], "accept", "human", "orcid:0000-0003-0000-0003")))
    assert report.reason_codes() == ["BEV021"]
    assert report.decision(USE) == "review_required"


def test_bev021_says_whether_an_independent_reviewer_declined_or_none_reviewed(independent: Validator) -> None:
    """An independent reviewer's reject is named as such; with no independent review the need is named."""
    declined = independent.validate(_reviewed(adjudication(1, [USE], "reject", "software", "software:checker")))
    (finding,) = [f for f in declined.findings if f.rule_id == "BEV021"]
    assert finding.message == "An independent reviewer did not accept use 'knowledge_base'."
    absent = independent.validate(_reviewed())
    (finding,) = [f for f in absent.findings if f.rule_id == "BEV021"]
    assert finding.message.startswith("Use 'knowledge_base' needs an accepting review by a non-human reviewer")


class _LiteratureOnly:
    """A grounder that checks quotes only: it grounds no ontology term and no gene."""

    name = "literature-only@1"
    grounds_literature = True


class _Ontology:
    """A grounder that says it checks ontology terms (and no gene)."""

    name = "ontology@1"
    grounds_terms = True


def test_only_a_grounder_of_the_kind_answers_for_the_release() -> None:
    """A grounder that checks no terms leaves both BEV029s; an ontology grounder removes only the ontology one."""
    rec = _example("records/05_review_contradicted_label.json")
    profile = load_profile("cell-type")
    unrelated = checks.unchecked_identifiers(rec, profile, [_LiteratureOnly()])
    assert [f.message.split(" was not checked")[0] for f in unrelated] == [
        "the ontology term CL:0000236", "the gene identifier CD3E"]
    (left,) = checks.unchecked_identifiers(rec, profile, [_Ontology()])
    assert left.message.startswith("the gene identifier CD3E was not checked")


# -- per-use contracts block their use only (docs/rules.md: BEV007-BEV013, BEV020 have scope ``use``) -----

THREE_USES = """\
id: three-uses
version: "1"
description: one record, three uses with different contracts
predicates: []
subject_types: []
object_types: []
uses:
  strict:
    required_evidence_types: [curated_annotation]
    require_human_acceptance: false
    allow_llm_only: false
    allow_string_match_only: false
    verified_evidence_types: [curated_annotation]
  llm_ok:
    required_evidence_types: [curated_annotation]
    require_human_acceptance: false
    allow_llm_only: true
    allow_string_match_only: false
  lenient:
    required_evidence_types: []
    require_human_acceptance: false
    allow_llm_only: true
    allow_string_match_only: true
"""
LLM, STRING = "llm_extraction", "normalized_string_match"


@pytest.mark.parametrize(("items", "reviews", "expected"), [
    pytest.param([item(1, "curated_label")], [],
                 {"strict": ("rejected", ["BEV007"]), "llm_ok": ("rejected", ["BEV007"]), "lenient": ("admitted", [])},
                 id="required-type-absent"),
    pytest.param([item(1, method=LLM)], [],
                 {"strict": ("review_required", ["BEV008", "BEV020"]), "llm_ok": ("admitted", []),
                  "lenient": ("admitted", [])}, id="llm-only"),
    pytest.param([item(1, method=STRING)], [],
                 {"strict": ("review_required", ["BEV009", "BEV020"]), "llm_ok": ("review_required", ["BEV009"]),
                  "lenient": ("admitted", [])}, id="string-match-only"),
    pytest.param([item(1, method=LLM), item(2, method=STRING)], [],
                 {"strict": ("review_required", ["BEV013", "BEV020"]), "llm_ok": ("review_required", ["BEV013"]),
                  "lenient": ("admitted", [])}, id="llm-and-string-mixed"),
    pytest.param([item(1)], [adjudication(1, ["strict"], "reject"), adjudication(2, ["llm_ok"], "defer")],
                 {"strict": ("rejected", ["BEV011", "BEV020"]), "llm_ok": ("review_required", ["BEV012"]),
                  "lenient": ("admitted", [])}, id="human-reject-and-defer"),
])
def test_a_use_contract_finding_blocks_only_its_use(tmp_path: Path, items: list[dict[str, Any]],
                                                     reviews: list[dict[str, Any]],
                                                     expected: dict[str, tuple[str, list[str]]]) -> None:
    """Each use is decided by its own contract: a finding of one use's contract leaves the others as they are."""
    path = tmp_path / "three-uses.yaml"
    path.write_text(THREE_USES, encoding="utf-8")
    rec = record("general", list(expected), items=items, adjudications=reviews)
    rec["profile_id"] = "three-uses"
    report = Validator(path).validate(rec)
    assert {d.use: (d.admission_status, d.reason_codes) for d in report.use_decisions} == expected, report.to_json()


def test_bev020_points_at_the_evidence_items_and_blocks_its_use_only(tmp_path: Path) -> None:
    """BEV020 (a type the use needs verified, with no item of it verified) is about the record's evidence
    items as a whole: its place is $.evidence_items, as BEV007's, and it blocks the use that asks."""
    path = tmp_path / "three-uses.yaml"
    path.write_text(THREE_USES, encoding="utf-8")
    profile = load_profile(path)
    rec = record("general", ["strict", "llm_ok"], items=[item(1)])
    (finding,) = [f for f in checks.contracts(rec, profile) if f.rule_id == "BEV020"]
    assert (finding.severity, finding.field_path, finding.blocking_uses) == ("review", "$.evidence_items", ["strict"])
    assert finding.message == "Required evidence type 'curated_annotation' is not verified against its source."
    assert not [f for f in checks.contracts(rec, profile, {rec["evidence_items"][0]["id"]}) if f.rule_id == "BEV020"]


def test_bev007_names_the_missing_types_as_a_fix_to_add_them() -> None:
    """BEV007's fix adds supporting evidence of exactly the missing required types at $.evidence_items."""
    rec = record("dataset-label", ["reference_annotation"], items=[item(1, "curated_label")])
    (finding,) = [f for f in checks.contracts(rec, load_profile("dataset-label")) if f.rule_id == "BEV007"]
    assert finding.blocking_uses == ["reference_annotation"]
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.field_path, finding.fix.value) == ("add", "$.evidence_items",
                                                                                ["sample_link"])


GENES_AS_TEXT = """\
id: gene-panel
version: "1"
description: gene panels, the gene list named as one string and an ontology without term_roots
predicates: []
subject_types: []
object_types: []
uses:
  knowledge_base:
    required_evidence_types: []
    require_human_acceptance: false
    allow_llm_only: false
    allow_string_match_only: false
grounders:
  ontologies: [cl]
  genes: hgnc
"""


def test_a_release_named_as_one_string_and_several_gene_ids_are_named_in_bev029() -> None:
    """genes: hgnc (a string) is the release hgnc; two unchecked gene ids are both named; no term_roots is no error."""
    profile = parse_profile(GENES_AS_TEXT.encode(), source="gene-panel.yaml")
    rec = _labelled({"id": "HGNC:3430", "label": "ERBB2", "entity_type": "protein"},
                    {"id": "NCBIGene:2064", "label": "ERBB2", "entity_type": "gene"})
    found = [f for f in checks.unchecked_identifiers(rec, profile, []) if "gene identifier" in f.message]
    (finding,) = found
    assert (finding.rule_id, finding.severity) == ("BEV029", "review")
    assert finding.message.startswith("2 gene identifiers (HGNC:3430, NCBIGene:2064) were not checked: "
                                      "profile 'gene-panel' names the release hgnc and none was given")
    assert "bioevidence sources pull hgnc," in finding.message


def test_an_ontology_named_without_term_roots_still_has_its_ids_checked_or_sent_to_review() -> None:
    """ontologies: [cl] with no term_roots: the CL grounder checks every CL-prefixed id, so without the
    release a CL id is BEV029 (review), never admitted as if checked (found by mutation testing)."""
    profile = parse_profile(GENES_AS_TEXT.encode(), source="gene-panel.yaml")
    rec = _labelled({"id": "example:sample-7", "label": "sample 7", "entity_type": "sample"},
                    {"id": "CL:0000236", "label": "B cell", "entity_type": "cell"})
    found = [f for f in checks.unchecked_identifiers(rec, profile, []) if "ontology term" in f.message]
    (finding,) = found
    assert (finding.rule_id, finding.severity) == ("BEV029", "review")
    assert finding.message.startswith("the ontology term CL:0000236 was not checked: profile 'gene-panel' names "
                                      "the release cl")
    assert checks._release_prefix("releases/cl.obo.gz") == checks._release_prefix("CL@2026-01-01") == "cl"


# -- BEV032: a verified quote from a part of the paper the profile leaves out ------------------------------


@pytest.mark.parametrize(("part", "codes"), [("references", ["BEV032"]), ("body", [])])
def test_a_quote_located_outside_the_profile_quote_parts_goes_to_review(part: str, codes: list[str]) -> None:
    """quote_parts [title, abstract, body]: a quote found in the reference list is BEV032 on that item; body is fine."""
    text = (EXAMPLES.parent / "profiles" / "literature-claim.yaml").read_text(encoding="utf-8")
    profile = parse_profile((text + "quote_parts: [title, abstract, body]\n").encode(), source="quoted-parts.yaml")
    rec = _cited_twice(["first quote.", "second quote."])
    second = rec["evidence_items"][1]["id"]
    found = checks.quote_parts(rec, profile, [QuoteLocation(second, part, "ref-12", section="References")])
    assert [f.rule_id for f in found] == codes
    for finding in found:
        assert (finding.severity, finding.blocking_uses) == ("review", ["research_summary"])
        assert finding.field_path == "$.evidence_items[1].extracted_text"


# -- decide: structural errors block every use -------------------------------------------------------------


@pytest.mark.parametrize("code", ["SCHEMA", "RECORD_INTEGRITY"])
def test_a_structural_error_rejects_every_use_even_when_it_names_none(code: str) -> None:
    """Fail closed: a SCHEMA or RECORD_INTEGRITY error rejects each requested use whatever its
    blocking_uses say (the gate builds them with every use; this pins the guard, not the builder)."""
    from bioevidence.gate.findings import Finding

    found = [Finding(code, "error", "the record is malformed", "$", [])]
    decided = checks.decide(["research_summary", "knowledge_base"], found)
    assert [(d["use"], d["admission_status"], d["reason_codes"]) for d in decided] == [
        ("research_summary", "rejected", [code]), ("knowledge_base", "rejected", [code])]
    other = [Finding("BEV003", "error", "a rule error for no use", "$", [])]
    assert {d["admission_status"] for d in checks.decide(["research_summary"], other)} == {"admitted"}


# -- survivors of the gate group's second mutation run (issue 30) -----------------------------------------


def test_bev029_for_quotes_says_how_to_check_them_or_accept_them_unchecked() -> None:
    (finding,) = checks.unchecked_publications(_quoted_claim())
    assert finding.message.endswith("(pin the papers with bioevidence ground and pass --snapshot-dir, or "
                                    "--no-grounding to accept unchecked quotes)")


@pytest.mark.parametrize("release", ["refs/2026-06-08/cl.obo.gz", "C:\\references\\cl.obo", "cl", "CL@2026-06-08",
                                     "/srv/data/releases/2026/cl.json"])
def test_a_release_is_named_by_its_file_name_whatever_its_folders(release: str) -> None:
    """Folders (POSIX or Windows, any depth), a version after ``@`` and extensions are not the ontology's name."""
    assert checks._release_prefix(release) == "cl"


TERM_ROOTS_ONLY = """\
id: typed-cells
version: "1"
description: a cell-type release named by its date only; the term_roots tell which ids it checks
predicates: []
subject_types: []
object_types: []
uses:
  knowledge_base:
    required_evidence_types: []
    require_human_acceptance: false
    allow_llm_only: false
    allow_string_match_only: false
grounders:
  ontologies: [releases/2026-06-08.obo, releases/2026-04-15.obo]
  term_roots:
    cell_type: CL:0000000
"""


def test_term_roots_tell_which_ids_an_ontology_release_named_by_date_would_check() -> None:
    """The release names give no prefix; the profile's term_roots do: a CL id typed ``cell`` and an entity typed
    ``cell_type`` are both unchecked without the release, named in one BEV029 on the statement."""
    profile = parse_profile(TERM_ROOTS_ONLY.encode(), source="typed-cells.yaml")
    rec = _labelled({"id": "example:lymph-1", "label": "a lymphocyte", "entity_type": "cell_type"},
                    {"id": "CL:0000236", "label": "B cell", "entity_type": "cell"})
    (finding,) = checks.unchecked_identifiers(rec, profile, [])
    assert (finding.rule_id, finding.field_path) == ("BEV029", "$.statement")
    assert finding.message.startswith("2 ontology terms (example:lymph-1, CL:0000236) were not checked: profile "
                                      "'typed-cells' names the release releases/2026-06-08.obo, "
                                      "releases/2026-04-15.obo and none was given")


def test_an_id_is_a_release_s_by_its_first_prefix_and_a_bare_word_is_no_prefix() -> None:
    """``HGNC:HGNC:3430`` (a doubled prefix some exports write) is an HGNC id; a bare ``hgnc`` id has no prefix."""
    rec = _labelled({"id": "HGNC:HGNC:3430", "label": "ERBB2", "entity_type": "protein"},
                    {"id": "hgnc", "label": "a word", "entity_type": "class_label"})
    assert checks._identifiers(rec, "genes", {}) == ["HGNC:HGNC:3430"]


_ID_PLACES = ["$.record_id", "$.profile_id", "$.statement.id", "$.statement.subject.id", "$.statement.object.id",
              "$.requested_uses[0]", "$.source_artifacts[0].id", "$.evidence_items[0].id", "$.adjudications[0].id",
              "$.evidence_items[0].source_artifact_id", "$.statement.evidence_lines[0].id",
              "$.statement.evidence_lines[0].evidence_item_ids[0]"]


def _with(rec: dict[str, Any], path: str, value: str) -> dict[str, Any]:
    out = copy.deepcopy(rec)
    steps = [int(s) if s.isdigit() else s for s in path[2:].replace("[", ".").replace("]", "").split(".")]
    node: Any = out
    for step in steps[:-1]:
        node = node[step]
    node[steps[-1]] = value
    return out


@pytest.mark.parametrize("path", _ID_PLACES)
def test_an_identifier_over_1000_characters_is_one_integrity_error_at_its_place(path: str) -> None:
    """Every id and reference (docs/rules.md, RECORD_INTEGRITY): 1,001 characters is refused at its own place,
    alone (nothing else is worth reading); 1,000 is not."""
    rec = record("general", ["training_data"], adjudications=[adjudication(1, ["training_data"])])
    profile = load_profile("general")
    (finding,) = checks.integrity(_with(rec, path, "x" * 1001), profile)
    assert (finding.rule_id, finding.field_path, finding.blocking_uses) == (
        "RECORD_INTEGRITY", path, ["training_data"] if path != "$.requested_uses[0]" else ["x" * 1001])
    assert finding.message == (f"The identifier at {path} is 1,001 characters long; identifiers are at most "
                               "1,000 characters.")
    assert not [f for f in checks.integrity(_with(rec, path, "x" * 1000), profile)
                if "characters long" in f.message]
    # beside a 1,001-character id, one of exactly 1,000 elsewhere is still not named
    other = "$.record_id" if path != "$.record_id" else "$.statement.id"
    (alone,) = checks.integrity(_with(_with(rec, path, "x" * 1001), other, "y" * 1000), profile)
    assert alone.field_path == path


@pytest.mark.parametrize(("where", "shown"), [({"section": "References", "label": "Table 2"}, "References"),
                                              ({"label": "Table 2"}, "Table 2"), ({}, "ref-12")])
def test_bev032_names_the_section_else_the_label_else_the_passage(where: dict[str, str], shown: str) -> None:
    text = (EXAMPLES.parent / "profiles" / "literature-claim.yaml").read_text(encoding="utf-8")
    profile = parse_profile((text + "quote_parts: [title, abstract, body]\n").encode(), source="quoted-parts.yaml")
    rec = _cited_twice(["first quote.", "second quote."])
    (finding,) = checks.quote_parts(rec, profile, [QuoteLocation(rec["evidence_items"][1]["id"], "references",
                                                                 "ref-12", **where)])
    assert finding.message == (f"the quote is from the references part of the paper ({shown}); this profile "
                               "quotes only title, abstract, body")
    # a location naming an item the record lacks is put on the first item, never dropped
    (stray,) = checks.quote_parts(rec, profile, [QuoteLocation("t:not-here", "references", "ref-12")])
    assert stray.field_path == "$.evidence_items[0].extracted_text"


@pytest.mark.parametrize("rows", ["source_artifacts", "evidence_items", "adjudications", "evidence_lines"])
def test_duplicate_ids_are_named_once_each_sorted(rows: str) -> None:
    """Three rows a, a, b and two c, c: the duplicates named are a and c, each once, in order."""
    rec = record("general", ["training_data"], adjudications=[adjudication(1, ["training_data"])])
    container = rec["statement"] if rows == "evidence_lines" else rec
    base = container[rows][0]
    container[rows] = [dict(base, id=i) for i in ("z:c", "z:a", "z:a", "z:b", "z:c")]
    path = "$.statement.evidence_lines" if rows == "evidence_lines" else f"$.{rows}"
    found = [f for f in checks.integrity(rec, load_profile("general")) if f.field_path == path]
    assert [f.message for f in found] == ["Duplicate identifiers make references ambiguous: z:a, z:c."]


def test_integrity_says_what_is_wrong_in_each_case() -> None:
    """The integrity check's messages, each case on the general test record (docs/rules.md RECORD_INTEGRITY)."""
    profile = load_profile("general")
    rec = record("general", ["training_data"], adjudications=[adjudication(1, ["training_data"])])
    cases: list[tuple[str, Any, str, str]] = [
        ("$.evidence_items[0].scope", ["NCBITaxon:9606", "NCBITaxon:9606"], "$.evidence_items[0].scope",
         "Scope must contain distinct tokens."),
        ("$.statement.scope", ["NCBITaxon:9606", "NCBITaxon:9606"], "$.statement.scope",
         "Scope must contain distinct tokens."),
        ("$.statement.evidence_lines[0].evidence_item_ids", ["t:item-1", "t:item-7", "t:item-8"],
         "$.statement.evidence_lines[0].evidence_item_ids",
         "Evidence line has duplicate or unresolved item references (unresolved: t:item-7, t:item-8)."),
        ("$.statement.evidence_lines[0].evidence_item_ids", ["t:item-1", "t:item-1"],
         "$.statement.evidence_lines[0].evidence_item_ids",
         "Evidence line has duplicate or unresolved item references."),
        ("$.adjudications[0].statement_id", "t:other", "$.adjudications[0].statement_id",
         "Adjudication targets a different statement."),
        ("$.adjudications[0].applies_to_uses", ["training_data", "publication"], "$.adjudications[0].applies_to_uses",
         "Adjudication uses must be distinct and supported by this profile."),
        ("$.adjudications[0].applies_to_uses", ["training_data", "training_data"],
         "$.adjudications[0].applies_to_uses", "Adjudication uses must be distinct and supported by this profile."),
        ("$.requested_uses", ["training_data", "publication", "archive"], "$.requested_uses",
         "requested_uses must contain distinct uses supported by the selected profile (unknown: archive, publication; "
         "allowed: knowledge_base, research_summary, training_data, external_validation)."),
        ("$.requested_uses", ["training_data", "training_data"], "$.requested_uses",
         "requested_uses must contain distinct uses supported by the selected profile."),
    ]
    fixes: list[tuple[str, str, Any] | None] = [
        ("replace", "$.evidence_items[0].scope", ["NCBITaxon:9606"]),
        ("replace", "$.statement.scope", ["NCBITaxon:9606"]), None, None,
        ("replace", "$.adjudications[0].statement_id", "t:statement"), None, None,
        ("choose", "$.requested_uses", ["knowledge_base", "research_summary", "training_data", "external_validation"]),
        ("choose", "$.requested_uses", ["knowledge_base", "research_summary", "training_data", "external_validation"]),
    ]
    for (place, value, path, message), fix in zip(cases, fixes, strict=True):
        found = checks.integrity(_with(rec, place, value), profile)
        assert [(f.field_path, f.message) for f in found] == [(path, message)], (place, value, found)
        given = found[0].fix
        assert (None if given is None else (given.action, given.field_path, given.value)) == fix, (place, given)


def test_bev002_and_bev003_messages_name_the_hashes_and_the_allowed_values() -> None:
    """The messages a curator reads: BEV002 shows the first 12 hex digits of both hashes, BEV003 the value and
    the allowed ones, comma-separated (the built-in research_summary profile allows two predicates)."""
    rec = _quoted_claim()
    frozen = rec["source_artifacts"][0]["sha256"]
    rec["source_artifacts"][0]["observed_sha256"] = "f" * 64
    rec["statement"]["predicate"] = "causes_xyz"
    found = {f.rule_id: f for f in Validator().validate(rec).findings}
    assert found["BEV002"].message == (f"Observed source hash {'f' * 12}… differs from the frozen hash {frozen[:12]}…; "
                                       "re-pin the source or fix the record.")
    assert found["BEV003"].message == ("'causes_xyz' is outside the profile's allowed predicates "
                                       "(associated_with, contributes_to).")
    assert found["BEV003"].field_path == "$.statement.predicate"
