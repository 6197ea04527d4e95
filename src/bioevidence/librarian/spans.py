"""Quotes cut from a passage: whole sentences, never across a break, at least five words.

Every quote is a byte-exact slice ``passage.text[start:end]`` of the printed passage text; the
literature grounder finds it token by token (so it verifies by construction).
"""

from __future__ import annotations

from typing import Any

from ..text.normalize import word_count

__all__ = ["MIN_QUOTE_WORDS", "grow", "same_line", "words"]

MIN_QUOTE_WORDS = 5  # the literature grounder's minimum; shorter quotes cannot be confirmed


def same_line(row: Any, i: int, j: int) -> bool:
    """Sentences ``i < j`` of ``row`` lie between the same breaks (a quote never crosses a table
    cell or a caption's label)."""
    a, b = row.sentences[i][0], row.sentences[j][1]
    return not any(a < cut < b for cut in row.breaks)


def words(row: Any, lo: int, hi: int) -> int:
    return word_count(row.text[row.sentences[lo][0]: row.sentences[hi][1]])


def grow(row: Any, lo: int, hi: int | None = None) -> tuple[int, int] | None:
    """Sentences ``lo..hi`` grown by their neighbours on the same line (next first) until the
    quote has :data:`MIN_QUOTE_WORDS` words; ``None`` when it cannot reach that."""
    hi = lo if hi is None else hi
    while words(row, lo, hi) < MIN_QUOTE_WORDS:
        if hi + 1 < len(row.sentences) and same_line(row, hi, hi + 1):
            hi += 1
        elif lo > 0 and same_line(row, lo - 1, lo):
            lo -= 1
        else:
            return None
    return lo, hi
