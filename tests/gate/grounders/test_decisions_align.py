"""Decisions of quote alignment (issue 30, the quotes group: align.py), on real papers.

What is tested:

* :func:`~bioevidence.gate.grounders.align.negates` (whether the part of a word a quote left out is a
  negating prefix), on a table of cases read from its docstring;
* :class:`~bioevidence.gate.grounders.align.PassageTokens` (a passage's citation groups, indexed by where
  a quote may meet them) on every passage of seven CIViC papers, against groups derived here from the
  marker token kinds by the rules of ``text/tokens.py`` ``groups``;
* :meth:`PaperText.locate` and :func:`~bioevidence.gate.grounders.align.align` on quotes built around
  every citation group of those papers: the group kept as printed, left out (with its attached
  separator, or the list's comma), reduced to what stripping the ``<xref>`` elements leaves, its numbers
  written another way (in brackets, bare, or as digits glued to the word for a superscript), a changed
  number, an unbalanced bracket, a quote starting, ending or cut inside a group, two groups in one
  quote, the first letter's case, a word broken at a PDF line end; a few made-up passages for what no
  paper of the corpus prints (a marker inside a word, superscripts with a space between them);
* :func:`~bioevidence.gate.grounders.align.boundaries` on every word of several tokens of those papers.

Every expected value is computed here from the passage text, the marker offsets and the rules of the
module docstrings (align.py, text/tokens.py), never copied from the code's output. The papers are read
into a fresh :class:`PaperText` (no process-wide paper cache), so the passage tokens are indexed by the
code under test.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from bioevidence.gate.grounders.align import Boundary, PassageTokens, align, boundaries, negates
from bioevidence.gate.grounders.quotes import PaperText, quote_tokens
from bioevidence.text.tokens import BREAK, MPUNCT, MWORD, PUNCT, WORD, Tokens, canonical, tokenize

# plain bracketed numbers; numbers inside the marker's brackets ("[1], [2]"); superscripts glued to the
# word ("outcomes12"); author-year citations (with a list "and" after them); attached separators
PMIDS = ("15696205", "24586605", "27302369", "29657128", "27589690", "20141835", "30718506")


@pytest.fixture(scope="module")
def papers(read_papers: Callable[[tuple[str, ...]], list[PaperText]]) -> list[PaperText]:
    # each paper's tokens indexed here again, by the code under test (not read from the cache)
    return [PaperText(read.article, read.extra) for read in read_papers(PMIDS)]


# -- negates: a table read from its docstring ------------------------------------------------------------

VOCABULARY = frozenset({"effective", "responsive", "able", "apt", "functional", "specific", "frame", "usual",
                        "sensitive", "formation", "crease", "significant", "mobile", "regular", "legal",
                        "similar", "creased", "dependent"})


@pytest.mark.parametrize(("cut", "kept", "want"), [
    # non- with its hyphen negates whatever follows, in the vocabulary or not, of any length
    ("non-", "small", True),
    ("non-", "xy", True),
    ("Non-", "small", True),
    ("NON-", "small", True),
    ("non\u2010", "small", True),  # the Unicode hyphen
    ("non\u2011", "small", True),  # the non-breaking hyphen
    # "non" without its hyphen is one prefix among the others: only before a word of the paper
    ("non", "functional", True),
    ("non", "small", False),
    # the other prefixes: the rest must be a word of the paper, of 4 letters or more, and not a false friend
    ("in", "effective", True),
    ("In", "effective", True),
    ("IN", "Effective", True),
    ("un", "responsive", True),
    ("un", "able", True),  # 4 letters: enough
    ("in", "apt", False),  # 3 letters: too short to tell
    ("un", "known", False),  # not a word the paper uses on its own
    ("im", "mobile", True),
    ("ir", "regular", True),
    ("il", "legal", True),
    ("dis", "similar", True),
    ("un-", "usual", True),  # a hyphen after another prefix: the same rule as without it
    ("un-", "known", False),  # ... so not always, as for non-
    ("in\u2010", "known", False),
    # false friends: the whole word is a word of its own, not the negation of the rest
    ("in", "formation", False),
    ("in", "crease", False),
    ("in", "creased", False),
    ("dis", "tinct", False),
    ("in", "dependent", True),  # "independent" is no false friend
    # the rest of the word is read up to its first hyphen or slash
    ("un", "specific-binding", True),
    ("in", "effective/toxic", True),
    ("in", "effective\u2010ly", True),
    ("in", "effective\u2011ly", True),
    ("un", "known-effective", False),
    ("in", "Sensitive", True),  # the rest's case does not matter
    # an alternative after a slash or an opening bracket: only the last alternative is the prefix
    ("reduced/non-", "functional", True),
    ("reduced/non-", "xy", True),
    ("(non-", "xy", True),
    ("[non-", "xy", True),
    ("\uff08non-", "xy", True),  # the full-width bracket
    ("(in", "effective", True),
    ("non-/", "small", False),  # nothing after the slash: no prefix
    ("in/", "effective", False),
    # not a negating prefix at all
    ("re", "sponsive", False),
    ("BRAF-", "selective", False),
    ("", "effective", False),
    ("-", "effective", False),
    ("inX", "effective", False),  # letters after the prefix: a cut inside another word
    ("nonX-", "small", False),
    ("-non", "small", False),  # a hyphen before the prefix is no hyphen after it
    ("-in", "effective", False),
    ("in ", "effective", False),  # whitespace is not a hyphen
    ("non- ", "small", False),
    ("a", "effective", False),
    ("i", "neffective", False),
])
def test_a_dropped_prefix_negates_by_the_documented_rules(cut: str, kept: str, want: bool) -> None:
    assert negates(cut, kept, VOCABULARY) is want


def test_the_vocabulary_decides_for_every_prefix_but_a_hyphenated_non() -> None:
    for prefix in ("non", "un", "in", "im", "ir", "il", "dis"):
        assert negates(prefix, "effective", frozenset()) is False, prefix
        assert negates(prefix, "effective", frozenset({"effective"})) is True, prefix
        assert negates(prefix, "EFFECTIVE", frozenset({"effective"})) is True, prefix
    assert negates("non-", "effective", frozenset()) is True
    assert negates("un-", "effective", frozenset()) is False


# -- PassageTokens: citation groups derived here from the marker kinds -------------------------------------

@dataclass(frozen=True)
class Derived:
    start: int
    end: int
    skip_from: int
    skip_to: int
    numbers: frozenset[int] | None


_PAIR = {"(": ")", "[": "]", "{": "}"}


def _numbers(words: list[str]) -> frozenset[int] | None:
    """The numbers a run of tokens cites: each number, and every number of ``a - b`` (b - a <= 200);
    ``and`` and ``&`` join; a word that is not a number makes it no numeric citation."""
    out: set[int] = set()
    previous: int | None = None
    dash = False
    for word in words:
        if word.isdigit():
            value = int(word)
            if dash and previous is not None and 0 <= value - previous <= 200:
                out |= set(range(previous, value + 1))
            out.add(value)
            previous, dash = value, False
        elif word[:1].isalnum():
            if word not in ("and", "&"):
                return None
            dash = False
        else:
            dash = word == "-" or (dash and word not in (",", ";"))
    return frozenset(out) or None


def _derive(t: Tokens) -> list[Derived]:
    """Citation groups by the rules of tokens.groups' docstring, read from the token kinds."""
    n = len(t.words)
    marker = [k in (MWORD, MPUNCT) for k in t.kinds]

    def brackets(a: int, b: int) -> tuple[int, int]:  # a span directly inside a pair of brackets takes them
        if a >= 1 and b < n and t.kinds[a - 1] == PUNCT and t.kinds[b] == PUNCT \
                and _PAIR.get(t.words[a - 1]) == t.words[b]:
            return a - 1, b + 1
        return a, b

    units = []
    for m in re.finditer(r"[WP]+", t.kinds):
        a, b = brackets(m.start(), m.end())
        if units and a < units[-1][1]:
            continue  # already inside the previous unit
        units.append((a, b))
    spans: list[tuple[int, int]] = []
    for a, b in units:
        if spans:
            between = range(spans[-1][1], a)
            if all((t.kinds[i] == PUNCT and t.words[i] in ",;-") or (t.kinds[i] == WORD and t.words[i] in ("and", "&"))
                   for i in between):
                spans[-1] = (spans[-1][0], b)
                continue
        spans.append((a, b))
    out = []
    for a0, b0 in spans:
        a, b = brackets(a0, b0)
        closes = b < n and t.kinds[b] == PUNCT and t.words[b] in ")]"
        skip_from = a - 1 if a >= 1 and t.kinds[a - 1] == PUNCT and t.words[a - 1] in ",;" and closes else a
        skip_to = b + 1 if b + 1 < n and t.kinds[b] == PUNCT and t.words[b] in ",;" and t.kinds[b + 1] == WORD \
            and t.words[b + 1] in ("and", "or", "&") else b
        assert all(marker[i] or t.kinds[i] in (PUNCT, WORD) for i in range(a, b))
        out.append(Derived(a, b, skip_from, skip_to, _numbers(t.words[a:b])))
    return out


