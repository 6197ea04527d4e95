"""The literature grounder on the real CIViC corpus: true quotes admitted, controlled faults never verified.

Quotes are taken from the pinned JATS bytes with plain lxml (``<p>`` elements of the body that
hold text only), independently of the project's own JATS parser, and the faults are generated
here from those sentences.
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from bioevidence.gate.grounders.literature import LiteratureGrounder
from bioevidence.sources.catalogue import Catalogue
from builders import quote_faults


@pytest.fixture(scope="session")
def grounder(corpus_dir: Path, cache_dir: Path) -> LiteratureGrounder:
    return LiteratureGrounder.from_directory(corpus_dir, cache_root=cache_dir)


def record(pmid: str, quote: str, sha: str, title: str | None = None, locator: str = "results") -> dict[str, Any]:
    source: dict[str, Any] = {"id": "src", "source_type": "publication", "uri": f"pmid:{pmid}", "sha256": sha}
    if title is not None:
        source["title"] = title
    return {"record_id": f"r-{pmid}", "requested_uses": ["research_summary"], "source_artifacts": [source],
            "evidence_items": [{"id": "ev", "source_artifact_id": "src", "locator": locator,
                                "extracted_text": quote}]}


def blocking(result: Any) -> list[Any]:
    """Findings that decide (``warning`` and ``info`` notes, e.g. a locator slip, do not)."""
    return [f for f in result.findings if f.severity in ("error", "review")]


def good(papers: dict[str, dict[str, Any]]) -> list[str]:
    return sorted(p for p, v in papers.items() if not v["retracted"])


def test_corpus_has_enough_papers_with_text_only_paragraphs(papers: dict[str, dict[str, Any]]) -> None:
    assert len(good(papers)) >= 100
    assert sum(v["retracted"] for v in papers.values()) >= 15


def test_every_true_quote_with_its_title_is_verified(grounder: LiteratureGrounder, papers: dict) -> None:
    blocked = []
    for pmid in good(papers):
        paper = papers[pmid]
        for sentence in (paper["paragraphs"][0][0], paper["paragraphs"][-1][-1]):
            result = grounder.ground(record(pmid, sentence, paper["sha"], paper["title"]))
            if blocking(result) or result.verified != {"ev"}:
                blocked.append((pmid, sentence, [f.message for f in result.findings]))
    assert blocked == []


def test_controlled_faults_are_never_verified(grounder: LiteratureGrounder, papers: dict) -> None:
    seen: dict[str, int] = {}
    admitted = []
    for pmid in good(papers):
        paragraphs = papers[pmid]["paragraphs"]
        if len(paragraphs) < 3:
            continue
        faults: dict[str, str] = {}
        # the first sentence gets every fault that applies; rarer faults look further into the paper
        for index, paragraph in enumerate(paragraphs):
            for sentence in paragraph:
                other = paragraphs[(index + 2) % len(paragraphs)][-1]
                for name, quote in quote_faults(sentence, other).items():
                    faults.setdefault(name, quote)
        for name, quote in faults.items():
            seen[name] = seen.get(name, 0) + 1
            result = grounder.ground(record(pmid, quote, papers[pmid]["sha"]))
            if result.verified or not result.findings:
                admitted.append((pmid, name, quote))
    assert admitted == []
    assert min(seen.values()) >= 20, seen
    assert len(seen) == 8, seen


def test_canonically_equivalent_quotes_are_verified(grounder: LiteratureGrounder, papers: dict) -> None:
    """Every body sentence of every pinned paper that holds a precomposed letter (ü, é, ñ, …), quoted in
    its decomposed form (NFD: ``u`` + U+0308, as macOS and PDF copy-paste give it), is verified."""
    import unicodedata

    tried, blocked = 0, []
    for pmid in good(papers):
        paper = papers[pmid]
        for sentence in (s for paragraph in paper["paragraphs"] for s in paragraph):
            decomposed = unicodedata.normalize("NFD", sentence)
            if decomposed == sentence:
                continue
            tried += 1
            result = grounder.ground(record(pmid, decomposed, paper["sha"]))
            if blocking(result) or result.verified != {"ev"}:
                blocked.append((pmid, sentence, [f.message for f in result.findings]))
    print(f"{tried} sentences quoted in NFD, {len(blocked)} blocked")
    assert tried >= 5 and blocked == []  # 5 such sentences in the text-only paragraphs of the corpus


def test_a_not_found_quote_names_the_closest_passage_and_the_difference(grounder: LiteratureGrounder,
                                                                         papers: dict) -> None:
    pmid = good(papers)[0]
    sentence = papers[pmid]["paragraphs"][0][0]
    words = sentence.split()
    quote = " ".join([*words[:4], "never", *words[4:]])
    (f,) = grounder.ground(record(pmid, quote, papers[pmid]["sha"])).findings
    assert f.rule_id == "BEV017" and f.fix is not None and f.fix.action == "requote"
    assert "never" in (f.fix.detail or "") and "the paper says" in f.message
    assert f.fix.value.rstrip(".") == sentence.rstrip(".") or sentence.startswith(f.fix.value.rstrip("."))


def test_tolerated_variations_are_verified(grounder: LiteratureGrounder, papers: dict) -> None:
    variants_checked = 0
    for pmid in good(papers)[:40]:
        sentence = papers[pmid]["paragraphs"][0][0]
        words = sentence.split()
        long_word = next((w for w in words if len(w) >= 9 and w.isalpha()), None)
        forms = [
            sentence.rstrip("."),
            sentence[0].swapcase() + sentence[1:],
            sentence.replace(" ", "\n", 3),
            sentence.replace("'", "\u2019").replace("-", "\u2013"),
            sentence.replace("fi", "\ufb01"),
            " ".join(words[:5]) + "  \u00a0 " + " ".join(words[5:]),
        ]
        if long_word:
            forms.append(sentence.replace(long_word, long_word[:4] + "- " + long_word[4:], 1))
            forms.append(sentence.replace(long_word, long_word[:4] + "\u00ad" + long_word[4:], 1))
        for quote in forms:
            result = grounder.ground(record(pmid, quote, papers[pmid]["sha"]))
            assert result.verified == {"ev"}, (pmid, quote, [f.message for f in result.findings])
            variants_checked += 1
    assert variants_checked >= 300


def test_greek_letters_match_their_written_out_names(grounder: LiteratureGrounder, papers: dict) -> None:
    found = 0
    for pmid in good(papers):
        for paragraph in papers[pmid]["paragraphs"]:
            for sentence in paragraph:
                if "\u03b2" in sentence or "\u03b1" in sentence:
                    quote = sentence.replace("\u03b2", "beta").replace("\u03b1", "alpha")
                    assert grounder.ground(record(pmid, quote, papers[pmid]["sha"])).verified == {"ev"}
                    found += 1
    assert found >= 1


def test_every_retracted_paper_is_blocked_with_bev019(grounder: LiteratureGrounder, corpus_dir: Path,
                                                      manifest: dict, papers: dict) -> None:
    catalogue = Catalogue.load(corpus_dir)
    assert len(manifest["retracted"]) == 20
    for pmid in manifest["retracted"]:
        work = catalogue[f"pmid:{pmid}"]
        quote = papers[pmid]["paragraphs"][0][0] if pmid in papers else "a quote of more than five words"
        result = grounder.ground(record(pmid, quote, work.pinned_sha256))
        assert "BEV019" in {f.rule_id for f in result.findings}, pmid
        assert not result.verified


def test_nonexistent_pmids_are_never_verified(grounder: LiteratureGrounder, manifest: dict, papers: dict) -> None:
    pmid = good(papers)[0]
    for fake in manifest["nonexistent_pmids"]:
        result = grounder.ground(record(fake, papers[pmid]["paragraphs"][0][0], papers[pmid]["sha"]))
        # the corpus pins NCBI's "cannot get document summary" answer for each of them
        assert not result.verified and {f.rule_id for f in result.findings} == {"BEV016"}


def test_the_pmid_of_another_corpus_paper_is_caught(grounder: LiteratureGrounder, papers: dict) -> None:
    ids = good(papers)
    for this, other in list(itertools.pairwise(ids))[:30]:
        result = grounder.ground(record(other, papers[this]["paragraphs"][0][0], papers[this]["sha"],
                                        papers[this]["title"]))
        codes = {f.rule_id for f in result.findings}
        assert not result.verified and {"BEV017"} <= codes


def test_a_wrong_title_names_the_pinned_one(grounder: LiteratureGrounder, papers: dict) -> None:
    a, b = good(papers)[:2]
    result = grounder.ground(record(a, papers[a]["paragraphs"][0][0], papers[a]["sha"], papers[b]["title"]))
    (f,) = blocking(result)
    assert f.rule_id == "BEV017" and f.fix is not None and f.fix.value == papers[a]["title"]
    assert not result.verified


def test_a_quote_at_the_wrong_anchor_is_verified_with_a_warning_naming_the_right_one(
        grounder: LiteratureGrounder, corpus_dir: Path, papers: dict) -> None:
    catalogue = Catalogue.load(corpus_dir)
    for pmid in good(papers):  # the first paper whose first sentence is in a body paragraph
        sentence = papers[pmid]["paragraphs"][0][0]
        work = catalogue[f"pmid:{pmid}"]
        paper = grounder.paper(work, grounder.metadata(work))
        assert paper is not None
        hit = paper.locate(sentence)
        assert hit is not None and hit.boundary.ok
        if hit.passage.part == "body":
            break
    nowhere = grounder.ground(record(pmid, sentence, papers[pmid]["sha"], locator="results#nowhere"))
    (warning,) = nowhere.findings  # an anchor that names no passage: found elsewhere, verified, corrected
    assert nowhere.verified == {"ev"} and warning.rule_id == "BEV030" and warning.severity == "warning"
    assert warning.fix is not None and warning.fix.value == f"results#{hit.passage.id}"
    other = next(p for p in paper.passages if p.kind == "paragraph" and p.id != hit.passage.id)
    wrong = grounder.ground(record(pmid, sentence, papers[pmid]["sha"], locator=f"results#{other.id}"))
    (f,) = wrong.findings
    assert f.rule_id == "BEV030" and f.fix is not None and f.fix.value == f"results#{hit.passage.id}"
    assert wrong.verified == {"ev"} and f.blocking_uses == []
    right = grounder.ground(record(pmid, sentence, papers[pmid]["sha"], locator=f"results#{hit.passage.id}"))
    assert right.verified == {"ev"} and right.findings == []


def test_short_quotes_cannot_be_confirmed(grounder: LiteratureGrounder, papers: dict) -> None:
    pmid = good(papers)[0]
    quote = " ".join(papers[pmid]["paragraphs"][0][0].split()[:4])
    result = grounder.ground(record(pmid, quote, papers[pmid]["sha"]))
    assert [f.rule_id for f in result.findings] == ["BEV015"] and not result.verified


def test_a_quote_stopping_before_a_negation_goes_to_review(grounder: LiteratureGrounder, papers: dict) -> None:
    cases = 0
    for pmid in good(papers):
        for paragraph in papers[pmid]["paragraphs"]:
            for sentence in paragraph:
                match = re.search(r" (not|without|except) ", sentence)
                if match and len(sentence[:match.start()].split()) >= 6:
                    result = grounder.ground(record(pmid, sentence[:match.start()], papers[pmid]["sha"]))
                    (f,) = blocking(result)
                    assert f.rule_id == "BEV028" and match.group(1) in f.message
                    assert not result.verified
                    cases += 1
    assert cases >= 5


def test_tampered_snapshot_bytes_are_bev014(grounder: LiteratureGrounder, corpus_dir: Path, papers: dict,
                                           tmp_path: Path, cache_dir: Path) -> None:
    pmid = good(papers)[0]
    catalogue = Catalogue.load(corpus_dir)
    work = catalogue[f"pmid:{pmid}"]
    shutil.copy(corpus_dir / "literature.json", tmp_path / "literature.json")
    shutil.copy(corpus_dir / f"{work.metadata_sha256}.json.gz", tmp_path)
    data = gzip.decompress((corpus_dir / f"{work.fulltext_sha256}.xml.gz").read_bytes())
    (tmp_path / f"{work.fulltext_sha256}.xml.gz").write_bytes(gzip.compress(data.replace(b"the ", b"thy ", 1)))
    tampered = LiteratureGrounder.from_directory(tmp_path, cache_root=cache_dir)
    result = tampered.ground(record(pmid, papers[pmid]["paragraphs"][0][0], papers[pmid]["sha"]))
    assert "BEV014" in {f.rule_id for f in result.findings} and not result.verified


def test_an_expression_of_concern_is_named_and_goes_to_review(grounder: LiteratureGrounder, corpus_dir: Path,
                                                              manifest: dict) -> None:
    """PMID 32432717 (Biosci Rep 2020) carries an expression of concern, PMID 32579207, before its
    retraction, PMID 32614055: both read from its pinned NCBI esummary, independently of the parser."""
    catalogue = Catalogue.load(corpus_dir)
    work = catalogue["pmid:32432717"]
    summary = json.loads(gzip.decompress((corpus_dir / f"{work.metadata_sha256}.json.gz").read_bytes()))
    references = summary["result"]["32432717"]["references"]
    concern = next(str(r["pmid"]) for r in references if r["reftype"] == "Expression of concern in")
    retraction = next(str(r["pmid"]) for r in references if r["reftype"] == "Retraction in")
    result = grounder.ground(record("32432717", "a quote of more than five words here", work.pinned_sha256))
    by_code = {f.rule_id: f for f in result.findings}
    assert "BEV027" in by_code and by_code["BEV027"].severity == "review" and concern in by_code["BEV027"].message
    assert "BEV019" in by_code and retraction in by_code["BEV019"].message
    assert "32432717" in manifest["retracted"] and not result.verified
