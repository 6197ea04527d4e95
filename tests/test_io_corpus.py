"""The strict JSON parser's fast path (orjson, ``io._parse_orjson``) on every JSON text of ../shared/data.

Every ``.json``/``.json.gz`` document and every ``.jsonl``/``.jsonl.gz`` line of the shared data (API
answers, snapshots, CIViC evidence, SciFact, claims), and each of the first texts again with a fault
written into it (a duplicate key, space before a colon, an escaped colon or quote, a float, a 70-bit
integer, NaN, a control character, trailing data), is parsed by ``parse_json_tracked`` and by an
oracle written here on the standard library (duplicate keys, NaN/Infinity and infinite numbers
refused). Both must agree: the same value and float flag, or both refuse. The fast path must be taken
exactly where it is sound (no float, no integer beyond 64 bits, no ``\\u003`` escape, the text
valid), so a path that silently
never runs, or runs where it should not, fails too. Prints the table of texts by source and outcome.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bioevidence import io
from bioevidence.errors import InputError


class _Refused(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _Refused("duplicate key")
    return dict(pairs)


def _constant(name: str) -> Any:
    raise _Refused(name)


def oracle(text: str) -> tuple[Any, bool] | None:
    """The strict parse as the standard library reads it: (value, whether a float was read), or None."""
    floats = False

    def number(raw: str) -> float:
        nonlocal floats
        floats = True
        value = float(raw)
        if value in (float("inf"), float("-inf")):
            raise _Refused(raw)
        return value

    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=number)
    except (ValueError, RecursionError):
        return None
    if re.search(r"\\u[dD][89a-fA-F]", text) and _has_lone_surrogate(value):
        return None
    return value, floats


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def _beyond_64_bits(value: Any) -> bool:
    """An integer orjson reads as a float (outside -2**63 … 2**64 - 1)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return not -(2 ** 63) <= value < 2 ** 64
    if isinstance(value, dict):
        return any(_beyond_64_bits(v) for v in value.values())
    if isinstance(value, list):
        return any(_beyond_64_bits(v) for v in value)
    return False


def _texts(root: Path) -> Iterator[tuple[str, str]]:
    """(source, text): each JSON document and each JSONL line under ``root``."""
    for path in sorted(root.rglob("*")):
        name = path.name
        if not path.is_file() or not name.endswith((".json", ".json.gz", ".jsonl", ".jsonl.gz")):
            continue
        raw = gzip.decompress(path.read_bytes()) if name.endswith(".gz") else path.read_bytes()
        text = raw.decode("utf-8")
        source = path.relative_to(root).parts[0]
        if ".jsonl" in name:
            yield from ((source, line) for line in text.splitlines() if line.strip())
        else:
            yield source, text


_WORD_COLON = re.compile(r"(?<=[A-Za-z]):(?=[A-Za-z0-9/])")
_VALUE_START = re.compile(r'(":\s*")')
_KEY = re.compile(r'"([A-Za-z_]+)":')


def faults(text: str) -> Iterator[tuple[str, str]]:
    """(fault, text) for each fault that applies to ``text`` (a JSON object)."""
    keys = list(_KEY.finditer(text))
    if keys:
        last = keys[-1]  # a duplicate of the last key, inside that key's own (perhaps nested) object
        yield "duplicate key", text[:last.start()] + f'"{last.group(1)}": 0, ' + text[last.start():]
        yield "space before colon", text.replace('":', '" :')
    if _WORD_COLON.search(text):
        yield "escaped colon", _WORD_COLON.sub(r"\\u003a", text, count=1)
    if _VALUE_START.search(text):
        yield "escaped quote", _VALUE_START.sub(r'\1\\"', text, count=1)
        yield "quote as \\u0022", _VALUE_START.sub(r"\1\\u0022:", text, count=1)
        yield "control character", _VALUE_START.sub("\\1\x01", text, count=1)
    body = text.rstrip()
    if body.endswith("}"):
        yield "a float", body[:-1] + ', "zz_added": 1.5}'
        yield "a 70-bit integer", body[:-1] + f', "zz_added": {2 ** 70}}}'
        yield "NaN", body[:-1] + ', "zz_added": NaN}'
        yield "1e400", body[:-1] + ', "zz_added": 1e400}'
    yield "trailing data", text + " {}"


def test_the_fast_path_parses_every_json_text_of_the_shared_data_as_the_strict_parser(shared_data: Path) -> None:
    table: Counter[tuple[str, str]] = Counter()
    for seen, (source, text) in enumerate(_texts(shared_data)):
        cases = [("as found", text)]
        if seen < 400 and text.lstrip().startswith("{"):
            cases += list(faults(text))
        for fault, candidate in cases:
            want = oracle(candidate)
            try:
                got: tuple[Any, bool] | None = io.parse_json_tracked(candidate.encode("utf-8"))
            except InputError:
                got = None
            assert got == want, (source, fault, candidate[:300])
            fast = io._parse_orjson(candidate)
            sound = (want is not None and not want[1] and "\\u003" not in candidate
                     and not _beyond_64_bits(want[0]))
            if sound:
                assert fast is not io._UNSURE and fast == want[0], (source, fault, candidate[:300])
            else:
                assert fast is io._UNSURE, (source, fault, candidate[:300])
            outcome = "refused" if want is None else "fast path" if sound else "strict parser"
            table[(f"{source}: {fault}" if fault != "as found" else source, outcome)] += 1
    print()
    for (what, outcome), count in sorted(table.items()):
        print(f"{what:45s} {outcome:14s} {count:6d}")
    outcomes = Counter(outcome for (_, outcome), _n in table.items() for _ in range(_n))
    # the corpus reaches every outcome, and the fault families were all written
    assert outcomes["fast path"] > 1000 and outcomes["strict parser"] > 100 and outcomes["refused"] > 100, outcomes
    families = {what.split(": ", 1)[1] for what, _ in table if ": " in what}
    assert len(families) == 11, families


@pytest.mark.parametrize("text", ['{"a": 1, "a": 1}', '{"a:": "b", "a:": "b"}', '{"a": {"b": ":", "b": ":"}}',
                                  '{"x": "\\u003a", "x": 1}', '[{"k": 1}, {"k": 2, "k": 2}]'])
def test_a_duplicate_key_is_refused_whatever_its_colons(text: str) -> None:
    with pytest.raises(InputError, match="duplicate key"):
        io.parse_json_tracked(text.encode("utf-8"))
