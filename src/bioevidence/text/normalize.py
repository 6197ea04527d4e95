"""The one text normaliser: the literature grounder verifies quotes with it, the librarian cuts them with it.

Both sides of a comparison go through :func:`normalize`, so a quote the librarian cuts from a
passage verifies against that passage by construction. What is forgiven, and nothing else:

* Unicode NFKC (canonically equivalent text such as ``u`` + U+0308 and ``ü``; ligatures ``ﬁ`` →
  ``fi``, full-width forms, the micro sign), except the compatibility forms that carry a value a
  reader reads differently: superscripts and subscripts (``3⁴`` is not ``34``), vulgar fractions
  (``1½`` is not ``11/2``) and circled characters (:data:`VALUE_FORMS`; those keep their NFC form);
* typographic quote marks → ``'`` and ``"``; dashes, hyphen variants and the minus sign → ``-``;
* soft hyphens and zero-width characters removed; every run of whitespace (line breaks, no-break
  and thin spaces) → one space; no space just inside brackets or before ``, . ; :``;
* Greek letters written out (``β`` and ``beta`` are the same text);
* inline citation markers: the caller replaces them by :data:`CITATION` (the JATS parser does so
  for ``<xref ref-type="bibr">``); a group of them with its brackets and separators is dropped;
  numeric square-bracket markers (``[12]``, ``[3, 7-9]``) are dropped everywhere.

The quote matcher (``gate/grounders/quotes.py`` over ``text/tokens.py``) forgives, beside these,
end-of-line hyphenation from PDFs, parenthesised or superscript numeric markers that are citation
markers in the paper, a trailing full stop and the case of a quote's first letter
(``tests/text/test_normalize.py`` checks each through it). A changed word, number, negation or
species is never forgiven.

Case is preserved (gene symbols are case-sensitive).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from functools import lru_cache

#: Placeholder for an inline citation marker (a private-use character, never in real text).
CITATION = "\ue000"

_GREEK_NAMES = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
    "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega",
]
_GREEK_LOWER = "αβγδεζηθικλμνξοπρστυφχψω"
_GREEK_UPPER = "ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ"

_TABLE: dict[int, str] = {}
for _letter, _name in zip(_GREEK_LOWER, _GREEK_NAMES, strict=True):
    _TABLE[ord(_letter)] = _name
for _letter, _name in zip(_GREEK_UPPER, _GREEK_NAMES, strict=True):
    _TABLE[ord(_letter)] = _name.capitalize()
_TABLE[ord("ς")] = "sigma"
_TABLE[ord("ϐ")] = "beta"
_TABLE[ord("ϑ")] = "theta"
_TABLE[ord("ϕ")] = "phi"
for _ch in "\u2018\u2019\u201a\u201b\u2032\u0060\u00b4":
    _TABLE[ord(_ch)] = "'"
for _ch in "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb":
    _TABLE[ord(_ch)] = '"'
for _ch in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d\u2043":
    _TABLE[ord(_ch)] = "-"
for _ch in "\u00ad\u200b\u200c\u200d\u2060\ufeff":
    _TABLE[ord(_ch)] = ""

#: decomposition tags of the compatibility forms :func:`normalize` does not fold (they change a value)
VALUE_FORMS = ("<super>", "<sub>", "<fraction>", "<circle>")


@lru_cache(maxsize=8192)
def keeps_value(ch: str) -> bool:
    """True for a character whose compatibility folding would change what a reader reads (``⁴``, ``₂``,
    ``½``, ``①``): it is compared as itself (NFC), never as the digit or letter it folds to. The
    trade-mark signs ``™`` and ``℠`` are superscripts too, but read as the same ``TM`` and ``SM``."""
    tag = unicodedata.decomposition(ch).split(" ", 1)[0]
    if tag in ("<super>", "<sub>"):  # one raised or lowered character; ™ (TM) and ℠ (SM) are marks, folded
        return len(unicodedata.normalize("NFKC", ch)) == 1
    return tag in VALUE_FORMS


def fold(text: str) -> str:
    """NFKC, except the characters of :func:`keeps_value` (NFC); the text is never longer to read."""
    if text.isascii():
        return text
    if not any(keeps_value(ch) for ch in set(text) if ord(ch) > 0x7F):
        return unicodedata.normalize("NFKC", text)
    pieces: list[str] = []
    start = 0
    for i, ch in enumerate(text):
        if ord(ch) > 0x7F and keeps_value(ch):
            pieces.append(unicodedata.normalize("NFKC", text[start:i]))
            pieces.append(ch)
            start = i + 1
    pieces.append(unicodedata.normalize("NFKC", text[start:]))
    return unicodedata.normalize("NFC", "".join(pieces))


_SPACE = re.compile(r"\s+")
_GROUP = CITATION + r"(?:[\s,;\-]*(?:and\s+)?" + CITATION + r")*"
_CITATION_GROUP = re.compile(r"\s*\[\s*" + _GROUP + r"\s*\]|\s*\(\s*" + _GROUP + r"\s*\)|\s*" + _GROUP)
_BRACKET_NUMBERS = re.compile(r"\s*\[\d+(?:\s*[,;\-]\s*\d+)*\]")
_INSIDE_OPEN = re.compile(r"([(\[]) ")
_INSIDE_CLOSE = re.compile(r" ([)\],.;:])")
_ALNUM = re.compile(r"[0-9A-Za-z]")
_HAS_SPACE_BEFORE = re.compile(r" [)\],.;:]")
_LIST_SEPARATOR = re.compile(r"[\s,;]+")


def normalize(text: str) -> str:
    """The canonical form used for matching (case preserved, citation markers dropped)."""
    text = fold(text).translate(_TABLE)
    if CITATION in text:
        text = _CITATION_GROUP.sub("", text)
    if "[" in text:
        text = _BRACKET_NUMBERS.sub("", text)
    text = _SPACE.sub(" ", text).strip()
    if "( " in text or "[ " in text:
        text = _INSIDE_OPEN.sub(r"\1", text)
    return _INSIDE_CLOSE.sub(r"\1", text) if _HAS_SPACE_BEFORE.search(text) else text


def marker_key(marker: str) -> str:
    """How a citation marker's text is compared: digits and separators only (``(12, 13)`` → ``12,13``)."""
    text = unicodedata.normalize("NFKC", marker).translate(_TABLE)  # not normalize(): it drops "[12]"
    return re.sub(r"[^0-9,\-]", "", text.replace(";", ","))


def word_count(text: str, *, canonical: bool = False, up_to: int | None = None) -> int:
    """Words as a reader counts them: tokens holding a letter or digit, separated by whitespace or
    by ``,`` / ``;`` (``Thr;Threonine,Ala;Alanine`` is four words, as it is with spaces).

    ``canonical=True`` when ``text`` is already :func:`normalize`'d (saves normalising again);
    ``up_to``: stop counting there (``min(word_count(text), up_to)``, for "at least N words?").
    """
    tokens = _LIST_SEPARATOR.split(text if canonical else normalize(text))
    words = (token for token in tokens
             if _ALNUM.search(token) or (not token.isascii() and any(ch.isalnum() for ch in token)))
    return sum(1 for _ in itertools.islice(words, up_to))


_ABBREVIATIONS = re.compile(
    r"(?:\b(?:et al|e\.g|i\.e|vs|Fig|Figs|Ref|Refs|Eq|No|approx|ca|cf|resp|Dr|Mr|Mrs|St|Suppl)|\b[A-Z])\.$"
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence boundaries in canonical text as (start, end) offsets; abbreviations do not end one."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        head = text[start:match.start()]
        if _ABBREVIATIONS.search(head):
            continue
        spans.append((start, match.start()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans

