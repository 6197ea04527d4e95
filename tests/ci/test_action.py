"""The action's step (``bioevidence ci run``) over a fixture folder of records.

The runner is played by temporary files: ``GITHUB_OUTPUT`` and ``GITHUB_STEP_SUMMARY`` are
files the test reads back, ``RUNNER_TEMP`` a temporary folder; the step runs for real (one
``bioevidence validate`` subprocess), nothing of ours is replaced.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bioevidence.ci.action import ActionInputs, build_available, read_report, resolve_files, run_gate
from bioevidence.cli import cli
from bioevidence.errors import ConfigurationError

FIXTURES = Path(__file__).parent / "fixtures"
EXAMPLE_DRAFTS = Path(__file__).resolve().parents[2] / "examples" / "drafts"


def line_of(path: Path, needle: str) -> int:
    return next(n for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if needle in text)


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    """A checkout: the fixture records under ``records/`` and ``jsonl/``."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES, root)
    return root


def runner_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    (tmp_path / "runner").mkdir(exist_ok=True)
    env = {"GITHUB_OUTPUT": str(tmp_path / "runner" / "output"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "runner" / "summary.md"),
           "RUNNER_TEMP": str(tmp_path / "runner")}
    env.update(extra)
    return env


def outputs(env: dict[str, str]) -> dict[str, str]:
    return dict(line.split("=", 1) for line in Path(env["GITHUB_OUTPUT"]).read_text(encoding="utf-8").splitlines())


def step(workspace: Path, env: dict[str, str], files: str, **inputs: Any) -> tuple[int, list[str]]:
    out = io.StringIO()
    code = run_gate(ActionInputs(files=files, **inputs), cwd=workspace, env=env, out=out)
    return code, out.getvalue().splitlines()


ANNOTATION = re.compile(r"^::(error|warning) file=([^,]+)(?:,line=(\d+))?,title=([^:]+)::(.*)$")


def parsed(lines: list[str]) -> list[tuple[str, str, int | None, str, str]]:
    out = []
    for line in lines:
        match = ANNOTATION.match(line)
        if match:
            level, file, number, title, message = match.groups()
            out.append((level, file, int(number) if number else None, title, message))
    return out


def test_fixture_folder_gives_counts_annotations_at_lines_and_a_summary(workspace: Path, tmp_path: Path) -> None:
    env = runner_env(tmp_path, BIOEVIDENCE_RULES_URL="https://example.org/docs/rules.md")
    code, lines = step(workspace, env, "records/**")
    assert code == 3  # an input error fails the step whatever fail-on says
    got = outputs(env)
    assert {k: got[k] for k in ("admitted", "review_required", "rejected", "error", "total")} == {
        "admitted": "2", "review_required": "1", "rejected": "2", "error": "1", "total": "6"}
    report = Path(got["report"])
    assert [r.status for r in read_report(report)] == ["admitted", "error", "admitted", "rejected", "rejected",
                                                       "review_required"]
    assert Path(got["sarif"]).is_file()

    annotations = parsed(lines)
    records = workspace / "records"
    assert annotations == [
        ("error", "records/broken.json", 6, "input error",
         "invalid JSON: Expecting ',' delimiter at line 6 column 5"),
        ("error", "records/nested/deep.yaml", line_of(records / "nested" / "deep.yaml", "extraction_method: guess"),
         "SCHEMA", annotations[1][4]),
        ("error", "records/rejected.json", line_of(records / "rejected.json", '"t:source-missing"'),
         "RECORD_INTEGRITY", annotations[2][4]),
        ("warning", "records/review.json", line_of(records / "review.json", '"adjudications"'), "BEV012",
         "A human decision is deferred for use 'knowledge_base'. [$.adjudications; blocks knowledge_base]"),
    ]
    assert "[$.evidence_items[2].extraction_method; blocks knowledge_base]" in annotations[1][4]
    assert annotations[2][2] == 59  # fixed by the fixture: the second item's source_artifact_id

    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert summary.startswith("## bioevidence gate: ❌ failed")
    assert "**6 records**: 2 admitted, 1 review required, 2 rejected, 1 input errors (fail-on: `review`)." in summary
    assert ("| `records/review.json` | t:ci-review | 🟡 review required | `knowledge_base`: review_required "
            "([BEV012](https://example.org/docs/rules.md#bev012)) |") in summary
    assert "| `records/admitted.json` | t:ci-admitted | ✅ admitted | `knowledge_base`: admitted |" in summary
    assert "`records/broken.json` line 6: **input error**" in summary
    deep = line_of(records / "nested" / "deep.yaml", "extraction_method: guess")
    assert (f"| {deep} | [SCHEMA](https://example.org/docs/rules.md#schema) | error "
            "| `$.evidence_items[2].extraction_method` | knowledge_base |") in summary
    assert lines[-1].startswith("bioevidence gate: 6 records: 2 admitted, 1 review required, 2 rejected, "
                                "1 input errors; failing (fail-on: review).")


