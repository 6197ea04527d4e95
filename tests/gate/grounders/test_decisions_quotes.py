"""Decisions of quote location and diagnosis (issue 30, the quotes group), on real pinned papers.

The whole-paper generator (test_whole_paper.py) covers every part of every paper, but one run costs
77 s, more than a mutant can afford; these tests check the same decisions on every paragraph of a
few CIViC papers, with every expected value read from the passage text here: a quote cut inside
its first or last word is found in a passage that holds it, and the word it cuts is named whole, with
the part it left out.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bioevidence.gate.grounders.literature import LiteratureGrounder
from bioevidence.gate.grounders.quotes import Closest, _reversal

OPENING, CLOSING = "([{\"'“‘", ")]}\"'”’.,;:!?"


@pytest.fixture(scope="module")
def papers(four_papers: list[Any]) -> list[Any]:
    return four_papers  # conftest.FOUR_PMIDS


def _word_spans(text: str) -> list[tuple[int, int]]:
    """Whitespace-delimited words of a passage, as (start, end) offsets."""
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def _prose(papers: list[Any]) -> Iterator[tuple[Any, Any]]:
    """(paper, passage) for every body paragraph and abstract passage of the papers."""
    for paper in papers:
        for passage in paper.passages:
            if passage.kind in ("paragraph", "abstract"):
                yield paper, passage


def _cases(papers: list[Any], limit: int = 60) -> list[tuple[Any, Any, str, str, str, str]]:
    """(paper, passage, quote, where, whole word, cut): quotes of 2 to 8 words of body and abstract
    paragraphs, without brackets, cut 2 letters into their first or last word (an alphabetic word
    of 6 letters or more, so the cut leaves a word of 4 letters or more)."""
    out: list[tuple[Any, Any, str, str, str, str]] = []
    for paper in papers:
        taken = 0
        for passage in paper.passages:
            if passage.kind not in ("paragraph", "abstract") or taken >= limit:
                continue
            spans = _word_spans(passage.text)
            for n in range(0, len(spans) - 8, 5):
                size = 2 + n % 7  # 2 … 8 words
                first, last = spans[n], spans[n + size - 1]
                word_a = passage.text[first[0]:first[1]]
                word_b = passage.text[last[0]:last[1]]
                if re.search(r"[\[\](){}]", passage.text[first[0]:last[1]]):
                    continue  # citation brackets and asides: test_whole_paper.py's cases cover them
                if word_a.isalpha() and len(word_a) >= 6:
                    quote = passage.text[first[0] + 2:last[1]].rstrip(CLOSING)
                    out.append((paper, passage, quote, "starts", word_a, word_a[:2]))
                    taken += 1
                if word_b.isalpha() and len(word_b) >= 6:
                    quote = passage.text[first[0]:last[1] - 2].lstrip(OPENING)
                    out.append((paper, passage, quote, "ends", word_b, word_b[-2:]))
                    taken += 1
    return out


def test_a_quote_cut_inside_its_first_or_last_word_names_the_word_whole(papers: list[Any]) -> None:
    cases = _cases(papers)
    assert len(cases) >= 150 and {c[3] for c in cases} == {"starts", "ends"}
    assert {len(c[2].split()) for c in cases} >= {2, 3, 8}  # two-word quotes too
    for paper, _passage, quote, where, word, cut in cases:
        found = paper.inside_word(quote)
        assert found is not None, (where, quote)
        where_found, boundary = found
        text = where_found.text
        assert quote in text, quote  # a passage that holds the quote, byte for byte
        assert (boundary.ok, boundary.where) == (False, where), quote
        assert boundary.negation is False  # none of these cuts is a negating prefix of a real word
        # the word the cut falls in, named whole, and the part the quote left out, as printed
        at = [m.start() for m in re.finditer(re.escape(quote), text)]
        if where == "starts":
            assert any(text[i - len(boundary.cut):i] == boundary.cut and text[:i].split()[-1] + quote.split()[0]
                       == boundary.word for i in at if i >= len(boundary.cut)), (quote, boundary)
        else:
            assert any(text[i + len(quote):].startswith(boundary.cut) and quote.split()[-1] + boundary.cut
                       == boundary.word for i in at), (quote, boundary)
        if where_found is _passage:
            assert (boundary.word, boundary.cut) == (word, cut), quote


def test_a_quote_of_one_word_or_of_whole_words_is_not_a_cut_word(papers: list[Any]) -> None:
    paper = papers[0]
    passage = next(p for p in paper.passages if p.kind == "paragraph" and len(p.text.split()) > 20)
    words = passage.text.split()
    long_word = next(w for w in words if w.isalpha() and len(w) >= 6)
    assert paper.inside_word(long_word[2:]) is None  # one word: no sentence to anchor a cut on
    assert paper.inside_word(long_word[:-2]) is None
    # whole words: every run of 2 to 6 whole words of the passages, printed as the paper prints them,
    # is not a cut word (a word as long as the quote's first or last word that ends or starts with it
    # is that word)
    vocabulary = {w.lower() for p in paper.passages for w in re.findall(r"[^\W\d_]+", p.text)}

    def uncut(first: str, last: str) -> bool:  # no other word of the paper ends with first or starts with last
        return not any((w != first and w.endswith(first)) or (w != last and w.startswith(last)) for w in vocabulary)

    cases = 0
    for passage in (p for p in paper.passages if p.kind == "paragraph"):
        words = [w for w in passage.text.split() if w.isalpha()]
        for n in range(0, len(words) - 6, 7):
            run = " ".join(words[n:n + 2 + n % 5])
            if run in passage.text and uncut(run.split()[0].lower(), run.split()[-1].lower()):
                assert paper.inside_word(run) is None, run
                cases += 1
    assert cases >= 60, cases  # 78 when written


@pytest.mark.parametrize(("paper", "quote", "prefix"), [
    ("the tumours were unresponsive to gefitinib", "the tumours were responsive to gefitinib", "un"),
    ("this variant is non-pathogenic in carriers", "this variant is pathogenic in carriers", "non"),
    ("the effect was insignificant (p = 0.4)", "the effect was significant (p = 0.4)", "in"),
    ("the drug was Ineffective.", "the drug was effective.", "in"),
    ("an unusual response was seen", "a usual response was seen", "un"),
])
def test_a_dropped_negating_prefix_is_named(paper: str, quote: str, prefix: str) -> None:
    assert _reversal(paper, quote) == prefix


@pytest.mark.parametrize(("paper", "quote"), [
    ("the tumours were responsive to gefitinib", "the tumours were responsive to gefitinib"),
    ("unresponsive and responsive tumours", "responsive tumours"),  # the quote's word is also in the paper
    ("", "responsive"),
])
def test_no_reversal_when_the_paper_does_not_negate_the_quoted_word(paper: str, quote: str) -> None:
    assert _reversal(paper, quote) == ""


def test_the_closest_passage_is_described_with_each_difference(papers: list[Any]) -> None:
    passage = papers[0].passages[0]
    plain = Closest(passage, "some text", 0.9, ())
    assert plain.describe() == f"the closest passage (#{passage.id}) says 'some text'"
    diffs = (("unresponsive", "responsive"), ("12", "13"), ("a", "b"), ("c", "d"))
    text = Closest(passage, "x", 0.8, diffs).describe()
    assert text == ("the paper says 'unresponsive'; the quote says 'responsive' (dropping 'un' reverses the "
                    "meaning); the paper says '12'; the quote says '13'; the paper says 'a'; the quote says 'b' "
                    f"(closest passage #{passage.id})")


# -- the cached form of a paper: what the cache gives back is the paper the reader read ----------------

def _jats_files(shared_data: Path) -> list[Path]:
    """Two articles of each JATS source in the shared data (PLOS, eLife, Europe PMC, PMC OA)."""
    out = []
    for folder in sorted(p for p in (shared_data / "jats").iterdir() if p.is_dir()):
        out += sorted(p for p in folder.iterdir() if p.suffix in (".xml", ".nxml"))[:2]
    return out


def test_an_article_and_its_tokens_survive_the_cache_unchanged(shared_data: Path) -> None:
    import marshal

    from bioevidence.gate.grounders.quotes import article_from_plain, article_to_plain
    from bioevidence.text.jats import parse_jats
    from bioevidence.text.plain import plain_article
    from bioevidence.text.tokens import tokenize

    files = _jats_files(shared_data)
    assert len(files) >= 8
    articles = [parse_jats(path.read_bytes(), source=path.name) for path in files]
    articles.append(plain_article("A first line.\n\nA second paragraph, after a blank line.", title="Plain"))
    kinds = set()
    for article in articles:
        back, tokens = article_from_plain(marshal.loads(marshal.dumps(article_to_plain(article))))
        assert back == article  # every field of every passage, the title, ids and markers
        assert [t.to_plain() for t in tokens] == [tokenize(p.text, p.markers, p.breaks).to_plain()
                                                  for p in article.passages]
        kinds |= {(p.part, bool(p.markers), bool(p.breaks), bool(p.aliases), p.cited is not None, bool(p.scripts))
                  for p in article.passages}
    # the passages read cover every field the cached form carries, set and unset
    assert {k[1] for k in kinds} == {True, False} and {k[2] for k in kinds} == {True, False}
    assert {k[3] for k in kinds} == {True, False} and {k[5] for k in kinds} == {True, False}


def test_a_paper_with_extra_passages_and_no_cached_tokens_reads_them_all(shared_data: Path) -> None:
    from bioevidence.gate.grounders.quotes import PaperText, article_from_plain, article_to_plain
    from bioevidence.text.jats import Passage, parse_jats

    article = parse_jats(_jats_files(shared_data)[0].read_bytes())
    extra = (Passage("pubmed-title", "title", "title", "title", "A PubMed title, not the article's.",
                     "A PubMed title, not the article's.", "title"),)
    cached = PaperText(article, extra, article_from_plain(article_to_plain(article))[1])
    fresh = PaperText(article, extra)
    assert cached.passages == fresh.passages == [*article.passages, *extra]
    last = article.passages[-1].text.split()
    for paper in (cached, fresh):
        hit = paper.locate("A PubMed title, not the article's")
        assert hit is not None and hit.passage is extra[0] and paper.index_of(extra[0]) == len(article.passages)
        tail = paper.locate(" ".join(last[-4:]))
        assert tail is not None and tail.passage.text == article.passages[-1].text
        first = article.passages[0]
        assert paper.passage(first.id) is first
        assert paper.passage("no-such-id") is None
        assert paper.passage("pubmed-title") is extra[0]
    # a passage broken into lines (a list, a table row) reads the same with its tokens cached or not
    broken = [p for p in article.passages if p.breaks and len(p.text) > p.breaks[0] + 20 and p.breaks[0] > 20]
    assert broken
    for passage in broken[:20]:
        cut = passage.breaks[0]
        quote = passage.text[max(0, cut - 20):cut + 20]
        a, b = cached.locate(quote), fresh.locate(quote)
        assert (a and (a.passage.id, a.start, a.end, a.boundary)) == (b and (b.passage.id, b.start, b.end, b.boundary))


def test_a_repeated_passage_id_names_its_first_passage(shared_data: Path) -> None:
    from dataclasses import replace

    from bioevidence.gate.grounders.quotes import PaperText
    from bioevidence.text.jats import parse_jats

    article = parse_jats(_jats_files(shared_data)[0].read_bytes())
    one, two = article.passages[0], article.passages[1]
    twin = replace(two, id=one.id)
    paper = PaperText(replace(article, passages=(one, twin, *article.passages[2:])))
    assert paper.passage(one.id) is one
    assert paper.index_of(twin) == 1  # each passage object keeps its own place


# -- the closest passage of a misquote ---------------------------------------------------------------

def _sentences(papers: list[Any], per_paper: int = 25) -> list[tuple[Any, Any, str]]:
    """(paper, passage, sentence) for body and abstract sentences of 8 to 40 words, read from the
    passages' matching text with the reader's sentence splitter."""
    from bioevidence.text.normalize import sentence_spans

    out = []
    for paper in papers:
        taken = 0
        for passage in paper.passages:
            if passage.kind not in ("paragraph", "abstract") or taken >= per_paper:
                continue
            for line in passage.match.split("\n"):
                for a, b in sentence_spans(line):
                    sentence = line[a:b]
                    if 8 <= len(sentence.split()) <= 40 and taken < per_paper:
                        out.append((paper, passage, sentence))
                        taken += 1
    return out


def test_a_one_word_misquote_is_shown_beside_the_sentence_it_changed(papers: list[Any]) -> None:
    cases = _sentences(papers)
    assert len(cases) >= 80
    for paper, _passage, sentence in cases:
        words = sentence.split()
        k = len(words) // 2
        quote_words = [*words[:k], "Zyxwvut", *words[k + 1:]]  # a word no paper has
        found = paper.closest(" ".join(quote_words))
        assert found is not None, sentence
        assert found.excerpt == " ".join(words) and sentence in found.passage.match, (found.excerpt, sentence)
        assert found.ratio == pytest.approx((len(words) - 1) / len(words))
        assert found.differences == ((" ".join(words[k - 1:k + 2]), " ".join(quote_words[k - 1:k + 2])),)


def test_a_misquote_across_two_sentences_is_shown_with_both(papers: list[Any]) -> None:
    from bioevidence.text.normalize import sentence_spans

    checked = 0
    for paper in papers:
        for passage in paper.passages:
            if passage.kind != "paragraph" or "\n" in passage.match:
                continue
            spans = sentence_spans(passage.match)
            for (a1, b1), (a2, b2) in itertools.pairwise(spans):
                first, second = passage.match[a1:b1], passage.match[a2:b2]
                if not (6 <= len(first.split()) <= 25 and 6 <= len(second.split()) <= 25):
                    continue
                words = second.split()
                quote = f"{first} {' '.join([*words[:2], 'Zyxwvut', *words[3:]])}"
                found = paper.closest(quote)
                assert found is not None and found.excerpt == f"{first} {second}", (found and found.excerpt, quote)
                checked += 1
                break
    assert checked >= 10


def test_nothing_to_compare_gives_no_closest_passage(papers: list[Any]) -> None:
    from bioevidence.gate.grounders.quotes import PaperText
    from bioevidence.text.jats import Article

    assert papers[0].closest("") is None and papers[0].closest("   ") is None
    assert papers[0].closest("—") is None  # no word to compare
    assert PaperText(Article("", ())).closest("a quote with words") is None


# -- a cut that drops a negating prefix, and words in brackets -----------------------------------------

def test_a_quote_that_drops_a_negating_prefix_is_told_apart_from_one_that_cuts_a_word(papers: list[Any]) -> None:
    """Every unhyphenated word of the papers that starts with a negating prefix: a quote starting
    after the prefix reverses the meaning when the rest is itself a word of the paper, of 4 letters or
    more, and the whole is not a known false friend; otherwise it only cuts the word."""
    from bioevidence.gate.grounders.align import _NOT_NEGATIONS, NEGATING_PREFIXES

    seen = {True: 0, False: 0}
    for paper in papers:
        words = {w.lower() for p in paper.passages for w in re.findall(r"[A-Za-z0-9]+", p.text)}
        for passage in paper.passages:
            if passage.kind not in ("paragraph", "abstract"):
                continue
            for m in re.finditer(r"(?<!\S)([A-Za-z]{6,}) [A-Za-z]+ [A-Za-z]+(?!\S)", passage.text):
                word = m.group(1)
                for prefix in NEGATING_PREFIXES:
                    if not word.lower().startswith(prefix) or len(word) - len(prefix) < 3:
                        continue
                    stem = word[len(prefix):].lower()
                    found = paper.inside_word(passage.text[m.start(1) + len(prefix):m.end()])
                    assert found is not None, m.group(0)
                    boundary = found[1]
                    if boundary.word != word:
                        continue  # another passage holds the same words after another word
                    want = word.lower() not in _NOT_NEGATIONS and len(stem) >= 4 and stem in words
                    assert (boundary.cut, boundary.negation) == (word[:len(prefix)], want), m.group(0)
                    seen[want] += 1
    assert seen[True] >= 3 and seen[False] >= 10, seen


def test_a_cut_word_in_brackets_or_quotation_marks_is_named_without_them(papers: list[Any]) -> None:
    checked = {"starts": 0, "ends": 0}
    for paper, passage in _prose(papers):
        text = passage.text
        for m in re.finditer(r"(?<!\S)([(\[\"'“‘]+)([A-Za-z]{6,}) (\w+ \w+)(?!\S)", text):
            quote = text[m.start(2) + 2:m.end(3)]
            found = paper.inside_word(quote)
            assert found is not None, quote
            boundary = found[1]
            if quote in found[0].text and found[0] is passage:
                assert (boundary.where, boundary.word, boundary.cut) == ("starts", m.group(2), m.group(2)[:2])
                checked["starts"] += 1
        for m in re.finditer(r"(?<!\S)(\w+ \w+) ([A-Za-z]{6,})([)\]\"'”’.,;:]+)(?!\S)", text):
            quote = text[m.start(1):m.end(2) - 2]
            if re.search(r"[\[\](){}]", quote):
                continue
            found = paper.inside_word(quote)
            assert found is not None, quote
            boundary = found[1]
            if found[0] is passage:
                assert (boundary.where, boundary.word, boundary.cut) == ("ends", m.group(2), m.group(2)[-2:])
                checked["ends"] += 1
    assert checked["starts"] >= 3 and checked["ends"] >= 20, checked


# -- a quote that stops just before a negation or restriction ------------------------------------------

_CUE_WORD = re.compile(r"(?<=[a-z]) (not|no|without|except|unless|only|never|failed|in (?:mice|vitro|xenografts))\b")


def test_a_quote_stopping_before_a_cue_is_given_the_rest_of_its_sentence(papers: list[Any]) -> None:
    """Every clause of the papers' paragraphs followed by a cue word: quoted up to the cue, the rest
    of the sentence (to its full stop, semicolon, ! or ?) is named, and the quote extended to the end
    of the sentence; quoted a word further, nothing is."""
    from bioevidence.text.normalize import normalize

    checked = 0
    for paper, passage in _prose(papers):
        text = passage.text
        for m in _CUE_WORD.finditer(text):
            head_start = max(text.rfind(". ", 0, m.start()) + 2, 0)
            quote = text[head_start:m.start()]
            stop = re.compile(r"[.!?;](?=\s|$)").search(text, m.end())
            if len(quote.split()) < 6 or stop is None or re.search(r"[\[\](){}:;]", text[head_start:stop.start()]):
                continue
            hit = paper.locate(quote)
            if hit is None or hit.passage is not passage or not hit.boundary.ok:
                continue  # the same words elsewhere first: another passage's sentence
            got = paper.cut_before_cue(hit)
            rest = " ".join(normalize(text[m.start() + 1:stop.start()]).split())
            assert got == (rest, text[hit.start:stop.end()]), (quote, got)
            longer = paper.locate(text[head_start:m.end()])
            assert (longer is not None and paper.cut_before_cue(longer) is None) or m.group(1) == "in vitro"
            checked += 1
    assert checked >= 15, checked


def test_a_quote_ending_its_sentence_or_clause_has_no_cue_after_it(papers: list[Any]) -> None:
    checked = 0
    for paper in papers:
        for passage in paper.passages:
            if passage.kind != "paragraph":
                continue
            for m in re.finditer(r"(?<=\. )([A-Z][^.;:()\[\]]{40,200}?)([.;])(?= [A-Z])", passage.text):
                for quote in (m.group(1), m.group(1) + m.group(2)):
                    hit = paper.locate(quote)
                    if hit is not None and hit.passage is passage and hit.boundary.ok:
                        assert paper.cut_before_cue(hit) is None, quote
                        checked += 1
    assert checked >= 40, checked


@pytest.mark.parametrize(("text", "quote", "want"), [
    # the rest stops at the sentence's end: a full stop, a semicolon, ! or ? followed by a space or the end
    ("The drug reduced growth in the first cohort, not in the second; it failed in mice.",
     "The drug reduced growth in the first cohort", (", not in the second",
                                                    "The drug reduced growth in the first cohort, not in the second;")),
    ("Did the drug reduce growth in the first cohort, not in the second? It failed in mice.",
     "Did the drug reduce growth in the first cohort", (", not in the second",
                                                        "Did the drug reduce growth in the first cohort, not in the "
                                                        "second?")),
    ("The drug reduced growth in the first cohort, but not in the second! It failed in mice.",
     "The drug reduced growth in the first cohort", (", but not in the second",
                                                     "The drug reduced growth in the first cohort, but not in the "
                                                     "second!")),
    ("The drug reduced growth in the first cohort only in mice",
     "The drug reduced growth in the first cohort", ("only in mice", "The drug reduced growth in the first cohort "
                                                                     "only in mice")),
    # a quote that ends its own clause or sentence stops nowhere suspicious
    ("The drug reduced growth in the first cohort; not in the second.",
     "The drug reduced growth in the first cohort;", None),
    ("Did the drug reduce growth in the first cohort? Not in mice.",
     "Did the drug reduce growth in the first cohort?", None),
    ("The drug reduced growth in the first cohort! Not in mice.",
     "The drug reduced growth in the first cohort!", None),
    ("The drug reduced growth in the first cohort: not in mice.",
     "The drug reduced growth in the first cohort", None),
    ("The drug reduced growth in the first cohort and in the second.",
     "The drug reduced growth in the first cohort", None),
])
def test_the_rest_of_the_sentence_after_a_quote_is_read_to_its_end(text: str, quote: str,
                                                                   want: tuple[str, str] | None) -> None:
    from bioevidence.gate.grounders.quotes import PaperText
    from bioevidence.text.plain import plain_article

    paper = PaperText(plain_article(text, title="A title"))
    hit = paper.locate(quote)
    assert hit is not None and hit.boundary.ok
    assert paper.cut_before_cue(hit) == want


@pytest.mark.parametrize("where", ["first", "last"])
def test_a_misquoted_first_or_last_word_is_shown_within_the_sentence(papers: list[Any], where: str) -> None:
    for paper, _passage, sentence in _sentences(papers, per_paper=10):
        words = sentence.split()
        k = 0 if where == "first" else len(words) - 1
        quote_words = [*words[:k], "Zyxwvut", *words[k + 1:]]
        found = paper.closest(" ".join(quote_words))
        assert found is not None and found.excerpt == " ".join(words), (found and found.excerpt, sentence)
        near = slice(0, 2) if where == "first" else slice(len(words) - 2, len(words))
        assert found.differences == ((" ".join(words[near]), " ".join(quote_words[near])),)


def test_punctuation_around_a_word_is_no_difference(papers: list[Any]) -> None:
    checked = 0
    for paper, _passage, sentence in _sentences(papers):
        words = sentence.split()
        if not any(w.endswith((",", ";", ":")) for w in words[:-1]) or re.search(r"[\[\](){}]", sentence):
            continue
        k = len(words) // 2
        bare = [w.rstrip(",;:") for w in words]  # the quote drops the paper's commas and semicolons
        quote_words = [*bare[:k], "Zyxwvut", *bare[k + 1:]]
        found = paper.closest(" ".join(quote_words))
        assert found is not None and len(found.differences) == 1, (sentence, found and found.differences)
        assert found.ratio == pytest.approx((len(words) - 1) / len(words))
        checked += 1
    assert checked >= 20


def test_a_quote_sharing_no_word_with_the_paper_gets_a_passage_and_no_differences(papers: list[Any]) -> None:
    found = papers[0].closest("Zyxwvut qwertyuiop asdfghjkl")
    assert found is not None and found.ratio == 0.0 and found.differences == ()
    assert found.excerpt and found.excerpt in " ".join(found.passage.match.split())
    assert found.describe() == f"the closest passage (#{found.passage.id}) says '{found.excerpt}'"


def test_a_cut_first_word_capitalised_or_followed_by_a_comma_is_still_named(papers: list[Any]) -> None:
    """Pipelines capitalise a quote's first letter, and a cut word may carry the comma after it."""
    seen = {"capitalised": 0, "comma": 0}
    for paper, passage in _prose(papers):
        text = passage.text
        for m in re.finditer(r"(?<!\S)([a-z]{6,})(,?) ([a-z]+ [a-z]+ [a-z]+)(?!\S)", text):
            word, comma = m.group(1), m.group(2)
            quote = text[m.start(1) + 2:m.end()]
            kind = "comma" if comma else "capitalised"
            if not comma:
                quote = quote[0].upper() + quote[1:]
            found = paper.inside_word(quote)
            assert found is not None, quote
            boundary = found[1]
            if found[0] is passage and boundary.word == word:
                assert (boundary.where, boundary.cut, boundary.ok) == ("starts", word[:2], False), quote
                seen[kind] += 1
    assert min(seen.values()) >= 20, seen


