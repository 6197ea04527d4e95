"""What ``PaperText.closest`` reports for a quote that is not in the paper (issue 30, the quotes group):
the passage span nearest the quote, trimmed to the quote's extent, its share of matching words and each
difference. On every prose passage of four pinned CIViC papers (conftest.FOUR_PMIDS) whose matching text
is its printed text; expected values are read from that text here.

Measured when written: 166 eight-word misquotes (45 with punctuation after a word), 2 paragraphs of over
210 words with repeated words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def _plain(papers: list[Any]) -> Iterator[tuple[Any, Any]]:
    """(paper, passage) for prose passages whose matching text is the printed text, on one line."""
    for paper in papers:
        for passage in paper.passages:
            if passage.kind in ("paragraph", "abstract") and passage.match == passage.text and "\n" not in passage.text:
                yield paper, passage


def _misquote(words: list[str], at: int) -> str:
    """``words`` with trailing commas, semicolons and colons dropped and word ``at`` replaced."""
    out = [w.rstrip(",;:") for w in words]
    out[at] = "zzzq"
    return " ".join(out)


def test_a_misquote_is_shown_against_the_span_it_was_taken_from_with_one_difference(four_papers: list[Any]) -> None:
    """Eight words from inside a sentence, punctuation after words dropped and the fourth replaced: the
    excerpt is exactly those eight words as the paper prints them (not the whole sentence), 7 of 8 match
    (punctuation after a word is not a difference), and the one difference is the replaced word's."""
    cases = with_commas = 0
    for paper, passage in _plain(four_papers):
        for sentence in SENTENCE_BREAK.split(passage.text):
            words = sentence.split()
            if len(words) < 14:
                continue
            taken = words[2:10]
            found = paper.closest(_misquote(taken, 3))
            assert found is not None, sentence
            if found.passage is not passage:
                continue  # the same words elsewhere in the paper
            assert found.excerpt == " ".join(taken), (found.excerpt, taken)
            assert found.ratio == 7 / 8, (found.ratio, taken)
            assert len(found.differences) == 1 and "zzzq" in found.differences[0][1], found.differences
            assert taken[3] in found.differences[0][0], (found.differences, taken)
            cases += 1
            with_commas += any(w[-1] in ",;:" for w in taken)
    assert cases >= 120 and with_commas >= 30, (cases, with_commas)


def test_a_long_misquote_counts_every_matching_word(four_papers: list[Any]) -> None:
    """Over 200 words (where difflib's automatic junk heuristic would drop frequent words): a whole
    paragraph with one word replaced matches all its other words."""
    cases = 0
    for paper, passage in _plain(four_papers):
        words = passage.text.split()
        sentences = SENTENCE_BREAK.split(passage.text)
        if len(words) < 210 or len(sentences) < 2:
            continue
        found = paper.closest(_misquote(words, len(words) // 2))
        assert found is not None and found.passage is passage
        stripped = [w.lower().strip(".,;:") for w in words]
        if len(set(stripped)) == len(stripped):
            continue  # no repeated word: nothing for the heuristic to drop
        assert found.ratio == (len(words) - 1) / len(words), (found.ratio, len(words))
        cases += 1
    assert cases >= 2, cases


def test_a_one_word_quote_found_in_the_paper_matches_whole(four_papers: list[Any]) -> None:
    paper = four_papers[0]
    word = next(w for _, p in _plain([paper]) for w in p.text.split() if w.isalpha() and len(w) > 8)
    found = paper.closest(word)
    assert found is not None and found.ratio == 1.0 and found.differences == (), found


def _article(body: str) -> Any:
    """The grounder's view of a JATS article with ``body`` (JATS body elements) under one section."""
    from bioevidence.gate.grounders.quotes import PaperText
    from bioevidence.text.jats import parse_jats

    xml = ("<article><front><article-meta><title-group><article-title>A test article</article-title></title-group>"
           f"</article-meta></front><body><sec><title>Results</title>{body}</sec></body></article>")
    return PaperText(parse_jats(xml.encode("utf-8")))


def test_a_misquoted_table_row_is_shown_against_that_row_only() -> None:
    paper = _article("<p>Text.</p><table-wrap id=\"t1\"><label>Table 1</label><caption><p>Cases</p></caption>"
                     "<table><tr><td>EGFR mutant tumours responded to gefitinib in most cases</td></tr>"
                     "<tr><td>KRAS mutant tumours did not respond to gefitinib in any case</td></tr>"
                     "</table></table-wrap>")
    found = paper.closest("EGFR mutant tumours responded to erlotinib in most cases")
    assert found is not None and found.passage.kind == "table"
    assert found.excerpt == "EGFR mutant tumours responded to gefitinib in most cases"
    assert found.differences == (("to gefitinib in", "to erlotinib in"),)


def test_of_two_equally_close_passages_the_first_is_shown() -> None:
    sentence = "KRAS mutant tumours did not respond to gefitinib in this cohort."
    paper = _article(f'<p id="first">{sentence}</p><p id="second">{sentence}</p>')
    found = paper.closest("KRAS mutant tumours did not respond to erlotinib in this cohort")
    assert found is not None and found.passage.id == "first"


def test_a_quote_ending_in_a_capital_x_keeps_its_last_word() -> None:
    # the quote's trailing full stop and spaces are dropped before comparing, never a last word "X"
    paper = _article("<p>The variant was found on chromosome Y in two families.</p>")
    found = paper.closest("The variant was found on chromosome X")
    assert found is not None and len(found.differences) == 1
    said, quoted = found.differences[0]
    assert "chromosome Y" in said and quoted.endswith("chromosome X")


#: one sentence of 215 tokens in which "the" and "variant," are frequent. difflib's "autojunk" heuristic (on by
#: default for 200 tokens or more) never starts a match on a frequent token, so the frequent words between two
#: changed ones would read as changed too
LONG = "In this cohort " + ", ".join(f"the EGFR{k} variant" for k in range(1, 71)) + " were found."


def test_a_misquote_of_a_long_sentence_counts_its_frequent_words() -> None:
    paper = _article(f"<p>{LONG}</p>")
    short = ("In this cohort the EGFR1 variant, the EGFR2 variant, the KRAS3 variant, the KRAS4 variant, "
             "the EGFR5 variant")
    found = paper.closest(short)
    assert found is not None and found.ratio == 16 / 18  # every token but KRAS3 and KRAS4
    assert found.differences == (("the EGFR3 variant,", "the KRAS3 variant,"),
                                 ("the EGFR4 variant,", "the KRAS4 variant,"))
    whole = paper.closest(LONG.replace("EGFR33 ", "KRAS33 ").replace("EGFR34 ", "KRAS34 "))
    assert whole is not None and whole.ratio == 213 / 215
    assert whole.differences == (("the EGFR33 variant,", "the KRAS33 variant,"),
                                 ("the EGFR34 variant,", "the KRAS34 variant,"))
