"""Decisions of the gene grounder over the real HGNC release (issue 30, the identifiers group).

Every expected value is read from the HGNC complete set here, with the csv module, by the rules of
genes.py's module docstring (approved symbol → nothing; previous symbol, then alias → BEV023 naming
the approved symbol(s), with a fix only when there is one; wrong case → BEV023; withdrawn symbol →
BEV023 naming what it was merged into; anything else → BEV016), never from the grounder's output.
Symbols of every kind are sampled across the whole release (a fixed stride, not picked examples).
"""

from __future__ import annotations

import csv
import difflib
import gzip
from pathlib import Path
from typing import Any

import pytest

from bioevidence.gate.grounders.genes import GeneGrounder, load_genes

pytestmark = pytest.mark.heavy(seconds=35)  # started first under xdist (tests/conftest.py)

RELEASE = "hgnc_complete_set_2026-09-30.tsv.gz"
PATH, USES = "$.statement.subject.label", ["research_summary"]


OFFICIAL = ("hgnc_id", "symbol", "name", "status", "alias_symbol", "prev_symbol", "|")
CUSTOM = ("HGNC ID", "Approved symbol", "Approved name", "Status", "Alias symbols", "Previous symbols", ",")


def _read(path: Path, columns: tuple[str, ...]) -> list[tuple[str, ...]]:
    """(id, symbol, name, status, aliases, previous symbols) per row, lists joined by '|'."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    sep = columns[6]
    return [tuple(r[c].strip().strip('"') for c in columns[:4])
            + tuple("|".join(x.strip() for x in r[c].strip('"').split(sep) if x.strip()) for c in columns[4:6])
            for r in rows if r[columns[0]].startswith("HGNC:")]


class Truth:
    """The release's tables, read in the test. Files are merged as docs/grounders.md says: an id
    keeps its first approved entry; an id not yet approved takes the later file's entry."""

    def __init__(self, *files: list[tuple[str, ...]]) -> None:
        self.rows: dict[str, tuple[str, ...]] = {}
        for rows in files:
            for row in rows:
                if row[0] not in self.rows or self.rows[row[0]][3] != "Approved":
                    self.rows[row[0]] = row
        self.approved = {r[1]: i for i, r in self.rows.items() if r[3] == "Approved"}
        self.previous: dict[str, list[str]] = {}
        self.alias: dict[str, list[str]] = {}
        self.withdrawn: dict[str, list[str]] = {}
        for i, r in self.rows.items():
            if r[3] == "Approved":
                for sym in filter(None, r[5].split("|")):
                    self.previous.setdefault(sym, []).append(i)
                for sym in filter(None, r[4].split("|")):
                    self.alias.setdefault(sym, []).append(i)
            else:
                self.withdrawn.setdefault(r[1], []).append(i)
        self.upper = {sym.upper(): sym for sym in self.approved}

    def symbol(self, hgnc_id: str) -> str:
        return self.rows[hgnc_id][1]


@pytest.fixture(scope="module")
def complete(shared_data: Path) -> list[tuple[str, ...]]:
    return _read(shared_data / "references" / RELEASE, OFFICIAL)


@pytest.fixture(scope="module")
def truth(complete: list[tuple[str, ...]]) -> Truth:
    return Truth(complete)


@pytest.fixture(scope="module")
def grounder(shared_data: Path, cache_dir: Path) -> GeneGrounder:
    return GeneGrounder(load_genes([shared_data / "references" / RELEASE], cache_root=cache_dir))


def _one(found: list[Any]) -> Any:
    assert len(found) == 1, [f.message for f in found]
    return found[0]


def test_approved_symbols_pass(grounder: GeneGrounder, truth: Truth) -> None:
    symbols = sorted(truth.approved)[::97]
    assert len(symbols) > 300
    for symbol in symbols:
        assert grounder.check_symbol(symbol, PATH, USES) == [], symbol


