"""Canonical tokens with offsets: the unit in which quotes are compared with passages.

:func:`tokenize` turns readable text (a passage as printed, or a quote) into tokens:

* the text is canonicalised character by character with the one table of
  :mod:`bioevidence.text.normalize` (NFKC, typographic quotes and dashes, Greek letters written
  out, soft hyphens and zero-width characters removed, every space character a space);
* a **word** is a run of letters and digits (``PDGFRalpha``, ``0``, ``TGFbeta1``); every other
  visible character is one **punctuation** token (``-``, ``(``, ``.``, ``<``); whitespace only
  separates tokens, and each token records whether whitespace came before it;
* tokens inside a citation-marker span (given by the JATS parser for ``<xref ref-type="bibr">``
  or found in plain text, see :func:`plain_markers`) are flagged, and cell or line boundaries
  (``breaks``) become break tokens that no quote can cross;
* every token keeps its start and end offset in the original text, so a match is a byte-exact
  slice of what the paper prints.

Two words differ unless their canonical forms are equal; whitespace between two words is
significant (``in effective`` is not ``ineffective``), whitespace next to punctuation is not
(``298K.(C)`` is ``298K. (C)``; ``p<0.05`` is ``p < 0.05``).

Citation groups (:func:`groups`): runs of marker tokens with their separators, and the brackets
around them when the brackets hold nothing else, are what a quote may leave out.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .normalize import _TABLE, fold

#: Token kinds: word, punctuation, marker word, marker punctuation, break.
WORD, PUNCT, MWORD, MPUNCT, BREAK = "w", "p", "W", "P", "b"
_TOKEN = re.compile(r"([^\W_]+)|(\S)")
_OPEN = frozenset("([{")
_CLOSE = {"(": ")", "[": "]", "{": "}"}
SEPARATORS = frozenset({",", ";", "-"})
_JOINERS = frozenset({"and", "&"})
# Plain-text citation markers a paper prints without <xref>: numeric brackets and author-year.
_PLAIN_NUMERIC = re.compile(r"\[\s*\d{1,4}(?:\s*[,;\-\u2013\u2014]\s*\d{1,4})*\s*\]")
_PLAIN_AUTHOR_YEAR = re.compile(
    r"\((?:[A-Z][\w'\u2019\-]+(?:\s+[A-Z][\w'\u2019\-]+)?(?:\s+(?:and|&)\s+[A-Z][\w'\u2019\-]+|\s+et\s+al\.?)?,?\s+"
    r"(?:19|20)\d{2}[a-z]?(?:\s*[;,]\s*)?)+\)")


@lru_cache(maxsize=4096)
def _canon_char(ch: str) -> str:
    """The canonical form of one non-ASCII character (or cluster with combining marks)."""
    mapped = _TABLE.get(ord(ch)) if len(ch) == 1 else None
    if mapped is not None:
        return mapped
    out = fold(ch).translate(_TABLE)
    return " " if out.isspace() else out


# One character with its combining marks: a non-ASCII character, or an ASCII letter followed by
# combining marks (``u`` + U+0308, as macOS and PDF copy-paste give ``ü``), compared as one.
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_NON_ASCII = re.compile(f"(?:[^\\x00-\\x7f]|[\\x00-\\x7f](?=[{_MARKS}]))[{_MARKS}]*")


def canonical(text: str) -> tuple[str, list[int], list[int]]:
    """``(canon, canon_points, orig_points)``: the canonical text and a sparse offset map.

    Between consecutive points the map is the identity shifted; ``orig_at(i)`` gives the
    original offset of canonical index ``i``. ASCII text is returned unchanged with no points.
    """
    if text.isascii():
        return text, [], []
    pieces: list[str] = []
    cpoints: list[int] = []
    opoints: list[int] = []
    last = 0
    clen = 0
    for match in _NON_ASCII.finditer(text):
        a, b = match.span()
        if a > last:
            pieces.append(text[last:a])
            clen += a - last
        mapped = _canon_char(match.group(0))
        cpoints.append(clen)
        opoints.append(a)
        pieces.append(mapped)
        clen += len(mapped)
        cpoints.append(clen)
        opoints.append(b)
        last = b
    if last < len(text):
        pieces.append(text[last:])
    return "".join(pieces), cpoints, opoints


def _orig(index: int, cpoints: list[int], opoints: list[int], *, end: bool = False) -> int:
    """The original offset of canonical offset ``index`` (a start, or an exclusive ``end``)."""
    if not cpoints:
        return index
    k = bisect_right(cpoints, index - 1 if end else index) - 1
    if k < 0:
        return index
    if k % 2 == 0:  # inside a mapped character's expansion: the whole character
        return opoints[k + 1] if end else opoints[k]
    return opoints[k] + (index - cpoints[k])


@dataclass(slots=True)
class Tokens:
    """Tokens of one text (see module docstring). Plain lists, cheap to cache with marshal."""

    words: list[str]
    kinds: str
    space: str  # "1" where whitespace (or a break) comes before the token, else "0"
    starts: list[int]
    ends: list[int]

    def __len__(self) -> int:
        return len(self.words)

    def to_plain(self) -> tuple[Any, ...]:
        return (self.words, self.kinds, self.space, self.starts, self.ends)

    @classmethod
    def from_plain(cls, raw: Sequence[Any]) -> Tokens:
        return cls(list(raw[0]), raw[1], raw[2], list(raw[3]), list(raw[4]))

    def render(self, start: int = 0, end: int | None = None, *, markers: bool = False) -> str:
        """Canonical text of tokens ``start:end``: a space only between two words that had one;
        citation groups (:func:`groups`) left out unless ``markers``; breaks as line breaks."""
        end = len(self.words) if end is None else end
        skip: set[int] = set()
        if not markers and (MWORD in self.kinds or MPUNCT in self.kinds):
            for g in groups(self):
                skip.update(range(g.skip_from, g.end))
        out: list[str] = []
        prev = ""
        for i in range(start, end):
            kind = self.kinds[i]
            if kind == BREAK:
                out.append("\n")
                prev = ""
                continue
            if i in skip:
                continue
            word = kind in (WORD, MWORD)
            if out and prev == WORD and word and self.space[i] == "1":
                out.append(" ")
            out.append(self.words[i])
            prev = WORD if word else PUNCT
        return "".join(out)


def _spaced_before(text: str, index: int) -> bool:
    """Whether whitespace comes before ``index`` in ``text`` (invisible characters skipped)."""
    i = index - 1
    while i >= 0 and not text[i].isascii() and _canon_char(text[i]) == "":
        i -= 1
    return i < 0 or text[i].isspace()


def tokenize(text: str, markers: Iterable[tuple[int, int]] = (), breaks: Iterable[int] = ()) -> Tokens:
    """Tokens of ``text``; ``markers`` are (start, end) spans of citation markers and ``breaks``
    offsets where no quote may continue (table cells, caption lines), both in ``text`` offsets.

    Tokens never straddle a marker's edge (``AA<xref>1</xref>`` is ``AA`` then the marker ``1``).
    """
    if not markers and not breaks:
        return _plain_tokens(text)
    spans = sorted((a, b) for a, b in markers if 0 <= a < b <= len(text))
    cuts = sorted({c for c in breaks if 0 < c < len(text)})
    bounds = sorted({0, len(text), *cuts, *(x for span in spans for x in span)})
    inside = {a for a, b in spans}
    ends_of = dict(spans)
    cut_set = set(cuts)
    words: list[str] = []
    kinds: list[str] = []
    space: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    marker_end = -1
    for a, b in itertools.pairwise(bounds):
        if a in cut_set and words and kinds[-1] != BREAK:
            words.append("")
            kinds.append(BREAK)
            space.append("1")
            starts.append(a)
            ends.append(a)
        if a in inside:
            marker_end = max(marker_end, ends_of[a])
        in_marker = a < marker_end
        canon, cpoints, opoints = canonical(text[a:b])
        prev_end = 0
        for match in _TOKEN.finditer(canon):
            x, y = match.span()
            start = a + _orig(x, cpoints, opoints)
            end = a + _orig(y, cpoints, opoints, end=True)
            spaced = (x > prev_end and canon[prev_end:x].isspace()) if x > 0 and prev_end > 0 \
                else _spaced_before(text, start)
            if words and kinds[-1] == BREAK:
                spaced = True
            word = match.group(1) is not None
            words.append(match.group(0))
            kinds.append((MWORD if word else MPUNCT) if in_marker else (WORD if word else PUNCT))
            space.append("1" if spaced else "0")
            starts.append(start)
            ends.append(end)
            prev_end = y
    return Tokens(words, "".join(kinds), "".join(space), starts, ends)


_SPLIT = re.compile(r"([^\W_]+|\S)")  # what _TOKEN matches, as re.split's separators: gap, token, gap, ...
_KIND = {True: WORD, False: PUNCT}
_SPACED = {True: "1", False: "0"}


def _plain_tokens(text: str) -> Tokens:
    """:func:`tokenize` of a text with no markers and no breaks (a quote), without a per-token loop.

    The same tokens: one stretch of text split at ``_TOKEN``'s matches (so ``parts`` alternates the
    whitespace before a token and the token, only whitespace lying between tokens); a token is a
    word when it is alphanumeric (``[^\\W_]`` is ``str.isalnum``'s test); every token but the first is
    spaced exactly when whitespace comes before it, and the first as :func:`_spaced_before` says."""
    canon, cpoints, opoints = canonical(text)
    parts = _SPLIT.split(canon)
    words = parts[1::2]
    if not words:
        return Tokens([], "", "", [], [])
    n = len(words)
    kinds = "".join(map(_KIND.__getitem__, map(str.isalnum, words)))
    offsets = list(itertools.accumulate(map(len, parts), initial=0))
    starts = offsets[1:2 * n:2]
    ends = offsets[2:2 * n + 1:2]
    if cpoints:
        starts = [_orig(x, cpoints, opoints) for x in starts]
        ends = [_orig(y, cpoints, opoints, end=True) for y in ends]
    first = "1" if _spaced_before(text, starts[0]) else "0"
    space = first + "".join(map(_SPACED.__getitem__, map(bool, parts[2:2 * n:2])))
    return Tokens(words, kinds, space, starts, ends)


def plain_markers(text: str) -> list[tuple[int, int]]:
    """Citation markers a paper prints as plain text: ``[12]``, ``[3, 7-9]``, ``(Smith et al., 2001)``."""
    spans = [m.span() for m in _PLAIN_NUMERIC.finditer(text)]
    for m in _PLAIN_AUTHOR_YEAR.finditer(text):
        spans.append((m.start() + 1, m.end() - 1))  # the brackets are the sentence's own punctuation
    return sorted(spans)


@dataclass(frozen=True, slots=True)
class Group:
    """A citation group: tokens ``start:end``; ``skip_from`` includes an attached separator
    (``; Meuwissen et al., 2001`` inside a parenthesis that holds other words too)."""

    start: int
    end: int
    skip_from: int
    numbers: frozenset[int] | None  # the cited numbers when every marker is numeric
    skip_to: int = -1  # past a separator that only continues the list ("e.g., [1], [2], and others")


def cited_numbers(words: Sequence[str]) -> frozenset[int] | None:
    """Numbers cited by a run of tokens (``[7]``, ``-``, ``[9]`` → 7, 8, 9), or ``None`` when a
    word in it is not a number (an author-year citation)."""
    out: set[int] = set()
    pending_range = False
    last: int | None = None
    for word in words:
        if word[:1].isalnum():
            if not word.isdigit():
                if word in _JOINERS:
                    pending_range = False
                    continue
                return None
            value = int(word)
            if pending_range and last is not None and 0 <= value - last <= 200:
                out.update(range(last, value + 1))
            else:
                out.add(value)
            last = value
            pending_range = False
        elif word == "-":
            pending_range = True
        elif word in (",", ";"):
            pending_range = False
    return frozenset(out) if out else None


def groups(tokens: Tokens) -> list[Group]:
    """Citation groups of a tokenised passage, in order (see :class:`Group`).

    Runs of marker tokens are units; a unit directly inside brackets takes the brackets; units
    separated only by ``, ; -`` or ``and`` are one group; a group directly inside brackets takes
    them too; a ``;`` or ``,`` before a group that ends a parenthesis is attached to it.
    """
    kinds, words = tokens.kinds, tokens.words
    n = len(words)

    def enclose(a: int, b: int) -> tuple[int, int]:
        if a > 0 and b < n and kinds[a - 1] == PUNCT and words[a - 1] in _OPEN \
                and kinds[b] == PUNCT and words[b] == _CLOSE[words[a - 1]]:
            return a - 1, b + 1
        return a, b

    units: list[tuple[int, int]] = []
    i = 0
    while i < n:
        if kinds[i] in (MWORD, MPUNCT):
            j = i
            while j < n and kinds[j] in (MWORD, MPUNCT):
                j += 1
            units.append(enclose(i, j))
            i = units[-1][1]
        else:
            i += 1
    merged: list[list[int]] = []
    for a, b in units:
        if merged:
            k = merged[-1][1]
            while k < a and ((kinds[k] == PUNCT and words[k] in SEPARATORS)
                             or (kinds[k] == WORD and words[k] in _JOINERS)):
                k += 1
            if k == a:
                merged[-1][1] = b
                continue
        merged.append([a, b])
    out: list[Group] = []
    for a, b in merged:
        a, b = enclose(a, b)
        skip_from = a
        if a > 0 and b < n and kinds[a - 1] == PUNCT and words[a - 1] in (";", ",") \
                and kinds[b] == PUNCT and words[b] in (")", "]"):
            skip_from = a - 1
        skip_to = b
        if b + 1 < n and kinds[b] == PUNCT and words[b] in (",", ";") and kinds[b + 1] == WORD \
                and words[b + 1] in ("and", "or", "&"):
            skip_to = b + 1
        out.append(Group(a, b, skip_from, cited_numbers(words[a:b]), skip_to))
    return out
