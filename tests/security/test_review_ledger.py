"""Point 7: the review queue's history cannot be rewritten quietly.

The attacks use the plain ``sqlite3`` module on the real queue file, as anyone with write access
to it could: ``INSERT OR REPLACE`` over a past decision (it slipped past the old delete trigger),
``UPDATE``/``DELETE`` on entries, dropping the triggers first, adding a row by hand, and finally
rewriting the whole chain. Each is refused by a trigger or detected on open and by
``bioevidence review verify`` (exit 1, one line per problem); a rewritten chain is caught by a
head written down earlier (``--expect-head``).
"""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bioevidence.errors import InputError
from bioevidence.gate.validator import Validator
from bioevidence.loop import ledger
from bioevidence.loop.queue import ReviewQueue
from builders import record
from security.harness import run_cli

REVIEWER = "orcid:0000-0002-1825-0097"


def _queue_with_history(path: Path) -> None:
    validator = Validator("general")
    with ReviewQueue(path) as queue:
        for n in range(3):
            rec = record("general", ["knowledge_base", "training_data"])  # training_data needs a person
            rec["record_id"] = f"t:record-{n}"
            entry = queue.add(rec, validator.validate(rec), reason="policy",
                              attempts=[{"round": 1, "outcome": "to_person", "feedback": ["needs a person"]}])
            queue.decide(entry, "reject" if n == 1 else "accept", reviewer=REVIEWER, rationale="Checked.",
                         validator=validator)


def _verify(path: Path, *extra: str) -> Any:
    return run_cli(["review", "verify", "--queue", str(path), *extra], cwd=path.parent)


