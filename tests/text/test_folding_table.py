"""Which characters a quote may write differently from the paper: the table in docs/grounders.md.

Each row is one character class with a real example, compared the way the literature grounder
compares a quote with a passage (the token words of :mod:`bioevidence.text.tokens`, and
:func:`~bioevidence.text.normalize.normalize`, which must agree). The verdict is computed here, checked
against what a reader reads (``expected``), and the docs table is this table:
``BIOEVIDENCE_WRITE_DOCS=1 pytest tests/text/test_folding_table.py`` rewrites it.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from bioevidence.text.normalize import VALUE_FORMS, keeps_value, normalize
from bioevidence.text.tokens import tokenize

DOC = Path(__file__).resolve().parents[2] / "docs" / "grounders.md"
BEGIN, END = "<!-- folding table: tests/text/test_folding_table.py -->", "<!-- end of folding table -->"

# (class, what the paper prints, what the quote writes, same to a reader?)
CLASSES = [
    ("canonical equivalence (NFC / NFD)", "T\u00fcbingen", "Tu\u0308bingen", True),
    ("no-break space `<noBreak>`", "34\u00a0tumors", "34 tumors", True),
    ("other space characters (thin, em)", "34\u2009tumors", "34 tumors", True),
    ("full-width forms `<wide>`", "\uff13\uff14 tumors", "34 tumors", True),
    ("half-width forms `<narrow>`", "\uff71", "\u30a2", True),
    ("mathematical letters `<font>`", "\U0001d400KT1", "AKT1", True),
    ("ligatures and other `<compat>` forms", "\ufb01brosis", "fibrosis", True),
    ("Roman numerals `<compat>`", "stage \u2163", "stage IV", True),
    ("micro sign and Greek mu", "5 \u00b5g", "5 \u03bcg", True),
    ("small forms `<small>`", "34\ufe50 35", "34, 35", True),
    ("squared units `<square>`", "5 \u338e", "5 mg", True),
    ("vertical forms `<vertical>`", "34\ufe10 35", "34, 35", True),
    ("Arabic presentation forms `<isolated>`", "\ufe8d", "\u0627", True),
    ("typographic quotes", "\u2018KRAS\u2019", "'KRAS'", True),
    ("dashes, hyphens and the minus sign", "0.36\u20130.64, \u22121", "0.36-0.64, -1", True),
    ("soft hyphen and zero-width characters", "re\u00adsis\u200btance", "resistance", True),
    ("Greek letters and their names", "\u03b2-catenin", "beta-catenin", True),
    ("trade-mark signs `<super>`", "KinEASE\u2122", "KinEASETM", True),
    ("superscript digits `<super>`", "3\u2074 tumors", "34 tumors", False),
    ("subscript digits `<sub>`", "CO\u2082", "CO2", False),
    ("superscript letters `<super>`", "tumors\u1d43", "tumorsa", False),
    ("vulgar fractions `<fraction>`", "1\u00bd years", "11\u20442 years", False),
    ("circled numbers `<circle>`", "\u2460\u2461", "12", False),
    ("another digit", "34 tumors", "35 tumors", False),
    ("letter case (but a quote's first letter)", "in KRAS", "in Kras", False),
]


def _words(text: str) -> list[str]:
    tokens = tokenize(text)
    return [w for w, k in zip(tokens.words, tokens.kinds, strict=True) if k != "b"]


def verdict(paper: str, quote: str) -> bool:
    by_tokens = _words(f"in the {paper} here") == _words(f"in the {quote} here")
    by_normalize = normalize(f"in the {paper} here") == normalize(f"in the {quote} here")
    assert by_tokens == by_normalize, (paper, quote, by_tokens, by_normalize)
    return by_tokens


def _show(text: str) -> str:
    codes = " ".join(f"U+{ord(ch):04X}" for ch in text if ord(ch) > 0x7F)
    return f"`{text}`" + (f" ({codes})" if codes else "")


def table() -> str:
    rows = ["| character class | the paper prints | the quote writes | verdict |", "|---|---|---|---|"]
    for name, paper, quote, _ in CLASSES:
        same = verdict(paper, quote)
        rows.append(f"| {name} | {_show(paper)} | {_show(quote)} | {'same text' if same else 'a misquote (BEV017)'} |")
    return "\n".join(rows)


@pytest.mark.parametrize(("name", "paper", "quote", "same"), CLASSES, ids=[c[0] for c in CLASSES])
def test_each_class_is_read_as_a_reader_reads_it(name: str, paper: str, quote: str, same: bool) -> None:
    assert verdict(paper, quote) is same


def test_value_forms_are_exactly_the_superscripts_subscripts_fractions_and_circled() -> None:
    kept = [chr(c) for c in range(0x80, 0x30000) if keeps_value(chr(c))]
    assert all(unicodedata.decomposition(ch).split(" ")[0] in VALUE_FORMS for ch in kept)
    assert all(len(unicodedata.normalize("NFKC", ch)) == 1 for ch in kept
               if unicodedata.decomposition(ch).startswith(("<super>", "<sub>")))
    assert len(kept) > 400 and {"\u00b2", "\u2074", "\u2082", "\u00bd", "\u2460"} <= set(kept)
    assert not keeps_value("\u00a0") and not keeps_value("\ufb01") and not keeps_value("\uff14")
    assert not keeps_value("\u2122") and not keeps_value("\u2120")  # ™ and ℠ read as TM and SM


def test_the_docs_table_is_this_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    want = f"{BEGIN}\n{table()}\n{END}"
    if os.environ.get("BIOEVIDENCE_WRITE_DOCS"):
        start, end = text.index(BEGIN), text.index(END) + len(END)
        DOC.write_text(text[:start] + want + text[end:], encoding="utf-8")
        text = DOC.read_text(encoding="utf-8")
    assert want in text, "docs/grounders.md is stale: rerun with BIOEVIDENCE_WRITE_DOCS=1"
