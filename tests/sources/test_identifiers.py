"""Publication identifiers parse from every common spelling into one canonical key."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bioevidence.sources.identifiers import PublicationId, canonical, parse_identifier


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("pmid:15696205", "pmid:15696205"),
        ("PMID: 0015696205", "pmid:15696205"),
        ("pubmed:123", "pmid:123"),
        ("pmcid:pmc545207", "pmcid:PMC545207"),
        ("PMC545207", "pmcid:PMC545207"),
        ("PMCID:PMC0545207", "pmcid:PMC545207"),
        ("doi:10.1371/Journal.PMED.0020017", "doi:10.1371/journal.pmed.0020017"),
        ("https://doi.org/10.1016/S0140-6736(24)02600-X", "doi:10.1016/s0140-6736(24)02600-x"),
        ("http://dx.doi.org/10.1000/abc%2Fdef", "doi:10.1000/abc/def"),
        ("10.1038/nature12373", "doi:10.1038/nature12373"),
        ("https://pubmed.ncbi.nlm.nih.gov/993/", "pmid:993"),
        ("https://pmc.ncbi.nlm.nih.gov/articles/PMC1165577/", "pmcid:PMC1165577"),
    ],
)
def test_spellings_canonicalise(text: str, key: str) -> None:
    assert canonical(text) == key


@pytest.mark.parametrize(
    "text",
    [
        "",
        "pmid:",
        "pmid:0",
        "pmid:abc",
        "12345",
        "10.12/x",
        "doi:11.1000/x",
        "PMC",
        None,
        5,
        "doi:10.1000/a b",
    ],
)
def test_non_identifiers_give_none(text: object) -> None:
    assert parse_identifier(text) is None


@given(st.integers(min_value=1, max_value=10**11), st.integers(min_value=0, max_value=3))
def test_pmid_has_no_leading_zeros_and_is_idempotent(number: int, zeros: int) -> None:
    parsed = parse_identifier("pmid:" + "0" * zeros + str(number))
    assert parsed == PublicationId("pmid", str(number))
    assert parse_identifier(str(parsed)) == parsed


@given(st.integers(min_value=1, max_value=10**11), st.sampled_from(["pmc", "PMC", "pmcid:pmc", "PMCID:PMC"]))
def test_pmcid_is_upper_case_with_prefix(number: int, prefix: str) -> None:
    parsed = parse_identifier(f"{prefix}{number}")
    assert parsed is not None and parsed.key == f"pmcid:PMC{number}"
    assert parse_identifier(parsed.key) == parsed


_suffix = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="%?#"), min_size=1)


@given(st.integers(min_value=1000, max_value=99999), _suffix.filter(lambda s: not s.endswith(".")))
def test_doi_forms_agree_and_are_lower_case(registrant: int, suffix: str) -> None:
    body = f"10.{registrant}/{suffix}"
    keys = {canonical(body), canonical(f"doi:{body}"), canonical(f"https://doi.org/{body}")}
    assert keys == {f"doi:{body.lower()}"}
    assert canonical(f"doi:{body.lower()}") == f"doi:{body.lower()}"


@given(st.text(max_size=40))
def test_parser_never_raises_and_output_is_a_fixed_point(text: str) -> None:
    parsed = parse_identifier(text)
    if parsed is not None:
        assert parse_identifier(parsed.key) == parsed


@pytest.mark.parametrize("code", range(32))
def test_a_control_character_inside_an_identifier_makes_it_none(code: int) -> None:
    """Every C0 control character (U+0000-U+001F) inside an identifier refuses it, whatever the scheme;
    without it the same text parses, and around it (whitespace that strip() removes) it is ignored."""
    ch = chr(code)
    for text in ("pmid:1569{}6205", "https://doi.org/10.1016/S0140{}-6736", "PMC54{}5207", "10.1038/natu{}re12373"):
        assert parse_identifier(text.format(ch)) is None, (code, text)
        assert parse_identifier(text.format("")) is not None, text
    if ch.isspace():
        assert canonical(f"{ch}pmid:15696205{ch}") == "pmid:15696205"
