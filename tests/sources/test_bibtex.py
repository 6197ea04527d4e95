"""Bibliographies in (BibTeX via bibtexparser, lists of identifiers) and BibTeX out, read back."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bioevidence.errors import InputError
from bioevidence.sources.bibtex import BibEntry, parse_file_field, read_bibliography, snapshot_entries, to_bibtex
from bioevidence.sources.identifiers import parse_identifier

BIB = r"""
@article{pao2005,
  title = {{KRAS} mutations and primary resistance of lung adenocarcinomas to gefitinib or erlotinib},
  author = {Pao, William and Wang, Theresa Y.},
  journal = {PLoS Medicine}, year = {2005}, doi = {https://doi.org/10.1371/journal.pmed.0020017},
  file = {Full Text:papers/pao.nxml:text/xml;Snapshot:papers/pao.pdf:application/pdf},
  abstract = {Lung adenocarcinomas with KRAS mutations do not respond.}
}
@misc{byid, title = {By PubMed id}, eprint = {15696205}, eprinttype = {pubmed}}
@article{broken, title = {never closed}
"""


def test_a_bib_file_gives_identifiers_files_and_reports_unparsable_blocks(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(BIB)
    bib = read_bibliography(path)
    pao, byid = bib.entries
    assert pao.ids == (parse_identifier("doi:10.1371/journal.pmed.0020017"),)
    assert pao.title.startswith("KRAS mutations") and pao.year == 2005 and pao.authors == ("Pao, William",
                                                                                          "Wang, Theresa Y.")
    assert pao.files == (str(tmp_path / "papers/pao.nxml"), str(tmp_path / "papers/pao.pdf"))
    assert byid.ids == (parse_identifier("pmid:15696205"),)
    assert len(bib.failed) == 1 and bib.failed[0][0] >= 10  # the broken block, with its line


@pytest.mark.parametrize(("value", "expected"), [
    ("Full Text:/abs/a.pdf:application/pdf", ["/abs/a.pdf"]),
    (":rel/b.xml:XML", ["BASE/rel/b.xml"]),
    ("c.txt;d.nxml", ["BASE/c.txt", "BASE/d.nxml"]),
], ids=["zotero", "jabref", "plain-list"])
def test_file_fields_of_zotero_jabref_and_plain_paths(value: str, expected: list[str]) -> None:
    assert parse_file_field(value, Path("BASE")) == expected


def test_a_list_of_identifiers_one_a_line_with_comments(tmp_path: Path) -> None:
    path = tmp_path / "ids.txt"
    path.write_text("# my papers\n15696205\nPMC545207\ndoi:10.1371/journal.pmed.0020017  # dup-free\nnot an id\n"
                    "15696205\n")
    bib = read_bibliography(path)
    assert [e.key for e in bib.entries] == ["pmid:15696205", "pmcid:PMC545207", "doi:10.1371/journal.pmed.0020017"]
    assert bib.failed == [(5, "'not an id' is not a PMID, PMCID or DOI")]


def test_a_duplicate_key_is_reported_and_an_empty_file_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "dup.bib"
    path.write_text("@article{a, title={x}}\n@article{a, title={y}}\n")
    bib = read_bibliography(path)
    assert [e.title for e in bib.entries] == ["x"] and bib.failed == [(2, "Duplicate entry key 'a'")]
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(InputError, match="no entries"):
        read_bibliography(tmp_path / "empty.txt")


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=60).filter(
    lambda s: s.strip() != "")


@settings(max_examples=60, deadline=None)
@given(title=_text, author=_text)
def test_to_bibtex_round_trips_through_bibtexparser(tmp_path_factory: pytest.TempPathFactory, title: str,
                                                    author: str) -> None:
    entry = BibEntry(key="k1", title=title, authors=(author.replace(" and ", " "),), year=2020,
                     ids=(parse_identifier("pmid:123"),))
    path = tmp_path_factory.mktemp("rt") / "out.bib"
    path.write_text(to_bibtex([entry, entry]))
    back = read_bibliography(path)
    assert [e.key for e in back.entries] == ["k1", "k1_2"] and not back.failed
    assert back.entries[0].ids == entry.ids and back.entries[0].year == 2020
    assert back.entries[0].title != ""


def test_the_civic_snapshots_as_a_bibliography(shared_data: Path, tmp_path: Path) -> None:
    entries = snapshot_entries(shared_data / "civic_corpus" / "snapshots", full_text_only=True)
    assert len(entries) == 140 and len({e.key for e in entries}) == 140
    path = tmp_path / "civic.bib"
    path.write_text(to_bibtex(entries))
    back = read_bibliography(path)
    assert [set(e.ids) for e in back.entries] == [set(e.ids) for e in entries]
    assert back.entries[0].key == "Pao2005"
