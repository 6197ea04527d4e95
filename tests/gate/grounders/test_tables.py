"""Table grounder: rows of a real pinned CIViC table (claims/civic/civic.biomarkers.tsv), and the
precision rule on a small invented table.

Expected values are read from the TSV here with the csv module, independently of the grounder.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from bioevidence.gate.grounders.tables import TableGrounder, parse_table, same_value
from bioevidence.sources.store import SnapshotStore


def table_record(sha: str, locator: str, claims: str | None, evidence_type: str = "table_row") -> dict[str, Any]:
    item: dict[str, Any] = {"id": "ev", "source_artifact_id": "tab", "locator": locator,
                            "evidence_type": evidence_type}
    if claims is not None:
        item["extracted_text"] = claims
    return {"requested_uses": ["u"], "evidence_items": [item],
            "source_artifacts": [{"id": "tab", "source_type": "dataset_snapshot", "sha256": sha}]}


@pytest.fixture(scope="module")
def civic(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[TableGrounder, str, list[dict]]:
    data = (shared_data / "claims" / "civic" / "civic.biomarkers.tsv").read_bytes()
    store = SnapshotStore(tmp_path_factory.mktemp("tables"))
    sha = store.put(data, "tsv")
    rows = list(csv.DictReader(io.StringIO(data.decode()), delimiter="\t"))
    return TableGrounder(store, ["table_row"]), sha, rows


def codes(grounder: TableGrounder, record: dict[str, Any]) -> list[str]:
    return [f.rule_id for f in grounder.ground(record).findings]


def test_a_cited_row_with_its_true_values_is_verified(civic: tuple) -> None:
    grounder, sha, rows = civic
    unique = [r for r in rows if sum(1 for x in rows if x["civic_id"] == r["civic_id"]) == 1][:25]
    for row in unique:
        claims = f"genesymbol={row['genesymbol']}; rating={row['rating']}; evidence_level={row['evidence_level']}"
        result = grounder.ground(table_record(sha, f"civic_id={row['civic_id']}", claims))
        assert result.findings == [] and result.verified == {"ev"}, row["civic_id"]


def test_text_matches_ignoring_case_and_a_row_without_claims_is_verified(civic: tuple) -> None:
    grounder, sha, rows = civic
    row = rows[0]
    claims = f"genesymbol={row['genesymbol'].lower()}; variant_name={row['variant_name'].lower()}"
    assert grounder.ground(table_record(sha, f"civic_id={row['civic_id']}", claims)).verified == {"ev"}
    assert grounder.ground(table_record(sha, f"civic_id={row['civic_id']}", None)).verified == {"ev"}


def test_a_wrong_value_is_bev017_naming_the_tables_value(civic: tuple) -> None:
    grounder, sha, rows = civic
    row = next(r for r in rows if r["rating"] not in ("NA", "5"))
    wrong = str(int(row["rating"]) + 1)
    (f,) = grounder.ground(table_record(sha, f"civic_id={row['civic_id']}",
                                        f"genesymbol={row['genesymbol']}; rating={wrong}")).findings
    assert f.rule_id == "BEV017" and f"rating={row['rating']}" in f.message and f"rating={wrong}" in f.message
    assert f.fix is not None and f.fix.value == f"genesymbol={row['genesymbol']}; rating={row['rating']}"


def test_several_matching_rows_cannot_be_confirmed(civic: tuple) -> None:
    grounder, sha, rows = civic
    duplicated = next(r["civic_id"] for r in rows if sum(1 for x in rows if x["civic_id"] == r["civic_id"]) > 1)
    (f,) = grounder.ground(table_record(sha, f"civic_id={duplicated}", None)).findings
    assert f.rule_id == "BEV015" and "2 rows" in f.message
    alk = sum(1 for r in rows if r["genesymbol"] == "ALK" and r["variant_name"] == "R1275Q")
    (g,) = grounder.ground(table_record(sha, "genesymbol=ALK;variant_name=R1275Q", None)).findings
    assert g.rule_id == "BEV015" and f"{alk} rows" in g.message and alk > 1


def test_no_such_row_is_bev016_naming_the_closest_values(civic: tuple) -> None:
    grounder, sha, rows = civic
    variants = {r["variant_name"] for r in rows if r["genesymbol"] == "ALK"}
    assert "R1275Q" in variants and "R1275X" not in variants
    (f,) = grounder.ground(table_record(sha, "genesymbol=ALK;variant_name=R1275X", None)).findings
    assert f.rule_id == "BEV016" and "closest variant_name values for genesymbol=ALK" in f.message
    assert "R1275Q" in f.message and f.fix is not None and f.fix.value == "genesymbol=ALK; variant_name=R1275Q"


def test_unknown_columns_and_malformed_locators_are_bev024(civic: tuple) -> None:
    grounder, sha, rows = civic
    row = rows[0]
    (f,) = grounder.ground(table_record(sha, f"civicid={row['civic_id']}", None)).findings
    assert f.rule_id == "BEV024" and "did you mean 'civic_id'" in f.message
    assert f.fix is not None and f.fix.value == f"civic_id={row['civic_id']}"
    assert codes(grounder, table_record(sha, f"civic_id={row['civic_id']}", "score=3")) == ["BEV024"]
    assert codes(grounder, table_record(sha, "row 12", None)) == ["BEV024"]
    assert codes(grounder, table_record(sha, f"civic_id={row['civic_id']}", "ALK is rated three")) == ["BEV024"]


def test_only_the_configured_evidence_types_are_checked(civic: tuple) -> None:
    grounder, sha, _ = civic
    result = grounder.ground(table_record(sha, "row 12", None, evidence_type="publication_result"))
    assert result.findings == [] and result.verified == frozenset()


def test_missing_or_tampered_table_bytes(civic: tuple, tmp_path: Path) -> None:
    grounder, _sha, _ = civic
    (f,) = grounder.ground(table_record("0" * 64, "civic_id=CIVIC_1", None)).findings
    assert f.rule_id == "BEV015"
    store = SnapshotStore(tmp_path)
    good = store.put(b"gene\tlogfc\nCD8A\t2.4\n", "tsv", compress=False)
    (tmp_path / f"{good}.tsv").write_bytes(b"gene\tlogfc\nCD8A\t9.4\n")
    (g,) = TableGrounder(SnapshotStore(tmp_path), ["table_row"]).ground(
        table_record(good, "gene=CD8A", "logfc=2.4")).findings
    assert g.rule_id == "BEV014"


MARKERS = (b"cluster,gene,avg_log2FC,pct.1,p_val_adj\n"
           b"3,CD8A,2.43,0.91,1.5e-05\n3,CD3E,1.96,0.88,3e-4\n4,CD19,3.1,0.7,0\n")


@pytest.mark.parametrize("claim,ok", [
    ("avg_log2FC=2.4", True), ("avg_log2FC=2.43", True), ("avg_log2FC=2", True), ("avg_log2FC=2.5", False),
    ("avg_log2FC=2.430", True), ("avg_log2FC=2.44", False), ("pct.1=0.9", True), ("pct.1=0.92", False),
    ("p_val_adj=1.5e-5", True), ("p_val_adj=1.6e-5", False), ("p_val_adj=0.000015", True),
], ids=lambda v: str(v))
def test_numbers_match_at_the_precision_written(tmp_path: Path, claim: str, ok: bool) -> None:
    store = SnapshotStore(tmp_path)
    sha = store.put(MARKERS, "csv")
    result = TableGrounder(store, ["marker_gene"]).ground(
        table_record(sha, "cluster=3;gene=CD8A", claim, evidence_type="marker_gene"))
    assert (result.verified == {"ev"}) is ok
    assert ok or [f.rule_id for f in result.findings] == ["BEV017"]


def test_same_value_rule() -> None:
    assert same_value("2.4", "2.35") and same_value("2.4", "2.449") and not same_value("2.4", "2.46")
    assert same_value("CD8A", " cd8a ") and not same_value("CD8A", "CD8B")
    assert same_value("NaN", "nan") and not same_value("1", "one")


def test_tsv_and_csv_are_sniffed_from_the_header() -> None:
    assert parse_table(b"a\tb\n1\t2,3\n").rows == ({"a": "1", "b": "2,3"},)
    assert parse_table(b"a,b\n1,\"2\t3\"\n").rows == ({"a": "1", "b": "2\t3"},)
    with pytest.raises(ValueError, match="distinct column names"):
        parse_table(b"a,a\n1,2\n")


def test_the_row_index_finds_exactly_what_a_scan_finds_on_every_real_key(civic: tuple) -> None:
    """Every row of the real CIViC table, keyed by one, two and three of its columns (text and numbers),
    and each key altered (a digit, a letter, the case): the indexed lookup returns the rows a plain scan
    with same_value returns, in the same order."""
    import random

    grounder, sha, rows = civic
    table = grounder.table(sha)
    rng = random.Random(5)
    columns = list(table.columns)
    checked = 0
    for row in rows[::3]:
        for width in (1, 2, 3):
            chosen = rng.sample(columns, width)
            key = {c: row[c] for c in chosen}
            altered = {**key, chosen[-1]: (key[chosen[-1]] + "1") if rng.random() < 0.5 else key[chosen[-1]].upper()}
            for k in (key, altered):
                scan = [r for r in table.rows if all(same_value(v, r[c]) for c, v in k.items())]
                assert grounder.matches(sha, table, k) == scan, k
                checked += 1
    assert checked > 2000
