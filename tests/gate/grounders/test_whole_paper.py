"""True quotes from every part of every pinned paper are admitted; faults made from them never are.

The cases come from ``tools/eval_quotes.py`` (which prints the same table for docs/grounders.md):
quotes read from the JATS bytes with plain lxml by the tool's own rules, every part a reader can
read, written every way a reader or pipeline copies them, and faults derived from them. Each case
is a complete record validated with the snapshot grounders. Also here: locators help and never
reject (plain words, labels, 0.8.0 passage ids).
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bioevidence.gate.grounders.literature import LiteratureGrounder
from builders import claim_record

pytestmark = pytest.mark.heavy(seconds=135)  # started first under xdist (tests/conftest.py)

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def tool(shared_data: Path) -> Any:
    spec = importlib.util.spec_from_file_location("eval_quotes", REPO / "tools" / "eval_quotes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_quotes"] = module
    spec.loader.exec_module(module)
    module.DATA = shared_data
    return module


@pytest.fixture(scope="module")
def rows(tool: Any, tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> list[dict[str, Any]]:
    store = tmp_path_factory.mktemp("jats-store")
    cases = tool.build_cases(store, per_part=20, seed=11)
    return list(tool.evaluate(cases, [shared_data / "civic_corpus" / "snapshots", store]))


def test_every_paper_of_the_shared_data_is_sampled(rows: list[dict[str, Any]]) -> None:
    papers = {r["paper"] for r in rows}
    assert len([p for p in papers if p.startswith("pmid:")]) >= 100  # the CIViC snapshots
    assert len([p for p in papers if p.startswith("doi:")]) >= 100  # jats/ (PLOS, eLife, Europe PMC, PMC OA)


def test_true_quotes_from_every_part_are_all_admitted(rows: list[dict[str, Any]], tool: Any) -> None:
    true = [r for r in rows if r["family"] == "true"]
    per_part = Counter(r["part"] for r in true)
    assert set(per_part) == set(tool.PART_XPATHS), per_part
    assert min(per_part.values()) >= 20, per_part
    for variant in ("markers left out", "xref stripped by a pipeline", "PDF hyphenation", "Greek written out",
                    "spacing around punctuation", "PubMed title", "first letter and full stop as PubMed"):
        assert sum(r["variant"] == variant for r in true) >= 20, variant
    blocked = [(r["part"], r["variant"], r["paper"], r["quote"][:120], r["findings"][:300])
               for r in true if r["status"] != "admitted"]
    assert blocked == []


def test_faults_are_never_admitted(rows: list[dict[str, Any]]) -> None:
    faults = [r for r in rows if r["family"] != "true"]
    per_family = Counter(r["family"] for r in faults)
    for family in ("start inside a word", "end inside a word", "dropped negating prefix (quote starts in the word)",
                   "dropped negating prefix (inside the quote)", "changed citation number", "stitched",
                   "word dropped", "negation added", "negation removed", "number changed", "antonym swapped"):
        assert per_family[family] >= 20, (family, per_family)
    admitted = [(r["family"], r["paper"], r["quote"][:160]) for r in faults if r["status"] == "admitted"]
    assert admitted == []


def test_a_cut_word_is_named_whole(rows: list[dict[str, Any]]) -> None:
    """"the quote starts inside 'BRAF-selective'": the finding names the paper's whole word."""
    cut = [r for r in rows if r["expect_word"]]
    named = sum(r["named"] for r in cut)
    assert len(cut) >= 500 and named / len(cut) >= 0.98, (named, len(cut))
    negations = [r for r in rows if r["family"] == "dropped negating prefix (quote starts in the word)"]
    assert sum(r["reversal"] for r in negations) / len(negations) >= 0.6  # "…reverses the paper's meaning"
    false_alarms = [r for r in rows if r["family"] == "start inside a word" and r["reversal"]]
    assert len(false_alarms) <= 2, false_alarms


# -- locators -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def grounder(corpus_dir: Path, cache_dir: Path) -> LiteratureGrounder:
    return LiteratureGrounder.from_directory(corpus_dir, cache_root=cache_dir)


def _paper(grounder: LiteratureGrounder, pmid: str) -> Any:
    work = grounder.catalogue.get(f"pmid:{pmid}")
    return grounder.paper(work, grounder.metadata(work))


def _ground(grounder: LiteratureGrounder, papers: dict, pmid: str, quote: str, locator: str) -> Any:
    rec = claim_record(0, pmid, papers[pmid]["sha"], papers[pmid]["title"], quote)
    rec["evidence_items"][0]["locator"] = locator
    return grounder.ground(rec)


def test_plain_word_locators_help_and_never_reject(grounder: LiteratureGrounder, papers: dict) -> None:
    checked = Counter()
    for pmid in sorted(p for p, v in papers.items() if not v["retracted"]):
        paper = _paper(grounder, pmid)
        for passage in paper.passages:
            text = passage.text[passage.breaks[0]:] if passage.breaks else passage.text  # after a caption's label
            words = text.split()
            if len(words) < 12 or passage.part not in ("abstract", "body", "caption"):
                continue
            quote = " ".join(words[:10])
            hit = paper.locate(quote)
            if hit is None or hit.passage is not passage or not hit.boundary.ok or paper.cut_before_cue(hit):
                continue
            right = {"abstract": "abstract", "body": passage.section.split(" / ")[0],
                     "caption": passage.label}[passage.part]
            wrong = "Discussion" if passage.section_type != "discussion" else "Methods"
            if not right or checked[passage.part] >= 5:
                continue
            ok = _ground(grounder, papers, pmid, quote, right)
            assert ok.verified == {"e"} and not [f for f in ok.findings if f.rule_id == "BEV030"], (right, quote)
            slip = _ground(grounder, papers, pmid, quote, wrong if passage.part != "caption" else "Table 99")
            assert slip.verified == {"e"}, [f.message for f in slip.findings]
            (warning,) = [f for f in slip.findings if f.rule_id == "BEV030"]
            assert warning.severity == "warning" and warning.blocking_uses == []
            assert warning.fix is not None and warning.fix.value in (right, passage.label)
            checked[passage.part] += 1
        if min(checked.get(p, 0) for p in ("abstract", "body", "caption")) >= 5:
            break
    assert min(checked.get(p, 0) for p in ("abstract", "body", "caption")) >= 5, checked


def test_the_0_8_0_paragraph_ids_name_the_same_text(grounder: LiteratureGrounder, papers: dict,
                                                    corpus_dir: Path) -> None:
    """0.8.0 numbers every p/title element by its place in document order (ElementTree's iter)."""
    import gzip
    import xml.etree.ElementTree as ET

    checked = 0
    for pmid in sorted(p for p, v in papers.items() if not v["retracted"])[:10]:
        root = ET.fromstring(gzip.decompress((corpus_dir / f"{papers[pmid]['sha']}.xml.gz").read_bytes()))
        for n, element in enumerate(root.iter()):
            if element.tag != "p" or element.get("id") or len(element) or not element.text:
                continue
            quote = " ".join(element.text.split())
            if not 8 <= len(quote.split()) <= 80 or not quote.endswith("."):
                continue
            result = _ground(grounder, papers, pmid, quote, f"https://pubmed.ncbi.nlm.nih.gov/{pmid}#n{n}")
            assert result.verified == {"e"} and not [f for f in result.findings if f.rule_id == "BEV030"], (
                pmid, n, [f.message for f in result.findings])
            checked += 1
    assert checked >= 20