# -- a quote that starts with a word carrying its superscript citation ---------------------------------

def test_a_quote_starting_with_a_word_and_its_glued_citation_is_found(corpus_dir: Path, cache_dir: Path) -> None:
    """Every citation marker printed glued to the end of a word (``algorithm53,``) in every CIViC paper
    with full text: a quote that starts with that word as printed, citation digits included, is the
    paper's text (it was refused before: its first word is no word of the paper), and with the number
    changed it is not."""
    grounder = LiteratureGrounder.from_directory(corpus_dir, cache_root=cache_dir)
    found = refused = 0
    for work in grounder.catalogue:
        if not work.fulltext_sha256 or found >= 150:
            continue
        paper = grounder.paper(work, grounder.metadata(work))
        for passage in paper.passages:
            text = passage.text
            for a, b in passage.markers:
                m = re.search(r"(?<!\S)([A-Za-z][A-Za-z-]*[A-Za-z])$", text[:a])
                if m is None or not text[a:b].isdigit():
                    continue
                tail = re.match(r"[^\s\[\](){}]*(?: [A-Za-z][\w-]*){5}(?=[,;:.]?(?:\s|$))", text[b:])
                if tail is None:
                    continue
                quote = text[m.start(1):b + tail.end()]
                hit = paper.locate(quote)
                assert hit is not None and hit.boundary.ok and hit.text == quote, quote
                found += 1
                wrong = quote.replace(text[a:b], str(int(text[a:b]) + 1), 1)
                other = paper.locate(wrong)
                assert other is None or other.text != wrong, wrong
                refused += other is None
    assert found >= 50 and refused >= found // 2, (found, refused)


