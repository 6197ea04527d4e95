"""``text/tokens.py``'s tokens, offsets and spacing over every paragraph of the real corpus (issue 30).

The tokens are what a quote is compared with: a wrong offset makes a "verbatim" slice that is not the
paper's bytes, a wrong space flag makes ``in effective`` equal ``ineffective``. Three oracles, none of
them the code under test:

* **two implementations**: a text with no markers and no breaks is tokenised by one ``re.split``
  (``_plain_tokens``); the general loop (reached here by a break at the text's end, which cuts nothing)
  must give the same tokens, kinds, spacing and offsets;
* **the module's own definitions, written again here**: a word is a run of ``str.isalnum`` characters
  and every other visible character one punctuation token; an ASCII token is exactly the slice its
  offsets name; a token is spaced exactly when whitespace (not an invisible character) lies between it
  and the token before;
* **markers and breaks only cut**: a citation-marker span laid on token edges changes nothing but the
  kinds of the tokens inside it (upper case), wherever invisible characters stand before it; a break
  between two tokens adds one break token there and makes the next token spaced.

The texts: every ``<p>`` of every pinned CIViC paper and of the shared JATS articles, read with plain
lxml (not the project's reader), and a seeded sample of them with invisible, combining, astral,
expanding and space characters inserted (what PDF copy-paste and typesetting put into quotes).
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest
from lxml import etree

from bioevidence.text.tokens import BREAK, MPUNCT, MWORD, PUNCT, WORD, Tokens, canonical, tokenize

#: characters typesetting and copy-paste put into text: zero-width space, soft hyphen, BOM, word joiner
#: (invisible: canonically nothing); a combining acute after a letter; astral letters; a ligature and a
#: fraction (one character, several canonical ones); no-break, thin and ideographic spaces; curly quotes
INVISIBLE = ("\u200b", "\u00ad", "\ufeff", "\u2060")
INSERTS = (*INVISIBLE, "\u0301", "\U0001d6c2", "\U0001f600", "\ufb01", "\u00bd", "\u00a0", "\u2009", "\u3000",
           "\u201c", "\u2019", " ")


def _paragraphs(shared: Path) -> list[str]:
    files = sorted((shared / "civic_corpus" / "snapshots").glob("*.xml.gz")) + sorted((shared / "jats").rglob("*.xml"))
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    out = []
    for path in files:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        root = etree.fromstring(data, parser)
        for p in root.iter("{*}p", "p"):
            text = "".join(str(piece) for piece in p.itertext())
            if text.strip():
                out.append(text)
    return out


@pytest.fixture(scope="module")
def paragraphs(shared_data: Path) -> list[str]:
    found = _paragraphs(shared_data)
    assert len(found) > 5_000, len(found)
    return found


@pytest.fixture(scope="module")
def altered(paragraphs: list[str]) -> list[str]:
    """A seeded sample of paragraphs, each with a few of ``INSERTS`` at random places (and one at its start)."""
    rng = random.Random(30)
    out = []
    for text in rng.sample(paragraphs, 1_500):
        chars = list(text)
        for _ in range(rng.randint(1, 6)):
            chars.insert(rng.randrange(len(chars) + 1), rng.choice(INSERTS))
        out.append(rng.choice(INSERTS) + "".join(chars))
    return out


def _fields(t: Tokens) -> tuple[object, ...]:
    return (t.words, t.kinds, t.space, t.starts, t.ends)


def _general(text: str) -> Tokens:
    """The general loop on ``text`` with nothing cut: a break at the very end is outside ``0 < c < len``."""
    return tokenize(text, breaks=[len(text)])


def test_the_one_split_path_equals_the_general_loop_on_every_paragraph(paragraphs: list[str],
                                                                        altered: list[str]) -> None:
    differ = [text[:80] for text in [*paragraphs, *altered] if _fields(tokenize(text)) != _fields(_general(text))]
    assert not differ, f"{len(differ)} texts tokenised differently, e.g. {differ[:3]}"


@pytest.mark.parametrize("text", ["", " ", "\n\t ", "\u200b", "\u00ad\u2060", " \ufeff "])
def test_a_text_with_nothing_visible_has_no_tokens(text: str) -> None:
    assert _fields(tokenize(text)) == _fields(_general(text)) == ([], "", "", [], [])


def _by_definition(canon: str) -> tuple[list[str], str, str]:
    """Words, kinds and spacing of a canonical text, by the module docstring's definitions, one character
    at a time: a word is a run of ``str.isalnum`` characters, every other visible character is one
    punctuation token, and a token is spaced when whitespace comes before it (or nothing does)."""
    words, kinds, space = [], [], []
    i = 0
    while i < len(canon):
        if canon[i].isspace():
            i += 1
            continue
        j = i + 1
        if canon[i].isalnum():
            while j < len(canon) and canon[j].isalnum():
                j += 1
        words.append(canon[i:j])
        kinds.append(WORD if canon[i].isalnum() else PUNCT)
        space.append("1" if i == 0 or canon[i - 1].isspace() else "0")
        i = j
    return words, "".join(kinds), "".join(space)


def _definition_faults(text: str, t: Tokens) -> list[str]:
    """Where ``t`` breaks the module's stated definitions (empty when it keeps them)."""
    faults = []
    if (t.words, t.kinds, t.space) != _by_definition(canonical(text)[0]):
        faults.append("words, kinds or spacing differ from the definitions")
    if not len(t.starts) == len(t.ends) == len(t.words):
        return [*faults, "offsets of another length"]
    for i, word in enumerate(t.words):
        start, end = t.starts[i], t.ends[i]
        if not 0 <= start < end <= len(text) or (i and (start < t.starts[i - 1] or end < t.ends[i - 1])):
            faults.append(f"token {i} {word!r} has offsets {start}:{end}")
            continue
        piece = text[start:end]
        if piece != word and (piece.isascii() or word not in canonical(piece)[0]):
            faults.append(f"token {i} {word!r} is not what its offsets name: {piece!r}")
        # a spacing accent (U+00AF macron, U+00B4 acute: NFKC gives a space and a combining mark) is spaced by
        # its own space: a mark is punctuation, so the flag changes no comparison (only word-word spaces count)
        if i and t.starts[i] >= t.ends[i - 1] and t.space[i] == "1" and not text[t.ends[i - 1]:start].strip(
                "".join(INVISIBLE)) and not canonical(piece)[0][:1].isspace():
            faults.append(f"token {i} {word!r} spaced with nothing but invisible characters before it")
    return faults


