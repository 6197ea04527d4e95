"""Reviewer accounts in the tamper-evident ledger (issue 25, cause 9).

``account_events`` (who may sign in, with which role and password) had append-only triggers but no
chain: one SQL ``INSERT`` made a reviewer an admin or set an admin's password, the running server
honoured it and ``review verify`` said ok. Every account event now gets a row in ``account_ledger``,
chained like the entries and decisions of :mod:`bioevidence.loop.ledger`::

    row_sha256   = SHA-256 of the canonical JSON of the event's columns
    chain_sha256 = SHA-256 of "<previous chain_sha256> account <event id> <row_sha256>"   (first: 64 zeros)

Two readers use it: :func:`verify` (``review verify`` and opening the queue list every problem), and
:func:`trusted` (every account lookup: an account whose events are not all chained as written is
not an account, so a forged admin cannot sign in to a running server). Queues written before
schema 5 have their existing events chained when they migrate (the history up to then is trusted,
as the entries were when the ledger arrived).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from typing import Any

from ..io import canonical_json
from .ledger import GENESIS, append_only

__all__ = ["MIGRATION", "TRIGGERS", "append", "backfill", "trusted", "verify"]

COLUMNS = ("id", "name", "event", "role", "reviewer_id", "full_name", "password_hash", "at")
MIGRATION = (
    """
    CREATE TABLE account_ledger (
        seq INTEGER PRIMARY KEY,
        event_id INTEGER NOT NULL UNIQUE,
        row_sha256 TEXT NOT NULL,
        chain_sha256 TEXT NOT NULL
    );
    """
    + append_only("account_ledger", "seq = NEW.seq OR event_id = NEW.event_id")
)
TRIGGERS = tuple(f"account_ledger_append_only_{what}" for what in ("update", "delete", "replace"))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def digest(row: sqlite3.Row | dict[str, Any]) -> str:
    return _sha(canonical_json({"account_event": {c: row[c] for c in COLUMNS}}).decode())


def _link(previous: str, event_id: int, row_sha256: str) -> str:
    return _sha(f"{previous} account {event_id} {row_sha256}")


def _rows(db: sqlite3.Connection, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
    cursor = db.cursor()
    cursor.row_factory = sqlite3.Row
    return cursor.execute(sql, params).fetchall()


def append(db: sqlite3.Connection, event_id: int) -> None:
    """Chain account event ``event_id`` (inside the transaction that wrote it)."""
    row = _rows(db, "SELECT * FROM account_events WHERE id = ?", (event_id,))[0]
    last = db.execute("SELECT chain_sha256 FROM account_ledger ORDER BY seq DESC LIMIT 1").fetchone()
    row_sha = digest(row)
    db.execute("INSERT INTO account_ledger (event_id, row_sha256, chain_sha256) VALUES (?,?,?)",
               (event_id, row_sha, _link(last[0] if last else GENESIS, event_id, row_sha)))


def backfill(db: sqlite3.Connection) -> None:
    """Chain the account events of a queue written before schema 5, by id."""
    for (event_id,) in db.execute("SELECT id FROM account_events ORDER BY id").fetchall():
        append(db, int(event_id))


def _chain(db: sqlite3.Connection) -> tuple[list[str], dict[int, str]]:
    """Problems of the chain itself, and each chained event's recorded digest (links checked)."""
    problems: list[str] = []
    recorded: dict[int, str] = {}
    previous = GENESIS
    for number, row in enumerate(_rows(db, "SELECT * FROM account_ledger ORDER BY seq"), start=1):
        event_id = int(row["event_id"])
        if row["seq"] != number:
            problems.append(f"account ledger row {number} is missing (the next is {row['seq']}): rows were deleted")
        if _link(previous, event_id, row["row_sha256"]) != row["chain_sha256"]:
            problems.append(f"the account chain breaks at row {row['seq']} (event {event_id}): it was edited")
        recorded[event_id] = str(row["row_sha256"])
        previous = row["chain_sha256"]
    return problems, recorded


def verify(db: sqlite3.Connection) -> list[str]:
    """Every problem of the account events and their chain (an empty list when intact)."""
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    problems = [f"the append-only trigger {t} is missing (dropped outside bioevidence)"
                for t in TRIGGERS if t not in names]
    chain, recorded = _chain(db)
    problems += chain
    events = {int(r["id"]): r for r in _rows(db, "SELECT * FROM account_events ORDER BY id")}
    for event_id, row in events.items():
        if event_id not in recorded:
            problems.append(f"account event {event_id} ({row['event']} {row['name']}) is not in the ledger: it was "
                            "added outside bioevidence")
        elif digest(row) != recorded[event_id]:
            problems.append(f"account event {event_id} ({row['name']}) differs from what was written: it was altered")
    problems += [f"account event {e} is in the ledger but not in the queue: it was deleted"
                 for e in recorded if e not in events]
    return problems


def trusted(db: sqlite3.Connection, rows: Sequence[sqlite3.Row]) -> bool:
    """Whether every one of an account's event ``rows`` is chained as written, in an intact chain."""
    if not rows:
        return True
    chain, recorded = _chain(db)
    return not chain and all(recorded.get(int(r["id"])) == digest(r) for r in rows)