def _passages(paper: PaperText) -> Iterator[tuple[int, Any, Tokens]]:
    for index, passage in enumerate(paper.passages):
        yield index, passage, tokenize(passage.text, passage.markers, passage.breaks)


def test_passage_tokens_index_every_citation_group_where_a_quote_meets_it(papers: list[PaperText]) -> None:
    seen = {"groups": 0, "attached": 0, "glued": 0, "no markers": 0}
    for paper in papers:
        for _index, passage, t in _passages(paper):
            pt = PassageTokens(t)
            assert pt.tokens is t
            want = _derive(t)
            got = [Derived(g.start, g.end, g.skip_from, g.skip_to, g.numbers) for g in pt.groups]
            assert got == want, passage.text[:120]
            # every marker token is in a group, and a group holds nothing but markers, brackets, separators
            # and joiners
            in_groups = {i for d in want for i in range(d.start, d.end)}
            assert pt.group_tokens == in_groups
            assert {i for i, k in enumerate(t.kinds) if k in (MWORD, MPUNCT)} <= in_groups
            assert set(pt.start_at) == {d.start for d in want}
            assert all(pt.start_at[g.start] is g for g in pt.groups)
            assert set(pt.skip_at) == {d.skip_from for d in want if d.skip_from != d.start}
            assert all(pt.skip_at[g.skip_from] is g for g in pt.groups if g.skip_from != g.start)
            assert all(t.words[d.skip_from] in ",;" for d in want if d.skip_from != d.start)
            seen["groups"] += len(want)
            seen["attached"] += sum(d.skip_from != d.start for d in want)
            seen["glued"] += sum(t.space[d.start] == "0" and t.kinds[d.start - 1] == WORD for d in want)
            seen["no markers"] += not passage.markers
    assert seen["groups"] >= 200 and seen["attached"] >= 2 and seen["glued"] >= 50 and seen["no markers"] >= 300, seen


