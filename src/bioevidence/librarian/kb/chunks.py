"""Sentence-aligned chunks: a few hundred words, one sentence of overlap, never past a section.

A chunk is a list of **pieces** ``(passage ord, first sentence, end sentence)``: whole sentences
of passages of one section of one document, in reading order. Its text is the pieces' verbatim
slices of the passages' canonical text (joined by a line break between passages), so every
sentence a chunk shows is a slice of a pinned passage, found again by its passage and sentence
numbers. Chunks of the same document are numbered in reading order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CHUNK_VERSION", "Chunk", "chunk_passages", "chunk_sentences"]

CHUNK_VERSION = "c1-200w-1s"  # in every vector cache key: a new chunker never reuses old vectors
TARGET_WORDS = 200
OVERLAP = 1


def chunk_sentences(words: Sequence[int], *, target: int = TARGET_WORDS, overlap: int = OVERLAP
                    ) -> list[tuple[int, int]]:
    """Windows ``[lo, hi)`` over sentences of ``words`` words each: each window grows until it
    holds ``target`` words (or the sentences run out); the next starts ``overlap`` sentences
    before the previous end. Every sentence is in at least one window."""
    out: list[tuple[int, int]] = []
    n = len(words)
    lo, last = 0, 0
    while lo < n:
        hi, total = lo, 0
        while hi < n and (total < target or hi <= last):  # each window ends past the previous one
            total += words[hi]
            hi += 1
        out.append((lo, hi))
        if hi >= n:
            break
        lo, last = max(hi - overlap, lo + 1), hi
    return out


@dataclass(frozen=True)
class Chunk:
    doc: int  # document number in the index
    no: int  # chunk number within the document
    section: str
    pieces: tuple[tuple[int, int, int], ...]  # (passage ord, first sentence, end sentence)
    text: str

    def unit(self) -> list[Any]:
        return [self.doc, self.no, [list(p) for p in self.pieces]]


def chunk_passages(doc: int, passages: Sequence[Any], *, title: str = "", target: int = TARGET_WORDS,
                   overlap: int = OVERLAP) -> list[Chunk]:
    """Chunks of one document's passages (objects with ``ord``, ``section``, ``text``,
    ``sentences``), section by section. A document with no sentence gets one title chunk
    (pieces empty) when it has a title, so a metadata-only entry is still found."""
    from ...text.normalize import word_count

    chunks: list[Chunk] = []
    groups: list[tuple[str, list[tuple[Any, int]]]] = []
    for p in passages:
        sents = [(p, i) for i in range(len(p.sentences))]
        if not sents:
            continue
        if groups and groups[-1][0] == p.section:
            groups[-1][1].extend(sents)
        else:
            groups.append((p.section, sents))
    for section, sents in groups:
        counts = [word_count(p.text[p.sentences[i][0]:p.sentences[i][1]]) for p, i in sents]
        for lo, hi in chunk_sentences(counts, target=target, overlap=overlap):
            pieces: list[tuple[int, int, int]] = []
            texts: list[str] = []
            for p, i in sents[lo:hi]:
                if pieces and pieces[-1][0] == p.ord and pieces[-1][2] == i:
                    pieces[-1] = (p.ord, pieces[-1][1], i + 1)
                else:
                    pieces.append((p.ord, i, i + 1))
            by_ord = {p.ord: p for p, _ in sents[lo:hi]}
            for o, a, b in pieces:
                p = by_ord[o]
                texts.append(p.text[p.sentences[a][0]:p.sentences[b - 1][1]])
            chunks.append(Chunk(doc, len(chunks), section, tuple(pieces), "\n".join(texts)))
    if not chunks and title:
        chunks.append(Chunk(doc, 0, "Title", (), title))
    return chunks
