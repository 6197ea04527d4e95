"""The review queue: a real SQLite file, versioned schema with a tested migration, append-only decisions."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bioevidence.errors import ConfigurationError, InputError
from bioevidence.gate.validator import Validator
from bioevidence.loop.listing import render_entry
from bioevidence.loop.queue import MIGRATIONS, SCHEMA_VERSION, ReviewQueue
from bioevidence.loop.revise import revise
from builders import record


class Clock:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"2026-11-02T10:00:{self.n:02d}Z"


def _needs_person() -> dict[str, Any]:
    return record("general", ["knowledge_base", "training_data"])  # training_data needs a human acceptance


def _queued(tmp_path: Path) -> tuple[ReviewQueue, int, Validator]:
    validator = Validator("general")
    attempts = revise(lambda feedback: _needs_person(), validator)
    queue = ReviewQueue(tmp_path / "q.sqlite", clock=Clock())
    entry = queue.add_attempts(attempts, profile="general")
    assert entry is not None
    return queue, entry, validator


def test_a_record_routed_by_revise_is_stored_with_report_history_and_hashes(tmp_path: Path) -> None:
    queue, entry_id, _ = _queued(tmp_path)
    with queue:
        entry = queue.get(entry_id)
        assert entry.state == "open" and entry.reason == "to_person: policy"
        assert entry.reason_codes == ["BEV010"]
        assert entry.record == _needs_person()
        assert entry.hashes["record_sha256"] == entry.report.input_sha256
        assert entry.hashes["profile_sha256"] == entry.report.profile_sha256
        assert entry.attempts == [{"round": 1, "outcome": "to_person", "feedback": [],
                                   "record_sha256": entry.report.input_sha256}]
        assert [e.id for e in queue.list()] == [entry_id]


def test_accepting_adds_a_human_adjudication_and_revalidates(tmp_path: Path) -> None:
    queue, entry_id, validator = _queued(tmp_path)
    with queue:
        result = queue.decide(entry_id, "accept", reviewer="orcid:0000-0002-1825-0097", name="A. Curator",
                              rationale="The row supports it.", validator=validator)
        assert result.report.overall_status == "admitted"
        (adj,) = result.record["adjudications"]
        assert adj["reviewer"] == {"id": "orcid:0000-0002-1825-0097", "agent_type": "human", "name": "A. Curator"}
        assert adj["applies_to_uses"] == ["knowledge_base", "training_data"] and adj["decision"] == "accept"
        entry = queue.get(entry_id)
        assert entry.state == "accept" and entry.overall_status == "admitted"
        assert entry.decisions[0]["decided_at"] == "2026-11-02T10:00:07Z"  # after 5 migrations, 1 add
        assert queue.list() == [] and [e.id for e in queue.list("accept")] == [entry_id]
        assert "orcid:0000-0002-1825-0097: accept" in render_entry(entry)


def test_a_later_decision_replaces_the_reviewers_adjudication_but_keeps_the_history(tmp_path: Path) -> None:
    queue, entry_id, validator = _queued(tmp_path)
    with queue:
        first = queue.decide(entry_id, "defer", reviewer="orcid:1", rationale="Need the table.", validator=validator)
        assert {"BEV010", "BEV012"} <= set(first.report.reason_codes())
        second = queue.decide(entry_id, "accept", reviewer="orcid:1", rationale="Table read.", validator=validator)
        assert [a["decision"] for a in second.record["adjudications"]] == ["accept"]
        assert second.report.overall_status == "admitted"
        assert [d["decision"] for d in queue.get(entry_id).decisions] == ["defer", "accept"]


def test_decisions_are_append_only_in_the_database(tmp_path: Path) -> None:
    queue, entry_id, validator = _queued(tmp_path)
    with queue:
        queue.decide(entry_id, "reject", reviewer="orcid:1", rationale="Wrong paper.", validator=validator)
    db = sqlite3.connect(tmp_path / "q.sqlite")
    try:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            db.execute("UPDATE decisions SET decision = 'accept'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            db.execute("DELETE FROM decisions")
    finally:
        db.close()


def test_a_decision_for_a_use_that_was_not_requested_is_refused(tmp_path: Path) -> None:
    queue, entry_id, validator = _queued(tmp_path)
    with queue, pytest.raises(ConfigurationError, match="external_validation"):
        queue.decide(entry_id, "accept", reviewer="orcid:1", rationale="ok", uses=["external_validation"],
                     validator=validator)


def test_a_version_1_queue_is_migrated_and_keeps_its_entries(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(MIGRATIONS[0])
    report = Validator("general").validate(_needs_person())
    db.execute("INSERT INTO schema_version VALUES (1, '2026-01-01T00:00:00Z')")
    db.execute("INSERT INTO entries (record_id, record_json, record_sha256, report_json, profile_id, profile_sha256,"
               " schema_sha256, overall_status, reason, queued_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
               ("t:record", json.dumps(_needs_person()), report.input_sha256, report.to_json(), "general",
                report.profile_sha256, report.schema_sha256, report.overall_status, "policy", "2026-01-01T00:00:00Z"))
    db.commit()
    db.close()
    with ReviewQueue(path) as queue:
        assert queue.version == SCHEMA_VERSION == 5
        entry = queue.get(1)
        assert entry.profile is None and entry.record_id == "t:record"
        decided = queue.decide(1, "accept", reviewer="orcid:1", name="N", rationale="ok",
                               validator=Validator("general"))
        assert decided.report.admitted
    db = sqlite3.connect(path)
    try:
        versions = db.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
        assert versions == [(1,), (2,), (3,), (4,), (5,)]
        with pytest.raises(sqlite3.IntegrityError):
            db.execute("DELETE FROM decisions")
    finally:
        db.close()


def test_a_newer_or_foreign_database_is_refused(tmp_path: Path) -> None:
    newer = tmp_path / "newer.sqlite"
    with ReviewQueue(newer):
        pass
    db = sqlite3.connect(newer)
    db.execute("INSERT INTO schema_version VALUES (99, 'x')")
    db.commit()
    db.close()
    with pytest.raises(ConfigurationError, match="upgrade bioevidence"):
        ReviewQueue(newer)
    foreign = tmp_path / "foreign.sqlite"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(InputError, match="not a review queue"):
        ReviewQueue(foreign)
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database at all" * 100)
    with pytest.raises(InputError, match="not a review queue"):
        ReviewQueue(garbage)


def test_an_unknown_entry_names_the_list_command(tmp_path: Path) -> None:
    with ReviewQueue(tmp_path / "q.sqlite") as queue, pytest.raises(InputError, match="review list"):
        queue.get(7)