# -- a quote that starts or ends inside a hyphenated word, found by locate ----------------------------

def _hyphenated(papers: list[Any]) -> Iterator[tuple[Any, Any, re.Match[str]]]:
    """(paper, passage, match) for every hyphenated word of two alphabetic parts followed by two words."""
    for paper, passage in _prose(papers):
        for m in re.finditer(r"(?<!\S)([A-Za-z]+)-([A-Za-z]{3,}) ([A-Za-z]+) ([A-Za-z]+)(?!\S)", passage.text):
            yield paper, passage, m


def _clean_elsewhere(paper: Any, quote: str) -> bool:
    """The quote also stands in the paper as whole words (then that place is the one found)."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(quote)}(?![\w-])")
    return any(pattern.search(p.text) for p in paper.passages)


def test_a_quote_starting_after_the_hyphen_of_a_word_is_found_with_the_word_named(papers: list[Any]) -> None:
    """The part after the hyphen starts the quote: the paper's place is found, but as a cut word, the
    whole word and its dropped part named; dropping "non-" reverses the meaning (non-small, non-
    significant …). The papers hold no other hyphenated negating prefix (checked, so a new case is
    decided by hand)."""
    from bioevidence.gate.grounders.align import NEGATING_PREFIXES

    seen = {"cut": 0, "reversal": 0, "clean elsewhere": 0}
    for paper, passage, m in _hyphenated(papers):
        quote = passage.text[m.start(2):m.end()]
        hit = paper.locate(quote)
        assert hit is not None, m.group(0)
        if _clean_elsewhere(paper, quote):
            assert hit.boundary.ok and hit.text == quote, m.group(0)
            seen["clean elsewhere"] += 1
            continue
        assert hit.text == quote, m.group(0)
        # the first place in the paper's order where the quote follows a hyphen (this one or an earlier)
        found = re.search(r"([A-Za-z]+)-$", hit.passage.text[:hit.start])
        assert found is not None, (m.group(0), hit.passage.text[:hit.start][-30:])
        head = found.group(1)
        assert head.lower() == "non" or head.lower() not in NEGATING_PREFIXES, f"decide by hand: {m.group(0)}"
        b = hit.boundary
        assert (b.ok, b.where, b.word, b.cut) == (False, "starts", f"{head}-{m.group(2)}", f"{head}-"), m.group(0)
        assert b.negation is (head.lower() == "non"), m.group(0)
        seen["reversal" if b.negation else "cut"] += 1
    assert seen["cut"] >= 30 and seen["reversal"] >= 3 and seen["clean elsewhere"] >= 1, seen


def test_a_quote_ending_before_the_hyphen_of_a_word_is_found_with_the_word_named(papers: list[Any]) -> None:
    seen = 0
    for paper, passage, m in _hyphenated(papers):
        before = passage.text[:m.start()].split()[-2:]
        if len(before) < 2 or not all(w.isalpha() for w in before):
            continue
        quote = " ".join([*before, m.group(1)])
        if _clean_elsewhere(paper, quote) or quote not in passage.text:
            continue
        hit = paper.locate(quote)
        # the first place in the paper's order (a capital first letter matches a small one there)
        assert hit is not None and hit.text[1:] == quote[1:] and hit.text[0].lower() == quote[0].lower(), quote
        tail = re.match(r"-([A-Za-z]+)", hit.passage.text[hit.end:])
        assert tail is not None, (quote, hit.passage.text[hit.end:hit.end + 30])
        b = hit.boundary
        assert (b.ok, b.where, b.word, b.cut, b.negation) == (
            False, "ends", f"{m.group(1)}-{tail.group(1)}", f"-{tail.group(1)}", False), quote
        seen += 1
    assert seen >= 10, seen


def _found_at(paper: Any, quote: str, hit: Any) -> bool:
    """The quote is located at the same place of the same passage as ``hit``."""
    again = paper.locate(quote)
    return again is not None and (again.passage, again.start, again.end) == (hit.passage, hit.start, hit.end)


def test_a_quote_in_quotation_marks_or_with_a_final_full_stop_is_the_same_quote(papers: list[Any]) -> None:
    """Outer quotation marks of any kind (straight, curly, single, double, or mixed: "…", “…”, '…', ‘…’, “…’)
    and a final full stop are not part of a quote: it is found where the bare quote is, the same text."""
    seen = 0
    for paper, passage in _prose(papers):
        for m in re.finditer(r"(?<=[.;] )([A-Z][a-z]+(?: [a-z]+){3,6})(?=[ ,])", passage.text):
            bare = m.group(1)
            hit = paper.locate(bare)
            if hit is None:
                continue
            for left, right in (('"', '"'), ("“", "”"), ("'", "'"), ("‘", "’"), ("“", "’")):
                for quote in (f"{left}{bare}{right}", f"  {left} {bare}. {right} ", f"{left}{bare}.{right}",
                              f"{bare}.", f"{bare} . ", f"{bare}. . "):
                    assert _found_at(paper, quote, hit), quote
            seen += 1
            break
    assert seen >= 20, seen


def test_a_quote_whose_first_word_is_broken_at_a_line_end_hyphen_is_found(papers: list[Any]) -> None:
    """Copied from a PDF, a quote can start "resis- tance to gefitinib": the paper's word, broken with a
    hyphen and a space. It is found where the unbroken quote is, whatever the case of its first letter."""
    seen = 0
    for paper, passage in _prose(papers):
        for m in re.finditer(r"(?<= )([a-z]{8,})((?: [a-z]+){3})(?=[ ,.])", passage.text):
            word, rest = m.group(1), m.group(2)
            hit = paper.locate(word + rest)
            if hit is None or hit.text != word + rest:
                continue
            for broken in (f"{word[:4]}- {word[4:]}{rest}", f"{word[:4].capitalize()}- {word[4:]}{rest}"):
                assert _found_at(paper, broken, hit), broken
            seen += 1
            break
    assert seen >= 20, seen


def test_a_one_character_quote_in_quotation_marks_is_the_character(papers: list[Any]) -> None:
    """The outer quotation marks of a quote of one character are not part of it either ("a" is a)."""
    seen = 0
    for paper in papers:
        for char in sorted({m.group(0) for p in paper.passages for m in re.finditer(r"(?<!\S)[a-z0-9](?!\S)", p.text)}):
            hit = paper.locate(char)
            assert hit is not None, char
            for left, right in (('"', '"'), ("“", "”"), ("'", "'")):
                assert _found_at(paper, f"{left}{char}{right}", hit), (left, char)
            seen += 1
    assert seen >= 8, seen


def test_a_quote_ending_in_the_paper_s_own_quotation_mark_keeps_it(papers: list[Any]) -> None:
    """A quote that closes a quotation the paper prints (… patients who were “never smokers”) but does not
    open with a quotation mark is not in outer marks: it is found whole, byte for byte, cutting no word."""
    seen = 0
    for paper in papers:
        for passage in paper.passages:
            for m in re.finditer(r"\b[A-Za-z]+(?: [A-Za-z]+){1,2} [“\"][A-Za-z ]{3,40}[”\"]", passage.text):
                quote = m.group(0)
                hit = paper.locate(quote)
                assert hit is not None and hit.boundary.ok, quote
                assert hit.passage.text[hit.start:hit.end] == quote
                seen += 1
    assert seen >= 2, seen  # "never smokers" and "best overall response" in 15696205


def test_a_one_word_quote_found_only_as_a_passage_s_last_word(papers: list[Any]) -> None:
    """A word a paper prints once, as the last thing in a passage (a title, a heading, a table cell, a
    caption without a full stop), is found there."""
    seen = 0
    for paper in papers:
        counts: dict[str, int] = {}
        for p in paper.passages:
            for w in re.findall(r"[^\W_]+", p.text.lower()):  # a first word is found in either case
                counts[w] = counts.get(w, 0) + 1
        for p in paper.passages:
            m = re.search(r"(?<![^\W_])([A-Za-z]{4,})\s*$", p.text)
            if m is None or counts.get(m.group(1).lower()) != 1:
                continue
            hit = paper.locate(m.group(1))
            assert hit is not None and hit.passage is p, (m.group(1), p.kind)
            assert p.text[hit.start:hit.end] == m.group(1)
            seen += 1
    assert seen >= 3, seen


def test_a_quote_across_two_table_cells_is_not_found_across_them(papers: list[Any]) -> None:
    """No quote continues across a cell or line boundary of a table (a break): two words that end one cell
    and two that start the next, adjacent in the printed text, are not located across the boundary."""
    seen = 0
    for paper in papers:
        for passage in paper.passages:
            for cut in passage.breaks:
                left, right = passage.text[:cut].rstrip(), passage.text[cut:].lstrip()
                before, after = re.findall(r"[A-Za-z]{3,}", left)[-2:], re.findall(r"[A-Za-z]{3,}", right)[:2]
                if len(before) < 2 or len(after) < 2 or not (left.endswith(before[1]) and right.startswith(after[0])):
                    continue
                quote = " ".join(before + after)
                if quote not in " ".join((left[-60:] + " " + right[:60]).split()):
                    continue  # the four words are not adjacent across the boundary
                hit = paper.locate(quote)
                assert hit is None or not (hit.passage is passage and hit.start < cut < hit.end), quote
                seen += 1
    assert seen >= 5, seen  # 6 when written


def test_a_paper_read_without_cached_tokens_keeps_its_table_cells_apart() -> None:
    """The same for a paper tokenised on the spot (no grounder cache: an article read and checked at once)."""
    from bioevidence.gate.grounders.quotes import PaperText
    from bioevidence.text.jats import parse_jats

    xml = ("<article><front><article-meta><title-group><article-title>A test article</article-title></title-group>"
           "</article-meta></front><body><sec><title>Results</title><p>Text.</p><table-wrap id=\"t1\"><label>Table 1"
           "</label><caption><p>Cases</p></caption><table><tr><td>EGFR mutant tumours</td><td>responded to gefitinib"
           "</td></tr></table></table-wrap></sec></body></article>")
    paper = PaperText(parse_jats(xml.encode("utf-8")))
    table = next(p for p in paper.passages if p.kind == "table")
    assert table.text == "EGFR mutant tumours responded to gefitinib" and table.breaks == (20,)
    assert paper.locate("EGFR mutant tumours") is not None and paper.locate("responded to gefitinib") is not None
    assert paper.locate("mutant tumours responded to") is None
