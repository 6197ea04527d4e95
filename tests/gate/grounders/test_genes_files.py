"""Reading HGNC files as users get them: cut short, re-saved, the wrong file, unreadable (issue 30,
the survivors of the identifiers group's mutation run).

Every file here is the real HGNC complete set (2026-09-30) or the real 2024 custom download, whole
or a run of their rows, with one fault derived from it: a row cut at every field boundary, lines
that are no entry, every field quoted (as R's ``write.table`` saves a table), no layout at all. The
expected entries are read from the same rows in the test with the csv module, never from the
grounder.
"""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import pytest

from bioevidence.errors import ConfigurationError, LimitError
from bioevidence.gate.grounders.genes import GeneGrounder, build_index, load_genes

COMPLETE = "hgnc_complete_set_2026-09-30.tsv.gz"
CUSTOM = "hgnc_entries.tsv.gz"
#: the columns the grounder reads, per layout, and the separator of their lists
LAYOUTS = {
    "official": (("hgnc_id", "symbol", "name", "status", "alias_symbol", "prev_symbol"), "|"),
    "custom": (("HGNC ID", "Approved symbol", "Approved name", "Status", "Alias symbols", "Previous symbols"), ","),
}
REFUSED = ("the genes file is neither the HGNC complete set (hgnc_id, symbol, status, alias_symbol, prev_symbol) "
           "nor an HGNC custom download (HGNC ID, Approved symbol, Status, ...); download hgnc_complete_set.txt "
           "from genenames.org")


def _lines(path: Path, n: int) -> list[str]:
    """The header and the first ``n`` rows of a real HGNC file, as lines without their line ends."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [next(fh).rstrip("\n") for _ in range(n + 1)]


def _entries(lines: list[str], layout: str) -> dict[str, tuple[str, ...]]:
    """id → (symbol, name, status, aliases, previous symbols) of the rows that carry every column read."""
    columns, sep = LAYOUTS[layout]
    rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    index = [rows[0].index(c) for c in columns]
    out = {}
    for row in rows[1:]:
        if len(row) > max(index) and row[index[0]].startswith("HGNC:"):
            fields = [row[i].strip().strip('"') for i in index]
            lists = tuple(tuple(x.strip() for x in f.split(sep) if x.strip()) for f in fields[4:])
            out[fields[0]] = (*fields[1:4], *lists)
    return out


def _indexed(lines: list[str]) -> dict[str, tuple[str, ...]]:
    ids = build_index(("\n".join(lines) + "\n").encode())["ids"]
    return {k: (v[0], v[1], v[2], tuple(v[4]), tuple(v[5])) for k, v in ids.items()}


@pytest.fixture(scope="module", params=["official", "custom"])
def sample(request: pytest.FixtureRequest, shared_data: Path) -> tuple[str, list[str]]:
    path = shared_data / ("references" if request.param == "official" else "hgnc") / (
        COMPLETE if request.param == "official" else CUSTOM)
    return request.param, _lines(path, 60)


def test_a_row_cut_at_any_field_is_skipped_until_it_holds_every_column_read_and_later_rows_are_kept(
        sample: tuple[str, list[str]]) -> None:
    """A download cut off mid-row, or a row an editor shortened: at each field boundary of row 30 (no
    field at all: a blank line), the row is read only once it holds the last column the grounder reads;
    the rows after it are read either way."""
    layout, lines = sample
    header = lines[0].split("\t")
    last = max(header.index(c) for c in LAYOUTS[layout][0])
    fields = lines[30].split("\t")
    cut_id = fields[header.index(LAYOUTS[layout][0][0])]
    whole = _entries(lines, layout)
    assert len(whole) == 60 and cut_id in whole
    for keep in range(last + 3):
        cut = [*lines[:30], "\t".join(fields[:keep]), *lines[31:]]
        expected = {k: v for k, v in whole.items() if k != cut_id or keep > last}
        if keep > last:  # a row cut after the columns read keeps what they held
            expected[cut_id] = _entries([lines[0], cut[30]], layout)[cut_id]
        assert _indexed(cut) == expected, (layout, keep)


def test_lines_that_are_no_entry_are_skipped_and_the_rows_after_them_read(sample: tuple[str, list[str]]) -> None:
    """Two downloads concatenated (the header again, mid-file) and a comment line: no entry, and no end."""
    layout, lines = sample
    mixed = [*lines[:20], lines[0], "# exported from genenames.org" + "\t" * 12, *lines[20:]]
    assert _indexed(mixed) == _entries(lines, layout)
    assert len(_indexed(mixed)) == 60


def test_a_file_with_every_field_quoted_reads_as_the_plain_one(sample: tuple[str, list[str]]) -> None:
    """R's ``write.table`` quotes every field; the ids, symbols, names and lists read the same."""
    layout, lines = sample
    quoted = ["\t".join(f if f.startswith('"') else f'"{f}"' for f in line.split("\t")) for line in lines]
    assert quoted[1].startswith('"HGNC:')
    assert _indexed([lines[0], *quoted[1:]]) == _entries(lines, layout)


