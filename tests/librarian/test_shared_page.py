"""The HTML a person shares says what was checked (issue 24, item 16), on the pinned CIViC corpus.

Each item names the pinned bytes it was verified against (the first 12 hex digits of their SHA-256,
read back from the snapshot catalogue, not from the page's own data) and when they were retrieved,
and links to the paper on PubMed, PMC and doi.org; the page names the tool version and the releases
the plan read (checked against the shared data's MANIFEST.tsv); the plan is in words, its query
syntax only behind a "query" disclosure; and the paper's superscripts and subscripts are shown as
such, over every pinned article (a generator: every recorded script is a real <sup>/<sub> of that
article, and every <sup>/<sub> of a body paragraph is recorded), while the text stays verbatim.
"""

from __future__ import annotations

import csv
import gzip
import html
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from lxml import etree

from bioevidence import __version__
from bioevidence.cli import cli
from bioevidence.librarian.corpus import read_jats
from bioevidence.librarian.librarian import Librarian
from bioevidence.librarian.render import render

KRAS = "Do KRAS mutations predict resistance to EGFR tyrosine kinase inhibitors in lung cancer?"
_SAFE = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def _catalogue(shared_data: Path) -> dict[str, dict[str, str]]:
    """pmid -> {sha256 of its pinned full text, retrieved_at}, from the snapshot catalogue itself."""
    works = json.loads((shared_data / "civic_corpus" / "snapshots" / "literature.json").read_text())["works"]
    out = {}
    for key, work in works.items():
        sha = work.get("fulltext_sha256") or work.get("metadata_sha256") or ""
        out[key.removeprefix("pmid:")] = {"sha256": sha, "retrieved_at": str(work.get("retrieved_at") or "")}
    return out


