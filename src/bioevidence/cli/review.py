"""``bioevidence review list``: the queued records, where each stands and what its reviewer is asked.

A record whose only blocking finding is BEV010 (no person has accepted it yet) is listed as
"awaiting your acceptance", not as rejected (:mod:`bioevidence.loop.standing`, the same words as the
review pages); the rule codes are explained once under the table, and in JSON each entry carries
``standing``, ``standing_label``, ``asked`` and the meaning of each of its ``reason_codes``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import escape_text, llm_json, safe_message
from ..loop import standing

__all__ = ["list_entries"]


def _row(entry: Any) -> dict[str, Any]:
    now = standing.of_report(entry.report)
    uses = [u for u in entry.record.get("requested_uses") or [] if isinstance(u, str)]
    first = entry.original_report
    because = standing.reason_text(entry.reason, first.overall_status, standing.blocking_codes(first))
    return {**entry.to_dict(), "standing": now, "standing_label": standing.label(now), "queued_because": because,
            "reason_meanings": standing.meanings(entry.reason_codes),
            "asked": standing.asked(now, entry.state, entry.reason_codes, uses, entry.reason)}


def list_entries(entries: list[Any], status: str, queue_path: Path, fmt: str) -> None:
    """Print ``entries`` (``ReviewQueue.list``) as a table with a legend of the codes, or as JSON."""
    rows = [_row(e) for e in entries]
    if fmt == "json":
        click.echo(llm_json(rows, indent=2))
        return
    if not rows:
        click.echo(f"no {'' if status == 'all' else status + ' '}entries in {queue_path}")
        return
    # "decision": a person's latest (open until one decides); "record now": where the record stands after it.
    click.echo(f"{'entry':>5}  {'decision':<8} {'record now':<24} {'queued because':<28} {'record id'}  reasons")
    for r in rows:
        click.echo(escape_text(f"{r['id']:>5}  {r['state']:<8} {r['standing_label']:<24} "
                               f"{safe_message(r['queued_because'], 60):<28} {safe_message(str(r['record_id']), 200)}  "
                               f"{', '.join(r['reason_codes']) or '-'}"))
    codes = sorted({c for r in rows for c in r["reason_codes"]})
    if codes:
        click.echo("")
        for code in codes:
            click.echo(f"{code}: {standing.meaning(code) or 'not in the rule catalogue'}")
    waiting = sum(1 for r in rows if r["standing"] == standing.AWAITING)
    if waiting:
        click.echo(f"awaiting your acceptance: nothing but a person's acceptance (BEV010) blocks {waiting} of these; "
                   "the gate calls them rejected until someone accepts them")