@pytest.mark.parametrize("kind", ["previous", "alias"])
def test_a_previous_symbol_or_alias_names_the_approved_symbols(grounder: GeneGrounder, truth: Truth,
                                                                 kind: str) -> None:
    table = truth.previous if kind == "previous" else truth.alias
    what = "a previous symbol" if kind == "previous" else "an alias"
    chosen = [s for s in sorted(table) if s not in truth.approved and (kind == "previous" or s not in truth.previous)]
    sample = chosen[::41] + [s for s in chosen if len(table[s]) > 1][:40]  # and symbols with several owners
    assert len(sample) > 100 and any(len(table[s]) > 1 for s in sample)
    for symbol in sample:
        owners = table[symbol]
        f = _one(grounder.check_symbol(symbol, PATH, USES))
        named = ", ".join(f"{truth.symbol(i)} ({i})" for i in owners)
        assert (f.rule_id, f.field_path, f.blocking_uses) == ("BEV023", PATH, USES)
        assert f.message == f"'{symbol}' is {what} in HGNC@2026-09-30; the approved symbol is {named}"
        if len(owners) == 1:
            assert f.fix is not None
            assert (f.fix.action, f.fix.field_path, f.fix.value) == ("replace", PATH, truth.symbol(owners[0]))
            assert f"use the approved symbol {truth.symbol(owners[0])}" in str(f.fix.detail)
        else:
            assert f.fix is None  # several genes: a person chooses


def test_a_symbol_in_the_wrong_case_names_the_approved_one(grounder: GeneGrounder, truth: Truth) -> None:
    checked = 0
    for symbol in sorted(truth.approved)[::53]:
        wrong = symbol.lower() if symbol.lower() != symbol else symbol.upper()
        if wrong == symbol or wrong in truth.approved or wrong in truth.previous or wrong in truth.alias:
            continue
        f = _one(grounder.check_symbol(wrong, PATH, USES))
        assert f.rule_id == "BEV023" and f.message == (
            f"'{wrong}' is not an approved symbol; the approved symbol is '{symbol}' ({truth.approved[symbol]}) "
            "(gene symbols are case-sensitive)")
        assert f.fix is not None and (f.fix.field_path, f.fix.value) == (PATH, symbol)
        checked += 1
    assert checked > 300


def test_a_withdrawn_symbol_names_what_it_was_merged_into(shared_data: Path, cache_dir: Path,
                                                          complete: list[tuple[str, ...]]) -> None:
    """With the 2024 custom download beside the release (it lists withdrawn entries; the complete set
    lists approved ones only), as docs/grounders.md shows."""
    import re

    custom = shared_data / "hgnc" / "hgnc_entries.tsv.gz"
    truth = Truth(complete, _read(custom, CUSTOM))
    grounder = GeneGrounder(load_genes([shared_data / "references" / RELEASE, custom], cache_root=cache_dir))
    kinds = {"merged into one": 0, "merged into several or none": 0}
    for symbol in sorted(truth.withdrawn):  # every withdrawn symbol of the two files
        if symbol in truth.approved or symbol in truth.previous or symbol in truth.alias or \
                symbol.upper() in truth.upper:
            continue
        gone = truth.withdrawn[symbol]
        see = list(dict.fromkeys(s for i in gone for s in re.findall(r"HGNC:\d+", truth.rows[i][2])))
        targets = [f"{truth.symbol(s)} ({s})" for s in see if s in truth.rows]
        f = _one(grounder.check_symbol(symbol, PATH, USES))
        tail = f"; it was merged into {', '.join(targets)}" if targets else ""
        assert f.rule_id == "BEV023" and f.message == f"'{symbol}' is a withdrawn HGNC symbol ({', '.join(gone)}){tail}"
        if len(see) == 1 and see[0] in truth.rows:
            assert f.fix is not None and f.fix.value == truth.symbol(see[0])
            kinds["merged into one"] += 1
        else:
            assert f.fix is None
            kinds["merged into several or none"] += 1
    assert min(kinds.values()) >= 20, kinds


