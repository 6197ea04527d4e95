"""``bioevidence review add|list|show|decide`` through click's CliRunner on a real SQLite queue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from bioevidence.cli import cli
from builders import record


def _run(*args: str | Path) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_queue_list_show_and_decide(tmp_path: Path) -> None:
    queue = tmp_path / "q.sqlite"
    needs_person = tmp_path / "needs.json"
    needs_person.write_text(json.dumps(record("general", ["training_data"])))
    admitted = tmp_path / "ok.json"
    admitted.write_text(json.dumps(record()))
    added = _run("review", "add", needs_person, admitted, "--queue", queue)
    assert added.exit_code == 0, added.stderr
    assert "queued as entry 1" in added.stdout and "admitted, not queued" in added.stdout

    listed = _run("review", "list", "--queue", queue, "--format", "json")
    (entry,) = json.loads(listed.stdout)
    assert entry["id"] == 1 and entry["state"] == "open" and entry["reason_codes"] == ["BEV010"]

    shown = _run("review", "show", "1", "--queue", queue)
    assert "claim: protein A (t:protein-a) participates_in process A (t:process-a)" in shown.stdout
    assert "BEV010" in shown.stdout

    out = tmp_path / "decided.json"
    decided = _run("review", "decide", "1", "accept", "--reviewer", "orcid:0000-0002-1825-0097",
                   "--rationale", "Row 1 supports it.", "--queue", queue, "-o", out)
    assert decided.exit_code == 0, decided.stderr
    assert "record now admitted" in decided.stdout
    assert json.loads(out.read_text())["adjudications"][0]["decision"] == "accept"
    assert _run("review", "list", "--queue", queue).stdout == f"no open entries in {queue}\n"
    history = json.loads(_run("review", "show", "1", "--queue", queue, "--format", "json").stdout)
    assert [d["reviewer_id"] for d in history["decisions"]] == ["orcid:0000-0002-1825-0097"]

    rejected = _run("review", "decide", "1", "reject", "--reviewer", "orcid:2", "--rationale", "No.", "--queue", queue)
    assert rejected.exit_code == 1  # the record is validated again: a human rejection rejects it


def test_review_without_a_queue_names_the_option(tmp_path: Path) -> None:
    result = _run("review", "list", "--queue", tmp_path / "none.sqlite")
    assert result.exit_code == 3 and "--queue" in json.loads(result.stderr)["message"]


EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "records"


def test_review_add_takes_a_folder_and_list_labels_its_columns(tmp_path: Path) -> None:
    """As documented: `review add records/` queues every record of the folder that is not admitted."""
    queue = tmp_path / "q.sqlite"
    added = _run("review", "add", EXAMPLES, "--queue", queue)
    assert added.exit_code == 0, added.output
    assert added.stdout.count("admitted, not queued") == 3 and added.stdout.count("queued as entry") == 3
    assert "03_rejected_needs_human.json: rejected, queued as entry" in added.stdout
    header, *rows = _run("review", "list", "--queue", queue).stdout.split("\n\n")[0].splitlines()  # then the codes
    assert header.split() == ["entry", "decision", "record", "now", "queued", "because", "record", "id", "reasons"]
    assert len(rows) == 3 and all(row.split()[1] == "open" for row in rows)


def test_a_decision_that_leaves_the_record_blocked_names_what_still_blocks_it(tmp_path: Path) -> None:
    """Accepting a record whose contradicting evidence line stays says BEV004 still blocks it, and why."""
    queue = tmp_path / "q.sqlite"
    assert _run("review", "add", EXAMPLES / "05_review_contradicted_label.json", "--queue", queue).exit_code == 0
    decided = _run("review", "decide", "1", "accept", "--reviewer", "orcid:0000-0002-1825-0097",
                   "--rationale", "The contradicting sample is mislabelled.", "--queue", queue)
    assert decided.exit_code == 2
    lines = decided.stdout.splitlines()
    assert lines[0].endswith("record now review_required")
    assert lines[1].startswith("  still blocking: review BEV004 at $.statement.evidence_lines[1]")
    assert "Contradicting evidence remains unresolved" in lines[1] and lines[2].startswith("    fix: ")