def test_a_marker_of_symbols_only_is_a_citation_group() -> None:
    text = "as shown before \u2020, and later"
    at = text.index("\u2020")
    t = tokenize(text, [(at, at + 1)])
    assert t.kinds.count(MPUNCT) == 1 and MWORD not in t.kinds
    pt = PassageTokens(t)
    marker = t.kinds.index(MPUNCT)
    assert [(g.start, g.end) for g in pt.groups] == [(marker, marker + 1)]
    assert pt.group_tokens == {marker} and set(pt.start_at) == {marker} and pt.skip_at == {}
    plain = PassageTokens(tokenize(text))
    assert plain.groups == [] and plain.start_at == {} and plain.skip_at == {} and plain.group_tokens == set()


# -- quotes that meet a citation group: located by the rules, expected slices from the passage text ----------

_QUOTE_MARKS = "\"'\u201c\u201d\u2018\u2019"


@dataclass(frozen=True)
class Meeting:
    """A citation group of a passage with the words around it: ``left:start`` before it (two to four
    whitespace-delimited words), ``end:right`` after it (up to three), ``glued`` when the group follows a
    word with no space (a superscript)."""

    paper: PaperText
    index: int
    text: str
    tokens: Tokens
    group: Derived
    left: int
    start: int  # the group's first printed character
    end: int
    right: int
    glued: bool
    attached: int  # the offset of the separator attached to the group (left out with it), or ``start``
    list_end: int  # where the text goes on after a list separator that only continued the citations

    @property
    def before(self) -> str:
        return self.text[self.left:self.start].rstrip()

    @property
    def before_out(self) -> str:
        """The words before without the separator attached to the group."""
        return self.text[self.left:self.attached].rstrip()

    @property
    def after(self) -> str:
        return self.text[self.end:self.right]

    def joined(self, middle: str) -> str:
        """The words before, ``middle`` in the group's place, and the words after."""
        return self.before + middle + self.after

    def left_out(self) -> str:
        """The words before and after, the group left out with its attached separator."""
        return self.before_out + (" " if self.after[:1].isalnum() else "") + self.after

    def expected(self, *, kept: bool, tail: int = -1) -> str:
        """The passage's printed text a quote of the words before, the group (``kept``: in some form) and
        the text from ``tail`` (default: the group's end) to ``right`` covers: from the first word before to
        the last character kept (a final full stop is no part of a quote)."""
        tail = self.end if tail < 0 else tail
        rest = self.text[tail:self.right].rstrip(". ")
        if rest:
            return self.text[self.left:tail + len(rest)]
        if kept:
            return self.text[self.left:self.end]
        return self.before_out.rstrip(". ")


def _meetings(paper: PaperText) -> Iterator[Meeting]:
    for index, passage, t in _passages(paper):
        if not passage.markers or BREAK in t.kinds:
            continue
        text = passage.text
        derived = _derive(t)
        spans = [(t.starts[d.start], t.ends[d.end - 1]) for d in derived]
        for d, (start, end) in zip(derived, spans, strict=True):
            glued = start > 0 and text[start - 1].isalnum()
            if glued and end < len(text) and text[end].isalnum():
                continue  # a marker inside a word (no space either side): not a quote's edge
            words_before = list(re.finditer(r"\S+", text[:start]))[-4:]
            words_after = list(re.finditer(r"\S+", text[end:]))[:3]
            if len(words_before) < 2:
                continue
            left = words_before[0].start()
            if text[left] in _QUOTE_MARKS:
                left = words_before[1].start()
                if text[left] in _QUOTE_MARKS:
                    continue
            right = end + words_after[-1].end() if words_after else end
            # a quote's edge never falls inside another citation (a quote may not keep part of one)
            right = max([right, *(b for a, b in spans if a < right < b)])
            first_word = re.match(r"\S+", text[left:])
            assert first_word is not None
            if any(a < left + first_word.end() and left < b for a, b in spans):
                continue  # the quote would begin with a citation, or a word carrying one (see the test below)
            attached = t.starts[d.skip_from]
            list_end = t.starts[d.skip_to] if d.skip_to > d.end else end
            yield Meeting(paper, index, text, t, d, left, start, end, right, glued, attached, list_end)


def _ranges(numbers: frozenset[int]) -> list[str]:
    """``1, 2, 3, 5`` as ``1-3``, ``5``."""
    out: list[str] = []
    run: list[int] = []
    for n in sorted(numbers):
        if run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 2 else ",".join(map(str, run)))
        run = [n]
    out.append(f"{run[0]}-{run[-1]}" if len(run) > 2 else ",".join(map(str, run)))
    return out


