"""Quote matching against one paper's passages, and the diagnosis when a quote is not there.

:class:`PaperText` holds a paper's passages in canonical form (see
:mod:`bioevidence.text.normalize`) joined into one search string, so finding a quote is one
``str.find`` per tolerated form. It is built once per pinned paper and process (and cached on
disk by the paper's SHA-256), never once per record.

When a quote is not found, :meth:`PaperText.closest` names the closest passage of the paper
and what differs, word by word ("the paper says 'did not improve overall survival'; the quote
says 'improved overall survival'"). When a quote is found but stops mid-sentence just before a
negation or restriction, :meth:`PaperText.cut_before_cue` returns the rest of the sentence.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from ...text.jats import Article, Passage
from ...text.normalize import iter_quote_forms, normalize, quote_forms, sentence_spans

FORMAT_VERSION = 2
_TOKEN = re.compile(r"\S+")
_WORD = re.compile(r"[0-9a-z]+")
#: What a quote must not stop just before: negations and restrictions of the claim.
CUE = re.compile(
    r"^,?\s*(?:not\b|no\b|none\b|never\b|without\b|except\b|excluding\b|but not\b|unless\b|only\b|"
    r"in (?:mice|mouse|rats?|murine|zebrafish|dogs?|animals?|vitro|cell lines?|xenografts?)\b|"
    r"failed\b|did not\b|was not\b|were not\b|is not\b|are not\b)",
    re.IGNORECASE,
)


def article_to_plain(article: Article) -> dict[str, Any]:
    """An :class:`Article` as plain values (for the marshal cache)."""
    return {
        "title": article.title,
        "passages": tuple((p.id, p.kind, p.section, p.section_type, p.text, p.match) for p in article.passages),
        "ids": dict(article.ids),
        "markers": tuple(sorted(article.markers)),
    }


def article_from_plain(raw: dict[str, Any]) -> Article:
    return Article(raw["title"], tuple(Passage(*p) for p in raw["passages"]), dict(raw["ids"]),
                   frozenset(raw["markers"]))


@dataclass(frozen=True, slots=True)
class Hit:
    passage: Passage
    start: int
    end: int


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
        parts = [f"the paper says '{paper}'; the quote says '{quote}'" for paper, quote in self.differences[:3]]
        return "; ".join(parts) + f" (closest passage #{self.passage.id})"


@dataclass
class PaperText:
    """A paper's passages ready for matching (see module docstring)."""

    article: Article
    extra: tuple[Passage, ...] = ()
    _starts: list[int] = field(default_factory=list, repr=False)
    _haystack: str = field(default="", repr=False)
    _passages: list[Passage] = field(default_factory=list, repr=False)
    _sentences: list[tuple[int, str, frozenset[str]]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._passages = [*self.article.passages, *self.extra]
        offset = 0
        chunks = []
        for passage in self._passages:
            self._starts.append(offset)
            chunks.append(passage.match)
            offset += len(passage.match) + 1
        self._haystack = "\n".join(chunks)
        self._by_id = {p.id: p for p in self._passages}

    @property
    def passages(self) -> list[Passage]:
        return self._passages

    def passage(self, passage_id: str) -> Passage | None:
        return self._by_id.get(passage_id)

    def forms(self, quote: str) -> list[str]:
        return quote_forms(quote, self.article.markers)

    def find(self, quote: str, within: Passage | None = None, *, canonical: str | None = None) -> Hit | None:
        """Where the quote occurs (in ``within`` only, when given), or ``None``.

        ``canonical`` is ``normalize(quote)`` when the caller already has it.
        """
        for form in iter_quote_forms(quote, self.article.markers, canonical=canonical):
            if within is not None:
                at = within.match.find(form)
                if at >= 0:
                    return Hit(within, at, at + len(form))
                continue
            at = self._haystack.find(form)
            if at >= 0:
                index = bisect.bisect_right(self._starts, at) - 1
                start = at - self._starts[index]
                return Hit(self._passages[index], start, start + len(form))
        return None

    def cut_before_cue(self, hit: Hit) -> str | None:
        """The rest of the sentence when the quote stops just before a negation or restriction."""
        rest = hit.passage.match[hit.end:]
        if not rest or rest[0] in ".;:!?\n" or hit.passage.match[hit.end - 1] in ".;!?":
            return None
        if not CUE.match(rest):
            return None
        spans = sentence_spans(rest)
        end = spans[0][1] if spans else len(rest)
        return rest[:end].split("\n", 1)[0].strip()

    # -- diagnosis ------------------------------------------------------------------------------
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
        canon = quote_forms(quote, self.article.markers)[0] if quote.strip() else ""
        qwords = frozenset(_WORD.findall(canon.lower()))
        sentences = self._sentence_index()
        if not sentences or not qwords:
            return None
        scored = sorted(range(len(sentences)), key=lambda i: -len(qwords & sentences[i][2]))[:4]
        qtokens = _TOKEN.findall(canon)
        qlow = [t.lower().strip(".,;:") for t in qtokens]
        best: tuple[tuple[int, int], float, int, str] | None = None
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
                    best = (score, 2.0 * matched / (len(qlow) + len(wtokens)), sentences[i][0], window)
        if best is None:
            return None
        _score, ratio, pindex, window = best
        ratio = best[0][0] / max(1, len(qlow))
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


@functools.lru_cache(maxsize=8192)
def normalized_title(text: str) -> tuple[str, ...]:
    """Title words for comparison: canonical text, case-folded, punctuation ignored (memoised)."""
    return tuple(_WORD.findall(normalize(text).casefold()))
