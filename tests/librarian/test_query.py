"""The query language: every field kind and every error class of the study; the parser never crashes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bioevidence.librarian.fields import FIELDS, prompt_reference
from bioevidence.librarian.query import (
    And,
    Not,
    Or,
    QuerySyntaxError,
    Range,
    Term,
    count_ands,
    parse,
    to_string,
    validate,
)


def test_catalogue_has_the_study_fields_and_kinds() -> None:
    kinds = {f.kind for f in FIELDS.values()}
    assert len(FIELDS) == 111
    assert kinds == {"text", "flag", "date", "identifier", "fixed", "entity"}
    assert sum(f.kind == "flag" for f in FIELDS.values()) == 31
    assert sum(f.kind == "date" for f in FIELDS.values()) == 8


def test_prompt_reference_is_generated_from_the_catalogue() -> None:
    sheet = prompt_reference()
    assert all(name in sheet for name in FIELDS)
    assert "ABBR" not in sheet


def test_field_applies_to_one_value_like_europe_pmc() -> None:
    assert parse("TITLE:cancer therapy") == And((Term("cancer", "TITLE"), Term("therapy")))


def test_group_value_applies_field_to_every_term() -> None:
    ast = parse("title:(p53 OR TP53) AND PUB_YEAR:[2015 TO 2020]")
    assert ast == And((Or((Term("p53", "TITLE"), Term("TP53", "TITLE"))), Range("PUB_YEAR", "2015", "2020")))


def test_lower_case_operators_are_words_and_not_is_binary() -> None:
    assert parse("a and b") == And((Term("a"), Term("and"), Term("b")))
    assert parse('"breast cancer" NOT mouse') == And((Term("breast cancer", None, True), Not(Term("mouse"))))


def test_count_ands_counts_implicit_and_explicit_joins() -> None:
    assert count_ands(parse("a AND b c OR d")) == 2


VALID = {
    "text": "ABSTRACT:apoptosis",
    "text wildcard": "TITLE:canc*",
    "phrase": 'KW:"cell cycle"',
    "flag lower-case": "HAS_FT:y",
    "date year": "PUB_YEAR:2020",
    "date day": "FIRST_PDATE:2020-02-29",
    "date range open": "FIRST_PDATE:[2019-01-01 TO *]",
    "identifier doi": "DOI:10.1038/nature12373",
    "identifier pmcid": "PMCID:PMC1234567",
    "identifier orcid": "AUTHORID:0000-0002-1825-0097",
    "identifier cites": "CITES:8521067_MED",
    "identifier issn": "ISSN:1234-567X",
    "identifier book": "BOOK_ID:NBK1234",
    "fixed src": "SRC:med",
    "fixed license spacing": "LICENSE:cc_by",
    "fixed lang": "LANG:eng",
    "entity": "GENE_PROTEIN:BRCA1",
    "apostrophe word": "Alzheimer's disease",
}


@pytest.mark.parametrize("query", VALID.values(), ids=VALID.keys())
def test_valid_queries_are_accepted(query: str) -> None:
    result = validate(query)
    assert result.valid, result.errors


INVALID = {
    "unknown field": ("FOO:x", "unknown field"),
    "unquoted rrid": ("RRID:CVCL_0030", "unknown field"),
    "space before colon": ('TITLE : "x"', "whitespace before"),
    "space after colon": ('TITLE: "x"', "whitespace after"),
    "field without value": ("TITLE:", "has no value"),
    "empty group": ("TITLE:()", "empty group"),
    "empty parentheses": ("()", "empty group"),
    "unmatched open paren": ("(a OR b", "unmatched '('"),
    "stray close paren": ("a)", "stray ')'"),
    "unmatched bracket": ("PUB_YEAR:[2010 TO 2012", "unmatched '['"),
    "stray bracket": ("a ]", "stray ']'"),
    "unmatched double quote": ('"abc', "unmatched double quote"),
    "unmatched single quote": ("'abc", "unmatched single quote"),
    "dangling and": ("cancer AND", "nothing on its right"),
    "dangling or after field": ('KW:"a" OR', "nothing on its right"),
    "double operator": ("a OR OR b", "followed by OR"),
    "not not": ("x NOT NOT y", "followed by NOT"),
    "not operator": ("x NOT AND y", "followed by AND"),
    "trailing not": ("x NOT", "nothing on its right"),
    "leading operator": ("AND x", "nothing on its left"),
    "range without field": ("[2010 TO 2012]", "no field"),
    "malformed range": ("PUB_YEAR:[2010 2012]", "must be [a TO b]"),
    "wildcard in quotes": ('"canc*"', "wildcard inside quotes"),
    "wildcard in identifier": ("DOI:10.1038/*", "wildcard in identifier"),
    "question mark in date": ("PUB_YEAR:201?", "'?' in date"),
    "wildcard date outside range": ("PUB_YEAR:20*", "wildcard outside a range"),
    "entity presence check": ("GENE_PROTEIN:*", "wildcard-only"),
    "flag not y/n": ("HAS_FT:yes", "must be Y or N"),
    "fixed value": ("SRC:XYZ", "not an allowed value"),
    "pub year format": ("PUB_YEAR:20", "must be a year"),
    "date format": ("E_PDATE:2020/01/01", "YYYY or YYYY-MM-DD"),
    "impossible date": ("E_PDATE:2020-02-30", "not a real calendar date"),
    "reversed range": ("PUB_YEAR:[2020 TO 2015]", "starts after it ends"),
    "range on text field": ("TITLE:[a TO b]", "range on non-date"),
    "bad pmcid": ("PMCID:12345", "does not look like"),
    "bad orcid": ("AUTHORID:1234", "does not look like"),
    "bad cites suffix": ("CITES:123_XXX", "does not look like"),
    "comma in doi": ("DOI:10.1/a,10.1/b", "contains a comma"),
    "empty query": ("   ", "empty query"),
}


@pytest.mark.parametrize(("query", "reason"), INVALID.values(), ids=INVALID.keys())
def test_invalid_queries_are_rejected_with_a_reason(query: str, reason: str) -> None:
    result = validate(query)
    assert not result.valid
    assert any(reason in e for e in result.errors), result.errors


@pytest.mark.parametrize(("query", "warning"), [
    ("GRANT_ID:123", "GRANT_AGENCY"),
    ("EXT_ID:123", "SRC"),
    ("INVESTIGATOR:smith", "AUTH_COLLECTIVE_LIST"),
    ("ISSUE:3", "JOURNAL"),
], ids=["grant", "ext-id", "investigator", "issue"])
def test_warnings_do_not_reject(query: str, warning: str) -> None:
    result = validate(query)
    assert result.valid and any(warning in w for w in result.warnings)


def test_and_budget_is_a_warning() -> None:
    result = validate("a AND b AND c AND d", max_ands=2)
    assert result.valid and "3 ANDs" in result.warnings[0]


def test_parse_raises_syntax_error_with_position() -> None:
    with pytest.raises(QuerySyntaxError) as info:
        parse("(cancer")
    assert info.value.position == 0


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab AND OR NOT TITLE: PUB_YEAR:[1 TO 2]()"\'*?:x')), max_size=40))
def test_parser_never_crashes(query: str) -> None:
    result = validate(query)  # must not raise
    assert result.valid == (not result.errors)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_parser_never_crashes_on_any_text(query: str) -> None:
    result = validate(query)
    assert isinstance(result.valid, bool)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab ANDORNT()\"TITLE:KW*")), max_size=30))
def test_round_trip_of_valid_queries(query: str) -> None:
    try:
        ast = parse(query)
    except QuerySyntaxError:
        return
    text = to_string(ast)
    assert to_string(parse(text)) == text  # serialising is stable