def _found(m: Meeting, quote: str, expected: str, what: str, left: int = -1) -> None:
    """The quote is found in the meeting's passage, covering exactly ``expected`` from ``left`` (default:
    the first word before the group); aligned from its first token, it ends at the token after that text."""
    left = m.left if left < 0 else left
    hit = m.paper.locate(quote, within=[m.index])
    assert hit is not None, (what, quote)
    assert hit.passage is m.paper.passages[m.index], (what, quote)
    assert (hit.start, hit.text) == (left, expected), (what, quote)
    assert hit.boundary.ok, (what, quote)
    first = bisect_left(m.tokens.starts, left)
    assert align(quote_tokens(quote), PassageTokens(m.tokens), first) == bisect_left(m.tokens.starts,
                                                                                     left + len(expected))


def _not_found(m: Meeting, quote: str) -> None:
    """The quote is nowhere in the paper, and does not align from the first word before the group."""
    assert m.paper.locate(quote) is None, quote
    assert align(quote_tokens(quote), PassageTokens(m.tokens), bisect_left(m.tokens.starts, m.left)) == -1, quote


def _all(papers: list[PaperText]) -> list[Meeting]:
    out = [m for paper in papers for m in _meetings(paper)]
    assert len(out) >= 200, len(out)
    return out


def test_a_quote_keeps_a_citation_group_as_printed_or_leaves_it_out(papers: list[PaperText]) -> None:
    counts = {"printed": 0, "left out": 0, "attached": 0, "list": 0}
    for m in _all(papers):
        printed = m.text[m.left:m.right]
        _found(m, printed, printed.rstrip(". "), "printed")
        counts["printed"] += 1
        left_out = m.left_out()
        if len(left_out.split()) >= 2:
            _found(m, left_out, m.expected(kept=False), "left out")
            counts["left out"] += 1
        counts["attached"] += m.attached < m.start
        if m.list_end > m.end and m.after.strip():
            # "[20], and high": the list's comma goes with the citation it only continued
            rest = m.text[m.list_end:m.right]
            quote = m.before_out + " " + rest
            _found(m, quote, m.expected(kept=False, tail=m.list_end), "left out with the list's comma")
            counts["list"] += 1
    assert counts["printed"] >= 200 and counts["left out"] >= 200 and counts["list"] >= 5, counts
    assert counts["attached"] >= 2, counts


def test_a_quote_writes_the_cited_numbers_another_way(papers: list[PaperText]) -> None:
    """``(1-4)`` for the paper's ``[1,2,3,4]``; ``outcomes1,2`` (and ``outco- mes1,2``) for a superscript
    printed ``outcomes12``: the same set of numbers is the same citation."""
    counts = {"brackets": 0, "glued": 0, "glued as printed": 0, "hyphenated": 0, "spaced": 0, "first word": 0}
    for m in _all(papers):
        numbers = m.group.numbers
        if numbers is None:
            continue
        printed = m.text[m.start:m.end]
        if m.glued:
            digits = ",".join(_ranges(numbers))
            quote = m.joined(digits)
            _found(m, quote, m.expected(kept=True), "glued digits")
            counts["glued"] += 1
            bare = re.sub(r"\s+", "", printed)
            if bare.isdigit():  # the superscripts' digits as printed, run together
                _found(m, m.joined(bare), m.expected(kept=True), "glued as printed")
                _found(m, m.joined(" " + bare), m.expected(kept=True), "as printed, after a space")
                counts["glued as printed"] += 1
                counts["spaced"] += 1
            word = m.before.split()[-1]
            if word.isalpha():
                # a quote that begins with the glued word, its first letter's case changed (a sentence start)
                at = m.start - len(word)
                quote = _swap(word) + digits + m.after
                first = bisect_left(m.tokens.starts, at)
                end = bisect_left(m.tokens.starts, m.end + len(m.after.rstrip(". ")))
                assert align(quote_tokens(quote), PassageTokens(m.tokens), first) == end, quote
                if len(word) >= 2:  # found by its word without the digits (one letter: no such key)
                    hit = m.paper.locate(quote, within=[m.index])
                    assert hit is not None and hit.passage is m.paper.passages[m.index], quote
                    assert (hit.start, hit.boundary.ok) == (at, True), quote
                counts["first word"] += 1
            word = m.before.split()[-1]
            if len(m.before.split()) >= 3 and word.isalpha() and len(word) >= 6:
                # the glued word broken at a PDF line end: "outco- mes1,2"
                quote = m.before[:-3] + "- " + m.before[-3:] + digits + m.after
                _found(m, quote, m.expected(kept=True), "hyphenated glued digits")
                counts["hyphenated"] += 1
        else:
            for middle in (" (" + ", ".join(_ranges(numbers)) + ")", " [" + ",".join(map(str, sorted(numbers))) + "]",
                           " " + ", ".join(_ranges(numbers)),  # no brackets
                           " ([" + ",".join(_ranges(numbers)) + "])"):  # brackets in brackets
                if re.sub(r"\s", "", middle) == re.sub(r"\s", "", printed):
                    continue
                _found(m, m.joined(middle), m.expected(kept=True), "numbers in brackets")
                counts["brackets"] += 1
    assert counts["brackets"] >= 100 and counts["glued"] >= 30 and counts["hyphenated"] >= 5, counts
    assert counts["glued as printed"] >= 30 and counts["spaced"] >= 30 and counts["first word"] >= 30, counts


