"""Point 1: a pull request cannot make the gate read a file outside the workspace or pour an input into its output.

Staged as an attacker would: a checkout with real symlinks (``records/p.yaml -> /etc/passwd``,
a link to a secrets file, a linked folder), run through the real ``bioevidence ci run`` with
the runner's files; then every channel the runner publishes (annotations on stdout, the job
summary, ``report.jsonl``, the SARIF uploaded to code scanning) is searched for the secret.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from security.harness import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "records"
SECRET = "ghp_TOPSECRET0123456789abcdefTOKEN"


def _checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with one good record and links leading out of it, and a secrets folder beside it."""
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "token.json").write_text(json.dumps({"token": SECRET, "password": SECRET}), encoding="utf-8")
    (secrets / "token.yaml").write_text(f"token: {SECRET}\npassword: [{SECRET}\n", encoding="utf-8")
    (secrets / "nested").mkdir()
    (secrets / "nested" / "creds.json").write_text(json.dumps([SECRET]), encoding="utf-8")
    work = tmp_path / "repo"
    (work / "records").mkdir(parents=True)
    (work / "records" / "ok.json").write_bytes((EXAMPLES / "01_admitted_curated_claim.json").read_bytes())
    (work / "records" / "p.yaml").symlink_to("/etc/passwd")
    (work / "records" / "s.json").symlink_to(secrets / "token.json")
    (work / "records" / "bad.yaml").symlink_to(secrets / "token.yaml")  # a YAML syntax error around the secret
    (work / "records" / "linked").symlink_to(secrets / "nested", target_is_directory=True)
    (work / "records" / "inside.json").symlink_to(work / "records" / "ok.json")  # stays inside: allowed
    return work, secrets


def _runner(tmp_path: Path) -> dict[str, str]:
    runner = tmp_path / "runner"
    runner.mkdir()
    return {"GITHUB_OUTPUT": str(runner / "output"), "GITHUB_STEP_SUMMARY": str(runner / "summary.md"),
            "RUNNER_TEMP": str(runner)}


def test_ci_run_refuses_records_that_link_outside_the_workspace_and_leaks_nothing(tmp_path: Path) -> None:
    work, _ = _checkout(tmp_path)
    env = _runner(tmp_path)
    out = tmp_path / "out"
    run = run_cli(["ci", "run", "--files", "records/**", "--output-dir", str(out)], cwd=work, env=env)
    assert run.code == 3 and not run.traceback
    report = [json.loads(line) for line in (out / "report.jsonl").read_text(encoding="utf-8").splitlines()]
    by_file = {r["file"]: r for r in report}
    refused = {"records/p.yaml", "records/s.json", "records/bad.yaml", "records/linked/creds.json"}
    assert refused <= set(by_file)
    for name in refused:
        assert by_file[name]["error"] == "input_error" and "outside the workspace" in by_file[name]["message"]
    assert by_file["records/ok.json"]["overall_status"] == "admitted"
    assert by_file["records/inside.json"]["overall_status"] == "admitted"  # a link inside the workspace is fine
    published = [run.stdout, run.stderr, (out / "report.jsonl").read_text(), (out / "report.sarif").read_text(),
                 Path(env["GITHUB_STEP_SUMMARY"]).read_text(), Path(env["GITHUB_OUTPUT"]).read_text()]
    passwd_line = Path("/etc/passwd").read_text().splitlines()[0]
    for text in published:
        assert SECRET not in text
        assert passwd_line not in text


def test_validate_with_a_workspace_never_opens_the_link_target(tmp_path: Path) -> None:
    """A FIFO outside the workspace would block any reader forever: refusing it unread is the proof."""
    work, secrets = _checkout(tmp_path)
    os.mkfifo(secrets / "pipe.json")
    (work / "records" / "pipe.json").symlink_to(secrets / "pipe.json")
    run = run_cli(["validate", "records/pipe.json", "records/ok.json", "--workspace", "."], cwd=work,
                  watchdog=60)
    assert not run.killed and run.code == 3
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert [line.get("overall_status", line.get("error")) for line in lines] == ["input_error", "admitted"]


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom"], ids=["dev-zero", "dev-urandom"])
def test_a_device_given_as_a_record_is_refused_not_read_forever(tmp_path: Path, target: str) -> None:
    run = run_cli(["validate", target], cwd=tmp_path, watchdog=60, address_space_mb=1024)
    assert not run.killed and run.code == 3 and not run.traceback
    assert "not a regular file" in run.stderr


