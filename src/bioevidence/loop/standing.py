"""Where a queued record stands for the person who reviews it, and what that person is asked to decide.

The gate's status of a record whose only blocking finding is BEV010 ("the use requires explicit
human acceptance, which is absent") is ``rejected``, exactly as for a misquote; but nothing is wrong
with such a record: it waits for a person. Its *standing* is ``awaiting_acceptance`` ("awaiting your
acceptance"); every other record stands where the gate put it (``admitted``, ``review_required``,
``rejected``). The queue page, the record page and ``bioevidence review list`` all say it from here,
so they never disagree. :func:`meaning` gives a rule code's one-line meaning from the rule catalogue,
and :func:`asked` the sentence that tells the reviewer what the decision is about.

Pure functions of a status and codes: nothing here changes what the gate decided.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["AWAITING", "LABELS", "asked", "blocking_codes", "label", "meaning", "meanings", "of_report", "reason_text",
           "standing"]

AWAITING = "awaiting_acceptance"
#: The code that only a person's acceptance clears.
ACCEPTANCE = "BEV010"
LABELS = {"admitted": "admitted", "review_required": "review required", "rejected": "rejected",
          AWAITING: "awaiting your acceptance"}
BLOCKING = ("error", "review")


def standing(status: str, codes: Iterable[str]) -> str:
    """``awaiting_acceptance`` when ``status`` is rejected and BEV010 is the only blocking code, else ``status``."""
    if status == "rejected" and set(codes) == {ACCEPTANCE}:
        return AWAITING
    return status


def blocking_codes(report: Any) -> list[str]:
    """The codes of a report's findings that decide a use (``error`` and ``review``), sorted."""
    return sorted({f.rule_id for f in report.findings if f.severity in BLOCKING})


def of_report(report: Any) -> str:
    return standing(report.overall_status, blocking_codes(report))


def label(value: str) -> str:
    """The words for a standing or status ("awaiting your acceptance", "review required")."""
    return LABELS.get(value, value.replace("_", " "))


@functools.lru_cache(maxsize=256)
def meaning(code: str) -> str:
    """The rule's one-line meaning from the catalogue (``bioevidence rules``); ``""`` for an unknown code."""
    from ..errors import BioevidenceError
    from ..gate.rules import rule

    try:
        return rule(code).message
    except (KeyError, BioevidenceError):
        return ""


def meanings(codes: Iterable[str]) -> dict[str, str]:
    return {code: meaning(code) for code in codes}


def reason_text(reason: str, status: str, codes: Iterable[str]) -> str:
    """Why an entry was queued, as a person reads it: a reason that starts with the gate's status at
    queue time (``rejected``, ``rejected: BEV010``, as ``review add`` writes it) says "awaiting
    acceptance" instead when BEV010 was all that blocked the record then."""
    if standing(status, codes) == AWAITING and (reason == status or reason.startswith(status + ":")):
        return "awaiting acceptance" + reason[len(status):]
    return reason


def _uses(uses: Sequence[str]) -> str:
    return ", ".join(uses) if uses else "the requested uses"


def asked(standing_now: str, state: str, codes: Sequence[str], uses: Sequence[str], reason: str = "") -> str:
    """One sentence saying what the reviewer of an entry is asked to decide.

    ``standing_now`` and ``codes`` describe the record now, ``state`` is the entry's latest decision
    (``open`` before any), ``reason`` why it was queued (shown when the gate itself needs nothing).
    """
    use = _uses(uses)
    head = f"Decided ({state}); a new decision replaces it for its reviewer. " if state != "open" else ""
    if standing_now == AWAITING:
        return (head + f"Only your acceptance is missing (BEV010): the gate found nothing else. Accept if the "
                f"evidence supports the claim for {use}; reject if it does not.")
    if standing_now == "admitted":
        why = f" It is here because: {reason}." if reason else ""
        return (head + f"The gate admits this record for {use}; no finding needs a person.{why} Accept to "
                "confirm it as shown; reject if the evidence does not say what the record claims.")
    others = [c for c in codes if c != ACCEPTANCE]
    listed = ", ".join(others) or "the findings below"
    if standing_now == "review_required":
        return (head + f"The gate needs a person's judgment on {listed}: accept if the evidence still supports "
                f"the claim for {use}, reject if not, defer to leave it to another reviewer.")
    also = " (it also needs a person's acceptance, BEV010)" if ACCEPTANCE in codes else ""
    return (head + f"The gate rejects this record because of {listed}{also}. Your decision is recorded, but an "
            "accept does not admit it while those findings remain: reject it, or defer until the record is fixed.")