def _raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def test_an_intact_queue_verifies_and_prints_its_head(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite"
    _queue_with_history(path)
    run = _verify(path)
    assert run.code == 0 and run.stdout.startswith("ok: 6 entries and decisions chained; head ")
    with ReviewQueue(path) as queue:
        assert queue.verify().head == run.stdout.split()[-1]


@pytest.mark.parametrize("attack", [
    "INSERT OR REPLACE INTO decisions SELECT id, entry_id, 'accept', reviewer_id, rationale, uses_json, decided_at,"
    " record_sha256_before, record_json_after, record_sha256_after, report_json_after, overall_status_after,"
    " reviewer_name FROM decisions WHERE id = 2",
    "REPLACE INTO entries (id, record_id, record_json, record_sha256, report_json, profile_id, profile_sha256,"
    " schema_sha256, overall_status, reason, queued_at) SELECT id, record_id, record_json, record_sha256,"
    " report_json, profile_id, profile_sha256, schema_sha256, 'admitted', reason, queued_at FROM entries"
    " WHERE id = 1",
    "UPDATE entries SET reason = 'nothing to see'",
    "DELETE FROM entries WHERE id = 3",
    "UPDATE attempts SET outcome = 'admitted'",
    "DELETE FROM ledger",
    "UPDATE ledger SET row_sha256 = chain_sha256",
], ids=["replace-decision", "replace-entry", "update-entry", "delete-entry", "update-attempt", "delete-ledger",
        "update-ledger"])
def test_every_rewrite_is_refused_by_a_trigger(tmp_path: Path, attack: str) -> None:
    path = tmp_path / "q.sqlite"
    _queue_with_history(path)
    db = _raw(path)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute(attack)
    db.close()
    assert _verify(path).code == 0


def _tamper(path: Path, *statements: str) -> None:
    db = _raw(path)
    for name in ledger.TRIGGERS:
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
    for statement in statements:
        db.execute(statement)
    db.close()


@pytest.mark.parametrize("statements, problem", [
    (["UPDATE decisions SET decision = 'accept' WHERE id = 2"], "decision 2 differs"),
    (["DELETE FROM decisions WHERE id = 3"], "decision 3 is in the ledger but not in the queue"),
    (["INSERT INTO decisions (entry_id, decision, reviewer_id, rationale, uses_json, decided_at, "
      "record_sha256_before, record_json_after, record_sha256_after, report_json_after, overall_status_after) "
      "SELECT entry_id, 'accept', reviewer_id, 'forged', uses_json, decided_at, record_sha256_before, "
      "record_json_after, record_sha256_after, report_json_after, 'admitted' FROM decisions WHERE id = 2"],
     "decision 4 is not in the ledger"),
    (["UPDATE entries SET record_json = replace(record_json, 'protein A', 'protein Z') WHERE id = 1"],
     "entry 1 differs"),
    (["UPDATE ledger SET chain_sha256 = '" + "0" * 64 + "' WHERE seq = 2"], "the chain breaks at ledger row"),
    ([], "trigger entries_append_only_update is missing"),
], ids=["edit-decision", "delete-decision", "forge-decision", "edit-entry", "edit-ledger", "drop-triggers"])
def test_tampering_after_dropping_the_triggers_is_detected(tmp_path: Path, statements: list[str],
                                                           problem: str) -> None:
    path = tmp_path / "q.sqlite"
    _queue_with_history(path)
    _tamper(path, *statements)
    with pytest.raises(InputError, match="altered outside bioevidence") as info:
        ReviewQueue(path)
    assert problem in str(info.value) or "more)" in str(info.value)
    run = _verify(path)
    assert run.code == 1 and any(problem in line for line in run.stdout.splitlines()), run.stdout
    listed = run_cli(["review", "list", "--queue", str(path)], cwd=tmp_path)
    assert listed.code == 3 and "review verify" in listed.stderr  # every command refuses the file


def test_a_rewritten_chain_is_caught_by_a_head_written_down_earlier(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite"
    _queue_with_history(path)
    head = _verify(path).stdout.split()[-1]
    db = _raw(path)
    db.row_factory = sqlite3.Row
    for name in ledger.TRIGGERS:
        db.execute(f"DROP TRIGGER {name}")
    db.execute("UPDATE decisions SET decision = 'accept' WHERE id = 2")  # the forgery...
    db.execute("DELETE FROM ledger")
    ledger.backfill(db)  # ...with a freshly computed chain
    db.executescript(ledger.MIGRATION.split(");", 1)[1])  # and the triggers put back
    db.executescript("""
        CREATE TRIGGER decisions_append_only_update BEFORE UPDATE ON decisions
            BEGIN SELECT RAISE(ABORT, 'decisions are append-only'); END;
        CREATE TRIGGER decisions_append_only_delete BEFORE DELETE ON decisions
            BEGIN SELECT RAISE(ABORT, 'decisions are append-only'); END;
    """)
    db.close()
    assert _verify(path).code == 0  # self-consistent: only an outside anchor can tell
    run = _verify(path, "--expect-head", head)
    assert run.code == 1 and "does not pass through the expected head" in run.stdout


def _writer(path: str, worker: int, count: int = 10) -> None:
    validator = Validator("general")
    with ReviewQueue(path) as queue:
        for n in range(count):
            rec = record("general", ["knowledge_base", "training_data"])
            rec["record_id"] = f"t:w{worker}-{n}"
            queue.add(rec, validator.validate(rec), reason="policy")


def test_concurrent_writers_keep_the_chain_whole(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite"
    ReviewQueue(path).close()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(path), w)) for w in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    with ReviewQueue(path) as queue:
        state = queue.verify()
        assert state.intact and state.rows == 30
        ids = sorted(json.loads(json.dumps(e.record_id)) for e in queue.list("all"))
        assert len(ids) == len(set(ids)) == 30


def test_a_version_2_queue_is_chained_on_migration(tmp_path: Path) -> None:
    from bioevidence.loop.queue import MIGRATIONS

    path = tmp_path / "old.sqlite"
    db = _raw(path)
    for version, script in enumerate(MIGRATIONS[:2], start=1):
        db.executescript(script)
        db.execute("INSERT INTO schema_version VALUES (?, '2026-01-01T00:00:00Z')", (version,))
    report = Validator("general").validate(record())
    db.execute("INSERT INTO entries (record_id, record_json, record_sha256, report_json, profile_id, profile_sha256,"
               " schema_sha256, overall_status, reason, queued_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
               ("t:record", json.dumps(record()), report.input_sha256, report.to_json(), "general",
                report.profile_sha256, report.schema_sha256, report.overall_status, "policy", "2026-01-01T00:00:00Z"))
    db.close()
    with ReviewQueue(path) as queue:
        assert queue.version == 5 and queue.verify().rows == 1


def test_a_queue_verified_while_others_write_is_never_seen_as_tampered(tmp_path: Path) -> None:
    """The open-time check reads the ledger and every table in one snapshot. Read in autocommit, a
    writer committing between two of its reads made an intact queue look altered ("entry 8 is not in
    the ledger"): 22 of 301 checks during two writers' adds, before the fix; found when the suite first
    ran on both cores."""
    path = tmp_path / "q.sqlite"
    ReviewQueue(path).close()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(path), w, 40)) for w in range(2)]
    for w in workers:
        w.start()
    checks, seen = 0, []
    while any(w.is_alive() for w in workers) or checks == 0:
        queue = ReviewQueue(path, verify=False)
        state = queue.verify()
        queue.close()
        checks += 1
        if not state.intact:
            seen.append(state.problems[0])
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    assert seen == [] and checks >= 20
    with ReviewQueue(path) as queue:
        assert queue.verify().rows == 80