def test_an_unknown_symbol_is_bev016_with_the_closest_approved_symbols(grounder: GeneGrounder, truth: Truth) -> None:
    known = set(truth.approved) | set(truth.previous) | set(truth.alias) | set(truth.withdrawn)
    hinted = 0
    for symbol in sorted(truth.approved)[::211]:
        typo = symbol[:-1] + ("Q" if symbol[-1] != "Q" else "Z") + "X"
        if typo in known or typo.upper() in truth.upper:
            continue
        f = _one(grounder.check_symbol(typo, PATH, USES))
        close = difflib.get_close_matches(typo.upper(), list(truth.upper), n=3, cutoff=0.75)
        hint = f"; closest approved symbols: {', '.join(truth.upper[c] for c in close)}" if close else ""
        assert f.rule_id == "BEV016" and f.fix is None
        assert f.message == f"'{typo}' is not an HGNC symbol in HGNC@2026-09-30{hint}"
        hinted += bool(close)
    assert hinted >= 10
    unknown = _one(grounder.check_symbol("Zz9qx", PATH, USES))
    assert unknown.message == "'Zz9qx' is not an HGNC symbol in HGNC@2026-09-30"


def test_a_locator_gene_key_is_fixed_in_place(grounder: GeneGrounder, truth: Truth) -> None:
    previous = next(s for s in sorted(truth.previous) if s not in truth.approved and s not in truth.alias
                    and len(truth.previous[s]) == 1)
    approved = truth.symbol(truth.previous[previous][0])
    record = {"statement": {"subject": {"id": "MONDO:0005105", "label": "melanoma", "entity_type": "disease"},
                            "predicate": "associated_with",
                            "object": {"id": "HP:0000001", "label": "x", "entity_type": "phenotype"}},
              "evidence_items": [{"id": "e", "locator": f"table=2; gene={previous}#t2"}]}
    f = _one(grounder.ground(record).findings)
    assert (f.rule_id, f.field_path) == ("BEV023", "$.evidence_items[0].locator")
    assert f.fix is not None and f.fix.value == f"table=2; gene={approved}#t2"


# -- an entity's HGNC id and label ---------------------------------------------------------------------

ENTITY = "$.statement.subject"


def _entity(curie: str, label: str | None, kind: str = "gene") -> dict[str, Any]:
    out: dict[str, Any] = {"id": curie, "entity_type": kind}
    if label is not None:
        out["label"] = label
    return out


def test_an_approved_id_with_its_symbol_or_name_passes(grounder: GeneGrounder, truth: Truth) -> None:
    for symbol in sorted(truth.approved)[::151]:
        hgnc_id = truth.approved[symbol]
        assert grounder.check_entity(_entity(hgnc_id, symbol), ENTITY, USES) == []
        assert grounder.check_entity(_entity(hgnc_id, truth.rows[hgnc_id][2]), ENTITY, USES) == []
        assert grounder.check_entity(_entity(hgnc_id, None), ENTITY, USES) == []


def test_an_id_labelled_with_another_gene_names_both(grounder: GeneGrounder, truth: Truth) -> None:
    symbols = sorted(truth.approved)[::173]
    for symbol, other in zip(symbols, symbols[1:] + symbols[:1], strict=True):
        hgnc_id = truth.approved[symbol]
        f = _one(grounder.check_entity(_entity(hgnc_id, other), ENTITY, USES))
        assert (f.rule_id, f.field_path) == ("BEV017", f"{ENTITY}.label")
        assert f.message == (f"'{other}' is not the approved symbol of {hgnc_id}, which is '{symbol}'; "
                             f"'{other}' is {truth.approved[other]}")
        assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value) == (
            "replace", f"{ENTITY}.label", symbol)


@pytest.mark.parametrize("kind", ["previous", "alias"])
def test_an_id_labelled_with_its_own_old_name_says_it_is_the_same_gene(grounder: GeneGrounder, truth: Truth,
                                                                      kind: str) -> None:
    table, what = (truth.previous, "a previous symbol") if kind == "previous" else (truth.alias, "an alias")
    checked = 0
    for name in sorted(table)[::37]:
        owners = table[name]
        if name in truth.approved or len(owners) != 1 or (kind == "previous" and name in truth.alias) or \
                (kind == "alias" and name in truth.previous) or name == truth.rows[owners[0]][2]:
            continue
        hgnc_id = owners[0]
        f = _one(grounder.check_entity(_entity(hgnc_id, name), ENTITY, USES))
        symbol = truth.symbol(hgnc_id)
        assert f.rule_id == "BEV017" and f.message == (
            f"'{name}' is not the approved symbol of {hgnc_id}, which is '{symbol}'; '{name}' is {what} of "
            f"{symbol} (the same gene: use its approved symbol)")
        checked += 1
    assert checked >= 40


