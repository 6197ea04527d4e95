"""A filterable listing of a review queue, kept current by reading only what was appended, and
the plain-text view of one entry (:func:`render_entry`).

The queue is append-only, so a listing never has to look at a row twice: :meth:`QueueListing.refresh`
reads the entries and decisions with ids above the last ones it saw and folds them into light
:class:`Summary` rows (the claim, the sources, the codes that sent the record to a person and the
codes of its report now, its state and status). Another process deciding in the same file is
seen on the next refresh. :meth:`QueueListing.query` filters by state, rule code, profile, source
and free text; :meth:`QueueListing.decisions` gives every decision with what it was about, for audits.

Thread-safe: one lock guards the folded state; callers pass their own connection.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import escape_text

if TYPE_CHECKING:  # pragma: no cover
    from .queue import Entry

__all__ = ["STATES", "DecisionFact", "Page", "QueueListing", "Summary", "render_entry"]

STATES = ("open", "accept", "reject", "defer", "all")


@dataclass(frozen=True, slots=True)
class Summary:
    """One queued record as a listing shows it."""

    id: int
    record_id: str | None
    queued_at: str
    profile: str
    reason: str
    claim: str
    uses: tuple[str, ...]
    sources: tuple[str, ...]  # each source's uri (or id) and title, for display and the source filter
    queued_codes: tuple[str, ...]  # the codes that sent it to a person
    codes: tuple[str, ...]  # the codes of its report now
    status: str  # the overall status now
    record_sha256: str  # of the record now (after decisions)
    profile_sha256: str
    use_status: tuple[tuple[str, str], ...]  # (use, admission status now)
    state: str = "open"  # open until a person decides, then the latest decision
    decisions: int = 0
    reviewers: tuple[str, ...] = ()
    decided_at: str | None = None
    haystack: str = field(default="", repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "record_id": self.record_id, "queued_at": self.queued_at, "profile": self.profile,
                "reason": self.reason, "claim": self.claim, "uses": list(self.uses), "sources": list(self.sources),
                "queued_codes": list(self.queued_codes), "codes": list(self.codes), "status": self.status,
                "record_sha256": self.record_sha256, "use_status": dict(self.use_status),
                "state": self.state, "decisions": self.decisions, "reviewers": list(self.reviewers),
                "decided_at": self.decided_at}


@dataclass(frozen=True, slots=True)
class DecisionFact:
    """One decision as audits count it."""

    id: int
    entry_id: int
    decision: str
    reviewer_id: str
    decided_at: str
    uses: tuple[str, ...]
    queued_codes: tuple[str, ...]
    status_after: str


@dataclass(frozen=True, slots=True)
class Page:
    rows: list[Summary]
    total: int
    offset: int
    limit: int


def _codes(report: dict[str, Any]) -> tuple[str, ...]:
    return tuple(sorted({f["rule_id"] for f in report.get("findings") or []
                         if isinstance(f, dict) and f.get("severity") in ("error", "review")}))


def _use_status(report: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple((str(d.get("use")), str(d.get("admission_status"))) for d in report.get("use_decisions") or []
                 if isinstance(d, dict))


def _label(entity: Any) -> str:
    if not isinstance(entity, dict):
        return "?"
    label, ident = entity.get("label"), entity.get("id")
    return f"{label} ({ident})" if label and ident else str(label or ident or "?")


def _summary(row: sqlite3.Row) -> Summary:
    record = orjson.loads(row["record_json"])
    report = orjson.loads(row["report_json"])
    record = record if isinstance(record, dict) else {}
    raw = record.get("statement")
    statement: dict[str, Any] = raw if isinstance(raw, dict) else {}
    claim = f"{_label(statement.get('subject'))} {statement.get('predicate') or '?'} {_label(statement.get('object'))}"
    sources = []
    for source in record.get("source_artifacts") or []:
        if isinstance(source, dict):
            name = source.get("uri") or source.get("id") or "?"
            title = source.get("title")
            sources.append(f"{name}: {title}" if title else str(name))
    uses = tuple(u for u in record.get("requested_uses") or [] if isinstance(u, str))
    codes = _codes(report)
    profile = row["profile"] or report.get("profile_id") or str(record.get("profile_id") or "")
    record_id = row["record_id"]
    haystack = " ".join([str(record_id or ""), claim, *sources]).casefold()
    return Summary(int(row["id"]), record_id, row["queued_at"], profile, row["reason"], claim, uses, tuple(sources),
                   codes, codes, report.get("overall_status", row["overall_status"]), row["record_sha256"],
                   str(report.get("profile_sha256", "")), _use_status(report), haystack=haystack)


class QueueListing:
    """Summaries of every entry of one queue file, refreshed incrementally (see module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[int, Summary] = {}
        self._decisions: list[DecisionFact] = []
        self._latest: dict[tuple[int, str], str] = {}
        self._entry_seen = 0
        self._decision_seen = 0
        self._facets: dict[str, list[str]] | None = None  # derived, dropped whenever a row changes
        self._counts: dict[str, int] | None = None

    def refresh(self, db: sqlite3.Connection) -> None:
        """Fold in the entries and decisions appended since the last refresh (one read transaction)."""
        with self._lock:
            cursor = db.cursor()
            cursor.row_factory = sqlite3.Row
            seen = (self._entry_seen, self._decision_seen)
            in_transaction = db.in_transaction
            if not in_transaction:
                cursor.execute("BEGIN")  # one snapshot for both reads: no decision seen before its entry
            try:
                for row in cursor.execute("SELECT id, record_id, record_json, report_json, profile, reason, queued_at,"
                                          " overall_status, record_sha256 FROM entries WHERE id > ? ORDER BY id",
                                          (self._entry_seen,)).fetchall():
                    summary = _summary(row)
                    self._rows[summary.id] = summary
                    self._entry_seen = summary.id
                for row in cursor.execute("SELECT id, entry_id, decision, reviewer_id, decided_at, uses_json,"
                                          " report_json_after, overall_status_after, record_sha256_after FROM decisions"
                                          " WHERE id > ?"
                                          " ORDER BY id", (self._decision_seen,)).fetchall():
                    self._fold(row)
                    self._decision_seen = int(row["id"])
                if (self._entry_seen, self._decision_seen) != seen:
                    self._facets = self._counts = None
            finally:
                if not in_transaction:
                    cursor.execute("COMMIT")

    def _fold(self, row: sqlite3.Row) -> None:
        entry = int(row["entry_id"])
        current = self._rows.get(entry)
        if current is None:  # cannot happen in a verified queue; never invent an entry
            return
        reviewer = str(row["reviewer_id"])
        self._latest[(entry, reviewer)] = row["decision"]
        reviewers = tuple(dict.fromkeys([*current.reviewers, reviewer]))
        report = orjson.loads(row["report_json_after"])
        self._rows[entry] = replace(current, state=row["decision"], status=row["overall_status_after"],
                                    codes=_codes(report), decisions=current.decisions + 1, reviewers=reviewers,
                                    decided_at=row["decided_at"], record_sha256=row["record_sha256_after"],
                                    profile_sha256=str(report.get("profile_sha256", current.profile_sha256)),
                                    use_status=_use_status(report))
        uses = tuple(orjson.loads(row["uses_json"]))
        self._decisions.append(DecisionFact(int(row["id"]), entry, row["decision"], reviewer, row["decided_at"],
                                            uses, current.queued_codes, row["overall_status_after"]))

    # -- reading ----------------------------------------------------------------------------------
    def get(self, entry_id: int) -> Summary | None:
        with self._lock:
            return self._rows.get(entry_id)

    def facets(self) -> dict[str, list[str]]:
        """The values the filters can take: codes, profiles."""
        with self._lock:
            if self._facets is None:
                rows = self._rows.values()
                self._facets = {"codes": sorted({c for r in rows for c in (*r.queued_codes, *r.codes)}),
                                "profiles": sorted({r.profile for r in rows if r.profile})}
            return {k: list(v) for k, v in self._facets.items()}

    def counts(self) -> dict[str, int]:
        with self._lock:
            if self._counts is None:
                out = {state: 0 for state in STATES}
                for r in self._rows.values():
                    out[r.state] += 1
                out["all"] = len(self._rows)
                self._counts = out
            return dict(self._counts)

    def query(self, *, state: str = "open", code: str | None = None, profile: str | None = None,
              source: str | None = None, text: str | None = None, offset: int = 0, limit: int = 50) -> Page:
        """Entries in queue order, filtered: ``code`` among the codes that queued it or its codes now,
        ``source`` and ``text`` as case-insensitive substrings (of a source uri or title; of the record
        id, claim or sources)."""
        if state not in STATES:
            raise ValueError(f"state must be one of {', '.join(STATES)}")
        wanted_source = source.casefold() if source else None
        wanted_text = text.casefold() if text else None
        with self._lock:
            rows = list(self._rows.values())  # in id order: refresh reads rows in id order
        picked = [r for r in rows
                  if (state == "all" or r.state == state)
                  and (not code or code in r.queued_codes or code in r.codes)
                  and (not profile or r.profile == profile)
                  and (wanted_source is None or any(wanted_source in s.casefold() for s in r.sources))
                  and (wanted_text is None or wanted_text in r.haystack)]
        offset = max(0, offset)
        return Page(picked[offset:offset + limit], len(picked), offset, limit)

    def decisions(self) -> list[DecisionFact]:
        with self._lock:
            return list(self._decisions)

    def latest_by_reviewer(self) -> dict[tuple[int, str], str]:
        """(entry, reviewer) → that reviewer's latest decision on the entry."""
        with self._lock:
            return dict(self._latest)

    def summaries(self) -> list[Summary]:
        with self._lock:
            return list(self._rows.values())


def render_entry(entry: Entry) -> str:
    """A plain-text view of an entry for a reviewer (control and formatting characters escaped)."""
    raw = entry.record.get("statement")
    statement: dict[str, Any] = raw if isinstance(raw, dict) else {}

    def name(role: str) -> str:
        value = statement.get(role)
        e: dict[str, Any] = value if isinstance(value, dict) else {}
        return f"{e.get('label')} ({e.get('id')})"

    lines = [f"entry {entry.id}: {entry.record_id} -- {entry.state}, {entry.overall_status}",
             f"queued {entry.queued_at} because {entry.reason}",
             f"claim: {name('subject')} {statement.get('predicate')} {name('object')}",
             f"uses: {', '.join(str(u) for u in entry.record.get('requested_uses') or [])}", "", "evidence:"]
    items = {i.get("id"): i for i in entry.record.get("evidence_items") or [] if isinstance(i, dict)}
    for line in statement.get("evidence_lines") or []:
        for item_id in line.get("evidence_item_ids") or []:
            item = items.get(item_id, {})
            mark = " (verified)" if item_id in entry.report.verified else ""
            lines.append(f"  [{line.get('direction')}] {item.get('locator')}{mark}: {item.get('extracted_text', '')}")
    lines += ["", "findings:"]
    lines += [f"  {f.rule_id} {f.severity} {f.field_path}: {f.message}" for f in entry.report.findings] or ["  none"]
    if entry.attempts:
        lines += ["", "feedback history:"]
        for a in entry.attempts:
            lines.append(f"  round {a['round']}: {a['outcome']}")
            lines += [f"    - {text}" for text in a["feedback"]]
    if entry.decisions:
        lines += ["", "decisions:"]
        lines += [f"  {d['decided_at']} {d['reviewer_id']}: {d['decision']} ({', '.join(d['uses'])}) -- "
                  f"{d['rationale']}" for d in entry.decisions]
    # A queued record is hostile input too: no terminal escape or bidi control reaches the reviewer raw.
    return "\n".join(escape_text(line) for line in lines) + "\n"
