"""Tamper evidence for the review queue: a SHA-256 hash chain over every entry and decision.

Append-only triggers stop ``UPDATE``, ``DELETE`` and ``INSERT OR REPLACE`` from any SQLite
client, but anyone who can write the file can drop a trigger. So each entry (with its
attempts) and each decision also gets one row in the ``ledger`` table, in the order written::

    row_sha256   = SHA-256 of the canonical JSON of the row's fixed columns (and an entry's attempts)
    chain_sha256 = SHA-256 of "<previous chain_sha256> <kind> <id> <row_sha256>"   (the first: of 64 zeros)

:func:`verify` recomputes everything and names each problem: a row altered, deleted or added
outside bioevidence, a broken link, a missing trigger. The queue runs it on open and refuses an
altered file; ``bioevidence review verify`` lists every problem and prints the head of the
chain. Someone able to rewrite the whole file could recompute the chain too; a head written
down elsewhere (a CI log, a commit) catches that: ``review verify --expect-head HASH`` checks
that the chain still passes through it.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..io import canonical_json

GENESIS = "0" * 64
KINDS = ("entry", "decision")

# The columns each digest covers, fixed: a later migration that adds a column must not change
# the digests of rows written before it.
ENTRY_COLUMNS = ("id", "record_id", "record_json", "record_sha256", "report_json", "profile_id", "profile_sha256",
                 "schema_sha256", "overall_status", "reason", "queued_at", "profile")
ATTEMPT_COLUMNS = ("entry_id", "round", "outcome", "feedback_json", "record_sha256", "report_json")
DECISION_COLUMNS = ("id", "entry_id", "decision", "reviewer_id", "rationale", "uses_json", "decided_at",
                    "record_sha256_before", "record_json_after", "record_sha256_after", "report_json_after",
                    "overall_status_after", "reviewer_name")


def append_only(table: str, key: str) -> str:
    """Triggers that make ``table`` append-only, ``INSERT OR REPLACE`` on ``key`` included."""
    return f"""
    CREATE TRIGGER {table}_append_only_update BEFORE UPDATE ON {table}
        BEGIN SELECT RAISE(ABORT, '{table} are append-only'); END;
    CREATE TRIGGER {table}_append_only_delete BEFORE DELETE ON {table}
        BEGIN SELECT RAISE(ABORT, '{table} are append-only'); END;
    CREATE TRIGGER {table}_append_only_replace BEFORE INSERT ON {table}
        WHEN EXISTS (SELECT 1 FROM {table} WHERE {key})
        BEGIN SELECT RAISE(ABORT, '{table} are append-only (a row with this key exists)'); END;
    """


MIGRATION = (
    """
    CREATE TABLE ledger (
        seq INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('entry', 'decision')),
        ref_id INTEGER NOT NULL,
        row_sha256 TEXT NOT NULL,
        chain_sha256 TEXT NOT NULL,
        UNIQUE (kind, ref_id)
    );
    """
    + append_only("entries", "id = NEW.id")
    + append_only("attempts", "entry_id = NEW.entry_id AND round = NEW.round")
    + append_only("ledger", "seq = NEW.seq OR (kind = NEW.kind AND ref_id = NEW.ref_id)")
    + """
    CREATE TRIGGER decisions_append_only_replace BEFORE INSERT ON decisions
        WHEN EXISTS (SELECT 1 FROM decisions WHERE id = NEW.id)
        BEGIN SELECT RAISE(ABORT, 'decisions are append-only (a row with this key exists)'); END;
    """
)
TRIGGERS = tuple(f"{table}_append_only_{what}" for table in ("entries", "attempts", "decisions", "ledger")
                 for what in ("update", "delete", "replace"))


def _sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def _rows(db: sqlite3.Connection, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
    cursor = db.cursor()
    cursor.row_factory = sqlite3.Row
    return cursor.execute(sql, params).fetchall()


def _pick(row: sqlite3.Row | None, columns: Sequence[str]) -> dict[str, Any] | None:
    if row is None:
        return None
    keys = row.keys()
    return {c: row[c] if c in keys else None for c in columns}


def row_digest(db: sqlite3.Connection, kind: str, ref: int) -> str | None:
    """The digest of entry or decision ``ref`` as stored now, ``None`` when it is gone."""
    if kind == "entry":
        entry = _pick(next(iter(_rows(db, "SELECT * FROM entries WHERE id = ?", (ref,))), None), ENTRY_COLUMNS)
        if entry is None:
            return None
        attempts = [_pick(a, ATTEMPT_COLUMNS) for a in
                    _rows(db, "SELECT * FROM attempts WHERE entry_id = ? ORDER BY round", (ref,))]
        return _sha(canonical_json({"entry": entry, "attempts": attempts}))
    decision = _pick(next(iter(_rows(db, "SELECT * FROM decisions WHERE id = ?", (ref,))), None), DECISION_COLUMNS)
    return None if decision is None else _sha(canonical_json({"decision": decision}))


def link(previous: str, kind: str, ref: int, row_sha256: str) -> str:
    return _sha(f"{previous} {kind} {ref} {row_sha256}")


def head(db: sqlite3.Connection) -> str:
    row = db.execute("SELECT chain_sha256 FROM ledger ORDER BY seq DESC LIMIT 1").fetchone()
    return str(row[0]) if row is not None else GENESIS


def append(db: sqlite3.Connection, kind: str, ref: int) -> str:
    """Chain entry or decision ``ref`` (call inside the transaction that wrote it); returns the new head."""
    digest = row_digest(db, kind, ref)
    assert digest is not None, f"{kind} {ref} must be written before it is chained"
    chained = link(head(db), kind, ref, digest)
    db.execute("INSERT INTO ledger (kind, ref_id, row_sha256, chain_sha256) VALUES (?,?,?,?)",
               (kind, ref, digest, chained))
    return chained


def backfill(db: sqlite3.Connection) -> None:
    """Chain the rows of a queue written before the ledger existed (entries, then decisions, by id)."""
    for kind, table in (("entry", "entries"), ("decision", "decisions")):
        for (ref,) in db.execute(f"SELECT id FROM {table} ORDER BY id").fetchall():
            append(db, kind, int(ref))


@dataclass(frozen=True)
class LedgerState:
    """What :func:`verify` found: the head, how many rows are chained, and every problem."""

    head: str
    rows: int
    problems: list[str] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.problems


@contextmanager
def snapshot(db: sqlite3.Connection) -> Iterator[None]:
    """One read transaction around several reads, so they see one state of the file: in autocommit
    each SELECT is its own snapshot, and a writer committing between reading the ledger and reading
    the entries made a whole queue look tampered with ("entry 8 is not in the ledger"). Inside a
    transaction the caller already has, it adds nothing."""
    if db.in_transaction:
        yield
        return
    db.execute("BEGIN")  # deferred: the first read fixes the snapshot (WAL), no writer is blocked
    try:
        yield
    finally:
        db.execute("COMMIT")


def verify(db: sqlite3.Connection, *, expect_head: str | None = None) -> LedgerState:
    """Recompute the chain and every row digest, over one snapshot; see the module docstring."""
    with snapshot(db):
        return _verify(db, expect_head)


def _verify(db: sqlite3.Connection, expect_head: str | None) -> LedgerState:
    problems: list[str] = []
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    problems += [f"the append-only trigger {t} is missing (dropped outside bioevidence)"
                 for t in TRIGGERS if t not in names]
    previous, chain = GENESIS, set()
    seen: dict[str, set[int]] = {kind: set() for kind in KINDS}
    rows = _rows(db, "SELECT seq, kind, ref_id, row_sha256, chain_sha256 FROM ledger ORDER BY seq")
    for number, row in enumerate(rows, start=1):
        kind, ref = str(row["kind"]), int(row["ref_id"])
        name = f"{kind} {ref}"
        if row["seq"] != number:
            problems.append(f"ledger row {number} is missing (the next is {row['seq']}): rows were deleted")
        if link(previous, kind, ref, row["row_sha256"]) != row["chain_sha256"]:
            problems.append(f"the chain breaks at ledger row {row['seq']} ({name}): the ledger was edited")
        current = row_digest(db, kind, ref)
        if current is None:
            problems.append(f"{name} is in the ledger but not in the queue: it was deleted")
        elif current != row["row_sha256"]:
            problems.append(f"{name} differs from what was written (its ledger digest): it was altered")
        seen.setdefault(kind, set()).add(ref)
        chain.add(row["chain_sha256"])
        previous = row["chain_sha256"]
    for kind, table in (("entry", "entries"), ("decision", "decisions")):
        for (ref,) in db.execute(f"SELECT id FROM {table} ORDER BY id"):
            if int(ref) not in seen[kind]:
                problems.append(f"{kind} {ref} is not in the ledger: it was added outside bioevidence")
    if expect_head is not None and expect_head not in chain:
        problems.append(f"the chain does not pass through the expected head {expect_head}: the history was "
                        "rewritten (or that head belongs to another queue)")
    return LedgerState(previous, len(rows), problems)