def test_an_id_hgnc_does_not_have_is_bev016(grounder: GeneGrounder, truth: Truth) -> None:
    f = _one(grounder.check_entity(_entity("HGNC:99999999", "BRAF"), ENTITY, USES))
    assert (f.rule_id, f.field_path) == ("BEV016", f"{ENTITY}.id")
    assert f.message == f"HGNC:99999999 does not exist in HGNC@2026-09-30; 'BRAF' is {truth.approved['BRAF']}"
    assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value) == (
        "replace", f"{ENTITY}.id", truth.approved["BRAF"])
    g = _one(grounder.check_entity(_entity("HGNC:99999999", "not a gene symbol"), ENTITY, USES))
    assert g.message == "HGNC:99999999 does not exist in HGNC@2026-09-30" and g.fix is None


def test_an_id_labelled_with_no_gene_name_names_only_the_approved_symbol(grounder: GeneGrounder,
                                                                         truth: Truth) -> None:
    taken = {w.upper() for w in (*truth.approved, *truth.previous, *truth.alias)}
    for label in ("tumour", "not a gene symbol", "cell line 7"):
        assert label.upper() not in taken
        for symbol in sorted(truth.approved)[::2011]:
            hgnc_id = truth.approved[symbol]
            f = _one(grounder.check_entity(_entity(hgnc_id, label), ENTITY, USES))
            assert f.message == f"'{label}' is not the approved symbol of {hgnc_id}, which is '{symbol}'"
            assert f.fix is not None and (f.fix.action, f.fix.value) == ("replace", symbol)


def test_an_id_or_label_that_is_not_a_string_is_read_as_absent(grounder: GeneGrounder, truth: Truth) -> None:
    """The schema refuses these before; the grounder must not fail on them."""
    hgnc_id = truth.approved["BRAF"]
    assert grounder.check_entity({"id": hgnc_id, "label": 42, "entity_type": "gene"}, ENTITY, USES) == []
    # a gene whose id is a number: not an HGNC CURIE (BEV024 at the id), and no failure
    f = _one(grounder.check_entity({"id": 673, "entity_type": "gene"}, ENTITY, USES))
    assert (f.rule_id, f.field_path) == ("BEV024", f"{ENTITY}.id")


@pytest.mark.parametrize(("written", "how"), [
    ("hgnc:{n}", "writes its prefix as 'hgnc'"), ("Hgnc:{n}", "writes its prefix as 'Hgnc'"),
    ("HGNC_{n}", "is not a CURIE"), ("HGNC{n}", "is not a CURIE"), ("{n}", "is not a CURIE"),
])
def test_an_hgnc_id_written_another_way_names_the_gene_meant(grounder: GeneGrounder, truth: Truth, written: str,
                                                            how: str) -> None:
    for symbol in sorted(truth.approved)[::997]:
        hgnc_id = truth.approved[symbol]
        curie = written.format(n=hgnc_id.split(":")[1])
        for label, whose in ((symbol, f"'{symbol}' is"), (None, "the gene meant is")):
            f = _one(grounder.check_entity(_entity(curie, label), ENTITY, USES))
            assert (f.rule_id, f.field_path) == ("BEV024", f"{ENTITY}.id")
            assert f.message == f"{curie!r} {how}: HGNC ids are written HGNC:<number>; {whose} {hgnc_id} ({symbol})"
            assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value, f.fix.detail) == (
                "replace", f"{ENTITY}.id", hgnc_id, f"use {hgnc_id}")
        # written the same way as a gene of another type (a protein): still the wrong form, and named
        if written.lower().startswith("hgnc:"):
            f = _one(grounder.check_entity(_entity(curie, None, kind="protein"), ENTITY, USES))
            assert f.message == f"{curie!r} {how}: HGNC ids are written HGNC:<number>; the gene meant is " \
                                f"{hgnc_id} ({symbol})"
    # an id HGNC does not have, written another way: the form is named, no gene is meant and none fixed
    absent = next(str(n) for n in range(99_999_999, 0, -1) if f"HGNC:{n}" not in truth.rows)
    curie = written.format(n=absent)
    f = _one(grounder.check_entity(_entity(curie, None), ENTITY, USES))
    assert (f.rule_id, f.message, f.fix) == ("BEV024", f"{curie!r} {how}: HGNC ids are written HGNC:<number>", None)


