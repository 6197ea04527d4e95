"""Every readable element of every pinned article of the shared data is in what the JATS reader
gives the gate: the text of each paragraph-like element (as printed: tags dropped, whitespace
collapsed, compared on letters and digits) is inside one passage. Read with plain lxml here, never
with bioevidence's parser.

Found missing by the reference validator's CIViC case (tools/cases/civic_literature.py): notes
beside the front matter's article-meta (Wiley and PLOS: conflicts, data availability) and
glossary definitions written as ``<def><p>…</p></def>``."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest
from lxml import etree

from bioevidence.text.jats import parse_jats

ELEMENTS = {
    "front notes": "//*[local-name()='front']/*[local-name()='notes']//*[local-name()='p']",
    "glossary definition": "//*[local-name()='def-item']/*[local-name()='def']/*[local-name()='p']",
    "author note": "//*[local-name()='author-notes']//*[local-name()='p']",
    "back notes": "//*[local-name()='back']/*[local-name()='notes']//*[local-name()='p']",
    "list item": "//*[local-name()='list-item']/*[local-name()='p']",
}

BLOCKS = ("descendant::*[local-name()='disp-formula' or local-name()='list' or local-name()='table-wrap' or "
          "local-name()='fig' or local-name()='boxed-text' or local-name()='def-list' or local-name()='disp-quote']")


def _articles(shared: Path) -> list[tuple[str, bytes]]:
    out = [(p.name, gzip.decompress(p.read_bytes())) for p in sorted((shared / "civic_corpus" / "snapshots")
                                                                     .glob("*.xml.gz"))]
    out += [(p.name, p.read_bytes()) for p in sorted((shared / "jats").rglob("*.xml"))]
    return out


def _printed(el: etree._Element) -> str:
    return " ".join("".join(el.itertext()).split())


def _letters(text: str) -> str:
    """Letters and digits only: whether the words are read, whatever the spacing of glued inline
    elements (``BZ.Data`` in plain ``itertext``) or of citation markers."""
    return "".join(c for c in text.casefold() if c.isalnum())


def test_every_note_definition_and_list_paragraph_is_read(shared_data: Path) -> None:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    seen: Counter[str] = Counter()
    missing: list[tuple[str, str, str]] = []
    for name, data in _articles(shared_data):
        root = etree.fromstring(data, parser)
        passages = [_letters(p.text) for p in parse_jats(data).passages]
        for kind, xpath in ELEMENTS.items():
            for el in root.xpath(xpath):
                text = _printed(el)
                if len(text.split()) < 3 or el.xpath("ancestor::*[local-name()='sub-article']") or el.xpath(BLOCKS):
                    continue  # a block inside breaks the paragraph into passages (tests/text/test_jats.py)
                seen[kind] += 1
                if not any(_letters(text) in p for p in passages):
                    missing.append((kind, name, text[:100]))
    print(dict(seen))
    assert min(seen[k] for k in ELEMENTS) >= 10, seen  # each kind occurs in the shared articles
    assert missing == [], f"{len(missing)} not read; first: {missing[:5]}"


@pytest.mark.parametrize("xml, expected", [
    (b"<article><front><article-meta><title-group><article-title>T</article-title></title-group></article-meta>"
     b"<notes><fn-group><fn><p>Conflict of interest statement: none declared by the authors.</p></fn></fn-group>"
     b"</notes></front><body><p>Body text here.</p></body></article>",
     "Conflict of interest statement: none declared by the authors."),
    (b"<article><body><p>Body.</p></body><back><glossary><def-list><def-item><term>AKT</term><def>"
     b"<p>v akt murine thymoma viral oncogene homolog</p></def></def-item></def-list></glossary></back></article>",
     "v akt murine thymoma viral oncogene homolog"),
])
def test_the_two_shapes_found_missing(xml: bytes, expected: str) -> None:
    assert any(expected in p.text for p in parse_jats(xml).passages)