def _swap(word: str) -> str:
    return word[0].swapcase() + word[1:]


def test_a_changed_number_or_an_unbalanced_bracket_is_not_the_papers_citation(papers: list[PaperText]) -> None:
    counts = {"changed": 0, "unbalanced": 0}
    for m in _all(papers):
        numbers = m.group.numbers
        if numbers is None or not m.after.strip():
            continue
        other = [*sorted(numbers)[:-1], max(numbers) + 1000]  # one number that the paper does not cite here
        if m.glued:
            quotes = [m.joined(",".join(map(str, other)))]
            word = m.before.split()[-1]
            if word.isalpha() and len(word) > 1:
                # a changed letter in the glued word: not the paper's word, whatever digits follow
                changed = word[:-1] + ("x" if word[-1] != "x" else "y")
                quotes.append(m.before[:-1] + changed[-1] + re.sub(r"\s+", "", m.text[m.start:m.end]) + m.after)
                quote = changed + ",".join(_ranges(numbers)) + m.after
                for q in (quote, _swap(quote)):
                    assert align(quote_tokens(q), PassageTokens(m.tokens),
                                 bisect_left(m.tokens.starts, m.start - len(word))) == -1, q
        else:
            quotes = [m.joined(" (" + ", ".join(map(str, other)) + ")"),
                      m.joined(" [" + ",".join(map(str, other)) + "]")]
            counts["unbalanced"] += 2
            quotes += [m.joined(" " + ", ".join(_ranges(numbers)) + ")"),  # a closing bracket never opened
                       m.joined(" " + ", ".join(_ranges(numbers)) + "]")]
            if m.after.lstrip()[:1] not in (")", "]"):
                quotes += [m.joined(" (" + ", ".join(_ranges(numbers))),  # an opening bracket never closed
                           m.joined(" ((" + ", ".join(_ranges(numbers)) + ")")]
                counts["unbalanced"] += 2
            quotes.append(m.joined(" , " + ", ".join(_ranges(numbers))))  # a comma the paper does not print
            if len(numbers) == 2:
                quotes.append(m.joined(" (" + ".".join(map(str, sorted(numbers))) + ")"))  # one number, 1.2
        counts["changed"] += 1
        for quote in quotes:
            _not_found(m, quote)
    assert counts["changed"] >= 100 and counts["unbalanced"] >= 100, counts


def _residue(m: Meeting) -> str:
    """The group's text with its markers taken out (what stripping ``<xref>`` elements leaves)."""
    t = m.tokens
    kept = [t.words[i] for i in range(m.group.start, m.group.end) if t.kinds[i] not in (MWORD, MPUNCT)]
    return " ".join(kept)


def test_a_quote_keeps_what_stripping_the_markers_leaves(papers: list[PaperText]) -> None:
    """``adenocarcinomas [,,,]. For`` for ``adenocarcinomas [1,2,3,4]. For``; ``activity ,. Blocking`` for
    ``activity [1], [2]. Blocking``; or only part of it (``[]``)."""
    counts = {"all": 0, "part": 0, "ends": 0}
    for m in _all(papers):
        residue = _residue(m)
        if not residue or not m.after.strip():
            continue
        _found(m, m.joined(" " + residue), m.expected(kept=True), "residue")
        counts["all"] += 1
        brackets = "".join(w for w in residue.split() if w in "()[]")
        if brackets and brackets != residue.replace(" ", ""):
            _found(m, m.joined(" " + brackets), m.expected(kept=True), "part of the residue")
            counts["part"] += 1
        if len(residue.split()) >= 2 and m.text.count(m.before) == 1:
            # the quote ends with the residue's first token: it covers the group
            quote = m.before + " " + residue.split()[0]
            _found(m, quote, m.text[m.left:m.end], "the residue's first token at the end")
            counts["ends"] += 1
    assert counts["all"] >= 40 and counts["part"] >= 20 and counts["ends"] >= 20, counts


def test_a_quote_starts_or_ends_at_a_citation_group(papers: list[PaperText]) -> None:
    counts = {"starts": 0, "ends": 0}
    for m in _all(papers):
        printed = m.text[m.start:m.end]
        quote = m.text[m.start:m.right]
        if not m.glued and printed[:1] in "([" and len(m.after.split()) >= 2 and m.text.count(quote) == 1:
            _found(m, quote, quote.rstrip(". "), "starts at the group", left=m.start)
            counts["starts"] += 1
        quote = m.text[m.left:m.end]
        if not quote.endswith("."):
            _found(m, quote, quote, "ends at the group")
            counts["ends"] += 1
    assert counts["starts"] >= 100 and counts["ends"] >= 200, counts


def test_a_quote_across_two_citations_writes_both_another_way(papers: list[PaperText]) -> None:
    """Two citation groups of one sentence, both written another way (glued digits for superscripts,
    numbers in brackets otherwise): the whole quote is the passage text from its first to its last word."""
    count = 0
    meetings = _all(papers)
    for m, n in itertools.pairwise(meetings):
        if m.paper is not n.paper or m.index != n.index or m.group.numbers is None or n.group.numbers is None:
            continue
        between = m.text[m.end:n.start]
        if not between.strip() or n.start - m.end > 150 or re.search(r"[.;:!?]\s", between):
            continue
        if not n.after.strip() or n.attached < n.start or m.list_end > m.end:
            continue

        def written(x: Meeting) -> str:
            numbers = x.group.numbers
            assert numbers is not None
            return ",".join(_ranges(numbers)) if x.glued else " (" + ", ".join(_ranges(numbers)) + ")"

        quote = m.before + written(m) + (between if n.glued else between.rstrip()) + written(n) + n.after
        expected = m.text[m.left:n.end + len(n.after.rstrip(". "))]
        _found(m, quote, expected, "two citations")
        count += 1
    assert count >= 20, count


