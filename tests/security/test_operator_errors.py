"""Point 8: globs stay in the workspace; an unreadable snapshot or a garbage OBO file is the operator's error.

An unreadable pinned file used to be reported as "no bytes pinned" (BEV015, routed to a
reviewer who can do nothing about it); it is now a GROUNDER_FAILURE (operational, the record
rejected: fail closed) and ``sources verify`` calls it ``unreadable``. The file is made
unreadable for real: ``chmod 000``, with the child process stripped of root's power to
override permissions when the suite runs as root.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bioevidence.ci.action import resolve_files
from bioevidence.errors import ConfigurationError
from bioevidence.sources.store import SnapshotStore
from security.harness import can_honour_permissions, run_cli

RECORD = Path(__file__).resolve().parents[2] / "examples" / "records" / "01_admitted_curated_claim.json"

needs_permissions = pytest.mark.skipif(not can_honour_permissions(),
                                       reason="running as root without setpriv: cannot make a file unreadable")


@pytest.mark.parametrize("pattern", ["../*.json", "/etc/*", "~/*.json", "records/../../*.json",
                                     "!../secrets/*", "C:/records/*.json"],
                         ids=["dotdot", "absolute", "home", "climb", "exclude-dotdot", "drive"])
def test_a_glob_that_leaves_the_workspace_is_a_configuration_error(tmp_path: Path, pattern: str) -> None:
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "a.json").write_text("{}")
    with pytest.raises(ConfigurationError, match="outside the workspace"):
        resolve_files(f"records/*.json {pattern}", tmp_path)
    run = run_cli(["ci", "run", "--files", pattern, "--output-dir", str(tmp_path / "out")], cwd=tmp_path)
    assert run.code == 3 and "outside the workspace" in run.stderr


def test_globs_inside_the_workspace_still_resolve(tmp_path: Path) -> None:
    (tmp_path / "records" / "deep").mkdir(parents=True)
    for name in ("records/a.json", "records/deep/b.yaml", "records/deep/skip.json"):
        (tmp_path / name).write_text("{}")
    assert resolve_files("records/**/*.json records/deep !records/deep/skip.json", tmp_path) == [
        "records/a.json", "records/deep/b.yaml"]


def _pinned(tmp_path: Path) -> tuple[Path, Path, Path]:
    snapshots = tmp_path / "snapshots"
    store = SnapshotStore(snapshots)
    sha = store.put(b"col_a\tcol_b\n1\t2\n", "tsv")
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    for source in record["source_artifacts"]:
        source["sha256"] = sha
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    pinned = next(snapshots.iterdir())
    return snapshots, path, pinned


@needs_permissions
def test_an_unreadable_snapshot_is_an_operational_failure_not_missing_evidence(tmp_path: Path) -> None:
    snapshots, record, pinned = _pinned(tmp_path)
    readable = run_cli(["validate", str(record), "--snapshot-dir", str(snapshots)], cwd=tmp_path,
                       honour_permissions=True)
    assert "GROUNDER_FAILURE" not in readable.stdout  # the control: the same bytes, readable
    os.chmod(pinned, 0)
    try:
        run = run_cli(["validate", str(record), "--snapshot-dir", str(snapshots)], cwd=tmp_path,
                      honour_permissions=True)
        verify = run_cli(["sources", "verify", str(snapshots)], cwd=tmp_path, honour_permissions=True)
    finally:
        os.chmod(pinned, 0o644)
    assert run.code == 1 and not run.traceback, run.stderr
    report = json.loads(run.stdout)
    codes = {f["rule_id"]: f["message"] for f in report["findings"]}
    assert "BEV015" not in codes and "GROUNDER_FAILURE" in codes
    assert "cannot be read" in codes["GROUNDER_FAILURE"] and "permissions" in codes["GROUNDER_FAILURE"]
    assert report["overall_status"] == "rejected"
    assert verify.code == 1 and verify.stdout.startswith("unreadable\t")


def test_a_missing_snapshot_is_still_a_reviewers_bev015(tmp_path: Path) -> None:
    snapshots, record, pinned = _pinned(tmp_path)
    pinned.unlink()
    run = run_cli(["validate", str(record), "--snapshot-dir", str(snapshots)], cwd=tmp_path)
    codes = {f["rule_id"] for f in json.loads(run.stdout)["findings"]}
    assert "BEV015" in codes and "GROUNDER_FAILURE" not in codes


@pytest.mark.parametrize("name, content", [
    ("garbage.obo", bytes(range(256)) * 40),
    ("garbage.obo.gz", b"\x1f\x8b\x08\x00" + bytes(range(200))),
    ("empty.obo", b"format-version: 1.2\n"),
], ids=["binary", "bad-gzip", "no-terms"])
def test_a_garbage_ontology_names_its_path(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    run = run_cli(["validate", str(RECORD), "--ontology", str(path)], cwd=tmp_path,
                  env={"BIOEVIDENCE_HOME": str(tmp_path / "home")})
    assert run.code == 3 and not run.traceback, run.stderr
    error = json.loads(run.stderr.splitlines()[-1])
    assert error["error"] == "configuration_error" and error["path"] == str(path)
