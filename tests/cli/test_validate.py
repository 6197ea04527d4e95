"""``bioevidence validate`` at the command line: exit codes, formats, strict input, atomic output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from builders import adjudication, record


def _run(*args: str | Path) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args])


def _write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def _rejected() -> dict[str, Any]:
    rec = record("general", ["training_data"])
    return rec


def _review() -> dict[str, Any]:
    rec = record("general")
    rec["adjudications"].append(adjudication(1, ["knowledge_base"], "defer"))
    return rec


@pytest.mark.parametrize(("value", "code", "status"), [
    pytest.param(record(), 0, "admitted", id="admitted"),
    pytest.param(_rejected(), 1, "rejected", id="rejected"),
    pytest.param(_review(), 2, "review_required", id="review"),
])
def test_exit_code_follows_the_decision(tmp_path: Path, value: Any, code: int, status: str) -> None:
    result = _run("validate", _write(tmp_path / "r.json", value))
    assert result.exit_code == code
    assert json.loads(result.stdout)["overall_status"] == status


def test_usage_errors_exit_3_never_2(tmp_path: Path) -> None:
    result = _run("validate", "--no-such-flag", tmp_path)
    assert result.exit_code == 3
    assert json.loads(result.stderr.splitlines()[0])["error"] == "usage_error"


def test_unknown_profile_is_a_configuration_error(tmp_path: Path) -> None:
    result = _run("validate", _write(tmp_path / "r.json", record()), "--profile", "no-such-profile")
    assert result.exit_code == 3
    error = json.loads(result.stderr)
    assert error["error"] == "configuration_error" and "general" in error["message"]


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


STRICT_CASES = {
    "duplicate-key": b'{"record_id": "a", "record_id": "b"}',
    "nan": b'{"record_id": NaN}',
    "infinity": b'{"record_id": Infinity}',
    "negative-infinity": b'{"x": -Infinity}',
    "invalid-utf8": b'{"record_id": "\xff\xfe"}',
    "too-deep": ('{"a": ' + _deep(101) + "}").encode(),
    "not-json": b"{record_id: 1}",
    "truncated": b'{"record_id": "a", ',
}


@pytest.mark.parametrize("payload", list(STRICT_CASES.values()), ids=list(STRICT_CASES))
def test_strict_input_exits_3_with_one_json_line_and_writes_nothing(tmp_path: Path, payload: bytes) -> None:
    source = tmp_path / "bad.json"
    source.write_bytes(payload)
    out = tmp_path / "report.json"
    result = _run("validate", source, "--output", out)
    assert result.exit_code == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    error = json.loads(lines[0])
    assert set(error) >= {"error", "file", "message"} and error["file"] == str(source)
    assert "Traceback" not in result.output
    assert not out.exists()


@pytest.mark.parametrize("payload", [
    b"record_id: a\nrecord_id: b\n",
    b"!!python/object/apply:os.system ['true']\n",
    b"a: &x [1]\nb: *x\nc: {1: 2}\n",
], ids=["duplicate-key", "python-tag", "non-string-key"])
def test_strict_yaml_input(tmp_path: Path, payload: bytes) -> None:
    source = tmp_path / "bad.yaml"
    source.write_bytes(payload)
    result = _run("validate", source)
    assert result.exit_code == 3
    assert json.loads(result.stderr.strip().splitlines()[0])["error"] == "input_error"


def test_nesting_of_exactly_100_levels_is_not_an_input_error(tmp_path: Path) -> None:
    source = tmp_path / "deep.json"
    source.write_text('{"a": ' + _deep(99) + "}")
    result = _run("validate", source)
    assert result.exit_code == 1  # valid JSON, but not a record: SCHEMA, rejected
    assert "SCHEMA" in result.stdout


def test_file_over_50_mb_is_refused_before_reading(tmp_path: Path) -> None:
    source = tmp_path / "big.json"
    with source.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024 + 1)
    result = _run("validate", source)
    assert result.exit_code == 3
    assert "50 MB" in json.loads(result.stderr)["message"]


def test_output_is_written_atomically_and_never_over_an_input(tmp_path: Path) -> None:
    source = _write(tmp_path / "r.json", record())
    before = source.read_bytes()
    result = _run("validate", source, "--output", source)
    assert result.exit_code == 3 and source.read_bytes() == before
    out = tmp_path / "out" / "report.json"
    result = _run("validate", source, "--output", out)
    assert result.exit_code == 0
    assert json.loads(out.read_text())["overall_status"] == "admitted"
    assert [p.name for p in out.parent.iterdir()] == ["report.json"]  # no temp files left behind


def test_output_never_overwrites_the_profile(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text((Path(__file__).resolve().parents[2] / "profiles" / "general.yaml").read_text())
    before = profile.read_bytes()
    result = _run("validate", _write(tmp_path / "r.json", record()), "--profile", profile, "--output", profile)
    assert result.exit_code == 3 and profile.read_bytes() == before


def _batch(tmp_path: Path) -> Path:
    folder = tmp_path / "batch"
    (folder / "nested").mkdir(parents=True)
    _write(folder / "a.json", record())
    _write(folder / "nested" / "b.json", _review())
    lines = [json.dumps(record()), "", json.dumps(_rejected())]
    (folder / "c.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "notes.txt").write_text("ignored")
    return folder


def test_batch_over_folders_and_jsonl_reports_file_and_line_in_input_order(tmp_path: Path) -> None:
    result = _run("validate", _batch(tmp_path))
    assert result.exit_code == 1  # a rejected record, no input error
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(Path(r["file"]).name, r["line"], r["overall_status"]) for r in rows] == [
        ("a.json", 1, "admitted"), ("c.jsonl", 1, "admitted"), ("c.jsonl", 3, "rejected"),
        ("b.json", 1, "review_required"),
    ]


def test_batch_exit_code_3_when_any_input_is_broken_but_others_still_reported(tmp_path: Path) -> None:
    folder = _batch(tmp_path)
    (folder / "broken.json").write_text("{")
    result = _run("validate", folder, "--format", "text")
    assert result.exit_code == 3
    assert result.stdout.count("ADMITTED") == 2 and "REJECTED" in result.stdout and "ERROR" in result.stdout
    assert "5 records: 2 admitted, 1 review required, 1 rejected, 1 input error" in result.stdout


def test_batch_exit_code_2_when_only_reviews(tmp_path: Path) -> None:
    _write(tmp_path / "a.json", record())
    _write(tmp_path / "b.json", _review())
    assert _run("validate", tmp_path).exit_code == 2


def test_markdown_summary_has_no_relative_links_and_links_codes_only_to_an_absolute_address(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A report read outside this repository has no broken links: codes link only to an absolute URL."""
    for var in ("BIOEVIDENCE_RULES_URL", "GITHUB_ACTION_REPOSITORY", "GITHUB_REPOSITORY", "BIOEVIDENCE_ACTION_PATH"):
        monkeypatch.delenv(var, raising=False)
    result = _run("validate", _batch(tmp_path), "--format", "markdown")
    assert "| file | record | status | uses | reasons |" in result.stdout
    assert "](" not in result.stdout and "`BEV010`" in result.stdout
    assert "**4 records**: 2 admitted, 1 review required, 1 rejected, 0 input errors." in result.stdout
    monkeypatch.setenv("BIOEVIDENCE_RULES_URL", "https://example.org/bioevidence/docs/rules.md")
    linked = _run("validate", tmp_path / "batch", "--format", "markdown").stdout
    assert "[BEV010](https://example.org/bioevidence/docs/rules.md#bev010)" in linked