def _passage(text: str, markers: list[str]) -> PassageTokens:
    """A made-up passage whose ``markers`` are these marker texts, found in order."""
    spans, at = [], 0
    for mark in markers:
        at = text.index(mark, at)
        spans.append((at, at + len(mark)))
        at += len(mark)
    return PassageTokens(tokenize(text, spans))


@pytest.mark.parametrize(("text", "markers", "quote", "found"), [
    # superscripts printed with a space between them ("<sup>7</sup> <sup>22</sup>"): the digits run together
    # are another number, not the same citation
    ("as reported7 22 before", ["7", " 22"], "as reported722 before", False),
    ("as reported7 22 before", ["7", " 22"], "as reported7 22 before", True),
    ("as reported7 22 before", ["7", " 22"], "as reported7,22 before", True),
    # a group joined by "and": kept as printed after the glued first number
    ("as reported5 and 6 before", ["5", "6"], "as reported5 and 6 before", True),
    ("as reported5 and 6 before", ["5", "6"], "as reported5 and 7 before", False),
    # a group with a marker that is not a number: only as printed
    ("as reported7,a before", ["7", "a"], "as reported7,a before", True),
    ("as reported7,a before", ["7", "a"], "as reported7,b before", False),
    ("as reported7,a before", ["7", "a"], "as reported7 before", False),
    ("as reported7,a before", ["7", "a"], "as reported before", True),
    # a glued bracket citation written as superscript digits
    ("as reported[7] before", ["[7]"], "as reported7 before", True),
    ("as reported[7] before", ["[7]"], "as reported8 before", False),
    # a quote that stops inside a glued range
    ("as reported5-7 before", ["5-7"], "as reported5-", False),
    ("as reported5-7 before", ["5-7"], "as reported5-7 before", True),
    # a group left out with its attached separator, then another citation
    ("as reported (in mice, [3]) and later [4] in", ["[3]", "[4]"], "as reported (in mice) and later [4] in", True),
    ("as reported (in mice, [3]) and later [4] in", ["[3]", "[4]"], "as reported (in mice) and later in", True),
    ("as reported (in mice, [3]) and later [4] in", ["[3]", "[4]"], "as reported (in mice [3]) and later in", False),
    ("as reported (in mice, [3]) and later [4] in", ["[3]", "[4]"], "as reported (in mice; [3]) and later in", False),
    # a word the paper splits with a citation marker and no space on either side
    ("\u5176\u4ed6\u7814\u7a76[12]\u4e5f\u53d1\u73b0\u4e86", ["[12]"],
     "\u5176\u4ed6\u7814\u7a76\u4e5f\u53d1\u73b0\u4e86", True),
    ("\u5176\u4ed6\u7814\u7a76[12]\u4e5f\u53d1\u73b0\u4e86", ["[12]"],
     "\u5176\u4ed6\u7814\u7a76[12]\u4e5f\u53d1\u73b0\u4e86", True),
    ("\u5176\u4ed6\u7814\u7a76[12]\u4e5f\u53d1\u73b0\u4e86", ["[12]"],
     "\u5176\u4ed6\u7814\u7a76\u4e5f\u53d1\u73b0", False),
    ("\u5176\u4ed6\u7814\u7a76[12] \u4e5f\u53d1\u73b0\u4e86", ["[12]"],
     "\u5176\u4ed6\u7814\u7a76\u4e5f\u53d1\u73b0\u4e86", False),
    ("\u5176\u4ed6\u7814\u7a76 [12]\u4e5f\u53d1\u73b0\u4e86", ["[12]"],
     "\u5176\u4ed6\u7814\u7a76\u4e5f\u53d1\u73b0\u4e86", False),
    ("\u5176\u4ed6\u7814\u7a76[12]", ["[12]"], "\u5176\u4ed6\u7814\u7a76\u4e5f", False),
    ("\u5176\u4ed6\u7814\u7a76[12]. \u4e5f", ["[12]"], "\u5176\u4ed6\u7814\u7a76. \u4e5f", True),
    ("Alpha[3]beta gamma", ["[3]"], "alphabeta gamma", True),
    ("Alpha[3]beta gamma", ["[3]"], "Alphabeta gamma", True),
    ("Alpha[3]beta gamma", ["[3]"], "Alpha beta gamma", True),  # the same tokens, the group left out
    ("gamma Alpha[3]beta", ["[3]"], "gamma alphabeta", False),
    ("gamma Alpha[3]beta delta", ["[3]"], "gamma Alphabeta delta", True),
    # adjacent markers printed without a space ("[<xref>47</xref><xref>48</xref>]" reads "[4748]")
    ("as reported [4748] before", ["47", "48"], "as reported [4748] before", True),
    ("as reported [4748] before", ["47", "48"], "as reported [47,48] before", True),
    ("as reported [1 2] before", ["1", "2"], "as reported [12] before", False),
    # quotes that stop inside a citation, or change it
    ("as reported [5-7] before", ["[5-7]"], "as reported [4-", False),
    ("[12] 12 mice", ["[12]"], "[12", False),
    ("[12] 3 and", ["[12]"], "[3 and", False),
    ("4748 4749 x", ["47", "48"], "4749 4749 x", False),  # a changed citation number, then the paper's words
    ("as reported7 reported7 in", ["7"], "as reported7 in", False),  # a word of the paper skipped
    # a name in a citation broken at a line end, as the quote's last word
    ("as shown by Borghaei and Reckamp", ["Borghaei and Reckamp"], "as shown by Borghaei and Reck- amp", True),
    ("as shown by Borghaei and Reckamp", ["Borghaei and Reckamp"], "as shown by Borghaei and Reck-amp", False),
    # a citation left out with the list's comma, then another citation
    ("as in mice [3], and rats [4] before", ["[3]", "[4]"], "as in mice and rats [4] before", True),
    ("as in mice [3], and rats [4] before", ["[3]", "[4]"], "as in mice and rats before", True),
    # glued superscripts in another order, then another citation
    ("as reported7,22 and later [4] in", ["7", "22", "[4]"], "as reported22,7 and later [4] in", True),
    ("as reported7,22 and later [4] in", ["7", "22", "[4]"], "as reported22,8 and later [4] in", False),
])
def test_a_citation_in_a_made_up_passage_is_read_by_the_rules(text: str, markers: list[str], quote: str,
                                                            found: bool) -> None:
    paper = _passage(text, markers)
    assert align(quote_tokens(quote), paper, 0) == (len(paper.tokens) if found else -1)