def test_without_a_workspace_a_local_link_still_works(tmp_path: Path) -> None:
    """Outside CI (no --workspace) following one's own symlinks is normal use, not an attack."""
    work, _ = _checkout(tmp_path)
    run = run_cli(["validate", "records/inside.json"], cwd=work)
    assert run.code == 0, run.stderr


def test_yaml_errors_quote_no_raw_file_content(tmp_path: Path) -> None:
    """PyYAML's own message embeds the offending lines; ours names the problem, line and column only."""
    record = tmp_path / "r.yaml"
    record.write_text(f"record_id: x\nnotes: [{SECRET}\nmore: {SECRET}\n", encoding="utf-8")
    run = run_cli(["validate", str(record)], cwd=tmp_path)
    assert run.code == 3 and SECRET not in run.stderr + run.stdout
    error = json.loads(run.stderr.splitlines()[-1])
    assert error["error"] == "input_error" and "line" in error["message"]


def test_a_record_that_is_one_huge_string_is_quoted_by_a_short_excerpt(tmp_path: Path) -> None:
    """/etc/passwd read as YAML is one scalar; a JSON record can be a 1 MB string. Neither is poured out."""
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"record_id": "A" * 1_000_000, "profile_id": "\x1b[2J" + "B" * 5000}),
                   encoding="utf-8")
    run = run_cli(["validate", str(big), "--format", "jsonl"], cwd=tmp_path)
    assert run.code == 1
    report = json.loads(run.stdout)
    assert len(run.stdout) < 20_000  # not a megabyte
    for finding in report["findings"]:
        assert len(finding["message"]) <= 1100 and "\x1b" not in finding["message"]
        assert len(finding["field_path"]) <= 300


def test_terminal_escapes_in_a_record_reach_no_annotation_raw(tmp_path: Path) -> None:
    """A record's strings flow into finding messages; escapes and newlines never reach the runner raw."""
    work = tmp_path / "repo"
    (work / "records").mkdir(parents=True)
    record = json.loads((EXAMPLES / "01_admitted_curated_claim.json").read_text(encoding="utf-8"))
    record["statement"]["predicate"] = "\x1b]0;pwned\x07\n::error::forged annotation\u202e" + "x" * 3000  # BEV003
    (work / "records" / "r.json").write_text(json.dumps(record), encoding="utf-8")
    env = _runner(tmp_path)
    run = run_cli(["ci", "run", "--files", "records/*.json", "--output-dir", str(tmp_path / "out")], cwd=work,
                  env=env)
    assert run.code == 1 and not run.traceback
    annotations = [line for line in run.stdout.splitlines() if line.startswith("::")]
    assert any("title=BEV003" in line for line in annotations)
    for line in run.stdout.splitlines():
        assert "\x1b" not in line and "\x07" not in line and "\u202e" not in line
        assert not line.startswith("::error::forged") and len(line) < 1500


def test_a_queued_records_escapes_never_reach_the_reviewers_terminal(tmp_path: Path) -> None:
    from builders import record as build

    hostile = build("general", ["knowledge_base", "training_data"])  # training_data waits for a person
    hostile["evidence_items"][0]["extracted_text"] = "fine\x1b[2J\x1b]0;owned\x07 text\u202e"
    hostile["record_id"] = "t:\x1b[31mred"
    (tmp_path / "r.json").write_text(json.dumps(hostile), encoding="utf-8")
    queue = str(tmp_path / "q.sqlite")
    added = run_cli(["review", "add", "r.json", "--queue", queue], cwd=tmp_path)
    assert added.code == 0 and "queued as entry 1" in added.stdout, added.stderr
    for command in (["review", "show", "1", "--queue", queue], ["review", "list", "--queue", queue]):
        shown = run_cli(command, cwd=tmp_path)
        assert shown.code == 0 and "\x1b" not in shown.stdout and "\x07" not in shown.stdout
        assert "\u202e" not in shown.stdout
    assert "\\x1b[2J" in run_cli(["review", "show", "1", "--queue", queue], cwd=tmp_path).stdout


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_human_formats_escape_record_ids_and_file_names(tmp_path: Path, fmt: str) -> None:
    record = json.loads((EXAMPLES / "01_admitted_curated_claim.json").read_text(encoding="utf-8"))
    record["record_id"] = "x\x1b]0;owned\x07\x1b[2J"
    (tmp_path / "r\x1b[1m.json").write_text(json.dumps(record), encoding="utf-8")
    run = run_cli(["validate", "r\x1b[1m.json", "--format", fmt], cwd=tmp_path)
    assert run.code in (0, 1) and run.stdout
    assert "\x1b" not in run.stdout and "\x07" not in run.stdout