@pytest.mark.parametrize(("files", "fail_on", "code", "verdict"), [
    pytest.param("records/admitted.json records/nested/admitted.yaml", "review", 0, "passed", id="all-admitted"),
    pytest.param("records/admitted.json records/review.json", "review", 2, "failed", id="review-fails-on-review"),
    pytest.param("records/admitted.json records/review.json", "rejected", 0, "passed", id="review-passes-on-rejected"),
    pytest.param("records/review.json records/rejected.json", "rejected", 1, "failed", id="rejected-fails"),
    pytest.param("records/admitted.json records/broken.json", "rejected", 3, "failed", id="input-error-fails"),
])
def test_fail_on_decides_the_step_exit_code(workspace: Path, tmp_path: Path, files: str, fail_on: str, code: int,
                                            verdict: str) -> None:
    env = runner_env(tmp_path)
    assert step(workspace, env, files, fail_on=fail_on)[0] == code
    assert f"## bioevidence gate: {'✅' if verdict == 'passed' else '❌'} {verdict}" in Path(
        env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")


def test_jsonl_records_are_annotated_at_their_own_line(workspace: Path, tmp_path: Path) -> None:
    env = runner_env(tmp_path)
    code, lines = step(workspace, env, "jsonl/*.jsonl", fail_on="rejected")
    assert code == 0
    assert parsed(lines) == [("warning", "jsonl/batch.jsonl", 2, "BEV012",
                              "A human decision is deferred for use 'knowledge_base'. "
                              "[$.adjudications; blocks knowledge_base] (record t:jsonl-2)")]
    assert "| `jsonl/batch.jsonl:2` | t:jsonl-2 |" in Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")


def test_globs_recurse_skip_non_records_dedupe_and_exclude(workspace: Path) -> None:
    assert resolve_files("records", workspace) == resolve_files("records/**/*", workspace) == [
        "records/admitted.json", "records/broken.json", "records/nested/admitted.yaml", "records/nested/deep.yaml",
        "records/rejected.json", "records/review.json"]
    assert resolve_files("records/*.json records/**/*.json !records/broken.json", workspace) == [
        "records/admitted.json", "records/rejected.json", "records/review.json"]
    assert resolve_files("**/*.yaml\n**/*.jsonl", workspace) == [
        "jsonl/batch.jsonl", "records/nested/admitted.yaml", "records/nested/deep.yaml"]


def test_no_matching_file_fails_with_a_clear_message(workspace: Path, tmp_path: Path) -> None:
    env = runner_env(tmp_path)
    out = io.StringIO()
    with pytest.raises(ConfigurationError, match=r"no file matches 'curation/\*\*/\*\.json'"):
        run_gate(ActionInputs(files="curation/**/*.json"), cwd=workspace, env=env, out=out)
    assert out.getvalue().startswith("::error title=bioevidence%3A no files::no file matches")
    assert not Path(env["GITHUB_OUTPUT"]).exists()


@pytest.mark.parametrize(("inputs", "message"), [
    pytest.param({"format": "records"}, "format must be one of record, draft", id="format"),
    pytest.param({"fail_on": "error"}, "fail-on must be one of review, rejected", id="fail-on"),
])
def test_wrong_inputs_are_configuration_errors(workspace: Path, tmp_path: Path, inputs: dict[str, str],
                                               message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        step(workspace, runner_env(tmp_path), "records", **inputs)


def test_a_profile_that_does_not_exist_stops_the_step_with_validate_s_message(workspace: Path,
                                                                              tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"bioevidence validate did not run \(exit 3\): .*no-such-profile"):
        step(workspace, runner_env(tmp_path), "records/admitted.json", profile="no-such-profile")


def test_profile_and_grounding_inputs_become_validate_flags() -> None:
    inputs = ActionInputs(files="x", profile="literature-claim", snapshot_dir="snap", ontology="cl.obo\nuberon.obo",
                          term_root="cell_type=CL:0000000", genes="hgnc.tsv", tables="marker_table  de_table")
    assert inputs.validate_flags() == [
        "--profile", "literature-claim", "--snapshot-dir", "snap", "--ontology", "cl.obo", "--ontology", "uberon.obo",
        "--term-root", "cell_type=CL:0000000", "--genes", "hgnc.tsv", "--tables", "marker_table",
        "--tables", "de_table"]
    assert ActionInputs(files="x").validate_flags() == []


def test_grounding_inputs_reach_validate(workspace: Path, tmp_path: Path) -> None:
    """A term root without an ontology is refused by validate's grounder factory: the flags got there."""
    with pytest.raises(ConfigurationError, match="bioevidence validate did not run"):
        step(workspace, runner_env(tmp_path), "records/admitted.json", term_root="nonsense")


def test_drafts_are_built_then_validated_and_reported_on_the_draft_files(workspace: Path, tmp_path: Path) -> None:
    """format: draft builds each draft with `bioevidence build` (self-written example drafts of the loop)."""
    assert build_available()
    drafts = workspace / "drafts"
    drafts.mkdir()
    for name in ("curated_note.yaml", "lab_note.txt"):
        shutil.copy(EXAMPLE_DRAFTS / name, drafts / name)
    curated = (drafts / "curated_note.yaml").read_text(encoding="utf-8")
    (drafts / "llm_only.yaml").write_text(curated.replace("method: manual_curation", "method: llm_extraction"),
                                          encoding="utf-8")
    (drafts / "broken.json").write_text('{\n  "profile": "general",\n  oops\n}\n', encoding="utf-8")
    env = runner_env(tmp_path)
    code, lines = step(workspace, env, "drafts", format="draft")
    assert code == 3
    assert [(a[0], a[1], a[2], a[3]) for a in parsed(lines)] == [
        ("error", "drafts/broken.json", 3, "input error"),  # the draft itself is the file that failed
        ("warning", "drafts/llm_only.yaml", None, "BEV008"),  # paths name the built record: no line in the draft
    ]
    got = outputs(env)
    assert (got["admitted"], got["review_required"], got["error"], got["total"]) == ("1", "1", "1", "3")
    assert [r.file for r in read_report(Path(got["report"]))] == [
        "drafts/broken.json", "drafts/curated_note.yaml", "drafts/llm_only.yaml"]
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert "| `drafts/curated_note.yaml` |" in summary and "✅ admitted" in summary
    assert "draft does not build" in summary


def test_cli_step_reads_inputs_from_the_environment(workspace: Path, tmp_path: Path) -> None:
    env = runner_env(tmp_path, INPUT_FILES="records/admitted.json records/review.json", INPUT_FAIL_ON="rejected",
                     INPUT_PROFILE="", INPUT_FORMAT="record")
    cwd = Path.cwd()
    os.chdir(workspace)
    try:
        result = CliRunner().invoke(cli, ["ci", "run"], env=env)
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    assert "::warning file=records/review.json,line=" in result.output
    assert outputs(env)["review_required"] == "1"


def test_python_dash_m_step_runs_as_the_action_runs_it(workspace: Path, tmp_path: Path) -> None:
    env = {**os.environ, **runner_env(tmp_path, INPUT_FILES="records/rejected.json", INPUT_FAIL_ON="rejected")}
    done = subprocess.run([sys.executable, "-m", "bioevidence.ci", "run"], cwd=workspace, env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("::error file=records/rejected.json,line=59,title=RECORD_INTEGRITY::")
    assert outputs(env)["rejected"] == "1"


def test_no_match_at_the_command_line_is_exit_3_with_one_json_error_line(workspace: Path, tmp_path: Path) -> None:
    env = {**os.environ, **runner_env(tmp_path, INPUT_FILES="nothing/*.json")}
    done = subprocess.run([sys.executable, "-m", "bioevidence", "ci", "run"], cwd=workspace, env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 3
    error = json.loads(done.stderr.strip().splitlines()[-1])
    assert error["error"] == "configuration_error" and "no file matches 'nothing/*.json'" in error["message"]


def test_papers_are_checked_unless_no_grounding_is_asked_for(workspace: Path, tmp_path: Path) -> None:
    """A record citing a PubMed paper, with no snapshot-dir: review (BEV029) by default; the
    ``no-grounding`` input gives 0.8.0's verdict; any other value is an input error."""
    from builders import claim_record

    record = claim_record(0, "15696205", "ab" * 32, "A title", "KRAS mutations predict primary resistance here.")
    (workspace / "records" / "paper.json").write_text(json.dumps(record), encoding="utf-8")
    env = runner_env(tmp_path, BIOEVIDENCE_STORE="", BIOEVIDENCE_HOME=str(tmp_path / "home"))
    code, lines = step(workspace, env, "records/paper.json")
    assert code == 2 and any("BEV029" in line and "not checked against its paper" in line for line in lines)
    code, lines = step(workspace, env, "records/paper.json", no_grounding=True)
    assert code == 0 and not any("BEV029" in line for line in lines)
    cwd = Path.cwd()
    os.chdir(workspace)
    try:
        bad = CliRunner().invoke(cli, ["ci", "run"], env={**env, "INPUT_FILES": "records/paper.json",
                                                           "INPUT_NO_GROUNDING": "maybe"})
    finally:
        os.chdir(cwd)
    assert bad.exit_code == 3 and "no-grounding must be true or false" in bad.output
