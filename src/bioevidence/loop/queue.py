"""The review queue: records that go to a person, kept in a SQLite file with their whole history.

Each entry holds the record and its report as sent to a person, why it was sent (the routes
of its findings, "last round", …), the feedback history of the loop that produced it (every
attempt's feedback lines, outcome, record and report hashes) and the hashes that bind it
(record, profile, schema). A person's decision (accept / reject / defer, a rationale, who,
when) is **appended** to the ``decisions`` table and becomes a human adjudication in the
record, which is validated again; the new record and report are stored with the decision. The
record carries each reviewer's latest decision; the table keeps all of them.

Append-only and tamper-evident: triggers refuse ``UPDATE``, ``DELETE`` and ``INSERT OR
REPLACE`` on entries, attempts, decisions and the ledger, from any SQLite client, and every
entry and decision is chained in the ledger (:mod:`bioevidence.loop.ledger`). Opening a queue
verifies the chain and refuses a file altered outside bioevidence (``InputError`` naming the
first problem); ``bioevidence review verify`` lists them all.

The schema is versioned (``schema_version`` holds one row per applied migration) and opening
an older file migrates it in one transaction. Version 1 had entries, attempts and decisions;
version 2 adds the profile an entry was validated with, reviewer names, and the append-only
triggers on decisions; version 3 adds the ledger (rows written before it are chained at
migration) and the triggers on every table; version 4 adds reviewer accounts and the web server's
tables (:mod:`bioevidence.loop.accounts`) and ``decision_requests``, which makes a decision sent
twice (a double click, a retried request) one decision.

Several processes may write one queue at once (the CLI, ``bioevidence serve``): the file is in
WAL mode, every write is one ``BEGIN IMMEDIATE`` transaction behind a 30 s busy timeout, and a
decision is optimistic: the record is validated outside the write lock, and if another decision
on the same entry landed meanwhile it is computed again over it (:data:`DECIDE_RETRIES` times).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import BusyError, ConfigurationError, InputError
from ..gate.report import Report
from ..io import canonical_json
from . import account_ledger, ledger
from . import accounts as _accounts

__all__ = ["SCHEMA_VERSION", "Decided", "Entry", "ReviewQueue"]

DECISIONS = ("accept", "reject", "defer")

MIGRATIONS: tuple[str, ...] = (
    # version 1
    """
    CREATE TABLE schema_version (version INTEGER NOT NULL PRIMARY KEY, applied_at TEXT NOT NULL);
    CREATE TABLE entries (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        record_id TEXT,
        record_json TEXT NOT NULL,
        record_sha256 TEXT NOT NULL,
        report_json TEXT NOT NULL,
        profile_id TEXT NOT NULL,
        profile_sha256 TEXT NOT NULL,
        schema_sha256 TEXT NOT NULL,
        overall_status TEXT NOT NULL,
        reason TEXT NOT NULL,
        queued_at TEXT NOT NULL
    );
    CREATE TABLE attempts (
        entry_id INTEGER NOT NULL REFERENCES entries(id),
        round INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        feedback_json TEXT NOT NULL,
        record_sha256 TEXT,
        report_json TEXT,
        PRIMARY KEY (entry_id, round)
    );
    CREATE TABLE decisions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        entry_id INTEGER NOT NULL REFERENCES entries(id),
        decision TEXT NOT NULL CHECK (decision IN ('accept', 'reject', 'defer')),
        reviewer_id TEXT NOT NULL,
        rationale TEXT NOT NULL,
        uses_json TEXT NOT NULL,
        decided_at TEXT NOT NULL,
        record_sha256_before TEXT NOT NULL,
        record_json_after TEXT NOT NULL,
        record_sha256_after TEXT NOT NULL,
        report_json_after TEXT NOT NULL,
        overall_status_after TEXT NOT NULL
    );
    CREATE INDEX decisions_by_entry ON decisions(entry_id);
    """,
    # version 2
    """
    ALTER TABLE entries ADD COLUMN profile TEXT;
    ALTER TABLE decisions ADD COLUMN reviewer_name TEXT;
    CREATE TRIGGER decisions_append_only_update BEFORE UPDATE ON decisions
        BEGIN SELECT RAISE(ABORT, 'decisions are append-only'); END;
    CREATE TRIGGER decisions_append_only_delete BEFORE DELETE ON decisions
        BEGIN SELECT RAISE(ABORT, 'decisions are append-only'); END;
    """,
    # version 3
    ledger.MIGRATION,
    # version 4
    _accounts.MIGRATION,
    # version 5: account events chained too (loop/account_ledger.py)
    account_ledger.MIGRATION,
)
SCHEMA_VERSION = len(MIGRATIONS)
AFTER_MIGRATION = {3: ledger.backfill, 5: account_ledger.backfill}  # version -> Python step, same transaction
DECIDE_RETRIES = 20
REQUEST_ID_CHARS = 200


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _sha(value: Any) -> str:
    return hashlib.sha256(canonical_json(value)).hexdigest()


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True)
class Entry:
    """A queued record: the current record and report (after any decisions) and the history."""

    id: int
    record_id: str | None
    reason: str
    queued_at: str
    profile: str | None
    record: dict[str, Any]
    report: Report
    original_record: dict[str, Any]
    original_report: Report
    hashes: dict[str, str]
    attempts: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def state(self) -> str:
        """``open`` until a person decides, then the latest decision."""
        return self.decisions[-1]["decision"] if self.decisions else "open"

    @property
    def overall_status(self) -> str:
        return self.report.overall_status

    @property
    def reason_codes(self) -> list[str]:
        return self.report.reason_codes()

    def to_dict(self, *, full: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "record_id": self.record_id, "state": self.state,
                               "overall_status": self.overall_status, "reason": self.reason,
                               "reason_codes": self.reason_codes, "queued_at": self.queued_at,
                               "profile": self.profile, "hashes": dict(self.hashes)}
        if full:
            out.update(record=self.record, report=self.report.to_dict(), original_record=self.original_record,
                       original_report=self.original_report.to_dict(), attempts=self.attempts,
                       decisions=self.decisions)
        return out


@dataclass(frozen=True)
class Decided:
    """The outcome of a decision: the record with the human adjudication, and its new report."""

    decision_id: int
    record: dict[str, Any]
    report: Report
    replayed: bool = False  # the same request_id was decided before: this is that decision


def create_private(path: Path) -> None:
    """Create an absent queue file readable by its owner only (0600); SQLite gives its ``-wal`` and
    ``-shm`` files the same mode. The queue holds records, notes and reviewers' password hashes."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return
    except OSError:
        return  # the connect below reports what is wrong with the path


