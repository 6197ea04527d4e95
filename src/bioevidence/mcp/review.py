"""Handing a record to a person: ``queue_for_review`` and ``review_status`` over the review queue.

The queue is the one ``bioevidence review`` and ``bioevidence serve`` use (``--queue FILE``), through
:class:`~bioevidence.loop.queue.ReviewQueue`'s public methods only. The server decides whether a
record goes to a person, never the caller: the loop is replayed over the agent's proposals (as
``revise_step`` does) and only an attempt that ``revise()`` sends to a person (judgment, policy,
cannot-confirm findings, or the rounds exhausted) is queued, with the loop's reason, the agent's
reasons and the whole feedback history. ``review_status`` reads an entry and its decisions, and can
wait a little for one, so an agent loop can hold until a curator decides.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..errors import InputError, safe_message
from ..io import MAX_BYTES, canonical_json
from . import views
from .services import Services
from .tools import checked, replay, report_view

POLL_SECONDS = 0.5


def _asks(record: dict[str, Any], report: Any) -> str:
    """What the reviewer is asked to decide, in one line."""
    uses = [u for u in record.get("requested_uses") or [] if isinstance(u, str)]
    blocked = sorted({u.use for u in report.use_decisions if u.admission_status != "admitted"})
    codes = ", ".join(report.reason_codes()) or "none"
    return (f"accept or reject the record for {', '.join(blocked or uses) or 'its uses'} "
            f"(the gate could not admit it: {codes})")


def _profile_for_queue(services: Services, profile: str | None) -> str | None:
    """The profile a curator's ``bioevidence review decide`` validates the entry with: a built-in name, or
    the file of a profile the server was started with (``None``: the record's ``profile_id``)."""
    from ..gate.profiles import builtin_profiles

    if profile is None and not services.config.profiles:
        return None
    name = profile if profile is not None else services.config.profiles[0]
    if name in builtin_profiles():
        return name
    chosen = services.profile(profile)
    return str(Path(chosen.path).resolve()) if chosen.path is not None else chosen.id


def queue_for_review(services: Services, record: dict[str, Any], reasons: list[str],
                     previous: list[dict[str, Any]] | None = None, profile: str | None = None,
                     rounds: int | None = None) -> dict[str, Any]:
    """Queue the record the loop sends to a person (see module docstring); the new entry."""
    from ..loop.queue import ReviewQueue

    path = services.queue_path()
    for proposal in [*(previous or []), record]:
        if len(canonical_json(checked(proposal, "proposal"))) > MAX_BYTES:
            raise InputError(f"a proposal is larger than a record file may be ({MAX_BYTES // 1_000_000} MB)")
    attempts = replay(services, record, previous, profile, rounds)
    last = attempts[-1]
    if not last.to_person:
        why = {"admitted": "the gate admitted it: there is nothing for a person to decide",
               "feedback": "its findings are fixable: send the revision through revise_step (the feedback lines "
                           "say what to change); it goes to a person if they cannot be fixed"}
        raise InputError(f"the loop does not send this record to a person (round {last.round}: {last.outcome}, "
                         f"{last.reason}); {why.get(last.outcome, 'nothing was queued')}")
    given = [safe_message(r, 500) for r in reasons if r.strip()]
    reason = f"{last.outcome}: {last.reason}" + (f"; the agent: {'; '.join(given)}" if given else "")
    with ReviewQueue(path) as queue:
        entry = queue.add(last.record, last.report, reason=reason, attempts=attempts,
                          profile=_profile_for_queue(services, profile))
    return {"entry": entry, "record_id": last.record.get("record_id"), "state": "open", "reason": reason,
            "asks": _asks(last.record, last.report), "overall_status": last.report.overall_status,
            "reason_codes": last.report.reason_codes(), "routes": list(last.routes), "rounds": len(attempts)}


def review_status(services: Services, entry: int, wait_seconds: float = 0, details: bool = False) -> dict[str, Any]:
    """An entry's state and decisions; with ``wait_seconds``, wait up to that long for a first decision."""
    from ..loop.queue import ReviewQueue

    path = services.queue_path()
    if not path.exists():
        raise InputError(f"no entry {entry}: the review queue {path} is empty (queue_for_review adds entries)")
    deadline = time.monotonic() + wait_seconds
    with ReviewQueue(path) as queue:
        found = queue.get(entry)
        while not found.decisions and time.monotonic() < deadline:
            time.sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))
            found = queue.get(entry)
    out: dict[str, Any] = {
        "entry": found.id, "record_id": found.record_id, "state": found.state, "decided": bool(found.decisions),
        "overall_status": found.overall_status, "admitted": found.report.admitted, "reason": found.reason,
        "reason_codes": found.reason_codes, "queued_at": found.queued_at,
        "decisions": [{key: d[key] for key in ("id", "decision", "reviewer_id", "reviewer_name", "rationale", "uses",
                                                "decided_at", "overall_status_after") if d.get(key) is not None}
                      for d in found.decisions]}
    if details:
        out.update(record=found.record, validation=views.validation(report_view(found.report), True))
    return out