def _visible(page: str) -> str:
    """What a reader sees without opening a disclosure: tags and <details> blocks removed."""
    page = re.sub(r"<details>.*?</details>", "", page, flags=re.S)
    page = re.sub(r"<style>.*?</style>|<title>.*?</title>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


@pytest.fixture(scope="module")
def pages(civic_index: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("pages")
    runner = CliRunner()
    made = {}
    for command in ("ask", "answer"):
        res = runner.invoke(cli, [command, KRAS, "--index", str(civic_index), "--format", "html",
                                  "-o", str(out / f"{command}.html")])
        assert res.exit_code == 0, res.output
        made[command] = (out / f"{command}.html").read_text(encoding="utf-8")
    return made


def test_each_item_names_the_pinned_bytes_it_was_verified_against_and_links_the_paper(
        pages: dict[str, str], civic_index: Path, shared_data: Path) -> None:
    catalogue = _catalogue(shared_data)
    items = Librarian(civic_index).ask(KRAS).items()
    assert items
    for command, page in pages.items():
        blocks = re.findall(r'<li id="i(\d+)".*?</li>', page, flags=re.S)
        assert len(blocks) == len(items), command
        for it in items:
            (block,) = re.findall(rf'<li id="i{it["rank"]}" .*?</li>', page, flags=re.S)
            pinned = catalogue[it["pmid"]]
            assert pinned["sha256"].startswith(it["sha256"][:12])
            assert f"verified against pinned bytes <code>{pinned['sha256'][:12]}</code>" in block, (command, block)
            assert f"retrieved {pinned['retrieved_at'][:10]}" in block, (command, block)
            assert f'href="https://pubmed.ncbi.nlm.nih.gov/{it["pmid"]}/"' in block
            if it["pmcid"]:
                assert f'href="https://pmc.ncbi.nlm.nih.gov/articles/{it["pmcid"].upper()}/"' in block
            if it["doi"]:
                assert 'href="https://doi.org/' + it["doi"] in block


def test_the_page_names_the_tool_version_and_the_releases_it_read(pages: dict[str, str], shared_data: Path) -> None:
    with (shared_data / "references" / "MANIFEST.tsv").open(encoding="utf-8") as fh:
        manifest = {row["file"]: row["sha256"] for row in csv.DictReader(fh, delimiter="\t")}
    for page in pages.values():
        seen = _visible(page)
        assert f"bioevidence {__version__}" in seen
        assert f"HGNC complete set 2026-09-30 (sha256 {manifest['hgnc_complete_set_2026-09-30.tsv.gz'][:12]})" in seen
        assert f"Cell Ontology 2026-06-08 (sha256 {manifest['cl_2026-06-08.obo.gz'][:12]})" in seen


def test_the_plan_is_in_words_and_its_syntax_only_behind_a_disclosure(pages: dict[str, str],
                                                                     civic_index: Path) -> None:
    plan = Librarian(civic_index).ask(KRAS).plan
    for page in pages.values():
        seen = _visible(page)
        assert "in the title or abstract" in seen and "Searched 4 ways" in seen
        assert not re.search(r"\b(TITLE_ABS|TITLE|ABSTRACT):|\bOR\b|\bAND\b", seen), seen[:2000]
        for sub in plan.subqueries:  # the exact query is still there for whoever opens it
            assert f"<code>{html.escape(sub.query)}</code>" in page


def test_superscripts_are_kept_and_the_text_stays_verbatim(civic_index: Path) -> None:
    """In the KRAS answer, "p = 6.8 × 10−11" shows its exponent as a superscript (10⁻¹¹ to a reader)."""
    answer = Librarian(civic_index).ask(KRAS, top_k=25)
    result = answer.to_json()
    page = render(result, "html")
    with_scripts = [it for it in result["items"] if it["scripts"]]
    assert any("10−11" in it["text"] for it in with_scripts)
    assert "10<sup>−11</sup>" in page
    for it in with_scripts:
        (block,) = re.findall(rf'<li id="i{it["rank"]}" .*?</li>', page, flags=re.S)
        body = block.split("</code><br>", 1)[1].split("<br><span", 1)[0]
        assert html.unescape(re.sub(r"</?su[pb]>", "", body)) == it["text"]  # the quote is untouched
        for a, b, kind in it["scripts"]:
            assert f"<{kind}>{html.escape(it['text'][a:b])}</{kind}>" in body


def _script_elements(root: etree._Element) -> Iterator[tuple[etree._Element, str, str]]:
    for el in root.iter("sup", "sub"):
        text = re.sub(r"\s+", " ", "".join(el.itertext())).strip()
        refs = [c for c in el if c.tag == "xref"]
        cites = (refs and all(c.get("ref-type") == "bibr" for c in refs)) or any(
            a.tag == "xref" and a.get("ref-type") == "bibr" for a in el.iterancestors())
        if not text or cites:
            continue  # a citation in superscript, not a printed exponent
        yield el, el.tag, text


def test_every_article_s_superscripts_and_subscripts_are_recorded_and_real(shared_data: Path) -> None:
    """Over every pinned CIViC full text: soundness and completeness of the recorded scripts."""
    table = []
    folder = shared_data / "civic_corpus" / "snapshots"
    total_recorded = total_body = 0
    for path in sorted(folder.glob("*.xml.gz")):
        data = gzip.decompress(path.read_bytes())
        root = etree.fromstring(data, _SAFE)
        real = {(kind, text) for _, kind, text in _script_elements(root)}
        in_body = {(kind, text) for el, kind, text in _script_elements(root)
                   if any(a.tag == "p" for a in el.iterancestors())
                   and any(a.tag in ("body", "abstract") for a in el.iterancestors())
                   and not any(a.tag in ("table-wrap", "fig", "tex-math", "ref-list", "disp-formula",
                                         "inline-formula", "supplementary-material", "media")
                                for a in el.iterancestors())}
        doc = read_jats(data, source=path.name)
        recorded = {(kind, p.text[a:b]) for p in doc.passages for a, b, kind in p.scripts}
        fake = {r for r in recorded if (r[0], re.sub(r"\s+", " ", r[1]).strip()) not in real}
        missed = in_body - recorded
        total_recorded += len(recorded)
        total_body += len(in_body)
        table.append((path.name[:12], len(real), len(recorded), len(missed), len(fake)))
        assert not fake, (path.name, sorted(fake)[:5])
        assert not missed, (path.name, sorted(missed)[:5])
    print("\narticle       sup/sub  recorded  missed  not-real")
    for row in table:
        print(f"{row[0]}  {row[1]:7d}  {row[2]:8d}  {row[3]:6d}  {row[4]:8d}")
    assert len(table) >= 100 and total_body > 100, (len(table), total_body)