def wide_modes(path: Path) -> list[str]:
    """One warning per queue file (the database, its ``-wal`` and ``-shm``) that others may read or write."""
    found = []
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            mode = file.stat().st_mode & 0o777
        except OSError:
            continue
        if mode & 0o077:
            found.append(f"{file} is readable or writable by others (mode {mode:04o}); it holds records and "
                         f"password hashes: chmod 600 {file}")
    return found


class ReviewQueue:
    """A review queue in a SQLite file (created, or migrated to :data:`SCHEMA_VERSION`, on open)."""

    def __init__(self, path: Path | str, *, clock: Callable[[], str] = _now, verify: bool = True) -> None:
        self.path = Path(path)
        self.clock = clock
        create_private(self.path)
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA foreign_keys = ON")
            self.db.execute("PRAGMA busy_timeout = 30000")
            if str(self.db.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                self.db.execute("PRAGMA journal_mode = WAL")  # readers never block the writer
            self.migrate()
            state = self.verify() if verify else None
        except sqlite3.DatabaseError as exc:
            self.db.close()
            raise InputError(f"{self.path} is not a review queue database ({exc}); pass another --queue file",
                             file=str(self.path)) from exc
        if state is not None and not state.intact:
            self.db.close()
            more = f" (and {len(state.problems) - 1} more)" if len(state.problems) > 1 else ""
            raise InputError(f"the review queue was altered outside bioevidence: {state.problems[0]}{more}; "
                             "restore it from a backup (`bioevidence review verify` lists every problem)",
                             file=str(self.path), problem="tampered")

    # -- lifecycle --------------------------------------------------------------------------------
    def __enter__(self) -> ReviewQueue:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    @property
    def version(self) -> int:
        has = self.db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='schema_version'").fetchone()
        if has is None:
            tables = self.db.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
            if tables:
                raise InputError(f"{self.path} is a SQLite file but not a review queue; pass another --queue file",
                                 file=str(self.path))
            return 0
        row = self.db.execute("SELECT max(version) FROM schema_version").fetchone()
        return int(row[0] or 0)

    def migrate(self) -> int:
        """Apply the missing migrations in one transaction; returns the version."""
        current = self.version
        if current > SCHEMA_VERSION:
            raise ConfigurationError(f"{self.path} has review queue schema {current}, newer than this bioevidence "
                                     f"({SCHEMA_VERSION}); upgrade bioevidence")
        if current == SCHEMA_VERSION:
            return current
        self.db.execute("BEGIN IMMEDIATE")
        try:
            current = self.version  # another process may have migrated while this one waited for the lock
            for version in range(current + 1, SCHEMA_VERSION + 1):
                for statement in _statements(MIGRATIONS[version - 1]):
                    self.db.execute(statement)
                if version in AFTER_MIGRATION:
                    AFTER_MIGRATION[version](self.db)
                self.db.execute("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
                                (version, self.clock()))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return SCHEMA_VERSION

    # -- writing ----------------------------------------------------------------------------------
    def add(self, record: dict[str, Any], report: Report, *, reason: str, attempts: Sequence[Any] = (),
            profile: str | None = None) -> int:
        """Queue ``record`` (with its ``report``) for a person; returns the entry id.

        ``attempts`` is the feedback history (``Attempt`` objects from :func:`revise`, or dicts
        with ``round``, ``outcome``, ``feedback`` and optionally ``record``/``report``).
        """
        if not isinstance(record, dict):
            raise InputError("only a record (a JSON object) can be queued for review")
        self.db.execute("BEGIN IMMEDIATE")
        try:
            cursor = self.db.execute(
                "INSERT INTO entries (record_id, record_json, record_sha256, report_json, profile_id, profile_sha256,"
                " schema_sha256, overall_status, reason, queued_at, profile) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (record.get("record_id") if isinstance(record.get("record_id"), str) else None, _dumps(record),
                 _sha(record), report.to_json(indent=None), report.profile_id, report.profile_sha256,
                 report.schema_sha256, report.overall_status, reason, self.clock(), profile))
            entry = int(cursor.lastrowid or 0)
            for attempt in attempts:
                a = attempt.to_dict() if hasattr(attempt, "to_dict") else dict(attempt)
                rec, rep = a.get("record"), a.get("report")
                self.db.execute("INSERT INTO attempts (entry_id, round, outcome, feedback_json, record_sha256,"
                                " report_json) VALUES (?,?,?,?,?,?)",
                                (entry, int(a["round"]), str(a["outcome"]), _dumps(list(a.get("feedback") or [])),
                                 _sha(rec) if rec is not None else None,
                                 _dumps(rep) if rep is not None else None))
            ledger.append(self.db, "entry", entry)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return entry

    def add_attempts(self, attempts: Sequence[Any], *, profile: str | None = None) -> int | None:
        """Queue the last attempt of a :func:`revise` run when it goes to a person; else ``None``."""
        if not attempts or not attempts[-1].to_person:
            return None
        last = attempts[-1]
        return self.add(last.record, last.report, reason=f"{last.outcome}: {last.reason}", attempts=attempts,
                        profile=profile)

    def decide(self, entry_id: int, decision: str, *, reviewer: str, rationale: str, validator: Any,
               uses: Sequence[str] | None = None, name: str | None = None, request_id: str | None = None,
               account: str | None = None) -> Decided:
        """Append a human decision, add it to the record as an adjudication and validate again.

        ``request_id`` (the web form's one-time token) makes the call idempotent: sending it again
        returns the decision it made (``replayed=True``) instead of appending a second one.
        """
        if decision not in DECISIONS:
            raise ConfigurationError(f"decision {decision!r} must be one of {', '.join(DECISIONS)}")
        if not reviewer.strip() or not rationale.strip():
            raise ConfigurationError("a decision needs a reviewer id and a rationale")
        if request_id is not None and not 0 < len(request_id) <= REQUEST_ID_CHARS:
            raise ConfigurationError(f"a request id has 1-{REQUEST_ID_CHARS} characters")
        for _ in range(DECIDE_RETRIES):
            if request_id is not None and (done := self._replay(request_id, entry_id)) is not None:
                return done
            entry = self.get(entry_id)
            seen = entry.decisions[-1]["id"] if entry.decisions else 0
            record = entry.original_record
            requested = [u for u in record.get("requested_uses") or [] if isinstance(u, str)]
            chosen = list(dict.fromkeys(uses)) if uses else requested
            unknown = sorted(set(chosen) - set(requested))
            if unknown or not chosen:
                raise ConfigurationError(f"--use {', '.join(unknown) or '(none)'} is not a requested use of entry "
                                         f"{entry_id}; choose among {', '.join(requested)}")
            now = self.clock()
            latest: dict[str, dict[str, Any]] = {d["reviewer_id"]: d for d in entry.decisions}
            latest[reviewer] = {"decision": decision, "reviewer_id": reviewer, "reviewer_name": name,
                                "rationale": rationale, "uses": chosen, "decided_at": now}
            decided = _with_adjudications(record, list(latest.values()))
            report = validator.validate(decided)  # outside the write lock: other writers go on meanwhile
            self.db.execute("BEGIN IMMEDIATE")
            try:
                if request_id is not None and self._request(request_id) is not None:
                    self.db.execute("ROLLBACK")
                    continue  # the same request landed meanwhile: the next round replays it
                now_latest = self.db.execute("SELECT coalesce(max(id), 0) FROM decisions WHERE entry_id = ?",
                                             (entry_id,)).fetchone()[0]
                if int(now_latest) != seen:
                    self.db.execute("ROLLBACK")
                    continue  # another decision on this entry landed: decide again over it
                cursor = self.db.execute(
                    "INSERT INTO decisions (entry_id, decision, reviewer_id, rationale, uses_json, decided_at,"
                    " record_sha256_before, record_json_after, record_sha256_after, report_json_after,"
                    " overall_status_after, reviewer_name) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (entry_id, decision, reviewer, rationale, _dumps(chosen), now, _sha(entry.record),
                     _dumps(decided), _sha(decided), report.to_json(indent=None), report.overall_status, name))
                decision_id = int(cursor.lastrowid or 0)
                ledger.append(self.db, "decision", decision_id)
                if request_id is not None:
                    self.db.execute("INSERT INTO decision_requests (request_id, decision_id, entry_id, account)"
                                    " VALUES (?,?,?,?)", (request_id, decision_id, entry_id, account or reviewer))
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            return Decided(decision_id, decided, report)
        raise BusyError(f"entry {entry_id} kept changing while the decision was made ({DECIDE_RETRIES} tries); "
                        "try again", retryable=True)

    def _request(self, request_id: str) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.db.execute("SELECT * FROM decision_requests WHERE request_id = ?",
                                                  (request_id,)).fetchone()
        return row

    def _replay(self, request_id: str, entry_id: int) -> Decided | None:
        row = self._request(request_id)
        if row is None:
            return None
        if int(row["entry_id"]) != entry_id:
            raise ConfigurationError(f"request {request_id!r} decided entry {row['entry_id']}, not {entry_id}; "
                                     "reload the page and decide again")
        stored = self.db.execute("SELECT record_json_after, report_json_after FROM decisions WHERE id = ?",
                                 (row["decision_id"],)).fetchone()
        return Decided(int(row["decision_id"]), json.loads(stored["record_json_after"]),
                       Report.from_dict(json.loads(stored["report_json_after"])), replayed=True)

    @property
    def accounts(self) -> _accounts.Accounts:
        """The reviewer accounts stored in this queue (for ``bioevidence serve``)."""
        return _accounts.Accounts(self.db, self.clock)

    # -- reading ----------------------------------------------------------------------------------
    def verify(self, *, expect_head: str | None = None) -> ledger.LedgerState:
        """Check the ledger chain and every row against it (see :mod:`bioevidence.loop.ledger`), and that
        the append-only triggers of the accounts and decision requests are in place."""
        with ledger.snapshot(self.db):
            state = ledger.verify(self.db, expect_head=expect_head)
            names = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
            accounts = account_ledger.verify(self.db)
        missing = [f"the append-only trigger {t} is missing (dropped outside bioevidence)"
                   for t in _accounts.TRIGGERS if t not in names]
        extra = [*missing, *accounts]
        return ledger.LedgerState(state.head, state.rows, [*state.problems, *extra]) if extra else state

    def get(self, entry_id: int) -> Entry:
        row = self.db.execute("SELECT * FROM entries WHERE id = ?", (entry_id,)).fetchone()
        if row is None:
            raise InputError(f"no entry {entry_id} in the review queue {self.path}; see `bioevidence review list`")
        attempts = [{"round": a["round"], "outcome": a["outcome"], "feedback": json.loads(a["feedback_json"]),
                     "record_sha256": a["record_sha256"]}
                    for a in self.db.execute("SELECT * FROM attempts WHERE entry_id = ? ORDER BY round", (entry_id,))]
        decisions = [dict(d) for d in self.db.execute("SELECT * FROM decisions WHERE entry_id = ? ORDER BY id",
                                                      (entry_id,))]
        original_record = json.loads(row["record_json"])
        original_report = Report.from_dict(json.loads(row["report_json"]))
        record, report = original_record, original_report
        if decisions:
            record = json.loads(decisions[-1]["record_json_after"])
            report = Report.from_dict(json.loads(decisions[-1]["report_json_after"]))
        public = [{"id": d["id"], "decision": d["decision"], "reviewer_id": d["reviewer_id"],
                   "reviewer_name": d["reviewer_name"], "rationale": d["rationale"],
                   "uses": json.loads(d["uses_json"]), "decided_at": d["decided_at"],
                   "record_sha256_before": d["record_sha256_before"], "record_sha256_after": d["record_sha256_after"],
                   "overall_status_after": d["overall_status_after"]} for d in decisions]
        return Entry(id=row["id"], record_id=row["record_id"], reason=row["reason"], queued_at=row["queued_at"],
                     profile=row["profile"], record=record, report=report, original_record=original_record,
                     original_report=original_report,
                     hashes={"record_sha256": row["record_sha256"], "profile_sha256": row["profile_sha256"],
                             "schema_sha256": row["schema_sha256"]},
                     attempts=attempts, decisions=public)

    def list(self, state: str = "open") -> list[Entry]:
        ids = [int(r[0]) for r in self.db.execute("SELECT id FROM entries ORDER BY id")]
        entries = [self.get(i) for i in ids]
        return entries if state == "all" else [e for e in entries if e.state == state]


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (``;`` ends one, except inside a trigger body)."""
    out: list[str] = []
    buffer = ""
    for part in script.split(";"):
        buffer += part
        if sqlite3.complete_statement(buffer + ";"):
            if buffer.strip():
                out.append(buffer.strip())
            buffer = ""
        else:
            buffer += ";"
    return out


def _with_adjudications(record: dict[str, Any], decisions: list[dict[str, Any]]) -> dict[str, Any]:
    """``record`` with one human adjudication per reviewer (their latest decision)."""
    out = json.loads(json.dumps(record))
    raw = out.get("statement")
    statement: dict[str, Any] = raw if isinstance(raw, dict) else {}
    rid = out.get("record_id") if isinstance(out.get("record_id"), str) else "record"
    rows = out.get("adjudications") if isinstance(out.get("adjudications"), list) else []
    taken = {r.get("id") for r in rows if isinstance(r, dict)}
    for d in decisions:
        reviewer: dict[str, Any] = {"id": d["reviewer_id"], "agent_type": "human"}
        if d.get("reviewer_name"):
            reviewer["name"] = d["reviewer_name"]
        base = f"{rid}/review/human-{hashlib.sha256(d['reviewer_id'].encode()).hexdigest()[:8]}"
        ident, n = base, 1
        while ident in taken:
            n += 1
            ident = f"{base}-{n}"
        taken.add(ident)
        uses = d["uses"] if isinstance(d["uses"], list) else json.loads(d["uses"])
        rows.append({"id": ident, "statement_id": statement.get("id"), "applies_to_uses": uses,
                     "decision": d["decision"], "reviewer": reviewer, "rationale": d["rationale"],
                     "decided_at": d["decided_at"]})
    out["adjudications"] = rows
    return out
