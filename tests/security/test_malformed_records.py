"""Points 3 and 8: records that are not text, or not records, are input errors of their own file or line.

A lone surrogate (``"\\ud800"``: valid JSON syntax, not Unicode) used to crash the whole batch
with a traceback and exit 1; an empty YAML file, a JSON list or a scalar exited 1 as a SCHEMA
rejection. Each is now exit 3 naming the file (and line), and every other record is still reported.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bioevidence.errors import InputError
from bioevidence.gate.validator import Validator
from security.harness import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "records"


def _good() -> dict[str, object]:
    return dict(json.loads((EXAMPLES / "01_admitted_curated_claim.json").read_text(encoding="utf-8")))


def test_a_lone_surrogate_in_one_jsonl_line_fails_that_line_only(tmp_path: Path) -> None:
    good = json.dumps(_good())
    bad = good.replace('"BRAF"', '"BR\\ud800AF"', 1)
    assert bad != good
    (tmp_path / "batch.jsonl").write_text(f"{good}\n{bad}\n{good}\n", encoding="ascii")
    run = run_cli(["validate", "batch.jsonl"], cwd=tmp_path)
    assert run.code == 3 and not run.traceback, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert [line.get("overall_status", line.get("error")) for line in lines] == ["admitted", "input_error", "admitted"]
    assert lines[1]["line"] == 2 and "lone surrogate" in lines[1]["message"] and "$.statement" in lines[1]["message"]


@pytest.mark.parametrize("name, text", [
    ("json", '{"record_id": "\\udfff"}'),
    ("yaml", 'record_id: "\\ud800"\n'),
    ("key", '{"\\ud800": 1}'),
], ids=["json-value", "yaml-escape", "json-key"])
def test_a_lone_surrogate_in_a_file_is_an_input_error(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / f"r.{'yaml' if name == 'yaml' else 'json'}"
    path.write_text(text, encoding="ascii")
    run = run_cli(["validate", str(path), str(EXAMPLES / "02_review_llm_only.json")], cwd=tmp_path)
    assert run.code == 3 and not run.traceback, run.stderr
    first, second = (json.loads(line) for line in run.stdout.splitlines())
    assert first["error"] == "input_error" and "surrogate" in first["message"]
    assert second["overall_status"] == "review_required"


def test_paired_surrogate_escapes_are_ordinary_text(tmp_path: Path) -> None:
    record = _good()
    text = json.dumps(record).replace('"BRAF"', '"BRAF \\ud83d\\ude00"', 1)  # one emoji, written as a pair
    (tmp_path / "r.json").write_text(text, encoding="ascii")
    assert run_cli(["validate", "r.json"], cwd=tmp_path).code in (0, 1)


def test_the_python_api_raises_an_input_error_for_a_surrogate_not_a_crash() -> None:
    record = _good()
    record["record_id"] = "x\ud800"
    with pytest.raises(InputError, match="lone surrogate"):
        Validator().validate(record)


@pytest.mark.parametrize("name, content, held", [
    ("empty.yaml", "", "the file is empty"),  # issue 24 item 15: named, not "holds nothing"
    ("comment.yaml", "# only a comment\n", "nothing"),
    ("list.json", "[1, 2]", "a list"),
    ("scalar.yaml", "42\n", "a number"),
    ("string.json", '"a record?"', "a string"),
    ("null.json", "null", "nothing"),
], ids=lambda v: str(v) if not isinstance(v, str) or "." in v else "")
def test_a_file_that_holds_no_object_is_an_input_error(tmp_path: Path, name: str, content: str, held: str) -> None:
    (tmp_path / name).write_text(content, encoding="utf-8")
    run = run_cli(["validate", name], cwd=tmp_path)
    assert run.code == 3 and not run.traceback
    error = json.loads(run.stderr.splitlines()[-1])
    assert error["error"] == "input_error" and error["file"] == name and held in error["message"]
    assert run.stdout == ""  # one unreadable record: the error line is the whole answer


def test_a_jsonl_line_that_is_a_list_is_an_input_error_of_that_line(tmp_path: Path) -> None:
    (tmp_path / "b.jsonl").write_text(json.dumps(_good()) + "\n[1]\n", encoding="utf-8")
    run = run_cli(["validate", "b.jsonl"], cwd=tmp_path)
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert run.code == 3 and lines[1]["line"] == 2 and "a list" in lines[1]["message"]
