"""Issue 25, cause 4: paths and fields from a bibliography never reach outside its folder.

* ``file`` fields (``../``, absolute paths, Zotero's ``desc:path:mime``, a symlink placed in the
  ``.bib`` folder) named files outside the folder and ``kb build`` pinned them where ``kb ask`` prints
  them: now only files inside the folder (or an explicit ``--files-root``) are read;
* ``kg2bib`` wrote a DBLP IRI into ``url`` unescaped, so a hostile endpoint planted an entry with
  ``file =`` that ``kb build`` then followed: every field written is escaped, so a written ``.bib``
  reads back as the same entries, whatever the service answered;
* ``kb merge`` followed a symlinked vector cache.
Real files: a real eLife JATS article is the paper; the "secret" is any file outside the folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.sources.bibtex import BibEntry, read_bibliography, to_bibtex
from bioevidence.sources.identifiers import parse_identifier
from loopback import LoopbackServer, Reply

pytest.importorskip("bibtexparser", reason="the kb extra: pip install 'bioevidence[kb]'")
pytestmark = pytest.mark.heavy(seconds=40)


def _store_hashes(kb: Path) -> set[str]:
    return {p.name[:64] for p in (kb / "snapshots").iterdir() if len(p.name) > 64}


@pytest.fixture
def layout(tmp_path: Path, shared_data: Path) -> dict[str, Path]:
    article = next(iter(sorted((shared_data / "jats" / "elife").glob("*.xml"))))
    bibdir, outside = tmp_path / "bib", tmp_path / "outside"
    bibdir.mkdir()
    outside.mkdir()
    shutil.copy(article, bibdir / "paper.xml")
    shutil.copy(article, outside / "secret.xml")  # a real article, so only the path decides its fate
    (outside / "secret.xml").write_bytes((outside / "secret.xml").read_bytes() + b"<!-- secret -->")
    os.symlink(outside / "secret.xml", bibdir / "link.xml")
    return {"bib": bibdir, "outside": outside, "secret": outside / "secret.xml"}


ROUTES = {  # how each form of the `file` field names the outside file
    "relative": "../outside/secret.xml",
    "absolute": "{secret}",
    "zotero": "Full Text:{secret}:text/xml",
    "jabref": ":{secret}:XML",
    "symlink": "link.xml",
}


def _bib(layout: dict[str, Path], files: dict[str, str]) -> Path:
    text = "".join(f"@article{{{key},\n  title = {{Entry {key}}},\n  year = {{2020}},\n  file = {{{value}}}\n}}\n\n"
                   for key, value in files.items())
    path = layout["bib"] / "refs.bib"
    path.write_text(text.replace("{secret}", str(layout["secret"])), encoding="utf-8")
    return path


def test_every_form_of_a_file_outside_the_folder_is_refused_and_never_pinned(layout: dict[str, Path],
                                                                              tmp_path: Path) -> None:
    bib = _bib(layout, {**ROUTES, "inside": "paper.xml"})
    result = CliRunner().invoke(cli, ["kb", "build", str(bib), "--kb", str(tmp_path / "kb"), "--offline"])
    assert result.exit_code == 0, result.output
    secret = hashlib.sha256(layout["secret"].read_bytes()).hexdigest()
    assert secret not in _store_hashes(tmp_path / "kb")
    records = {json.loads(line)["key"]: json.loads(line) for line in
               (tmp_path / "kb" / "entries.jsonl").read_text().splitlines() if line.strip()}
    assert records["inside"]["tier"] == "fulltext"
    for key in ROUTES:
        assert records[key]["tier"] != "fulltext", key
        reasons = " ".join(a.get("reason", "") for a in records[key].get("attempts", []))
        assert "outside the bibliography's folder" in reasons, (key, reasons)


def test_files_root_is_the_explicit_switch_for_a_zotero_storage_folder(layout: dict[str, Path],
                                                                       tmp_path: Path) -> None:
    bib = _bib(layout, {"zotero": ROUTES["zotero"]})
    result = CliRunner().invoke(cli, ["kb", "build", str(bib), "--kb", str(tmp_path / "kb"), "--offline",
                                      "--files-root", str(layout["outside"])])
    assert result.exit_code == 0, result.output
    assert hashlib.sha256(layout["secret"].read_bytes()).hexdigest() in _store_hashes(tmp_path / "kb")


HOSTILE = ["}, file = {/etc/passwd}, x = {", "a}\n}\n@misc{planted, file = {/etc/passwd}}\n@misc{y,\n note = {",
           "{unbalanced", "back\\slash}", "\x1b]0;title\x07", "x} # {y"]


@pytest.mark.parametrize("payload", HOSTILE, ids=range(len(HOSTILE)))
def test_a_written_bib_reads_back_as_the_same_entries_whatever_a_field_holds(payload: str, tmp_path: Path) -> None:
    doi = parse_identifier("doi:10.1093/bioinformatics/btz682")
    assert doi is not None
    entries = [BibEntry(key=f"k{n}", title=payload if n == 0 else "t", authors=(payload,) if n == 1 else ("A B",),
                        journal=payload if n == 2 else "J", year=2020, ids=(doi,),
                        url=f"https://dblp.org/rec/{payload}" if n == 3 else "https://dblp.org/rec/x",
                        abstract=payload if n == 4 else "", extra={"note": payload} if n == 5 else {})
               for n in range(6)]
    (tmp_path / "out.bib").write_text(to_bibtex(entries), encoding="utf-8")
    back = read_bibliography(tmp_path / "out.bib")
    assert [e.key for e in back.entries] == [e.key for e in entries] and not back.failed
    assert all(e.files == () for e in back.entries)
    assert all(e.url.startswith("https://dblp.org/rec/") and "}" not in e.url for e in back.entries)


def test_kg2bib_escapes_a_hostile_endpoints_iri(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    iri = "https://dblp.org/rec/x}, file = {/etc/passwd}, y = {"
    first = {"head": {"vars": ["publ", "title", "year", "score", "cites"]}, "results": {"bindings": [
        {"publ": {"type": "uri", "value": iri}, "title": {"type": "literal", "value": "Biomedical language model"},
         "year": {"type": "literal", "value": "2020"}, "score": {"type": "literal", "value": "2"},
         "cites": {"type": "literal", "value": "0"}}]}}
    second = {"head": {"vars": ["publ"]}, "results": {"bindings": []}}

    def sparql(query: dict[str, str]) -> Reply:
        body = second if "VALUES" in query.get("query", "") else first
        return Reply(200, json.dumps(body).encode(), "application/sparql-results+json")

    with LoopbackServer() as server:
        server.route("/sparql", sparql)
        monkeypatch.setenv("BIOEVIDENCE_DBLP_SPARQL_URL", server.url)
        result = CliRunner().invoke(cli, ["kg2bib", "biomedical language model", "--source", "dblp", "-o",
                                          str(tmp_path / "out.bib")])
    assert result.exit_code == 0, result.output
    back = read_bibliography(tmp_path / "out.bib")
    assert len(back.entries) == 1 and back.entries[0].files == () and not back.failed


def test_kb_merge_does_not_follow_a_symlinked_vector_cache(layout: dict[str, Path], tmp_path: Path) -> None:
    bib = _bib(layout, {"inside": "paper.xml"})
    assert CliRunner().invoke(cli, ["kb", "build", str(bib), "--kb", str(tmp_path / "a"), "--offline"]).exit_code == 0
    cache = tmp_path / "a" / "vector-cache"
    shutil.rmtree(cache, ignore_errors=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "stolen.npy").write_bytes(b"not yours")
    os.symlink(elsewhere, cache)
    result = CliRunner().invoke(cli, ["kb", "merge", str(tmp_path / "a"), "--kb", str(tmp_path / "m")])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "m" / "vector-cache" / "stolen.npy").exists()
