"""The JATS parser on real PMC / PLOS / Europe PMC articles (../shared/data/jats), checked against
plain lxml reads of the same files, and its safety and error paths on small invented inputs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lxml import etree

from bioevidence.errors import InputError
from bioevidence.text.jats import parse_jats
from bioevidence.text.normalize import CITATION, normalize

PLOS = "plos/journal.pmed.0020171.xml"
EPMC = "europepmc_fulltext/PMC7969919.xml"


def tree(path: Path) -> etree._Element:
    return etree.fromstring(path.read_bytes(), etree.XMLParser(resolve_entities=False, no_network=True,
                                                               load_dtd=False))


def test_bracketed_xref_markers_stay_readable_but_are_dropped_for_matching(shared_data: Path) -> None:
    path = shared_data / "jats" / PLOS
    article = parse_jats(path.read_bytes())
    # lxml: the body paragraph holding the marked-up sentence
    para = next(p for p in tree(path).iter("p") if "general population [" in "".join(p.itertext()))
    plain = " ".join("".join(para.itertext()).split())
    passage = next(p for p in article.passages if p.kind == "paragraph" and "studies of the general population"
                   in p.match)
    assert "general population [1\u20135]" in plain and "general population [1\u20135]" in passage.text
    assert "several studies of the general population as well" in passage.match and CITATION not in passage.match
    assert {"1", "5"} <= article.markers


def test_superscript_xref_markers_are_recorded_and_dropped(shared_data: Path) -> None:
    path = shared_data / "jats" / EPMC
    article = parse_jats(path.read_bytes())
    root = tree(path)
    sup = next(s for s in root.iter("sup") if len(s) and s[0].tag == "xref" and s[0].get("ref-type") == "bibr")
    label = "".join(sup.itertext())
    assert label in article.markers
    before = (sup.getprevious().tail if sup.getprevious() is not None else sup.getparent().text) or ""
    words = " ".join(before.split()[-4:])
    passage = next(p for p in article.passages if normalize(words) in p.match)
    after = " ".join((sup.tail or "").split()[:3])
    assert normalize(f"{words}{after}") in passage.match or normalize(f"{words} {after}") in passage.match


def test_paragraph_ids_are_kept_and_others_numbered(shared_data: Path) -> None:
    path = shared_data / "jats" / EPMC
    article = parse_jats(path.read_bytes())
    ids_in_file = [p.get("id") for body in tree(path).iter("body") for p in body.iter("p") if p.get("id")]
    ours = {p.id for p in article.passages if p.kind == "paragraph"}
    assert ids_in_file and set(ids_in_file) <= ours
    par1 = article.by_id("Par1")
    assert par1 is not None and par1.text.startswith("We assessed the generalizability of deep learning models")
    assert all(re.fullmatch(r"n\d+", p.id) for p in article.passages if p.kind == "title")


def test_tables_captions_and_section_titles_are_passages(shared_data: Path) -> None:
    path = shared_data / "jats" / PLOS
    article = parse_jats(path.read_bytes())
    root = tree(path)
    kinds = [p.kind for p in article.passages]
    assert kinds.count("table-caption") == len(list(root.iter("table-wrap"))) == 6
    assert kinds.count("table") == 0  # this paper's tables are images: captions only
    assert kinds.count("figure-caption") == sum(1 for f in root.iter("fig") if f.find("caption") is not None)
    assert all(p.part == "caption" for p in article.passages if p.kind.endswith("-caption"))
    labels = {" ".join("".join(w.find("label").itertext()).split()) for w in root.iter("table-wrap")}
    assert labels == {p.label for p in article.passages if p.kind == "table-caption"}
    titles = {" ".join("".join(t.itertext()).split()) for sec in root.iter("sec") for t in sec.findall("title")}
    assert titles <= {p.text for p in article.passages if p.kind == "section-title"}
    article_title = " ".join("".join(root.find(".//article-title").itertext()).split())
    assert article.title == article_title


def test_each_table_cell_is_one_line_of_its_table_passage(shared_data: Path) -> None:
    path = shared_data / "jats" / "pmc_oa" / "pone.0046493.nxml"
    article = parse_jats(path.read_bytes())
    wraps = list(tree(path).iter("table-wrap"))
    tables = [p for p in article.passages if p.kind == "table"]
    assert len(tables) == len(wraps) == 3
    for wrap, passage in zip(wraps, tables, strict=True):
        assert passage.id == f"{wrap.get('id')}-cells" and wrap.get("id") in passage.aliases
        assert article.by_id(wrap.get("id")).kind == "table-caption"  # the table's own id names its caption
        lines = passage.match.split("\n")
        cells = [normalize("".join(c.itertext())) for c in wrap.iter("td", "th")]
        assert cells and all(c in lines for c in cells if c)  # a quote never spans two cells
        assert len(passage.breaks) >= len([c for c in cells if c]) - 1


def test_back_matter_is_flagged_and_references_are_passages_with_their_cited_titles(shared_data: Path) -> None:
    path = shared_data / "jats" / PLOS
    article = parse_jats(path.read_bytes())
    root = tree(path)
    ack_text = normalize("".join(next(root.iter("ack")).itertext()))
    ack = [p for p in article.passages if p.section_type == "acknowledgements"]
    assert ack and any(p.match in ack_text for p in ack) and all(p.part == "back-matter" for p in ack)
    assert not set(article.passages_for()) & set(ack)
    refs = list(root.iter("ref"))
    references = [p for p in article.passages if p.part == "references"]
    assert len(references) == len(refs) and not set(article.passages_for()) & set(references)
    ref_title = next(" ".join("".join(r.itertext()).split()) for ref in refs for r in ref.iter("article-title"))
    first = next(p for p in references if ref_title in p.text)
    assert first.cited is not None and first.text[first.cited[0]:first.cited[1]] == ref_title
    abstract = [p for p in article.passages if p.section_type == "abstract"]
    assert abstract and all(p.part == "abstract" and p.kind in ("abstract", "section-title") for p in abstract)


def test_entities_are_never_resolved() -> None:
    data = (b'<?xml version="1.0"?><!DOCTYPE article [<!ENTITY xxe SYSTEM "file:///etc/hostname">]>'
            b"<article><body><p>Before &xxe; after the entity.</p></body></article>")
    article = parse_jats(data)
    (passage,) = article.passages
    assert passage.text.startswith("Before") and passage.text.endswith("after the entity.")
    assert Path("/etc/hostname").read_text().strip() not in passage.text


def test_malformed_or_foreign_xml_is_an_input_error_naming_the_source() -> None:
    with pytest.raises(InputError, match="not well-formed") as bad:
        parse_jats(b"<article><body><p>unclosed</body></article>", source="abc")
    assert "abc" in str(bad.value) or bad.value.context.get("file") == "abc"
    with pytest.raises(InputError, match="no <article>"):
        parse_jats(b"<html><body><p>not JATS</p></body></html>")