def test_tokens_keep_the_stated_definitions_on_every_paragraph(paragraphs: list[str], altered: list[str]) -> None:
    faults = {}
    for text in [*paragraphs, *altered]:
        found = _definition_faults(text, tokenize(text))
        if found:
            faults[text[:60]] = found[:2]
            if len(faults) == 20:
                break
    assert not faults, f"{len(faults)} texts, e.g. {list(faults.items())[:3]}"


def test_a_space_is_known_from_the_original_text_not_only_from_the_canonical_one() -> None:
    # the cases the definitions turn on, worked out by hand
    assert tokenize("in effective").space == "11" and tokenize("ineffective").space == "1"
    assert tokenize("in\u200beffective").words == ["ineffective"]  # invisible: one word
    assert tokenize("in\u00a0effective").space == "11"  # a no-break space is a space
    t = tokenize("p<0.05")
    assert (t.words, t.kinds, t.space) == (["p", "<", "0", ".", "05"], "wpwpw", "10000")
    t = tokenize("\u2026 dose")  # one character, three canonical tokens, each naming the whole character
    assert (t.words, t.starts, t.ends, t.space) == ([".", ".", ".", "dose"], [0, 0, 0, 2], [1, 1, 1, 6], "1001")
    t = tokenize("\ufb01ne \u2105")  # a ligature is one word; care-of is three tokens of one character
    assert (t.words, t.kinds, t.starts, t.ends, t.space) == (["fine", "c", "/", "o"], "wwpw", [0, 4, 4, 4],
                                                            [3, 5, 5, 5], "1100")
    t = tokenize("e\u0301te\u0301 \U0001d6c2")  # combining marks and an astral Greek letter
    assert t.starts == [0, 6] and t.ends == [5, 7] and t.space == "11"


def _token_edges(t: Tokens, rng: random.Random) -> tuple[int, int] | None:
    """A random run of tokens ``i..j`` (character span ``starts[i]:ends[j]``) with no token of an expanded
    character on either side (a marker edge there cuts the character's canonical tokens apart)."""
    n = len(t.words)
    if n < 3:
        return None
    i = rng.randrange(1, n - 1)
    j = min(n - 1, i + rng.randrange(0, 4))
    if t.starts[i] < t.ends[i - 1] or (j + 1 < n and t.starts[j + 1] < t.ends[j]):
        return None
    return i, j


