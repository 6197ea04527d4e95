"""Strict JSON/YAML parsing and canonical hashing (bioevidence.io)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bioevidence.errors import InputError
from bioevidence.io import canonical_json, dumps_line, parse_json, parse_json_tracked

TEXT = st.text(alphabet=st.sampled_from(list('ab:"\\{}[], \n\té\u2028\x7f\x01/')), max_size=8)
SCALARS = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False,
                                                                             allow_infinity=False) | TEXT
JSON = st.recursive(SCALARS, lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children,
                                                                                                max_size=4),
                    max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(JSON, st.booleans())
def test_strict_parse_agrees_with_the_standard_parser(value: Any, pretty: bool) -> None:
    text = json.dumps(value, indent=1 if pretty else None, ensure_ascii=False)
    assert parse_json(text.encode("utf-8")) == json.loads(text)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(TEXT, SCALARS, min_size=1, max_size=4), st.data())
def test_any_duplicate_key_is_refused(obj: dict[str, Any], data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(obj)))
    body = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in obj.items())
    text = "{" + body + f", {json.dumps(key)}: 1" + "}"
    nested = '{"outer": [' + text + "]}"
    for candidate in (text, nested):
        with pytest.raises(InputError, match="duplicate key"):
            parse_json(candidate.encode("utf-8"))


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    return False


@settings(max_examples=400, deadline=None)
@given(JSON)
def test_canonical_json_is_byte_identical_to_the_reference_form(value: Any) -> None:
    expected = json.dumps(value, sort_keys=True, separators=(",", ":")).encode("ascii")
    assert canonical_json(value) == expected
    if not _has_float(value):
        assert canonical_json(value, floats=False) == expected  # the orjson path


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_tracked_parse_reports_floats_exactly(value: Any) -> None:
    parsed, floats = parse_json_tracked(json.dumps(value).encode("utf-8"))
    assert parsed == value and floats == _has_float(value)


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_dumps_line_round_trips_on_one_line(value: Any) -> None:
    line = dumps_line(value)
    assert "\n" not in line and json.loads(line) == value


@pytest.mark.parametrize("payload", [b'{"a": NaN}', b'[Infinity]', b'[-Infinity]', b'{"a": 1e400}', b'"\xff"',
                                     b'{"a": "\\ud800"} x', b'{"a": 1,}'])
def test_non_json_numbers_bad_bytes_and_trailing_junk_are_input_errors(payload: bytes) -> None:
    with pytest.raises(InputError):
        value = parse_json(payload)
        canonical_json(value)  # 1e400 parses to inf in Python and cannot be hashed canonically
