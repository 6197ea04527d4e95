"""Aligning a quote's tokens with a passage's tokens: what "the quote is in the paper" means.

A quote matches at paper token ``s`` when its tokens (:mod:`bioevidence.text.tokens`) equal the
paper's from ``s`` on, one by one, with exactly these liberties:

* the first letter's case (a sentence start quoted mid-sentence, or the reverse);
* PDF end-of-line hyphenation in the quote: ``repre- sented`` (hyphen, then whitespace) equals
  the paper's ``represented``; ``repre-sented`` is already equal to a printed ``repre-sented``;
* at a citation group of the paper (:func:`~bioevidence.text.tokens.groups`) the quote may
  - leave the group out, with the separator attached to it;
  - keep it as printed;
  - keep what a pipeline leaves when it strips ``<xref>`` elements (``AA,, has``, ``growth,.``),
    or part of it (only brackets, separators and ``and`` are ever left);
  - write the same citation numbers another way (``(12, 13)`` or superscript-as-digits
    ``mutations12,13`` for the paper's ``[12,13]``): the set of numbers must be the same.
  A kept marker that is not the paper's (a changed number) matches nothing.

Everything else must be equal: words (case included), numbers, punctuation, symbols.
:func:`boundaries` then checks that a match starts and ends at the edges of the paper's
whitespace-delimited words (a quote cut inside ``non-small`` or ``ineffective`` is not the
paper's text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...text.tokens import BREAK, MPUNCT, MWORD, PUNCT, WORD, Group, Tokens, cited_numbers, groups

_OPENERS = frozenset("([{\"'")
_CLOSERS = frozenset(")]}\"'.,;:!?")
_NUMERIC = frozenset({",", ";", "-", "[", "]", "(", ")"})
#: Prefixes that negate the word they begin (dropping one reverses the meaning).
NEGATING_PREFIXES = ("non", "un", "in", "im", "ir", "il", "dis")
# Words that begin with those letters without being negations of a word the paper uses.
_NOT_NEGATIONS = frozenset({
    "information", "increase", "increased", "increases", "indicate", "indicated", "indicates", "include",
    "included", "includes", "including", "induce", "induced", "induces", "inform", "informed", "interest",
    "important", "improve", "improved", "impact", "display", "displayed", "disease", "diseases", "distinct",
    "discuss", "discussed", "distribution", "distributed", "dissect", "insert", "inserted", "intake", "instance",
    "involve", "involved", "involves", "invasion", "inhibit", "inhibitor", "inhibitors", "inhibited", "input",
    "unit", "units", "union", "inside", "intense", "intensity", "interaction", "interactions", "interval",
    "dispersed", "disposition", "impair", "impaired", "imply", "implies", "implied", "import", "irradiation",
    "illustrate", "illustrated", "intend", "intended", "index", "indirect", "infection", "inflammation",
    "unlike", "unless", "until", "under", "upon",
})
#: Brackets and quotation marks around a word (ASCII, full-width and typographic).
OPENING = "([{\"'\uff08\uff3b\u2018\u201c"
CLOSING = ")]}\"'.,;:!?\uff09\uff3d\u2019\u201d\u3002\uff0c"


def negates(cut: str, kept: str, vocabulary: frozenset[str]) -> bool:
    """Whether cutting ``cut`` off the front of a word drops a negation: ``non-`` always, the other
    prefixes when the rest (``kept``) is a word the paper uses on its own (``effective`` in a paper
    that says ``ineffective`` and ``effective``) and the whole word is not a known false friend."""
    cut = re.split(r"[/\uff08(\[]", cut)[-1]  # "reduced/non-functional": the alternative after the slash
    bare = cut.rstrip("-\u2010\u2011").lower()
    if bare not in NEGATING_PREFIXES:
        return False
    stem = re.split(r"[-\u2010\u2011/]", kept, maxsplit=1)[0].lower()
    if cut.endswith(("-", "\u2010", "\u2011")) and bare == "non":
        return True
    return (bare + stem) not in _NOT_NEGATIONS and len(stem) >= 4 and stem in vocabulary


def _swap_first(word: str) -> str:
    if not word or not word[0].isalpha():
        return word
    return (word[0].lower() if word[0].isupper() else word[0].upper()) + word[1:]


class PassageTokens:
    """A passage's tokens with its citation groups indexed by where a quote may meet them."""

    __slots__ = ("group_tokens", "groups", "skip_at", "start_at", "tokens")

    def __init__(self, tokens: Tokens) -> None:
        self.tokens = tokens
        self.groups: list[Group] = groups(tokens) if (MWORD in tokens.kinds or MPUNCT in tokens.kinds) else []
        self.start_at = {g.start: g for g in self.groups}
        self.skip_at = {g.skip_from: g for g in self.groups if g.skip_from != g.start}
        self.group_tokens: set[int] = set()
        for g in self.groups:
            self.group_tokens.update(range(g.start, g.end))