def test_a_gene_whose_id_is_its_symbol_or_another_namespace(grounder: GeneGrounder, truth: Truth) -> None:
    braf = truth.approved["BRAF"]
    f = _one(grounder.check_entity(_entity("BRAF", None), ENTITY, USES))
    assert f.message == f"'BRAF' is not a CURIE: HGNC ids are written HGNC:<number>; the gene meant is {braf} (BRAF)"
    g = _one(grounder.check_entity(_entity("not an id", None), ENTITY, USES))
    assert g.message == "'not an id' is not a CURIE: HGNC ids are written HGNC:<number>" and g.fix is None
    # another namespace is not the gene grounder's to judge; its label still is
    assert grounder.check_entity(_entity("NCBIGene:673", "BRAF"), ENTITY, USES) == []
    h = _one(grounder.check_entity(_entity("NCBIGene:673", "braf"), ENTITY, USES))
    assert h.rule_id == "BEV023" and h.field_path == f"{ENTITY}.label"
    # not a gene: its label is not read as a symbol
    assert grounder.check_entity(_entity("MONDO:0005105", "melanoma", "disease"), ENTITY, USES) == []


def test_a_withdrawn_id_names_what_it_became(shared_data: Path, cache_dir: Path,
                                             complete: list[tuple[str, ...]]) -> None:
    """Every withdrawn id of the 2024 custom download, beside the release: BEV023 with its status, what
    it was merged into, and the gene its symbol names now when the symbol was reused."""
    import re

    custom = shared_data / "hgnc" / "hgnc_entries.tsv.gz"
    truth = Truth(complete, _read(custom, CUSTOM))
    grounder = GeneGrounder(load_genes([shared_data / "references" / RELEASE, custom], cache_root=cache_dir))
    seen = {"merged": 0, "reused": 0, "neither": 0, "fixed": 0}
    for hgnc_id, (_i, symbol, name, status, _a, _p) in sorted(truth.rows.items()):
        if status == "Approved":
            continue
        f = _one(grounder.check_entity(_entity(hgnc_id, None), ENTITY, USES))
        # the distinct ids the name links to (HGNC writes each twice: "see [HGNC:12469](…/HGNC:12469)")
        see = [s for s in dict.fromkeys(re.findall(r"HGNC:\d+", name)) if s in truth.rows] \
            if "withdrawn" in status.lower() else []
        now = truth.approved.get(symbol)
        parts = [f"{hgnc_id} ({symbol}) is {status.lower()} in HGNC@2026-09-30"]
        if see:
            parts.append(f"it was merged into {', '.join(f'{s} ({truth.symbol(s)})' for s in see)}")
        if now:
            parts.append(f"the symbol {symbol} now names another gene, {now} ({truth.rows[now][2]})")
        assert (f.rule_id, f.field_path, f.message) == ("BEV023", f"{ENTITY}.id", "; ".join(parts))
        if len(see) == 1:
            assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value) == (
                "replace", f"{ENTITY}.id", see[0]), hgnc_id
        else:
            assert f.fix is None, hgnc_id
        seen["merged"] += bool(see)
        seen["reused"] += bool(now)
        seen["neither"] += not see and not now
        seen["fixed"] += len(see) == 1
    assert seen["merged"] > 1000 and seen["neither"] > 1000 and seen["reused"] >= 10, seen
    assert seen["fixed"] > 1000, seen  # one gene merged into: the fix names it