def test_the_custom_download_alone_splits_its_comma_separated_lists(shared_data: Path, tmp_path: Path) -> None:
    """Every approved entry of the 2024 custom download: each alias and previous symbol (comma-separated
    there, ``|`` in the complete set) names its gene."""
    path = shared_data / "hgnc" / CUSTOM
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        entries = _entries(fh.read().splitlines(), "custom")
    genes = load_genes([path], cache_root=tmp_path)
    checked = 0
    for hgnc_id, (symbol, _name, status, aliases, previous) in entries.items():
        if status != "Approved":
            continue
        assert genes.approved[symbol] == hgnc_id
        for table, symbols in ((genes.alias, aliases), (genes.previous, previous)):
            for other in symbols:
                assert hgnc_id in table[other], (other, hgnc_id)
                checked += 1
    assert checked > 40_000  # lists of two or more are the common case
    assert sum("," in a for a in genes.alias) == 0


@pytest.mark.parametrize("kind", ["empty", "cell ontology", "comma-separated", "header only, other names"])
def test_a_file_in_neither_hgnc_layout_is_refused_naming_both_layouts(kind: str, shared_data: Path,
                                                                      tmp_path: Path) -> None:
    sample = (shared_data / "hgnc" / "hgnc_entries.sample.tsv").read_text(encoding="utf-8")
    data = {"empty": b"",
            "cell ontology": (shared_data / "references" / "cl_2026-06-08.obo.gz").read_bytes(),
            "comma-separated": sample.replace("\t", ",").encode(),
            "header only, other names": b"id\tsymbol\tstatus\n"}[kind]
    path = tmp_path / "genes.tsv"
    path.write_bytes(data)
    with pytest.raises(ConfigurationError) as raised:
        load_genes([path], cache_root=tmp_path / "cache")
    assert raised.value.message == REFUSED


def test_a_genes_file_that_cannot_be_read_is_named_with_the_fix(tmp_path: Path, shared_data: Path) -> None:
    with pytest.raises(ConfigurationError) as empty:
        load_genes([], cache_root=tmp_path / "cache")  # an empty index would call every gene unknown
    assert empty.value.message == "the gene grounder needs at least one HGNC file (--genes FILE)"
    missing = tmp_path / "hgnc_complete_set.txt"
    with pytest.raises(ConfigurationError) as raised:
        load_genes([missing], cache_root=tmp_path / "cache")
    assert raised.value.message == f"cannot read genes file {missing}: No such file or directory; check --genes"
    assert raised.value.context == {"path": str(missing)}

    real = (shared_data / "references" / COMPLETE).read_bytes()
    broken = tmp_path / "hgnc_complete_set_2026-09-30.tsv.gz"
    broken.write_bytes(real[:len(real) // 2])  # a download cut in half: gzip says so
    with pytest.raises(ConfigurationError) as raised:
        load_genes([broken], cache_root=tmp_path / "cache")
    assert raised.value.message == f"{broken} is not valid gzip"
    assert raised.value.context == {"path": str(broken)}


def test_a_gzip_that_inflates_past_the_limit_is_refused_naming_the_file(tmp_path: Path, shared_data: Path) -> None:
    path = shared_data / "references" / COMPLETE
    with pytest.raises(LimitError) as raised:
        load_genes([path], cache_root=tmp_path, max_inflated=1_000_000)
    assert raised.value.message.startswith(f"{path} inflates to more than ")
    assert raised.value.context["file"] == str(path)
    assert load_genes([path], cache_root=tmp_path / "other", max_inflated=100_000_000).approved["BRAF"] == "HGNC:1097"


def test_the_release_is_the_date_in_the_first_file_name_else_the_name(tmp_path: Path, shared_data: Path) -> None:
    lines = "\n".join(_lines(shared_data / "hgnc" / CUSTOM, 5)) + "\n"
    dated, plain = tmp_path / "hgnc_2024-01-15_custom.tsv", tmp_path / "my_genes.tsv"
    dated.write_text(lines, encoding="utf-8")
    plain.write_text(lines, encoding="utf-8")
    assert load_genes([dated, plain], cache_root=tmp_path).release == "HGNC@2024-01-15"
    assert load_genes([plain, dated], cache_root=tmp_path).release == "HGNC@my_genes.tsv"
    assert load_genes([plain], version="2024-06", cache_root=tmp_path).release == "HGNC@2024-06"


def test_the_index_is_cached_under_the_folder_given(tmp_path: Path, shared_data: Path) -> None:
    path = tmp_path / "genes.tsv"
    path.write_text("\n".join(_lines(shared_data / "hgnc" / CUSTOM, 5)) + "\n", encoding="utf-8")
    load_genes([path], cache_root=tmp_path / "cache")
    assert len(list((tmp_path / "cache").rglob("*.marshal"))) == 1


def test_an_hgnc_id_with_a_trailing_part_is_no_id_of_the_release(hgnc) -> None:  # type: ignore[no-untyped-def]
    """``HGNC:1097:V600E`` on a variant is not BRAF's id: blocked, named as written (never read as HGNC:1097)."""
    grounder = GeneGrounder(hgnc)
    checked = 0
    for hgnc_id in sorted(hgnc.approved.values())[::450]:
        written = f"{hgnc_id}:V600E"
        found = grounder.check_entity({"id": written, "label": hgnc.symbol_of(hgnc_id), "entity_type": "variant"},
                                      "$.statement.subject", ["research_summary"])
        assert [f.rule_id for f in found] == ["BEV016"], written
        assert found[0].message.startswith(f"{written} does not exist in HGNC@2026-09-30")
        checked += 1
    assert checked > 80
