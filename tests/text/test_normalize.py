"""The one text normaliser, and what the quote matcher forgives: every tolerated variation, nothing else.

A quote "matches" a passage when the literature grounder's matcher (``PaperText.locate``, over the
tokens of the passage as the JATS reader gives them) finds it there cleanly; each case below is a
one-paragraph JATS article read by the real reader (``parse_jats``), its citation markers as ``<xref>``
elements, so each is checked the way a pinned paper is.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bioevidence.gate.grounders.quotes import PaperText
from bioevidence.text.jats import parse_jats
from bioevidence.text.normalize import CITATION, marker_key, normalize, sentence_spans, word_count

PAPER = ("Patients with EGFR-mutant tumours had a longer progression-free survival (HR 0.48, 95% CI 0.36-0.64) "
         "than those treated with chemotherapy, and beta-catenin signalling was not affected.")


def paper(passage: str, markers: tuple[str, ...] = (), sup: bool = False) -> PaperText:
    """A JATS article whose one paragraph is ``passage``, each ``CITATION`` in it a citation ``<xref>``
    printed as the next of ``markers`` (default: its number), in ``<sup>`` with ``sup``."""
    parts = passage.split(CITATION)
    body = escape(parts[0])
    for n, part in enumerate(parts[1:]):
        shown = markers[n] if n < len(markers) else str(n + 1)
        xref = f'<xref ref-type="bibr" rid="b{n + 1}">{escape(shown)}</xref>'
        body += (f"<sup>{xref}</sup>" if sup else xref) + escape(part)
    xml = ("<article><front><article-meta><title-group><article-title>A test article</article-title>"
           f"</title-group></article-meta></front><body><sec><title>Results</title><p>{body}</p></sec></body>"
           "</article>")
    return PaperText(parse_jats(xml.encode("utf-8")))


def matches(quote: str, passage: str = PAPER, markers: tuple[str, ...] = (), sup: bool = False) -> bool:
    hit = paper(passage, markers, sup).locate(quote)
    return hit is not None and hit.boundary.ok


TOLERATED = {
    "verbatim": PAPER,
    "NFKC full-width digits": PAPER.replace("0.48", "\uff10.\uff14\uff18"),
    "curly quotes": 'He said \u201cno change\u201d and it\u2019s fine',
    "en dash range": PAPER.replace("0.36-0.64", "0.36\u20130.64"),
    "minus sign / em dash": PAPER.replace("EGFR-mutant", "EGFR\u2212mutant").replace("progression-free",
                                                                                     "progression\u2014free"),
    "line breaks and no-break spaces": PAPER.replace(" with ", "\nwith\u00a0").replace(" than ", "  \t than "),
    "soft hyphen": PAPER.replace("chemotherapy", "chemo\u00adtherapy"),
    "zero-width space": PAPER.replace("tumours", "tu\u200bmours"),
    "ligature": PAPER.replace("signalling", "signa\ufb00ing".replace("\ufb00", "ll")).replace("affected",
                                                                                              "a\ufb00ected"),
    "Greek letter": PAPER.replace("beta-catenin", "\u03b2-catenin"),
    "PDF end-of-line hyphenation": PAPER.replace("chemotherapy", "chemo- therapy"),
    "trailing full stop dropped": PAPER.rstrip("."),
    "first letter lower-cased": "p" + PAPER[1:],
}


@pytest.mark.parametrize("quote", list(TOLERATED.values()), ids=list(TOLERATED))
def test_tolerated_variations_are_forgiven(quote: str) -> None:
    passage = 'He said "no change" and it\'s fine' if quote.startswith("He said") else PAPER
    assert matches(quote, passage)


def test_a_quote_from_mid_sentence_with_a_capitalised_first_letter_matches() -> None:
    assert matches("Longer progression-free survival (HR 0.48, 95% CI 0.36-0.64)")


def test_citation_markers_left_out_of_a_quote_are_forgiven() -> None:
    passage = f"KRAS mutations predict resistance to cetuximab [{CITATION}, {CITATION}] in colorectal cancer."
    assert matches("KRAS mutations predict resistance to cetuximab in colorectal cancer", passage)
    # the paper's own bracketed numbers, marked up or not, may be left out whole, not changed
    plain = "KRAS mutations predict resistance to cetuximab [12, 13] in colorectal cancer."
    assert matches("KRAS mutations predict resistance to cetuximab in colorectal cancer", plain)
    assert matches("KRAS mutations predict resistance to cetuximab [12, 13] in colorectal cancer", plain)
    assert not matches("KRAS mutations predict resistance to cetuximab [12] in colorectal cancer", plain)
    assert not matches("KRAS mutations predict resistance to cetuximab [12] in colorectal cancer", passage,
                       ("12", "13"))
    # a parenthesised or superscript marker copied into the quote, when it is a marker of the paper
    paren = f"KRAS mutations predict resistance {CITATION} to cetuximab."
    assert matches("KRAS mutations predict resistance (12, 13) to cetuximab", paren, ("(12, 13)",))
    glued = f"KRAS mutations predict resistance{CITATION} to cetuximab."
    assert matches("KRAS mutations predict resistance12,13 to cetuximab", glued, ("12,13",), sup=True)
    # a parenthesised number that is not a citation marker of the paper stays
    assert not matches("KRAS mutations predict resistance (14) to cetuximab", paren, ("(12, 13)",))


def test_marker_key_compares_digits_and_separators_only() -> None:
    assert marker_key("(12, 13)") == "12,13" == marker_key("[12;13]")
    assert marker_key("3\u20135") == "3-5"


FAULTS = {
    "changed word": PAPER.replace("longer", "shorter"),
    "changed number": PAPER.replace("0.48", "0.58"),
    "added negation": PAPER.replace("had a longer", "had not a longer"),
    "removed negation": PAPER.replace("was not affected", "was affected"),
    "changed species": PAPER.replace("Patients", "Mice"),
    "dropped word": PAPER.replace("longer ", ""),
    "case inside the quote": PAPER.replace("EGFR", "egfr"),
    "omitted middle part": PAPER.replace("(HR 0.48, 95% CI 0.36-0.64) ", ""),
}


@pytest.mark.parametrize("quote", list(FAULTS.values()), ids=list(FAULTS))
def test_nothing_else_is_forgiven(quote: str) -> None:
    assert not matches(quote)


def test_word_count_counts_tokens_with_a_letter_or_digit() -> None:
    assert word_count("EGFR \u2014 mutant  tumours (n = 12) .") == 5
    canon = normalize("one two\u00a0three")
    assert word_count(canon, canonical=True) == word_count("one two\u00a0three") == 3


@pytest.mark.parametrize(("text", "expected"), [
    ("EGFR [12] mutations", 2),  # a bracketed citation is not a word once normalised
    ("a \u2192 b \u00b1 c", 3),  # a token of symbols only (arrow, plus-minus) is no word
    ("\u5176\u4ed6\u7814\u7a76 \u53d1\u73b0", 2),  # words with no ASCII letter are words
    ("Thr;Threonine,Ala;Alanine", 4),
])
def test_word_count_of_a_text_as_given(text: str, expected: int) -> None:
    assert word_count(text) == expected


def test_word_count_of_canonical_text_does_not_normalise_it_again() -> None:
    # the caller says the text is canonical already: "[12]" is then counted as it stands (a token with digits)
    assert word_count("EGFR [12] mutations", canonical=True) == 3


@pytest.mark.parametrize("up_to", [0, 1, 2, 4, 5, 6, 100])
def test_word_count_up_to_stops_counting_there(up_to: int) -> None:
    """``up_to`` is min(count, up_to): what the grounder's "fewer than 5 words?" needs, read no further."""
    for text in ("EGFR \u2014 mutant  tumours (n = 12) .", "Thr;Threonine,Ala;Alanine", "a \u2192 b \u00b1 c", "", "x"):
        assert word_count(text, up_to=up_to) == min(word_count(text), up_to), (text, up_to)


