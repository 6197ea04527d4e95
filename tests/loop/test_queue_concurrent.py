"""The review queue under several writers: schema 4, WAL, idempotent decisions, optimistic retries,
and the incremental listing the web pages read."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bioevidence.errors import ConfigurationError
from bioevidence.gate.validator import Validator
from bioevidence.loop.listing import QueueListing
from bioevidence.loop.queue import MIGRATIONS, SCHEMA_VERSION, ReviewQueue
from builders import record


def _needs_person(n: int = 0) -> dict[str, Any]:
    out = record("general", ["knowledge_base", "training_data"])  # training_data needs a human acceptance
    out["record_id"] = f"t:record-{n}"
    return out


def _queue(path: Path, count: int = 1) -> Validator:
    validator = Validator("general")
    with ReviewQueue(path) as queue:
        for n in range(count):
            rec = _needs_person(n)
            queue.add(rec, validator.validate(rec), reason="policy", profile="general")
    return validator


def test_the_queue_file_is_in_wal_mode_with_a_busy_timeout(tmp_path: Path) -> None:
    with ReviewQueue(tmp_path / "q.sqlite") as queue:
        assert queue.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert queue.db.execute("PRAGMA busy_timeout").fetchone()[0] == 30000


def test_a_version_3_queue_migrates_to_4_and_keeps_its_chain(tmp_path: Path) -> None:
    path = tmp_path / "v3.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    for version, script in enumerate(MIGRATIONS[:3], start=1):
        db.executescript(script)
        db.execute("INSERT INTO schema_version VALUES (?, '2026-01-01T00:00:00Z')", (version,))
    db.close()
    validator = _queue(path)  # opens (migrating 3 -> 4) and adds an entry
    with ReviewQueue(path) as queue:
        assert queue.version == SCHEMA_VERSION == 5 and queue.verify().intact
        queue.decide(1, "accept", reviewer="orcid:1", rationale="ok", validator=validator, request_id="r-1")
        tables = {r[0] for r in queue.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"account_events", "decision_requests", "web_sessions", "web_login_attempts"} <= tables
        assert queue.accounts.list() == []  # no default account
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            queue.db.execute("DELETE FROM decision_requests")


def test_the_same_request_id_is_one_decision(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite"
    validator = _queue(path, 2)
    with ReviewQueue(path) as queue:
        first = queue.decide(1, "accept", reviewer="orcid:1", rationale="ok", validator=validator, request_id="r-1")
        again = queue.decide(1, "accept", reviewer="orcid:1", rationale="ok", validator=validator, request_id="r-1")
        assert not first.replayed and again.replayed and again.decision_id == first.decision_id
        assert again.report.overall_status == first.report.overall_status == "admitted"
        assert len(queue.get(1).decisions) == 1
        with pytest.raises(ConfigurationError, match="decided entry 1, not 2"):
            queue.decide(2, "accept", reviewer="orcid:1", rationale="ok", validator=validator, request_id="r-1")


def _decide_many(path: str, reviewer: str, rounds: int) -> None:
    validator = Validator("general")
    with ReviewQueue(path, verify=False) as queue:
        for n in range(rounds):
            queue.decide(1, "accept" if n % 2 else "defer", reviewer=reviewer, rationale=f"round {n}",
                         validator=validator, request_id=f"{reviewer}-{n}")


def test_reviewers_deciding_one_entry_at_once_lose_no_adjudication(tmp_path: Path) -> None:
    """Four processes append decisions on the same entry at the same time: every decision is kept,
    and the record after the last one carries each reviewer's latest adjudication (none lost to a race)."""
    path = tmp_path / "q.sqlite"
    _queue(path)
    reviewers = [f"orcid:000{n}" for n in range(4)]
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_decide_many, args=(str(path), r, 6)) for r in reviewers]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    with ReviewQueue(path) as queue:
        entry = queue.get(1)
        assert len(entry.decisions) == 24 and queue.verify().intact
        last = {a["reviewer"]["id"]: a["decision"] for a in entry.record["adjudications"]}
        assert last == {r: "accept" for r in reviewers}  # each one's round 5
        ids = [r[0] for r in queue.db.execute("SELECT request_id FROM decision_requests")]
        assert len(ids) == len(set(ids)) == 24


def test_the_listing_reads_only_what_was_appended_and_sees_other_writers(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite"
    validator = _queue(path, 3)
    listing = QueueListing()
    with ReviewQueue(path) as reader, ReviewQueue(path) as writer:
        listing.refresh(reader.db)
        assert listing.counts()["open"] == 3
        assert [r.queued_codes for r in listing.query().rows] == [("BEV010",)] * 3
        writer.decide(2, "reject", reviewer="orcid:9", rationale="no", validator=validator)
        rec = _needs_person(9)
        writer.add(rec, validator.validate(rec), reason="policy")
        listing.refresh(reader.db)
        assert listing.counts() == {"open": 3, "accept": 0, "reject": 1, "defer": 0, "all": 4}
        row = listing.get(2)
        assert row is not None and row.state == "reject" and row.status == "rejected" and "BEV011" in row.codes
        assert [r.id for r in listing.query(state="all", code="BEV011").rows] == [2]
        assert [r.id for r in listing.query(state="all", text="t:record-9").rows] == [4]
        assert [r.id for r in listing.query(state="all", source="example.org/source").rows] == [1, 2, 3, 4]
        (fact,) = listing.decisions()
        assert (fact.entry_id, fact.decision, fact.reviewer_id, fact.queued_codes) == (2, "reject", "orcid:9",
                                                                                     ("BEV010",))
        page = listing.query(state="all", offset=2, limit=1)
        assert page.total == 4 and [r.id for r in page.rows] == [3]
        assert json.dumps(row.to_dict())  # plain values