def test_a_quote_cut_inside_a_citation_is_not_the_papers_text(papers: list[PaperText]) -> None:
    """``adenocarcinomas [1`` for ``adenocarcinomas [1,2,3,4]``, ``outcomes1`` for ``outcomes12``,
    ``clinical (Hammers`` for ``clinical (Hammers et al., 2017)``: part of a citation is neither the
    citation as printed nor what stripping its markers leaves."""
    count = 0
    for m in _all(papers):
        t, d = m.tokens, m.group
        inner = [i for i in range(d.start, d.end - 1) if t.kinds[i] == MWORD]
        if not inner or m.attached < m.start:
            continue
        quote = m.text[m.left:t.ends[inner[0]]]
        if quote.endswith("."):
            continue
        _not_found(m, quote)
        count += 1
    assert count >= 150, count


def test_only_the_first_letter_of_a_quote_may_change_case_and_a_word_may_break_at_a_line_end(
        papers: list[PaperText]) -> None:
    """Around every citation group: the quote's first letter in the other case is the same quote; the
    second word's is not; ``repre- sented`` (a PDF line end) is ``represented``, first word or not, and in
    an author's name inside a citation kept as printed; ``repre-sented`` is not ``represented``."""
    counts = {"case": 0, "second": 0, "broken": 0, "in a citation": 0, "last broken": 0}
    for m in _all(papers):
        printed = m.text[m.left:m.right]
        words = printed.split(" ")
        if words[0].isalpha() and len(words) >= 3:
            _found(m, _swap(printed), printed.rstrip(". "), "first letter's case")
            counts["case"] += 1
            if len(words[0]) >= 6:
                broken = words[0][:3] + "- " + words[0][3:] + printed[len(words[0]):]
                _found(m, broken, printed.rstrip(". "), "first word broken")
                _found(m, _swap(broken), printed.rstrip(". "), "first word broken, case changed")
                _not_found(m, words[0][:3] + "-" + words[0][3:] + printed[len(words[0]):])
                counts["broken"] += 1
                # a broken first word that is not the paper's word, whatever its case
                first = bisect_left(m.tokens.starts, m.left)
                for changed in (broken.replace("- ", "- x", 1), _swap(broken.replace("- ", "- x", 1))):
                    assert align(quote_tokens(changed), PassageTokens(m.tokens), first) == -1, changed
            if words[1][:1].isalpha() and words[1][:1].swapcase() != words[1][:1]:
                _not_found(m, " ".join([words[0], _swap(words[1]), *words[2:]]))
                counts["second"] += 1
        if len(words) >= 3 and words[1].isalpha() and len(words[1]) >= 6 and m.left + len(words[0]) + 1 < m.start:
            broken = " ".join([words[0], words[1][:3] + "- " + words[1][3:], *words[2:]])
            _found(m, broken, printed.rstrip(". "), "second word broken")
            _not_found(m, " ".join([words[0], words[1][:3] + "-" + words[1][3:], *words[2:]]))
            counts["broken"] += 1
        last = m.after.split(" ")[-1]
        if len(m.after.split()) >= 2 and last.isalpha() and len(last) >= 6:
            # the quote's last word broken at a line end
            quote = printed[:-3] + "- " + printed[-3:]
            _found(m, quote, printed, "last word broken")
            counts["last broken"] += 1
        if m.group.numbers is None:
            # an author's name in the citation, broken at a line end: "(Borg- haei et al., 2015)"
            name = re.search(r"[A-Za-z]{6,}", m.text[m.start:m.end])
            if name:
                at = m.start + name.start() + 3
                quote = m.text[m.left:at] + "- " + m.text[at:m.right]
                _found(m, quote, printed.rstrip(". "), "a name in a citation broken")
                counts["in a citation"] += 1
    assert counts["case"] >= 100 and counts["second"] >= 50 and counts["broken"] >= 100, counts
    assert counts["in a citation"] >= 20 and counts["last broken"] >= 20, counts


