"""Citation groups (``text/tokens.py::groups``) and the numbers they cite (``cited_numbers``), case by case.

A quote may leave a paper's citation group out, and the grounder compares the numbers a quote cites with
the paper's; so a group must span exactly the markers, their separators and the brackets that hold
nothing else, and a range must cite every number in it. Each case is a sentence as papers print it, its
citation markers (the ``<xref>`` spans of the JATS reader) written between ``⟨`` and ``⟩``; the
expected groups are worked out by hand from the rules in ``groups``' docstring, as the words they cover.
"""

from __future__ import annotations

import pytest

from bioevidence.text.tokens import Group, Tokens, cited_numbers, groups, plain_markers, tokenize


def marked(text: str) -> Tokens:
    """Tokens of ``text`` without its ``⟨ ⟩``, each pair's inside a citation marker."""
    plain, spans = "", []
    for piece in text.split("⟨"):
        if "⟩" in piece:
            inside, rest = piece.split("⟩", 1)
            spans.append((len(plain), len(plain) + len(inside)))
            plain += inside + rest
        else:
            plain += piece
    return tokenize(plain, markers=spans)


def shown(tokens: Tokens, group: Group) -> tuple[str, str, str, list[int] | None]:
    """A group as the words it covers, what a quote may skip, past-the-end words, and its numbers."""
    w = tokens.words
    return (" ".join(w[group.start:group.end]), " ".join(w[group.skip_from:max(group.end, group.skip_to)]),
            " ".join(w[group.end:group.skip_to]), sorted(group.numbers) if group.numbers is not None else None)


CASES = [
    # numbers in brackets, one marker each: the brackets hold nothing else, so they are the group's
    ("as shown [⟨1⟩].", [("[ 1 ]", "[ 1 ]", "", [1])]),
    # separators and joiners between units make one group
    ("as shown [⟨1⟩], [⟨2⟩] and [⟨3⟩].", [("[ 1 ] , [ 2 ] and [ 3 ]", "[ 1 ] , [ 2 ] and [ 3 ]", "", [1, 2, 3])]),
    ("in mice [⟨4⟩; ⟨6⟩] & rats [⟨9⟩]", [("[ 4 ; 6 ]", "[ 4 ; 6 ]", "", [4, 6]), ("[ 9 ]", "[ 9 ]", "", [9])]),
    # "&" is punctuation, not one of the separators: two groups (the docstring's rule)
    ("of tumours [⟨4⟩] & [⟨6⟩]", [("[ 4 ]", "[ 4 ]", "", [4]), ("[ 6 ]", "[ 6 ]", "", [6])]),
    # a range, across markers or inside one
    ("was reported [⟨7⟩]-[⟨9⟩].", [("[ 7 ] - [ 9 ]", "[ 7 ] - [ 9 ]", "", [7, 8, 9])]),
    ("was reported [⟨7–9⟩, ⟨12⟩].", [("[ 7 - 9 , 12 ]", "[ 7 - 9 , 12 ]", "", [7, 8, 9, 12])]),
    ("was reported [⟨12⟩-⟨14⟩]", [("[ 12 - 14 ]", "[ 12 - 14 ]", "", [12, 13, 14])]),
    # a "range" over 200 numbers or running backwards is two numbers, not a range
    ("was reported [⟨1⟩-⟨500⟩]", [("[ 1 - 500 ]", "[ 1 - 500 ]", "", [1, 500])]),
    ("was reported [⟨9⟩-⟨7⟩]", [("[ 9 - 7 ]", "[ 9 - 7 ]", "", [7, 9])]),
    ("was reported [⟨3⟩-⟨203⟩]", [("[ 3 - 203 ]", "[ 3 - 203 ]", "", list(range(3, 204)))]),
    # a comma ends a pending range: 4 - , 6 cites 4 and 6
    ("was reported [⟨4⟩-, ⟨6⟩]", [("[ 4 - , 6 ]", "[ 4 - , 6 ]", "", [4, 6])]),
    # brackets that hold other words stay the sentence's
    ("(see ⟨12⟩)", [("12", "12", "", [12])]),
    ("(reviewed in ⟨3⟩, ⟨5⟩)", [("3 , 5", "3 , 5", "", [3, 5])]),
    # a ; or , before a group that ends a parenthesis is skipped with it
    ("(shown in mice; ⟨12⟩)", [("12", "; 12", "", [12])]),
    ("(shown in mice, ⟨12⟩]", [("12", ", 12", "", [12])]),  # any closing bracket, matched or not
    ("[shown in mice, ⟨12⟩]", [("12", ", 12", "", [12])]),
    # ", and" or "; or" after a group that continues the list is skipped too
    ("e.g., [⟨1⟩], and others", [("[ 1 ]", "[ 1 ] ,", ",", [1])]),
    ("e.g., [⟨1⟩]; or others", [("[ 1 ]", "[ 1 ] ;", ";", [1])]),
    ("e.g., [⟨1⟩], & others", [("[ 1 ]", "[ 1 ]", "", [1])]),  # "&" is punctuation here, not a word
    ("e.g., [⟨1⟩], but others", [("[ 1 ]", "[ 1 ]", "", [1])]),
    ("e.g., [⟨1⟩] and others", [("[ 1 ]", "[ 1 ]", "", [1])]),
    # author-year markers cite no numbers; the joiner inside is no number either
    ("as found (⟨Smith and Jones, 2001⟩; ⟨Lee et al., 2003⟩)",
     [("( Smith and Jones , 2001 ; Lee et al . , 2003 )", "( Smith and Jones , 2001 ; Lee et al . , 2003 )", "",
       None)]),
    # braces enclose as brackets do; a word between two markers keeps them apart
    ("in {⟨2⟩} of them and in {⟨3⟩}", [("{ 2 }", "{ 2 }", "", [2]), ("{ 3 }", "{ 3 }", "", [3])]),
    ("seen [⟨2⟩] in mice [⟨3⟩]", [("[ 2 ]", "[ 2 ]", "", [2]), ("[ 3 ]", "[ 3 ]", "", [3])]),
    # at the very start and end of a passage
    ("⟨5⟩ was first", [("5", "5", "", [5])]),
    ("was first ⟨5⟩", [("5", "5", "", [5])]),
    ("[⟨5⟩]", [("[ 5 ]", "[ 5 ]", "", [5])]),
    ("as shown in (⟨5⟩", [("5", "5", "", [5])]),  # an opening bracket with no closing one: not enclosed
    # a group at a passage's first token has nothing before it (the passage's last token is not "before")
    ("⟨5⟩) as in (", [("5", "5", "", [5])]),
    ("⟨5⟩] so;", [("5", "5", "", [5])]),
    ("; ⟨5⟩)", [("5", "; 5", "", [5])]),  # a separator as the passage's first token is attached
    ("as in mice, ⟨5⟩", [("5", "5", "", [5])]),  # a separator before a group that ends the passage: kept
    ("as in [⟨1⟩], and", [("[ 1 ]", "[ 1 ] ,", ",", [1])]),  # the list continues to the passage's end
    ("as in [⟨1⟩],", [("[ 1 ]", "[ 1 ]", "", [1])]),  # a separator last: nothing continues
    # no marker: no group
    ("as shown [1], in text only", []),
]


@pytest.mark.parametrize("text, expected", CASES, ids=[c[0] for c in CASES])
def test_each_citation_group_covers_its_markers_separators_and_own_brackets(
        text: str, expected: list[tuple[str, str, str, list[int] | None]]) -> None:
    tokens = marked(text)
    assert [shown(tokens, g) for g in groups(tokens)] == expected


def test_groups_are_what_rendering_leaves_out() -> None:
    tokens = marked("KRAS mutations predict resistance [⟨7⟩]-[⟨9⟩] (as shown in mice; ⟨12⟩), e.g., [⟨1⟩], and others.")
    # rendering puts a space only between two words that had one
    assert tokens.render() == "KRAS mutations predict resistance(as shown in mice),e.g.,,and others."
    assert tokens.render(markers=True) == ("KRAS mutations predict resistance[7]-[9](as shown in mice;12),e.g.,[1],"
                                           "and others.")


@pytest.mark.parametrize("words, expected", [
    (["7"], {7}), (["7", "-", "9"], {7, 8, 9}), (["[", "7", "]", "-", "[", "9", "]"], {7, 8, 9}),
    (["7", ",", "9"], {7, 9}), (["7", "-", ";", "9"], {7, 9}), (["7", "and", "9"], {7, 9}),
    (["7", "-", "and", "9"], {7, 9}), (["0", "-", "200"], set(range(0, 201))), (["0", "-", "201"], {0, 201}),
    (["12", "-", "12"], {12}), (["Smith", "2001"], None), (["et", "al"], None), ([",", "-"], None), ([], None),
    (["7", "-"], {7}), (["-", "9"], {9}),
])
def test_cited_numbers(words: list[str], expected: set[int] | None) -> None:
    got = cited_numbers(words)
    assert (set(got) if got is not None else None) == expected


def test_plain_text_markers_are_the_numeric_brackets_whole_and_the_inside_of_author_year_parentheses() -> None:
    text = "as shown (Smith et al., 2001) and [3, 7-9]. Also (Lee and Park, 2003a; Kim, 1999) but (see Fig. 2)."
    assert [text[a:b] for a, b in plain_markers(text)] == [
        "Smith et al., 2001", "[3, 7-9]", "Lee and Park, 2003a; Kim, 1999"]
