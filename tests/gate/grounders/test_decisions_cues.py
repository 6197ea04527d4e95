"""The edges of a sentence and of a passage (issue 30, the quotes group), on every prose passage of four
pinned CIViC papers (conftest.FOUR_PMIDS): a whole sentence, or a passage's last one, is not a quote cut
before a negation or restriction (BEV028; test_decisions_quotes.py checks the quotes that are), and a
quote cut inside a passage's first word names that word.

Expected values are read from the passage text here, not from the grounder: sentences split where a
full stop, question or exclamation mark is followed by a space and a capital. Measured when written: 10
whole sentences followed by a sentence that opens with a cue, 106 last sentences of a passage.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

import pytest

from bioevidence.gate.grounders.quotes import CUE

SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


@pytest.fixture(scope="module")
def papers(four_papers: list[Any]) -> list[Any]:
    return four_papers  # conftest.FOUR_PMIDS


def _sentences(papers: list[Any]) -> Iterator[tuple[Any, Any, list[tuple[int, int]]]]:
    """(paper, passage, sentence spans) for every body paragraph and abstract passage."""
    for paper in papers:
        for passage in paper.passages:
            if passage.kind not in ("paragraph", "abstract"):
                continue
            text = passage.text
            starts = [0] + [m.end() for m in SENTENCE_BREAK.finditer(text)]
            ends = [*starts[1:], len(text)]
            yield paper, passage, [(a, a + len(text[a:b].rstrip())) for a, b in zip(starts, ends, strict=True)]


def _at(paper: Any, quote: str, passage: Any, start: int) -> Any:
    """The grounder's hit for ``quote`` when it is found at ``start`` of ``passage`` (else None)."""
    hit = paper.locate(quote)
    return hit if hit is not None and hit.passage is passage and hit.start == start else None


def test_a_whole_sentence_before_a_sentence_that_opens_with_a_cue_is_not_cut(papers: list[Any]) -> None:
    """"X was seen." followed by "No Y ..." is a complete quote: the cue belongs to the next sentence."""
    cases = 0
    for paper, passage, spans in _sentences(papers):
        for (a, b), (c, d) in itertools.pairwise(spans):
            sentence = passage.text[a:b]
            if not sentence.endswith(".") or len(sentence.split()) < 4 or not CUE.match(passage.text[c:d]):
                continue
            hit = _at(paper, sentence, passage, a)
            assert hit is not None, sentence
            assert paper.cut_before_cue(hit) is None, (sentence, passage.text[c:d])
            cases += 1
    assert cases >= 8, cases


def test_the_last_sentence_of_a_passage_is_not_cut(papers: list[Any]) -> None:
    cases = 0
    for paper, passage, spans in _sentences(papers):
        a, b = spans[-1]
        sentence = passage.text[a:b]
        hit = _at(paper, sentence, passage, a) if len(sentence.split()) >= 4 else None
        if hit is None:
            continue
        assert passage.text[hit.end:b] in ("", "."), sentence  # found to the end (its full stop aside)
        assert paper.cut_before_cue(hit) is None, sentence
        cases += 1
    assert cases >= 80, cases


def test_a_quote_cut_inside_the_first_word_of_a_passage_names_the_word_whole(papers: list[Any]) -> None:
    """The cut word's start is found by walking back to the passage's first character (offset 0)."""
    cases = 0
    for paper in papers:
        for passage in paper.passages:
            words = list(re.finditer(r"\S+", passage.text))
            if passage.kind not in ("paragraph", "abstract") or len(words) < 8 or words[0].start() != 0:
                continue
            first = words[0].group()
            if not first.isalpha() or len(first) < 6 or re.search(r"[\[\](){}]", passage.text[:words[5].end()]):
                continue
            quote = passage.text[2:words[5].end()].rstrip(")]}\"'”’.,;:!?")
            found = paper.inside_word(quote)
            assert found is not None, quote
            where, boundary = found
            if where is passage:
                assert (boundary.where, boundary.word, boundary.cut) == ("starts", first, first[:2]), quote
                cases += 1
    assert cases >= 10, cases


def _one_paragraph(text: str) -> Any:
    """The grounder's view of a JATS article whose one paragraph is ``text``."""
    from bioevidence.gate.grounders.quotes import PaperText
    from bioevidence.text.jats import parse_jats

    xml = ("<article><front><article-meta><title-group><article-title>A test article</article-title></title-group>"
           f"</article-meta></front><body><sec><title>Results</title><p>{text}</p></sec></body></article>")
    return PaperText(parse_jats(xml.encode("utf-8")))


def test_the_rest_of_a_passage_s_last_sentence_runs_past_a_glued_closing_bracket() -> None:
    """A full stop glued to a closing bracket ends no sentence before the bracket: the rest and the quote
    extended to the sentence's end keep it (worked out by hand)."""
    paper = _one_paragraph("(Tumours responded to erlotinib, except those with KRAS mutations.)")
    hit = paper.locate("Tumours responded to erlotinib")
    assert hit is not None and hit.boundary.ok
    assert paper.cut_before_cue(hit) == (", except those with KRAS mutations.)",
                                         "Tumours responded to erlotinib, except those with KRAS mutations.)")


@pytest.mark.parametrize(("text", "quote", "word", "cut"), [
    ("EGFR-mutant tumours responded to gefitinib in most patients.", "tant tumours responded to gefitinib in most",
     "EGFR-mutant", "EGFR-mu"),
    ("5-fluorouracil-treated cells died within hours.", "orouracil-treated cells died within", "5-fluorouracil-treated",
     "5-flu"),
])
def test_a_cut_in_a_later_token_of_a_passage_s_first_word_names_the_word_from_its_first_character(
        text: str, quote: str, word: str, cut: str) -> None:
    found = _one_paragraph(text).inside_word(quote)
    assert found is not None
    assert (found[1].where, found[1].word, found[1].cut) == ("starts", word, cut)