def test_every_kind_of_old_symbol_in_a_locator_is_fixed_in_place(shared_data: Path, cache_dir: Path,
                                                                  complete: list[tuple[str, ...]]) -> None:
    """A previous symbol, an alias, a wrong case and a withdrawn symbol merged into one gene, each as a
    locator's ``gene=`` key: BEV023 at the locator, and the fix rewrites that key only."""
    import re

    custom = shared_data / "hgnc" / "hgnc_entries.tsv.gz"
    truth = Truth(complete, _read(custom, CUSTOM))
    grounder = GeneGrounder(load_genes([shared_data / "references" / RELEASE, custom], cache_root=cache_dir))
    taken = set(truth.approved) | set(truth.previous) | set(truth.alias)
    previous = next(s for s in sorted(truth.previous) if s not in truth.approved and len(truth.previous[s]) == 1)
    alias = next(s for s in sorted(truth.alias) if s not in truth.approved and s not in truth.previous
                 and len(truth.alias[s]) == 1)
    case = next(s.lower() for s in sorted(truth.approved) if s.lower() not in taken and s.lower() != s)
    withdrawn = next(s for s in sorted(truth.withdrawn) if s not in taken and s.upper() not in truth.upper
                     and len(set(re.findall(r"HGNC:\d+", " ".join(truth.rows[i][2] for i in truth.withdrawn[s])))) == 1)
    merged = re.findall(r"HGNC:\d+", truth.rows[truth.withdrawn[withdrawn][0]][2])[0]
    for old, new in ((previous, truth.symbol(truth.previous[previous][0])),
                     (alias, truth.symbol(truth.alias[alias][0])), (case, truth.upper[case.upper()]),
                     (withdrawn, truth.symbol(merged))):
        record = {"statement": {"subject": {"id": "MONDO:0005105", "label": "melanoma", "entity_type": "disease"},
                                "predicate": "associated_with",
                                "object": {"id": "HP:0000001", "label": "x", "entity_type": "phenotype"}},
                  "evidence_items": [{"id": "e", "locator": f"table=2; gene={old}"}]}
        f = _one(grounder.ground(record).findings)
        assert (f.rule_id, f.field_path) == ("BEV023", "$.evidence_items[0].locator"), old
        assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value) == (
            "replace", "$.evidence_items[0].locator", f"table=2; gene={new}"), old


def test_a_record_s_gene_entities_locators_and_scope_through_ground(grounder: GeneGrounder, truth: Truth) -> None:
    """``ground`` over a whole record: an HGNC id is checked whatever the entity's type, at its own path;
    a non-human scope names every taxon it holds; a locator's fragment (after the first ``#``) is kept
    out of the gene key and in the fix."""
    uses = ["research_summary", "reference_annotation"]
    absent = next(f"HGNC:{n}" for n in range(99_999_999, 0, -1) if f"HGNC:{n}" not in truth.rows)

    def record(subject: dict[str, Any], scope: list[str], items: list[dict[str, str]]) -> dict[str, Any]:
        return {"requested_uses": uses, "evidence_items": items, "statement": {
            "subject": subject, "predicate": "associated_with",
            "object": {"id": "MONDO:0005105", "label": "melanoma", "entity_type": "disease"}, "scope": scope}}

    for kind in ("protein", "gene", "variant"):
        (f,) = grounder.ground(record({"id": absent, "label": "x", "entity_type": kind}, [], [])).findings
        assert (f.rule_id, f.field_path, f.blocking_uses) == ("BEV016", "$.statement.subject.id", uses), kind
        assert f.message == f"{absent} does not exist in HGNC@2026-09-30"
    (f,) = grounder.ground(record({"id": "HGNC:1097", "label": "BRAF", "entity_type": "gene"},
                                  ["NCBITaxon:10090", "NCBITaxon:10116"], [])).findings
    assert (f.rule_id, f.field_path, f.blocking_uses) == ("BEV015", "$.statement.scope", uses)
    assert f.message == ("the scope names NCBITaxon:10090, NCBITaxon:10116; HGNC@2026-09-30 covers human genes "
                         "only, so the genes cannot be confirmed")
    braf = truth.approved["BRAF"]
    (f,) = grounder.ground(record({"id": "MONDO:0005105", "label": "melanoma", "entity_type": "disease"}, [],
                                  [{"id": "e", "locator": "table=2; gene=braf#row#3"}])).findings
    assert (f.rule_id, f.field_path) == ("BEV023", "$.evidence_items[0].locator")
    assert f.message == (f"'braf' is not an approved symbol; the approved symbol is 'BRAF' ({braf}) "
                         "(gene symbols are case-sensitive)")
    assert f.fix is not None and (f.fix.action, f.fix.field_path, f.fix.value) == (
        "replace", "$.evidence_items[0].locator", "table=2; gene=BRAF#row#3")