@dataclass(frozen=True, slots=True)
class Boundary:
    """How a match sits in the paper's words: ``ok``, or the word it cuts and where."""

    ok: bool
    where: str = ""  # "starts" | "ends"
    word: str = ""  # the whole word of the paper, as printed
    cut: str = ""  # the part of the word the quote left out
    negation: bool = False  # the left-out part is a negating prefix


def align(quote: Tokens, paper: PassageTokens, start: int) -> int:
    """The paper token index where the quote's match ending is (exclusive), or ``-1``.

    ``start`` is the paper token the quote's first token is compared with.
    """
    memo: dict[tuple[int, int], int] = {}
    return _walk(quote, paper, 0, start, memo)


def _walk(q: Tokens, paper: PassageTokens, qi: int, pi: int, memo: dict[tuple[int, int], int]) -> int:
    p = paper.tokens
    nq, np_ = len(q.words), len(p.words)
    while True:
        if qi == nq:
            return pi
        group = paper.start_at.get(pi)
        attached = paper.skip_at.get(pi)
        if group is not None or attached is not None:
            key = (qi, pi)
            if key in memo:
                return memo[key]
            memo[key] = -1
            result = _at_group(q, paper, qi, pi, group, attached, memo)
            memo[key] = result
            return result
        if pi >= np_ or p.kinds[pi] == BREAK:
            return -1
        qw, pw = q.words[qi], p.words[pi]
        if qw == pw or (qi == 0 and _swap_first(qw) == pw):
            qi += 1
            pi += 1
            continue
        if q.kinds[qi] == WORD and p.kinds[pi] == WORD and len(qw) > len(pw):
            # a word the paper splits with a citation marker and no space ("其他研究[12]也发现")
            split = paper.start_at.get(pi + 1)
            if split is not None and p.space[split.start] == "0" and split.end < np_ \
                    and p.kinds[split.end] == WORD and p.space[split.end] == "0" \
                    and (qw == pw + p.words[split.end] or (qi == 0 and _swap_first(qw) == pw + p.words[split.end])):
                qi += 1
                pi = split.end + 1
                continue
        if q.kinds[qi] == WORD and p.kinds[pi] == WORD:
            # PDF hyphenation: "repre- sented" is "represented"
            if qi + 2 < nq and q.words[qi + 1] == "-" and q.space[qi + 2] == "1" and q.kinds[qi + 2] == WORD:
                joined = qw + q.words[qi + 2]
                if joined == pw or (qi == 0 and _swap_first(joined) == pw):
                    qi += 3
                    pi += 1
                    continue
            # a superscript citation copied as digits glued to the word: "mutations12" (or "repor- ted12")
            glued = paper.start_at.get(pi + 1)
            if glued is not None and p.space[glued.start] == "0":
                for word, used in ((qw, 1), (qw + q.words[qi + 2] if qi + 2 < nq and q.words[qi + 1] == "-"
                                    and q.space[qi + 2] == "1" else "", 3)):
                    if len(word) > len(pw) and (word.startswith(pw) or (qi == 0 and _swap_first(word).startswith(pw))):
                        rest = word[len(pw):]
                        if rest.isdigit():
                            end = _glued(q, paper, qi + used - 1, rest, glued, memo)
                            if end >= 0:
                                return end
        return -1


def _at_group(q: Tokens, paper: PassageTokens, qi: int, pi: int, group: Group | None, attached: Group | None,
              memo: dict[tuple[int, int], int]) -> int:
    p = paper.tokens
    if attached is not None:
        # leave the separator and the group out, or read the separator as text and go on
        end = _walk(q, paper, qi, attached.end, memo)
        if end >= 0:
            return end
        if q.words[qi] == p.words[pi] and q.kinds[qi] == PUNCT:
            return _walk(q, paper, qi + 1, pi + 1, memo)
        return -1
    assert group is not None
    tokens = range(group.start, group.end)
    # 1. kept as printed
    kept = _printed(q, qi, p, group.start, group.end)
    if kept >= 0:
        end = _walk(q, paper, kept, group.end, memo)
        if end >= 0:
            return end
    # 2. the same numbers, written another way
    if group.numbers:
        end = _numbers_then(q, paper, qi, group, memo)
        if end >= 0:
            return end
    # 3. what is left when the <xref> elements are stripped (brackets, separators, "and"), or part of it
    residue = [p.words[i] for i in tokens if p.kinds[i] not in (MWORD, MPUNCT)]
    k = qi
    for word in residue:
        if k < len(q.words) and q.words[k] == word:
            k += 1
    if k > qi:
        end = _walk(q, paper, k, group.end, memo)
        if end >= 0:
            return end
    # 4. left out (with a list separator that only continued the citations, when there is one)
    end = _walk(q, paper, qi, group.end, memo)
    if end < 0 and group.skip_to > group.end:
        end = _walk(q, paper, qi, group.skip_to, memo)
    return end


