"""Sentence-aligned chunks: windows of about 200 words, one sentence of overlap, verbatim slices."""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from bioevidence.librarian.corpus import read_jats
from bioevidence.librarian.kb.chunks import chunk_passages, chunk_sentences


@given(st.lists(st.integers(1, 120), max_size=60), st.integers(20, 300), st.integers(0, 3))
def test_windows_cover_every_sentence_in_order_with_the_overlap(words: list[int], target: int, overlap: int) -> None:
    windows = chunk_sentences(words, target=target, overlap=overlap)
    covered = {i for lo, hi in windows for i in range(lo, hi)}
    assert covered == set(range(len(words)))
    for (lo1, hi1), (lo2, hi2) in itertools.pairwise(windows):
        assert lo1 < lo2 <= hi1 and hi2 > hi1
    for lo, hi in windows[:-1]:
        assert sum(words[lo:hi]) >= target or hi - lo == 1


def test_chunks_of_a_pinned_paper_are_verbatim_slices_of_its_passages(shared_data: Path) -> None:
    path = next(iter(sorted((shared_data / "jats" / "pmc_oa").glob("*.nxml"))))
    doc = read_jats(path.read_bytes(), source=str(path))

    class P:  # the passage rows an index gives (ord, section, text, sentences)
        def __init__(self, ord_: int, p: object) -> None:
            self.ord, self.section, self.text, self.sentences = ord_, p.section, p.text, p.sentences  # type: ignore

    rows = [P(i, p) for i, p in enumerate(doc.passages)]
    chunks = chunk_passages(0, rows, title=doc.title)
    assert len(chunks) > 3
    seen = set()
    for c in chunks:
        assert len({rows[o].section for o, _, _ in c.pieces}) == 1  # never past a section
        parts = c.text.split("\n")
        assert len(parts) == len(c.pieces)
        for (o, a, b), part in zip(c.pieces, parts, strict=True):
            row = rows[o]
            assert part == row.text[row.sentences[a][0]:row.sentences[b - 1][1]]
            seen |= {(o, i) for i in range(a, b)}
    assert seen == {(r.ord, i) for r in rows for i in range(len(r.sentences))}
    assert [c.no for c in chunks] == list(range(len(chunks)))


def test_a_document_without_sentences_gets_one_title_chunk() -> None:
    (chunk,) = chunk_passages(3, [], title="A title only")
    assert chunk.text == "A title only" and chunk.pieces == () and chunk.doc == 3
    assert chunk_passages(3, [], title="") == []