def test_profile_flag_applies_to_all_records(tmp_path: Path) -> None:
    rec = record("general")
    result = _run("validate", _write(tmp_path / "r.json", rec), "--profile", "dataset-label")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["profile_id"] == "dataset-label"
    assert "RECORD_INTEGRITY" in result.stdout


def test_without_profile_flag_each_record_selects_its_builtin(tmp_path: Path) -> None:
    _write(tmp_path / "a.json", record("general"))
    _write(tmp_path / "b.json", record("dataset-label"))
    result = _run("validate", tmp_path)
    assert result.exit_code == 0
    assert [json.loads(x)["profile_id"] for x in result.stdout.splitlines()] == ["general", "dataset-label"]


def test_record_naming_a_profile_that_is_not_builtin_is_rejected_with_the_fix(tmp_path: Path) -> None:
    rec = record("general")
    rec["profile_id"] = "my-lab"
    result = _run("validate", _write(tmp_path / "r.json", rec))
    assert result.exit_code == 1
    message = json.loads(result.stdout)["findings"][0]["message"]
    assert "--profile" in message


def test_no_record_files_is_a_clear_error(tmp_path: Path) -> None:
    result = _run("validate", tmp_path)
    assert result.exit_code == 3
    assert "no record files" in json.loads(result.stderr)["message"]


def test_parallel_batch_keeps_input_order(tmp_path: Path) -> None:
    lines = []
    for n in range(600):
        rec = record("general", ["training_data"] if n % 3 == 0 else ["knowledge_base"])
        rec["record_id"] = f"t:{n}"
        lines.append(json.dumps(rec))
    (tmp_path / "many.jsonl").write_text("\n".join(lines))
    result = _run("validate", tmp_path / "many.jsonl", "--workers", "2")
    rows = [json.loads(x) for x in result.stdout.splitlines()]
    assert [r["record_id"] for r in rows] == [f"t:{n}" for n in range(600)]
    assert [r["overall_status"] for r in rows[:3]] == ["rejected", "admitted", "admitted"]


def test_files_from_a_list_or_stdin(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.json", record())
    b = _write(tmp_path / "b.json", _review())
    listing = tmp_path / "list.txt"
    listing.write_text(f"{a}\n\n{b}\n")
    result = _run("validate", "--files-from", listing, "--format", "text")
    assert result.exit_code == 2 and "2 records: 1 admitted, 1 review required" in result.stdout
    piped = CliRunner().invoke(cli, ["validate", "--files-from", "-", "--format", "text"], input=f"{a}\n")
    assert piped.exit_code == 0 and "1 record: 1 admitted" in piped.stdout
    assert _run("validate").exit_code == 3