def _glued(q: Tokens, paper: PassageTokens, qi: int, rest: str, group: Group, memo: dict[tuple[int, int], int]
           ) -> int:
    """The quote wrote the group's first marker(s) glued to the previous word (``reported7,22``):
    as printed (``rest`` is the group's first glued tokens), or the same numbers."""
    p = paper.tokens
    acc = ""
    for k in range(group.start, group.end):
        if k > group.start and p.space[k] == "1":
            break
        acc += p.words[k]
        if acc == rest:
            kept = _printed(q, qi + 1, p, k + 1, group.end)
            if kept >= 0:
                end = _walk(q, paper, kept, group.end, memo)
                if end >= 0:
                    return end
        if not rest.startswith(acc):
            break
    if group.numbers:
        return _numbers_then(q, paper, qi + 1, group, memo, first=rest)
    return -1


def _printed(q: Tokens, qi: int, p: Tokens, start: int, end: int) -> int:
    """Quote index after matching paper tokens ``start:end`` as printed (PDF hyphenation allowed
    inside, as anywhere), or ``-1``."""
    pi = start
    nq = len(q.words)
    while pi < end:
        if qi >= nq:
            return -1
        qw, pw = q.words[qi], p.words[pi]
        if qw == pw:
            qi += 1
            pi += 1
        elif qi + 2 < nq and q.words[qi + 1] == "-" and q.space[qi + 2] == "1" and qw + q.words[qi + 2] == pw:
            qi += 3
            pi += 1
        elif qw.startswith(pw) and len(qw) > len(pw):
            # adjacent markers printed without a space ("[<xref>47</xref><xref>48</xref>]" reads "[4748]")
            acc, k = pw, pi + 1
            while k < end and p.space[k] == "0" and len(acc) < len(qw) and qw.startswith(acc + p.words[k]):
                acc += p.words[k]
                k += 1
            if acc != qw:
                return -1
            qi += 1
            pi = k
        else:
            return -1
    return qi


def _numbers_then(q: Tokens, paper: PassageTokens, qi: int, group: Group, memo: dict[tuple[int, int], int],
                  *, first: str = "") -> int:
    """Quote tokens from ``qi`` that cite exactly the group's numbers, then the rest of the quote.

    ``first`` is a number glued to the previous word (a superscript copied as digits)."""
    nq = len(q.words)
    k = qi
    while k < nq and (q.words[k].isdigit() or (q.kinds[k] == PUNCT and q.words[k] in _NUMERIC)):
        k += 1
    if not first and (k == qi or not (q.words[qi].isdigit() or q.words[qi] in ("[", "("))):
        return -1
    lead = [first] if first else []
    for stop in range(k, qi - 1, -1):  # the longest run first; a run ends at a digit or a closing bracket
        if stop == qi and not first:
            continue
        if stop > qi and not (q.words[stop - 1].isdigit() or q.words[stop - 1] in ("]", ")")):
            continue
        words = [*lead, *q.words[qi:stop]]
        if _balanced(words) and cited_numbers(words) == group.numbers:
            end = _walk(q, paper, stop, group.end, memo)
            if end >= 0:
                return end
    return -1


def _balanced(words: list[str]) -> bool:
    depth = 0
    for w in words:
        if w in ("[", "("):
            depth += 1
        elif w in ("]", ")"):
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def boundaries(paper: PassageTokens, text: str, start: int, end: int) -> Boundary:
    """Whether tokens ``start:end`` begin and end at edges of the paper's words (see module doc)."""
    p = paper.tokens
    n = len(p.words)

    def attached(i: int) -> bool:  # token i continues the word of token i - 1
        return 0 < i < n and p.space[i] == "0" and p.kinds[i] != BREAK and p.kinds[i - 1] != BREAK \
            and i not in paper.group_tokens and (i - 1) not in paper.group_tokens

    if attached(start):
        ws = start
        while attached(ws):
            ws -= 1
        core = ws
        while core < start and p.kinds[core] == PUNCT and p.words[core] in _OPENERS:
            core += 1
        if start > core:
            we = start
            while we + 1 < n and attached(we + 1):
                we += 1
            word = text[p.starts[core]:p.ends[we]].rstrip(CLOSING)
            cut = text[p.starts[core]:p.starts[start]]
            return Boundary(False, "starts", word, cut)
    if end < n and attached(end):
        we = end
        while we + 1 < n and attached(we + 1):
            we += 1
        core_end = we + 1
        while core_end > end and p.kinds[core_end - 1] == PUNCT and p.words[core_end - 1] in _CLOSERS:
            core_end -= 1
        if end < core_end:
            ws = end - 1
            while attached(ws):
                ws -= 1
            word = text[p.starts[ws]:p.ends[core_end - 1]].lstrip(OPENING)
            cut = text[p.starts[end]:p.ends[core_end - 1]]
            return Boundary(False, "ends", word, cut)
    return Boundary(True)
