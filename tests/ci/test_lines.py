"""``field_path`` -> line: JSON tokenizer and YAML marks, fallbacks, and the batch locator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from bioevidence.ci.lines import LineMap, Locator, error_line, json_lines, parse_path, yaml_lines

FIXTURES = Path(__file__).parent / "fixtures" / "records"


def line_of(path: Path, needle: str, occurrence: int = 1) -> int:
    """The 1-based line of the ``occurrence``-th line containing ``needle`` (the test's oracle)."""
    hits = [n for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if needle in text]
    return hits[occurrence - 1]


@pytest.mark.parametrize(("text", "steps"), [
    pytest.param("$", (), id="root"),
    pytest.param("$.evidence_items[2].locator", ("evidence_items", 2, "locator"), id="member-index-member"),
    pytest.param("$.statement.evidence_lines[1]", ("statement", "evidence_lines", 1), id="trailing-index"),
    pytest.param("$['a.b'][0]", ("a.b", 0), id="bracketed-name"),
    pytest.param('$["x\\"y"]', ('x"y',), id="escaped-quote"),
    pytest.param("$.a[oops].b", ("a",), id="unreadable-stops"),
    pytest.param("evidence_items", (), id="not-a-path"),
])
def test_parse_path_reads_members_indexes_and_bracketed_names(text: str, steps: tuple[Any, ...]) -> None:
    assert parse_path(text) == steps


def test_json_lines_mark_each_key_and_each_array_element() -> None:
    text = '{\n  "a": [\n    1,\n    {"b": "x\\ny"},\n\n    [2, 3]\n  ],\n  "c\\u00e9": null\n}\n'
    lines = json_lines(text)
    assert lines[("a",)] == 2
    assert lines[("a", 0)] == 3 and lines[("a", 1)] == 4 and lines[("a", 1, "b")] == 4
    assert lines[("a", 2)] == 6 and lines[("a", 2, 1)] == 6
    assert lines[("cé",)] == 8


@pytest.mark.parametrize("text", ["{\"a\": 1,}", "{\"a\" 1}", "[1, 2", "{\"a\": \"x}", "{} {}", "", "{\"a\": }"])
def test_malformed_json_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        json_lines(text)


def test_json_finding_deep_in_a_list_maps_to_the_field_line() -> None:
    path = FIXTURES / "rejected.json"
    lines = LineMap.from_file(path)
    assert lines is not None
    expected = line_of(path, '"source_artifact_id": "t:source-missing"')
    assert lines.line("$.evidence_items[1].source_artifact_id") == expected
    assert lines.line("$.evidence_items[1]") == line_of(path, '"id": "t:item-2"') - 1  # the element's "{"
    assert lines.line("$.evidence_items") == line_of(path, '"evidence_items"')


def test_yaml_finding_deep_in_a_list_maps_to_the_field_line() -> None:
    path = FIXTURES / "nested" / "deep.yaml"
    lines = LineMap.from_file(path)
    assert lines is not None
    assert lines.line("$.evidence_items[2].extraction_method") == line_of(path, "extraction_method: guesswork")
    assert lines.line("$.evidence_items[2]") == line_of(path, "- id: t:item-3")
    assert lines.line("$.adjudications") == line_of(path, "adjudications:")


def test_missing_fields_map_to_their_deepest_present_ancestor() -> None:
    lines = LineMap.parse('{\n  "statement": {\n    "id": "s"\n  },\n  "items": []\n}\n')
    assert lines.line("$.statement.subject.label") == 2
    assert lines.line("$.items[5].locator") == 5
    assert lines.line("$.nothing") == 1
    assert lines.line("$") == 1


def test_yaml_documents_map_anchors_flow_collections_and_empty_files() -> None:
    text = "# comment\nbase: &b\n  x: 1\nuse: *b\nflow: {k: [a, b]}\n"
    lines = yaml_lines(text)
    assert lines[("base",)] == 2 and lines[("use",)] == 4
    assert lines[("flow", "k", 1)] == 5
    assert yaml_lines("") == {}
    with pytest.raises(ValueError):
        yaml_lines("a: [1,\n")


def test_unreadable_files_have_no_line_map(tmp_path: Path) -> None:
    assert LineMap.from_file(FIXTURES / "broken.json") is None
    assert LineMap.from_file(tmp_path / "absent.json") is None
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"a": "\xff"}')
    assert LineMap.from_file(bad) is None


def test_error_line_reads_the_line_an_input_error_names() -> None:
    assert error_line("invalid JSON: Expecting ',' delimiter at line 6 column 5") == 6
    assert error_line("while parsing a flow sequence, line 3, column 1") == 3
    assert error_line("file is too large") is None


def test_locator_shows_relative_paths_keeps_jsonl_lines_and_drops_lines_for_drafts(tmp_path: Path) -> None:
    record = tmp_path / "sub" / "r.json"
    record.parent.mkdir()
    record.write_text('{\n  "a": {\n    "b": 1\n  }\n}\n', encoding="utf-8")
    locator = Locator(base=tmp_path, sources={"/tmp/built/0001-d.json": "drafts/d.yaml"})
    assert locator.shown(str(record)) == "sub/r.json"
    assert locator.line(str(record), "$.a.b") == 3
    assert locator.line(str(record), "$.a.b", record_line=7) == 7
    assert locator.shown("/tmp/built/0001-d.json") == "drafts/d.yaml"
    assert locator.line("/tmp/built/0001-d.json", "$.a") is None
    assert locator.shown("/elsewhere/x.json") == "/elsewhere/x.json"


# Keys as the gate writes them in dotted paths (json_path): anything but ".", "[" and "]".
keys = st.text(st.characters(codec="utf-8", exclude_characters=".[]"),
               min_size=1, max_size=8)
leaves = st.none() | st.booleans() | st.integers() | st.text(max_size=10)
documents = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
                         max_leaves=25)


def _members(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    out: list[tuple[tuple[Any, ...], Any]] = []
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for k, v in children:
        out.append(((*prefix, k), v))
        out += _members(v, (*prefix, k))
    return out


def _render(steps: tuple[Any, ...]) -> str:
    return "$" + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(keys, documents, min_size=1, max_size=5))
def test_every_member_and_element_of_indented_json_maps_to_the_line_that_starts_it(doc: dict[str, Any]) -> None:
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    rows = text.split("\n")  # lines end at LF only, as the runner counts them
    lines = LineMap.parse(text)
    for steps, value in _members(doc):
        first = json.dumps(value, indent=2, ensure_ascii=False).split("\n")[0]
        if isinstance(steps[-1], str):
            first = f"{json.dumps(steps[-1], ensure_ascii=False)}: {first}"
        assert rows[lines.line(_render(steps)) - 1].lstrip().removesuffix(",") == first


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z][a-z_]{0,7}", fullmatch=True), documents, min_size=1, max_size=5))
def test_every_key_of_block_yaml_maps_to_the_line_that_holds_it(doc: dict[str, Any]) -> None:
    text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
    rows = text.splitlines()
    lines = LineMap.parse(text, "yaml")
    for key in doc:
        line = lines.line(f"$.{key}")
        # PyYAML quotes keys YAML 1.1 reads as booleans ('on', 'no', 'y')
        assert rows[line - 1].startswith((f"{key}:", f"'{key}':"))
