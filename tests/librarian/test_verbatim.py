"""Verbatim means verbatim (issue 11, point 2), over the whole space: every sentence span of every
passage the librarian indexed, and every item it returns for every SciFact train claim and every
CIViC statement, is re-read from the pinned bytes (hash checked) and compared byte for byte.

The oracle is independent of the index: SciFact sentences come from the corpus line as written;
JATS passages from parsing the pinned file again with the gate's own parser
(``bioevidence.text.jats``), which is what the literature grounder reads.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import statistics
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from bioevidence.librarian.index import LocalIndex
from bioevidence.librarian.librarian import Librarian
from bioevidence.sources.metadata import parse_metadata
from bioevidence.text.jats import Article, parse_jats

pytestmark = pytest.mark.heavy(seconds=165)  # started first under xdist (tests/conftest.py)


@pytest.fixture(scope="module")
def scifact_lines(shared_data: Path) -> dict[str, bytes]:
    with gzip.open(shared_data / "claims" / "scifact" / "corpus.jsonl.gz", "rb") as fh:
        return {str(json.loads(line)["doc_id"]): line.rstrip(b"\r\n") for line in fh if line.strip()}


def _scifact_claims(shared_data: Path) -> list[dict[str, Any]]:
    path = shared_data / "claims" / "scifact" / "claims_train.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_every_indexed_scifact_sentence_is_the_corpus_sentence(scifact_full: Path,
                                                               scifact_lines: dict[str, bytes]) -> None:
    index = LocalIndex(scifact_full)
    checked = 0
    assert len(index.docs) == len(scifact_lines) == 5183
    for doc in index.docs:
        raw = scifact_lines[doc.doc_id]
        assert doc.sha256 == hashlib.sha256(raw).hexdigest()
        sentences = json.loads(raw)["abstract"]
        (row,) = index.passages(doc.idx)
        assert [row.text[s:e] for s, e in row.sentences] == sentences, doc.doc_id
        checked += len(sentences)
    # every sentence of the corpus, not a sample
    assert checked == sum(len(json.loads(raw)["abstract"]) for raw in scifact_lines.values())


@pytest.fixture(scope="module")
def scifact_answers(scifact_full: Path, shared_data: Path) -> list[tuple[dict[str, Any], Any]]:
    """Every SciFact train claim asked once, offline, with the default settings."""
    lib = Librarian(scifact_full)
    return [(claim, lib.ask(claim["claim"])) for claim in _scifact_claims(shared_data)]


def test_every_item_for_every_scifact_train_claim_is_a_slice_of_its_abstract(
        scifact_answers: list[tuple[dict[str, Any], Any]], scifact_lines: dict[str, bytes]) -> None:
    items = 0
    for _, answer in scifact_answers:
        for item in answer.items():
            raw = scifact_lines[item["doc_id"]]
            assert item["sha256"] == hashlib.sha256(raw).hexdigest()
            sentences = json.loads(raw)["abstract"]
            text = " ".join(sentences)
            assert text[item["start"]:item["end"]] == item["text"]
            assert item["text"] == " ".join(sentences[i] for i in item["sentences"])
            items += 1
    assert len(scifact_answers) == 809 and items >= 809 * 5


def _ndcg10(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(n + 2) for n, doc in enumerate(ranked[:10]) if doc in relevant)
    ideal = sum(1 / math.log2(n + 2) for n in range(min(10, len(relevant))))
    return dcg / ideal


def test_ranked_sentences_hold_the_gold_rationales_first(scifact_answers: list[tuple[dict[str, Any], Any]]) -> None:
    """Issue 11, point 3, on SciFact train: the share of a claim's gold rationale sentences among
    the first 5 and 10 returned sentences (reading order gave about 0.55 and 0.67) is at least 0.70
    and 0.80, and paper-level BEIR nDCG@10 stays at least 0.70 (it was 0.7069)."""
    share: dict[int, list[float]] = {5: [], 10: []}
    ndcg = []
    for claim, answer in scifact_answers:
        ndcg.append(_ndcg10([p.doc.doc_id for p in answer.papers], {str(d) for d in claim["cited_doc_ids"]}))
        gold = {(d, i) for d, sets in claim["evidence"].items() for s in sets for i in s["sentences"]}
        if not gold:
            continue
        returned = [(item["doc_id"], i) for item in answer.items() for i in item["sentences"]]
        for k in share:
            share[k].append(len(gold & set(returned[:k])) / len(gold))
    assert len(share[5]) == 505
    first5, first10 = statistics.mean(share[5]), statistics.mean(share[10])
    assert first5 >= 0.70 and first10 >= 0.80, (first5, first10)
    assert statistics.mean(ndcg) >= 0.70


@cache
def _reparsed(source: str, sha256: str) -> Article:
    """The pinned JATS parsed again from its bytes, after checking they are the pinned ones."""
    raw = Path(source).read_bytes()
    data = gzip.decompress(raw) if source.endswith(".gz") else raw
    assert hashlib.sha256(data).hexdigest() == sha256, f"{source} is not the pinned file"
    return parse_jats(data, source=source)


@cache
def _pinned_abstract(source: str) -> str:
    raw = Path(source).read_bytes()
    meta = parse_metadata(gzip.decompress(raw) if source.endswith(".gz") else raw)
    return " ".join((meta.abstract or "").split())


def _passage_text(doc: Any, pid: str) -> str:
    if doc.kind == "abstract" and pid == "abstract" and not doc.source.endswith((".xml", ".xml.gz", ".nxml")):
        return _pinned_abstract(doc.source)
    passage = _reparsed(doc.source, doc.sha256).by_id(pid)
    assert passage is not None, f"{doc.doc_id}: no passage {pid} in the pinned file"
    return passage.text


def test_every_indexed_jats_passage_is_the_pinned_papers_readable_text(jats_index: Path) -> None:
    """All papers of the shared JATS folder and the CIViC snapshots: each passage's text is the
    re-parsed passage's text, and each sentence span lies inside it, never crossing a break."""
    index = LocalIndex(jats_index)
    kinds: Counter[str] = Counter()
    spans = 0
    for doc in index.docs:
        for row in index.passages(doc.idx):
            assert row.text == _passage_text(doc, row.pid), (doc.doc_id, row.pid)
            for s, e in row.sentences:
                assert 0 <= s < e <= len(row.text) and row.text[s:e].strip() == row.text[s:e]
                assert not any(s < b < e for b in row.breaks), (doc.doc_id, row.pid, s, e)
                spans += 1
            kinds[row.kind] += 1
    assert len(index.docs) > 200 and spans > 50_000
    # every part the librarian reads is present, not only clean paragraphs
    assert {"abstract", "paragraph", "figure-caption", "table-caption", "table"} <= set(kinds)


def test_every_item_for_every_civic_statement_is_printed_text_with_markers_and_dashes(
        civic_index: Path, civic_statements: list[dict[str, str]]) -> None:
    lib = Librarian(civic_index)
    items = 0
    printed: Counter[str] = Counter()
    for row in civic_statements:
        answer = lib.ask(row["question"], include_retracted=True)
        for span, item in zip(answer.ranked, answer.items(), strict=True):
            doc = answer.papers[span.paper].doc
            text = _passage_text(doc, item["paragraph_id"])
            assert text[item["start"]:item["end"]] == item["text"], (doc.doc_id, item["paragraph_id"])
            items += 1
            for name, chars in (("dash", "–—−"), ("bracket", "[]"), ("symbol", "±×≥≤µαβ")):
                printed[name] += any(c in item["text"] for c in chars)
    assert len(civic_statements) >= 180 and items >= 5 * len(civic_statements)
    # the printed forms are kept, not folded: items with dashes, citation brackets and symbols exist
    assert all(printed[name] > 0 for name in ("dash", "bracket", "symbol")), printed
