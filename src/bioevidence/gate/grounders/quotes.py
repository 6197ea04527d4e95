"""Quote matching against one paper's passages, and the diagnosis when a quote is not there.

:class:`PaperText` holds a paper's passages with their tokens (:mod:`bioevidence.text.tokens`),
built once per pinned paper and process (and cached on disk by the paper's SHA-256), never once
per record. :meth:`PaperText.locate` finds a quote token by token (:mod:`.align`): in the passages
a locator names first, else in the title, abstract and body, else anywhere else a reader can read
it (captions, tables, footnotes, back matter, the reference list). The match is a byte-exact slice
of the passage's printed text.

When a quote is not found, :meth:`PaperText.inside_word` says whether it starts or ends inside a
word of the paper (``'RAF-selective' is cut from 'BRAF-selective'``, or a dropped negating prefix),
and :meth:`PaperText.closest` names the closest passage and what differs, word by word. When a
quote is found but stops mid-sentence just before a negation or restriction,
:meth:`PaperText.cut_before_cue` returns the rest of the sentence.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ...text.jats import PARTS, Article, Passage
from ...text.normalize import normalize, sentence_spans
from ...text.tokens import BREAK, MWORD, WORD, Tokens, tokenize
from .align import CLOSING, NEGATING_PREFIXES, OPENING, Boundary, PassageTokens, align, boundaries, negates
from .locators import anchors

FORMAT_VERSION = 4  # 4: a passage's <sup>/<sub> spans are kept (3 dropped them)
_TOKEN = re.compile(r"\S+")
_GLUED_NUMBER = re.compile(r"([^\W\d_][\w-]*?[^\W\d_])\d+")  # a word with citation digits glued to its end
_WORD = re.compile(r"[0-9a-z]+")
_QUOTES = ("\"'", "\u201c\u201d\u2018\u2019")
#: What a quote must not stop just before: negations and restrictions of the claim.
CUE = re.compile(
    r"^,?\s*(?:not\b|no\b|none\b|never\b|without\b|except\b|excluding\b|but not\b|unless\b|only\b|"
    r"in (?:mice|mouse|rats?|murine|zebrafish|dogs?|animals?|vitro|cell lines?|xenografts?)\b|"
    r"failed\b|did not\b|was not\b|were not\b|is not\b|are not\b)",
    re.IGNORECASE,
)
_PRIORITY = {part: index for index, part in enumerate(PARTS)}


def article_to_plain(article: Article) -> dict[str, Any]:
    """An :class:`Article` with its passages' tokens, as plain values (for the marshal cache)."""
    return {
        "title": article.title,
        "passages": tuple((p.id, p.kind, p.section, p.section_type, p.text, p.match, p.part, p.label,
                           p.markers, p.breaks, p.aliases, p.cited, p.scripts) for p in article.passages),
        "tokens": tuple(tokenize(p.text, p.markers, p.breaks).to_plain() for p in article.passages),
        "ids": dict(article.ids),
        "markers": tuple(sorted(article.markers)),
    }


def article_from_plain(raw: dict[str, Any]) -> tuple[Article, list[Tokens]]:
    passages = tuple(Passage(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], tuple((m[0], m[1]) for m in p[8]),
                             tuple(p[9]), tuple(p[10]), (p[11][0], p[11][1]) if p[11] else None,
                             tuple((a, b, kind) for a, b, kind in p[12]))
                     for p in raw["passages"])
    article = Article(raw["title"], passages, dict(raw["ids"]), frozenset(raw["markers"]))
    return article, [Tokens.from_plain(t) for t in raw["tokens"]]


def quote_tokens(quote: str) -> Tokens:
    """A quote's tokens: outer quotation marks and a final full stop are not part of it."""
    text = quote.strip()
    for opening in _QUOTES:
        if len(text) > 2 and text[0] in opening and text[-1] in opening:
            text = text[1:-1].strip()
            break
    while text.endswith((".", " ")):
        text = text[:-1]
    return tokenize(text)


@dataclass(frozen=True, slots=True)
class Hit:
    """A quote found in a passage: tokens ``first:last`` and the printed text ``start:end``."""

    passage: Passage
    first: int
    last: int
    start: int
    end: int
    boundary: Boundary

    @property
    def text(self) -> str:
        return self.passage.text[self.start:self.end]

    @property
    def in_cited_title(self) -> bool:
        cited = self.passage.cited
        return cited is not None and cited[0] <= self.start and self.end <= cited[1] + 1


@dataclass(frozen=True, slots=True)
class Closest:
    """The passage nearest a quote that was not found, and how they differ."""

    passage: Passage
    excerpt: str
    ratio: float
    differences: tuple[tuple[str, str], ...]

    def describe(self) -> str:
        if not self.differences:
            return f"the closest passage (#{self.passage.id}) says '{self.excerpt}'"
        parts = []
        for paper, quote in self.differences[:3]:
            reversal = _reversal(paper, quote)
            parts.append(f"the paper says '{paper}'; the quote says '{quote}'"
                         + (f" (dropping '{reversal}' reverses the meaning)" if reversal else ""))
        return "; ".join(parts) + f" (closest passage #{self.passage.id})"


