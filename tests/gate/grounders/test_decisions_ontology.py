"""A scope's release tag against the pinned ontology releases (issue 30, the identifiers group).

Two real releases are pinned side by side, the Cell Ontology (``data-version: releases/2026-06-08``)
and the Sequence Ontology (``data-version: 2024-11-18``), read from the files' headers. A tag naming
the pinned release passes, with or without its ``v``; another date is BEV017 at that scope entry,
naming both releases, blocking every use asked for, with the pinned tag as the fix; each tag is
judged against its own ontology.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bioevidence.gate.grounders.obo import load_ontology
from bioevidence.gate.grounders.ontology import OntologyGrounder

PINNED = {"CL": "2026-06-08", "SO": "2024-11-18"}  # the files' data-version headers


@pytest.fixture(scope="module")
def two(cell_ontology: Any, shared_data: Path, cache_dir: Path) -> OntologyGrounder:
    so = load_ontology(shared_data / "ontologies" / "so.obo", cache_root=cache_dir)
    return OntologyGrounder([cell_ontology, so], {"cell_type": "CL:0000000"})


def _record(scope: list[str], uses: list[str]) -> dict[str, Any]:
    return {"requested_uses": uses, "statement": {
        "subject": {"id": "SAMPLE:1", "label": "sample 1", "entity_type": "sample"},
        "object": {"id": "CL:0000236", "label": "B cell", "entity_type": "cell_type"}, "scope": scope},
        "evidence_items": []}


@pytest.mark.parametrize("prefix", sorted(PINNED))
def test_the_pinned_release_passes_with_or_without_its_v(two: OntologyGrounder, prefix: str) -> None:
    date = PINNED[prefix]
    for tag in (f"{prefix}:v{date}", f"{prefix}:{date}"):
        assert two.ground(_record(["NCBITaxon:9606", tag], ["research_summary"])).findings == [], tag


@pytest.mark.parametrize("prefix", sorted(PINNED))
def test_another_release_is_named_beside_the_pinned_one(two: OntologyGrounder, prefix: str) -> None:
    uses = ["research_summary", "reference_annotation"]
    for other in ("2025-01-01", "2019-12-31"):
        for written in (f"v{other}", other):
            report = two.ground(_record(["NCBITaxon:9606", f"{prefix}:{written}"], uses))
            (f,) = report.findings
            assert (f.rule_id, f.field_path, f.blocking_uses) == ("BEV017", "$.statement.scope[1]", uses)
            assert f.message == (f"the scope names {prefix} release {other}, but the pinned release is "
                                 f"{PINNED[prefix]}: the record was made against another release")
            assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value) == (
                "replace", "$.statement.scope[1]", f"{prefix}:v{PINNED[prefix]}")
            assert f.fix.detail == f"the pinned release is {PINNED[prefix]}"


# -- a term id written another way ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def cl_names(shared_data: Path) -> dict[str, str]:
    """CL id → name, read from the release file in the test (every `[Term]` with its `name:`)."""
    import gzip
    import re

    text = gzip.decompress((shared_data / "references" / "cl_2026-06-08.obo.gz").read_bytes()).decode()
    return dict(re.findall(r"\[Term\]\nid: (CL:\d{7})\nname: ([^\n]+)", text))


@pytest.mark.parametrize(("written", "how"), [
    ("cl:{n}", "writes its prefix as 'cl'"), ("Cl:{n}", "writes its prefix as 'Cl'"),
    ("CL_{n}", "is not a CURIE"), ("CL{n}", "is not a CURIE"), ("{n}", "is not a CURIE"),
])
def test_a_cell_type_id_written_another_way_names_the_term_meant(two: OntologyGrounder, cl_names: dict[str, str],
                                                                written: str, how: str) -> None:
    path, uses = "$.statement.object", ["reference_annotation"]
    for term in ("CL:0000236", "CL:0000084", "CL:0000540", "CL:0000057"):
        curie = written.format(n=term.split(":")[1])
        for label, whose in ((cl_names[term], f"'{cl_names[term]}' is"), (None, "the id meant is")):
            (f,) = two.check_term(curie, label, "cell_type", path, uses)
            assert (f.rule_id, f.field_path, f.blocking_uses) == ("BEV024", f"{path}.id", uses)
            assert f.message == (f"{curie!r} {how}: cell_type ids are written CL:<local id> (terms under "
                                 f"CL:0000000); {whose} {term} ({cl_names[term]})")
            assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value, f.fix.detail) == (
                "replace", f"{path}.id", term, f"use {term}")


def test_a_label_in_place_of_an_id_names_its_term(two: OntologyGrounder, cl_names: dict[str, str]) -> None:
    (f,) = two.check_term("B cell", "B cell", "cell_type", "$.x", ["u"])
    assert f.message == ("'B cell' is not a CURIE: cell_type ids are written CL:<local id> (terms under "
                         "CL:0000000); 'B cell' is CL:0000236 (B cell)")
    (g,) = two.check_term("some cells", None, "cell_type", "$.x", ["u"])  # reads as no CL id: nothing meant
    assert g.rule_id == "BEV024" and g.fix is None and g.message == (
        "'some cells' is not a CURIE: cell_type ids are written CL:<local id> (terms under CL:0000000)")


def test_a_loaded_prefix_in_another_case_is_named_anywhere(two: OntologyGrounder) -> None:
    (f,) = two.check_term("so:0000704", None, None, "$.x", ["u"])
    assert f.rule_id == "BEV024" and f.message == (
        "'so:0000704' writes its prefix as 'so': ids are written SO:<local id>; the id meant is SO:0000704 (gene)")
    assert two.check_term("NCBITaxon:9606", None, None, "$.x", ["u"]) == []  # not a loaded prefix


def test_a_term_id_with_a_trailing_part_is_no_term_of_the_release(two: OntologyGrounder,
                                                                  cl_names: dict[str, str]) -> None:
    """``CL:0000236:x`` (an id with a suffix glued on, outside any root) is of the CL prefix and no CL term:
    BEV016 naming it as written, never read as another prefix and passed over."""
    checked = 0
    for term_id in sorted(cl_names)[::300]:
        written = f"{term_id}:x"
        found = two.check_term(written, None, None, "$.statement.object", ["u"])
        assert [f.rule_id for f in found] == ["BEV016"], written
        assert found[0].message == f"{written} does not exist in CL@2026-06-08; check the id"
        checked += 1
    assert checked > 10


# -- a term of another ontology where a cell type is cited ---------------------------------------------

@pytest.fixture(scope="module")
def so_names(shared_data: Path) -> dict[str, str]:
    """SO id → name, read from the release file in the test."""
    import re

    text = (shared_data / "ontologies" / "so.obo").read_text(encoding="utf-8")
    return dict(re.findall(r"\[Term\]\nid: (SO:\d{7})\nname: ([^\n]+)", text))


CELLS = ("CL:0000084", "CL:0000236", "CL:0000540", "CL:0000057")  # T cell, B cell, neuron, fibroblast
GENE_PARTS = ("SO:0000704", "SO:0000147", "SO:0000316")  # gene, exon, CDS


def test_a_term_of_another_ontology_as_a_cell_type_names_the_cell_type_its_label_names(
        two: OntologyGrounder, cl_names: dict[str, str], so_names: dict[str, str]) -> None:
    path, uses = "$.statement.object", ["reference_annotation"]
    wrong = "{} is not a cell_type term: cell_type ids are CL terms under CL:0000000"
    for so in GENE_PARTS:
        for cell in CELLS:  # the label names a cell type: it is named, and its id is the fix
            (f,) = two.check_term(so, cl_names[cell], "cell_type", path, uses)
            assert (f.rule_id, f.field_path, f.blocking_uses) == ("BEV024", f"{path}.id", uses)
            assert f.message == wrong.format(so) + f"; '{cl_names[cell]}' is {cell} ({cl_names[cell]})"
            assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value, f.fix.detail) == (
                "replace", f"{path}.id", cell, f"use {cell}")
        # the SO term's own name, or no label: no cell type is meant, so none is named and nothing is fixed
        for label in (so_names[so], None):
            (f,) = two.check_term(so, label, "cell_type", path, uses)
            assert (f.rule_id, f.message, f.fix) == ("BEV024", wrong.format(so), None), label


def test_a_malformed_cell_type_id_names_only_a_term_that_exists_under_the_root(
        two: OntologyGrounder, cl_names: dict[str, str], so_names: dict[str, str]) -> None:
    absent = next(f"CL:{n:07d}" for n in range(9_999_999, 0, -1) if f"CL:{n:07d}" not in cl_names)
    head = "is not a CURIE: cell_type ids are written CL:<local id> (terms under CL:0000000)"
    written = absent.replace(":", "_")
    (f,) = two.check_term(written, None, "cell_type", "$.x", ["u"])  # it reads as an id the release lacks
    assert (f.message, f.fix) == (f"{written!r} {head}", None)
    for cell in CELLS:
        # a label of a term outside the root (SO's "gene") names nothing: the id meant is the one written
        mangled = cell.replace(":", "_")
        (f,) = two.check_term(mangled, so_names["SO:0000704"], "cell_type", "$.x", ["u"])
        assert f.message == f"{mangled!r} {head}; the id meant is {cell} ({cl_names[cell]})"
        assert f.fix is not None and (f.fix.action, f.fix.value) == ("replace", cell)
        # the label of a cell type wins over an id the release lacks
        (f,) = two.check_term(written, cl_names[cell], "cell_type", "$.x", ["u"])
        assert f.message == f"{written!r} {head}; '{cl_names[cell]}' is {cell} ({cl_names[cell]})"
        assert f.fix is not None and (f.fix.action, f.fix.value) == ("replace", cell)
    (f,) = two.check_term("cl", None, "cell_type", "$.x", ["u"])  # a prefix alone is not a CURIE
    assert f.message == f"'cl' {head}" and f.fix is None


def test_a_loaded_prefix_in_another_case_outside_the_roots_says_ids(two: OntologyGrounder,
                                                                    cl_names: dict[str, str]) -> None:
    for cell in CELLS:
        lower = "cl" + cell[2:]
        for kind in ("sample_type", None):  # a kind with no root is not named: its ids have no prefix rule
            (f,) = two.check_term(lower, cl_names[cell], kind, "$.x", ["u"])
            assert f.message == (f"{lower!r} writes its prefix as 'cl': ids are written CL:<local id>; "
                                 f"'{cl_names[cell]}' is {cell} ({cl_names[cell]})"), kind
            assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value) == ("replace", "$.x.id", cell)


# -- a cell-type key in a locator, and entities of odd shapes -----------------------------------------

def _locator_record(locator: str, uses: list[str]) -> dict[str, Any]:
    return {"requested_uses": uses, "statement": {
        "subject": {"id": "SAMPLE:1", "label": "sample 1", "entity_type": "sample"},
        "object": {"id": "SAMPLE:2", "label": "sample 2", "entity_type": "sample"}, "scope": []},
        "evidence_items": [{"id": "e1", "locator": "table=1"}, {"id": "e2", "locator": locator}]}


@pytest.mark.parametrize("form", ["cell_type={}", "table=2; cell_type={}", "table=2; cell_type={}#row 3",
                                  "table=2; cell_type={}#row#3", "cell_type={}; table=2"])
def test_a_malformed_cell_type_key_in_a_locator_is_fixed_in_place(two: OntologyGrounder, cl_names: dict[str, str],
                                                                 form: str) -> None:
    uses = ["reference_annotation", "research_summary"]
    for cell in CELLS:
        mangled = cell.replace(":", "_")
        locator = form.format(mangled)
        (f,) = two.ground(_locator_record(locator, uses)).findings
        assert (f.rule_id, f.severity, f.field_path, f.blocking_uses) == (
            "BEV024", "error", "$.evidence_items[1].locator", uses), locator
        assert f.message == (f"{mangled!r} is not a CURIE: cell_type ids are written CL:<local id> (terms under "
                             f"CL:0000000); the id meant is {cell} ({cl_names[cell]})"), locator
        # the fix rewrites the key's value only: the rest of the locator, its fragment included, is kept
        assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value, f.fix.detail) == (
            "replace", "$.evidence_items[1].locator", form.format(cell), f"use {cell}"), locator


def test_entities_of_odd_shapes_are_read_as_far_as_they_go(two: OntologyGrounder, cl_names: dict[str, str]) -> None:
    """A subject without a prefix is skipped and the object after it still checked; a non-string id,
    kind or label is read as absent (the schema refuses them before, the grounder must not fail)."""
    cell = "CL:0000084"
    mangled = cell.replace(":", "_")

    def record(subject: dict[str, Any], obj: dict[str, Any]) -> dict[str, Any]:
        return {"requested_uses": ["u"], "evidence_items": [],
                "statement": {"subject": subject, "object": obj, "scope": []}}

    checked = {"id": mangled, "label": cl_names[cell], "entity_type": "cell_type"}
    for subject in ({"id": "sample 1", "entity_type": "sample"}, {"id": 12345, "entity_type": "sample"},
                    {"id": "CL_0000236", "entity_type": ["cell_type"]}):
        (f,) = two.ground(record(subject, checked)).findings
        assert (f.rule_id, f.field_path) == ("BEV024", "$.statement.object.id"), subject
    # a label that is not a string is no label: the id is checked alone
    assert two.ground(record({"id": cell, "label": 42, "entity_type": "cell_type"},
                             {"id": "SAMPLE:2", "label": "x", "entity_type": "sample"})).findings == []


def test_the_grounder_names_every_release_and_refuses_none(two: OntologyGrounder) -> None:
    assert two.name == f"ontology:CL@{PINNED['CL']},SO@{PINNED['SO']}"
    from bioevidence.errors import ConfigurationError

    with pytest.raises(ConfigurationError) as caught:
        OntologyGrounder([])
    assert caught.value.message == "the ontology grounder needs at least one release (--ontology FILE)"


# -- obsolete, unknown, mislabelled and misplaced terms, over the whole release ------------------------

@pytest.fixture(scope="module")
def cl_stanzas(shared_data: Path) -> dict[str, dict[str, Any]]:
    """Every `[Term]` of the release (CL's own, and the few of other ontologies it carries): name, obsolete
    flag, replaced_by and consider ids (first token)."""
    import gzip

    text = gzip.decompress((shared_data / "references" / "cl_2026-06-08.obo.gz").read_bytes()).decode()
    out: dict[str, dict[str, Any]] = {}
    for block in text.split("\n\n"):
        lines = block.strip().split("\n")
        if lines[0] != "[Term]":
            continue
        tags: dict[str, list[str]] = {}
        for line in lines[1:]:
            tag, _, value = line.partition(": ")
            tags.setdefault(tag, []).append(value)
        if "name" in tags:
            out[tags["id"][0]] = {"name": tags["name"][0], "obsolete": tags.get("is_obsolete") == ["true"],
                                  "replaced_by": [v.split()[0] for v in tags.get("replaced_by", [])],
                                  "consider": [v.split()[0] for v in tags.get("consider", [])]}
    return out


def test_every_obsolete_cell_type_names_its_replacement_or_what_to_consider(
        two: OntologyGrounder, cl_stanzas: dict[str, dict[str, Any]]) -> None:
    def describe(term_id: str) -> str:
        return f"{term_id} ({cl_stanzas[term_id]['name']})" if term_id in cl_stanzas else term_id

    seen = {"replaced": 0, "consider": 0, "nothing": 0}
    for term_id, t in sorted(cl_stanzas.items()):
        if not t["obsolete"] or not term_id.startswith("CL:"):
            continue
        (f,) = two.check_term(term_id, None, None, "$.o", ["u"])
        head = f"{term_id} ({t['name']}) is obsolete in CL@2026-06-08; "
        assert (f.rule_id, f.field_path) == ("BEV023", "$.o.id")
        if len(t["replaced_by"]) == 1:
            new = t["replaced_by"][0]
            assert f.message == head + f"it is replaced by {describe(new)}", term_id
            assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value, f.fix.detail) == (
                "replace", "$.o.id", new, f"use {describe(new)}"), term_id
            seen["replaced"] += 1
        else:
            options = t["replaced_by"] + t["consider"]
            named = ", ".join(describe(o) for o in options) if options else "no replacement given"
            assert (f.message, f.fix) == (head + f"consider {named}", None), term_id
            seen["consider" if options else "nothing"] += 1
    assert seen["replaced"] >= 100 and seen["consider"] >= 10 and seen["nothing"] >= 50, seen  # 122, 13, 61


def test_an_unknown_cell_type_id_with_a_cell_type_label_names_that_term(
        two: OntologyGrounder, cl_stanzas: dict[str, dict[str, Any]]) -> None:
    absent = next(f"CL:{n:07d}" for n in range(9_999_999, 0, -1) if f"CL:{n:07d}" not in cl_stanzas)
    for cell in CELLS:
        name = cl_stanzas[cell]["name"]
        (f,) = two.check_term(absent, name, "cell_type", "$.o", ["u"])
        hint = f"'{name}' is {cell} ({name})"
        assert (f.rule_id, f.message) == ("BEV016", f"{absent} does not exist in CL@2026-06-08; {hint}")
        assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value, f.fix.detail) == (
            "replace", "$.o.id", cell, hint)
    (f,) = two.check_term(absent, None, "cell_type", "$.o", ["u"])  # nothing to go by
    assert (f.rule_id, f.message, f.fix) == ("BEV016", f"{absent} does not exist in CL@2026-06-08; check the id", None)
    (f,) = two.check_term(absent, "qqqq zzzz", "cell_type", "$.o", ["u"])  # a label like no cell type
    assert f.message.startswith(f"{absent} does not exist in CL@2026-06-08; ") and f.fix is None


def test_a_cell_type_labelled_with_another_term_names_the_term_of_the_label(
        two: OntologyGrounder, cl_stanzas: dict[str, dict[str, Any]], so_names: dict[str, str]) -> None:
    for cell, other in zip(CELLS, CELLS[1:] + CELLS[:1], strict=True):
        name, label = cl_stanzas[cell]["name"], cl_stanzas[other]["name"]
        (f,) = two.check_term(cell, label, "cell_type", "$.o", ["u"])
        assert (f.rule_id, f.field_path) == ("BEV017", "$.o.label")
        assert f.message == (f"'{label}' is not the name or an exact synonym of {cell}, which is '{name}'; "
                             f"'{label}' is the name of {other} ({label})")
        assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value, f.fix.detail) == (
            "replace", "$.o.label", name, f"or cite {other} if '{label}' was meant")
        # a label of a term outside the root (SO's "gene") is still named, from any loaded release
        (g,) = two.check_term(cell, so_names["SO:0000704"], "cell_type", "$.o", ["u"])
        assert g.message == (f"'gene' is not the name or an exact synonym of {cell}, which is '{name}'; "
                             f"'gene' is the name of SO:0000704 (gene)")
        assert g.fix is not None and g.fix.detail == "or cite SO:0000704 if 'gene' was meant"
        (h,) = two.check_term(cell, "qqqq zzzz", "cell_type", "$.o", ["u"])  # a label of nothing
        assert h.message == f"'qqqq zzzz' is not the name or an exact synonym of {cell}, which is '{name}'"
        assert h.fix is not None and (h.fix.value, h.fix.detail) == (name, None)


def test_a_term_outside_its_kind_s_root_names_the_root_and_the_label_s_term(
        cell_ontology: Any, cl_stanzas: dict[str, dict[str, Any]]) -> None:
    t_cell, b_cell = "CL:0000084", "CL:0000236"
    grounder = OntologyGrounder([cell_ontology], {"t_cell": t_cell})
    b_name, t_name = cl_stanzas[b_cell]["name"], cl_stanzas[t_cell]["name"]
    head = f"{b_cell} ({b_name}) is not a t_cell: it is not under {t_cell} ({t_name})"
    (f,) = grounder.check_term(b_cell, b_name, "t_cell", "$.o", ["u"])
    assert (f.rule_id, f.field_path, f.message, f.fix) == ("BEV024", "$.o.id", head, None)
    (f,) = grounder.check_term(b_cell, None, "t_cell", "$.o", ["u"])
    assert (f.message, f.fix) == (head, None)
    # the label names a term under the root: it is named, and the fix cites it
    (f, g) = grounder.check_term(b_cell, t_name, "t_cell", "$.o", ["u"])
    assert f.rule_id == "BEV017" and g.rule_id == "BEV024"
    assert g.message == head + f"; '{t_name}' is {t_cell} ({t_name})"
    assert g.fix is not None and (g.fix.action, g.fix.field_path, g.fix.value) == ("replace", "$.o.id", t_cell)


def test_a_label_several_terms_carry_names_the_first_three(two: OntologyGrounder, cell_ontology: Any,
                                                           cl_stanzas: dict[str, dict[str, Any]]) -> None:
    """'Mo.6c+II' is an exact synonym of four monocyte terms (which four is the label index's matter,
    checked elsewhere): citing another cell type with it names the first three, each described."""
    label = "Mo.6c+II"
    owners = list(cell_ontology.owners(label))
    assert len(owners) == 4
    (f,) = two.check_term("CL:0000084", label, "cell_type", "$.o", ["u"])
    named = "; ".join(f"'{label}' is an exact synonym of {t} ({cl_stanzas[t]['name']})" for t in owners[:3])
    assert f.message == (f"'{label}' is not the name or an exact synonym of CL:0000084, which is 'T cell'; {named}")
    # an unknown id with a label of a term outside the root (SO's "gene") names no cell type and fixes nothing
    absent = next(f"CL:{n:07d}" for n in range(9_999_999, 0, -1) if f"CL:{n:07d}" not in cl_stanzas)
    (g,) = two.check_term(absent, "gene", "cell_type", "$.o", ["u"])
    assert g.rule_id == "BEV016" and g.fix is None and "SO:0000704" not in g.message
