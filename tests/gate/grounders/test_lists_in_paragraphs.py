"""A paragraph's own lists are part of its text (issue 24 item 5): a quote that runs from the
paragraph into the list it holds (the primer list of pmid:26894380, items inside one ``<p>``)
verifies, as a reader sees the paragraph and as 0.8.0's reader joins it.

Besides the issue's example, a generator over every CIViC article: for every ``<p>`` holding a
list, the paragraph's last words joined to its first item (whitespace collapsed, the way any
reader copies it) must verify, and the same quote with one word of the item changed must not.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from bioevidence.gate.grounders.literature import LiteratureGrounder
from bioevidence.sources.xmlsafe import parse_xml
from builders import claim_record

PMID = "26894380"
PRIMERS = ("Primers for quantitative RT-PCR were as follows: CIP2A-F: 5′-CGGACACTTGCTAGTATGTTG-3′ "
           "CIP2A-R: 5′-ATGTTCTTCAGCCACAGACTC-3′ Akt-F: 5′-TCGCTTCTTTGCCGGTATCG-3′")


@pytest.fixture(scope="module")
def grounder(corpus_dir: Path, cache_dir: Path) -> LiteratureGrounder:
    return LiteratureGrounder.from_directory(corpus_dir, cache_root=cache_dir)


@pytest.fixture(scope="module")
def works(corpus_dir: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for key, work in json.loads((corpus_dir / "literature.json").read_text())["works"].items():
        if not key.startswith("pmid:") or not work.get("fulltext_sha256"):
            continue
        pmid = key.split(":", 1)[1]
        summary = json.loads(gzip.decompress((corpus_dir / f"{work['metadata_sha256']}.json.gz").read_bytes()))
        out[pmid] = {"sha": work["fulltext_sha256"], "title": summary["result"][pmid]["title"]}
    return out


def _verdict(grounder: LiteratureGrounder, work: dict[str, Any], pmid: str, quote: str) -> tuple[bool, list[str]]:
    """Whether the quote was found in the paper (a retracted paper's quote is found, then refused
    for the retraction: only the quote's own findings count here), and every finding."""
    result = grounder.ground(claim_record(0, pmid, work["sha"], work["title"], quote))
    quoted = [f for f in result.findings if f.field_path.endswith(".extracted_text")]
    return not quoted, [f"{f.rule_id} {f.field_path} {f.message}" for f in result.findings]


def test_the_primer_list_of_pmid_26894380_verifies_and_a_changed_base_does_not(
        grounder: LiteratureGrounder, works: dict[str, dict[str, Any]]) -> None:
    ok, findings = _verdict(grounder, works[PMID], PMID, PRIMERS)
    assert ok and findings == [], findings
    assert grounder.ground(claim_record(0, PMID, works[PMID]["sha"], works[PMID]["title"], PRIMERS)).verified == {"e"}
    ok, findings = _verdict(grounder, works[PMID], PMID, PRIMERS.replace("CGGACACTTG", "CGGACACTTC"))
    assert not ok and any(f.startswith("BEV017") for f in findings), findings


_WORD = re.compile(r"[A-Za-z]{4,}")


def _local(el: Any) -> str:
    tag = el.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _flat(text: str) -> str:
    return " ".join(text.split())


def _cases(corpus_dir: Path, works: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """(pmid, quote) for every list inside a paragraph of the corpus: the last words of the plain
    text just before the list, then the list's first item (items holding citation markers or
    formulas are left out: how a reader copies those is tested elsewhere)."""
    out = []
    for pmid, work in sorted(works.items()):
        path = corpus_dir / f"{work['sha']}.xml.gz"
        if not path.is_file():
            continue
        root = parse_xml(gzip.decompress(path.read_bytes()))
        for p in root.iter():
            if _local(p) != "p":
                continue
            before = p.text or ""
            for child in p:
                if _local(child) == "list":
                    words = _flat(before).split()
                    item = next((c for c in child if _local(c) == "list-item"), None)
                    if len(words) >= 4 and item is not None and not any(
                            _local(e) in ("xref", "inline-formula", "disp-formula") for e in item.iter()):
                        first = _flat("".join(item.itertext()))
                        if first:
                            out.append((pmid, " ".join(words[-6:]) + " " + first))
                before = child.tail or ""
    return out


def test_every_paragraph_list_of_the_corpus_verifies_from_its_lead_text(
        grounder: LiteratureGrounder, works: dict[str, dict[str, Any]], corpus_dir: Path) -> None:
    cases = _cases(corpus_dir, works)
    rows, wrong = [], []
    for pmid, quote in cases:
        ok, findings = _verdict(grounder, works[pmid], pmid, quote)
        if not ok:
            wrong.append((pmid, quote, findings))
        words = _WORD.findall(quote.split(" ", 8)[-1])
        if words:  # the same quote with a word of the item changed is refused
            changed = quote[::-1].replace(words[-1][::-1], (words[-1] + "x")[::-1], 1)[::-1]
            ok, _ = _verdict(grounder, works[pmid], pmid, changed)
            if ok:
                wrong.append((pmid, changed, ["a changed quote was admitted"]))
        rows.append(pmid)
    print(f"\nparagraph lists: {len(cases)} in {len(set(rows))} papers, {len(wrong)} wrong")
    assert len(cases) >= 3, "the corpus has paragraphs holding lists (pmid:26894380's primers among them)"
    assert PMID in {p for p, _ in cases}
    assert wrong == [], "\n".join(map(str, wrong))