@pytest.mark.parametrize(("text", "expected"), [
    ("HR ( 0.48 )", "HR (0.48)"), ("x ( y", "x (y"), ("x [ y", "x [y"), ("see [ Fig. 2 ]", "see [Fig. 2]"),
    ("a , b ; c : d .", "a, b; c: d."), ("( a ) [ b ]", "(a) [b]"), ("no spaces (a) [b].", "no spaces (a) [b]."),
])
def test_spaces_inside_brackets_and_before_punctuation_are_dropped(text: str, expected: str) -> None:
    assert normalize(text) == expected


def test_an_empty_text_has_no_sentences() -> None:
    assert sentence_spans("") == [] and sentence_spans("One.") == [(0, 4)]


def test_sentences_do_not_end_at_abbreviations() -> None:
    text = "As shown by Smith et al. in 2010, EGFR matters. See Fig. 2 for details. Done."
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "As shown by Smith et al. in 2010, EGFR matters.", "See Fig. 2 for details.", "Done."]


TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200)


@given(TEXT)
def test_normalize_never_crashes_and_is_idempotent(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once
    assert "\u00ad" not in once and "  " not in once and once == once.strip()


@given(st.lists(st.sampled_from(["EGFR", "β-catenin", "mutant", "\u2013", "(12)", "[3]", "ﬁ", "tumour", "\n"]),
                max_size=12))
def test_normalize_is_idempotent_on_domain_tokens(tokens: list[str]) -> None:
    text = " ".join(tokens)
    assert normalize(normalize(text)) == normalize(text)
