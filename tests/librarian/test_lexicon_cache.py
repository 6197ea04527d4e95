"""The planner's lexicon reads its releases once: what it takes from the HGNC complete set and the
Cell Ontology is cached by each file's SHA-256, and a lexicon from the cache is the lexicon built
from the files (``ask``'s cold start: 2.1 s → 0.9 s, README's install table)."""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path
from typing import Any

import pytest

from bioevidence.errors import ConfigurationError
from bioevidence.librarian.alias_gate import name_keys
from bioevidence.librarian.lexicon import CL_FILE, HGNC_FILE, Lexicon


def _content(lex: Lexicon) -> dict[str, Any]:
    """Everything the planner reads from a lexicon, in order (dict order included)."""
    return {
        "genes": [(k, v) for k, v in lex.genes.items()],
        "approved": sorted(lex.approved),
        "shared": list(lex.shared.items()),
        "names": {e.id: lex.name_words(e.id) for ents in lex.shared.values() for e in ents},
        "cells": list(lex.cells.items()),
        "max_cell_words": lex.max_cell_words,
        "abbreviations": sorted(lex.cell_abbreviations),
        "releases": lex.releases,
    }


def test_a_lexicon_from_the_cache_is_the_lexicon_from_the_files(shared_data: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    refs = shared_data / "references"
    monkeypatch.setenv("BIOEVIDENCE_CACHE", "off")
    direct = _content(Lexicon.load(refs / HGNC_FILE, refs / CL_FILE))
    monkeypatch.setenv("BIOEVIDENCE_CACHE", str(tmp_path / "cache"))
    first = _content(Lexicon.load(refs / HGNC_FILE, refs / CL_FILE))  # reads the files, writes the cache
    written = sorted(p.relative_to(tmp_path / "cache").parts[0] for p in (tmp_path / "cache").rglob("*.marshal"))
    assert written == ["lexicon-cl", "lexicon-hgnc"]
    second = _content(Lexicon.load(refs / HGNC_FILE, refs / CL_FILE))  # from the cache only
    assert first == direct and second == direct
    # the content is the release's, not an empty or partial read
    assert len(direct["approved"]) > 40_000 and len(direct["cells"]) > 2_000 and len(direct["shared"]) > 100
    genes = dict(direct["genes"])
    assert genes["ERBB2"].id == "HGNC:3430" and genes["HER2"].id == "HGNC:3430"
    assert {r["sha256"] for r in direct["releases"]} == {
        p.stem.split(".")[0] for p in (tmp_path / "cache").rglob("*.marshal")}


def test_name_words_are_the_names_hgnc_lists(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Worked out when asked for, from the row's name, alias_name and prev_name as the file has them."""
    monkeypatch.setenv("BIOEVIDENCE_CACHE", "off")
    path = shared_data / "references" / HGNC_FILE
    lex = Lexicon.load(path, None)
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = {r["hgnc_id"]: r for r in csv.DictReader(fh, delimiter="\t") if r["status"] == "Approved"}
    asked = {e.id for ents in lex.shared.values() for e in ents}
    assert len(asked) > 100
    for hgnc_id in asked:
        row = rows[hgnc_id]
        assert lex.name_words(hgnc_id) == name_keys(row["name"], row["alias_name"], row["prev_name"])
    assert lex.name_words("HGNC:0") == ()


def _hgnc(rows: list[tuple[str, str, str, str]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(["hgnc_id", "symbol", "name", "locus_group", "status", "alias_symbol", "prev_symbol",
                     "alias_name", "prev_name"])
    for hgnc_id, symbol, alias, status in rows:
        writer.writerow([hgnc_id, symbol, f"{symbol} protein", "protein-coding gene", status, alias, "", "", ""])
    return gzip.compress(out.getvalue().encode())


def test_a_changed_release_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache is keyed by the file's bytes: the same name with other content is never served stale."""
    monkeypatch.setenv("BIOEVIDENCE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / HGNC_FILE
    path.write_bytes(_hgnc([("HGNC:1", "ABC1", "XYZ9", "Approved"), ("HGNC:2", "OLD1", "", "Entry Withdrawn")]))
    before = Lexicon.load(path, None)
    assert set(before.genes) == {"ABC1", "XYZ9"}
    path.write_bytes(_hgnc([("HGNC:1", "ABC1", "", "Approved"), ("HGNC:3", "DEF2", "XYZ9", "Approved")]))
    after = Lexicon.load(path, None)
    assert after.genes["XYZ9"].id == "HGNC:3" and "DEF2" in after.approved
    assert len(list((tmp_path / "cache" / "lexicon-hgnc").iterdir())) == 2


def test_a_release_without_a_column_the_lexicon_reads_is_refused(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIOEVIDENCE_CACHE", "off")
    path = tmp_path / "hgnc_complete_set_2026-01-01.tsv"
    path.write_text("hgnc_id\tsymbol\tstatus\nHGNC:1\tABC1\tApproved\n")
    with pytest.raises(ConfigurationError, match="no column name, prev_symbol, alias_symbol"):
        Lexicon.load(path, None)