# -- boundaries: where a match starts and ends in the paper's words ---------------------------------------

_OPEN_TEXT = "([{\"'\uff08\uff3b\u2018\u201c"
_CLOSE_TEXT = ")]}\"'.,;:!?\uff09\uff3d\u2019\u201d\u3002\uff0c"


def _edge(word: str, marks: str, *, end: bool) -> int:
    """How many characters at the start (or ``end``) of a word read as one of ``marks`` once canonical
    (a prime reads as a quotation mark)."""
    n = 0
    for ch in reversed(word) if end else word:
        canon = canonical(ch)[0]
        if not canon or any(c not in marks for c in canon):
            break
        n += 1
    return n


def _words(text: str, breaks: tuple[int, ...]) -> Iterator[tuple[int, int]]:
    """Whitespace-delimited words, also cut where a table cell or a line ends (a break)."""
    for w in re.finditer(r"\S+", text):
        cuts = [w.start(), *sorted(c for c in breaks if w.start() < c < w.end()), w.end()]
        yield from itertools.pairwise(cuts)


def test_a_match_that_starts_or_ends_inside_a_word_names_the_word_and_the_cut(papers: list[PaperText]) -> None:
    """Every whitespace-delimited word of several tokens (``non-small``, ``(p.V600E)``, ``cells.``,
    ``non-small12`` with a superscript citation, a word in a table cell), in every passage: a match from
    each of its inner tokens to the word's end starts inside the word unless only brackets or quotation
    marks come before; a match from the word's start to each inner token ends inside it unless only
    closing punctuation comes after. The word is named without those and without its citation markers,
    with the part the match left out; whole words are clean."""
    counts = {"starts": 0, "ends": 0, "clean": 0, "cited": 0, "in cells": 0}
    for paper in papers:
        for _index, passage, t in _passages(paper):
            pt = PassageTokens(t)
            text = passage.text
            in_groups = {i for d in _derive(t) for i in range(d.start, d.end)}
            for ws, we in _words(text, passage.breaks):
                a, b = bisect_left(t.starts, ws), bisect_left(t.starts, we)
                while a < b and t.kinds[a] == BREAK:
                    a += 1
                if b - a > 8 or b - a < 1 or (a > 0 and a - 1 in in_groups) or a in in_groups:
                    continue
                cited = [i for i in range(a, b) if i in in_groups]
                if cited:
                    # a citation glued to the word's end ("non-small12."): the word ends where it begins
                    g0 = cited[0]
                    if any(i not in in_groups and t.words[i] not in ")]}\"'.,;:!?" for i in range(g0, b)):
                        continue
                    b, we = g0, t.starts[g0]
                    counts["cited"] += 1
                elif b < len(t.words) and b in in_groups:
                    continue
                word = text[ws:we]
                core_start = ws + _edge(word, "([{\"'", end=False)
                core_end = we - _edge(word, ")]}\"'.,;:!?", end=True)
                if core_start >= core_end:
                    continue
                assert boundaries(pt, text, a, b).ok  # the whole word
                counts["clean"] += 1
                counts["in cells"] += BREAK in t.kinds
                for i in range(a + 1, b):
                    got = boundaries(pt, text, i, b)
                    if t.starts[i] <= core_start:
                        assert got.ok, (word, i)
                    else:
                        want = Boundary(False, "starts", text[core_start:we].rstrip(_CLOSE_TEXT),
                                        text[core_start:t.starts[i]])
                        assert got == want, (word, i)
                        counts["starts"] += 1
                    got = boundaries(pt, text, a, i)
                    if t.starts[i] >= core_end:
                        assert got.ok, (word, i)
                    else:
                        want = Boundary(False, "ends", text[ws:core_end].lstrip(_OPEN_TEXT), text[t.starts[i]:core_end])
                        assert got == want, (word, i)
                        counts["ends"] += 1
    assert counts["starts"] >= 1000 and counts["ends"] >= 1000 and counts["clean"] >= 10000, counts
    assert counts["cited"] >= 50 and counts["in cells"] >= 500, counts


def test_a_citation_marker_between_two_words_is_an_edge_of_both() -> None:
    """A superscript printed between two words with no space (made up: no paper of the corpus prints one):
    a match may end at the marker or start after it without cutting a word."""
    text = "\u5176\u4ed6\u7814\u7a7612\u4e5f\u53d1\u73b0\u4e86"
    paper = PassageTokens(tokenize(text, [(4, 6)]))
    assert paper.tokens.words == ["\u5176\u4ed6\u7814\u7a76", "12", "\u4e5f\u53d1\u73b0\u4e86"]
    assert boundaries(paper, text, 0, 1).ok and boundaries(paper, text, 0, 2).ok
    assert boundaries(paper, text, 1, 3).ok and boundaries(paper, text, 2, 3).ok