def test_a_marker_on_token_edges_only_marks_the_tokens_inside(paragraphs: list[str]) -> None:
    rng = random.Random(301)
    checked, wrong = 0, []
    for text in rng.sample(paragraphs, 2_000):
        # invisible characters right before the marker (and sometimes a space before them): the spacing of
        # the marker's first token is read back through them to the original text
        plain = tokenize(text)
        run = _token_edges(plain, rng)
        if run is None:
            continue
        i, j = run
        at = plain.starts[i]
        inserted = "".join(rng.choice(INVISIBLE) for _ in range(rng.randint(1, 3)))
        text = text[:at] + inserted + text[at:]
        plain = tokenize(text)
        shift = len(inserted)
        span = (at + shift, plain.ends[j])
        marked = tokenize(text, markers=[span])
        expected_kinds = "".join((MWORD if k == WORD else MPUNCT) if i <= x <= j else k
                                 for x, k in enumerate(plain.kinds))
        checked += 1
        if _fields(marked) != (plain.words, expected_kinds, plain.space, plain.starts, plain.ends):
            wrong.append((text[max(0, at - 20):span[1] + 5], plain.space[i], marked.space[i]))
    assert checked > 1_500
    assert not wrong, f"{len(wrong)} of {checked}, e.g. {wrong[:3]}"


def test_a_marker_inside_a_word_cuts_it_and_reads_the_space_before_it_in_the_whole_text() -> None:
    t = tokenize("EGFR1 and KRAS", markers=[(4, 5)])
    assert (t.words, t.kinds, t.space) == (["EGFR", "1", "and", "KRAS"], "wWww", "1011")
    t = tokenize("tumours \u200b[12] grew", markers=[(9, 13)])
    assert (t.words, t.kinds, t.space, t.starts) == (["tumours", "[", "12", "]", "grew"], "wPWPw", "11001",
                                                     [0, 9, 10, 12, 14])
    t = tokenize("tumours\u200b\u00ad[12] grew", markers=[(9, 13)])
    assert (t.kinds, t.space) == ("wPWPw", "10001")


def test_a_break_between_tokens_adds_one_break_token_and_spaces_the_next(paragraphs: list[str]) -> None:
    rng = random.Random(302)
    checked, wrong = 0, []
    for text in rng.sample(paragraphs, 1_000):
        plain = tokenize(text)
        if len(plain.words) < 3:
            continue
        cuts = sorted(rng.sample(range(1, len(plain.words)), min(3, len(plain.words) - 1)))
        at = [plain.starts[c] for c in cuts if plain.starts[c] >= plain.ends[c - 1]]
        cut = tokenize(text, breaks=at)
        words, kinds, space, starts, ends = [], [], [], [], []
        for x in range(len(plain.words)):
            first = plain.starts[x] in at and (x == 0 or plain.starts[x - 1] != plain.starts[x])
            if first:
                words.append("")
                kinds.append(BREAK)
                space.append("1")
                starts.append(plain.starts[x])
                ends.append(plain.starts[x])
            words.append(plain.words[x])
            kinds.append(plain.kinds[x])
            space.append("1" if first else plain.space[x])
            starts.append(plain.starts[x])
            ends.append(plain.ends[x])
        checked += 1
        if _fields(cut) != (words, "".join(kinds), "".join(space), starts, ends):
            wrong.append(text[:60])
    assert checked > 900
    assert not wrong, f"{len(wrong)} of {checked}, e.g. {wrong[:3]}"


def test_an_empty_marker_span_cuts_nothing() -> None:
    # an empty citation element (<xref rid="b1"/>) gives a span of no characters: it must not split a word
    assert _fields(tokenize("EGFR mutations", markers=[(2, 2)])) == _fields(tokenize("EGFR mutations"))


def test_a_marker_of_punctuation_only_is_left_out_when_rendering() -> None:
    # a footnote dagger as the citation: the group is the dagger alone, and rendering drops it
    t = tokenize("resistance\u2020 was seen", markers=[(10, 11)])
    assert (t.kinds, t.render(), t.render(markers=True)) == ("wPww", "resistance was seen", "resistance\u2020was seen")


def test_render_gives_the_tokens_asked_for_and_a_break_as_a_line_break() -> None:
    t = tokenize("EGFR mutations predict resistance")
    assert (t.render(1, 3), t.render(2), t.render()) == ("mutations predict", "predict resistance",
                                                         "EGFR mutations predict resistance")
    cells = tokenize("cell one cell two cell three", breaks=[9, 18])
    assert cells.kinds == "wwbwwbww"
    assert cells.render() == "cell one\ncell two\ncell three"
    assert cells.render(3, 5) == "cell two"