def _reversal(paper: str, quote: str) -> str:
    """The negating prefix the quote dropped from a paper word, if that is the difference."""
    pw = {w.lower().strip(".,;:()") for w in paper.split()}
    for word in quote.split():
        bare = word.lower().strip(".,;:()")
        for prefix in NEGATING_PREFIXES:
            for joined in (prefix + bare, prefix + "-" + bare):
                if bare and joined in pw and bare not in pw:
                    return prefix
    return ""


@dataclass
class PaperText:
    """A paper's passages ready for matching (see module docstring)."""

    article: Article
    extra: tuple[Passage, ...] = ()
    tokens: list[Tokens] | None = None
    _passages: list[Passage] = field(default_factory=list, repr=False)
    _ptokens: list[PassageTokens] = field(default_factory=list, repr=False)
    _priority: list[int] | None = field(default=None, repr=False)
    _joined: list[str | None] = field(default_factory=list, repr=False)
    _sentences: list[tuple[int, str, frozenset[str]]] | None = field(default=None, repr=False)
    _vocabulary: frozenset[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._passages = [*self.article.passages, *self.extra]
        raw = list(self.tokens or [])
        raw += [tokenize(p.text, p.markers, p.breaks) for p in self._passages[len(raw):]]
        self._ptokens = [PassageTokens(t) for t in raw]
        self._by_id: dict[str, int] = {}
        self._at: dict[int, int] = {}  # id(passage) -> its first index (index_of without a scan)
        for index, passage in enumerate(self._passages):
            self._by_id.setdefault(passage.id, index)
            self._at.setdefault(id(passage), index)
        self._joined = [None] * len(self._passages)
        self._anchors: dict[str, list[int]] | None = None
        self._rank: dict[int, int] | None = None

    @property
    def passages(self) -> list[Passage]:
        return self._passages

    def passage(self, passage_id: str) -> Passage | None:
        index = self._by_id.get(passage_id)
        return self._passages[index] if index is not None else None

    def anchors(self) -> dict[str, list[int]]:
        """Each passage id and alias with the passages it names (:func:`.locators.anchors`), built once."""
        if self._anchors is None:
            self._anchors = anchors(self._passages)
        return self._anchors

    def _order(self) -> list[int]:
        """Passage indexes, main text first (the order of ``PARTS``), then in document order."""
        if self._priority is None:
            self._priority = sorted(range(len(self._passages)),
                                    key=lambda i: (_PRIORITY.get(self._passages[i].part, 99), i))
        return self._priority

    def _ranks(self) -> dict[int, int]:
        """Each passage index's place in :meth:`_order`."""
        if self._rank is None:
            self._rank = {index: n for n, index in enumerate(self._order())}
        return self._rank

    def positions(self, index: int, words: Iterable[str]) -> list[int]:
        """Tokens of passage ``index`` equal to one of ``words``, in order: one C-level substring
        search over the passage's tokens joined by NUL, never a per-token Python loop."""
        joined = self._joined[index]
        if joined is None:
            joined = self._joined[index] = "\0" + "\0".join(self._ptokens[index].tokens.words) + "\0"
        kinds = self._ptokens[index].tokens.kinds
        out: list[int] = []
        for word in words:
            needle = "\0" + word + "\0"
            at = joined.find(needle)
            while at >= 0:
                token = joined.count("\0", 0, at)
                if kinds[token] != BREAK:
                    out.append(token)
                at = joined.find(needle, at + 1)
        return sorted(set(out))

    def occurrences(self, word: str) -> list[tuple[int, int]]:
        """(passage, token) where a token equals ``word``, main text first."""
        return [(index, token) for index in self._order() for token in self.positions(index, (word,))]

    def locate(self, quote: str, within: Iterable[int] = ()) -> Hit | None:
        """Where the quote is: in ``within`` (passage indexes) first, else anywhere by part.

        A match that starts or ends inside a word is returned only when no clean match exists,
        with its :class:`Boundary` saying so.
        """
        q = quote_tokens(quote)
        if not q.words:
            return None
        first = q.words[0]
        keys = [first]
        swapped = first[0].swapcase() + first[1:] if first[:1].isalpha() else first
        if swapped != first:
            keys.append(swapped)
        if len(q.words) > 2 and q.words[1] == "-" and q.space[2] == "1" and q.kinds[0] == WORD:
            joined = first + q.words[2]
            keys += [joined, joined[0].swapcase() + joined[1:]]
        glued = _GLUED_NUMBER.fullmatch(first)
        if glued is not None:  # "algorithm53, …": the paper's word, then its superscript citation
            keys += [glued.group(1), glued.group(1)[0].swapcase() + glued.group(1)[1:]]
        keys = list(dict.fromkeys(keys))
        rank = self._ranks()
        target = sorted(set(within), key=lambda i: rank.get(i, len(rank)))
        taken = set(target)
        fallback: Hit | None = None
        # lazily: the first clean hit returns before the rest of the paper is listed
        for pidx in itertools.chain(target, (i for i in self._order() if i not in taken)):
            for start in self.positions(pidx, keys):
                ptok = self._ptokens[pidx]
                end = align(q, ptok, start)
                if end <= start:
                    continue
                passage = self._passages[pidx]
                boundary = boundaries(ptok, passage.text, start, end)
                if not boundary.ok:
                    boundary = self.negation(boundary)
                last = end - 1
                while last > start and ptok.tokens.kinds[last] == BREAK:
                    last -= 1
                hit = Hit(passage, start, end, ptok.tokens.starts[start], ptok.tokens.ends[last], boundary)
                if boundary.ok:
                    return hit
                fallback = fallback or hit
        return fallback

    def index_of(self, passage: Passage) -> int:
        index = self._at.get(id(passage))
        if index is not None and self._passages[index] is passage:
            return index
        return next(i for i, p in enumerate(self._passages) if p is passage)

    def cut_before_cue(self, hit: Hit) -> tuple[str, str] | None:
        """(rest of the sentence, the quote extended to the sentence end) when the quote stops
        just before a negation or restriction; ``None`` otherwise."""
        index = self.index_of(hit.passage)
        p = self._ptokens[index].tokens
        end = hit.last
        if end >= len(p.words) or p.kinds[end] == BREAK:
            return None
        if p.words[hit.last - 1] in (".", ";", "!", "?") or p.words[end] in (".", ";", ":", "!", "?"):
            return None
        stop = end
        while stop < len(p.words) and p.kinds[stop] != BREAK:
            if p.words[stop] in (".", "!", "?", ";") and (stop + 1 >= len(p.words) or p.space[stop + 1] == "1"):
                break
            stop += 1
        rest = " ".join(normalize(hit.passage.text[p.starts[end]:p.ends[stop - 1]]).split()) if stop > end else ""
        if not rest or not CUE.match(rest):
            return None
        sentence_end = p.ends[min(stop, len(p.words) - 1)] if stop < len(p.words) else p.ends[-1]
        return rest, hit.passage.text[hit.start:sentence_end]

    # -- diagnosis ------------------------------------------------------------------------------
    def vocabulary(self) -> frozenset[str]:
        """Every word of the paper, lower-cased (to tell a dropped negation from a cut word)."""
        if self._vocabulary is None:
            self._vocabulary = frozenset(w.lower() for pt in self._ptokens for w, k in
                                         zip(pt.tokens.words, pt.tokens.kinds, strict=True) if k == WORD)
        return self._vocabulary

    def negation(self, boundary: Boundary) -> Boundary:
        """``boundary`` with ``negation`` set when the cut drops a negating prefix."""
        if boundary.where != "starts":
            return boundary
        kept = boundary.word[len(boundary.cut):] if boundary.word.startswith(boundary.cut) else boundary.word
        return replace(boundary, negation=negates(boundary.cut, kept, self.vocabulary()))

    def inside_word(self, quote: str) -> tuple[Passage, Boundary] | None:
        """When the quote is the paper's text except that it starts or ends inside a word."""
        q = quote_tokens(quote)
        if len(q.words) < 2:
            return None
        order = self._order()
        first, last = q.words[0], q.words[-1]
        if q.kinds[0] == WORD:
            for index in order:
                ptok = self._ptokens[index]
                t = ptok.tokens
                for tok, word in enumerate(t.words):
                    if t.kinds[tok] not in (WORD, MWORD) or len(word) <= len(first) or not (
                            word.endswith(first) or word.lower().endswith(first.lower())):
                        continue
                    whole = Tokens([word, *q.words[1:]], q.kinds, q.space, q.starts, q.ends)
                    if align(whole, ptok, tok) > tok:
                        passage = self._passages[index]
                        cut_at = t.starts[tok] + len(word) - len(first)
                        boundary = _cut_start(passage, t, tok, cut_at)
                        return passage, self.negation(boundary)
        if q.kinds[-1] == WORD:
            head = Tokens(q.words[:-1], q.kinds[:-1], q.space[:-1], q.starts[:-1], q.ends[:-1])
            for pidx, tok in self.occurrences(q.words[0]):
                ptok = self._ptokens[pidx]
                t = ptok.tokens
                end = align(head, ptok, tok)
                if 0 <= end < len(t.words) and t.kinds[end] == WORD and len(t.words[end]) > len(last) \
                        and t.words[end].startswith(last) and q.space[-1] == t.space[end]:
                    passage = self._passages[pidx]
                    word = passage.text[t.starts[end]:t.ends[end]]
                    return passage, Boundary(False, "ends", _whole(passage, t, end), word[len(last):])
        return None

    def _sentence_index(self) -> list[tuple[int, str, frozenset[str]]]:
        if self._sentences is None:
            out: list[tuple[int, str, frozenset[str]]] = []
            for index, passage in enumerate(self._passages):
                for line in passage.match.split("\n"):
                    for a, b in sentence_spans(line):
                        text = line[a:b]
                        out.append((index, text, frozenset(_WORD.findall(text.lower()))))
            self._sentences = out
        return self._sentences

    def closest(self, quote: str) -> Closest | None:
        """The passage span nearest to ``quote`` and its word differences; ``None`` for an empty paper."""
        canon = normalize(quote).rstrip(" .") if quote.strip() else ""
        qwords = frozenset(_WORD.findall(canon.lower()))
        sentences = self._sentence_index()
        if not sentences or not qwords:
            return None
        scored = sorted(range(len(sentences)), key=lambda i: -len(qwords & sentences[i][2]))[:4]
        qtokens = _TOKEN.findall(canon)
        qlow = [t.lower().strip(".,;:") for t in qtokens]
        best: tuple[tuple[int, int], int, str] | None = None
        span_n = len(sentence_spans(canon)) + 1
        for i in scored:
            for lo, hi in ((i - a, i + b) for a in range(span_n) for b in range(span_n - a)):
                if lo < 0 or hi >= len(sentences) or sentences[lo][0] != sentences[hi][0]:
                    continue
                window = " ".join(sentences[k][1] for k in range(lo, hi + 1))
                wtokens = [t.lower().strip(".,;:") for t in _TOKEN.findall(window)]
                matcher = difflib.SequenceMatcher(None, qlow, wtokens, autojunk=False)
                matched = sum(b.size for b in matcher.get_matching_blocks())
                score = (matched, -len(wtokens))
                if best is None or score > best[0]:
                    best = (score, sentences[i][0], window)
        if best is None:
            return None
        (matched, _), pindex, window = best
        ratio = matched / max(1, len(qlow))
        ptokens = _TOKEN.findall(window)
        matcher = difflib.SequenceMatcher(None, [t.lower().strip(".,;:") for t in qtokens],
                                          [t.lower().strip(".,;:") for t in ptokens], autojunk=False)
        blocks = [b for b in matcher.get_matching_blocks() if b.size]
        if not blocks:
            return Closest(self._passages[pindex], window, ratio, ())
        lo = max(0, blocks[0].b - blocks[0].a)
        hi = min(len(ptokens), blocks[-1].b + blocks[-1].size + (len(qtokens) - blocks[-1].a - blocks[-1].size))
        span = ptokens[lo:hi]
        excerpt = " ".join(span)
        differ = difflib.SequenceMatcher(None, [t.lower().strip(".,;:") for t in qtokens],
                                         [t.lower().strip(".,;:") for t in span], autojunk=False)
        diffs: list[tuple[str, str]] = []
        for tag, i1, i2, j1, j2 in differ.get_opcodes():
            if tag == "equal":
                continue
            qa, qb = max(0, i1 - 1), min(len(qtokens), i2 + 1)
            pa, pb = max(0, j1 - 1), min(len(span), j2 + 1)
            diffs.append((" ".join(span[pa:pb]), " ".join(qtokens[qa:qb])))
        return Closest(self._passages[pindex], excerpt, ratio, tuple(diffs))


def _whole(passage: Passage, t: Tokens, tok: int) -> str:
    """The whitespace-delimited word of the passage that token ``tok`` is part of, as printed."""
    text = passage.text
    a, b = t.starts[tok], t.ends[tok]
    while a > 0 and not text[a - 1].isspace():
        a -= 1
    while b < len(text) and not text[b].isspace():
        b += 1
    return text[a:b].lstrip(OPENING).rstrip(CLOSING)


def _cut_start(passage: Passage, t: Tokens, tok: int, cut_at: int) -> Boundary:
    """The boundary of a quote starting at text offset ``cut_at``, inside token ``tok``'s word."""
    whole = _whole(passage, t, tok)
    text = passage.text
    i = t.starts[tok]
    while i > 0 and not text[i - 1].isspace():
        i -= 1
    while i < cut_at and text[i] in OPENING:
        i += 1
    return Boundary(False, "starts", whole, text[i:cut_at])


@functools.lru_cache(maxsize=8192)
def normalized_title(text: str) -> tuple[str, ...]:
    """Title words for comparison: canonical text, case-folded, punctuation ignored (memoised)."""
    return tuple(_WORD.findall(normalize(text).casefold()))
